/**
 * Pages in flight bounded in bytes (engine/pageBudget.ts): the limit a list's pages ask shrinks
 * with its records' weight, a FIFO gate holds what the pages in flight weigh; and, over real
 * loopback HTTP against a devnet of large records (txPayloadBytes), an export with a small page
 * budget asks smaller pages (the limits the server saw), writes files no larger than a COPY is
 * given (mid-page), and its lake equals the chain model and an export with no budget, row for row.
 */
import { constants, PerformanceObserver } from "node:perf_hooks"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { indexerLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runExport } from "../../src/engine/export.js"
import { makePageBudget, pageBudgetOf } from "../../src/engine/pageBudget.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { layerManifests, scratchFolder } from "../../src/lake/Manifests.js"
import { layerParquetSink } from "../../src/lake/ParquetSink.js"
import { RunMemory, sinkMemory } from "../../src/lake/writer.js"
import { layerIndexerSource } from "../../src/drivers/indexer.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { startProxy } from "../support/hostile.js"
import { committedFiles, dumpLake } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const KB = 1024
const MB = 1024 * KB
const page = (bytes: number, records: number) => ({ bytes, items: Array.from({ length: records }) })

describe("the page budget", () => {
  it("asks the page size until a list's records are weighed, then as many rows as a page's share of the budget holds (1 at least)", () => {
    // a page's share: the budget over min(concurrency, 4)
    const budget = makePageBudget({ bytes: 4 * MB, concurrency: 16 })
    expect(budget.limit("txs", 500)).toBe(500)
    // ordinary txs, ~3 kB: a page of 500 fits in 1 MB
    budget.observe("txs", page(1500 * KB, 500))
    expect(budget.limit("txs", 500)).toBe(341)
    expect(budget.limit("txs", 100)).toBe(100)
    // records that grow are followed at once (the last page's weight, when above the mean)
    budget.observe("txs", page(5 * MB, 100))
    expect(budget.limit("txs", 500)).toBe(20)
    // each list its own: blocks still at the page size
    budget.observe("blocks", page(60 * KB, 100))
    expect(budget.limit("blocks", 100)).toBe(100)
    // a record past a page's share: one at a time
    budget.observe("huge", page(3 * MB, 1))
    expect(budget.limit("huge", 1000)).toBe(1)
    // a page that says nothing of its size, or holds nothing, teaches nothing
    budget.observe("quiet", { items: [1, 2] })
    budget.observe("quiet", page(10 * MB, 0))
    expect(budget.limit("quiet", 700)).toBe(700)
    // concurrency below 4: a page may weigh the budget over the concurrency
    const one = makePageBudget({ bytes: 4 * MB, concurrency: 1 })
    one.observe("txs", page(4 * KB, 1))
    expect(one.limit("txs", 5000)).toBe(1024)
  })

  it("holds what pages in flight are expected to weigh, in the order they came, and never more than the budget (a page past it alone)", async () => {
    const budget = makePageBudget({ bytes: 100 * KB, concurrency: 4 })
    budget.observe("l", page(10 * KB, 1))
    const order: Array<string> = []
    let most = 0
    // a page of `limit` rows of 10 kB, written once `release` is called
    const inFlight = (name: string, limit: number, release: Effect.Effect<void>) =>
      budget.around(
        "l",
        limit,
        Effect.sync(() => {
          order.push(name)
          most = Math.max(most, budget.held())
          return page(limit * 10 * KB, limit)
        }),
        (p) => p,
        () => release
      )
    const gates = Array.from({ length: 4 }, () => Effect.runSync(Effect.makeLatch(false)))
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        // 60 kB, then 60 kB (waits), then 20 kB (waits behind it: FIFO), then 150 kB (the whole budget)
        const a = yield* Effect.fork(inFlight("a", 6, gates[0].await))
        yield* Effect.yieldNow()
        const b = yield* Effect.fork(inFlight("b", 6, gates[1].await))
        yield* Effect.yieldNow()
        const c = yield* Effect.fork(inFlight("c", 2, gates[2].await))
        yield* Effect.yieldNow()
        const d = yield* Effect.fork(inFlight("d", 15, gates[3].await))
        yield* Effect.yieldNow()
        const first = [...order]
        yield* gates[0].open
        yield* Fiber.join(a)
        yield* Effect.yieldNow()
        const second = [...order]
        yield* gates[1].open
        yield* gates[2].open
        yield* Fiber.join(b)
        yield* Fiber.join(c)
        yield* Effect.yieldNow()
        const third = [...order]
        yield* gates[3].open
        yield* Fiber.join(d)
        return { first, second, third, held: budget.held() }
      })
    )
    expect(result).toEqual({ first: ["a"], second: ["a", "b", "c"], third: ["a", "b", "c", "d"], held: 0 })
    expect(most).toBeLessThanOrEqual(100 * KB)
  })

  it("gives back what an interrupted or failed page held", async () => {
    const budget = makePageBudget({ bytes: 100 * KB, concurrency: 1 })
    budget.observe("l", page(50 * KB, 1))
    const exit = await Effect.runPromise(
      Effect.gen(function* () {
        const stuck = yield* Effect.fork(
          budget.around(
            "l",
            1,
            Effect.succeed(page(50 * KB, 1)),
            (p) => p,
            () => Effect.never
          )
        )
        yield* Effect.yieldNow()
        const held = budget.held()
        yield* Fiber.interrupt(stuck)
        const failed = yield* Effect.exit(
          budget.around(
            "l",
            1,
            Effect.fail("no page"),
            (p: ReturnType<typeof page>) => p,
            () => Effect.void
          )
        )
        return { held, after: budget.held(), failed }
      })
    )
    expect(exit.held).toBe(50 * KB)
    expect(exit.after).toBe(0)
    expect(Exit.isFailure(exit.failed)).toBe(true)
  })

  it("hold (a page asked ahead): holds from its fetch until its release (once come, what it weighs where that is less than expected), learns its weight as it comes, and a failed or stopped fetch holds nothing", async () => {
    const budget = makePageBudget({ bytes: 100 * KB, concurrency: 1 })
    budget.observe("l", page(50 * KB, 1))
    const r = await Effect.runPromise(
      Effect.gen(function* () {
        const held = yield* budget.hold("l", 1, Effect.succeed(page(30 * KB, 1)), (p) => p)
        const whileHeld = budget.held()
        // learned on arrival: the next page of one row is expected at the mean of 50 and 30 kB, or the last's
        const limitBefore = budget.limit("l", 10)
        yield* held.release
        const failed = yield* Effect.exit(budget.hold("l", 1, Effect.fail("no page"), (p: ReturnType<typeof page>) => p))
        const stopped = yield* Effect.fork(budget.hold("l", 1, Effect.never, (p: ReturnType<typeof page>) => p))
        yield* Effect.yieldNow()
        const whileStuck = budget.held()
        yield* Fiber.interrupt(stopped)
        return { whileHeld, limitBefore, failed, whileStuck, after: budget.held() }
      })
    )
    expect(r.whileHeld).toBe(30 * KB)
    expect(r.limitBefore).toBe(2)
    expect(Exit.isFailure(r.failed)).toBe(true)
    expect(r.whileStuck).toBe(40 * KB)
    expect(r.after).toBe(0)
  })

  it("pages asked before any of their list's pages was weighed wait at a page's target each, and pass at what they weigh once the first has come (a worker's first pages: not 4 at a time)", async () => {
    // 400 kB for 4 pages at full size: a page's target is 100 kB until the list's records are weighed
    const budget = makePageBudget({ bytes: 400 * KB, concurrency: 4 })
    const asked: Array<number> = []
    const answers = Array.from({ length: 8 }, () => Effect.runSync(Deferred.make<void>()))
    // page i of 10 rows of 1 kB, answered once answers[i] is done, held until the end
    const ask = (i: number) =>
      budget.hold(
        "l",
        10,
        Effect.as(
          Effect.zipRight(
            Effect.sync(() => asked.push(i)),
            Deferred.await(answers[i])
          ),
          page(10 * KB, 10)
        ),
        (p) => p
      )
    const r = await Effect.runPromise(
      Effect.gen(function* () {
        const fibers = []
        for (let i = 0; i < 8; i++) {
          fibers.push(yield* Effect.fork(ask(i)))
          yield* Effect.yieldNow()
        }
        const beforeAnswers = [...asked]
        yield* Deferred.succeed(answers[0], undefined)
        yield* Fiber.join(fibers[0])
        for (let i = 0; i < 4; i++) yield* Effect.yieldNow()
        const afterFirst = [...asked]
        const heldAfterFirst = budget.held()
        for (let i = 1; i < 8; i++) yield* Deferred.succeed(answers[i], undefined)
        for (const fiber of fibers) yield* (yield* Fiber.join(fiber)).release
        return { beforeAnswers, afterFirst, heldAfterFirst, after: budget.held() }
      })
    )
    expect(r.beforeAnswers).toEqual([0, 1, 2, 3])
    // the first weighed 10 kB and holds that; the 4 waiting pass at once, at 10 kB each, not one per page given back
    expect(r.afterFirst).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    // (pages 1–3, asked at the target, hold it until they come)
    expect(r.heldAfterFirst).toBe(10 * KB + 3 * 100 * KB + 4 * 10 * KB)
    expect(r.after).toBe(0)
  })
})

describe("what written pages leave behind, collected near the memory limit", () => {
  /** a budget of 1,000 bytes in a process limited to `limitBytes` whose RSS reads `rss`, counting the full collections asked */
  const watched = (rss: number, limitBytes: number | undefined) => {
    const state = { rss, collections: 0 }
    const budget = makePageBudget({
      bytes: 1000,
      concurrency: 1,
      limitBytes,
      memory: { rss: () => state.rss, collect: () => void state.collections++ }
    })
    /** a page of `bytes` (unsaid: undefined) fetched, its rows made, and given back */
    const written = (bytes: number | undefined) =>
      Effect.runPromise(
        budget.around(
          "l",
          1,
          Effect.succeed({ bytes, items: [1] }),
          (p) => p,
          () => Effect.void
        )
      )
    return { state, written }
  }

  it("a full collection once the pages written since the last weigh the whole budget, and RSS has reached 70% of the limit", async () => {
    const { state, written } = watched(700, 1000)
    await written(600)
    expect(state.collections).toBe(0)
    // 1,000 bytes written since: exactly the budget
    await written(400)
    expect(state.collections).toBe(1)
    // counted again from nothing
    await written(999)
    expect(state.collections).toBe(1)
    await written(1)
    expect(state.collections).toBe(2)
  })

  it("none while RSS is under 70% of the limit (the written bytes counted again from nothing all the same), none without a limit", async () => {
    const low = watched(699, 1000)
    await low.written(1000)
    expect(low.state.collections).toBe(0)
    // past 70% now, but nothing written since the last count
    low.state.rss = 800
    await low.written(999)
    expect(low.state.collections).toBe(0)
    await low.written(1)
    expect(low.state.collections).toBe(1)
    const unlimited = watched(10_000, undefined)
    await unlimited.written(5000)
    expect(unlimited.state.collections).toBe(0)
  })

  it("a page that says nothing of its size counts as nothing written", async () => {
    const { state, written } = watched(900, 1000)
    await written(undefined)
    expect(state.collections).toBe(0)
    await written(1000)
    expect(state.collections).toBe(1)
  })

  it("by default, V8's own full collection (observed as a major GC), with RSS past the limit", async () => {
    const majors: Array<number> = []
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors.push(e.startTime)
    })
    observer.observe({ entryTypes: ["gc"] })
    try {
      const budget = makePageBudget({ bytes: 1000, concurrency: 1, limitBytes: 1 })
      const asked = performance.now()
      await Effect.runPromise(
        budget.around(
          "l",
          1,
          Effect.succeed(page(1000, 1)),
          (p) => p,
          () => Effect.void
        )
      )
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(majors.filter((t) => t >= asked).length).toBeGreaterThanOrEqual(1)
    } finally {
      observer.disconnect()
    }
  })
})

describe("a run's page budget", () => {
  it("where none is provided (pageBudgetOf), every page at the size asked, none waiting", async () => {
    const budget = await Effect.runPromise(pageBudgetOf)
    budget.observe("l", page(100 * MB, 1))
    expect(budget.limit("l", 700)).toBe(700)
    expect(budget.held()).toBe(0)
  })
})

describe("an export of large records over loopback HTTP", () => {
  let devnet: Devnet
  const temp = tempDirs("chain-lake-page-budget-")
  beforeAll(async () => {
    // ~700 txs of ~22 kB on the wire (their rows ~45 kB: the memo twice, in its column and in the tx)
    devnet = await startDevnet({ seed: 5, blocks: 200, txPayloadBytes: 20_000 })
  }, 60_000)
  afterAll(async () => {
    await devnet.stop()
    temp.removeAll()
  })

  const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 100, timeoutMs: 5_000 }
  /** the lake writer of `out` as layerLake builds it at 1GB, less what `sink` changes, with `pageBytes` for pages in flight (none: no budget) */
  const layerFor = (url: string, out: string, pageBytes: number | undefined, sink: { readonly copyBytes?: number } = {}) =>
    Layer.mergeAll(
      layerIndexerSource.pipe(Layer.provideMerge(indexerLayer(url, { concurrency: 4, rps: 0 }, FAST_RETRY))),
      layerParquetSink({ tempDirectory: scratchFolder(out), ...sinkMemory(1024 * MB), ...sink }),
      layerManifests(out),
      ...(pageBytes === undefined ? [] : [Layer.succeed(RunMemory, { limitBytes: 1024 * MB, pageBytes })])
    )
  const exportTxs = (url: string, out: string, pageBytes: number | undefined, sink: { readonly copyBytes?: number } = {}) =>
    Effect.runPromise(
      runExport(DATASETS, { datasets: ["txs"], pageSize: 100, concurrency: 4 }).pipe(Effect.provide(layerFor(url, out, pageBytes, sink)))
    )

  it("the devnet's txs carry the payload asked for (deterministic), and none by default", async () => {
    const res = await fetch(`${devnet.indexerUrl}/indexer/tx/v1/txs?pagination.limit=3&pagination.reverse=false`)
    // in its memo, or an Ethereum tx's call data (its memo is its fees)
    const body = (await res.json()) as { txs: Array<{ tx: { body: { memo: string } } }> }
    for (const t of body.txs) expect(JSON.stringify(t.tx).length).toBeGreaterThanOrEqual(20_000)
    expect(JSON.stringify(body.txs[0].tx).length).toBeLessThan(23_000)
    // the same bytes from another devnet of the same seed
    const again = await startDevnet({ seed: 5, blocks: 20, txPayloadBytes: 20_000 })
    const plain = await startDevnet({ seed: 5, blocks: 20 })
    try {
      const first = (url: string) =>
        fetch(`${url}/indexer/tx/v1/txs?pagination.limit=1&pagination.reverse=false`).then(async (r) =>
          JSON.stringify(((await r.json()) as typeof body).txs[0].tx)
        )
      expect(await first(again.indexerUrl)).toBe(JSON.stringify(body.txs[0].tx))
      expect((await first(plain.indexerUrl)).length).toBeLessThan(2_000)
    } finally {
      await again.stop()
      await plain.stop()
    }
  })

  it("with a small page budget asks smaller pages, writes files no larger than a COPY is given, and the lake equals the chain and an export with no budget", async () => {
    const proxy = await startProxy(devnet.indexerUrl, (_req, forward) => forward())
    try {
      const budgeted = temp.make()
      // 1 MB of bodies in flight: a page's share 256 kB, ~11 txs of ~22 kB; a COPY given 10 MB: files of ~0.6 MB of rows (~14 txs)
      const report = await exportTxs(proxy.url, budgeted, MB, { copyBytes: 10 * MB })
      const txs = devnet.chain.txTotal()
      expect(report.datasets[0]).toMatchObject({ dataset: "txs", rows: txs })
      const limits = proxy.requests
        .map((r) => new URL(r.path, proxy.url))
        .filter((u) => u.pathname === "/indexer/tx/v1/txs")
        .map((u) => Number(u.searchParams.get("pagination.limit")))
      // the probes ask one row; every page after them asks what 256 kB holds, never the page size of 100
      const pages = limits.filter((l) => l > 1)
      expect(pages.length).toBeGreaterThan(txs / 12)
      expect(Math.max(...pages), limits.join(",")).toBeLessThanOrEqual(12)
      // files are cut after the page that passes ~0.6 MB of staged rows: 14 txs whose payload is in their memo (staged twice:
      // the memo column and the tx JSON), 28 Ethereum txs (once, in the call data), and a page of 12 more at most
      const files = committedFiles(budgeted).filter((f) => f.path.startsWith("txs/"))
      expect(Math.max(...files.map((f) => f.rows))).toBeLessThanOrEqual(40)
      await expectLakeMatchesChain(budgeted, devnet, ["txs"])

      const unbounded = temp.make()
      await exportTxs(devnet.indexerUrl, unbounded, undefined)
      expect(await dumpLake(budgeted, ["txs"])).toEqual(await dumpLake(unbounded, ["txs"]))
    } finally {
      await proxy.close()
    }
  }, 120_000)

  it("a snapshot's lists ask smaller pages where records are large (the rich list, padded 20 kB a holder), and the snapshot equals one read with no budget", async () => {
    // every holder of the rich list carries 20 kB more than the devnet gives it (a field the schema does not read)
    const padded = await startProxy(devnet.indexerUrl, async (req, forward) => {
      const reply = await forward()
      if (!req.path.startsWith("/indexer/richlist/") || reply.status !== 200 || reply.body === undefined) return reply
      const body = JSON.parse(reply.body) as { holders: Array<Record<string, unknown>> }
      body.holders = body.holders.map((h) => ({ ...h, padding: "x".repeat(20_000) }))
      return { ...reply, body: JSON.stringify(body) }
    })
    const exportHolders = (out: string, pageBytes: number | undefined) =>
      Effect.runPromise(
        runExport(DATASETS, { datasets: ["holders"], params: { denoms: ["uinit"] }, pageSize: 20, concurrency: 4 }).pipe(
          Effect.provide(layerFor(padded.url, out, pageBytes))
        )
      )
    try {
      const budgeted = temp.make()
      // 1 MB of bodies in flight: a page's share 256 kB, 12 holders of ~20 kB
      await exportHolders(budgeted, MB)
      const limits = padded.requests
        .map((r) => new URL(r.path, padded.url))
        .filter((u) => u.pathname === "/indexer/richlist/v1/uinit")
        .map((u) => Number(u.searchParams.get("pagination.limit")))
      // a probe of one row, the first page at the page size (nothing weighed yet), then what 256 kB holds
      const pages = limits.filter((l) => l > 1)
      expect(pages[0], limits.join(",")).toBe(20)
      expect(pages.length, limits.join(",")).toBeGreaterThanOrEqual(3)
      for (const l of pages.slice(1)) expect(l, limits.join(",")).toBeLessThanOrEqual(13)
      const unbounded = temp.make()
      await exportHolders(unbounded, undefined)
      const holders = await dumpLake(budgeted, ["holders"])
      expect(holders).toEqual(await dumpLake(unbounded, ["holders"]))
    } finally {
      await padded.close()
    }
  }, 120_000)

  it("the txs read to link receipts to their cosmos txs (a walk's pages, by_height's) ask what a page's share of the budget holds too, and evm_txs equals the chain", async () => {
    const proxy = await startProxy(devnet.indexerUrl, (_req, forward) => forward())
    try {
      const out = temp.make()
      // 1 MB of bodies in flight: a page's share 256 kB, ~11 txs of ~22 kB
      await Effect.runPromise(
        runExport(DATASETS, { datasets: ["evm_txs"], pageSize: 100, concurrency: 4 }).pipe(Effect.provide(layerFor(proxy.url, out, MB)))
      )
      const urls = proxy.requests.map((r) => new URL(r.path, proxy.url))
      const txsPages = urls.filter((u) => u.pathname.startsWith("/indexer/tx/v1/txs"))
      const limits = txsPages.map((u) => Number(u.searchParams.get("pagination.limit")))
      // receipts that stand for cosmos txs were linked, by a walk of the txs list or by height
      expect(txsPages.length).toBeGreaterThan(5)
      expect(Math.max(...limits), limits.join(",")).toBeLessThanOrEqual(12)
      await expectLakeMatchesChain(out, devnet, ["evm_txs"])
    } finally {
      await proxy.close()
    }
  }, 120_000)
})
