/**
 * Tagged errors of the router client. JSON error bodies {code, message, details} are read into
 * them; `retryable` drives the shared retry schedule.
 */
import { Data } from "effect"
import { bodyExcerpt } from "../http/body.js"

/** No route between the assets: a 200 without operations, or 404/code 5 or code 12 on /route. */
export class NoRouteError extends Data.TaggedError("NoRouteError")<{ readonly message: string; readonly status: number }> {
  readonly retryable = false
}

/** The route is unsafe and allow_unsafe is false: price impact or USD loss too high (BAD_PRICE_ERROR, HIGH_LOSS_ERROR). */
export class BadPriceError extends Data.TaggedError("BadPriceError")<{ readonly message: string; readonly reason: string }> {
  readonly retryable = false
}

/** The router cannot judge the route's safety (LOW_INFO_ERROR), e.g. an unpriced asset. */
export class LowInfoError extends Data.TaggedError("LowInfoError")<{ readonly message: string }> {
  readonly retryable = false
}

/** Any other non-2xx answer, with the gRPC code and message of its JSON body when there is one. */
export class RouterHttpError extends Data.TaggedError("RouterHttpError")<{
  readonly status: number
  readonly url: string
  readonly code?: number
  readonly body: string
  readonly retryAfterMs?: number
}> {
  get retryable() {
    return this.status === 429 || this.status >= 500
  }
  override get message() {
    return `router answered ${this.status}${this.code !== undefined ? ` (code ${this.code})` : ""} for ${this.url}: ${bodyExcerpt(this.body)}`
  }
}

export class RouterTimeout extends Data.TaggedError("RouterTimeout")<{ readonly url: string; readonly timeoutMs: number }> {
  readonly retryable = true
  override get message() {
    return `router did not answer ${this.url} within ${this.timeoutMs} ms`
  }
}

export class RouterNetworkError extends Data.TaggedError("RouterNetworkError")<{ readonly url: string; readonly reason: string }> {
  readonly retryable = true
  override get message() {
    return `could not read ${this.url}: ${this.reason}`
  }
}

/** A 200 whose body breaks the schema: names the endpoint and field path. A cut-short body is retried. */
export class RouterDecodeError extends Data.TaggedError("RouterDecodeError")<{
  readonly endpoint: string
  readonly path: string
  readonly message: string
  readonly truncated: boolean
}> {
  get retryable() {
    return this.truncated
  }
  override toString() {
    return `malformed response from ${this.endpoint} at ${this.path || "(root)"}: ${this.message}`
  }
}

/** A bridging-flow rule the caller broke (missing address, missing signed op-hook, tracking twice). */
export class RouterFlowError extends Data.TaggedError("RouterFlowError")<{ readonly rule: string; readonly message: string }> {
  readonly retryable = false
}

export type RouterError =
  | NoRouteError
  | BadPriceError
  | LowInfoError
  | RouterHttpError
  | RouterTimeout
  | RouterNetworkError
  | RouterDecodeError
  | RouterFlowError

export const describeRouterError = (e: RouterError): string => (e._tag === "RouterDecodeError" ? e.toString() : e.message)
