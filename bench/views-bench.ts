/**
 * Views benchmark (opt-in: `npm run bench:views`): every analytics view over the Parquet lake
 * against the same SQL over native DuckDB tables loaded from the same files, in one run.
 * Goal (issue 36): all views over Parquet ≤ 1.3× the same over native tables.
 *   BENCH_BLOCKS=20000 npm run bench:views     BENCH_RUNS (default 5)
 *   BENCH_COMPACT=1: the lake compacted first (`chain-lake compact`, as an analyst's lake or a
 *   `--follow --compact-after` one is), so that both sides read the same rows from fewer files
 *   BENCH_SMOKE=1: 60 blocks, one run (bench/smoke.ts; test/bench-smoke.test.ts runs it)
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { analyticsViews, createAnalyticsViews, LAKE_DATASETS } from "../src/analytics/Analytics.js"
import { datasetViewSql } from "../src/analytics/viewSql.js"
import { compactLake } from "../src/lake/compaction.js"
import { listedFiles } from "../src/lake/listed.js"
import { layerLake } from "../src/lake/writer.js"
import { exportLayer } from "../src/cli/layers.js"
import { DATASETS } from "../src/datasets/index.js"
import { startDevnet } from "../src/devnet/index.js"
import { runExport } from "../src/engine/export.js"
import { SMOKE, size, smokeBanner } from "./smoke.js"
import { median } from "./stats.js"

const BLOCKS = size("BENCH_BLOCKS", 20_000, 60)
const RUNS = size("BENCH_RUNS", 5, 1)

const timeOnce = async (conn: DuckDBConnection, view: string) => {
  const t0 = performance.now()
  await conn.runAndReadAll(`SELECT count(*) FROM (SELECT * FROM ${view})`)
  return performance.now() - t0
}

/**
 * Each view's runs over Parquet and over tables alternate, RUNS pairs, and each side's median
 * counts: the machine's speed drifts (a shared VM), and a pair run back to back sees the same
 * drift, where all Parquet runs then all native ones did not.
 */
const timeViews = async (parquet: DuckDBConnection, native: DuckDBConnection, views: Array<string>) => {
  const out = new Map<string, { parquet: number; native: number }>()
  for (const v of views) {
    const p: Array<number> = []
    const n: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      p.push(await timeOnce(parquet, v))
      n.push(await timeOnce(native, v))
    }
    out.set(v, { parquet: median(p), native: median(n) })
  }
  return out
}

const main = async () => {
  smokeBanner("views bench")
  const data = mkdtempSync(join(tmpdir(), "chain-lake-views-"))
  const devnet = await startDevnet({ seed: 7, blocks: BLOCKS, txsPerBlock: 10 })
  try {
    await Effect.runPromise(
      runExport(DATASETS, { pageSize: 1000 }).pipe(
        Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out: data, limits: { concurrency: 8, rps: 0 } }))
      )
    )
  } finally {
    await devnet.stop()
  }
  // twice: the files a compaction replaces wait out their grace period; with grace 0 the next deletes them
  if (process.env.BENCH_COMPACT)
    for (let i = 0; i < 2; i++) await Effect.runPromise(compactLake(DATASETS, { graceMs: 0 }).pipe(Effect.provide(layerLake(data))))
  const views = analyticsViews()
  const names = views.map((v) => v.name)

  const parquet = await (await DuckDBInstance.create(":memory:")).connect()
  if (!process.env.BENCH_NO_METADATA_CACHE) {
    await parquet.run("LOAD parquet")
    await parquet.run("SET parquet_metadata_cache = true")
  }
  await parquet.run(`SET file_search_path = '${data}'`)
  let files = 0
  for (const d of LAKE_DATASETS) {
    const listed = await listedFiles(data, d.name, d.columns)
    if (listed && "paths" in listed) files += listed.paths.length
    await parquet.run(datasetViewSql(d, data, listed))
  }
  // the analytics views as chain-lake query makes them: each after the views it reads
  await createAnalyticsViews((sql) => parquet.run(sql))

  const native = await (await DuckDBInstance.create(":memory:")).connect()
  await native.run(`SET file_search_path = '${data}'`)
  // each dataset's view made a table: the same rows, loaded into DuckDB's own storage (a view that
  // is not a dataset's, token_transfers over its two halves, stays a view over those tables)
  for (const d of LAKE_DATASETS) {
    const view = datasetViewSql(d, data, await listedFiles(data, d.name, d.columns))
    const table = view.replace(/^CREATE OR REPLACE VIEW "(\w+)" AS/, 'CREATE TABLE "$1" AS')
    if (table === view)
      throw new Error(`datasetViewSql's statement for ${d.name} no longer starts as this bench expects: ${view.slice(0, 80)}`)
    await native.run(table)
  }
  await createAnalyticsViews((sql) => native.run(sql))

  const txs = Number((await native.runAndReadAll("SELECT count(*) FROM txs")).getRows()[0][0])
  // an export that wrote nothing would time empty views, at any size
  if (txs === 0) throw new Error("the export wrote no txs: nothing to measure")
  const times = await timeViews(parquet, native, names)
  console.log(
    `# views over Parquet vs native tables: ${BLOCKS} blocks, ${txs} txs, ${files} files${process.env.BENCH_COMPACT ? " (the lake compacted)" : ""}, median of ${RUNS} alternating runs, node ${process.version}`
  )
  console.log("| view | Parquet ms | native ms | ratio |")
  console.log("|---|---|---|---|")
  let sumP = 0
  let sumN = 0
  for (const v of names) {
    const t = times.get(v)!
    sumP += t.parquet
    sumN += t.native
    console.log(`| ${v} | ${t.parquet.toFixed(1)} | ${t.native.toFixed(1)} | ${(t.parquet / t.native).toFixed(2)}× |`)
  }
  console.log(
    `| all views | ${sumP.toFixed(1)} | ${sumN.toFixed(1)} | ${(sumP / sumN).toFixed(2)}× ${SMOKE ? "(smoke size: not a measure)" : "(goal ≤ 1.3×)"} |`
  )
  rmSync(data, { recursive: true, force: true })
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
