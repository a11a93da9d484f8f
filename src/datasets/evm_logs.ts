/**
 * evm_logs — flattened from the receipts of GET /indexer/tx/v1/evm-txs (fetched once with
 * evm_txs). One row per log; partitioned by height_bucket of block_number.
 */
import type { AppendDataset } from "../engine/Dataset.js"
import type { EvmTx } from "../indexer/schemas.js"
import { evmTxsSource, hexToNumber } from "./sources.js"

export const evmLogs: AppendDataset = {
  kind: "append",
  name: "evm_logs",
  description: "One row per EVM log, from the receipts.",
  source: evmTxsSource,
  columns: [
    { name: "block_number", type: "BIGINT", description: "blockNumber" },
    { name: "block_hash", type: "VARCHAR", description: "blockHash" },
    { name: "transaction_hash", type: "VARCHAR", description: "transactionHash" },
    { name: "transaction_index", type: "INTEGER", description: "transactionIndex" },
    { name: "log_index", type: "INTEGER", description: "logIndex (within the block)" },
    { name: "address", type: "VARCHAR", description: "emitting contract" },
    { name: "topic0", type: "VARCHAR", description: "topics[0] (event signature), else NULL" },
    { name: "topic1", type: "VARCHAR", description: "topics[1], else NULL" },
    { name: "topic2", type: "VARCHAR", description: "topics[2], else NULL" },
    { name: "topic3", type: "VARCHAR", description: "topics[3], else NULL" },
    { name: "topics", type: "VARCHAR[]", description: "all topics" },
    { name: "data", type: "VARCHAR", description: "log data (hex)" },
    { name: "removed", type: "BOOLEAN", description: "removed flag" }
  ],
  sortKey: ["block_number", "log_index"],
  heightColumn: 0,
  toRows: (r: EvmTx) =>
    r.logs.map((l) => [
      hexToNumber(l.blockNumber),
      l.blockHash,
      l.transactionHash,
      hexToNumber(l.transactionIndex),
      hexToNumber(l.logIndex),
      l.address,
      l.topics[0] ?? null,
      l.topics[1] ?? null,
      l.topics[2] ?? null,
      l.topics[3] ?? null,
      JSON.stringify(l.topics),
      l.data,
      l.removed
    ])
}
