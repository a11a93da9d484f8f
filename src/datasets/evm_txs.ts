/**
 * evm_txs — GET /indexer/tx/v1/evm-txs (EVM receipts), sharded by row position. One row per
 * receipt, camelCase fields as snake_case columns and hex quantities as numbers (wei prices as
 * exact DECIMAL), and the block's time read from the block list (receipts carry none);
 * partitioned by height_bucket of height. Logs go to evm_logs.
 *
 * Receipts minievm builds for cosmos txs (a successful cosmos tx that emitted EVM logs, e.g. a bank
 * send moving an ERC-20: sources.ts `standsForCosmosTx`) are rows too, marked `is_cosmos_tx`, with
 * the cosmos tx's hash in `cosmos_tx_hash` (as txs.txhash spells it: joins txs), found among the
 * block's cosmos txs by the synthetic tx hash derived from each (sources.ts `syntheticTxHash`).
 * They have no sender (`from` NULL) and no recipient (`to` NULL, never '' as a contract creation).
 * `tx_index` is minievm's: the receipt's place among the block's EVM receipts (synthetic
 * ones included), counted from 1 (`indexer/abci.go`: `txIndex++` before use).
 */
import { columnsOf, defineAppend, type RowContext } from "../engine/Dataset.js"
import type { EvmTx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { canonicalAddress } from "./addresses.js"
import { evmTxsList, hexToDecimal, hexToNumber, standsForCosmosTx } from "./lists.js"

const col = columnsOf<EvmTx>()

/** the cosmos tx a synthetic receipt stands for (found for every one before its page's rows are made: pageContext.ts) */
const cosmosTxOf = (r: EvmTx, context: RowContext): string | null =>
  standsForCosmosTx(r) ? (evmTxsList.cosmosTx!.of(r, context.cosmosTxHashes(hexToNumber(r.blockNumber))) ?? null) : null

export const evmTxs = defineAppend({
  name: "evm_txs",
  description: "One row per EVM tx receipt.",
  list: evmTxsList,
  columns: [
    col("height", "BIGINT", "block height (blockNumber)", (r) => hexToNumber(r.blockNumber)),
    col("evm_block_hash", "VARCHAR", "blockHash: the EVM block's hash (minievm keeps its own per height; not blocks.block_hash)", (r) =>
      r.blockHash.toLowerCase()
    ),
    col("tx_hash", "VARCHAR", "transactionHash (0x + lowercase hex)", (r) => r.transactionHash.toLowerCase()),
    col("tx_index", "INTEGER", "transactionIndex: place among the block's EVM receipts (cosmos-tx rows included), from 1", (r) =>
      hexToNumber(r.transactionIndex)
    ),
    col("timestamp", "TIMESTAMP", "block time (UTC; from the block list, receipts carry none)", (r, context) =>
      context.blockTime(hexToNumber(r.blockNumber))
    ),
    col(
      "from_address",
      "VARCHAR",
      "sender, canonical: 0x + lowercase hex; NULL on a row standing for a cosmos tx (no signer: the wire's zero address)",
      (r) => (standsForCosmosTx(r) ? null : canonicalAddress(r.from))
    ),
    col("to_address", "VARCHAR", "recipient, canonical; NULL on a contract creation and on a row standing for a cosmos tx", (r) =>
      standsForCosmosTx(r) ? null : canonicalAddress(r.to)
    ),
    col("created_address", "VARCHAR", "the contract a creation made, canonical; else NULL", (r) => canonicalAddress(r.contractAddress)),
    col("status", "INTEGER", "1 success, 0 failure", (r) => hexToNumber(r.status)),
    col("type", "INTEGER", "tx type", (r) => hexToNumber(r.type)),
    col("gas_used", "BIGINT", "gasUsed", (r) => hexToNumber(r.gasUsed)),
    col("cumulative_gas_used", "BIGINT", "cumulativeGasUsed", (r) => hexToNumber(r.cumulativeGasUsed)),
    col("effective_gas_price", "DECIMAL(38,0)", "effectiveGasPrice in wei", (r) => hexToDecimal(r.effectiveGasPrice)),
    col("log_count", "INTEGER", "number of logs (rows in evm_logs)", (r) => r.logs.length),
    col("logs_bloom", "VARCHAR", "logsBloom", (r) => r.logsBloom),
    col(
      "is_cosmos_tx",
      "BOOLEAN",
      "true: minievm's synthetic receipt of a successful cosmos tx that emitted EVM logs (not a contract creation, no sender)",
      (r) => standsForCosmosTx(r)
    ),
    col(
      "cosmos_tx_hash",
      "VARCHAR",
      "the cosmos tx a cosmos-tx row stands for, as txs.tx_hash (uppercase hex, no 0x); NULL on EVM txs",
      cosmosTxOf
    )
  ],
  key: ["tx_hash"],
  sortKey: ["height", "tx_index"],
  partition: heightBucket("height"),
  blockTime: true,
  cosmosTx: true
})
