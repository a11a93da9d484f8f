/**
 * The cosmos tx hashes of blocks (src/drivers/indexer/cosmosTxHashes.ts, txWalk.ts) through the
 * indexer driver, over loopback HTTP to a small Rollytics-shaped txs list (sequence cursors, a
 * `next_key` on every page with rows, by_height with its count) whose blocks hold as many txs as a
 * test says: every block's hashes as the chain holds them, whatever the shape (empty blocks, blocks
 * of 250 txs split across pages, pages asked in any order and at once); and what it costs: a
 * shard's next page of receipts no search, a sparse chain not more than a request a block; and no
 * page asks more rows than the run's page size.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { indexerLayer } from "../../src/cli/layers.js"
import { layerIndexerSource } from "../../src/drivers/indexer.js"
import { makePageBudget, PageBudget, type PageBudgetService } from "../../src/engine/pageBudget.js"
import { Source } from "../../src/engine/Source.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { sequenceCursor, sequenceOf } from "../../src/indexer/cursors.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 20, timeoutMs: 2_000, maxRetries: 2 }

/** tx `i` of block `h`'s hash, as Rollytics spells one (64 uppercase hex digits) */
const hashOf = (h: number, i: number) => (h.toString(16).padStart(8, "0") + i.toString(16).padStart(8, "0")).padEnd(64, "A").toUpperCase()

/** What each kind of request asked: by_height, the newest tx, a single-row probe, a page of the walk. */
type Asked = "by_height" | "newest" | "probe" | "page"

/** A txs list of blocks 1..top, block h holding `txsAt(h)` txs (a memo of `memoOf(h)` characters each), and the requests it answered. */
const startList = async (txsAt: (h: number) => number, top: number, memoOf: (h: number) => number = () => 0) => {
  const txs: Array<{ height: string; txhash: string; memo?: string }> = []
  const firstOf = new Map<number, number>()
  for (let h = 1; h <= top; h++)
    for (let i = 0; i < txsAt(h); i++) {
      if (i === 0) firstOf.set(h, txs.length)
      txs.push({ height: String(h), txhash: hashOf(h, i), ...(memoOf(h) > 0 ? { memo: "m".repeat(memoOf(h)) } : {}) })
    }
  const asked: Array<Asked> = []
  /** the limit each request asked */
  const limits: Array<number> = []
  /** rows from sequence `after` on (sequence = position + 1), as a page with Rollytics' next_key */
  const pageOf = (rows: ReadonlyArray<{ row: object; sequence: number }>, total: number) => ({
    txs: rows.map((r) => r.row),
    pagination: { previous_key: null, next_key: rows.length > 0 ? sequenceCursor(rows.at(-1)!.sequence) : null, total: String(total) }
  })
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url!, "http://x")
    const limit = Number(url.searchParams.get("pagination.limit") ?? 100)
    limits.push(limit)
    const after = sequenceOf(url.searchParams.get("pagination.key")) ?? 0
    const byHeight = /^\/indexer\/tx\/v1\/txs\/by_height\/(\d+)$/.exec(url.pathname)
    let body: object
    if (byHeight) {
      asked.push("by_height")
      const h = Number(byHeight[1])
      const start = firstOf.get(h) ?? 0
      const rows = txs.slice(start, start + txsAt(h)).map((row, i) => ({ row, sequence: start + i + 1 }))
      body = pageOf(rows.filter((r) => r.sequence > after).slice(0, limit), rows.length)
    } else if (url.searchParams.get("pagination.reverse") === "true" && !url.searchParams.has("pagination.key")) {
      asked.push("newest")
      body = pageOf(
        txs
          .slice(-limit)
          .reverse()
          .map((row, i) => ({ row, sequence: txs.length - i })),
        txs.length
      )
    } else {
      asked.push(limit === 1 ? "probe" : "page")
      body = pageOf(
        txs.slice(after, after + limit).map((row, i) => ({ row, sequence: after + i + 1 })),
        txs.length
      )
    }
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  lists.push(server)
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked, limits }
}
const lists: Array<Server> = []
afterEach(async () => {
  await Promise.all(lists.splice(0).map((s) => new Promise((resolve) => s.close(resolve))))
})

/**
 * `use` given the driver's cosmosTxHashes over `url` in pages of `pageSize`, in `budget` where
 * given (one driver: what it remembers lasts the call).
 */
const withHashes = <A>(
  url: string,
  use: (
    hashesAt: (heights: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, ReadonlyArray<string>>, unknown>
  ) => Effect.Effect<A, unknown>,
  pageSize = 100,
  budget?: PageBudgetService
) =>
  Effect.runPromise(
    Effect.flatMap(Source, (source) => use((heights) => source.cosmosTxHashes(heights, pageSize))).pipe(
      Effect.provide(layerIndexerSource.pipe(Layer.provide(indexerLayer(url, { concurrency: 4, rps: 0 }, FAST_RETRY)))),
      budget ? Effect.provideService(PageBudget, budget) : (e) => e
    )
  )
const tally = (asked: ReadonlyArray<Asked>) => {
  const t: Partial<Record<Asked, number>> = {}
  for (const a of asked) t[a] = (t[a] ?? 0) + 1
  return t
}
const range = (first: number, n: number, step: number) => Array.from({ length: n }, (_, i) => first + i * step)

describe("the cosmos tx hashes of blocks", () => {
  it("are each block's, in block order, whatever the chain's shape and however the pages of receipts ask (in turn or four at once)", async () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const shapes: ReadonlyArray<() => number> = [
      () => Math.floor(random() * 4),
      () => (random() < 0.1 ? Math.floor(random() * 250) : 0),
      () => Math.floor(random() * 30),
      () => (random() < 0.5 ? 0 : 1 + Math.floor(random() * 120))
    ]
    for (let trial = 0; trial < 8; trial++) {
      const sizes = Array.from({ length: 1_501 }, shapes[trial % 4])
      const { url } = await startList((h) => sizes[h], 1_500)
      // pages of receipts: about half of the next stretch's blocks with txs each
      const withTxs = range(1, 1_500, 1).filter((h) => sizes[h] > 0)
      const pages: Array<Array<number>> = []
      for (let at = 0; at < withTxs.length; ) {
        const n = 3 * (2 + Math.floor(random() * 60))
        const page = withTxs.slice(at, at + n).filter(() => random() < 0.5)
        if (page.length > 0) pages.push(page)
        at += n
      }
      const got = await withHashes(url, (hashesAt) => Effect.forEach(pages, hashesAt, { concurrency: trial % 2 === 0 ? 1 : 4 }))
      pages.forEach((page, p) => {
        for (const h of page)
          expect(got[p].get(h), `trial ${trial}, block ${h}`).toEqual(Array.from({ length: sizes[h] }, (_, i) => hashOf(h, i)))
      })
    }
  }, 60_000)

  it("a shard's next page of receipts costs no search: none where it starts right past where the last walk ended, one probe where a few blocks later", async () => {
    const { url, asked } = await startList(() => 3, 50_000)
    const costs = await withHashes(url, (hashesAt) =>
      Effect.forEach([range(1_000, 40, 10), range(1_391, 40, 10), range(1_782, 40, 10), range(2_200, 40, 10)], (page) => {
        const before = asked.length
        return Effect.map(hashesAt(page), () => tally(asked.slice(before)))
      })
    )
    // the first page finds where block 1,000 starts by a search; the next two walk on from the last,
    // the fourth (27 blocks past the last walk's end) after one probe a page on
    expect(costs[0].probe ?? 0).toBeGreaterThan(2)
    expect(costs.slice(1)).toEqual([{ page: expect.any(Number) }, { page: expect.any(Number) }, { probe: 1, page: expect.any(Number) }])
    // 40 blocks of 3 txs, 10 blocks apart: 1,200 txs, 12 pages of 100 (13 where a near start reads one more)
    for (const cost of costs.slice(1)) expect(cost.page).toBeLessThanOrEqual(13)
  })

  it("on a sparse chain (blocks asked 500 apart), by height: the run's walks found fewer than a block a page, so no more than a request a block", async () => {
    const { url, asked } = await startList(() => 10, 100_000)
    const costs = await withHashes(url, (hashesAt) =>
      Effect.forEach([range(1_000, 40, 500), range(21_000, 40, 500), range(41_000, 40, 500), range(61_000, 40, 500)], (page) => {
        const before = asked.length
        return Effect.map(hashesAt(page), () => asked.length - before)
      })
    )
    // (the first pages find out what walking costs here; from then on each block is one request)
    expect(costs.slice(-2)).toEqual([40, 40])
    expect(costs.reduce((a, b) => a + b, 0)).toBeLessThan(4 * 40 * 1.5)
  })

  it("ask no more rows a page than the run's page size: a walk's pages and by_height's, each block's hashes whole all the same", async () => {
    // blocks of 12 txs: by_height reads one in pages of 5; a walk of 30 blocks reads 72 pages of 5
    const { url, asked, limits } = await startList(() => 12, 2_000)
    const pages = [range(500, 30, 1), [900], range(1_200, 30, 2)]
    const got = await withHashes(url, (hashesAt) => Effect.forEach(pages, hashesAt), 5)
    pages.forEach((page, p) => {
      for (const h of page) expect(got[p].get(h)).toEqual(Array.from({ length: 12 }, (_, i) => hashOf(h, i)))
    })
    expect(tally(asked)).toMatchObject({ by_height: expect.any(Number), page: expect.any(Number) })
    expect(Math.max(...limits)).toBe(5)
  })

  it("by_height's pages shrink after large txs and grow back within a block of small ones (no longer held at the first page's size)", async () => {
    // block 1: 10 txs of ~50 kB; block 2: 300 small txs. A page's share of 400 kB at concurrency 4 holds 2 large txs
    const { url, asked, limits } = await startList(
      (h) => (h === 1 ? 10 : h === 2 ? 300 : 1),
      3,
      (h) => (h === 1 ? 50_000 : 0)
    )
    const budget = makePageBudget({ bytes: 400 * 1024, concurrency: 4 })
    const [large, small] = await withHashes(url, (hashesAt) => Effect.forEach([[1], [2]], hashesAt), 100, budget)
    expect(large.get(1)).toEqual(Array.from({ length: 10 }, (_, i) => hashOf(1, i)))
    expect(small.get(2)).toEqual(Array.from({ length: 300 }, (_, i) => hashOf(2, i)))
    const block2 = limits.slice(asked.indexOf("by_height") + 1)
    expect(block2[0]).toBeLessThanOrEqual(2)
    // held at 2 rows a page, block 2 took 150 requests; growing back, ~20
    expect(block2.length).toBeLessThan(40)
    expect(Math.max(...limits)).toBeLessThanOrEqual(100)
  })
})
