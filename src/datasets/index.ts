/**
 * The registry: every dataset of the lake, in export order (append-only first, then snapshots,
 * then those the router samplers write). Views, publish, storage, verify, the CLI's help and the
 * tests' key lists all derive from it; adding a dataset is its module plus a line here.
 */
import type { Dataset } from "../engine/Dataset.js"
import { blocks } from "./blocks.js"
import { evmInternalTxs } from "./evm_internal_txs.js"
import { evmLogs } from "./evm_logs.js"
import { evmTxs } from "./evm_txs.js"
import { holders } from "./holders.js"
import { nftCollections } from "./nft_collections.js"
import { nftTokens } from "./nft_tokens.js"
import { nftTransfers } from "./nft_transfers.js"
import { routeQuotes } from "./route_quotes.js"
import { routerAssets } from "./router_assets.js"
import { routerChains } from "./router_chains.js"
import { tokenTransfersCosmos, tokenTransfersEvm } from "./token_transfers.js"
import { transfers } from "./transfers.js"
import { txs } from "./txs.js"

export const DATASETS: ReadonlyArray<Dataset> = [
  blocks,
  txs,
  evmTxs,
  evmLogs,
  evmInternalTxs,
  tokenTransfersEvm,
  tokenTransfersCosmos,
  nftTransfers,
  nftCollections,
  nftTokens,
  holders,
  routeQuotes,
  routerAssets,
  routerChains,
  transfers
]

/** The datasets `chain-lake export` reads from the indexer (the others are sampled from the router). */
export const EXPORTED_DATASETS = DATASETS.filter((d) => d.kind !== "sample")
