/**
 * The router's endpoints, and how one is asked: the one place a path of the router is written
 * (outside the devnet, which serves them). Every request goes through the shared RequestLimiter,
 * with the client's timeout; JSON error bodies are read into tagged errors, 2xx bodies decoded
 * with the endpoint's schema, under the same retry schedule as the indexer client.
 */
import { Either, Effect, Schema } from "effect"
import { decodeBody, isHtmlPage, notJson } from "../http/body.js"
import { fetchBytes, type Fetched, type HttpRequest, type HttpTransportService } from "../http/transport.js"
import type { RequestLimiterService } from "../http/RequestLimiter.js"
import { parseRetryAfter, retrySchedule, type RetryPolicy } from "../http/retry.js"
import type { RetriesService } from "../http/Retries.js"
import { decodeWithPath } from "../schema/decode.js"
import {
  BadPriceError,
  LowInfoError,
  NoRouteError,
  RouterDecodeError,
  RouterHttpError,
  RouterNetworkError,
  RouterTimeout,
  type RouterError
} from "./errors.js"
import * as R from "./schemas.js"

/** What the devnet's broadcast answers: the tx hash to track. */
const DevnetBroadcastResponse = Schema.Struct({ tx_hash: Schema.String, chain_id: Schema.String })

/**
 * Every endpoint of the router the client calls, by the name its errors give: the method, the path,
 * and the schema of a 2xx answer.
 */
export const ROUTER_ENDPOINTS = {
  route: { method: "POST", path: "/v2/fungible/route", schema: R.RouteResponse },
  "op-hook": { method: "POST", path: "/op-hook", schema: R.OpHookResponse },
  msgs: { method: "POST", path: "/v2/fungible/msgs", schema: R.MsgsResponse },
  track: { method: "POST", path: "/v2/tx/track", schema: R.TrackResponse },
  status: { method: "GET", path: "/v2/tx/status", schema: R.TxStatusResponse },
  assets: { method: "GET", path: "/v2/fungible/assets", schema: R.AssetsResponse },
  chains: { method: "GET", path: "/v2/info/chains", schema: R.ChainsResponse },
  /** devnet only: turns a msgs tx into a trackable tx hash (a real router never broadcasts) */
  "devnet/broadcast": { method: "POST", path: "/devnet/broadcast", schema: DevnetBroadcastResponse }
} as const

export type RouterEndpoint = keyof typeof ROUTER_ENDPOINTS
/** The decoded 2xx answer of `E`. */
export type AnswerOf<E extends RouterEndpoint> = (typeof ROUTER_ENDPOINTS)[E]["schema"]["Type"]

/** What a request of an endpoint carries: a JSON body (POST) or query parameters (GET). */
export type RequestInput = { readonly json: unknown } | { readonly query?: Readonly<Record<string, string>> }

const isSuccess = (status: number) => status >= 200 && status < 300

/**
 * A non-2xx answer as the tagged error it means: the reason of a JSON error body ({code, message,
 * details}), a route's "no route" answers, else a RouterHttpError with the body's code and message.
 */
const answerError = (endpoint: RouterEndpoint, url: string, res: Fetched, json: unknown, text: string): RouterError => {
  const body = Schema.decodeUnknownOption(R.RouterErrorBody)(json)
  const code = body._tag === "Some" ? body.value.code : undefined
  const message = body._tag === "Some" ? body.value.message : text
  const reason = body._tag === "Some" ? body.value.details?.find((d) => d.reason)?.reason : undefined
  if (reason === "BAD_PRICE_ERROR" || reason === "HIGH_LOSS_ERROR") return new BadPriceError({ message, reason })
  if (reason === "LOW_INFO_ERROR") return new LowInfoError({ message })
  // no route: code 12 or a 404 about routes (Skip); on Initia any route 400 without a reason (its wallet kit reads it so), with the body's optional `info`
  const info = body._tag === "Some" ? body.value.info : undefined
  if (
    endpoint === "route" &&
    (code === 12 ||
      (res.status === 404 && code === 5 && /route/i.test(message)) ||
      (res.status === 400 && body._tag === "Some" && reason === undefined && !/\binvalid\b|\brequired\b/i.test(message)))
  )
    return new NoRouteError({ message: info ? `${message} (${info})` : message, status: res.status })
  return new RouterHttpError({ status: res.status, url, code, body: message, retryAfterMs: parseRetryAfter(res.headers["retry-after"]) })
}

/** One request: parsed JSON on 2xx; JSON error bodies become tagged errors. */
const requestOnce = (
  http: HttpTransportService,
  timeoutMs: number,
  endpoint: RouterEndpoint,
  request: HttpRequest
): Effect.Effect<unknown, RouterError> => {
  const url = request.url
  const transport = fetchBytes(http, request, timeoutMs, {
    network: (reason): RouterError => new RouterNetworkError({ url, reason }),
    tooLarge: (reason): RouterError =>
      new RouterDecodeError({ endpoint, path: "", message: `the answer of ${url} is ${reason}`, truncated: false }),
    timeout: (): RouterError => new RouterTimeout({ url, timeoutMs })
  })
  return Effect.gen(function* () {
    const res = yield* transport
    // a web page where JSON was expected (a wrong URL, a login or gateway page) is not a cut body: asking again cannot help
    if (isSuccess(res.status) && isHtmlPage(res.bytes, res.headers["content-type"] ?? ""))
      return yield* new RouterDecodeError({
        endpoint,
        path: "",
        message: `${url} answered ${res.status} with an HTML page, not JSON: is this the router's URL (or is a login or gateway page in front of it)?`,
        truncated: false
      })
    const text = decodeBody(res.bytes)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      if (isSuccess(res.status)) return yield* new RouterDecodeError({ endpoint, path: "", message: notJson(res.bytes), truncated: true })
    }
    if (isSuccess(res.status)) return json
    return yield* answerError(endpoint, url, res, json, text)
  })
}

/** `json` decoded with the schema of `endpoint`, or a RouterDecodeError naming `endpoint` and the field path. */
export const decodeAnswer = <E extends RouterEndpoint>(endpoint: E, json: unknown): Either.Either<AnswerOf<E>, RouterDecodeError> =>
  Either.mapLeft(
    decodeWithPath(ROUTER_ENDPOINTS[endpoint].schema as Schema.Schema<AnswerOf<E>, unknown>, json),
    (issue) => new RouterDecodeError({ endpoint, path: issue.path, message: issue.message, truncated: false })
  )

export interface RouterRequestsConfig {
  readonly http: HttpTransportService
  readonly limiter: RequestLimiterService
  readonly policy: RetryPolicy
  /** the router's base URL, without a trailing slash */
  readonly baseUrl: string
  /** where the requests asked again are counted, if anywhere */
  readonly retries?: RetriesService
}

/**
 * How the client asks the router's endpoints: `json` is an endpoint's answer as parsed JSON (one
 * request under the limiter, retried by the policy unless `retry` is false); `call` is that answer
 * decoded with the endpoint's schema.
 */
export const routerRequests = ({ http, limiter, policy, baseUrl, retries }: RouterRequestsConfig) => {
  const requestOf = (endpoint: RouterEndpoint, input: RequestInput): HttpRequest => {
    const { method, path } = ROUTER_ENDPOINTS[endpoint]
    if ("json" in input) return { method, url: baseUrl + path, json: input.json }
    return { method, url: input.query ? `${baseUrl}${path}?${new URLSearchParams(input.query)}` : baseUrl + path }
  }
  const json = (endpoint: RouterEndpoint, input: RequestInput, retry = true): Effect.Effect<unknown, RouterError> => {
    const once = limiter.run(requestOnce(http, policy.timeoutMs, endpoint, requestOf(endpoint, input)))
    return retry ? once.pipe(Effect.retry(retrySchedule<RouterError>(policy, retries?.retried))) : once
  }
  const call = <E extends RouterEndpoint>(endpoint: E, input: RequestInput, retry = true): Effect.Effect<AnswerOf<E>, RouterError> =>
    json(endpoint, input, retry).pipe(Effect.flatMap((answer) => decodeAnswer(endpoint, answer)))
  return { json, call }
}

export type RouterRequests = ReturnType<typeof routerRequests>
