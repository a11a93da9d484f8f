/**
 * How the client asks the indexer: a URL from a path and a query, one GET with a timeout and its
 * failures classified (non-2xx bodies are plain text; an HTML page is no cut body), run under the
 * shared RequestLimiter and the retry schedule, and the body decoded in the same retried step (a
 * body that is not JSON is a truncated response, fetched again).
 */
import { Effect, Either, type Schema } from "effect"
import { decodeBody, isHtmlPage, notJson } from "../http/body.js"
import { fetchBytes, type Fetched, type HttpTransportService } from "../http/transport.js"
import type { RequestLimiterService } from "../http/RequestLimiter.js"
import type { RetriesService } from "../http/Retries.js"
import { parseRetryAfter, retrySchedule, type RetryPolicy } from "../http/retry.js"
import { decodeWithPath } from "../schema/decode.js"
import {
  IndexerAnswerTooLarge,
  IndexerDecodeError,
  IndexerHttpError,
  IndexerNetworkError,
  IndexerTimeout,
  IndexerTruncatedBody,
  type IndexerError
} from "./errors.js"
import { MAX_PAGE_LIMIT } from "./endpoints.js"

/** A request's query parameters: an array is sent as repeated params, undefined and null not at all. */
export type Query = Record<string, string | number | boolean | ReadonlyArray<string> | undefined | null>

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

/** A fetched body as bytes, before decoding. */
export interface RawBytes {
  readonly url: string
  readonly endpoint: string
  readonly bytes: ArrayBuffer
}

/** A page request as query parameters: `reverse` sent on every page, the limit checked against 1..MAX_PAGE_LIMIT. */
export const pageQuery = (p: PageRequest = {}): Query => {
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

/** The URL of `path` under `baseUrl` (no trailing slash) with `query`. */
export const buildUrl = (baseUrl: string, path: string, query: Query = {}): string => {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue
    if (Array.isArray(v)) for (const item of v) params.append(k, item)
    else params.append(k, String(v))
  }
  const qs = params.toString()
  return `${baseUrl}${path}${qs ? `?${qs}` : ""}`
}

/** An answer's bytes, or why it holds no document of `endpoint`: a non-2xx status, or a web page where JSON was expected. */
const answerOf = (endpoint: string, url: string, res: Fetched): Effect.Effect<RawBytes, IndexerError> => {
  if (res.status < 200 || res.status >= 300)
    return Effect.fail(
      new IndexerHttpError({
        status: res.status,
        body: decodeBody(res.bytes),
        url,
        retryAfterMs: parseRetryAfter(res.headers["retry-after"])
      })
    )
  // a web page where JSON was expected (a wrong URL, a login or gateway page) is not a cut body: asking again cannot help
  if (isHtmlPage(res.bytes, res.headers["content-type"] ?? ""))
    return Effect.fail(
      new IndexerDecodeError({
        endpoint,
        key: null,
        path: "",
        message: `${url} answered 200 with an HTML page, not JSON: is this the indexer's URL (or is a login or gateway page in front of it)?`
      })
    )
  return Effect.succeed({ url, endpoint, bytes: res.bytes })
}

/**
 * Every request asks the indexer's own answer, not one its cache holds: the real indexer keeps
 * lists and /status 1 s by URL (Rollytics api/cache/cache.go, which `no-cache` bypasses), and a
 * plan read from a fresh /status and a probe cached before it would end short of the status's tip.
 */
const FRESH = { "cache-control": "no-cache" }

/** One GET of `url` with a timeout and classified failures; no retry (callers wrap it once). */
export const fetchOnce = (
  http: HttpTransportService,
  timeoutMs: number,
  endpoint: string,
  url: string
): Effect.Effect<RawBytes, IndexerError> =>
  fetchBytes(http, { method: "GET", url, headers: FRESH }, timeoutMs, {
    network: (reason): IndexerError => new IndexerNetworkError({ url, reason }),
    tooLarge: (reason): IndexerError => new IndexerAnswerTooLarge({ url, reason }),
    timeout: (): IndexerError => new IndexerTimeout({ url, timeoutMs })
  }).pipe(Effect.flatMap((res) => answerOf(endpoint, url, res)))

/** The body as JSON; a parse failure is a truncated body (retryable). */
const parseJson = (raw: RawBytes): Effect.Effect<unknown, IndexerError> =>
  Effect.try({
    try: () => JSON.parse(decodeBody(raw.bytes)) as unknown,
    catch: () => new IndexerTruncatedBody({ url: raw.url, what: notJson(raw.bytes) })
  })

/** `json` decoded with `schema`, or where it breaks it (in the page of `key` of `endpoint`). */
const decodeAnswer = <A, I>(
  schema: Schema.Schema<A, I>,
  endpoint: string,
  key: string | null,
  json: unknown
): Effect.Effect<A, IndexerError> => {
  const decoded = decodeWithPath(schema, json)
  return Either.isRight(decoded)
    ? Effect.succeed(decoded.right)
    : Effect.fail(new IndexerDecodeError({ endpoint, key, path: decoded.left.path, message: decoded.left.message }))
}

/** What a request needs: the transport, the shared limits, the retry policy and the indexer's base URL. */
export interface RequestContext {
  readonly http: HttpTransportService
  readonly limiter: RequestLimiterService
  readonly policy: RetryPolicy
  readonly baseUrl: string
  /** where the requests asked again are counted, if anywhere */
  readonly retries?: RetriesService
}

/**
 * GET `path` and turn the body into `A` with `decode`, under the limits and retries: a decode that
 * fails with a retryable error (a truncated body) fetches again. The export hot path decodes
 * pages its own (cheaper) way through this. The limiter's permit covers the request, body
 * included, and is given back before the decode: --concurrency bounds what the server serves at
 * once, and a page waiting for its thread to parse it (a shard worker busy with other pages)
 * would keep another page from being asked (the page budget bounds the bytes held meanwhile).
 */
export const getWith = <A>(
  ctx: RequestContext,
  endpoint: string,
  path: string,
  query: Query | undefined,
  decode: (raw: RawBytes) => Effect.Effect<A, IndexerError>
): Effect.Effect<A, IndexerError> =>
  Effect.flatMap(ctx.limiter.run(fetchOnce(ctx.http, ctx.policy.timeoutMs, endpoint, buildUrl(ctx.baseUrl, path, query))), decode).pipe(
    Effect.retry(retrySchedule<IndexerError>(ctx.policy, ctx.retries?.retried))
  )

/** GET and JSON-parse; a parse failure is a truncated body, retried with the request. */
export const getJson = (ctx: RequestContext, endpoint: string, path: string, query?: Query): Effect.Effect<unknown, IndexerError> =>
  getWith(ctx, endpoint, path, query, parseJson)

/** GET, JSON-parse and decode with `schema`. */
export const getDecoded = <A, I>(
  ctx: RequestContext,
  schema: Schema.Schema<A, I>,
  endpoint: string,
  path: string,
  query?: Query
): Effect.Effect<A, IndexerError> =>
  getJson(ctx, endpoint, path, query).pipe(
    Effect.flatMap((json) => decodeAnswer(schema, endpoint, (query?.["pagination.key"] as string | undefined) ?? null, json))
  )
