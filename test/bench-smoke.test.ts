/**
 * Benches that cannot rot (issue 36): every bench of bench/ runs here as a user runs it (its npm
 * script, a real process) at its smoke size (BENCH_SMOKE=1, bench/smoke.ts: seconds, every part,
 * no goal judged), so a bench broken by a change elsewhere (a renamed column, a view that now reads
 * another, a CLI flag) fails CI, not the next person who wants a number. What is checked is that
 * each bench ends with 0 and prints each of its tables; never a ratio, which at a few hundred rows
 * means nothing.
 */
import { spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { afterAll, expect, it } from "vitest"
import { analyticsViews } from "../src/analytics/Analytics.js"
import { describeCli } from "./support/mutation.js"
import { tempDirs } from "./support/tmp.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const { make: tmp, removeAll } = tempDirs("chain-lake-bench-smoke-")
afterAll(removeAll)

/**
 * Far above what a smoke run takes (15–30 s on 2 busy cores), so only a hung bench hits it; the
 * test's own limit is longer still, so that the bench's output, not vitest's timeout, is reported.
 */
const BENCH_TIMEOUT_MS = 180_000
const TEST_TIMEOUT_MS = BENCH_TIMEOUT_MS + 10_000

const scripts = (JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { scripts: Record<string, string> }).scripts
const benchScripts = Object.entries(scripts).filter(([name]) => name === "bench" || name.startsWith("bench:"))
/** The benches: bench/*-bench.ts (replay-server.ts, stats.ts and smoke.ts are their helpers). */
const benchFiles = readdirSync(`${ROOT}bench`).filter((f) => f.endsWith("-bench.ts"))

/**
 * `npm run <script>` at smoke size, its output kept. BENCH_* sizes set where the suite runs are
 * dropped (a smoke run obeys them: one left from a real measure would make it take minutes). Its
 * temporary folder is the test's (removed after, whatever a failed bench left), and its process
 * group is killed on a timeout, so no devnet it started outlives the test.
 */
const runBench = (
  script: string,
  bench: Record<string, string> = {},
  timeoutMs = BENCH_TIMEOUT_MS
): Promise<{ code: number | null; out: string }> =>
  new Promise((resolve, reject) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("BENCH_")))
    const child = spawn("npm", ["run", "--silent", script], {
      cwd: ROOT,
      detached: true,
      env: { ...env, ...bench, BENCH_SMOKE: "1", TMPDIR: tmp(), NO_COLOR: "1" }
    })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (out += d))
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // the group ended meanwhile
      }
      reject(new Error(`npm run ${script} (BENCH_SMOKE=1) took over ${timeoutMs / 1000} s:\n${out.slice(-4000)}`))
    }, timeoutMs)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })

/** Ended with 0, and printed every line `expected` names (the tail of the output where not: the cause is there). */
const expectRan = (r: { code: number | null; out: string }, expected: ReadonlyArray<string | RegExp>) => {
  expect(r.code, r.out.slice(-4000)).toBe(0)
  for (const e of expected) expect(r.out, `missing ${e}\n${r.out.slice(-4000)}`).toMatch(e)
}

describeCli("every bench runs at its smoke size", () => {
  it("every bench/*-bench.ts has an npm script, and every bench script runs a file of bench/ that exists", () => {
    expect(benchFiles.length).toBeGreaterThanOrEqual(4)
    for (const f of benchFiles)
      expect(
        benchScripts.filter(([, cmd]) => cmd.includes(`bench/${f}`)),
        f
      ).toHaveLength(1)
    for (const [name, cmd] of benchScripts) {
      const file = /\bbench\/[\w-]+\.ts\b/.exec(cmd)?.[0]
      expect(file && existsSync(`${ROOT}${file}`), `${name}: ${cmd}`).toBe(true)
    }
    // the start-up bench runs as the export bench's first part (below), not a second time
    expect(scripts["bench:startup"]).toMatch(/bench\/startup-bench\.ts/)
  })

  // the three at once: much of each is waiting (latency the export bench adds, child processes)
  it.concurrent(
    "npm run bench: the export bench, every part (start-up, throughput, sharding, multi-dataset, memory)",
    async () => {
      expectRan(await runBench("bench"), [
        "export bench: SMOKE SIZE",
        // the start-up bench, in its own process: every command line it times
        "start-up bench: SMOKE SIZE",
        /^node -e 0: /m,
        /^chain-lake query \(DuckDB, views\) /m,
        /^chain-lake --help, from src\/ through tsx /m,
        /^ratio export \/ floor: .*smoke size: not a measure/m,
        /^sharding at 50 ms latency, blocks, page 100, 400 rows: /m,
        /^multi-dataset against the devnet .*: sequential cursor walk/m,
        /^multi-dataset against a replay of it .*: sequential cursor walk/m,
        /^memory: chain-lake export of 100 blocks' txs \(ordinary txs\), page 1000 × concurrency 4, --memory-limit 512MB: peak RSS \d+ MB/m,
        /^memory: chain-lake export of 100 blocks' txs \(txs of 20000 B payload\), page 1000 × concurrency 16, --memory-limit 512MB: peak RSS \d+ MB/m
      ])
    },
    TEST_TIMEOUT_MS
  )

  it.concurrent(
    "npm run bench pinned per core count (BENCH_CORES, as the scaling curve is measured): each pinned run prints its part, and the bench ends",
    async () => {
      expectRan(await runBench("bench", { BENCH_CORES: "1", BENCH_PARTS: "throughput", BENCH_WORKERS: "0,1" }), [
        /^# pinned to 1 cores \(taskset -c 0-0\)$/m,
        /^\[1\] export txs → Parquet on 1 cores: /m,
        /^\[1\] export txs → Parquet on 1 cores \(--workers 1\): /m
      ])
    },
    TEST_TIMEOUT_MS
  )

  it.concurrent(
    "npm run bench:views: every analytics view over Parquet and over native tables",
    async () => {
      expectRan(await runBench("bench:views"), [
        "views bench: SMOKE SIZE",
        ...analyticsViews().map((v) => new RegExp(`^\\| ${v.name} \\| [\\d.]+ \\| [\\d.]+ \\| `, "m")),
        /^\| all views \| .*smoke size: not a measure/m
      ])
    },
    TEST_TIMEOUT_MS
  )

  it.concurrent(
    "npm run bench:views on a compacted lake (BENCH_COMPACT=1): the lake compacted first, every view timed",
    async () => {
      expectRan(await runBench("bench:views", { BENCH_COMPACT: "1" }), [
        /^# views over Parquet vs native tables: .* \d+ files \(the lake compacted\)/m,
        ...analyticsViews().map((v) => new RegExp(`^\\| ${v.name} \\| [\\d.]+ \\| [\\d.]+ \\| `, "m"))
      ])
    },
    TEST_TIMEOUT_MS
  )

  it.concurrent(
    "npm run bench:compaction: every query before and after a compaction",
    async () => {
      expectRan(await runBench("bench:compaction"), [
        "compaction bench: SMOKE SIZE",
        /^files of blocks and txs: \d+ before, \d+ after/m,
        ...["count txs", "txs per day (view daily_activity)", "blocks in a height range", "top senders"].map((q) => `| ${q} | `)
      ])
    },
    TEST_TIMEOUT_MS
  )
})
