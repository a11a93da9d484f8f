-- How much of each token moves each day? Per UTC day, token and source: transfers, volume in
-- base units (exact; NULL for a token whose day's volume would not fit DECIMAL(38,0), as a contract
-- emitting absurd amounts can make it), distinct senders and receivers (canonical addresses).
CREATE OR REPLACE VIEW token_flows AS
WITH fits AS (
  SELECT CAST(timestamp AS DATE) AS day, token, source FROM token_transfers GROUP BY ALL
  HAVING coalesce(sum(abs(CAST(amount_text AS DOUBLE))), 0) < 1e37 AND count(*) = count(amount)
)
SELECT CAST(t.timestamp AS DATE) AS day, t.token, t.source,
       count(*) AS transfers,
       sum(t.amount) FILTER (WHERE f.token IS NOT NULL) AS volume,
       count(DISTINCT t.from_address) AS senders,
       count(DISTINCT t.to_address) AS receivers
FROM token_transfers t LEFT JOIN fits f ON f.day = CAST(t.timestamp AS DATE) AND f.token = t.token AND f.source = t.source
GROUP BY ALL
ORDER BY day, transfers DESC, t.token, t.source;
