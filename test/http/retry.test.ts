/**
 * The IndexerClient's retry policy and the RequestLimiter, counted where they show: at a hostile
 * server in front of the devnet. Proves that a 4xx or a record that breaks the schema is asked
 * for exactly once; that 5xx, 429, a body that is not JSON and a dropped connection are asked
 * for again, at most maxRetries + 1 times in all; that Retry-After (delta-seconds and HTTP-date)
 * is waited for; and that `rps` and `concurrency` hold as the server counts them. Every time
 * bound is a lower bound, so a slow machine cannot fail these tests.
 */
import { Effect, Either, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { blocksList } from "../../src/datasets/lists.js"
import { layerRequestLimiter, type LimiterConfig, makeRequestLimiter } from "../../src/http/RequestLimiter.js"
import { DEFAULT_RETRY, type RetryPolicy } from "../../src/http/retry.js"
import { layerHttpTransport } from "../../src/http/transport.js"
import { IndexerDecodeError, type IndexerError } from "../../src/indexer/errors.js"
import { IndexerClient, layerIndexerClient } from "../../src/indexer/IndexerClient.js"
import { makeIndexerSource } from "../../src/drivers/indexer.js"
import { json, proxiedDevnet, RESET, sleep, startServer, text, type Handler } from "../support/hostile.js"

// short backoff so that a file of retries runs in seconds; the cap is the default one, so that a
// Retry-After is honoured as in production (it is capped at 6 × maxDelayMs)
const FAST_RETRY: RetryPolicy = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: DEFAULT_RETRY.maxDelayMs, timeoutMs: 2_000, maxRetries: 4 }
const NO_RATE_LIMIT: LimiterConfig = { concurrency: 8, rps: 0 }

/** Runs `program` with a real client of `url`; the failure, if any, comes back as a value. */
const run = <A, E = IndexerError>(url: string, program: Effect.Effect<A, E, IndexerClient>, limits = NO_RATE_LIMIT) =>
  Effect.runPromise(
    Effect.either(program).pipe(
      Effect.provide(
        layerIndexerClient({ baseUrl: url, retry: FAST_RETRY }).pipe(
          Layer.provide(Layer.mergeAll(layerHttpTransport(), layerRequestLimiter(limits)))
        )
      )
    )
  )
const failureOf = <A, E>(result: Either.Either<A, E>): E => {
  if (Either.isRight(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}
const rightOf = <A, E>(result: Either.Either<A, E>): A => {
  if (Either.isLeft(result)) throw new Error(`expected success, got ${String(result.left)}`)
  return result.right
}

const { proxy, track } = proxiedDevnet({ seed: 31, blocks: 40 }, () => {})

const passThrough: Handler = (_, forward) => forward()
const firstBlocks = Effect.flatMap(IndexerClient, (c) => c.blocks({ limit: 5, reverse: false }))
const heightsOf = (r: { blocks: ReadonlyArray<{ height: string }> }) => r.blocks.map((b) => b.height)

describe("retry policy: what is not retried", () => {
  it("a 404 and a 400 are asked for once, and fail with IndexerHttpError and the plain-text body", async () => {
    const server = await proxy(passThrough)
    const notFound = failureOf(
      await run(
        server.url,
        Effect.flatMap(IndexerClient, (c) => c.block(99_999))
      )
    )
    expect(notFound).toMatchObject({ _tag: "IndexerHttpError", status: 404, body: "[NOT_FOUND] block not found" })
    expect(server.requests.length).toBe(1)
    // a key that is not base64: the devnet answers 400 as the real indexer does
    const badRequest = failureOf(
      await run(
        server.url,
        Effect.flatMap(IndexerClient, (c) => c.blocks({ key: "%%%", limit: 5 }))
      )
    )
    expect(badRequest).toMatchObject({
      _tag: "IndexerHttpError",
      status: 400,
      body: "pagination.key must be a valid base64 encoded string"
    })
    expect(server.requests.length).toBe(2)
  })

  it("a 200 page whose record breaks the schema is asked for once: IndexerDecodeError", async () => {
    const server = await proxy(async (_, forward) => {
      const res = await forward()
      const page = JSON.parse(res.body)
      page.blocks[1].chain_id = 12345
      return json(page)
    })
    const err = failureOf(await run(server.url, firstBlocks))
    expect(err).toBeInstanceOf(IndexerDecodeError)
    expect(err).toMatchObject({ endpoint: "blocks", path: "blocks[1].chain_id" })
    expect(server.requests.length).toBe(1)
  })

  it("on the export's path, where the page is decoded inside the retried attempt, a bad page is asked for once too", async () => {
    const server = await proxy(() => json({ blocks: "not a list", pagination: { previous_key: null, next_key: null, total: "40" } }))
    // what runExport does per page: the indexer source parses inside the retried step
    const hotPath = Effect.flatMap(IndexerClient, (c) => makeIndexerSource(c).page(blocksList, { limit: 5, reverse: false }))
    const err = failureOf(await run(server.url, hotPath))
    expect(err).toMatchObject({ _tag: "IndexerDecodeError", path: "blocks" })
    expect(server.requests.length).toBe(1)
  })
})

describe("retry policy: what is retried", () => {
  it("503 twice, then the page: exactly three requests, and the page", async () => {
    const server = await proxy((req, forward) => (req.index < 2 ? text(503, "Service Unavailable") : forward()))
    const page = rightOf(await run(server.url, firstBlocks))
    expect(heightsOf(page)).toEqual(["1", "2", "3", "4", "5"])
    expect(server.requests.length).toBe(3)
  })

  it("503 every time: exactly maxRetries + 1 requests, then the 503", async () => {
    const server = await proxy(() => text(503, "Service Unavailable"))
    const err = failureOf(await run(server.url, firstBlocks))
    expect(err).toMatchObject({ _tag: "IndexerHttpError", status: 503, body: "Service Unavailable" })
    expect(server.requests.length).toBe(FAST_RETRY.maxRetries + 1)
  })

  it("a 200 whose body is not JSON (cut short, length and all) is asked for again", async () => {
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      return req.index === 0 ? { ...res, body: res.body.slice(0, res.body.length >> 1) } : res
    })
    const page = rightOf(await run(server.url, firstBlocks))
    expect(heightsOf(page)).toEqual(["1", "2", "3", "4", "5"])
    expect(server.requests.length).toBe(2)
  })

  it("a 200 that is an HTML page (a wrong URL, a login page) is asked for once: IndexerDecodeError saying so", async () => {
    const server = await proxy(() => ({
      status: 200,
      headers: { "content-type": "text/html; charset=utf-8" },
      body: "<!doctype html><title>Sign in</title>"
    }))
    const err = failureOf(await run(server.url, firstBlocks))
    expect(err._tag).toBe("IndexerDecodeError")
    expect(err.message).toBe(
      `${server.url}/indexer/block/v1/blocks?pagination.limit=5&pagination.reverse=false answered 200 with an HTML page, not JSON: is this the indexer's URL (or is a login or gateway page in front of it)?`
    )
    expect(server.requests.length).toBe(1)
  })

  it("a connection dropped before the answer, or in the middle of the body, is asked for again", async () => {
    const server = await proxy(async (req, forward) => {
      if (req.index === 0) return RESET
      const res = await forward()
      return req.index === 1 ? { ...res, cutAfterBytes: 100 } : res
    })
    const page = rightOf(await run(server.url, firstBlocks))
    expect(heightsOf(page)).toEqual(["1", "2", "3", "4", "5"])
    expect(server.requests.length).toBe(3)
  })

  it("429 with Retry-After: 1 — the second request arrives a second after the first, not a backoff later", async () => {
    const server = await proxy((req, forward) => (req.index === 0 ? text(429, "Too Many Requests", { "retry-after": "1" }) : forward()))
    rightOf(await run(server.url, firstBlocks))
    expect(server.requests.length).toBe(2)
    // without Retry-After the first backoff is at most baseDelayMs (5 ms)
    expect(server.requests[1].at - server.requests[0].at).toBeGreaterThanOrEqual(950)
  })

  it("429 with Retry-After as an HTTP-date is honoured too", async () => {
    // whole seconds only: two seconds ahead is at least one second after this moment
    const server = await proxy((req, forward) =>
      req.index === 0 ? text(429, "Too Many Requests", { "retry-after": new Date(Date.now() + 2_000).toUTCString() }) : forward()
    )
    rightOf(await run(server.url, firstBlocks))
    expect(server.requests.length).toBe(2)
    expect(server.requests[1].at - server.requests[0].at).toBeGreaterThanOrEqual(950)
  })
})

describe("RequestLimiter, measured at the server", () => {
  it("rps and concurrency hold for 120 requests of one client", async () => {
    const rps = 40
    const concurrency = 4
    const n = 120
    const status = { version: "v1", commit_hash: "c0ffee", chain_id: "hostile-1", height: 7 }
    // each answer is held longer than the limiter spaces starts (25 ms), so that requests overlap
    const server = track(
      await startServer(async () => {
        await sleep(60)
        return json(status)
      })
    )
    const statuses = rightOf(
      await run(
        server.url,
        Effect.gen(function* () {
          const c = yield* IndexerClient
          // one request first, so that the measured ones do not carry a cold start (JIT, first connection)
          yield* c.status
          // more fibers than permits: the limiter, not the caller, decides
          return yield* Effect.forEach(Array.from({ length: n }), () => c.status, { concurrency: 4 * concurrency })
        }),
        { concurrency, rps }
      )
    )
    expect(statuses.length).toBe(n)
    expect(server.requests.length).toBe(n + 1)
    expect(server.peakInFlight()).toBeLessThanOrEqual(concurrency)
    expect(server.peakInFlight()).toBeGreaterThan(1)

    /*
     * The limiter hands out start slots 1000/rps apart and banks none while idle: the k-th request
     * after request i starts no sooner than k·1000/rps ms after it, so no second holds more than
     * rps starts (it allowed a second's burst: 2·rps + 1 in the first second). The tolerance covers
     * what the server cannot see apart: loopback transit, and timers that fire early by up to one
     * busy event-loop turn (Node times them from the loop's cached clock).
     */
    const spacingMs = 1000 / rps
    const toleranceMs = 250
    // the bound holds between any two requests of the limiter; the warm-up one is left out
    const at = server.requests.slice(1).map((r) => r.at)
    let worst = { i: 0, k: 0, shortBy: -Infinity }
    for (let i = 0; i < n; i++)
      for (let k = 1; i + k < n; k++) {
        const shortBy = k * spacingMs - (at[i + k] - at[i])
        if (shortBy > worst.shortBy) worst = { i, k, shortBy }
      }
    expect(worst.shortBy, `request ${worst.i} + ${worst.k} came ${worst.shortBy.toFixed(1)} ms too soon`).toBeLessThanOrEqual(toleranceMs)
    // no window of one second holds more than rps starts (and one at its edge)
    const most = Math.max(...at.map((t) => at.filter((u) => u >= t && u < t + 1000 - toleranceMs).length))
    expect(most).toBeLessThanOrEqual(rps)
    // the same bound over the whole run: n requests 1000/rps apart
    expect(at[n - 1] - at[0]).toBeGreaterThanOrEqual((n - 1) * spacingMs - toleranceMs)
  })

  it("after the event loop was held up 1.5 s, the slots that fell due meanwhile start no more than rps in any second (they went all at once)", async () => {
    const rps = 10
    const limiter = Effect.runSync(makeRequestLimiter({ concurrency: 4, rps }))
    const starts: Array<number> = []
    // once the first requests have started, the thread is busy 1.5 s (a long page's rows, a GC)
    setTimeout(() => {
      const until = Date.now() + 1_500
      while (Date.now() < until);
    }, 250)
    await Effect.runPromise(
      Effect.forEach(Array.from({ length: 30 }), () => limiter.run(Effect.sync(() => starts.push(Date.now()))), { concurrency: 8 })
    )
    // (a window 10 ms short of a second: a start is recorded a moment after the limiter lets it go)
    const most = Math.max(...starts.map((t) => starts.filter((u) => u >= t && u < t + 990).length))
    expect(most).toBeLessThanOrEqual(rps)
  })
})
