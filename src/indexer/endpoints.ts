/**
 * The indexer's endpoints, each once: its name (in messages and errors), its path, the schema of
 * its answer and, for a paged list, the key of its records array and how its `pagination.key`
 * reads. The client's methods (IndexerClient.ts), the engine's driver (src/drivers/indexer.ts)
 * and the datasets' lists (src/datasets/) are all made from these entries; no other module
 * writes an indexer path.
 *
 * Key styles, as the real indexer (Rollytics) pages each list: "height" and "sequence" are keyset
 * cursors (`{"height": h}` / `{"sequence": s}`, base64: cursors.ts), an index seek on its
 * database; "offset" lists name the offset of their next page as next_key, read with SQL OFFSET.
 */
import type { Schema } from "effect"
import * as S from "./schemas.js"

/** How a list's `pagination.key` reads (see the module's comment). */
export type KeyStyle = "height" | "sequence" | "offset"

/** The largest page the indexer serves: it answers 400 to a `pagination.limit` above it. */
export const MAX_PAGE_LIMIT = 1000

/** A path parameter as the server matches it. */
const seg = (s: string | number) => encodeURIComponent(String(s))

// biome-ignore lint/suspicious/noExplicitAny: an endpoint's path takes its own parameters
export type PathOf = (...params: any) => string

/** One GET answering one document. */
export interface GetEndpoint<A, I, P extends PathOf> {
  readonly kind: "get"
  readonly name: string
  readonly schema: Schema.Schema<A, I>
  readonly path: P
}

/** One paged list. */
export interface ListEndpoint<A, I, P extends PathOf> {
  readonly kind: "list"
  readonly name: string
  readonly schema: Schema.Schema<A, I>
  readonly path: P
  /** the key of the records array in its answer (`txs`, `holders`, …) */
  readonly records: string
  readonly keys: KeyStyle
}

const get = <A, I, P extends PathOf>(name: string, schema: Schema.Schema<A, I>, path: P): GetEndpoint<A, I, P> => ({
  kind: "get",
  name,
  schema,
  path
})

const list = <A, I, P extends PathOf>(
  name: string,
  schema: Schema.Schema<A, I>,
  records: string,
  keys: KeyStyle,
  path: P
): ListEndpoint<A, I, P> => ({ kind: "list", name, schema, path, records, keys })

const TX = "/indexer/tx/v1"
const NFT = "/indexer/nft/v1"

export const INDEXER = {
  status: get("/status", S.Status, () => "/status"),
  avgBlockTime: get("avg_blocktime", S.AvgBlockTime, () => "/indexer/block/v1/avg_blocktime"),
  blocks: list("blocks", S.BlocksResponse, "blocks", "height", () => "/indexer/block/v1/blocks"),
  block: get("block", S.BlockResponse, (height: number | string) => `/indexer/block/v1/blocks/${seg(height)}`),
  txs: list("txs", S.TxsResponse, "txs", "sequence", () => `${TX}/txs`),
  txsByAccount: list("txs/by_account", S.TxsResponse, "txs", "sequence", (account: string) => `${TX}/txs/by_account/${seg(account)}`),
  txsByHeight: list("txs/by_height", S.TxsResponse, "txs", "sequence", (height: number) => `${TX}/txs/by_height/${seg(height)}`),
  tx: get("tx", S.TxResponse, (hash: string) => `${TX}/txs/${seg(hash)}`),
  evmTxs: list("evm-txs", S.EvmTxsResponse, "txs", "sequence", () => `${TX}/evm-txs`),
  evmTxsByAccount: list(
    "evm-txs/by_account",
    S.EvmTxsResponse,
    "txs",
    "sequence",
    (account: string) => `${TX}/evm-txs/by_account/${seg(account)}`
  ),
  evmTxsByHeight: list(
    "evm-txs/by_height",
    S.EvmTxsResponse,
    "txs",
    "sequence",
    (height: number) => `${TX}/evm-txs/by_height/${seg(height)}`
  ),
  evmTx: get("evm-tx", S.EvmTxResponse, (hash: string) => `${TX}/evm-txs/${seg(hash)}`),
  internalTxs: list("evm-internal-txs", S.EvmInternalTxsResponse, "internal_txs", "sequence", () => `${TX}/evm-internal-txs`),
  internalTxsByAccount: list(
    "evm-internal-txs/by_account",
    S.EvmInternalTxsResponse,
    "internal_txs",
    "sequence",
    (account: string) => `${TX}/evm-internal-txs/by_account/${seg(account)}`
  ),
  internalTxsByHeight: list(
    "evm-internal-txs/by_height",
    S.EvmInternalTxsResponse,
    "internal_txs",
    "sequence",
    (height: number) => `${TX}/evm-internal-txs/by_height/${seg(height)}`
  ),
  internalTxsByHash: list(
    "evm-internal-txs/by_hash",
    S.EvmInternalTxsResponse,
    "internal_txs",
    "sequence",
    (hash: string) => `${TX}/evm-internal-txs/${seg(hash)}`
  ),
  collections: list("collections", S.CollectionsResponse, "collections", "offset", () => `${NFT}/collections`),
  collectionsByAccount: list(
    "collections/by_account",
    S.CollectionsResponse,
    "collections",
    "offset",
    (account: string) => `${NFT}/collections/by_account/${seg(account)}`
  ),
  /** `needle`: the name's letters, marks and digits only (IndexerClient keeps those; the handler reads it undecoded) */
  collectionsByName: list(
    "collections/by_name",
    S.CollectionsResponse,
    "collections",
    "offset",
    (needle: string) => `${NFT}/collections/by_name/${needle}`
  ),
  collection: get("collection", S.CollectionResponse, (address: string) => `${NFT}/collections/${seg(address)}`),
  tokensByAccount: list(
    "tokens/by_account",
    S.NftsResponse,
    "tokens",
    "offset",
    (account: string) => `${NFT}/tokens/by_account/${seg(account)}`
  ),
  tokensByCollection: list(
    "tokens/by_collection",
    S.NftsResponse,
    "tokens",
    "offset",
    (collection: string) => `${NFT}/tokens/by_collection/${seg(collection)}`
  ),
  /** `tokenId` as the server matches it, undecoded (IndexerClient refuses one that would need escaping) */
  nftTxs: list(
    "nft/txs",
    S.TxsResponse,
    "txs",
    "sequence",
    (collection: string, tokenId: string) => `${NFT}/txs/${seg(collection)}/${tokenId}`
  ),
  richList: list("richlist", S.TokenHoldersResponse, "holders", "offset", (denom: string) => `/indexer/richlist/v1/${seg(denom)}`)
} as const

/**
 * Where the engine's driver finds a list: its name, path (of `params`), records key and key style
 * (the shape of the engine's `ListRef`).
 */
export const listRef = <P extends PathOf>(
  endpoint: Pick<ListEndpoint<unknown, unknown, P>, "name" | "path" | "records" | "keys">,
  ...params: Parameters<P>
): { readonly endpoint: string; readonly path: string; readonly arrayKey: string; readonly keys: KeyStyle } => ({
  endpoint: endpoint.name,
  path: endpoint.path(...params),
  arrayKey: endpoint.records,
  keys: endpoint.keys
})
