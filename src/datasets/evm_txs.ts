/**
 * evm_txs — GET /indexer/tx/v1/evm-txs (EVM receipts), sharded by row position. One row per
 * receipt, camelCase fields as snake_case columns and hex quantities as numbers (wei prices as
 * exact DECIMAL), and the block's time read from the block list (receipts carry none);
 * partitioned by height_bucket of block_number. Logs go to evm_logs.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { EvmTx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { evmTxsSource, hexToDecimal, hexToNumber } from "./sources.js"

const col = columnsOf<EvmTx>()

export const evmTxs = defineAppend({
  name: "evm_txs",
  description: "One row per EVM tx receipt.",
  source: evmTxsSource,
  columns: [
    col("block_number", "BIGINT", "blockNumber", (r) => hexToNumber(r.blockNumber)),
    col("block_hash", "VARCHAR", "blockHash", (r) => r.blockHash),
    col("transaction_hash", "VARCHAR", "transactionHash", (r) => r.transactionHash),
    col("transaction_index", "INTEGER", "transactionIndex", (r) => hexToNumber(r.transactionIndex)),
    col("timestamp", "TIMESTAMP", "block time (UTC; from the block list, receipts carry none)", (r, context) => context.blockTime(hexToNumber(r.blockNumber))),
    col("from", "VARCHAR", "sender address", (r) => r.from),
    col("to", "VARCHAR", "recipient ('' on contract creation)", (r) => r.to),
    col("contract_address", "VARCHAR", "created contract, else NULL", (r) => r.contractAddress),
    col("status", "INTEGER", "1 success, 0 failure", (r) => hexToNumber(r.status)),
    col("type", "INTEGER", "tx type", (r) => hexToNumber(r.type)),
    col("gas_used", "BIGINT", "gasUsed", (r) => hexToNumber(r.gasUsed)),
    col("cumulative_gas_used", "BIGINT", "cumulativeGasUsed", (r) => hexToNumber(r.cumulativeGasUsed)),
    col("effective_gas_price", "DECIMAL(38,0)", "effectiveGasPrice in wei", (r) => hexToDecimal(r.effectiveGasPrice)),
    col("log_count", "INTEGER", "number of logs (rows in evm_logs)", (r) => r.logs.length),
    col("logs_bloom", "VARCHAR", "logsBloom", (r) => r.logsBloom)
  ],
  key: ["transaction_hash"],
  sortKey: ["block_number", "transaction_index"],
  partition: heightBucket("block_number"),
  blockTime: true
})
