/**
 * blocks — GET /indexer/block/v1/blocks, sharded by height (constructed {"height":N} cursors).
 * One row per block; partitioned by height_bucket of height; sorted by height.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { Block } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { canonicalAddress } from "./addresses.js"
import { blocksList } from "./lists.js"

const col = columnsOf<Block>()

export const blocks = defineAppend({
  name: "blocks",
  description: "One row per block: time, gas, tx count, fees and proposer.",
  list: blocksList,
  columns: [
    col("height", "BIGINT", "block height", (b) => b.height),
    col("block_hash", "VARCHAR", "block hash (uppercase hex, no 0x, as the chain shows it)", (b) => b.hash),
    col("chain_id", "VARCHAR", "chain id", (b) => b.chain_id),
    col("timestamp", "TIMESTAMP", "block time (UTC, second precision on the wire)", (b) => b.timestamp),
    // (the indexer's 0 on the first block it indexed is no interval: NULL, as every absent value)
    col("block_interval_ms", "BIGINT", "milliseconds since the previous block; NULL for the first indexed block (none before it)", (b) =>
      Number(b.block_time) === 0 ? null : b.block_time
    ),
    col("gas_used", "BIGINT", "sum of the block's txs' gas used", (b) => b.gas_used),
    col("gas_wanted", "BIGINT", "sum of the block's txs' gas wanted", (b) => b.gas_wanted),
    col("tx_count", "INTEGER", "number of cosmos txs", (b) => Number(b.tx_count)),
    col(
      "total_fee",
      "JSON",
      "fees paid, [{denom, amount}] with amounts as exact strings (per denom, one row each: the block_fees view)",
      (b) => JSON.stringify(b.total_fee)
    ),
    col("proposer_moniker", "VARCHAR", "proposer.moniker", (b) => b.proposer.moniker),
    col("proposer_bech32", "VARCHAR", "proposer.operator_address (initvaloper1…)", (b) => b.proposer.operator_address),
    col("proposer_address", "VARCHAR", "the proposer's operator, canonical: 0x + lowercase hex of its bytes", (b) =>
      canonicalAddress(b.proposer.operator_address)
    )
  ],
  key: ["height"],
  sortKey: ["height"],
  partition: heightBucket("height")
})
