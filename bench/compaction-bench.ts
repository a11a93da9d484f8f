/**
 * Compaction benchmark (opt-in: `npm run bench:compaction`): a day-like lake, one small commit per
 * follow round (BENCH_ROUNDS rounds of BENCH_BLOCKS_PER_ROUND blocks, as `export --follow` makes
 * them), queried before and after `compactLake`, in one run: the views chain-lake's query makes
 * (the manifests' file lists) and a plain glob over each folder, medians of 5.
 *   BENCH_ROUNDS=2000 BENCH_BLOCKS_PER_ROUND=4 npm run bench:compaction
 *   BENCH_SMOKE=1: 3 rounds, one run per query (bench/smoke.ts; test/bench-smoke.test.ts runs it)
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { createAnalyticsViews, LAKE_DATASETS } from "../src/analytics/Analytics.js"
import { datasetViewSql } from "../src/analytics/viewSql.js"
import { listedFiles } from "../src/lake/listed.js"
import { exportLayer } from "../src/cli/layers.js"
import { DATASETS } from "../src/datasets/index.js"
import { startDevnet } from "../src/devnet/index.js"
import { runExport } from "../src/engine/export.js"
import { compactLake } from "../src/lake/compaction.js"
import { listFiles } from "../src/lake/files.js"
import { layerLake } from "../src/lake/writer.js"
import { size, smokeBanner } from "./smoke.js"
import { median } from "./stats.js"

const ROUNDS = size("BENCH_ROUNDS", 2000, 3)
const PER_ROUND = size("BENCH_BLOCKS_PER_ROUND", 4, 4)
/** runs of each query; the median counts */
const RUNS = size("BENCH_RUNS", 5, 1)
const DATASETS_FOLLOWED = ["blocks", "txs"]
const QUERIES: Record<string, string> = {
  "count txs": "SELECT count(*) FROM txs",
  "txs per day (view daily_activity)": "SELECT count(*) FROM daily_activity",
  "blocks in a height range": "SELECT count(*), max(timestamp) FROM blocks WHERE height BETWEEN 1000 AND 1100",
  "top senders": "SELECT sender_address, count(*) n FROM txs GROUP BY 1 ORDER BY 2 DESC LIMIT 10"
}

/** Views over the lake as `chain-lake query` makes them (each manifest's files), and the same over a plain glob. */
const connect = async (data: string, glob: boolean): Promise<DuckDBConnection> => {
  const conn = await (await DuckDBInstance.create(":memory:")).connect()
  await conn.run(`SET file_search_path = '${data}'`)
  for (const d of LAKE_DATASETS) {
    const sql = datasetViewSql(d, data, await listedFiles(data, d.name, d.columns))
    await conn.run(
      glob && DATASETS_FOLLOWED.includes(d.name)
        ? `CREATE OR REPLACE VIEW "${d.name}" AS SELECT * FROM read_parquet('${d.name}/**/*.parquet', hive_partitioning = true, union_by_name = true)`
        : sql
    )
  }
  // every view made, each after those it reads, or the bench fails: a view that could not be made
  // was skipped here before, and a query of it failed far from the cause
  await createAnalyticsViews((sql) => conn.run(sql))
  return conn
}

const time = async (conn: DuckDBConnection, sql: string) => {
  const times: Array<number> = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    await conn.runAndReadAll(sql)
    times.push(performance.now() - t0)
  }
  return median(times)
}

const measure = async (data: string) => {
  const out: Record<string, { manifest: number; glob: number }> = {}
  const viaManifest = await connect(data, false)
  const viaGlob = await connect(data, true)
  for (const [name, sql] of Object.entries(QUERIES)) out[name] = { manifest: await time(viaManifest, sql), glob: await time(viaGlob, sql) }
  return out
}

const parquetFiles = async (data: string) =>
  (await Promise.all(DATASETS_FOLLOWED.map((d) => listFiles(join(data, d))))).flat().filter((f) => f.endsWith(".parquet")).length

const main = async () => {
  smokeBanner("compaction bench")
  const data = mkdtempSync(join(tmpdir(), "chain-lake-compaction-"))
  const devnet = await startDevnet({ seed: 11, blocks: ROUNDS * PER_ROUND, txsPerBlock: 4 })
  const built = performance.now()
  try {
    const layer = exportLayer({ indexerUrl: devnet.indexerUrl, out: data, limits: { concurrency: 4, rps: 0 } })
    await Effect.runPromise(
      Effect.gen(function* () {
        for (let round = 1; round <= ROUNDS; round++)
          yield* runExport(DATASETS, { datasets: DATASETS_FOLLOWED, toHeight: round * PER_ROUND, pageSize: 1000 })
      }).pipe(Effect.provide(layer))
    )
  } finally {
    await devnet.stop()
  }
  const buildS = (performance.now() - built) / 1000
  const filesBefore = await parquetFiles(data)
  const before = await measure(data)
  const t0 = performance.now()
  const reports = await Effect.runPromise(
    compactLake(
      DATASETS.filter((d) => DATASETS_FOLLOWED.includes(d.name)),
      { graceMs: 0 }
    ).pipe(Effect.provide(layerLake(data)))
  )
  const compactS = (performance.now() - t0) / 1000
  // the replaced files wait out their grace period outside the folders; with grace 0 the next compaction deletes them
  await Effect.runPromise(
    compactLake(
      DATASETS.filter((d) => DATASETS_FOLLOWED.includes(d.name)),
      { graceMs: 0 }
    ).pipe(Effect.provide(layerLake(data)))
  )
  const filesAfter = await parquetFiles(data)
  // before and after must differ, or the table compares a lake with itself (at any size)
  if (filesAfter >= filesBefore)
    throw new Error(`compaction replaced no file (${filesBefore} before, ${filesAfter} after): nothing to compare`)
  const after = await measure(data)
  console.log(`lake: ${ROUNDS} follow rounds × ${PER_ROUND} blocks (${ROUNDS * PER_ROUND} blocks), built in ${buildS.toFixed(0)} s`)
  console.log(
    `files of ${DATASETS_FOLLOWED.join(" and ")}: ${filesBefore} before, ${filesAfter} after; compaction took ${compactS.toFixed(1)} s (${reports.map((r) => `${r.dataset} ${r.filesBefore}→${r.filesAfter}`).join(", ")})`
  )
  console.log("| query | before: manifest views | before: glob | after: manifest views | after: glob | speed-up (views) |")
  console.log("|---|---|---|---|---|---|")
  for (const name of Object.keys(QUERIES)) {
    const b = before[name]
    const a = after[name]
    console.log(
      `| ${name} | ${b.manifest.toFixed(0)} ms | ${b.glob.toFixed(0)} ms | ${a.manifest.toFixed(0)} ms | ${a.glob.toFixed(0)} ms | ${(b.manifest / a.manifest).toFixed(1)}× |`
    )
  }
  rmSync(data, { recursive: true, force: true })
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
