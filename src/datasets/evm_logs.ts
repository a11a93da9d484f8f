/**
 * evm_logs — flattened from the receipts of GET /indexer/tx/v1/evm-txs (fetched once with
 * evm_txs). One row per log, with its block's time; partitioned by height_bucket of block_number.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { EvmTx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { evmTxsSource, hexToNumber } from "./sources.js"

type EvmLog = EvmTx["logs"][number]
const col = columnsOf<EvmLog>()

export const evmLogs = defineAppend({
  name: "evm_logs",
  description: "One row per EVM log, from the receipts.",
  source: evmTxsSource,
  items: (r: EvmTx) => r.logs,
  columns: [
    col("block_number", "BIGINT", "blockNumber", (l) => hexToNumber(l.blockNumber)),
    col("block_hash", "VARCHAR", "blockHash", (l) => l.blockHash),
    col("transaction_hash", "VARCHAR", "transactionHash", (l) => l.transactionHash),
    col("transaction_index", "INTEGER", "transactionIndex", (l) => hexToNumber(l.transactionIndex)),
    col("log_index", "INTEGER", "logIndex (within the block)", (l) => hexToNumber(l.logIndex)),
    col("timestamp", "TIMESTAMP", "block time (UTC; from the block list, logs carry none)", (l, context) => context.blockTime(hexToNumber(l.blockNumber))),
    col("address", "VARCHAR", "emitting contract", (l) => l.address),
    col("topic0", "VARCHAR", "topics[0] (event signature), else NULL", (l) => l.topics[0] ?? null),
    col("topic1", "VARCHAR", "topics[1], else NULL", (l) => l.topics[1] ?? null),
    col("topic2", "VARCHAR", "topics[2], else NULL", (l) => l.topics[2] ?? null),
    col("topic3", "VARCHAR", "topics[3], else NULL", (l) => l.topics[3] ?? null),
    col("topics", "VARCHAR[]", "all topics", (l) => JSON.stringify(l.topics)),
    col("data", "VARCHAR", "log data (hex)", (l) => l.data),
    col("removed", "BOOLEAN", "removed flag", (l) => l.removed)
  ],
  key: ["block_number", "log_index"],
  sortKey: ["block_number", "log_index"],
  partition: heightBucket("block_number"),
  blockTime: true
})
