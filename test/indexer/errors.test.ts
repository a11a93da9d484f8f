/**
 * The indexer client's errors: which ones the retry schedule may retry (transient ones only), the
 * one line each gives a user, and Retry-After parsing. A 4xx or a malformed page retried, or a
 * 5xx given up on at once, would each change what an export does under faults.
 */
import { describe, expect, it } from "vitest"
import { parseRetryAfter } from "../../src/http/retry.js"
import { notJson } from "../../src/http/body.js"
import {
  describeIndexerError,
  IndexerDecodeError,
  IndexerHttpError,
  IndexerNetworkError,
  IndexerPagingError,
  IndexerTimeout,
  IndexerTruncatedBody
} from "../../src/indexer/errors.js"
import { RouterHttpError } from "../../src/router/errors.js"

const url = "http://127.0.0.1:1/indexer/tx/v1/txs"

describe("indexer errors", () => {
  it("only 429 and 5xx answers, timeouts, network failures and cut bodies are retryable", () => {
    const http = (status: number) => new IndexerHttpError({ status, body: "x", url }).retryable
    expect([429, 500, 502, 503, 504, 599].map(http)).toEqual([true, true, true, true, true, true])
    expect([400, 401, 403, 404, 409, 499, 200].map(http)).toEqual([false, false, false, false, false, false, false])
    expect(new IndexerTimeout({ url, timeoutMs: 5 }).retryable).toBe(true)
    expect(new IndexerNetworkError({ url, reason: "reset" }).retryable).toBe(true)
    expect(new IndexerTruncatedBody({ url, what: "not valid JSON" }).retryable).toBe(true)
    expect(new IndexerDecodeError({ endpoint: "txs", key: null, path: "txs[0]", message: "bad" }).retryable).toBe(false)
    expect(new IndexerPagingError({ endpoint: "txs", key: null, message: "bad" }).retryable).toBe(false)
  })

  it("each says in one line what failed and where", () => {
    expect(describeIndexerError(new IndexerHttpError({ status: 404, body: "[NOT_FOUND] block not found", url }))).toBe(
      `indexer answered 404 for ${url}: [NOT_FOUND] block not found`
    )
    expect(new IndexerHttpError({ status: 500, body: "y".repeat(400), url }).message).toBe(
      `indexer answered 500 for ${url}: ${"y".repeat(300)}…`
    )
    // a server's stack trace (or an HTML page) stays on the one line
    expect(
      new IndexerHttpError({ status: 500, body: "TypeError: x is undefined\n    at handler (server.js:4:2)\r\n\tat run\n", url }).message
    ).toBe(`indexer answered 500 for ${url}: TypeError: x is undefined at handler (server.js:4:2) at run`)
    // an excerpt never ends between the halves of an emoji
    expect(new IndexerHttpError({ status: 500, body: "y".repeat(299) + "🚀".repeat(5), url }).message).toBe(
      `indexer answered 500 for ${url}: ${"y".repeat(299)}…`
    )
    expect(new RouterHttpError({ status: 502, body: "<html>\n<body>Bad gateway</body>\n</html>", url }).message).toBe(
      `router answered 502 for ${url}: <html> <body>Bad gateway</body> </html>`
    )
    expect(describeIndexerError(new IndexerTimeout({ url, timeoutMs: 1500 }))).toBe(`indexer did not answer ${url} within 1500 ms`)
    expect(describeIndexerError(new IndexerNetworkError({ url, reason: "connect ECONNREFUSED 127.0.0.1:1" }))).toBe(
      `could not read ${url}: connect ECONNREFUSED 127.0.0.1:1`
    )
    const bytes = (text: string) => new TextEncoder().encode(text).buffer as ArrayBuffer
    expect(describeIndexerError(new IndexerTruncatedBody({ url, what: notJson(bytes('{"blocks": [')) }))).toBe(
      `the response of ${url} is not valid JSON (12 bytes; cut short?)`
    )
    // a proxy's or gateway's page (a login, a maintenance notice) is called what it is
    expect(describeIndexerError(new IndexerTruncatedBody({ url, what: notJson(bytes("\n <!DOCTYPE html><p>Sign in</p>")) }))).toBe(
      `the response of ${url} is an HTML page, not JSON (31 bytes; a proxy or gateway answering?)`
    )
    expect(
      describeIndexerError(
        new IndexerDecodeError({ endpoint: "txs", key: "a2V5", path: "txs[3].height", message: "Expected string, actual 3" })
      )
    ).toBe("malformed response from txs (page key a2V5) at txs[3].height: Expected string, actual 3")
    expect(describeIndexerError(new IndexerDecodeError({ endpoint: "txs", key: null, path: "", message: "not an object" }))).toBe(
      "malformed response from txs at (root): not an object"
    )
    expect(
      describeIndexerError(new IndexerPagingError({ endpoint: "blocks", key: null, message: "height 1 is outside the shard 61..120" }))
    ).toBe("pagination of blocks cannot be trusted: height 1 is outside the shard 61..120")
  })

  it("Retry-After: whole seconds (spaces allowed) or an HTTP-date; anything else is no wait", () => {
    expect(parseRetryAfter("3")).toBe(3000)
    expect(parseRetryAfter(" 12 ")).toBe(12_000)
    expect(parseRetryAfter("0")).toBe(0)
    const now = Date.parse("2026-11-22T10:00:00Z")
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:00:05 GMT", now)).toBe(5000)
    // a date in the past is no wait, not a negative one
    expect(parseRetryAfter("Sun, 22 Nov 2026 09:59:00 GMT", now)).toBe(0)
    for (const bad of ["soon", "", undefined, null]) expect(parseRetryAfter(bad, now), String(bad)).toBeUndefined()
    // not whole seconds: read as a date or nothing, never as seconds
    expect(parseRetryAfter("1.5", now)).not.toBe(1500)
    expect(parseRetryAfter("3 seconds", now)).not.toBe(3000)
    expect(parseRetryAfter("x3", now)).toBeUndefined()
  })
})
