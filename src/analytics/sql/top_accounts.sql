-- Who uses the chain most? Per sender (first message's signer): txs sent, failed txs, gas used,
-- and when it was first and last seen; most active first.
CREATE OR REPLACE VIEW top_accounts AS
SELECT sender AS account,
       count(*) AS txs,
       count(*) FILTER (WHERE code <> 0) AS failed_txs,
       sum(gas_used) AS gas_used,
       min(height) AS first_height,
       max(height) AS last_height,
       min(timestamp) AS first_seen,
       max(timestamp) AS last_seen
FROM txs
WHERE sender IS NOT NULL
GROUP BY sender
ORDER BY txs DESC, account;
