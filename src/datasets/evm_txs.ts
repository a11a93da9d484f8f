/**
 * evm_txs — GET /indexer/tx/v1/evm-txs (EVM receipts), sharded by row position. One row per
 * receipt, camelCase fields as snake_case columns and hex quantities as numbers (wei prices as
 * exact DECIMAL); partitioned by height_bucket of block_number. Logs go to evm_logs.
 */
import type { AppendDataset } from "../engine/Dataset.js"
import type { EvmTx } from "../indexer/schemas.js"
import { evmTxsSource, hexToDecimal, hexToNumber } from "./sources.js"

export const evmTxs: AppendDataset = {
  kind: "append",
  name: "evm_txs",
  description: "One row per EVM tx receipt.",
  source: evmTxsSource,
  columns: [
    { name: "block_number", type: "BIGINT", description: "blockNumber" },
    { name: "block_hash", type: "VARCHAR", description: "blockHash" },
    { name: "transaction_hash", type: "VARCHAR", description: "transactionHash" },
    { name: "transaction_index", type: "INTEGER", description: "transactionIndex" },
    { name: "from", type: "VARCHAR", description: "sender address" },
    { name: "to", type: "VARCHAR", description: "recipient ('' on contract creation)" },
    { name: "contract_address", type: "VARCHAR", description: "created contract, else NULL" },
    { name: "status", type: "INTEGER", description: "1 success, 0 failure" },
    { name: "type", type: "INTEGER", description: "tx type" },
    { name: "gas_used", type: "BIGINT", description: "gasUsed" },
    { name: "cumulative_gas_used", type: "BIGINT", description: "cumulativeGasUsed" },
    { name: "effective_gas_price", type: "DECIMAL(38,0)", description: "effectiveGasPrice in wei" },
    { name: "log_count", type: "INTEGER", description: "number of logs (rows in evm_logs)" },
    { name: "logs_bloom", type: "VARCHAR", description: "logsBloom" }
  ],
  sortKey: ["block_number", "transaction_index"],
  heightColumn: 0,
  toRows: (r: EvmTx) => [
    [
      hexToNumber(r.blockNumber),
      r.blockHash,
      r.transactionHash,
      hexToNumber(r.transactionIndex),
      r.from,
      r.to,
      r.contractAddress,
      hexToNumber(r.status),
      hexToNumber(r.type),
      hexToNumber(r.gasUsed),
      hexToNumber(r.cumulativeGasUsed),
      hexToDecimal(r.effectiveGasPrice),
      r.logs.length,
      r.logsBloom
    ]
  ]
}
