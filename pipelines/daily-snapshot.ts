/** Once a day: catch up blocks, txs and EVM data, and take holder and NFT ownership snapshots. */
import { definePipeline } from "chain-lake"

export default definePipeline({
  name: "daily-snapshot",
  description: "Incremental blocks/txs/EVM datasets and daily holder and NFT ownership snapshots.",
  datasets: [
    "blocks",
    "txs",
    "evm_txs",
    "evm_logs",
    "evm_internal_txs",
    "token_transfers_evm",
    "token_transfers_cosmos",
    "nft_transfers",
    "nft_collections",
    "nft_tokens",
    "holders"
  ],
  schedule: "0 0 * * *",
  out: "data",
  keepSnapshots: 30
})
