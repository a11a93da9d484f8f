-- Who uses the chain most? Per sender (first message's signer, canonical and in bech32): txs sent,
-- failed txs, gas used, and when it was first and last seen; most active first.
CREATE OR REPLACE VIEW top_accounts AS
SELECT sender_address AS account_address,
       any_value(sender_bech32) AS account_bech32,
       count(*) AS txs,
       count(*) FILTER (WHERE code <> 0) AS failed_txs,
       sum(gas_used) AS gas_used,
       min(height) AS first_height,
       max(height) AS last_height,
       min(timestamp) AS first_seen_at,
       max(timestamp) AS last_seen_at
FROM txs
WHERE sender_address IS NOT NULL
GROUP BY sender_address
ORDER BY txs DESC, account_address;
