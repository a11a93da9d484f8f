/**
 * Making the lake's views on the analytics' connection: one per dataset (viewSql.ts), `snapshots`,
 * then the analytics views; a dataset whose files cannot be read gets a view that fails every
 * query with its problem, and the views are made again when a compaction moved a listed file away.
 */
import { existsSync } from "node:fs"
import { isAbsolute, join, relative } from "node:path"
import { Effect } from "effect"
import type { GuardedConnection } from "../lake/duckdb.js"
import { changedFile, listedFiles, type ListedFiles } from "../lake/listed.js"
import { quoteIdent } from "../lake/sql.js"
import { createAnalyticsViews, datasetsRead, LAKE_DATASETS } from "./lakeViewList.js"
import { AnalyticsError, SqlError } from "./types.js"
import { datasetViewSql, snapshotsViewSql } from "./viewSql.js"

/** Where a user finds a damaged file DuckDB did not name (verify says its own line in its place). */
export const VERIFY_NAMES_IT = "chain-lake verify names the damaged file"

/** DuckDB's first line without its error class, nor the file it names first (the line names it), cut at 200 characters (it may quote the bytes it read). */
const duckdbWhy = (message: string) => {
  const why = message
    .split("\n")[0]
    .replace(/^[A-Za-z ]+ Error: /, "")
    .replace(/^Failed to read file ["'][^"']+["']: /, "")
  return why.length > 200 ? `${why.slice(0, 199)}…` : why
}

/** The one line of a lake file that cannot be read: which (a file, or a dataset's files), why in DuckDB's words, and what to do. */
const cannotRead = (what: string, why: string, dataset: string | undefined, named: boolean) =>
  `${what} cannot be read (${why}): ${named ? "the file is damaged" : VERIFY_NAMES_IT}; restore it from a copy, or export ${dataset ?? "its dataset"} again into a new folder`

/** The line every query of a dataset whose view could not be made fails with, naming the file whose bytes are not its commit's where one is found. */
const unreadableProblem = (dataset: string, duckdbMessage: string, changed: string | undefined) =>
  changed === undefined
    ? cannotRead(`${dataset}: its committed files`, duckdbWhy(duckdbMessage), dataset, false)
    : cannotRead(changed, duckdbWhy(duckdbMessage), dataset, true)

/**
 * DuckDB failing to decode a Parquet file: its words name the file, or only what broke; a page
 * header that does not decode is thrift's error, which DuckDB's class "Invalid Error" carries and
 * SQL never raises.
 */
const DAMAGE =
  /^Invalid Error: |Parquet file|Failed to read file|Could not read enough bytes from file|TProtocolException|Out of buffer|[Dd]ecompression failure/
const NAMED_FILE = /["']([^"']+\.parquet)["']/

/**
 * The line a query fails with when a file of the lake is damaged inside (its view was made from
 * its intact footer; the damage shows when its rows are read), or undefined for any other error.
 * The query reads nothing but the lake (database.ts confines it), so every Parquet file it fails
 * to decode is one of the lake's: the line names it, as DuckDB does, or else the first committed
 * file whose bytes are not its commit's (listed.ts `changedFile`).
 */
const damagedFileLine = async (message: string, dataDir: string, sql: string): Promise<string | undefined> => {
  // DuckDB's first line only: later lines echo the SQL, which may name a lake file itself
  const first = message.split("\n")[0]
  if (!DAMAGE.test(first)) return undefined
  const named = NAMED_FILE.exec(first)?.[1]
  const relativePath = named === undefined ? undefined : isAbsolute(named) ? relative(dataDir, named) : named
  const inLake =
    relativePath !== undefined && !relativePath.startsWith("..") && !isAbsolute(relativePath) && existsSync(join(dataDir, relativePath))
  // the datasets the SQL names (through views too), or every one where it names none (it reads files by path)
  const read = datasetsRead(sql)
  const path = inLake ? relativePath : await changedFile(dataDir, read.length > 0 ? read : LAKE_DATASETS.map((d) => d.name))
  return path === undefined
    ? cannotRead("a committed file of the lake", duckdbWhy(message), undefined, false)
    : cannotRead(path, duckdbWhy(message), path.split("/")[0], true)
}

export interface ViewOptions {
  /** the data folder as the connection knows it */
  readonly dataDir: string
  /** views read the files a manifest lists when each query runs (the catalog) */
  readonly live: boolean
  /** paths in full, not relative to the data folder (a confined DuckDB) */
  readonly absolute: boolean
  /** the files of the datasets it names, found once (AnalyticsOptions.pinned) */
  readonly pinned?: ReadonlyMap<string, ListedFiles>
}

/** A file listed when the views were made is gone (a compaction's swap): the views are made again (afresh, below). */
export const vanished = (e: { readonly message: string }) =>
  /No files found that match the pattern|No such file or directory/.test(e.message)

/**
 * What a query may meet while a compaction swaps files: a listed file gone, or the catalog's guard
 * (viewSql.ts) seeing the swap halfway, its merged file listed and staged but not yet in place,
 * each looked at a moment apart. Both pass once the swap is done; a manifest whose files an export
 * stopped halfway left staged still fails after every try.
 */
const meetsSwap = (e: { readonly message: string }) => vanished(e) || /files its _manifest\.json lists are not in place/.test(e.message)

/*
 * The views list the files committed when they were made; a compaction may replace some of them
 * later (moving them out of the folder): a query that then finds a listed file gone makes the
 * views again from the manifests and runs again (meetsSwap), so it reads the old files or the new ones
 * (a compaction of many datasets may swap several times while the views are made: 10 tries).
 */
const afresh = <A, E extends { readonly message: string }, E2 extends { readonly message: string }>(
  run: Effect.Effect<A, E>,
  remake: Effect.Effect<void, E2>,
  mayRunAgain: () => boolean = () => true,
  attempts = 10
): Effect.Effect<A, E | E2> =>
  Effect.catchIf(
    run,
    (e) => attempts > 1 && meetsSwap(e) && mayRunAgain(),
    () => Effect.zipRight(remake, afresh(run, remake, mayRunAgain, attempts - 1))
  )

/** The view of one dataset over the files its manifest lists (`listed`). */
const datasetView = async (conn: GuardedConnection, d: (typeof LAKE_DATASETS)[number], listed: ListedFiles, options: ViewOptions) => {
  const { dataDir, live, absolute } = options
  await conn.use((c) => c.run(datasetViewSql(d, dataDir, listed, live, [], absolute)))
  // files written before a column was added lack it (union_by_name gives NULL only where some
  // file has it): the view adds it as NULL, so views that read it still bind
  const present = new Set(
    (await conn.use((c) => c.runAndReadAll(`DESCRIBE ${quoteIdent(d.name)}`))).getRowObjectsJson().map((r) => String(r.column_name))
  )
  const absent = d.columns.filter((c) => !present.has(c.name))
  if (absent.length > 0) await conn.use((c) => c.run(datasetViewSql(d, dataDir, listed, live, absent, absolute)))
}

/** Makes every view, recording in `problems` those of the datasets whose views fail every query. */
const makeAllViews = async (conn: GuardedConnection, options: ViewOptions, problems: Set<string>) => {
  const { dataDir, absolute } = options
  problems.clear()
  for (const d of LAKE_DATASETS) {
    const listed = options.pinned?.has(d.name) ? options.pinned.get(d.name) : await listedFiles(dataDir, d.name, d.columns)
    if (listed !== undefined && "problem" in listed) problems.add(listed.problem)
    /*
     * A view binds its files' schemas when it is made: a damaged file (cut short, overwritten)
     * fails it there. That dataset's view then fails every query with the problem, and every
     * other view is made as usual: one bad file never takes the whole lake down. A file a
     * compaction moved away meanwhile is not damage: the views are made again (afresh).
     */
    await datasetView(conn, d, listed, options).catch(async (e: Error) => {
      if (vanished(e)) throw e
      const problem = unreadableProblem(d.name, e.message, await changedFile(dataDir, [d.name]))
      problems.add(problem)
      await conn.use((c) => c.run(datasetViewSql(d, dataDir, { problem }, false, [], absolute)))
    })
  }
  await conn.use((c) => c.run(snapshotsViewSql(dataDir, absolute)))
  await createAnalyticsViews((sql) => conn.use((c) => c.run(sql)))
}

/**
 * Makes the views (again while a compaction's swap moves files away); answers the problems of the
 * datasets whose views fail every query, as of the last time the views were made, and `read`, which
 * runs a query of the views: made again and run again when it finds a listed file gone, and failing
 * on a view with a problem with the problem alone.
 */
export const makeLakeViews = (conn: GuardedConnection, options: ViewOptions) =>
  Effect.gen(function* () {
    // the problems of the datasets whose views fail every query (listedFiles), as of the last time the views were made
    const problems = new Set<string>()
    /** A query that failed on the view of a dataset with a problem fails with the problem alone, as one line (not DuckDB's "Invalid Input Error: …"). */
    const plainly = (e: SqlError, sql: string): Effect.Effect<SqlError> => {
      for (const p of problems) if (e.message.includes(p)) return Effect.succeed(new SqlError({ message: p, lake: true }))
      const guard = /^Invalid Input Error: (\w+: \d+ of the \d+ files its _manifest\.json lists are not in place .*)$/.exec(e.message)
      if (guard) return Effect.succeed(new SqlError({ message: guard[1], lake: true }))
      return Effect.promise(() => damagedFileLine(e.message, options.dataDir, sql)).pipe(
        Effect.map((damaged) => (damaged ? new SqlError({ message: damaged, lake: true }) : e))
      )
    }
    const makeViews = Effect.tryPromise({
      try: () => makeAllViews(conn, options, problems),
      catch: (e) => new AnalyticsError({ message: `creating the views failed: ${(e as Error).message}` })
    })
    yield* afresh(makeViews, Effect.void)
    // making them again may meet another swap too
    const remakeViews = afresh(
      Effect.mapError(makeViews, (e) => new SqlError({ message: e.message, lake: true })),
      Effect.void
    )
    return {
      problems: (): ReadonlyArray<string> => [...problems],
      /** `query` runs `sql`; `mayRunAgain`: whether it may be run again after a swap (not once it handed rows on). */
      read: <A, E extends { readonly _tag: string; readonly message: string }>(
        query: Effect.Effect<A, SqlError | E>,
        sql: string,
        mayRunAgain?: () => boolean
      ): Effect.Effect<A, SqlError | E> =>
        afresh(query, remakeViews, mayRunAgain).pipe(
          Effect.catchAll(
            (e): Effect.Effect<never, SqlError | E> =>
              e instanceof SqlError ? Effect.flatMap(plainly(e, sql), Effect.fail) : Effect.fail(e)
          )
        )
    }
  })
