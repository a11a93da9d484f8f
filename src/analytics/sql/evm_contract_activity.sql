-- Which contracts are busiest? Per contract: calls received (receipts whose to_address it is),
-- failed calls, distinct callers, logs emitted and the most frequent event signature (topic0).
-- Rows that stand for cosmos txs and contract creations have no to_address and are no calls.
CREATE OR REPLACE VIEW evm_contract_activity AS
WITH calls AS (
  SELECT to_address AS contract_address, count(*) AS calls, count(*) FILTER (WHERE status = 0) AS failed_calls,
         count(DISTINCT from_address) AS callers
  FROM evm_txs WHERE to_address IS NOT NULL GROUP BY ALL
), logs AS (
  SELECT contract_address, count(*) AS logs, mode(topic0) AS top_topic0 FROM evm_logs GROUP BY ALL
)
SELECT contract_address, coalesce(calls, 0) AS calls, coalesce(failed_calls, 0) AS failed_calls,
       coalesce(callers, 0) AS callers, coalesce(logs, 0) AS logs, top_topic0
FROM calls FULL OUTER JOIN logs USING (contract_address)
ORDER BY logs + calls DESC, contract_address;
