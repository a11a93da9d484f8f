-- How many accounts are active each day, on either side? Per UTC day: distinct accounts that sent
-- a cosmos tx, an EVM tx, or sent or received a token (account_activity), joined on the canonical
-- 0x-hex address so an account active on both sides counts once.
CREATE OR REPLACE VIEW active_accounts AS
SELECT CAST(timestamp AS DATE) AS day,
       count(DISTINCT account_address) AS active_accounts,
       count(DISTINCT account_address) FILTER (WHERE side = 'cosmos') AS cosmos_accounts,
       count(DISTINCT account_address) FILTER (WHERE side = 'evm') AS evm_accounts
FROM account_activity
GROUP BY day
ORDER BY day;
