/**
 * The one HTTP step both API clients share: send a request with a timeout and read the whole
 * body as bytes. What a failure means differs per API (plain-text vs JSON error bodies), so the
 * caller names its own errors; status, headers and body are returned as they came.
 */
import { HttpClient, type HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"

export interface Fetched {
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly bytes: ArrayBuffer
}

export interface TransportErrors<E> {
  /** the connection failed, or the body was cut short */
  readonly network: (reason: string) => E
  readonly timeout: () => E
}

/** The platform client, without a tracing span per request: nothing here exports traces, and the
 * span bookkeeping measured ~40% of the client's per-request CPU (bench/RESULTS.md). */
export const untracedHttpClient = Effect.map(HttpClient.HttpClient, (http) => HttpClient.withTracerDisabledWhen(http, () => true))

export const fetchBytes = <E>(http: HttpClient.HttpClient, request: HttpClientRequest.HttpClientRequest, timeoutMs: number, errors: TransportErrors<E>): Effect.Effect<Fetched, E> =>
  Effect.gen(function* () {
    const res = yield* http.execute(request).pipe(Effect.mapError((e) => errors.network(e.message)))
    const bytes = yield* res.arrayBuffer.pipe(Effect.mapError((e) => errors.network(`body cut short: ${e.message}`)))
    return { status: res.status, headers: res.headers, bytes }
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({ duration: timeoutMs, onTimeout: errors.timeout })
  )
