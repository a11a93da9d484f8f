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
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Context, Data, Effect, Layer } from "effect"
import { DATASETS } from "../datasets/index.js"
import { partitionOf } from "../engine/Dataset.js"
import type { Column } from "../lake/columns.js"
import { IDENTITY_FILE, MANIFEST_FILE } from "../lake/manifest.js"
import { openAnalyticsDatabase } from "./database.js"
import { copyQueryToParquet, runQuery } from "./readOnlyQuery.js"
import { makeLakeViews } from "./views.js"

export class AnalyticsError extends Data.TaggedError("AnalyticsError")<{ readonly message: string }> {}
/** DuckDB rejected the SQL (syntax, unknown column, bad parameter …): its own message. */
export class SqlError extends Data.TaggedError("SqlError")<{ readonly message: string }> {}

export interface QueryResult {
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>
  /** JSON-safe values: BIGINT, HUGEINT and DECIMAL as exact strings, times as ISO-like text */
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
}

export type ParamValue = string | number | bigint | boolean | null

export interface AnalyticsService {
  readonly dataDir: string
  readonly views: ReadonlyArray<string>
  /** The problems of the datasets whose views fail every query (a manifest's files not in place, a damaged file), as of the last time the views were made. */
  readonly problems: () => ReadonlyArray<string>
  /** Runs one SQL statement with named parameters ($name) bound, never spliced. */
  readonly query: (sql: string, params?: Readonly<Record<string, ParamValue>>) => Effect.Effect<QueryResult, SqlError>
  /** Runs a query and writes its result as Parquet to `path` (COPY … FORMAT PARQUET). */
  readonly copyToParquet: (sql: string, params: Readonly<Record<string, ParamValue>>, path: string) => Effect.Effect<void, SqlError>
}

export class Analytics extends Context.Tag("chain-lake/Analytics")<Analytics, AnalyticsService>() {}

const SQL_DIR = fileURLToPath(new URL("./sql/", import.meta.url))

/**
 * The analytics views, in file-name order: each file opens with a comment whose first sentence is
 * the question the view answers (`question`) and whose whole text says what its rows are
 * (`description`).
 */
export const analyticsViews = (): Array<{ name: string; question: string; description: string; sql: string }> =>
  readdirSync(SQL_DIR)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(SQL_DIR, f), "utf8")
      const description = sql
        .split("\n")
        .filter((l) => l.startsWith("--"))
        .map((l) => l.replace(/^--\s?/, ""))
        .join(" ")
      return { name: f.replace(/\.sql$/, ""), question: firstSentence(description), description, sql }
    })

/**
 * Creates every analytics view through `run` (one SQL statement at a time), each after the views
 * it reads: file-name order is not dependency order (account_activity and token_flows read
 * token_transfers, itself a view over two datasets), so each pass creates those whose inputs
 * exist. A pass that creates none fails naming the view whose own SQL is wrong, rather than one
 * that only waits for it. The one way views are made, for `chain-lake query` and the benches
 * alike, so that a bench cannot fall behind a view that starts reading another.
 */
export const createAnalyticsViews = async (run: (sql: string) => Promise<unknown>): Promise<void> => {
  let pending = analyticsViews()
  while (pending.length > 0) {
    const failed: Array<{ view: (typeof pending)[number]; error: Error }> = []
    for (const view of pending) await run(view.sql).catch((error: Error) => failed.push({ view, error }))
    if (failed.length === pending.length) {
      const cause = failed.find((f) => !/does not exist/i.test(f.error.message)) ?? failed[0]
      throw new Error(`view ${cause.view.name}: ${cause.error.message}`)
    }
    pending = failed.map((f) => f.view)
  }
}

/** Up to the first `?` or `.` that ends a sentence (followed by a space or the end). */
export const firstSentence = (text: string): string => /^.*?[?.](?=\s|$)/.exec(text)?.[0] ?? text

/** What the `snapshots` view (snapshotsViewSql) answers, for help and `chain-lake schema`. */
export const SNAPSHOTS_DESCRIPTION =
  "How was each snapshot read? One row per committed snapshot of holders, nft_collections and nft_tokens, from their manifests: exact (read while the watermark stood still, no pages overlapping) or best-effort, the watermarks it spans, reads, duplicates dropped and the lists the source did not have; join on (dataset, snapshot_height) to keep exact snapshots only."

/** Every dataset the lake can hold, with its columns and its hive partition column (from the registry). */
export const LAKE_DATASETS: ReadonlyArray<{
  readonly name: string
  readonly columns: ReadonlyArray<Column>
  readonly partition: string
  readonly partitionType: string
}> = DATASETS.map((d) => ({
  name: d.name,
  columns: d.columns,
  partition: partitionOf(d).name,
  partitionType: partitionOf(d).type
}))

/** The datasets a query reads, directly or through the analytics views it names (for "export these" hints). */
export const datasetsRead = (sql: string, depth = 3): ReadonlyArray<string> => {
  const words = new Set(sql.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [])
  const direct = LAKE_DATASETS.map((d) => d.name).filter((n) => words.has(n))
  const viaViews =
    depth > 0
      ? analyticsViews()
          .filter((v) => words.has(v.name))
          .flatMap((v) => datasetsRead(v.sql, depth - 1))
      : []
  return [...new Set([...direct, ...viaViews])].sort()
}

/** Whether `dir` holds a lake: the lake's identity, or a dataset folder with its manifest. */
export const isLake = (dir: string): boolean =>
  existsSync(join(dir, IDENTITY_FILE)) || LAKE_DATASETS.some((d) => existsSync(join(dir, d.name, MANIFEST_FILE)))

export interface AnalyticsOptions {
  readonly dataDir: string
  /** a DuckDB file to hold the views (the catalog); default in memory */
  readonly dbFile?: string
  /** views read the files a manifest lists when each query runs (new ones show by themselves) rather than as of now */
  readonly live?: boolean
  /**
   * Confines DuckDB to the lake (`chain-lake query`, whose SQL is the user's): DuckDB's own sandbox
   * (enable_external_access = false, allowed_directories = the lake, allowed_paths = `paths`,
   * then lock_configuration so SQL cannot undo it), within `memoryLimit`, spilling into a fresh
   * temporary folder that is removed at the end. Without it, `read_text('/etc/passwd')`,
   * `glob('/root/*')` and `read_text('/proc/self/environ')` answered. Not for the catalog, whose
   * views are for other clients and must keep relative paths.
   */
  readonly confine?: { readonly paths?: ReadonlyArray<string>; readonly memoryLimit?: string }
}

/**
 * The real path of `path`: DuckDB's sandbox compares the paths it opens after resolving links, so
 * a lake reached through a symlink (or a /tmp that is one) is allowed by its real path. A path not
 * there yet (an output file) is its nearest existing parent's real path plus the rest.
 */
export const realPathOf = (path: string): string => {
  const full = resolve(path)
  try {
    return realpathSync(full)
  } catch {
    const parent = dirname(full)
    return parent === full ? full : join(realPathOf(parent), basename(full))
  }
}

export const makeAnalytics = (options: AnalyticsOptions) =>
  Effect.gen(function* () {
    const { dataDir, conn } = yield* openAnalyticsDatabase(options)
    const views = yield* makeLakeViews(conn, { dataDir, live: options.live ?? false, absolute: options.confine !== undefined })
    const service: AnalyticsService = {
      dataDir,
      views: [...LAKE_DATASETS.map((d) => d.name), "snapshots", ...analyticsViews().map((v) => v.name)],
      problems: views.problems,
      query: (sql, params = {}) => views.read(runQuery(conn, sql, params)),
      copyToParquet: (sql, params, path) => views.read(copyQueryToParquet(conn, sql, params, path))
    }
    return service
  })

export const layerAnalytics = (options: AnalyticsOptions) => Layer.scoped(Analytics, makeAnalytics(options))
