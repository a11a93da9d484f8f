/**
 * Tagged errors of the indexer client. Each says what failed and where, in one line, and whether
 * a retry may help (`retryable`), which the shared retry schedule reads.
 */
import { Data } from "effect"
import { bodyExcerpt } from "../http/body.js"

/** A non-2xx answer. The body is plain text on the real indexer (never JSON-parsed). */
export class IndexerHttpError extends Data.TaggedError("IndexerHttpError")<{
  readonly status: number
  readonly body: string
  readonly url: string
  readonly retryAfterMs?: number
}> {
  get retryable() {
    return this.status === 429 || this.status >= 500
  }
  override get message() {
    const said = this.body.trim() ? `: ${bodyExcerpt(this.body)}` : ""
    // undici follows no redirect (credentials would go with it to another host)
    const redirect =
      this.status >= 300 && this.status < 400
        ? " (a redirect, which chain-lake does not follow: give --indexer-url the address it points to)"
        : ""
    return `indexer answered ${this.status} for ${this.url}${redirect}${said}`
  }
}

/** No answer in time (the per-request timeout). */
export class IndexerTimeout extends Data.TaggedError("IndexerTimeout")<{ readonly url: string; readonly timeoutMs: number }> {
  readonly retryable = true
  override get message() {
    return `indexer did not answer ${this.url} within ${this.timeoutMs} ms`
  }
}

/** Connection refused or reset, DNS failure, or a body cut short. */
export class IndexerNetworkError extends Data.TaggedError("IndexerNetworkError")<{ readonly url: string; readonly reason: string }> {
  readonly retryable = true
  override get message() {
    return `could not read ${this.url}: ${this.reason}`
  }
}

/** A 200 whose body is not JSON (`what` it is, http/body.ts `notJson`): usually cut short in transit, so it is retried. */
export class IndexerTruncatedBody extends Data.TaggedError("IndexerTruncatedBody")<{ readonly url: string; readonly what: string }> {
  readonly retryable = true
  override get message() {
    return `the response of ${this.url} is ${this.what}`
  }
}

/** An answer larger than the run reads (--max-page-mb): not transient, asking again gets the same. Never retried. */
export class IndexerAnswerTooLarge extends Data.TaggedError("IndexerAnswerTooLarge")<{ readonly url: string; readonly reason: string }> {
  readonly retryable = false
  override get message() {
    return `the answer of ${this.url} is ${this.reason}: lower --page-size, or raise --max-page-mb if such pages are expected`
  }
}

/** " (page key K)" where a page was asked by a key; nothing for a list's first page or a probe. */
const pageKey = (key: string | null) => (key === null ? "" : ` (page key ${key})`)

/** A response that breaks the schema: names endpoint, page key and field path. Never retried. */
export class IndexerDecodeError extends Data.TaggedError("IndexerDecodeError")<{
  readonly endpoint: string
  readonly key: string | null
  readonly path: string
  readonly message: string
}> {
  readonly retryable = false
  override toString() {
    return `malformed response from ${this.endpoint}${pageKey(this.key)} at ${this.path || "(root)"}: ${this.message}`
  }
}

/** Pagination that cannot be trusted: a repeated key (the real server silently restarts on a wrong-type key), or rows that do not add up. */
export class IndexerPagingError extends Data.TaggedError("IndexerPagingError")<{
  readonly endpoint: string
  readonly key: string | null
  readonly message: string
}> {
  readonly retryable = false
  override toString() {
    return `pagination of ${this.endpoint} cannot be trusted${pageKey(this.key)}: ${this.message}`
  }
}

/** A request the indexer cannot be asked as it reads requests (a path parameter it would not match). Never sent, never retried. */
export class IndexerRequestError extends Data.TaggedError("IndexerRequestError")<{ readonly message: string }> {
  readonly retryable = false
}

/** An indexer older than what chain-lake reads (its /status.version): said at once, not as the paging it would fail on. */
export class IndexerVersionError extends Data.TaggedError("IndexerVersionError")<{ readonly message: string }> {
  readonly retryable = false
}

export type IndexerError =
  | IndexerHttpError
  | IndexerTimeout
  | IndexerNetworkError
  | IndexerTruncatedBody
  | IndexerAnswerTooLarge
  | IndexerDecodeError
  | IndexerPagingError
  | IndexerRequestError
  | IndexerVersionError

/** One line for a user: what went wrong and where. */
export const describeIndexerError = (e: IndexerError): string =>
  e._tag === "IndexerDecodeError" || e._tag === "IndexerPagingError" ? e.toString() : e.message
