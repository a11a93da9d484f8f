/**
 * IndexerClient: one method per endpoint of the indexer API (endpoints.ts), each decoding with its
 * Effect Schema. Path parameters are sent here as the server matches them, `msgs` as repeated
 * params; how a request is made (the URL, one GET with its failures classified, the shared
 * RequestLimiter and the retry schedule, the decode) is requests.ts.
 */
import { Context, Effect, Layer, Option } from "effect"
import { HttpTransport } from "../http/transport.js"
import { RequestLimiter } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, type RetryPolicy } from "../http/retry.js"
import { Retries } from "../http/Retries.js"
import { IndexerRequestError, type IndexerError } from "./errors.js"
import { INDEXER as E, type GetEndpoint, type ListEndpoint, type PathOf } from "./endpoints.js"
import {
  buildUrl,
  getDecoded,
  getJson,
  getWith,
  pageQuery,
  type PageRequest,
  type Query,
  type RawBytes,
  type RequestContext
} from "./requests.js"

export type { PageRequest, RawBytes }

export interface TxFilter {
  readonly msgs?: ReadonlyArray<string>
}
export interface NftFilter {
  readonly tokenId?: string
  readonly orderBy?: "token_id" | "height"
}

export interface IndexerClientConfig {
  readonly baseUrl: string
  readonly retry?: RetryPolicy
}

/** What a path may hold unescaped (RFC 3986 pchar, less "%"). */
const PATH_SAFE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]+$/
/**
 * A name or token id as a path parameter. The real indexer's handlers read path parameters
 * undecoded (Fiber; gofiber/fiber#1450; only the rich list turns "%2F" back into "/"), so a
 * percent-escape is matched as its three characters: a value that needs one is never found,
 * and is refused here rather than asked for.
 */
const rawSeg = (what: string, value: string): Effect.Effect<string, IndexerError> =>
  PATH_SAFE.test(value)
    ? Effect.succeed(value)
    : Effect.fail(
        new IndexerRequestError({
          message: `${what} ${JSON.stringify(value)} cannot be asked of the indexer: it reads path parameters undecoded, so a value holding a space, "/", "?", "#", "%" or a non-ASCII character is never matched`
        })
      )
/** The collection-name search keeps only the needle's letters, marks and numbers (rollytics api/handler/nft/cache.go): the rest is not sent. */
const nameNeedle = (name: string) => name.replace(/[^\p{L}\p{M}\p{N}]+/gu, "")

export const makeIndexerClient = (config: IndexerClientConfig) =>
  Effect.gen(function* () {
    const ctx: RequestContext = {
      http: yield* HttpTransport,
      limiter: yield* RequestLimiter,
      policy: config.retry ?? DEFAULT_RETRY,
      baseUrl: config.baseUrl.replace(/\/+$/, ""),
      retries: Option.getOrUndefined(yield* Effect.serviceOption(Retries))
    }
    const ask = <A, I, P extends PathOf>(e: GetEndpoint<A, I, P>, ...params: Parameters<P>) =>
      Effect.suspend(() => getDecoded(ctx, e.schema, e.name, e.path(...params)))
    const page = <A, I, P extends PathOf>(e: ListEndpoint<A, I, P>, params: Parameters<P>, request?: PageRequest, extra: Query = {}) =>
      Effect.suspend(() => getDecoded(ctx, e.schema, e.name, e.path(...params), { ...pageQuery(request), ...extra }))

    return {
      baseUrl: ctx.baseUrl,
      getWith: <A>(endpoint: string, path: string, query: Query | undefined, decode: (raw: RawBytes) => Effect.Effect<A, IndexerError>) =>
        getWith(ctx, endpoint, path, query, decode),
      getJson: (endpoint: string, path: string, query?: Query) => getJson(ctx, endpoint, path, query),
      pageQuery,
      buildUrl: (path: string, query?: Query) => buildUrl(ctx.baseUrl, path, query),
      status: ask(E.status),
      avgBlockTime: ask(E.avgBlockTime),
      blocks: (p?: PageRequest) => page(E.blocks, [], p),
      block: (height: number | string) => ask(E.block, height),
      txs: (p?: PageRequest, filter: TxFilter = {}) => page(E.txs, [], p, { msgs: filter.msgs }),
      txsByAccount: (account: string, p?: PageRequest, filter: TxFilter & { isSigner?: boolean } = {}) =>
        page(E.txsByAccount, [account], p, { msgs: filter.msgs, is_signer: filter.isSigner }),
      txsByHeight: (height: number, p?: PageRequest, filter: TxFilter = {}) => page(E.txsByHeight, [height], p, { msgs: filter.msgs }),
      tx: (hash: string) => ask(E.tx, hash),
      evmTxs: (p?: PageRequest) => page(E.evmTxs, [], p),
      evmTxsByAccount: (account: string, p?: PageRequest, filter: { isSigner?: boolean } = {}) =>
        page(E.evmTxsByAccount, [account], p, { is_signer: filter.isSigner }),
      evmTxsByHeight: (height: number, p?: PageRequest) => page(E.evmTxsByHeight, [height], p),
      evmTx: (hash: string) => ask(E.evmTx, hash),
      internalTxs: (p?: PageRequest) => page(E.internalTxs, [], p),
      internalTxsByAccount: (account: string, p?: PageRequest) => page(E.internalTxsByAccount, [account], p),
      internalTxsByHeight: (height: number, p?: PageRequest) => page(E.internalTxsByHeight, [height], p),
      internalTxsByHash: (hash: string, p?: PageRequest) => page(E.internalTxsByHash, [hash], p),
      collections: (p?: PageRequest) => page(E.collections, [], p),
      collectionsByAccount: (account: string, p?: PageRequest) => page(E.collectionsByAccount, [account], p),
      collectionsByName: (name: string, p?: PageRequest) =>
        Effect.flatMap(rawSeg("a collection name's letters and digits", nameNeedle(name)), (needle) =>
          page(E.collectionsByName, [needle], p)
        ),
      collection: (address: string) => ask(E.collection, address),
      tokensByAccount: (account: string, p?: PageRequest, filter: NftFilter & { collectionAddr?: string } = {}) =>
        page(E.tokensByAccount, [account], p, {
          collection_addr: filter.collectionAddr,
          token_id: filter.tokenId,
          order_by: filter.orderBy
        }),
      tokensByCollection: (collectionAddr: string, p?: PageRequest, filter: NftFilter = {}) =>
        page(E.tokensByCollection, [collectionAddr], p, { token_id: filter.tokenId, order_by: filter.orderBy }),
      nftTxs: (collectionAddr: string, tokenId: string, p?: PageRequest) =>
        Effect.flatMap(rawSeg("token id", tokenId), (id) => page(E.nftTxs, [collectionAddr, id], p)),
      richList: (denom: string, p?: PageRequest) => page(E.richList, [denom], p)
    }
  })

export type IndexerClientService = Effect.Effect.Success<ReturnType<typeof makeIndexerClient>>

export class IndexerClient extends Context.Tag("chain-lake/IndexerClient")<IndexerClient, IndexerClientService>() {}

/** The client for `baseUrl`; needs an HttpTransport (layerHttpTransport) and a RequestLimiter. */
export const layerIndexerClient = (config: IndexerClientConfig) => Layer.effect(IndexerClient, makeIndexerClient(config))
