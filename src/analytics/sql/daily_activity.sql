-- How busy is the chain each day? Blocks, txs, failed txs, gas and fees per UTC day.
-- failed_txs is NULL for days whose txs were not all exported (the txs rows of the day fewer than
-- its blocks' tx_count: a failed count of part of a day would pass for the day's).
CREATE OR REPLACE VIEW daily_activity AS
WITH b AS (
  SELECT CAST(timestamp AS DATE) AS day, count(*) AS blocks, sum(tx_count) AS txs,
         sum(gas_used) AS gas_used, sum(gas_wanted) AS gas_wanted
  FROM blocks GROUP BY ALL
), f AS (
  SELECT day, list({'denom': denom, 'amount': amount} ORDER BY denom) AS fees
  FROM (
    SELECT CAST(timestamp AS DATE) AS day, fee.denom AS denom, sum(CAST(fee.amount AS HUGEINT)) AS amount
    FROM (SELECT timestamp, unnest(from_json(total_fee, '[{"denom":"VARCHAR","amount":"VARCHAR"}]')) AS fee FROM blocks)
    GROUP BY ALL
  ) GROUP BY day
), t AS (
  SELECT CAST(timestamp AS DATE) AS day, count(*) AS exported, count(*) FILTER (WHERE code <> 0) AS failed_txs
  FROM txs GROUP BY ALL
)
SELECT b.day, b.blocks, b.txs,
       CASE WHEN b.txs = 0 THEN 0 WHEN t.exported = b.txs THEN t.failed_txs END AS failed_txs,
       b.gas_used, b.gas_wanted, coalesce(f.fees, []) AS fees
FROM b LEFT JOIN t USING (day) LEFT JOIN f USING (day)
ORDER BY b.day;
