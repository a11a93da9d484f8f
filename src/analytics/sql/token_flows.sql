-- How much of each token moves each day? Per UTC day, token and source: transfers, exact volume
-- in base units, distinct senders and receivers (canonical addresses).
CREATE OR REPLACE VIEW token_flows AS
SELECT CAST(timestamp AS DATE) AS day, token, source,
       count(*) AS transfers,
       sum(amount) AS volume,
       count(DISTINCT from_address) AS senders,
       count(DISTINCT to_address) AS receivers
FROM token_transfers
GROUP BY ALL
ORDER BY day, transfers DESC, token, source;
