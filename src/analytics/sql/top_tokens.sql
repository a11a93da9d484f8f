-- Which tokens move most? Per token and source over the whole lake: transfers, volume in base
-- units (exact; NULL for a token whose volume would not fit DECIMAL(38,0), as a contract emitting
-- absurd amounts can make it), distinct accounts that sent or received it, first and last
-- movement; most transfers first.
CREATE OR REPLACE VIEW top_tokens AS
WITH fits AS (
  SELECT token, source FROM token_transfers GROUP BY ALL
  HAVING coalesce(sum(abs(CAST(amount_text AS DOUBLE))), 0) < 1e37 AND count(*) = count(amount)
)
SELECT t.token, t.source,
       count(*) AS transfers,
       sum(t.amount) FILTER (WHERE f.token IS NOT NULL) AS volume,
       count(DISTINCT t.from_address) AS senders,
       count(DISTINCT t.to_address) AS receivers,
       min(t.timestamp) AS first_seen_at,
       max(t.timestamp) AS last_seen_at
FROM token_transfers t LEFT JOIN fits f USING (token, source)
GROUP BY ALL
ORDER BY transfers DESC, t.token, t.source;
