/**
 * IndexerClient: one method per endpoint of the indexer API, each decoding with its Effect Schema.
 * Wire quirks are handled here once: non-2xx bodies are plain text, `reverse` is sent on every
 * page, `msgs` as repeated params, path parameters as the server matches them, limit checked against 1..1000.
 * Every request goes through the shared RequestLimiter and the retry schedule.
 */
import { Context, Effect, Either, Layer, type Schema } from "effect"
import { decodeBody } from "../http/body.js"
import { fetchBytes, HttpTransport } from "../http/transport.js"
import { RequestLimiter } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, parseRetryAfter, retrySchedule, type RetryPolicy } from "../http/retry.js"
import { decodeWithPath } from "../schema/decode.js"
import {
  IndexerDecodeError,
  IndexerHttpError,
  IndexerNetworkError,
  IndexerRequestError,
  IndexerTimeout,
  IndexerTruncatedBody,
  type IndexerError
} from "./errors.js"
import * as S from "./schemas.js"

/** The pagination parameters every list endpoint takes. */
export interface PageRequest {
  readonly key?: string | null
  readonly offset?: number
  /** 1..1000 (the server answers 400 outside) */
  readonly limit?: number
  /** the API defaults to true (descending); the client always sends it explicitly */
  readonly reverse?: boolean
  readonly countTotal?: boolean
}
export interface TxFilter {
  readonly msgs?: ReadonlyArray<string>
}
export interface NftFilter {
  readonly tokenId?: string
  readonly orderBy?: "token_id" | "height"
}

/** A fetched body as bytes, before decoding. */
export interface RawBytes {
  readonly url: string
  readonly endpoint: string
  readonly bytes: ArrayBuffer
}

export interface IndexerClientConfig {
  readonly baseUrl: string
  readonly retry?: RetryPolicy
}

export const MAX_PAGE_LIMIT = 1000

type Query = Record<string, string | number | boolean | ReadonlyArray<string> | undefined | null>

const pageQuery = (p: PageRequest = {}): Query => {
  const limit = p.limit ?? 100
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)
    throw new RangeError(`page limit must be 1..${MAX_PAGE_LIMIT}, got ${limit}`)
  return {
    "pagination.key": p.key ?? undefined,
    "pagination.offset": p.offset,
    "pagination.limit": limit,
    "pagination.count_total": p.countTotal,
    "pagination.reverse": p.reverse ?? true
  }
}

const seg = (s: string | number) => encodeURIComponent(String(s))

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
    const http = yield* HttpTransport
    const limiter = yield* RequestLimiter
    const policy = config.retry ?? DEFAULT_RETRY
    const baseUrl = config.baseUrl.replace(/\/+$/, "")

    const buildUrl = (path: string, query: Query = {}) => {
      const params = new URLSearchParams()
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null) continue
        if (Array.isArray(v)) for (const item of v) params.append(k, item)
        else params.append(k, String(v))
      }
      const qs = params.toString()
      return `${baseUrl}${path}${qs ? `?${qs}` : ""}`
    }

    /** One GET with timeout and classified failures; no retry (callers wrap it once). */
    const fetchOnce = (endpoint: string, url: string): Effect.Effect<RawBytes, IndexerError> =>
      fetchBytes(http, { method: "GET", url }, policy.timeoutMs, {
        network: (reason): IndexerError => new IndexerNetworkError({ url, reason }),
        tooLarge: (reason): IndexerError =>
          new IndexerDecodeError({
            endpoint,
            key: null,
            path: "",
            message: `the answer of ${url} is ${reason}: lower --page-size, or raise --max-page-mb if such pages are expected`
          }),
        timeout: (): IndexerError => new IndexerTimeout({ url, timeoutMs: policy.timeoutMs })
      }).pipe(
        Effect.flatMap(
          (res): Effect.Effect<RawBytes, IndexerError> =>
            res.status < 200 || res.status >= 300
              ? Effect.fail(
                  new IndexerHttpError({
                    status: res.status,
                    body: decodeBody(res.bytes),
                    url,
                    retryAfterMs: parseRetryAfter(res.headers["retry-after"])
                  })
                )
              : // a web page where JSON was expected (a wrong URL, a login or gateway page) is not a cut body: asking again cannot help
                /^\s*text\/html\b/i.test(res.headers["content-type"] ?? "")
                ? Effect.fail(
                    new IndexerDecodeError({
                      endpoint,
                      key: null,
                      path: "",
                      message: `${url} answered 200 with an HTML page, not JSON: is this the indexer's URL (or is a login or gateway page in front of it)?`
                    })
                  )
                : Effect.succeed({ url, endpoint, bytes: res.bytes })
        )
      )

    /** Runs one attempt under the shared limits, retrying transient failures by the policy. */
    const withRetries = <A>(attempt: Effect.Effect<A, IndexerError>) =>
      limiter.run(attempt).pipe(Effect.retry(retrySchedule<IndexerError>(policy)))

    /**
     * GET and turn the body into `A` with `decode`, under the limits and retries: a decode that
     * fails with a retryable error (a truncated body) fetches again. The export hot path decodes
     * pages its own (cheaper) way through this.
     */
    const getWith = <A>(
      endpoint: string,
      path: string,
      query: Query | undefined,
      decode: (raw: RawBytes) => Effect.Effect<A, IndexerError>
    ): Effect.Effect<A, IndexerError> => withRetries(fetchOnce(endpoint, buildUrl(path, query)).pipe(Effect.flatMap(decode)))

    /** GET and JSON-parse; a parse failure is a truncated body, retried with the request. */
    const getJson = (endpoint: string, path: string, query?: Query): Effect.Effect<unknown, IndexerError> =>
      getWith(endpoint, path, query, (raw) =>
        Effect.try({
          try: () => JSON.parse(decodeBody(raw.bytes)) as unknown,
          catch: () => new IndexerTruncatedBody({ url: raw.url, bytes: raw.bytes.byteLength })
        })
      )

    /** GET, JSON-parse and decode with `schema`. */
    const getDecoded = <A, I>(schema: Schema.Schema<A, I>, endpoint: string, path: string, query?: Query): Effect.Effect<A, IndexerError> =>
      getJson(endpoint, path, query).pipe(
        Effect.flatMap((json) => {
          const decoded = decodeWithPath(schema, json)
          return Either.isRight(decoded)
            ? Effect.succeed(decoded.right)
            : Effect.fail(
                new IndexerDecodeError({
                  endpoint,
                  key: (query?.["pagination.key"] as string | undefined) ?? null,
                  path: decoded.left.path,
                  message: decoded.left.message
                })
              )
        })
      )

    const list = <A, I>(schema: Schema.Schema<A, I>, endpoint: string, path: string, page?: PageRequest, extra: Query = {}) =>
      Effect.suspend(() => getDecoded(schema, endpoint, path, { ...pageQuery(page), ...extra }))

    return {
      baseUrl,
      getWith,
      getJson,
      pageQuery,
      buildUrl,
      status: getDecoded(S.Status, "/status", "/status"),
      avgBlockTime: getDecoded(S.AvgBlockTime, "avg_blocktime", "/indexer/block/v1/avg_blocktime"),
      blocks: (page?: PageRequest) => list(S.BlocksResponse, "blocks", "/indexer/block/v1/blocks", page),
      block: (height: number | string) => getDecoded(S.BlockResponse, "block", `/indexer/block/v1/blocks/${seg(height)}`),
      txs: (page?: PageRequest, filter: TxFilter = {}) => list(S.TxsResponse, "txs", "/indexer/tx/v1/txs", page, { msgs: filter.msgs }),
      txsByAccount: (account: string, page?: PageRequest, filter: TxFilter & { isSigner?: boolean } = {}) =>
        list(S.TxsResponse, "txs/by_account", `/indexer/tx/v1/txs/by_account/${seg(account)}`, page, {
          msgs: filter.msgs,
          is_signer: filter.isSigner
        }),
      txsByHeight: (height: number, page?: PageRequest, filter: TxFilter = {}) =>
        list(S.TxsResponse, "txs/by_height", `/indexer/tx/v1/txs/by_height/${seg(height)}`, page, { msgs: filter.msgs }),
      tx: (hash: string) => getDecoded(S.TxResponse, "tx", `/indexer/tx/v1/txs/${seg(hash)}`),
      evmTxs: (page?: PageRequest) => list(S.EvmTxsResponse, "evm-txs", "/indexer/tx/v1/evm-txs", page),
      evmTxsByAccount: (account: string, page?: PageRequest, filter: { isSigner?: boolean } = {}) =>
        list(S.EvmTxsResponse, "evm-txs/by_account", `/indexer/tx/v1/evm-txs/by_account/${seg(account)}`, page, {
          is_signer: filter.isSigner
        }),
      evmTxsByHeight: (height: number, page?: PageRequest) =>
        list(S.EvmTxsResponse, "evm-txs/by_height", `/indexer/tx/v1/evm-txs/by_height/${seg(height)}`, page),
      evmTx: (hash: string) => getDecoded(S.EvmTxResponse, "evm-tx", `/indexer/tx/v1/evm-txs/${seg(hash)}`),
      internalTxs: (page?: PageRequest) => list(S.EvmInternalTxsResponse, "evm-internal-txs", "/indexer/tx/v1/evm-internal-txs", page),
      internalTxsByAccount: (account: string, page?: PageRequest) =>
        list(S.EvmInternalTxsResponse, "evm-internal-txs/by_account", `/indexer/tx/v1/evm-internal-txs/by_account/${seg(account)}`, page),
      internalTxsByHeight: (height: number, page?: PageRequest) =>
        list(S.EvmInternalTxsResponse, "evm-internal-txs/by_height", `/indexer/tx/v1/evm-internal-txs/by_height/${seg(height)}`, page),
      internalTxsByHash: (hash: string, page?: PageRequest) =>
        list(S.EvmInternalTxsResponse, "evm-internal-txs/by_hash", `/indexer/tx/v1/evm-internal-txs/${seg(hash)}`, page),
      collections: (page?: PageRequest) => list(S.CollectionsResponse, "collections", "/indexer/nft/v1/collections", page),
      collectionsByAccount: (account: string, page?: PageRequest) =>
        list(S.CollectionsResponse, "collections/by_account", `/indexer/nft/v1/collections/by_account/${seg(account)}`, page),
      collectionsByName: (name: string, page?: PageRequest) =>
        Effect.flatMap(rawSeg("a collection name's letters and digits", nameNeedle(name)), (needle) =>
          list(S.CollectionsResponse, "collections/by_name", `/indexer/nft/v1/collections/by_name/${needle}`, page)
        ),
      collection: (address: string) => getDecoded(S.CollectionResponse, "collection", `/indexer/nft/v1/collections/${seg(address)}`),
      tokensByAccount: (account: string, page?: PageRequest, filter: NftFilter & { collectionAddr?: string } = {}) =>
        list(S.NftsResponse, "tokens/by_account", `/indexer/nft/v1/tokens/by_account/${seg(account)}`, page, {
          collection_addr: filter.collectionAddr,
          token_id: filter.tokenId,
          order_by: filter.orderBy
        }),
      tokensByCollection: (collectionAddr: string, page?: PageRequest, filter: NftFilter = {}) =>
        list(S.NftsResponse, "tokens/by_collection", `/indexer/nft/v1/tokens/by_collection/${seg(collectionAddr)}`, page, {
          token_id: filter.tokenId,
          order_by: filter.orderBy
        }),
      nftTxs: (collectionAddr: string, tokenId: string, page?: PageRequest) =>
        Effect.flatMap(rawSeg("token id", tokenId), (id) =>
          list(S.TxsResponse, "nft/txs", `/indexer/nft/v1/txs/${seg(collectionAddr)}/${id}`, page)
        ),
      richList: (denom: string, page?: PageRequest) => list(S.TokenHoldersResponse, "richlist", `/indexer/richlist/v1/${seg(denom)}`, page)
    }
  })

export type IndexerClientService = Effect.Effect.Success<ReturnType<typeof makeIndexerClient>>

export class IndexerClient extends Context.Tag("chain-lake/IndexerClient")<IndexerClient, IndexerClientService>() {}

/** The client for `baseUrl`; needs an HttpTransport (layerHttpTransport) and a RequestLimiter. */
export const layerIndexerClient = (config: IndexerClientConfig) => Layer.effect(IndexerClient, makeIndexerClient(config))
