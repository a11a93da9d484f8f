/**
 * Analytics: DuckDB over the Parquet lake. One view per dataset over its committed files (as its
 * manifest lists them now; for the catalog, as it lists them when a query runs), read with
 * `read_parquet(…, hive_partitioning = true, union_by_name = true)`, paths relative to the data
 * folder, then the analytics views of src/analytics/sql/, one per file. A dataset with no files
 * yet is an empty view with the right columns, so every analytics view exists from the start.
 */
import type { DuckDBPreparedStatement } from "@duckdb/node-api"
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { Context, Data, Effect, Layer } from "effect"
import { DATASETS } from "../datasets/index.js"
import { partitionOf } from "../engine/Dataset.js"
import type { Column, ColumnType } from "../lake/columns.js"
import { guardConnection } from "../lake/duckdb.js"
import { IDENTITY_FILE, MANIFEST_FILE } from "../lake/manifest.js"
import { holdsParquet } from "../lake/files.js"
import { listedFiles, type ListedFiles } from "../lake/listed.js"
import { STAGING } from "../lake/layout.js"
import { quoteIdent, sqlString, sqlStringList } from "../lake/sql.js"

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

const emptyType = (t: ColumnType) => (t === "JSON" ? "JSON" : t)

/** The line every query of a dataset whose view could not be made fails with: DuckDB's first line, without its error class. */
export const unreadableProblem = (dataset: string, duckdbMessage: string) =>
  `${dataset}: its committed files cannot be read (${duckdbMessage.split("\n")[0].replace(/^[A-Za-z ]+ Error: /, "")}): a file is damaged; chain-lake verify names it; restore it from a copy, or export ${dataset} again into a new folder`

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

/** A column every row has as NULL, typed as the dataset declares it. */
const nullColumn = (c: Column) => `CAST(NULL AS ${emptyType(c.type)}) AS ${quoteIdent(c.name)}`

/**
 * The rows of the files a dataset's manifest lists when a query runs, among every Parquet file
 * under its folder then (a relative glob): for the catalog, whose views must show files committed
 * after it was written, and never a file the manifest does not list (one a compaction replaced,
 * kept for a while for readers that listed it; one not committed yet; one someone else put there).
 * A file is matched by its last three path parts (`<dataset>/<partition>/<file>`, the lake's
 * layout), so the catalog still works once the folder is moved; two parts also matched a copy of a
 * partition folder the user kept inside the dataset's folder (`blocks/backup/height_bucket=0/…`).
 */
const liveSource = (dataset: string) =>
  `(SELECT * EXCLUDE (filename) FROM read_parquet(${sqlString(`${dataset}/**/*.parquet`)}, hive_partitioning = true, union_by_name = true, filename = true) ` +
  `WHERE replace(regexp_extract(filename, '[^/\\\\]+[/\\\\][^/\\\\]+[/\\\\][^/\\\\]+$'), '\\', '/') IN (SELECT ${sqlString(`${dataset}/`)} || f.path FROM (SELECT unnest(files) AS f FROM read_json(${sqlString(`${dataset}/${MANIFEST_FILE}`)}, columns = {files: 'STRUCT(path VARCHAR)[]'}, maximum_object_size = 2147483647))) ` +
  `AND ${unfinishedGuard(dataset)} IS NULL)`

/** Paths as forward-slash text, whatever the platform's separator. */
const slashed = (column: string) => `replace(${column}, '\\', '/')`
const stagingPattern = (dataset: string, rest: string) => `${STAGING.split("\\").join("/")}/*/${dataset}/${rest}`

/**
 * For the catalog's views, at each query: an error, never fewer rows, when files the manifest lists
 * are not in the dataset's folder but wait in a writer's staging folder (an export stopped between
 * writing its manifest and moving its files in). A compaction's staged files (its writer folder
 * holds its intent, `_compaction.json`) are renamed in before they are listed, so a query racing its
 * swap is not taken for a stopped export.
 */
const unfinishedGuard = (dataset: string) => {
  const listed = `(SELECT unnest(files).path AS p FROM read_json(${sqlString(`${dataset}/${MANIFEST_FILE}`)}, columns = {files: 'STRUCT(path VARCHAR)[]'}, maximum_object_size = 2147483647))`
  const staging = STAGING.split("\\").join("/").replace(/\./g, "\\.")
  const stagedRe = sqlString(`(^|/)${staging}/([^/]+)/${dataset}/(.+)\\.pending$`)
  const intentRe = sqlString(`(^|/)${staging}/([^/]+)/${dataset}/_compaction\\.json$`)
  const staged =
    `(SELECT regexp_extract(${slashed("file")}, ${stagedRe}, 3) FROM glob(${sqlString(stagingPattern(dataset, "**/*.pending"))}) ` +
    `WHERE regexp_extract(${slashed("file")}, ${stagedRe}, 2) NOT IN (SELECT regexp_extract(${slashed("file")}, ${intentRe}, 2) FROM glob(${sqlString(stagingPattern(dataset, "_compaction.json"))})))`
  const inPlace = `(SELECT regexp_extract(${slashed("file")}, '[^/]+/[^/]+$') FROM glob(${sqlString(`${dataset}/**/*.parquet`)}))`
  const message = `${sqlString(`${dataset}: `)} || count(*) FILTER (WHERE l.p IN ${staged} AND l.p NOT IN ${inPlace}) || ' of the ' || count(*) || ${sqlString(` files its ${MANIFEST_FILE} lists are not in place (an export was stopped between writing the manifest and moving its files in): run the export again to finish that commit`)}`
  return `(SELECT CASE WHEN count(*) FILTER (WHERE l.p IN ${staged} AND l.p NOT IN ${inPlace}) > 0 THEN error(${message}) END FROM ${listed} l)`
}

/**
 * The dataset view: the files its manifest lists as committed (a Parquet file someone else put
 * in the folder, one a run has not committed, or one a compaction replaced, is not data), as of
 * now, or, with `live`, as of each query (liveSource: the catalog); an empty typed relation when
 * there are none. `listed`: what listedFiles found when the view is made; a problem (a damaged
 * manifest, listed files not in place) makes a view that fails every query with it, so a query
 * never answers with fewer rows; queries of other datasets still answer. `absent`: columns the
 * files lack (written before the column was added), given as NULL.
 */
export const datasetViewSql = (
  d: (typeof LAKE_DATASETS)[number],
  dataDir: string,
  listed: ListedFiles,
  live = false,
  absent: ReadonlyArray<Column> = [],
  absolute = false
): string => {
  const cols = [...d.columns.map(nullColumn), `CAST(NULL AS ${d.partitionType}) AS ${d.partition}`]
  if (listed !== undefined && "problem" in listed)
    return `CREATE OR REPLACE VIEW ${quoteIdent(d.name)} AS SELECT ${cols.join(", ")} FROM (SELECT 1) WHERE error(${sqlString(listed.problem)}) IS NULL`
  // `absolute`: a confined DuckDB checks a relative path as given, not against file_search_path (it refused every view)
  const paths = listed?.paths.map((p) => (absolute ? join(dataDir, d.name, p) : `${d.name}/${p}`))
  const source = live
    ? paths !== undefined && holdsParquet(join(dataDir, d.name))
      ? liveSource(d.name)
      : undefined
    : paths !== undefined && paths.length > 0
      ? `read_parquet(${sqlStringList(paths)}, hive_partitioning = true, union_by_name = true)`
      : undefined
  if (source !== undefined)
    return `CREATE OR REPLACE VIEW ${quoteIdent(d.name)} AS SELECT ${["*", ...absent.map(nullColumn)].join(", ")} FROM ${source}`
  return `CREATE OR REPLACE VIEW ${quoteIdent(d.name)} AS SELECT ${cols.join(", ")} WHERE false`
}

/** The snapshot datasets (holders, nft_collections, nft_tokens): their manifests say how each snapshot was read. */
const SNAPSHOT_DATASETS = DATASETS.filter((d) => d.kind === "snapshot").map((d) => d.name)
const SNAPSHOT_FIELDS =
  "snapshot_height BIGINT, snapshot_time VARCHAR, consistency VARCHAR, watermark_before BIGINT, watermark_after BIGINT, rows BIGINT, duplicates_dropped BIGINT, reads INTEGER, lists VARCHAR[], absent VARCHAR[], note VARCHAR"

/**
 * The view `snapshots`: one row per committed snapshot of every snapshot dataset, from the
 * manifests: whether it is exact (read while the watermark stood still, no page overlapping
 * another) or best-effort, the watermarks it spans, and the lists the source did not have. An
 * analyst keeps exact snapshots only by joining on (dataset, snapshot_height).
 */
export const snapshotsViewSql = (dataDir: string, absolute = false): string => {
  const manifests = SNAPSHOT_DATASETS.map((n) => `${n}/${MANIFEST_FILE}`)
    .filter((p) => existsSync(join(dataDir, p)))
    .map((p) => (absolute ? join(dataDir, p) : p))
  // DuckDB reserves maximum_object_size for the read: 2 GiB ran out of a confined query's memory
  // limit, so a view made for now (absolute) allows twice the largest manifest it reads, 16 MiB at least
  const largest = Math.max(0, ...manifests.map((p) => statSync(absolute ? p : join(dataDir, p)).size))
  const maxObject = absolute ? Math.max(16 * 1024 * 1024, 2 * largest) : 2147483647
  const columns =
    "dataset, s.snapshot_height, CAST(s.snapshot_time AS TIMESTAMP) AS snapshot_time, s.consistency, s.consistency = 'exact' AS exact, s.watermark_before, s.watermark_after, " +
    "s.rows, s.duplicates_dropped, s.reads, s.lists, coalesce(s.absent, []) AS absent, s.note"
  const from =
    manifests.length === 0
      ? `(SELECT CAST(NULL AS VARCHAR) AS dataset, CAST(NULL AS STRUCT(${SNAPSHOT_FIELDS})) AS s WHERE false)`
      : `(SELECT dataset, unnest(snapshots) AS s FROM read_json(${sqlStringList(manifests)}, columns = {dataset: 'VARCHAR', snapshots: 'STRUCT(${SNAPSHOT_FIELDS})[]'}, maximum_object_size = ${maxObject}))`
  return `CREATE OR REPLACE VIEW snapshots AS SELECT ${columns} FROM ${from}`
}

const bindAll = (stmt: DuckDBPreparedStatement, params: Readonly<Record<string, ParamValue>>) => {
  const names = Array.from({ length: stmt.parameterCount }, (_, i) => stmt.parameterName(i + 1))
  const missing = names.filter((n) => !(n in params))
  if (missing.length > 0) throw new Error(`no value for parameter ${missing.map((m) => "$" + m).join(", ")} (pass --param ${missing[0]}=…)`)
  const unused = Object.keys(params).filter((k) => !names.includes(k))
  if (unused.length > 0) throw new Error(`the SQL has no parameter ${unused.map((u) => "$" + u).join(", ")}`)
  names.forEach((name, i) => {
    const v = params[name]
    const index = i + 1
    if (v === null) stmt.bindNull(index)
    else if (typeof v === "bigint") {
      // amounts pass 2^63: HUGEINT up to 2^127; past that DuckDB holds no integer ("bigint out of int64 range" named nothing)
      if (v >= -(2n ** 63n) && v < 2n ** 63n) stmt.bindBigInt(index, v)
      else if (v >= -(2n ** 127n) && v < 2n ** 127n) stmt.bindHugeInt(index, v)
      else
        throw new Error(
          `--param ${name}: ${v} is past what DuckDB's integers hold (2^127): pass it as text (${name}:text=…) and compare it as text or CAST it to a DECIMAL`
        )
    } else if (typeof v === "number") Number.isInteger(v) ? stmt.bindBigInt(index, BigInt(v)) : stmt.bindDouble(index, v)
    else if (typeof v === "boolean") stmt.bindBoolean(index, v)
    else stmt.bindVarchar(index, v)
  })
}

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
    const confine = options.confine
    const dataDir = confine ? realPathOf(options.dataDir) : resolve(options.dataDir)
    // a confined DuckDB spills past its memory limit into a folder of its own, never the working directory or the lake
    const scratch = confine
      ? yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(realPathOf(tmpdir()), "chain-lake-query-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
      : undefined
    const instance = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () =>
          (await import("@duckdb/node-api")).DuckDBInstance.create(options.dbFile ?? ":memory:", { autoinstall_known_extensions: "false" }),
        catch: (e) =>
          new AnalyticsError({ message: `cannot open DuckDB${options.dbFile ? ` file ${options.dbFile}` : ""}: ${(e as Error).message}` })
      }),
      (i) => Effect.sync(() => i.closeSync())
    )
    // a query still running when Ctrl-C closes the scope is interrupted and awaited first (lake/duckdb.ts)
    const conn = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => guardConnection(await instance.connect()),
        catch: (e) => new AnalyticsError({ message: (e as Error).message })
      }),
      (c) => Effect.promise(() => c.close())
    )
    // the problems of the datasets whose views fail every query (listedFiles), as of the last time the views were made
    const problems = new Set<string>()
    /** A query that failed on such a view fails with the problem alone, as one line (not DuckDB's "Invalid Input Error: …"). */
    const plainly = (e: SqlError): SqlError => {
      for (const p of problems) if (e.message.includes(p)) return new SqlError({ message: p })
      const guard = /^Invalid Input Error: (\w+: \d+ of the \d+ files its _manifest\.json lists are not in place .*)$/.exec(e.message)
      return guard ? new SqlError({ message: guard[1] }) : e
    }
    const settings = Effect.tryPromise({
      try: async () => {
        // relative paths (the catalog's views) resolve against the data folder
        await conn.use((c) => c.run(`SET file_search_path = ${sqlString(dataDir)}`))
        // Parquet footers read once per file, not once per query: a committed file never changes
        // in place (new content is a new file), so what is cached stays true
        await conn.use((c) => c.run("LOAD parquet"))
        await conn.use((c) => c.run("SET parquet_metadata_cache = true"))
        if (confine === undefined) return
        // the order matters: the allowed places are set while access is open, then access is closed, then locked
        for (const statement of [
          `SET memory_limit = ${sqlString(confine.memoryLimit ?? "1GB")}`,
          `SET temp_directory = ${sqlString(scratch!)}`,
          `SET allowed_directories = ${sqlStringList([dataDir + sep])}`,
          `SET allowed_paths = ${sqlStringList((confine.paths ?? []).map(realPathOf))}`,
          "SET enable_external_access = false",
          "SET lock_configuration = true"
        ])
          await conn.use((c) => c.run(statement))
      },
      catch: (e) => new AnalyticsError({ message: `configuring DuckDB failed: ${(e as Error).message}` })
    })
    yield* settings
    const absolute = confine !== undefined
    /** A file listed when the views were made is gone (a compaction's swap): the views are made again (afresh, below). */
    const vanished = (e: { readonly message: string }) => /No files found that match the pattern|No such file or directory/.test(e.message)
    /** The view of one dataset over the files its manifest lists (`listed`). */
    const datasetView = async (d: (typeof LAKE_DATASETS)[number], listed: ListedFiles) => {
      const live = options.live ?? false
      await conn.use((c) => c.run(datasetViewSql(d, dataDir, listed, live, [], absolute)))
      // files written before a column was added lack it (union_by_name gives NULL only where some
      // file has it): the view adds it as NULL, so views that read it still bind
      const present = new Set(
        (await conn.use((c) => c.runAndReadAll(`DESCRIBE ${quoteIdent(d.name)}`))).getRowObjectsJson().map((r) => String(r.column_name))
      )
      const absent = d.columns.filter((c) => !present.has(c.name))
      if (absent.length > 0) await conn.use((c) => c.run(datasetViewSql(d, dataDir, listed, live, absent, absolute)))
    }
    const setup = async () => {
      problems.clear()
      for (const d of LAKE_DATASETS) {
        const listed = await listedFiles(dataDir, d.name, d.columns)
        if (listed !== undefined && "problem" in listed) problems.add(listed.problem)
        /*
         * A view binds its files' schemas when it is made: a damaged file (cut short, overwritten)
         * fails it there. That dataset's view then fails every query with the problem, and every
         * other view is made as usual: one bad file never takes the whole lake down. A file a
         * compaction moved away meanwhile is not damage: the views are made again (afresh).
         */
        await datasetView(d, listed).catch(async (e: Error) => {
          if (vanished(e)) throw e
          const problem = unreadableProblem(d.name, e.message)
          problems.add(problem)
          await conn.use((c) => c.run(datasetViewSql(d, dataDir, { problem }, false, [], absolute)))
        })
      }
      await conn.use((c) => c.run(snapshotsViewSql(dataDir, absolute)))
      await createAnalyticsViews((sql) => conn.use((c) => c.run(sql)))
    }
    /*
     * The views list the files committed when they were made; a compaction may replace some of them
     * later (moving them out of the folder): a query that then finds a listed file gone makes the
     * views again from the manifests and runs again, so it reads the old files or the new ones
     * (a compaction of many datasets may swap several times while the views are made: 10 tries).
     */
    const afresh = <A, E extends { readonly message: string }>(
      run: Effect.Effect<A, E>,
      remake: Effect.Effect<void, E>,
      attempts = 10
    ): Effect.Effect<A, E> =>
      Effect.catchIf(
        run,
        (e) => attempts > 1 && vanished(e),
        () => Effect.zipRight(remake, afresh(run, remake, attempts - 1))
      )
    const makeViews = Effect.tryPromise({
      try: setup,
      catch: (e) => new AnalyticsError({ message: `creating the views failed: ${(e as Error).message}` })
    })
    yield* afresh(makeViews, Effect.void)
    // making them again may meet another swap too
    const remakeViews = afresh(
      Effect.mapError(makeViews, (e) => new SqlError({ message: e.message })),
      Effect.void
    )

    const prepare = (sql: string, params: Readonly<Record<string, ParamValue>>) =>
      Effect.tryPromise({
        try: async () => {
          const stmt = await conn.use((c) => c.prepare(sql))
          bindAll(stmt, params)
          return stmt
        },
        catch: (e) => new SqlError({ message: (e as Error).message })
      })
    /*
     * Queries read: a COPY … TO over a committed Parquet file rewrote the lake (verify did not see
     * it), and ATTACH, SET, CREATE or LOAD change what later reads see. SELECT (with WITH, FROM-first,
     * DESCRIBE, SHOW, SUMMARIZE, PRAGMA table_info and VALUES, which DuckDB types as SELECT) is run;
     * the rest is refused before it runs, EXPLAIN too (EXPLAIN ANALYZE runs what it explains).
     */
    const readOnly = (stmt: DuckDBPreparedStatement) =>
      Effect.tryPromise({
        try: async () => {
          // (DuckDB is loaded by now; a static import would load it for --help too)
          const { StatementType } = await import("@duckdb/node-api")
          // (not EXPLAIN: EXPLAIN ANALYZE runs the statement it explains, a COPY included)
          if (stmt.statementType === StatementType.SELECT) return stmt
          throw new Error(
            `only statements that read are run here (SELECT, WITH, DESCRIBE, SUMMARIZE …), not ${StatementType[stmt.statementType] ?? "this statement"}: to write a result, use --format csv or json, or --format parquet --output FILE`
          )
        },
        catch: (e) => new SqlError({ message: (e as Error).message })
      })

    /*
     * The first wall, before DuckDB prepares anything (preparing `EXPORT DATABASE '<lake>/txs/x'`
     * made that folder, and a COPY into the lake is inside the sandbox's allowed folder): the SQL
     * is parsed alone (json_serialize_sql, which serializes SELECT statements only), and a
     * statement that is not a SELECT is refused by its first word. PRAGMA goes on to readOnly
     * (PRAGMA table_info is typed as a SELECT once prepared); text that does not parse goes on to
     * prepare, for DuckDB's own message.
     */
    const parsedAsSelect = (sql: string) =>
      Effect.tryPromise({
        try: async () => {
          const reader = await conn.use((c) => c.runAndReadAll("SELECT json_serialize_sql(CAST($sql AS VARCHAR)) AS j", { sql }))
          const parsed = JSON.parse(String(reader.getRowObjectsJson()[0].j)) as { error?: boolean; error_message?: string }
          const first = (/^\s*([A-Za-z]+)/.exec(sql)?.[1] ?? "").toUpperCase()
          if (parsed.error === true && /Only SELECT statements/.test(parsed.error_message ?? "") && first !== "PRAGMA")
            throw new Error(
              `only statements that read are run here (SELECT, WITH, DESCRIBE, SUMMARIZE …), not ${first || "this statement"}: to write a result, use --format csv or json, or --format parquet --output FILE`
            )
        },
        catch: (e) => new SqlError({ message: (e as Error).message })
      })

    const service: AnalyticsService = {
      dataDir,
      views: [...LAKE_DATASETS.map((d) => d.name), "snapshots", ...analyticsViews().map((v) => v.name)],
      problems: () => [...problems],
      query: (sql, params = {}) =>
        afresh(
          Effect.gen(function* () {
            yield* parsedAsSelect(sql)
            const stmt = yield* Effect.flatMap(prepare(sql, params), readOnly)
            const reader = yield* Effect.tryPromise({
              try: () => conn.use(() => stmt.runAndReadAll()),
              catch: (e) => new SqlError({ message: (e as Error).message })
            })
            return {
              // JSON is VARCHAR with an alias to DuckDB's client
              columns: reader.columnNames().map((name, i) => {
                const type = reader.columnTypes()[i]
                return { name, type: type.alias ?? type.toString() }
              }),
              rows: reader.getRowsJson()
            }
          }),
          remakeViews
        ).pipe(Effect.mapError(plainly)),
      copyToParquet: (sql, params, path) =>
        afresh(
          Effect.gen(function* () {
            // COPY takes no parameters, so the bound result goes through a temp table first
            yield* parsedAsSelect(sql)
            yield* Effect.flatMap(prepare(sql, params), readOnly)
            const stmt = yield* prepare(`CREATE OR REPLACE TEMP TABLE _chain_lake_result AS ${sql}`, params)
            yield* Effect.tryPromise({
              try: () => conn.use(() => stmt.run()),
              catch: (e) => new SqlError({ message: (e as Error).message })
            })
            yield* Effect.tryPromise({
              try: () =>
                conn.use((c) => c.run(`COPY _chain_lake_result TO ${sqlString(realPathOf(path))} (FORMAT PARQUET, COMPRESSION ZSTD)`)),
              catch: (e) => new SqlError({ message: (e as Error).message })
            })
          }),
          remakeViews
        ).pipe(Effect.mapError(plainly))
    }
    return service
  })

export const layerAnalytics = (options: AnalyticsOptions) => Layer.scoped(Analytics, makeAnalytics(options))
