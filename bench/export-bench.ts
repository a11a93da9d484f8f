/**
 * Export benchmark (opt-in: `npm run bench`; not part of `npm test`).
 *
 * 1. Throughput: a devnet in its own process serves TXS cosmos txs; we measure the raw floor
 *    (fetch every page + JSON.parse, nothing else) and then the real export of the `txs` dataset
 *    to Parquet, in the same run, and report rows/s, MB/s, peak RSS and the ratio export/floor.
 * 2. Sharding: at 50 ms latency per request, the export at concurrency 16 against a single
 *    sequential cursor walk (concurrency 1), same data, same page size.
 * 3. Multi-dataset: blocks + txs at page 100 against a devnet with 20 ms added latency, in one
 *    run: chain-lake end to end (runExport: probes, planning, shards of both datasets in one pool,
 *    Parquet, commits) against the sequential cursor walk a user writes by hand and against plain
 *    concurrent fetching of the same pages (16 workers, fetch + JSON.parse, nothing stored); then
 *    the same against a replay of the devnet (bench/replay-server.ts), a server whose CPU is not
 *    the client's.
 * 4. Memory: peak RSS of the CLI's txs export at --memory-limit 512MB, ordinary txs and txs of 20 kB,
 *    two data sizes each, concurrency 4 and 16 (see `memory`). Start-up: bench/startup-bench.ts.
 * 5. Gentle: blocks + txs, then blocks + the three tx families, exported against a devnet that
 *    counts the rows its offsets skip (the real indexer's SQL OFFSET scans them), then rerun with
 *    everything committed: rows skipped, requests and seconds of each (see `gentle`).
 *
 * Every devnet charges offsets as the real indexer does: BENCH_OFFSET_ROW_US (default 1) µs per
 * row an offset skips. The floor and the plain fetch read pages by constructed cursors, as
 * chain-lake does, so that they are the floor of a client the real server can afford.
 *
 *   BENCH_TXS=1000000 npm run bench     (default 1,000,000 txs; results go to bench/RESULTS.md by hand)
 *   BENCH_PAGE (default 1000), BENCH_SHARD_BLOCKS (default 30000), BENCH_MULTI_BLOCKS (default 10000),
 *   BENCH_PARTS: a comma list of startup, throughput, sharding, multi, memory, gentle (default all, in that
 *   order, so one run prints the start-up ratios, the throughput and sharding ratios, the
 *   multi-dataset ratios, the peak RSS at 512MB (20k and 50k blocks of ordinary txs, 2k and 5k of
 *   txs of 20 kB; page 1000 × concurrency 4 and 16), and the
 *   offsets skipped), BENCH_GENTLE_BLOCKS (default 20000, ~2 txs a block),
 *   BENCH_REPEAT (default 2: floor/export pairs, and twice that many parallel sharding runs),
 *   BENCH_MEMORY_LIMIT (default 512MB), BENCH_MEMORY_PAYLOAD (default 20000 bytes a large tx),
 *   BENCH_WORKERS: a comma list of shard worker counts the throughput and multi-dataset parts
 *   export with (export --workers; default 0: the main thread pages and writes), each against the
 *   same floor
 *   BENCH_LATENCY_MS (default 20) and BENCH_MULTI_CONCURRENCY (default 16): the multi-dataset part's
 *   latency and concurrency (e.g. 100 and 4 on 2 cores, to see a client's own waits where CPU does not bound them),
 *   BENCH_MULTI_SERVERS (default "devnet,replay"): which servers the multi-dataset part runs against
 *   ("replay" alone halves its time, for a lent machine's short budget),
 *   BENCH_TRACE=1 (and BENCH_SMOKE=1): the multi-dataset part ends with one more run of each client against the replay,
 *   printed as a timeline of its requests (when they came, how many were in flight),
 *   BENCH_CORES: a comma list of core counts (e.g. 2,4,16): the whole bench runs once per count,
 *   pinned to that many cores with taskset (the devnets it starts too), so that one call measures
 *   the scaling curve
 *   BENCH_SMOKE=1: every part at a size of seconds (2,000 txs, page 100, one repeat, 100 blocks
 *   of each kind of tx for memory, the parts in one process; bench/smoke.ts), which test/bench-smoke.test.ts
 *   runs; BENCH_* sizes still apply
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Worker } from "node:worker_threads"
import { Agent, request } from "undici"
import { Effect } from "effect"
import { exportLayer } from "../src/cli/layers.js"
import { blocks } from "../src/datasets/blocks.js"
import { txs } from "../src/datasets/txs.js"
import type { Dataset } from "../src/engine/Dataset.js"
import { runExport } from "../src/engine/export.js"
import { parseMemorySize } from "../src/lake/writer.js"
import { shardWorkerModule } from "../src/pipelines/layers.js"
import { SMOKE, size, smokeBanner } from "./smoke.js"
import { median } from "./stats.js"

const TXS = size("BENCH_TXS", 1_000_000, 2_000)
/** which parts to run: "throughput", "sharding" or both (default) */
const PARTS = (process.env.BENCH_PARTS ?? "startup,throughput,sharding,multi,memory,gentle").split(",")
const PAGE = size("BENCH_PAGE", 1000, 100)
const CONCURRENCY = 8
/** floor/export pairs, and (×2) parallel sharding runs; the median is reported */
const REPEAT = size("BENCH_REPEAT", 2, 1)
/** shard worker counts the throughput and multi-dataset parts export with */
const WORKERS = (process.env.BENCH_WORKERS ?? "0").split(",").map(Number)
/** the cores this run is pinned to (BENCH_CORES), as a label */
const CORES_LABEL = process.env.BENCH_PINNED ? ` on ${process.env.BENCH_PINNED} cores` : ""
/** A goal, as printed beside a measure: none at smoke size, where a ratio of a few pages means nothing. */
const goal = (text: string) => (SMOKE ? "smoke size: not a measure" : `goal ${text}`)

/** the multi-dataset part's latency and concurrency (chain-lake's and the plain fetch's): a longer latency at a lower concurrency shows a client's own waits on few cores, where CPU bounds the default */
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20)
const MULTI_CONCURRENCY = Number(process.env.BENCH_MULTI_CONCURRENCY ?? 16)
const MULTI_SERVERS = (process.env.BENCH_MULTI_SERVERS ?? "devnet,replay").split(",")

/** µs a devnet adds per row an offset skips (the real indexer's OFFSET scans them) */
const OFFSET_ROW_US = Number(process.env.BENCH_OFFSET_ROW_US ?? 1)

const startDevnetProcess = (args: Array<string>): Promise<{ child: ChildProcess; url: string }> =>
  new Promise((resolve, reject) => {
    // (no response cache: the plain fetch and the walk, which do not ask afresh, would be answered
    // from it for the pages chain-lake asked in the second before)
    const child = spawn(
      process.execPath,
      ["bin/chain-lake.mjs", "devnet", "--no-response-cache", "--offset-row-us", String(OFFSET_ROW_US), ...args],
      {
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    let out = ""
    child.stdout!.on("data", (d) => {
      out += d
      const m = /indexer_url=(\S+)/.exec(out)
      if (m && /router_url=/.test(out)) resolve({ child, url: m[1] })
    })
    child.on("exit", (code) => reject(new Error(`devnet exited ${code}`)))
  })

let peakRss = 0
/** the JS heap (V8's total) at its peak: RSS less this is DuckDB, buffers and code */
let peakHeap = 0
/** memory V8 knows of outside its heap (response bodies as ArrayBuffers, native objects it tracks) */
let peakExternal = 0
const sampler = setInterval(() => {
  const m = process.memoryUsage()
  peakRss = Math.max(peakRss, m.rss)
  peakHeap = Math.max(peakHeap, m.heapTotal)
  peakExternal = Math.max(peakExternal, m.external)
}, 50).unref() // (a run pinned per core count ends with its children; this process must not outlive them)

/** A constructed cursor: the rows after `n` (sequence n is position n - 1; blocks start at height 1). */
const cursorAfter = (field: "sequence" | "height", n: number) =>
  encodeURIComponent(Buffer.from(JSON.stringify({ [field]: n })).toString("base64"))

/** The floor: every page fetched (undici, keep-alive) by constructed cursor and JSON.parsed, concurrently; nothing stored. */
const floor = async (url: string, total: number) => {
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1 })
  let bytes = 0
  let rows = 0
  const pages = Math.ceil(total / PAGE)
  let next = 0
  const worker = async () => {
    for (;;) {
      const p = next++
      if (p >= pages) return
      const res = await request(
        `${url}/indexer/tx/v1/txs?pagination.key=${cursorAfter("sequence", p * PAGE)}&pagination.limit=${PAGE}&pagination.reverse=false`,
        { dispatcher: agent }
      )
      const text = await res.body.text()
      bytes += text.length
      rows += (JSON.parse(text) as { txs: Array<unknown> }).txs.length
    }
  }
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const seconds = (performance.now() - t0) / 1000
  await agent.close()
  return { seconds, bytes, rows }
}

const exportRun = async (
  url: string,
  options: {
    concurrency: number
    pageSize: number
    dataset?: Dataset
    datasets?: ReadonlyArray<Dataset>
    memoryLimit?: string | undefined
    workers?: number
  }
) => {
  const dataset = options.dataset ?? txs
  const catalog = options.datasets ?? [dataset]
  const out = mkdtempSync(join(tmpdir(), "chain-lake-bench-"))
  peakRss = process.memoryUsage().rss
  peakHeap = process.memoryUsage().heapTotal
  peakExternal = process.memoryUsage().external
  const cpu0 = process.cpuUsage()
  const loop0 = performance.eventLoopUtilization()
  const t0 = performance.now()
  const report = await Effect.runPromise(
    runExport(catalog, { pageSize: options.pageSize, concurrency: options.concurrency }).pipe(
      Effect.provide(
        exportLayer({
          indexerUrl: url,
          out,
          limits: { concurrency: options.concurrency, rps: 0 },
          workers: options.workers ?? 0,
          ...(options.memoryLimit ? { memoryLimitBytes: parseMemorySize(options.memoryLimit) } : {})
        })
      )
    )
  )
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const rows = report.datasets.reduce((n, d) => n + d.rows, 0)
  rmSync(out, { recursive: true, force: true })
  return {
    seconds,
    rows,
    bytes: report.datasets.reduce((n, d) => n + d.bytes, 0),
    peakRss,
    peakHeap,
    peakExternal,
    /** µs of CPU per row: the exporter's main thread, and the whole process (DuckDB's threads too) */
    mainUsPerRow: (performance.eventLoopUtilization(loop0).active * 1000) / rows,
    cpuUsPerRow: (cpu.user + cpu.system) / rows
  }
}

/** BENCH_CORES: the bench again, once per core count, pinned with taskset (its children inherit the pinning). */
const pinnedRuns = (cores: ReadonlyArray<number>) => {
  for (const n of cores) {
    console.log(`# pinned to ${n} cores (taskset -c 0-${n - 1})`)
    const r = spawnSync("taskset", ["-c", `0-${n - 1}`, process.execPath, ...process.execArgv, process.argv[1]], {
      stdio: "inherit",
      env: { ...process.env, BENCH_CORES: "", BENCH_PINNED: String(n) }
    })
    if (r.status !== 0) throw new Error(`the bench pinned to ${n} cores exited ${r.status}${r.error ? `: ${r.error.message}` : ""}`)
  }
}

const main = async () => {
  if (process.env.BENCH_CORES) return pinnedRuns(process.env.BENCH_CORES.split(",").map(Number))
  // DuckDB's native module loads where the sink first needs it (start-up, issue 17): loaded here
  // once, so that timed runs measure the export and not a one-off import, as before that change
  await import("@duckdb/node-api")
  // the sources' shard worker is bundled on first use (0.4–1.7 s, once per state of the sources):
  // done here, so that no timed run pays for it
  if (WORKERS.some((w) => w > 0)) shardWorkerModule()
  smokeBanner("export bench")
  const blockCount = Math.ceil(TXS / 10)
  console.log(`# export bench: ~${TXS} txs (${blockCount} blocks × ~10), page ${PAGE}, concurrency ${CONCURRENCY}, node ${process.version}`)
  // start-up first, on a quiet machine: the CLI's own bench (bench/startup-bench.ts)
  if (PARTS.includes("startup"))
    await new Promise<void>((resolve, reject) =>
      spawn(process.execPath, ["--import", "tsx", "bench/startup-bench.ts"], { stdio: "inherit" }).on("exit", (code) =>
        code === 0 ? resolve() : reject(new Error(`startup bench exited ${code}`))
      )
    )
  if (PARTS.includes("throughput")) await throughput(blockCount)
  // each part in a fresh process: after a 1M-row export the heap left behind (major GCs of a
  // large old generation) slowed the latency-bound sharding run by a quarter. A smoke run keeps
  // them in this one: a few thousand rows leave no such heap, and a process start (~3 s on a busy
  // machine) was a third of its time
  const here = PARTS.length === 1 || SMOKE
  if (PARTS.includes("sharding")) here ? await sharding() : await inFreshProcess("sharding")
  if (PARTS.includes("multi")) here ? await multi() : await inFreshProcess("multi")
  if (PARTS.includes("gentle")) here ? await gentle() : await inFreshProcess("gentle")
  // each size in its own process, so that one peak does not carry into the other (the CLI's peak is
  // measured in its own process anyway; what carries over is this process's devnet)
  if (PARTS.includes("memory")) {
    const stale = await staleBuild()
    if (stale && !SMOKE) throw new Error(`the memory part measures the CLI as users run it: ${stale}`)
    if (process.env.BENCH_MEMORY_BLOCKS) await memory(Number(process.env.BENCH_MEMORY_BLOCKS), Number(process.env.BENCH_MEMORY_RECORD ?? 0))
    else if (SMOKE) for (const payload of [0, MEMORY_PAYLOAD]) await memory(100, payload)
    else
      for (const [kind, sizes] of Object.entries(MEMORY_SIZES))
        for (const blocks of sizes)
          await inFreshProcess("memory", {
            BENCH_MEMORY_BLOCKS: String(blocks),
            BENCH_MEMORY_RECORD: String(kind === "large" ? MEMORY_PAYLOAD : 0)
          })
  }
  clearInterval(sampler)
}

/**
 * Why bin/chain-lake.mjs would run src/ through tsx instead of dist/, or undefined: a source
 * changed after the build. That run peaks ~60–100 MB higher (tsx's loader and the modules one by
 * one): at --memory-limit 512MB, five of eight memory runs past the limit, none from dist/.
 */
const staleBuild = async (): Promise<string | undefined> => {
  const root = join(import.meta.dirname, "..")
  const { isCurrentBuild } = (await import(join(root, "bin", "freshness.mjs"))) as {
    isCurrentBuild: (root: string, builtFrom: unknown) => boolean
  }
  let builtFrom: unknown
  try {
    builtFrom = (JSON.parse(readFileSync(join(root, "dist", "build.json"), "utf8")) as { builtFrom?: unknown }).builtFrom
  } catch {
    return "there is no dist/build.json (npm run build)"
  }
  return isCurrentBuild(root, builtFrom) ? undefined : "dist/ is older than src/ (npm run build)"
}

const inFreshProcess = (part: string, env: Record<string, string> = {}) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]], {
      stdio: "inherit",
      env: { ...process.env, BENCH_PARTS: part, ...env }
    })
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`bench part ${part} exited ${code}`))))
  })

const throughput = async (blockCount: number) => {
  const big = await startDevnetProcess(["--blocks", String(blockCount), "--txs-per-block", "10", "--seed", "7"])
  try {
    const status = (await (await fetch(big.url + "/status")).json()) as { height: number }
    const total = Number(
      ((await (await fetch(big.url + "/indexer/tx/v1/txs?pagination.limit=1")).json()) as { pagination: { total: string } }).pagination
        .total
    )
    console.log(`devnet: ${status.height} blocks, ${total} txs`)
    await floor(big.url, Math.min(total, 20 * PAGE)) // warm-up
    // floor and export alternate, REPEAT pairs: the machine's speed drifts (a shared VM), and a
    // pair run back to back sees the same drift
    const ratios: Array<number> = []
    for (let pair = 1; pair <= REPEAT; pair++) {
      const f = await floor(big.url, total)
      console.log(
        `[${pair}] floor (fetch + JSON.parse): ${f.rows} rows in ${f.seconds.toFixed(1)} s = ${Math.round(f.rows / f.seconds)} rows/s, ${(f.bytes / 1e6 / f.seconds).toFixed(1)} MB/s`
      )
      for (const workers of WORKERS) {
        const e = await exportRun(big.url, {
          concurrency: CONCURRENCY,
          pageSize: PAGE,
          memoryLimit: process.env.BENCH_MEMORY_LIMIT,
          workers
        })
        const label = `[${pair}] export txs → Parquet${CORES_LABEL}${workers > 0 ? ` (--workers ${workers})` : ""}`
        console.log(
          `${label}: ${e.rows} rows in ${e.seconds.toFixed(1)} s = ${Math.round(e.rows / e.seconds)} rows/s, ${(f.bytes / 1e6 / e.seconds).toFixed(1)} MB/s of JSON, ` +
            `${(e.bytes / 1e6).toFixed(1)} MB Parquet, peak RSS ${(e.peakRss / 1e6).toFixed(0)} MB; ` +
            `CPU per row: main thread ${e.mainUsPerRow.toFixed(1)} µs, process ${e.cpuUsPerRow.toFixed(1)} µs`
        )
        if (workers === WORKERS[0]) ratios.push(e.seconds / f.seconds)
        console.log(`${label}: ratio export / floor: ${(e.seconds / f.seconds).toFixed(2)}×`)
      }
    }
    console.log(
      `ratio export / floor: median ${median(ratios).toFixed(2)}× of ${ratios.map((r) => r.toFixed(2)).join(", ")} (${goal("≤ 1.3×")})`
    )
  } finally {
    big.child.kill("SIGINT")
  }
}

/** the limit the memory part holds the CLI to (the goal: the peak stays under it) */
const MEMORY_LIMIT = process.env.BENCH_MEMORY_LIMIT ?? "512MB"
/** bytes of payload in each tx of the memory part's large records (`chain-lake devnet --tx-payload-bytes`) */
const MEMORY_PAYLOAD = size("BENCH_MEMORY_PAYLOAD", 20_000, 20_000)
/** the two data sizes of each kind of record, in blocks (~4 txs a block): ordinary txs, and txs of MEMORY_PAYLOAD bytes */
const MEMORY_SIZES = { ordinary: [20_000, 50_000], large: [2_000, 5_000] } as const

/**
 * Memory: peak RSS of `chain-lake export --datasets txs --page-size 1000 --concurrency C` run as a
 * user runs it (its own process, measured by /usr/bin/time) against a devnet of `blockCount`
 * blocks (its default mix, ~4 txs per block) whose txs carry `payload` bytes each (0: ordinary
 * txs, ~3 kB on the wire), at --memory-limit MEMORY_LIMIT (default 512MB) with concurrency 4 and
 * 16; for ordinary txs also at the default limit, concurrency 16 (the runs of earlier sessions);
 * for large ones also txs and evm_txs together at concurrency 16 (evm_txs reads the txs again, to
 * link receipts to their cosmos txs). Each line says whether the peak stayed under the limit.
 */
const memory = async (blockCount: number, payload: number) => {
  const devnet = await startDevnetProcess(["--blocks", String(blockCount), "--seed", "7", "--tx-payload-bytes", String(payload)])
  const limitBytes = parseMemorySize(MEMORY_LIMIT)!
  const records = payload > 0 ? `txs of ${payload} B payload` : "ordinary txs"
  try {
    // a smoke run exports once per concurrency, under the limit
    const runs: Array<readonly [string | undefined, number, string]> = [
      [MEMORY_LIMIT, 4, "txs"],
      [MEMORY_LIMIT, 16, "txs"],
      ...(payload > 0 ? [[MEMORY_LIMIT, 16, "txs,evm_txs"] as const] : SMOKE ? [] : [[undefined, 16, "txs"] as const])
    ]
    for (const [limit, concurrency, datasets] of runs) {
      const out = mkdtempSync(join(tmpdir(), "chain-lake-bench-mem-"))
      const args = [
        "-f",
        "%M %e",
        process.execPath,
        "bin/chain-lake.mjs",
        "export",
        "--indexer-url",
        devnet.url,
        "--out",
        out,
        "--datasets",
        datasets,
        "--page-size",
        "1000",
        "--concurrency",
        String(concurrency),
        "--rps",
        "0",
        ...(limit ? ["--memory-limit", limit] : [])
      ]
      const r = spawnSync("/usr/bin/time", args, { encoding: "utf8" })
      rmSync(out, { recursive: true, force: true })
      if (r.error)
        throw new Error(`${r.error.message}: the memory part measures through /usr/bin/time (BENCH_PARTS without memory skips it)`)
      if (r.status !== 0) throw new Error(`export failed: ${r.stderr}`)
      const [kb, seconds] = r.stderr.trim().split("\n").pop()!.split(" ").map(Number)
      const peak = kb * 1024
      const verdict = limit ? (peak < limitBytes ? `, under the limit (${SMOKE ? "smoke size" : "goal"})` : `, PAST the limit`) : ""
      console.log(
        `memory: chain-lake export of ${blockCount} blocks' ${datasets.replace(",", " and ")} (${records}), page 1000 × concurrency ${concurrency}, --memory-limit ${limit ?? "default"}: peak RSS ${(kb / 1024).toFixed(0)} MB in ${seconds.toFixed(1)} s${verdict}`
      )
    }
  } finally {
    devnet.child.kill("SIGINT")
  }
}

const sharding = async () => {
  // Blocks, whose pages are cheap to serve: the single-threaded devnet must not be the bottleneck,
  // so that the measure is what sharding does against per-request latency.
  const SHARD_BLOCKS = size("BENCH_SHARD_BLOCKS", 30_000, 400)
  const slow = await startDevnetProcess(["--blocks", String(SHARD_BLOCKS), "--txs-per-block", "4", "--seed", "7", "--latency-ms", "50"])
  try {
    const seq = await exportRun(slow.url, { concurrency: 1, pageSize: 100, dataset: blocks })
    // the sequential walk takes ~17 s and varies little; the 1.5 s parallel runs vary more, so
    // they (and the ceiling) run REPEAT × 2 times and the median counts
    const par: Array<number> = []
    for (let i = 0; i < REPEAT * 2; i++) par.push((await exportRun(slow.url, { concurrency: 16, pageSize: 100, dataset: blocks })).seconds)
    // the ceiling: the same pages fetched by 16 plain workers (what the server itself can do)
    const pages = Math.ceil(SHARD_BLOCKS / 100)
    const ceilings: Array<number> = []
    for (let i = 0; i < REPEAT * 2; i++) {
      let next = 0
      const t0 = performance.now()
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let p = next++; p < pages; p = next++)
            await (
              await fetch(
                `${slow.url}/indexer/block/v1/blocks?pagination.key=${cursorAfter("height", p * 100)}&pagination.limit=100&pagination.reverse=false`
              )
            ).text()
        })
      )
      ceilings.push((performance.now() - t0) / 1000)
    }
    const speedUps = par.map((p) => seq.seconds / p)
    console.log(
      `sharding at 50 ms latency, blocks, page 100, ${seq.rows} rows: sequential ${seq.seconds.toFixed(1)} s, concurrency 16 ${par.map((p) => p.toFixed(2)).join(" / ")} s → ` +
        `median ${median(speedUps).toFixed(1)}× (${Math.min(...speedUps).toFixed(1)}–${Math.max(...speedUps).toFixed(1)}×; ${goal("≥ 12×")}); ` +
        `plain fetch of the same pages by 16 workers: median ${median(ceilings).toFixed(2)} s → ceiling ${(seq.seconds / median(ceilings)).toFixed(1)}×`
    )
  } finally {
    slow.child.kill("SIGINT")
  }
}

/** Every page of a list walked by its cursor, one request at a time: what a user writes by hand. */
const cursorWalkByHand = async (url: string, path: string, arrayKey: string) => {
  let key: string | null = null
  let rows = 0
  do {
    const res = await fetch(
      `${url}${path}?pagination.limit=100&pagination.reverse=false${key ? `&pagination.key=${encodeURIComponent(key)}` : ""}`
    )
    const page = (await res.json()) as Record<string, unknown> & { pagination: { next_key: string | null } }
    rows += (page[arrayKey] as Array<unknown>).length
    key = page.pagination.next_key
  } while (key !== null)
  return rows
}

/** The same pages fetched by `concurrency` plain workers (constructed cursors, fetch + JSON.parse): what the server itself can do. */
const plainFetch = async (
  url: string,
  lists: ReadonlyArray<{ path: string; cursor: "sequence" | "height"; rows: number }>,
  concurrency = MULTI_CONCURRENCY
) => {
  const pages = lists.flatMap((l) =>
    Array.from(
      { length: Math.ceil(l.rows / 100) },
      (_, p) => `${url}${l.path}?pagination.key=${cursorAfter(l.cursor, p * 100)}&pagination.limit=100&pagination.reverse=false`
    )
  )
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let p = next++; p < pages.length; p = next++) JSON.parse(await (await fetch(pages[p])).text())
    })
  )
}

/**
 * BENCH_TRACE: one run's requests as the replay served them (arrived, answered; epoch ms), from
 * `t0` to `t1`: when the first request and the first page came, the requests in flight in each
 * tenth of a second, when the last was answered, and the requests that were not pages.
 */
const requestTimeline = (label: string, served: ReadonlyArray<[number, number, string]>, t0: number, t1: number) => {
  const at = (t: number) => `${Math.round(t - t0)}`
  // (a probe asks with no key: a request with one is a shard's page, its last one of fewer rows too)
  const isPage = (url: string) => /pagination\.(key|offset)=/.test(url)
  const pages = served.filter(([, , u]) => isPage(u))
  const inFlight = Array.from({ length: Math.ceil((t1 - t0) / 100) }, (_, b) => {
    const [from, to] = [t0 + b * 100, t0 + (b + 1) * 100]
    return served.reduce((n, [a, e]) => n + Math.max(0, Math.min(e, to) - Math.max(a, from)), 0) / 100
  })
  // a shard's pages: the one after (list, key k, limit l) is (list, key k + l), for the keys of these lists (a height or a sequence)
  const keyed = new Map<string, [number, number, string]>()
  const keyOf = (url: string) => {
    const u = new URL(url, "http://replay")
    const key = u.searchParams.get("pagination.key")
    if (!key) return undefined
    const k = Object.values(JSON.parse(Buffer.from(key, "base64").toString()) as Record<string, number>)[0]
    return { list: u.pathname, k: Number(k), limit: Number(u.searchParams.get("pagination.limit")) }
  }
  const keys = pages.map((r) => ({ r, p: keyOf(r[2]) }))
  for (const { r, p } of keys) if (p) keyed.set(`${p.list} ${p.k}`, r)
  // from a page's answer to the request of the shard's next page (its key is in the answer: a
  // request before it is another shard's first page)
  const waits = keys.flatMap(({ r, p }) => {
    const next = p && keyed.get(`${p.list} ${p.k + p.limit}`)
    return next && next[0] >= r[1] - 1 ? [next[0] - r[1]] : []
  })
  const sorted = [...waits].sort((x, y) => x - y)
  const pct = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1) : "-")
  // each list's shards: when their first pages were asked (none answered before leads to it: the
  // shard before ends where it starts) and their last answered (none asked after follows it)
  const leader = new Map(keys.flatMap(({ r, p }) => (p ? [[`${p.list} ${p.k + p.limit}`, r] as const] : [])))
  const shards = [...new Set(keys.flatMap(({ p }) => (p ? [p.list] : [])))].map((list) => {
    const of = keys.filter(({ p }) => p?.list === list)
    const span = (xs: Array<number>) => {
      const o = xs.sort((x, y) => x - y)
      return `${at(o[0])}–${at(o[o.length - 1])} ms (median ${at(o[Math.floor(o.length / 2)])})`
    }
    const firsts = of.filter(({ r, p }) => !((leader.get(`${list} ${p!.k}`)?.[1] ?? Infinity) <= r[0] + 1)).map(({ r }) => r[0])
    const lasts = of.filter(({ r, p }) => !((keyed.get(`${list} ${p!.k + p!.limit}`)?.[0] ?? -Infinity) >= r[1] - 1)).map(({ r }) => r[1])
    return `  ${list.split("/").pop()}: ${firsts.length} shards, first pages asked ${span(firsts)}, last answered ${span(lasts)}`
  })
  return [
    `trace of ${label}: ${served.length} requests (${pages.length} pages) in ${at(t1)} ms; first request at ${at(Math.min(...served.map((r) => r[0])))} ms, ` +
      `first page at ${at(Math.min(...pages.map((r) => r[0])))}, last answer at ${at(Math.max(...served.map((r) => r[1])))}`,
    `  in flight per 100 ms: ${inFlight.map((n) => n.toFixed(0)).join(" ")}`,
    ...(label.startsWith("plain")
      ? []
      : [
          `  a shard's next page asked after its page's answer: ${waits.length} pages; ms after the answer: p10 ${pct(0.1)}, median ${pct(0.5)}, p90 ${pct(0.9)}, max ${pct(1)}`,
          ...shards
        ]),
    ...served.filter(([, , u]) => !isPage(u)).map(([a, e, u]) => `  ${at(a)}–${at(e)} ms ${u.slice(0, 110)}`)
  ].join("\n")
}

/**
 * BENCH_TRACE: when the run's shard workers were made, were online (their thread running) and
 * ready (their module's layer built: the "ready" message the run waits for), in ms from `t0`.
 */
const workerStarts = (t0: number) => {
  const now = () => Math.round(performance.timeOrigin + performance.now() - t0)
  const seen: Array<{ made: number; online?: number; ready?: number }> = []
  const onWorker = (worker: Worker) => {
    const times: { made: number; online?: number; ready?: number } = { made: now() }
    seen.push(times)
    worker.once("online", () => (times.online = now()))
    const ready = (m: { type?: string }) => {
      if (m?.type !== "ready") return
      times.ready = now()
      worker.off("message", ready)
    }
    worker.on("message", ready)
  }
  process.on("worker", onWorker)
  const list = (k: "made" | "online" | "ready") => seen.map((t) => t[k] ?? "-").join(" ")
  return { seen, list, stop: () => process.off("worker", onWorker) }
}

/** The replay server (bench/replay-server.ts) in front of `origin`, in its own process. */
const startReplay = (origin: string, latencyMs: number): Promise<{ child: ChildProcess; url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/replay-server.ts", origin, String(latencyMs)], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout!.on("data", (d) => {
      const m = /url=(\S+)/.exec(String(d))
      if (m) resolve({ child, url: m[1] })
    })
    child.on("exit", (code) => reject(new Error(`replay server exited ${code}`)))
  })

/**
 * A whole multi-dataset export (blocks + txs at page 100, 20 ms latency): chain-lake against a
 * sequential cursor walk by hand and a plain concurrent fetch of the same pages, in one run, against
 * two servers: the devnet itself (its pages rendered on the same 2 cores as the client), and a
 * replay of it (bench/replay-server.ts: every answer kept, served again after the latency), which
 * answers as a remote indexer on its own hardware does, taking none of the client's CPU.
 */
const multi = async () => {
  const MULTI_BLOCKS = size("BENCH_MULTI_BLOCKS", 10_000, 100)
  const chain = ["--blocks", String(MULTI_BLOCKS), "--txs-per-block", "4", "--seed", "7"]
  const origin = await startDevnetProcess(chain)
  const replay = await startReplay(origin.url, LATENCY_MS)
  const devnet = MULTI_SERVERS.includes("devnet") ? await startDevnetProcess([...chain, "--latency-ms", String(LATENCY_MS)]) : undefined
  try {
    const txCount = Number(
      ((await (await fetch(origin.url + "/indexer/tx/v1/txs?pagination.limit=1")).json()) as { pagination: { total: string } }).pagination
        .total
    )
    const time = async (f: () => Promise<unknown>) => {
      const t0 = performance.now()
      await f()
      return (performance.now() - t0) / 1000
    }
    const lists = [
      { path: "/indexer/block/v1/blocks", cursor: "height" as const, rows: MULTI_BLOCKS },
      { path: "/indexer/tx/v1/txs", cursor: "sequence" as const, rows: txCount }
    ]
    const walk = async (url: string) => {
      await cursorWalkByHand(url, "/indexer/block/v1/blocks", "blocks")
      await cursorWalkByHand(url, "/indexer/tx/v1/txs", "txs")
    }
    const lakeRun = async (url: string, workers = WORKERS[0]) =>
      (await exportRun(url, { concurrency: MULTI_CONCURRENCY, pageSize: 100, datasets: [blocks, txs], workers })).seconds
    // the replay learns every page each client asks for, once
    await walk(replay.url)
    await plainFetch(replay.url, lists)
    await lakeRun(replay.url)
    const servers: Array<[string, string]> = [
      ...(devnet ? [["the devnet (server on the same cores)", devnet.url] as [string, string]] : []),
      ["a replay of it (a remote server's CPU)", replay.url]
    ]
    for (const [label, url] of servers) {
      await plainFetch(url, [{ ...lists[0], rows: 2000 }]) // warm-up
      const sequential = await time(() => walk(url))
      const plain: Array<number> = []
      const lake = new Map<number, Array<number>>(WORKERS.map((w) => [w, []]))
      // alternating, REPEAT × 2 times each: the medians count
      for (let i = 0; i < REPEAT * 2; i++) {
        plain.push(await time(() => plainFetch(url, lists)))
        for (const w of WORKERS) lake.get(w)!.push(await lakeRun(url, w))
      }
      for (const [workers, runs] of lake) {
        const m = median(runs)
        console.log(
          `multi-dataset against ${label}${CORES_LABEL}, ${LATENCY_MS} ms latency, blocks + txs (${MULTI_BLOCKS} + ${txCount} rows), page 100: sequential cursor walk ${sequential.toFixed(1)} s; ` +
            `plain fetch by ${MULTI_CONCURRENCY} workers ${plain.map((p) => p.toFixed(2)).join(" / ")} s; chain-lake${workers > 0 ? ` --workers ${workers}` : ""} ${runs.map((p) => p.toFixed(2)).join(" / ")} s → ` +
            `${(sequential / m).toFixed(1)}× the sequential walk (${goal("≥ 6×")}), ${(m / median(plain)).toFixed(2)}× the plain fetch (${goal("≤ 1.3×")})`
        )
      }
    }
    // (at the smoke size too, so that the timeline cannot rot)
    if (process.env.BENCH_TRACE || SMOKE) {
      const served = async () => (await (await fetch(replay.url + "/__requests")).json()) as Array<[number, number, string]>
      const runs: Array<[string, () => Promise<unknown>]> = [
        ["plain fetch", () => plainFetch(replay.url, lists)],
        ...WORKERS.map((w): [string, () => Promise<unknown>] => [
          `chain-lake${w > 0 ? ` --workers ${w}` : ""}`,
          () => lakeRun(replay.url, w)
        ])
      ]
      for (const [label, run] of runs) {
        await served()
        const t0 = performance.timeOrigin + performance.now()
        const starts = workerStarts(t0)
        await run()
        starts.stop()
        console.log(requestTimeline(`${label}${CORES_LABEL}`, await served(), t0, performance.timeOrigin + performance.now()))
        if (starts.seen.length > 0)
          console.log(
            `  shard workers made at ms ${starts.list("made")}; online at ${starts.list("online")}; ready at ${starts.list("ready")}`
          )
      }
    }
  } finally {
    devnet?.child.kill("SIGINT")
    origin.child.kill("SIGINT")
    replay.child.kill("SIGINT")
  }
}

/**
 * Gentle on the indexer (issue 36): blocks + txs, then blocks + the three tx families, of
 * BENCH_GENTLE_BLOCKS blocks (~2 txs a block) exported with the defaults against a devnet in
 * this process that counts the rows its offsets skip (what the real indexer's SQL OFFSET scans
 * to throw away) and charges OFFSET_ROW_US µs for each; then each export again with everything
 * committed. Prints the rows skipped against the tables' lengths, the requests and the seconds.
 */
const gentle = async () => {
  const GENTLE_BLOCKS = size("BENCH_GENTLE_BLOCKS", 20_000, 200)
  const { startDevnet } = await import("../src/devnet/index.js")
  const { DATASETS } = await import("../src/datasets/index.js")
  const devnet = await startDevnet({ seed: 7, blocks: GENTLE_BLOCKS, txsPerBlock: 2, offsetRowUs: OFFSET_ROW_US })
  const c = devnet.chain
  const run = async (datasets: ReadonlyArray<string>, out: string) => {
    const before = devnet.stats()
    const t0 = performance.now()
    await Effect.runPromise(
      runExport(DATASETS, { datasets }).pipe(
        Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out, limits: { concurrency: 8, rps: 0 } }))
      )
    )
    const after = devnet.stats()
    return `${after.offsetRowsSkipped - before.offsetRowsSkipped} rows skipped through offsets, ${after.requests - before.requests} requests, ${((performance.now() - t0) / 1000).toFixed(1)} s`
  }
  try {
    const tables = `txs ${c.txTotal()}, evm txs ${c.evmTotal()}, internal txs ${c.traceTotal()}`
    for (const datasets of [
      ["blocks", "txs"],
      ["blocks", "txs", "evm_txs", "evm_internal_txs"]
    ]) {
      const out = mkdtempSync(join(tmpdir(), "chain-lake-bench-gentle-"))
      const first = await run(datasets, out)
      const again = await run(datasets, out)
      rmSync(out, { recursive: true, force: true })
      console.log(
        `gentle: ${datasets.join(" + ")} of ${GENTLE_BLOCKS} blocks (${tables}), defaults, offsets at ${OFFSET_ROW_US} µs a row: export ${first}; rerun with everything committed ${again}`
      )
    }
  } finally {
    await devnet.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
