/**
 * Analytics: DuckDB over the Parquet lake. One view per dataset over its committed files (as its
 * manifest lists them now; for the catalog, as it lists them when a query runs), read with
 * `read_parquet(…, hive_partitioning = true, union_by_name = true)`, paths relative to the data
 * folder, then the analytics views of src/analytics/sql/, one per file. A dataset with no files
 * yet is an empty view with the right columns, so every analytics view exists from the start.
 *
 * Its parts: the DuckDB and its sandbox (database.ts), the views' SQL (viewSql.ts) and their
 * making (views.ts), and running a query that reads (readOnlyQuery.ts).
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer } from "effect"
import { IDENTITY_FILE, MANIFEST_FILE } from "../lake/manifest.js"
import { openAnalyticsDatabase } from "./database.js"
import { analyticsViews, LAKE_DATASETS } from "./lakeViewList.js"
import { type AnalyticsError, type AnalyticsOptions, type ParamValue, type QueryResult, SqlError } from "./types.js"
import { copyQueryToParquet, runQuery, streamQuery, type ShownRows } from "./readOnlyQuery.js"
import { makeLakeViews, vanished } from "./views.js"

export { AnalyticsError, SqlError, realPathOf, type AnalyticsOptions, type ParamValue, type QueryResult } from "./types.js"
export { analyticsViews, createAnalyticsViews, datasetsRead, firstSentence, LAKE_DATASETS, SNAPSHOTS_DESCRIPTION } from "./lakeViewList.js"
export type { ShownRows } from "./readOnlyQuery.js"

export interface AnalyticsService {
  readonly dataDir: string
  readonly views: ReadonlyArray<string>
  /** The problems of the datasets whose views fail every query (a manifest's files not in place, a damaged file), as of the last time the views were made. */
  readonly problems: () => ReadonlyArray<string>
  /** Runs one SQL statement with named parameters ($name) bound, never spliced. */
  readonly query: (sql: string, params?: Readonly<Record<string, ParamValue>>) => Effect.Effect<QueryResult, SqlError>
  /**
   * Runs one SQL statement as `query` does, handing its rows to `take` a chunk at a time as DuckDB
   * makes them (an answer too large to hold); a failure of `take` is an AnalyticsError.
   */
  readonly stream: (
    sql: string,
    params: Readonly<Record<string, ParamValue>>,
    take: (columns: QueryResult["columns"], rows: QueryResult["rows"]) => Promise<void>,
    /** where only the first rows are shown: the answer is read no further (its chunks hold whole rows, so a few more may be handed) */
    shown?: ShownRows
  ) => Effect.Effect<void, SqlError | AnalyticsError>
  /** Runs a query and writes its result as Parquet to `path` (COPY … FORMAT PARQUET). */
  readonly copyToParquet: (sql: string, params: Readonly<Record<string, ParamValue>>, path: string) => Effect.Effect<void, SqlError>
}

export class Analytics extends Context.Tag("chain-lake/Analytics")<Analytics, AnalyticsService>() {}

/** Whether `dir` holds a lake: the lake's identity, or a dataset folder with its manifest. */
export const isLake = (dir: string): boolean =>
  existsSync(join(dir, IDENTITY_FILE)) || LAKE_DATASETS.some((d) => existsSync(join(dir, d.name, MANIFEST_FILE)))

/** The name of every view the analytics make: the datasets', the snapshots', and the SQL views'. */
export const viewNames = (): ReadonlyArray<string> => [
  ...LAKE_DATASETS.map((d) => d.name),
  "snapshots",
  ...analyticsViews().map((v) => v.name)
]

export const makeAnalytics = (options: AnalyticsOptions) =>
  Effect.gen(function* () {
    const { dataDir, conn } = yield* openAnalyticsDatabase(options)
    const views = yield* makeLakeViews(conn, {
      dataDir,
      live: options.live ?? false,
      absolute: options.confine !== undefined,
      ...(options.pinned ? { pinned: options.pinned } : {})
    })
    const service: AnalyticsService = {
      dataDir,
      views: viewNames(),
      problems: views.problems,
      query: (sql, params = {}) => views.read(runQuery(conn, sql, params), sql),
      stream: (sql, params, take, shown) => {
        // rows handed on are not handed again: a swap met after them fails the query, not runs it again
        let handed = false
        const handing: typeof take = (columns, rows) => {
          handed = true
          return take(columns, rows)
        }
        return views
          .read(streamQuery(conn, sql, params, handing, shown), sql, () => !handed)
          .pipe(
            Effect.mapError((e) =>
              e instanceof SqlError && handed && vanished(e)
                ? new SqlError({
                    message:
                      "a compaction of the lake moved the files the query read while it ran (what it wrote is cut short): run it again",
                    lake: true
                  })
                : e
            )
          )
      },
      copyToParquet: (sql, params, path) => views.read(copyQueryToParquet(conn, sql, params, path), sql)
    }
    return service
  })

export const layerAnalytics = (options: AnalyticsOptions) => Layer.scoped(Analytics, makeAnalytics(options))
