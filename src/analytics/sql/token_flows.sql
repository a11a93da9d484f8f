-- How much of each token moves each day? Per UTC day, token and source: transfers, volume
-- in base units (DOUBLE: approximate past 15 digits; token_transfers holds every amount exactly),
-- distinct senders and receivers (canonical addresses).
CREATE OR REPLACE VIEW token_flows AS
SELECT CAST(timestamp AS DATE) AS day, token, source,
       count(*) AS transfers,
       -- DOUBLE: an exact sum overflows DECIMAL(38,0) (HUGEINT) on a token with absurd amounts, which any contract can emit
       sum(CAST(amount_text AS DOUBLE)) AS volume,
       count(DISTINCT from_address) AS senders,
       count(DISTINCT to_address) AS receivers
FROM token_transfers
GROUP BY ALL
ORDER BY day, transfers DESC, token, source;
