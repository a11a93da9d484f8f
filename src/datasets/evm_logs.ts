/**
 * evm_logs — flattened from the receipts of GET /indexer/tx/v1/evm-txs (fetched once with
 * evm_txs). One row per log, with its block's time; partitioned by height_bucket of height.
 *
 * Keyed by (tx_hash, log_index), not (height, log_index): minievm numbered a
 * receipt's logs from 0 per tx until its block-scoped counter (minievm a1340f9, March 2026,
 * `indexer/abci.go` and `jsonrpc/backend/tx.go` `marshalReceipt`, tested in
 * `indexer/log_index_test.go`), and the indexer keeps receipts as they were served then
 * (Rollytics `indexer/collector/tx/collect.go` stores each receipt's JSON once). On a chain indexed
 * before the fix, two txs of a block both have a log 0; within a tx the index is unique either way.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { EvmTx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { canonicalAddress } from "./addresses.js"
import { evmTxsList, hexToNumber } from "./lists.js"

type EvmLog = EvmTx["logs"][number]
const col = columnsOf<EvmLog>()

export const evmLogs = defineAppend({
  name: "evm_logs",
  description: "One row per EVM log, from the receipts.",
  list: evmTxsList,
  items: (r: EvmTx) => r.logs,
  columns: [
    col("height", "BIGINT", "block height (blockNumber)", (l) => hexToNumber(l.blockNumber)),
    col("evm_block_hash", "VARCHAR", "blockHash: the EVM block's hash (see evm_txs)", (l) => l.blockHash.toLowerCase()),
    col("tx_hash", "VARCHAR", "transactionHash (0x + lowercase hex)", (l) => l.transactionHash.toLowerCase()),
    col("tx_index", "INTEGER", "transactionIndex: the receipt's place among the block's EVM receipts, from 1 (see evm_txs)", (l) =>
      hexToNumber(l.transactionIndex)
    ),
    col("log_index", "INTEGER", "logIndex: within the block; within the tx on receipts indexed before minievm's March 2026 fix", (l) =>
      hexToNumber(l.logIndex)
    ),
    col("timestamp", "TIMESTAMP", "block time (UTC; from the block list, logs carry none)", (l, context) =>
      context.blockTime(hexToNumber(l.blockNumber))
    ),
    col("contract_address", "VARCHAR", "the emitting contract, canonical: 0x + lowercase hex", (l) => canonicalAddress(l.address)),
    col("topic0", "VARCHAR", "topics[0] (event signature), else NULL", (l) => l.topics[0] ?? null),
    col("topic1", "VARCHAR", "topics[1], else NULL", (l) => l.topics[1] ?? null),
    col("topic2", "VARCHAR", "topics[2], else NULL", (l) => l.topics[2] ?? null),
    col("topic3", "VARCHAR", "topics[3], else NULL", (l) => l.topics[3] ?? null),
    col("topics", "VARCHAR[]", "all topics", (l) => JSON.stringify(l.topics)),
    col("data", "VARCHAR", "log data (hex)", (l) => l.data),
    col("removed", "BOOLEAN", "removed flag", (l) => l.removed)
  ],
  key: ["tx_hash", "log_index"],
  sortKey: ["height", "tx_index", "log_index"],
  partition: heightBucket("height"),
  blockTime: true
})
