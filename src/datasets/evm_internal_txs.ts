/**
 * evm_internal_txs — GET /indexer/tx/v1/evm-internal-txs, sharded by row position, bounded by
 * /status internal_tx_height (the tracing extension lags the tip). One row per call, DFS
 * pre-order within a tx (index 0, parent_index -1 is the top call); partitioned by height_bucket.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { EvmInternalTx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { canonicalAddress } from "./addresses.js"
import { hexToDecimal, internalTxsList } from "./lists.js"

const col = columnsOf<EvmInternalTx>()

export const evmInternalTxs = defineAppend({
  name: "evm_internal_txs",
  description: "One row per internal EVM call (call trace, DFS pre-order).",
  list: internalTxsList,
  columns: [
    col("height", "BIGINT", "block height", (t) => t.height),
    col("tx_hash", "VARCHAR", "the EVM tx making the call (0x + lowercase hex)", (t) => t.hash.toLowerCase()),
    col("call_index", "INTEGER", "position in the call tree (DFS pre-order)", (t) => t.index),
    col("parent_call_index", "INTEGER", "call_index of the calling frame; -1 for the top call", (t) => t.parent_index),
    col("type", "VARCHAR", "CALL, STATICCALL, DELEGATECALL, CREATE, …", (t) => t.type),
    col("from_address", "VARCHAR", "caller, canonical: 0x + lowercase hex (NULL if absent)", (t) => canonicalAddress(t.from)),
    col("to_address", "VARCHAR", "callee, canonical (NULL if absent)", (t) => canonicalAddress(t.to)),
    col("input", "VARCHAR", "call data (hex)", (t) => t.input),
    col("output", "VARCHAR", "return data (hex)", (t) => t.output),
    col("value", "DECIMAL(38,0)", "value in wei; NULL when absent (the wire's 0x) or beyond 38 digits (value_text is exact)", (t) =>
      hexToDecimal(t.value)
    ),
    col("value_text", "VARCHAR", "value in wei as exact decimal text; NULL when absent", (t) => hexToDecimal(t.value)),
    col("gas", "BIGINT", "gas given", (t) => hexToDecimal(t.gas)),
    col("gas_used", "BIGINT", "gasUsed", (t) => hexToDecimal(t.gasUsed))
  ],
  key: ["tx_hash", "call_index"],
  sortKey: ["height"],
  partition: heightBucket("height")
})
