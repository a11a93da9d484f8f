-- Which tokens move most? Per token and source over the whole lake: transfers, volume (DOUBLE),
-- distinct accounts that sent or received it, first and last movement; most transfers first.
CREATE OR REPLACE VIEW top_tokens AS
SELECT token, source,
       count(*) AS transfers,
       -- DOUBLE: an exact sum overflows DECIMAL(38,0) (HUGEINT) on a token with absurd amounts, which any contract can emit
       sum(CAST(amount_text AS DOUBLE)) AS volume,
       count(DISTINCT from_address) AS senders,
       count(DISTINCT to_address) AS receivers,
       min(timestamp) AS first_seen,
       max(timestamp) AS last_seen
FROM token_transfers
GROUP BY ALL
ORDER BY transfers DESC, token, source;
