/**
 * blocks — GET /indexer/block/v1/blocks, sharded by height (constructed {"height":N} cursors).
 * One row per block; partitioned by height_bucket; sorted by height.
 */
import type { AppendDataset } from "../engine/Dataset.js"
import type { Block } from "../indexer/schemas.js"
import { blocksSource } from "./sources.js"

export const blocks: AppendDataset = {
  kind: "append",
  name: "blocks",
  description: "One row per block: time, gas, tx count, fees and proposer.",
  source: blocksSource,
  columns: [
    { name: "height", type: "BIGINT", description: "block height" },
    { name: "hash", type: "VARCHAR", description: "block hash (uppercase hex, no 0x)" },
    { name: "chain_id", type: "VARCHAR", description: "chain id" },
    { name: "timestamp", type: "TIMESTAMP", description: "block time (UTC, second precision on the wire)" },
    { name: "block_time", type: "BIGINT", description: "milliseconds since the previous block (0 for the first indexed block)" },
    { name: "gas_used", type: "BIGINT", description: "sum of the block's txs' gas used" },
    { name: "gas_wanted", type: "BIGINT", description: "sum of the block's txs' gas wanted" },
    { name: "tx_count", type: "INTEGER", description: "number of cosmos txs" },
    { name: "total_fee", type: "JSON", description: "fees paid, [{denom, amount}] with amounts as exact strings" },
    { name: "proposer_moniker", type: "VARCHAR", description: "proposer.moniker" },
    { name: "proposer_operator_address", type: "VARCHAR", description: "proposer.operator_address" }
  ],
  sortKey: ["height"],
  heightColumn: 0,
  toRows: (b: Block) => [
    [
      b.height,
      b.hash,
      b.chain_id,
      b.timestamp,
      b.block_time,
      b.gas_used,
      b.gas_wanted,
      Number(b.tx_count),
      JSON.stringify(b.total_fee),
      b.proposer.moniker,
      b.proposer.operator_address
    ]
  ]
}
