/**
 * IndexerClient: one method per endpoint of the indexer API (endpoints.ts), each decoding with its Effect Schema.
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
import { INDEXER as E, MAX_PAGE_LIMIT, type GetEndpoint, type ListEndpoint, type PathOf } from "./endpoints.js"

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

export { MAX_PAGE_LIMIT }

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

    const ask = <A, I, P extends PathOf>(e: GetEndpoint<A, I, P>, ...params: Parameters<P>) =>
      Effect.suspend(() => getDecoded(e.schema, e.name, e.path(...params)))
    const page = <A, I, P extends PathOf>(e: ListEndpoint<A, I, P>, params: Parameters<P>, request?: PageRequest, extra: Query = {}) =>
      Effect.suspend(() => getDecoded(e.schema, e.name, e.path(...params), { ...pageQuery(request), ...extra }))

    return {
      baseUrl,
      getWith,
      getJson,
      pageQuery,
      buildUrl,
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
