/**
 * evm_internal_txs — GET /indexer/tx/v1/evm-internal-txs, sharded by row position, bounded by
 * /status internal_tx_height (the tracing extension lags the tip). One row per call, DFS
 * pre-order within a tx (index 0, parent_index -1 is the top call); partitioned by height_bucket.
 */
import type { AppendDataset } from "../engine/Dataset.js"
import type { EvmInternalTx } from "../indexer/schemas.js"
import { hexToDecimal, internalTxsSource } from "./sources.js"

export const evmInternalTxs: AppendDataset = {
  kind: "append",
  name: "evm_internal_txs",
  description: "One row per internal EVM call (call trace, DFS pre-order).",
  source: internalTxsSource,
  columns: [
    { name: "height", type: "BIGINT", description: "block height" },
    { name: "hash", type: "VARCHAR", description: "parent EVM tx hash" },
    { name: "index", type: "INTEGER", description: "position in the call tree (DFS pre-order)" },
    { name: "parent_index", type: "INTEGER", description: "index of the calling frame; -1 for the top call" },
    { name: "type", type: "VARCHAR", description: "CALL, STATICCALL, DELEGATECALL, CREATE, …" },
    { name: "from", type: "VARCHAR", description: "caller ('' if absent)" },
    { name: "to", type: "VARCHAR", description: "callee ('' if absent)" },
    { name: "input", type: "VARCHAR", description: "call data (hex)" },
    { name: "output", type: "VARCHAR", description: "return data (hex)" },
    { name: "value", type: "VARCHAR", description: "value as sent (hex bytes)" },
    { name: "value_wei", type: "DECIMAL(38,0)", description: "value in wei; NULL when absent ('0x')" },
    { name: "gas", type: "BIGINT", description: "gas given" },
    { name: "gas_used", type: "BIGINT", description: "gasUsed" }
  ],
  sortKey: ["height"],
  heightColumn: 0,
  toRows: (t: EvmInternalTx) => [
    [t.height, t.hash, t.index, t.parent_index, t.type, t.from, t.to, t.input, t.output, t.value, hexToDecimal(t.value), hexToDecimal(t.gas), hexToDecimal(t.gasUsed)]
  ]
}
