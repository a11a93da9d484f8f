/**
 * A `.duckdb` catalog file holding every view, with paths relative to the data folder: any DuckDB
 * client (CLI, DBeaver, Python) opened with the data folder as its working directory queries the
 * views, also after the folder is moved or copied.
 */
import { rm } from "node:fs/promises"
import { resolve } from "node:path"
import { Effect } from "effect"
import { AnalyticsError, LAKE_DATASETS, makeAnalytics } from "./Analytics.js"
import { unfinishedCommits } from "../lake/listed.js"

export const DEFAULT_CATALOG = "chain-lake.duckdb"

export const writeCatalog = (options: { readonly dataDir: string; readonly dbFile?: string }) =>
  Effect.gen(function* () {
    const dbFile = resolve(options.dbFile ?? resolve(options.dataDir, DEFAULT_CATALOG))
    // a lake with listed files not in place is refused (and the catalog it had is kept): its views would fail every query of those datasets
    const unfinished = yield* Effect.promise(() =>
      unfinishedCommits(
        resolve(options.dataDir),
        LAKE_DATASETS.map((d) => d.name)
      )
    )
    if (unfinished !== undefined) return yield* new AnalyticsError({ message: unfinished })
    // a fresh file each time: views of datasets exported since are picked up
    yield* Effect.tryPromise({
      try: async () => {
        await rm(dbFile, { force: true })
        await rm(dbFile + ".wal", { force: true })
      },
      catch: (e) => new AnalyticsError({ message: `cannot replace ${dbFile}: ${(e as Error).message}` })
    })
    // read at each query: files committed later show in any client without writing the catalog again
    const analytics = yield* makeAnalytics({ dataDir: options.dataDir, dbFile, live: true })
    // a dataset whose files could not be read: its view fails every query, the others answer
    return { dbFile, views: analytics.views, problems: analytics.problems() }
  }).pipe(Effect.scoped)
