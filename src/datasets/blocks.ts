/**
 * blocks — GET /indexer/block/v1/blocks, sharded by height (constructed {"height":N} cursors).
 * One row per block; partitioned by height_bucket of height; sorted by height.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { Block } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { blocksSource } from "./sources.js"

const col = columnsOf<Block>()

export const blocks = defineAppend({
  name: "blocks",
  description: "One row per block: time, gas, tx count, fees and proposer.",
  source: blocksSource,
  columns: [
    col("height", "BIGINT", "block height", (b) => b.height),
    col("hash", "VARCHAR", "block hash (uppercase hex, no 0x)", (b) => b.hash),
    col("chain_id", "VARCHAR", "chain id", (b) => b.chain_id),
    col("timestamp", "TIMESTAMP", "block time (UTC, second precision on the wire)", (b) => b.timestamp),
    col("block_time", "BIGINT", "milliseconds since the previous block (0 for the first indexed block)", (b) => b.block_time),
    col("gas_used", "BIGINT", "sum of the block's txs' gas used", (b) => b.gas_used),
    col("gas_wanted", "BIGINT", "sum of the block's txs' gas wanted", (b) => b.gas_wanted),
    col("tx_count", "INTEGER", "number of cosmos txs", (b) => Number(b.tx_count)),
    col("total_fee", "JSON", "fees paid, [{denom, amount}] with amounts as exact strings", (b) => JSON.stringify(b.total_fee)),
    col("total_fee_denom", "VARCHAR", "the fee denom when all of the block's fees are in one (NULL for none or several: see total_fee)", (b) => (b.total_fee.length === 1 ? b.total_fee[0].denom : null)),
    col("total_fee_amount", "DECIMAL(38,0)", "the fees in total_fee_denom, exact", (b) => (b.total_fee.length === 1 ? b.total_fee[0].amount || null : null)),
    col("proposer_moniker", "VARCHAR", "proposer.moniker", (b) => b.proposer.moniker),
    col("proposer_operator_address", "VARCHAR", "proposer.operator_address", (b) => b.proposer.operator_address)
  ],
  key: ["height"],
  sortKey: ["height"],
  partition: heightBucket("height")
})
