/** Every dataset chain-lake exports, in export order (append-only first, then snapshots). */
import type { Dataset } from "../engine/Dataset.js"
import { blocks } from "./blocks.js"
import { evmInternalTxs } from "./evm_internal_txs.js"
import { evmLogs } from "./evm_logs.js"
import { evmTxs } from "./evm_txs.js"
import { holders } from "./holders.js"
import { nftCollections } from "./nft_collections.js"
import { nftTokens } from "./nft_tokens.js"
import { txs } from "./txs.js"

export const ALL_DATASETS: ReadonlyArray<Dataset> = [blocks, txs, evmTxs, evmLogs, evmInternalTxs, nftCollections, nftTokens, holders]

export const datasetByName = (name: string): Dataset | undefined => ALL_DATASETS.find((d) => d.name === name)
