/**
 * Running SQL over the views: one statement that reads, its named parameters ($name) bound, never
 * spliced; its result as JSON-safe rows, or written as Parquet.
 */
import type { DuckDBPreparedStatement } from "@duckdb/node-api"
import { Effect } from "effect"
import { duckdbApi, type GuardedConnection } from "../lake/duckdb.js"
import { sqlString } from "../lake/sql.js"
import { AnalyticsError, realPathOf, SqlError, type ParamValue, type QueryResult } from "./types.js"

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

const prepare = (conn: GuardedConnection, sql: string, params: Readonly<Record<string, ParamValue>>) =>
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
      // (DuckDB is loaded by now)
      const { StatementType } = await duckdbApi()
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
 * statement that is not a SELECT is refused by its first word, a PRAGMA by its name (READ_PRAGMAS
 * go on to readOnly: PRAGMA table_info is typed as a SELECT once prepared); text that does not
 * parse goes on to prepare, for DuckDB's own message.
 */
/** The PRAGMAs that read (each a table function DuckDB types as a SELECT): any other (import_database, memory_limit …) is refused by its name, before DuckDB prepares it ("INTERNAL Error: Failed to cast statement"). */
const READ_PRAGMAS = new Set([
  "table_info",
  "show",
  "show_tables",
  "show_tables_expanded",
  "show_databases",
  "database_list",
  "database_size",
  "storage_info",
  "metadata_info",
  "version",
  "platform",
  "functions",
  "collations",
  "user_agent"
])

const parsedAsSelect = (conn: GuardedConnection, sql: string) =>
  Effect.tryPromise({
    try: async () => {
      const reader = await conn.use((c) => c.runAndReadAll("SELECT json_serialize_sql(CAST($sql AS VARCHAR)) AS j", { sql }))
      const parsed = JSON.parse(String(reader.getRowObjectsJson()[0].j)) as { error?: boolean; error_message?: string }
      const [, word = "", pragma = ""] = /^\s*([A-Za-z]+)\s*([A-Za-z_]*)/.exec(sql) ?? []
      const first = word.toUpperCase()
      const refused =
        first === "PRAGMA"
          ? !READ_PRAGMAS.has(pragma.toLowerCase())
          : parsed.error === true && /Only SELECT statements/.test(parsed.error_message ?? "")
      if (refused)
        throw new Error(
          `only statements that read are run here (SELECT, WITH, DESCRIBE, SUMMARIZE …), not ${first === "PRAGMA" ? `PRAGMA ${pragma}` : first || "this statement"}: to write a result, use --format csv or json, or --format parquet --output FILE`
        )
    },
    catch: (e) => new SqlError({ message: (e as Error).message })
  })

/** A result's columns, each type as its name (JSON is VARCHAR with an alias to DuckDB's client). */
const columnsOf = (result: { columnNames(): Array<string>; columnTypes(): Array<{ alias?: string; toString(): string }> }) =>
  result.columnNames().map((name, i) => {
    const type = result.columnTypes()[i]
    return { name, type: type.alias ?? type.toString() }
  })

/** Runs `sql` when it reads, its parameters bound: its columns and rows. */
export const runQuery = (conn: GuardedConnection, sql: string, params: Readonly<Record<string, ParamValue>>) =>
  Effect.gen(function* () {
    yield* parsedAsSelect(conn, sql)
    const stmt = yield* Effect.flatMap(prepare(conn, sql, params), readOnly)
    const reader = yield* Effect.tryPromise({
      try: () => conn.use(() => stmt.runAndReadAll()),
      catch: (e) => new SqlError({ message: (e as Error).message })
    })
    return { columns: columnsOf(reader), rows: reader.getRowsJson() } satisfies QueryResult
  })

/** What `take` failed with: no fault of the SQL (a full disk, a reader gone). */
class TakeFailed extends Error {}

/** A promise that rejects once `signal` aborts: a chunk's hand-over waiting on a reader ends with the query. */
const abortOf = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("the query was stopped")), { once: true }))

/**
 * Runs `sql` when it reads, its parameters bound, handing its rows to `take` a chunk at a time
 * (DuckDB's, 2,048 rows) as DuckDB makes them, the next asked once `take` is done with one: an
 * answer of millions of rows is never held whole. `take` has the columns with every chunk, and
 * once with no rows where the answer has none. Interrupted (Ctrl-C, a timeout), it stops between
 * chunks, and a hand-over still waiting (on a reader that does not read) is given up.
 */
export const streamQuery = (
  conn: GuardedConnection,
  sql: string,
  params: Readonly<Record<string, ParamValue>>,
  take: (columns: QueryResult["columns"], rows: QueryResult["rows"]) => Promise<void>,
  shown?: ShownRows
) =>
  Effect.gen(function* () {
    yield* parsedAsSelect(conn, sql)
    const stmt = yield* Effect.flatMap(prepare(conn, sql, params), readOnly)
    yield* Effect.tryPromise({
      try: (signal) =>
        conn.use(async () => {
          const aborted = abortOf(signal)
          aborted.catch(() => undefined)
          const { JsonDuckDBValueConverter } = await duckdbApi()
          const result = await stmt.stream()
          const columns = columnsOf(result)
          const hand = (rows: QueryResult["rows"]) =>
            Promise.race([take(columns, rows).catch((e: Error) => Promise.reject(new TakeFailed(e.message))), aborted])
          let handed = false
          let rowsHanded = 0
          for await (const chunk of result) {
            if (signal.aborted) return
            // the rows shown are all handed: the answer is not read further (as DuckDB's own shell
            // does; counting the rest held its chunks' memory until a GC, 670 MB at 30M rows)
            if (shown && rowsHanded >= shown.rows) {
              shown.onMore()
              return
            }
            await hand(chunk.convertRows(JsonDuckDBValueConverter))
            rowsHanded += chunk.rowCount
            handed = true
          }
          // an answer that ended inside the chunk that passed the rows shown
          if (shown && rowsHanded > shown.rows) shown.onMore()
          if (!handed) await hand([])
        }),
      catch: (e) => (e instanceof TakeFailed ? new AnalyticsError({ message: e.message }) : new SqlError({ message: (e as Error).message }))
    })
  })

/** The rows of an answer that are shown: the answer is read no further once `rows` rows are handed; `onMore` is told where it had more. */
export interface ShownRows {
  readonly rows: number
  readonly onMore: () => void
}

/** Runs `sql` when it reads, its parameters bound, and writes its result as Parquet to `path`. */
export const copyQueryToParquet = (conn: GuardedConnection, sql: string, params: Readonly<Record<string, ParamValue>>, path: string) =>
  Effect.gen(function* () {
    // COPY takes no parameters, so the bound result goes through a temp table first
    yield* parsedAsSelect(conn, sql)
    yield* Effect.flatMap(prepare(conn, sql, params), readOnly)
    const stmt = yield* prepare(conn, `CREATE OR REPLACE TEMP TABLE _chain_lake_result AS ${sql}`, params)
    yield* Effect.tryPromise({
      try: () => conn.use(() => stmt.run()),
      catch: (e) => new SqlError({ message: (e as Error).message })
    })
    yield* Effect.tryPromise({
      try: () =>
        conn.use((c) =>
          c.run(`COPY _chain_lake_result TO ${sqlString(realPathOf(path))} (FORMAT PARQUET, COMPRESSION ZSTD, USE_TMP_FILE false)`)
        ),
      catch: (e) => new SqlError({ message: (e as Error).message })
    })
  })
