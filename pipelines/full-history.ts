/** The whole chain from its first block: run once (resumable), then keep with daily-snapshot. */
import { definePipeline } from "chain-lake"

export default definePipeline({
  name: "full-history",
  description: "Every append-only dataset from the first indexed block to the tip.",
  datasets: ["blocks", "txs", "evm_txs", "evm_logs", "evm_internal_txs", "token_transfers_evm", "token_transfers_cosmos", "nft_transfers"],
  schedule: "0 3 * * *",
  out: "data"
})
