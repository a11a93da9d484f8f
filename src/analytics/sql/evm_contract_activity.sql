-- Which contracts are busiest? Per address: calls received (receipts whose `to` it is), failed
-- calls, distinct callers, logs emitted and the most frequent event signature (topic0). Rows that
-- stand for cosmos txs have a NULL `to` and are no calls; contract creations have ''.
CREATE OR REPLACE VIEW evm_contract_activity AS
WITH calls AS (
  SELECT "to" AS address, count(*) AS calls, count(*) FILTER (WHERE status = 0) AS failed_calls,
         count(DISTINCT "from") AS callers
  FROM evm_txs WHERE "to" <> '' GROUP BY ALL
), logs AS (
  SELECT address, count(*) AS logs, mode(topic0) AS top_topic0 FROM evm_logs GROUP BY ALL
)
SELECT address, coalesce(calls, 0) AS calls, coalesce(failed_calls, 0) AS failed_calls,
       coalesce(callers, 0) AS callers, coalesce(logs, 0) AS logs, top_topic0
FROM calls FULL OUTER JOIN logs USING (address)
ORDER BY logs + calls DESC, address;
