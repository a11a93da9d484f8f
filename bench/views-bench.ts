/**
 * Views benchmark (opt-in: `npm run bench:views`): every analytics view over the Parquet lake
 * against the same SQL over native DuckDB tables loaded from the same files, in one run.
 * Goal: Parquet ≤ 2× native.   BENCH_BLOCKS=20000 npm run bench:views
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { analyticsViews, datasetViewSql, LAKE_DATASETS } from "../src/analytics/Analytics.js"
import { listedFiles } from "../src/lake/listed.js"
import { exportLayer } from "../src/cli/layers.js"
import { DATASETS } from "../src/datasets/index.js"
import { startDevnet } from "../src/devnet/index.js"
import { runExport } from "../src/engine/export.js"
import { median } from "./stats.js"

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 20_000)
const RUNS = 5

const timeQueries = async (conn: DuckDBConnection, views: Array<string>) => {
  const out = new Map<string, number>()
  for (const v of views) {
    const times: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      await conn.runAndReadAll(`SELECT count(*) FROM (SELECT * FROM ${v})`)
      times.push(performance.now() - t0)
    }
    out.set(v, median(times))
  }
  return out
}

const main = async () => {
  const data = mkdtempSync(join(tmpdir(), "chain-lake-views-"))
  const devnet = await startDevnet({ seed: 7, blocks: BLOCKS, txsPerBlock: 10 })
  try {
    await Effect.runPromise(runExport(DATASETS, { pageSize: 1000 }).pipe(Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out: data, limits: { concurrency: 8, rps: 0 } }))))
  } finally {
    await devnet.stop()
  }
  const views = analyticsViews()
  const names = views.map((v) => v.name)

  const parquet = await (await DuckDBInstance.create(":memory:")).connect()
  await parquet.run(`SET file_search_path = '${data}'`)
  for (const d of LAKE_DATASETS) await parquet.run(datasetViewSql(d, data, await listedFiles(data, d.name)))
  for (const v of views) await parquet.run(v.sql)

  const native = await (await DuckDBInstance.create(":memory:")).connect()
  await native.run(`SET file_search_path = '${data}'`)
  for (const d of LAKE_DATASETS) {
    await native.run(datasetViewSql(d, data, await listedFiles(data, d.name)).replace(/^CREATE OR REPLACE VIEW "(\w+)" AS/, 'CREATE TABLE "$1" AS'))
  }
  for (const v of views) await native.run(v.sql)

  const txs = Number((await native.runAndReadAll("SELECT count(*) FROM txs")).getRows()[0][0])
  const p = await timeQueries(parquet, names)
  const n = await timeQueries(native, names)
  console.log(`# views over Parquet vs native tables: ${BLOCKS} blocks, ${txs} txs, median of ${RUNS} runs`)
  console.log("| view | Parquet ms | native ms | ratio |")
  console.log("|---|---|---|---|")
  let sumP = 0
  let sumN = 0
  for (const v of names) {
    sumP += p.get(v)!
    sumN += n.get(v)!
    console.log(`| ${v} | ${p.get(v)!.toFixed(1)} | ${n.get(v)!.toFixed(1)} | ${(p.get(v)! / n.get(v)!).toFixed(2)}× |`)
  }
  console.log(`| all views | ${sumP.toFixed(1)} | ${sumN.toFixed(1)} | ${(sumP / sumN).toFixed(2)}× (goal ≤ 2×) |`)
  rmSync(data, { recursive: true, force: true })
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
