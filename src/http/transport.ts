/**
 * The one HTTP step both API clients share: send a request with a timeout and read the whole
 * body as bytes. What a failure means differs per API (plain-text vs JSON error bodies), so the
 * caller names its own errors; status, headers and body are returned as they came.
 *
 * `HttpTransport` is undici (one connection pool per layer), called directly in one Effect per
 * request. @effect/platform's HttpClient over the same undici (`NodeHttpClient.layerUndici`) cost
 * ~1 ms of main-thread CPU per request against ~0.4 ms (fiber and response bookkeeping):
 * a quarter of a sharded export's CPU at 100-block pages (bench/RESULTS.md).
 */
import { Context, Effect, Layer } from "effect"
import type { Dispatcher } from "undici"
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from "node:zlib"
import { DEFAULTS } from "../defaults.js"
import type { ServiceUrl } from "./serviceUrl.js"
import { Agent } from "./undiciAgent.js"

export interface HttpRequest {
  readonly method: "GET" | "POST"
  readonly url: string
  /** a JSON body (POST) */
  readonly json?: unknown
  /** headers of this request, under the service's own (its credentials, which win where both name one) */
  readonly headers?: Readonly<Record<string, string>>
}

export interface Fetched {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly bytes: ArrayBuffer
}

/** Why a request failed below HTTP: no connection, the body was cut short or could not be decompressed, or it was larger than allowed. */
export interface TransportFailure {
  readonly phase: "connect" | "body" | "encoding" | "too-large"
  readonly reason: string
  /** the system's or undici's code (ECONNREFUSED, UND_ERR_SOCKET, …), when there is one */
  readonly code?: string
}

/** undici's code for a body past the Agent's maxResponseSize. */
const TOO_LARGE = "UND_ERR_RES_EXCEEDED_MAX_SIZE"

export interface HttpTransportService {
  readonly send: (request: HttpRequest, signal: AbortSignal) => Promise<Fetched>
}

export class HttpTransport extends Context.Tag("chain-lake/HttpTransport")<HttpTransport, HttpTransportService>() {}

/** undici's message ("connect ECONNREFUSED 127.0.0.1:9", "other side closed"), with its code when the message lacks it */
const reasonOf = (e: unknown): string => {
  const err = e as { code?: string; message?: string }
  if (!err.message) return err.code ?? String(e)
  return err.code && !err.message.includes(err.code) ? `${err.message} (${err.code})` : err.message
}

/**
 * undici with its own connection pool, closed with the layer; the RequestLimiter, not the pool,
 * bounds requests in flight. One transport serves one service: `credentials` (headers, and query
 * parameters such as an API key, see endpoint.ts) go with each of its requests and appear in no URL
 * the clients see.
 */
/**
 * A body as sent, decompressed where the server compressed it although nothing asked it to (a
 * gateway or CDN that always does): gzip, deflate and br; at most `maxBytes` once decompressed.
 */
const decoded = (bytes: ArrayBuffer, encoding: string | undefined, maxBytes: number, status: number): ArrayBuffer => {
  const kind = encoding?.trim().toLowerCase()
  if (!kind || kind === "identity" || bytes.byteLength === 0) return bytes
  // an error's body is shown as it came if it does not decompress: the status is what matters
  const ok = status >= 200 && status < 300
  const decompress = DECOMPRESSORS.get(kind)
  if (!decompress) {
    if (!ok) return bytes
    throw {
      phase: "encoding",
      reason: `its body came with content-encoding ${kind}, which chain-lake cannot read (gzip, br and deflate it can)`
    } satisfies TransportFailure
  }
  let out: Buffer
  try {
    out = decompress(Buffer.from(bytes), { maxOutputLength: maxBytes })
  } catch (e) {
    const code = (e as { code?: string }).code
    if (!ok && code !== "ERR_BUFFER_TOO_LARGE") return bytes
    throw code === "ERR_BUFFER_TOO_LARGE"
      ? ({ phase: "too-large", reason: `larger than ${maxBytes / 1024 / 1024} MB once decompressed` } satisfies TransportFailure)
      : ({ phase: "encoding", reason: `its ${kind} body could not be decompressed: ${(e as Error).message}` } satisfies TransportFailure)
  }
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer
}
/** "deflate" is zlib-wrapped by the standard, raw from some servers */
const inflateOrRaw = (input: Buffer, options: { maxOutputLength: number }) => {
  try {
    return inflateSync(input, options)
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw e
    return inflateRawSync(input, options)
  }
}
/** the content-encodings read, each with its decompressor */
type Decompress = (input: Buffer, options: { maxOutputLength: number }) => Buffer
const DECOMPRESSORS: ReadonlyMap<string, Decompress> = new Map<string, Decompress>([
  ["gzip", gunzipSync],
  ["x-gzip", gunzipSync],
  ["br", brotliDecompressSync],
  ["deflate", inflateOrRaw]
])

/** A request's headers: its own, the service's (credentials) over them by name in any case, and a JSON body's type. */
const headersOf = (request: HttpRequest, service: Readonly<Record<string, string>>): Record<string, string> => {
  const named = new Set(Object.keys(service).map((k) => k.toLowerCase()))
  const own = Object.entries(request.headers ?? {}).filter(([k]) => !named.has(k.toLowerCase()))
  return { ...Object.fromEntries(own), ...service, ...(request.json === undefined ? {} : { "content-type": "application/json" }) }
}

export const layerHttpTransport = (
  credentials: Pick<ServiceUrl, "headers" | "query"> = { headers: {}, query: [] },
  limits: { readonly maxPageMb?: number } = {}
) => {
  const maxPageMb = limits.maxPageMb ?? DEFAULTS.maxPageMb
  const failed = (phase: "connect" | "body", e: unknown): TransportFailure =>
    (e as { code?: string }).code === TOO_LARGE
      ? { phase: "too-large", reason: `larger than ${maxPageMb} MB` }
      : {
          phase,
          reason: reasonOf(e),
          ...(typeof (e as { code?: unknown }).code === "string" ? { code: (e as { code: string }).code } : {})
        }
  const maxBytes = Math.round(maxPageMb * 1024 * 1024)
  const extraQuery = new URLSearchParams(credentials.query.map(([k, v]): [string, string] => [k, v])).toString()
  const withQuery = (url: string) => (extraQuery ? `${url}${url.includes("?") ? "&" : "?"}${extraQuery}` : url)
  return Layer.scoped(
    HttpTransport,
    Effect.acquireRelease(
      Effect.sync(() => new Agent({ maxResponseSize: maxBytes })),
      // destroy, not close: at release nothing is wanted any more, and close would wait for a request left hanging
      (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
    ).pipe(
      Effect.map(
        (agent): HttpTransportService => ({
          send: async (request, signal) => {
            let res: Dispatcher.ResponseData
            try {
              const url = new URL(withQuery(request.url))
              res = await agent.request({
                origin: url.origin,
                path: `${url.pathname}${url.search}`,
                method: request.method,
                signal,
                headers: headersOf(request, credentials.headers),
                ...(request.json === undefined ? {} : { body: JSON.stringify(request.json) })
              })
            } catch (e) {
              throw failed("connect", e)
            }
            let bytes: ArrayBuffer
            try {
              bytes = await res.body.arrayBuffer()
            } catch (e) {
              throw failed("body", e)
            }
            const headers: Record<string, string | undefined> = {}
            for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : v
            return { status: res.statusCode, headers, bytes: decoded(bytes, headers["content-encoding"], maxBytes, res.statusCode) }
          }
        })
      )
    )
  )
}

export interface TransportErrors<E> {
  /** the connection failed, or the body was cut short */
  readonly network: (reason: string) => E
  /** the answer was larger than the transport reads (not transient: asking again gets the same) */
  readonly tooLarge: (reason: string) => E
  readonly timeout: () => E
}

/** One request with a timeout (interrupting it aborts the request), failures named by the caller. */
export const fetchBytes = <E>(
  transport: HttpTransportService,
  request: HttpRequest,
  timeoutMs: number,
  errors: TransportErrors<E>
): Effect.Effect<Fetched, E> =>
  Effect.tryPromise({
    try: (signal) => transport.send(request, signal),
    catch: (e) => {
      const failure = e as Partial<TransportFailure>
      if (failure.phase === "too-large") return errors.tooLarge(failure.reason ?? "too large")
      return errors.network(failure.phase === "body" ? `body cut short: ${failure.reason}` : (failure.reason ?? String(e)))
    }
  }).pipe(Effect.timeoutFail({ duration: timeoutMs, onTimeout: errors.timeout }))
