/**
 * Shard workers (export --workers N): shards paged, decoded and written in worker threads, each
 * commit made by the run's thread. The lake they write is the chain's, value for value, as the
 * run's own thread writes it; their requests pass through the run's gates; a stop (SIGINT) or a
 * kill leaves a lake a rerun completes exactly.
 */
import { spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Duration, Effect, Either, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { indexerLayer, shardWorkerModule, type ShardWorkerConfig } from "../../src/cli/layers.js"
import { layerShardWorkers, workerFlags, workerMemoryBytes } from "../../src/pipelines/layers.js"
import { DATASETS as REGISTRY } from "../../src/datasets/index.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runExport } from "../../src/engine/export.js"
import { followExport } from "../../src/engine/follow.js"
import { type Gate, ShardWorkers } from "../../src/engine/workers.js"
import { columnsOf, defineAppend } from "../../src/engine/Dataset.js"
import { txsList } from "../../src/datasets/lists.js"
import { heightBucket } from "../../src/lake/layout.js"
import { plainServiceUrl } from "../../src/http/serviceUrl.js"
import { layerRequestLimiter, type LimiterConfig, makeRequestLimiter, RequestLimiter } from "../../src/http/RequestLimiter.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { layerLake } from "../../src/lake/writer.js"
import { layerIndexerSource } from "../../src/drivers/indexer.js"
import { expectDatasetMatches, expectedLake, expectLakeMatchesChain } from "../support/chain-model.js"
import { BIN, runCli, startCli } from "../support/cli.js"
import { sleep, startProxy, text } from "../support/hostile.js"
import { committedFiles, expectManifestsTrue, queryLake, scan } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const APPEND = REGISTRY.filter((d) => d.kind === "append").map((d) => d.name)
const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 100, timeoutMs: 1_500, maxRetries: 15 }
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-workers-")

let devnet: Devnet
beforeAll(async () => {
  // latency spreads the commits over a few seconds, so that a stop lands between them
  devnet = await startDevnet({ seed: 11, blocks: 400, latencyMs: 10 })
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

/** A worker's config against the indexer at `url`, writing into `out`: a 512MB share of a 1GB run */
const workerConfig = (url: string, out: string): ShardWorkerConfig => ({
  endpoint: plainServiceUrl(url),
  retry: FAST_RETRY,
  out,
  memoryLimitBytes: 512 * 1024 * 1024,
  runMemoryLimitBytes: 1024 * 1024 * 1024
})

/**
 * An export's layer over the indexer at `url` into `out`, with `workers`: shard workers that run
 * the CLI's worker module (unless `module` says otherwise) against the same indexer, each with a
 * 512MB share, passing every request through `requests`.
 */
const workerLayer = (
  url: string,
  out: string,
  workers: {
    readonly count: number
    readonly requests?: Gate
    readonly module?: () => URL
    readonly config?: (worker: number) => unknown
    readonly execArgv?: ReadonlyArray<string>
  }
) => {
  const limiter = layerRequestLimiter({ concurrency: 4, rps: 0 })
  const config = () => workerConfig(url, out)
  return Layer.mergeAll(
    layerIndexerSource.pipe(Layer.provideMerge(indexerLayer(url, limiter, FAST_RETRY))),
    layerLake(out),
    Layer.succeed(ShardWorkers, {
      count: workers.count,
      module: workers.module ?? shardWorkerModule,
      config: workers.config ?? config,
      gates: { requests: workers.requests ?? ((effect) => effect) },
      datasets: REGISTRY,
      execArgv: workers.execArgv
    })
  )
}

/** blocks and txs exported at page 100 and `concurrency` with `layer` (a minute at most): the report, or why it failed */
const exportBlocksAndTxs = (layer: ReturnType<typeof workerLayer>, concurrency: number) =>
  Effect.runPromise(
    Effect.either(
      runExport(
        REGISTRY.filter((d) => d.name === "blocks" || d.name === "txs"),
        { pageSize: 100, concurrency }
      )
    ).pipe(Effect.provide(layer), Effect.timeout("60 seconds"))
  )

/**
 * An export's layer over the indexer at `url` into `out` with `count` shard workers, the run's
 * thread and the workers passing one request limiter of `limits` (as the CLI's do), each pass
 * through it of a worker's counted by `onPass`.
 */
const limitedWorkerLayer = (url: string, out: string, count: number, limits: LimiterConfig, onPass: () => void = () => {}) => {
  const limiter = Effect.runSync(makeRequestLimiter(limits))
  return Layer.mergeAll(
    layerIndexerSource.pipe(Layer.provideMerge(indexerLayer(url, Layer.succeed(RequestLimiter, limiter), FAST_RETRY))),
    layerLake(out),
    Layer.succeed(ShardWorkers, {
      count,
      module: shardWorkerModule,
      config: () => ({ ...workerConfig(url, out), limits }),
      gates: { requests: (effect) => limiter.run(Effect.suspend(() => (onPass(), effect))) },
      datasets: REGISTRY
    })
  )
}

/** The devnet's indexer behind a proxy that answers each request `ms` later, counting what is in flight. */
const delayedIndexer = (ms: number) =>
  startProxy(devnet.indexerUrl, async (_request, forward) => {
    await sleep(ms)
    return forward()
  })

describe("shard workers", () => {
  it("two workers write every value of every append dataset as the chain has it, each of their requests through the run's request gate", async () => {
    const out = tmp()
    let passes = 0
    const layer = workerLayer(devnet.indexerUrl, out, {
      count: 2,
      requests: (effect) =>
        Effect.suspend(() => {
          passes++
          return effect
        })
    })
    const datasets = REGISTRY.filter((d) => APPEND.includes(d.name))
    const result = await Effect.runPromise(
      Effect.either(runExport(datasets, { pageSize: 25, concurrency: 4, bucketWidth: 100, flushBytes: 24_000 })).pipe(Effect.provide(layer))
    )
    if (Either.isLeft(result)) throw new Error(`export failed: ${JSON.stringify(result.left)}`)
    const lake = new Map(expectedLake(devnet.chain, 100).map((d) => [d.name, d]))
    for (const name of APPEND) await expectDatasetMatches(out, lake.get(name)!)
    await expectManifestsTrue(out, APPEND)
    // every page the shards read went through the gate: at least one request per 25 rows of the blocks and txs shards
    expect(passes).toBeGreaterThan((400 + lake.get("txs")!.rows.length) / 25)
    expect(result.right.datasets.find((d) => d.dataset === "txs")?.rows).toBe(lake.get("txs")!.rows.length)
  })

  it("at --rps N with shard workers, as the server counts them: no second holds more than N requests, within the blur the one-thread limiter is held to (test/http/retry.test.ts)", async () => {
    // the devnet in a process of its own, so that its pages take none of this process's time: the
    // proxy here stamps each request as it arrives
    const devnetArgs = ["devnet", "--seed", "9", "--blocks", "1500", "--txs-per-block", "6", "--tx-payload-bytes", "400"]
    const { child, stdout } = await startCli(devnetArgs, /router_url=\S+\n/)
    const arrived: Array<number> = []
    const proxy = await startProxy(/indexer_url=(\S+)/.exec(stdout())![1], (_request, forward) => {
      arrived.push(performance.now())
      return forward()
    })
    const rps = 25
    try {
      const out = tmp()
      const r = await runCli(
        ["export", "--indexer-url", proxy.url, "--out", out, "--datasets", "blocks,txs", "--workers", "2", "--concurrency", "8"].concat([
          "--rps",
          String(rps),
          "--page-size",
          "100",
          "--memory-limit",
          "1GB"
        ]),
        { timeoutMs: 120_000 }
      )
      expect(r.code, r.stderr).toBe(0)
    } finally {
      await proxy.close()
      child.kill("SIGINT")
    }
    expect(arrived.length).toBeGreaterThan(3 * rps)
    // a limiter counts its starts when it lets them go; the request leaves once its thread gets to
    // it (a worker's, busy with a page, gets the pass by message): the server sees them that much
    // later and closer together, as it does one thread's (the same tolerance)
    const toleranceMs = 250
    const most = Math.max(...arrived.map((t) => arrived.filter((u) => u >= t && u < t + 1000 - toleranceMs).length))
    expect(most).toBeLessThanOrEqual(rps)
  })

  it("at --rps 0 a worker's shard keeps its request pass for its next requests: far fewer passes asked of the run's thread than requests made, never more requests at the server than --concurrency", async () => {
    const out = tmp()
    // a few ms at the server, so that requests overlap
    const proxy = await delayedIndexer(3)
    try {
      const limits = { concurrency: 3, rps: 0 }
      let passes = 0
      const layer = limitedWorkerLayer(proxy.url, out, 2, limits, () => passes++)
      const datasets = REGISTRY.filter((d) => d.name === "blocks" || d.name === "txs")
      await Effect.runPromise(runExport(datasets, { pageSize: 10, concurrency: limits.concurrency }).pipe(Effect.provide(layer)))
      await expectLakeMatchesChain(out, devnet, ["blocks", "txs"])
      const pages = proxy.requests.filter((r) => r.path.includes("pagination.key=")).length
      expect(pages).toBeGreaterThan((400 + devnet.chain.txTotal()) / 10)
      // each of the workers' passes was kept for a shard's next pages (a pass per request: passes ≥ pages)
      expect(passes).toBeLessThan(pages / 3)
      expect(proxy.peakInFlight()).toBeLessThanOrEqual(limits.concurrency)
    } finally {
      await proxy.close()
    }
  })

  it("at --concurrency 1 and --rps 0, a commit made while the shard's next page is on its way (a checkpoint) gets the one permit once that page has come: the run's thread answers the commit beside the worker's giving back its pass, not before it", async () => {
    const out = tmp()
    // the page asked ahead is still on its way when the commit of the page before it is asked for
    const proxy = await delayedIndexer(30)
    try {
      const layer = limitedWorkerLayer(proxy.url, out, 1, { concurrency: 1, rps: 0 })
      const blocksOnly = REGISTRY.filter((d) => d.name === "blocks")
      const run = runExport(blocksOnly, { pageSize: 50, concurrency: 1, checkpointMs: 0 }).pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("the export stalled") }),
        Effect.provide(layer)
      )
      await Effect.runPromise(run)
      await expectLakeMatchesChain(out, devnet, ["blocks"])
      // committed on the way: more files than shards' ends alone make
      expect(committedFiles(out).length).toBeGreaterThan(4)
      expect(proxy.peakInFlight()).toBe(1)
    } finally {
      await proxy.close()
    }
  })

  it("at --concurrency 1 and --rps 0, a pass a worker's shard keeps goes back once unused: the run's thread checks the history before each commit with the one permit there is, and the export ends complete", async () => {
    const out = tmp()
    const run = await runCli([
      ...["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks,txs", "--page-size", "50"],
      ...["--workers", "1", "--concurrency", "1", "--rps", "0", "--memory-limit", "1GB"]
    ])
    expect(run.code, run.stderr).toBe(0)
    await expectLakeMatchesChain(out, devnet, ["blocks", "txs"])
  })

  it("progress counts a page's records as read before its rows, in the run's thread and from workers: blocks and txs (a row a record) never show more rows than records read", async () => {
    for (const count of [0, 2]) {
      const counts = new Map<string, { fetched: number; rows: number }>()
      const ahead: Array<string> = []
      const check = (dataset: string) => {
        const c = counts.get(dataset)!
        if (c.rows > c.fetched) ahead.push(`${dataset}: ${c.rows} rows of ${c.fetched} records`)
      }
      const of = (dataset: string) => counts.get(dataset) ?? counts.set(dataset, { fetched: 0, rows: 0 }).get(dataset)!
      const observer = {
        fetched: (dataset: string, units: number) => ((of(dataset).fetched += units), check(dataset)),
        rows: (dataset: string, rows: number) => ((of(dataset).rows += rows), check(dataset))
      }
      const out = tmp()
      const result = await Effect.runPromise(
        Effect.either(runExport(REGISTRY, { datasets: ["blocks", "txs"], pageSize: 30, concurrency: 4, bucketWidth: 100, observer })).pipe(
          Effect.provide(workerLayer(devnet.indexerUrl, out, { count }))
        )
      )
      expect(Either.isRight(result)).toBe(true)
      expect({ count, ahead }).toEqual({ count, ahead: [] })
      expect(of("txs")).toEqual({
        fetched: expectedLake(devnet.chain, 100).find((d) => d.name === "txs")!.rows.length,
        rows: of("txs").fetched
      })
    }
  })

  it("a library caller's own dataset, which the workers' registry lacks, runs in the run's thread (its list need not name its key style); registry datasets still go to the workers", async () => {
    const out = tmp()
    const col = columnsOf<{ height: string; txhash: string }>()
    const mine = defineAppend({
      name: "my_tx_hashes",
      description: "a caller's own dataset over the txs list, read apart from txs",
      // no `keys`: a position list is paged by sequence cursors all the same
      list: { ...txsList, id: "my-txs", keys: undefined },
      columns: [col("height", "BIGINT", "height", (t) => t.height), col("tx_hash", "VARCHAR", "hash", (t) => t.txhash)],
      key: ["tx_hash"],
      sortKey: ["height"],
      partition: heightBucket("height")
    })
    let passes = 0
    const layer = workerLayer(devnet.indexerUrl, out, { count: 1, requests: (effect) => Effect.suspend(() => (passes++, effect)) })
    const txs = REGISTRY.find((d) => d.name === "txs")!
    const report = await Effect.runPromise(runExport([mine, txs], { pageSize: 50, concurrency: 2 }).pipe(Effect.provide(layer)))
    const expected = new Map(expectedLake(devnet.chain, 10_000).map((d) => [d.name, d])).get("txs")!
    expect(report.datasets.map((d) => [d.dataset, d.rows])).toEqual([
      ["my_tx_hashes", expected.rows.length],
      ["txs", expected.rows.length]
    ])
    const [row] = await queryLake(`SELECT count(*) AS n, count(DISTINCT tx_hash) AS d FROM ${scan(out, "my_tx_hashes")}`)
    expect([Number(row.n), Number(row.d)]).toEqual([expected.rows.length, expected.rows.length])
    await expectDatasetMatches(out, expected)
    // txs' pages went through the workers' gate; the caller's list was read in the run's thread
    expect(passes).toBeGreaterThan(0)
  })

  it("a follow starts its workers once, not at every round, and its rounds commit every block once", async () => {
    const growing = await startDevnet({ seed: 5, blocks: 40, blockTimeMs: 40 })
    const out = tmp()
    try {
      let starts = 0
      let rounds = 0
      const layer = workerLayer(growing.indexerUrl, out, { count: 1, module: () => (starts++, shardWorkerModule()) })
      const target = growing.tip() + 40
      await Effect.runPromise(
        followExport(
          REGISTRY,
          { datasets: ["blocks", "txs"], pageSize: 50, bucketWidth: 100 },
          { poll: Duration.millis(50), untilHeight: target, compactAfter: 0, onRound: () => void rounds++ }
        ).pipe(Effect.provide(layer))
      )
      expect(rounds).toBeGreaterThan(1)
      expect(starts).toBe(1)
      const [row] = await queryLake(
        `SELECT count(*) AS n, count(DISTINCT height) AS d, min(height) AS lo, max(height) AS hi FROM ${scan(out, "blocks")}`
      )
      expect([row.n, row.d, row.lo, row.hi].map(Number)).toEqual([target, target, 1, target])
    } finally {
      await growing.stop()
    }
  })

  it("workers start while the run asks the indexer's status, not after its plan; the lake is the chain's", async () => {
    // the status answered 1 s late: a worker started after the plan would be made after the answer
    let statusAnswered = Number.POSITIVE_INFINITY
    const slow = await startProxy(devnet.indexerUrl, async (request, forward) => {
      if (!request.path.startsWith("/status")) return forward()
      await sleep(1_000)
      const reply = await forward()
      statusAnswered = performance.now()
      return reply
    })
    const out = tmp()
    try {
      const made: Array<number> = []
      const config = (): ShardWorkerConfig => {
        made.push(performance.now())
        return workerConfig(slow.url, out)
      }
      const layer = workerLayer(slow.url, out, { count: 2, config })
      await Effect.runPromise(
        runExport(REGISTRY, { datasets: ["blocks", "txs"], pageSize: 50, concurrency: 2 }).pipe(Effect.provide(layer))
      )
      expect(made).toHaveLength(2)
      expect(Math.max(...made)).toBeLessThan(statusAnswered)
      const expected = new Map(expectedLake(devnet.chain, 10_000).map((d) => [d.name, d]))
      for (const name of ["blocks", "txs"]) await expectDatasetMatches(out, expected.get(name)!)
    } finally {
      await slow.close()
    }
  })

  it("workers started for a run that ends before its shards are closed with it: a run refused after its probes and a rerun with nothing to do both end, every worker exited", async () => {
    const out = tmp()
    const marks = join(tmp(), "exits")
    // the CLI's worker module, each thread writing a line as it exits
    const wrapper = join(tmp(), "worker.mjs")
    writeFileSync(
      wrapper,
      `import { appendFileSync } from "node:fs"\nprocess.on("exit", () => appendFileSync(${JSON.stringify(marks)}, "exited\\n"))\nawait import(${JSON.stringify(shardWorkerModule().href)})\n`
    )
    const noBlocks = await startProxy(devnet.indexerUrl, (request, forward) =>
      request.path.startsWith("/indexer/block/v1/blocks") ? text(404, "not found") : forward()
    )
    let made = 0
    const layer = (url: string) =>
      workerLayer(url, out, {
        count: 2,
        module: () => pathToFileURL(wrapper),
        config: () => (made++, workerConfig(url, out))
      })
    const run = (url: string) =>
      Effect.runPromise(
        Effect.either(runExport(REGISTRY, { datasets: ["blocks"], pageSize: 100 })).pipe(
          Effect.provide(layer(url)),
          Effect.timeout("30 seconds")
        )
      )
    try {
      const refused = await run(noBlocks.url)
      expect(Either.isLeft(refused) && refused.left.message).toMatch(/^blocks cannot be exported from this source/)
      expect(Either.isRight(await run(devnet.indexerUrl))).toBe(true)
      const before = committedFiles(out)
      const rerun = await run(devnet.indexerUrl)
      expect(Either.isRight(rerun) && rerun.right.datasets.map((d) => [d.dataset, d.rows])).toEqual([["blocks", 0]])
      expect(committedFiles(out)).toEqual(before)
      expect(made).toBe(6)
      expect(readFileSync(marks, "utf8")).toBe("exited\n".repeat(6))
    } finally {
      await noBlocks.close()
    }
  })

  it("a worker that breaks as it starts fails the run with its first line, instead of waiting for it", async () => {
    const out = tmp()
    const layer = workerLayer(devnet.indexerUrl, out, {
      count: 2,
      module: () => new URL(`data:text/javascript,${encodeURIComponent('throw new Error("no DuckDB here\\nsecond line")')}`),
      config: () => ({})
    })
    const result = await Effect.runPromise(
      Effect.either(runExport(REGISTRY.filter((d) => d.name === "blocks"))).pipe(Effect.provide(layer), Effect.timeout("30 seconds"))
    )
    expect(Either.isLeft(result) && result.left.message).toBe("a shard worker failed: no DuckDB here")
  })

  it("a shard goes to its worker once that one is ready, not once all are (a worker slow to start holds back only the shards given to it), and the workers are closed together at the end", async () => {
    const out = tmp()
    const marks = join(tmp(), "marks")
    const slow = join(tmp(), "slow")
    const wrapper = join(tmp(), "worker.mjs")
    // the first worker to start waits until the lake holds a committed file (20 s at most) and
    // says how many it holds; each worker, told to close, says so and keeps its thread 1 s before
    // it closes, then says it exited
    writeFileSync(
      wrapper,
      [
        `import { appendFileSync, openSync, readdirSync, readFileSync } from "node:fs"`,
        `import { parentPort } from "node:worker_threads"`,
        `const mark = (line) => appendFileSync(${JSON.stringify(marks)}, line + "\\n")`,
        `const committed = () => readdirSync(${JSON.stringify(out)}).reduce((n, d) => { try { return n + JSON.parse(readFileSync(${JSON.stringify(out)} + "/" + d + "/_manifest.json", "utf8")).files.length } catch { return n } }, 0)`,
        `let first = true`,
        `try { openSync(${JSON.stringify(slow)}, "wx") } catch { first = false }`,
        `if (first) {`,
        `  const until = Date.now() + 20000`,
        `  while (committed() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20))`,
        `  mark("slow worker ready with " + committed() + " committed")`,
        `}`,
        `parentPort.on("message", (m) => { if (m.type === "close") { mark("closing"); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000) } })`,
        `process.on("exit", () => mark("exited"))`,
        `await import(${JSON.stringify(shardWorkerModule().href)})`
      ].join("\n")
    )
    const layer = workerLayer(devnet.indexerUrl, out, { count: 2, module: () => pathToFileURL(wrapper) })
    const result = await exportBlocksAndTxs(layer, 2)
    expect(Either.isRight(result) && result.right.datasets.map((d) => [d.dataset, d.rows])).toEqual([
      ["blocks", 400],
      ["txs", devnet.chain.txTotal()]
    ])
    const lines = readFileSync(marks, "utf8").trim().split("\n")
    expect(lines[0]).toMatch(/^slow worker ready with [1-9]\d* committed$/)
    expect(lines.slice(1)).toEqual(["closing", "closing", "exited", "exited"])
    await expectManifestsTrue(out, ["blocks", "txs"])
  })

  it("the paging slots go to the largest shards first, whichever worker is ready first: at --concurrency 1, every txs page before any blocks page though the txs shard's worker starts 1.5 s late", async () => {
    const proxy = await startProxy(devnet.indexerUrl, (_request, forward) => forward())
    try {
      const out = tmp()
      const wrapper = join(tmp(), "worker.mjs")
      writeFileSync(
        wrapper,
        [
          `import { workerData } from "node:worker_threads"`,
          `if (workerData.config.late) await new Promise((r) => setTimeout(r, 1500))`,
          `await import(${JSON.stringify(shardWorkerModule().href)})`
        ].join("\n")
      )
      // (the largest shard goes to the first of the least busy workers: the first, the late one)
      const config = (worker: number) => ({ ...workerConfig(proxy.url, out), late: worker === 0 })
      const layer = workerLayer(proxy.url, out, { count: 2, module: () => pathToFileURL(wrapper), config })
      const result = await exportBlocksAndTxs(layer, 1)
      expect(Either.isRight(result) && result.right.datasets.map((d) => d.rows)).toEqual([400, devnet.chain.txTotal()])
      // (a shard's pages, not the plan's probes of one row)
      const pages = proxy.requests
        .filter((r) => r.path.includes("pagination.key=") && !r.path.includes("pagination.limit=1&"))
        .map((r) => (r.path.includes("/blocks?") ? "blocks" : "txs"))
      expect(pages.indexOf("blocks")).toBeGreaterThan(pages.lastIndexOf("txs"))
      expect(pages.filter((p) => p === "txs").length).toBe(Math.ceil(devnet.chain.txTotal() / 100))
    } finally {
      await proxy.close()
    }
  })

  it("a worker runs with the Node flags the config gives it, less those Node refuses a worker (a process's own), and the run completes", async () => {
    const seen = join(tmp(), "flags")
    // the CLI's worker module, each thread writing its flags first
    const wrapper = join(tmp(), "worker.mjs")
    writeFileSync(
      wrapper,
      `import { appendFileSync } from "node:fs"\nappendFileSync(${JSON.stringify(seen)}, JSON.stringify(process.execArgv) + "\\n")\nawait import(${JSON.stringify(shardWorkerModule().href)})\n`
    )
    const run = async (execArgv: ReadonlyArray<string>) => {
      const out = tmp()
      const layer = workerLayer(devnet.indexerUrl, out, { count: 1, module: () => pathToFileURL(wrapper), execArgv })
      const result = await Effect.runPromise(
        Effect.either(
          runExport(
            REGISTRY.filter((d) => d.name === "blocks"),
            { pageSize: 100 }
          )
        ).pipe(Effect.provide(layer), Effect.timeout("30 seconds"))
      )
      expect(Either.isRight(result) && result.right.datasets[0].rows).toBe(400)
    }
    await run(["--no-deprecation"])
    await run(["--max-semi-space-size=32", "--no-deprecation", "--stack-size=900"])
    // a refused flag's value given apart goes with it (left, Node would stop reading at it)
    await run(["--title", "chain-lake", "--no-deprecation"])
    // none of them a worker takes: none
    await run(["--stack-size=900"])
    expect(
      readFileSync(seen, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    ).toEqual([["--no-deprecation"], ["--no-deprecation"], ["--no-deprecation"], []])
  })

  it("a worker's flags are the process's less a TypeScript loader (its module is plain JavaScript: the loader cost each worker 0.8–0.9 s to start on Node 22 and 24) and --input-type (a worker given it fails to start)", () => {
    expect(workerFlags(["--import", "tsx"])).toEqual([])
    expect(workerFlags(["--enable-source-maps", "--import=tsx/esm", "--max-old-space-size=900"])).toEqual([
      "--enable-source-maps",
      "--max-old-space-size=900"
    ])
    expect(workerFlags(["--require", "ts-node/register", "--loader", "ts-node/esm", "-r", "@swc-node/register"])).toEqual([])
    expect(workerFlags(["--experimental-loader=esbuild-register/loader", "--conditions", "tsx"])).toEqual(["--conditions", "tsx"])
    expect(workerFlags(["--input-type=module", "-e", "1"])).toEqual(["-e", "1"])
    expect(workerFlags(["--input-type", "module", "--no-warnings"])).toEqual(["--no-warnings"])
    // nothing to leave out: the worker takes the process's flags as Node gives them
    expect(workerFlags(["--import", "./instrument.mjs", "--require", "tsxlike"])).toBeUndefined()
    expect(workerFlags([])).toBeUndefined()
  })

  it("an export with workers from a script run by `node --import tsx --input-type=module -e` (a library caller's) completes exactly", async () => {
    const out = tmp()
    const script = [
      `import { Effect } from "effect"`,
      `import { DATASETS, exportLayer, runExport } from ${JSON.stringify(join(ROOT, "src", "index.ts"))}`,
      `const layer = exportLayer({ indexerUrl: ${JSON.stringify(devnet.indexerUrl)}, out: ${JSON.stringify(out)}, workers: 2 })`,
      `const report = await Effect.runPromise(runExport(DATASETS, { datasets: ["blocks", "txs"], pageSize: 50, bucketWidth: 100 }).pipe(Effect.provide(layer)))`,
      `console.log(JSON.stringify(report.datasets.map((d) => [d.dataset, d.rows])))`
    ].join("\n")
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" })
    const lake = new Map(expectedLake(devnet.chain, 100).map((d) => [d.name, d]))
    expect(JSON.parse(stdout)).toEqual([
      ["blocks", 400],
      ["txs", lake.get("txs")!.rows.length]
    ])
    await expectDatasetMatches(out, lake.get("txs")!)
  }, 60_000)

  it("stopped by SIGINT (exit 130), then killed (SIGKILL), an export with workers keeps what it committed (its shards holding their request passes); a rerun completes the chain exactly", async () => {
    const out = tmp()
    const args = [
      ...["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks,txs,evm_txs", "--page-size", "20"],
      // (no rate: each shard keeps its request pass between its pages, and a stop finds them held)
      ...["--workers", "2", "--memory-limit", "1GB", "--rps", "0"]
    ]
    /** the export in a child process, sent `signal` once `more` files beyond those committed already are */
    const stopAfter = async (more: number, signal: NodeJS.Signals) => {
      const before = committedFiles(out).length
      const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] })
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      await new Promise<void>((resolve) => {
        const watch = setInterval(() => {
          if (committedFiles(out).length < before + more) return
          clearInterval(watch)
          child.kill(signal)
          resolve()
        }, 5)
      })
      return { code: await exited, stderr }
    }
    const interrupted = await stopAfter(2, "SIGINT")
    expect(interrupted.code, interrupted.stderr).toBe(130)
    expect(interrupted.stderr).toMatch(
      /^chain-lake: interrupted: every file committed so far is kept; run the same command again to resume$/m
    )
    expect((await stopAfter(2, "SIGKILL")).code).toBeNull()
    const resumed = await runCli(args)
    expect(resumed.code, resumed.stderr).toBe(0)
    await expectLakeMatchesChain(out, devnet, ["blocks", "txs", "evm_txs"])
  })

  it("a worker pages within its share of the memory limit: large records make it ask smaller pages", async () => {
    const heavy = await startDevnet({ seed: 5, blocks: 600, txPayloadBytes: 20_000 })
    const limits: Array<number> = []
    const proxy = await startProxy(heavy.indexerUrl, (req, forward) => {
      if (req.url.pathname === "/indexer/tx/v1/txs") limits.push(Number(req.url.searchParams.get("pagination.limit")))
      return forward()
    })
    try {
      const out = tmp()
      const r = await runCli([
        ...["export", "--indexer-url", proxy.url, "--out", out, "--datasets", "txs", "--page-size", "1000", "--concurrency", "1"],
        ...["--workers", "1", "--memory-limit", "636MB"]
      ])
      expect(r.code, r.stderr).toBe(0)
      // one shard of every tx: a first page asks them all, the pages after it fewer (20 kB records past its share)
      const pages = limits.filter((l) => l > 1)
      expect(pages.length, `limits asked: ${limits.join(", ")}`).toBeGreaterThan(2)
      expect(Math.max(...pages.slice(1))).toBeLessThan(pages[0])
      const [{ n }] = await queryLake(`SELECT count(*) AS n FROM ${scan(out, "txs")}`)
      expect(Number(n)).toBe(heavy.chain.txTotal())
    } finally {
      await proxy.close()
      await heavy.stop()
    }
  })

  it("each worker is given its share of --memory-limit for its sink and pages, and the run's whole limit for the process's RSS", async () => {
    const GB = 1024 * 1024 * 1024
    const workers = await Effect.runPromise(
      Effect.provide(
        ShardWorkers,
        layerShardWorkers(
          3,
          { indexerUrl: devnet.indexerUrl, out: tmp(), memoryLimitBytes: 2 * GB },
          layerRequestLimiter({ concurrency: 4, rps: 0 })
        )
      )
    )
    const config = workers.config(0) as ShardWorkerConfig
    expect(config.memoryLimitBytes).toBe(workerMemoryBytes(2 * GB, 3))
    expect(config.memoryLimitBytes).toBeLessThan(GB)
    expect(config.runMemoryLimitBytes).toBe(2 * GB)
  })

  it("a worker collects what its pages leave behind by the process's RSS against the run's whole limit, not against its share (V8's forced collections, traced)", async () => {
    // 7,000 txs of 2 kB, two workers: the process passes 70% of a worker's share (~330 MB of 1200MB), not 70% of the whole (840 MB)
    const big = await startDevnet({ seed: 6, blocks: 1_000, txsPerBlock: 7, txPayloadBytes: 2_000 })
    try {
      const out = tmp()
      const args = ["export", "--indexer-url", big.indexerUrl, "--out", out, "--datasets", "txs", "--page-size", "1000"]
      const traced = await runCli([...args, "--workers", "2", "--memory-limit", "1200MB"], { nodeFlags: ["--trace-gc"] })
      expect(traced.code, traced.stderr).toBe(0)
      // a full collection the budget asks for is traced as V8's "testing" reason
      const forced = traced.stdout.split("\n").filter((l) => l.includes("Mark-Compact") && l.includes(" testing;"))
      expect(forced).toEqual([])
      const [{ n }] = await queryLake(`SELECT count(*) AS n FROM ${scan(out, "txs")}`)
      expect(Number(n)).toBe(big.chain.txTotal())
    } finally {
      await big.stop()
    }
  })

  it("a shard that fails in a worker fails the run as in the run's thread: one line naming endpoint, page key and field, exit 1; quarantine writes the record", async () => {
    const bad = await startDevnet({ seed: 8, blocks: 700, faults: "malformed=0.05" })
    try {
      const out = tmp()
      const args = [
        "export",
        "--indexer-url",
        bad.indexerUrl,
        "--out",
        out,
        "--datasets",
        "txs",
        "--page-size",
        "20",
        "--workers",
        "2",
        "--memory-limit",
        "1GB"
      ]
      const failed = await runCli(args)
      expect(failed.code).toBe(1)
      expect(failed.stderr).toMatch(
        /^chain-lake: error: malformed response from txs \(page key \S+\) at txs\[\d+\]\.txhash: Expected string, actual 12345\. Committed files are untouched; --on-invalid quarantine sets such records aside and exports the rest\.$/m
      )
      expect(failed.stderr).not.toMatch(/RemoteFailure| {4}at /)
      const quarantined = await runCli([...args, "--on-invalid", "quarantine"])
      expect(quarantined.code, quarantined.stderr).toBe(0)
      const lines = readFileSync(join(out, "_quarantine", "txs.ndjson"), "utf8")
        .trim()
        .split("\n")
      expect(lines.length).toBeGreaterThan(0)
      expect(JSON.parse(lines[0])).toMatchObject({ endpoint: "txs", path: expect.stringMatching(/^txs\[\d+\]\.txhash$/) })
    } finally {
      await bad.stop()
    }
  })

  it("--workers out of range, or more than the memory limit can give a DuckDB each, is a usage error", async () => {
    const r = await runCli(["export", "--devnet", "--out", tmp(), "--workers", "-1"])
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe("chain-lake: error: --workers must be 0..64, got -1")
    const small = await runCli(["export", "--devnet", "--out", tmp(), "--workers", "3", "--memory-limit", "512MB"])
    expect(small.code).toBe(2)
    expect(small.stderr.trim()).toBe(
      "chain-lake: error: --workers 3 needs --memory-limit 1172MB at least (each worker's DuckDB needs its share), got 512MB: raise --memory-limit or use fewer workers"
    )
  })
})
