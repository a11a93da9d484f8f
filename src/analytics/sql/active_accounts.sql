-- How many accounts are active each day, on either side? Per UTC day: distinct accounts that sent
-- a cosmos tx, an EVM tx, or sent or received a token, joined on the canonical 0x-hex address so an
-- account active on both sides counts once.
CREATE OR REPLACE VIEW active_accounts AS
WITH activity AS (
  SELECT CAST(timestamp AS DATE) AS day, sender_hex AS account, 'cosmos' AS side FROM txs WHERE sender_hex IS NOT NULL
  UNION ALL
  SELECT CAST(timestamp AS DATE), lower("from"), 'evm' FROM evm_txs
  UNION ALL
  SELECT CAST(timestamp AS DATE), from_address, source FROM token_transfers WHERE from_address IS NOT NULL
  UNION ALL
  SELECT CAST(timestamp AS DATE), to_address, source FROM token_transfers WHERE to_address IS NOT NULL
)
SELECT day,
       count(DISTINCT account) AS active_accounts,
       count(DISTINCT account) FILTER (WHERE side = 'cosmos') AS cosmos_accounts,
       count(DISTINCT account) FILTER (WHERE side = 'evm') AS evm_accounts
FROM activity
GROUP BY day
ORDER BY day;
