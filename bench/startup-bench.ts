/**
 * Start-up benchmark (opt-in: `npm run bench:startup`; not part of `npm test`).
 *
 * Each command line runs REPEAT times, interleaved with a bare `node -e 0` (the floor, measured in
 * the same run), and the medians are compared: wall time and peak RSS (from /usr/bin/time where
 * the machine has it). The CLI runs as a user runs it, `node bin/chain-lake.mjs …`: from dist/
 * when the build is fresh (npm install builds it), else from src/ through tsx
 * (CHAIN_LAKE_FROM_SOURCE=1 forces that, to compare).
 *
 *   npm run bench:startup                 BENCH_REPEAT (default 15)
 *   BENCH_SMOKE=1: each command line once (bench/smoke.ts; test/bench-smoke.test.ts runs it)
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { size, smokeBanner } from "./smoke.js"
import { median } from "./stats.js"

smokeBanner("start-up bench")
const REPEAT = size("BENCH_REPEAT", 15, 1)
const TIME = "/usr/bin/time"
const haveTime = existsSync(TIME)

/** One run: wall ms and peak RSS in MB (NaN without /usr/bin/time). */
const once = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}, status = 0): { ms: number; rssMb: number } => {
  const started = performance.now()
  const r = haveTime
    ? spawnSync(TIME, ["-f", "%M", process.execPath, ...args], { encoding: "utf8", env: { ...process.env, ...env } })
    : spawnSync(process.execPath, args, { encoding: "utf8", env: { ...process.env, ...env } })
  const ms = performance.now() - started
  if (r.status !== status) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  const rssKb = haveTime ? Number(r.stderr.trim().split("\n").pop()) : NaN
  return { ms, rssMb: rssKb / 1024 }
}

const lake = mkdtempSync(join(tmpdir(), "chain-lake-startup-"))
// a lake with one tiny dataset, so that `query` opens DuckDB over real views
const made = spawnSync(
  process.execPath,
  ["bin/chain-lake.mjs", "export", "--devnet", "--out", lake, "--datasets", "blocks", "--devnet-blocks", "20", "--to-height", "20"],
  { encoding: "utf8" }
)
// without it the query case would time DuckDB failing on a missing lake, not start-up
if (made.status !== 0) throw new Error(`the lake for the query case could not be made (exit ${made.status}): ${made.stderr}`)

const cases: ReadonlyArray<{
  readonly label: string
  readonly args: ReadonlyArray<string>
  readonly env?: NodeJS.ProcessEnv
  readonly status?: number
}> = [
  { label: "chain-lake --help", args: ["bin/chain-lake.mjs", "--help"] },
  { label: "chain-lake --version", args: ["bin/chain-lake.mjs", "--version"] },
  { label: "chain-lake export --help", args: ["bin/chain-lake.mjs", "export", "--help"] },
  { label: "chain-lake export --datasets nope (refused)", args: ["bin/chain-lake.mjs", "export", "--datasets", "nope"], status: 2 },
  { label: "chain-lake query (DuckDB, views)", args: ["bin/chain-lake.mjs", "query", "--data", lake, "SELECT count(*) FROM blocks"] },
  { label: "chain-lake --help, from src/ through tsx", args: ["bin/chain-lake.mjs", "--help"], env: { CHAIN_LAKE_FROM_SOURCE: "1" } }
]

const floor: Array<{ ms: number; rssMb: number }> = []
const results = cases.map(() => [] as Array<{ ms: number; rssMb: number }>)
for (let i = 0; i < REPEAT; i++) {
  floor.push(once(["-e", "0"]))
  cases.forEach((c, k) => {
    results[k].push(once(c.args, c.env, c.status))
  })
}
rmSync(lake, { recursive: true, force: true })

const floorMs = median(floor.map((r) => r.ms))
const floorRss = median(floor.map((r) => r.rssMb))
console.log(`node -e 0: ${floorMs.toFixed(0)} ms, ${floorRss.toFixed(0)} MB (median of ${REPEAT})`)
console.log("command                                      median ms  × node  peak RSS MB")
cases.forEach((c, k) => {
  const ms = median(results[k].map((r) => r.ms))
  const rss = median(results[k].map((r) => r.rssMb))
  console.log(
    `${c.label.padEnd(44)} ${ms.toFixed(0).padStart(9)}  ${(ms / floorMs).toFixed(1).padStart(6)}  ${Number.isNaN(rss) ? "-" : rss.toFixed(0).padStart(11)}`
  )
})
