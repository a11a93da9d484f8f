/**
 * ParquetSink: rows in, complete Parquet files out, written by DuckDB itself. Rows are appended
 * to a per-writer staging table; `finish` COPYs them (sorted, ZSTD, statistics on) to a temp
 * name beside the target, fsyncs, hashes and renames, so a reader never sees a partial file.
 * Memory is bounded per writer: callers finish a file every `flushBytes`.
 */
import type { DuckDBAppender } from "@duckdb/node-api"
import { open, rename, rm, stat } from "node:fs/promises"
import { dirname } from "node:path"
import { Context, Data, Effect, Layer } from "effect"
import type { Column, ColumnType, Value } from "./columns.js"
import { guardConnection, type GuardedConnection } from "./duckdb.js"
import { orderByOf, quoteIdent, sqlString, sqlStringList } from "./sql.js"
import { sha256File, makeFolder } from "./files.js"

export class SinkError extends Data.TaggedError("SinkError")<{ readonly message: string; readonly path?: string }> {}

export interface WrittenFile {
  readonly path: string
  readonly rows: number
  readonly bytes: number
  readonly sha256: string
  /** whether COPY had to sort the rows (they were not appended in sort-key order) */
  readonly sorted: boolean
}

export interface StagedFile {
  append(row: ReadonlyArray<Value>): void
  readonly rows: () => number
  /** approximate bytes staged (string lengths), for flush decisions */
  readonly stagedBytes: () => number
  /**
   * whether its rows are so large that a COPY of more of them would need more of DuckDB's memory
   * than the sink gives one (`copyBytes`): its file is to be written now (never for ordinary rows,
   * whose COPY holds about the same whatever the file's size)
   */
  readonly full: () => boolean
  /**
   * Writes the staged rows to `path` atomically and empties the writer; with `uniqueBy`, only the
   * first row staged of each value of those columns (DuckDB drops the rest, spilling if need be,
   * so no key set grows in memory).
   */
  readonly finish: (path: string, options?: { readonly uniqueBy?: ReadonlyArray<string> }) => Effect.Effect<WrittenFile, SinkError>
  /** How many staged rows repeat an earlier row's values of `columns` (what `uniqueBy` would drop). */
  readonly repeats: (columns: ReadonlyArray<string>) => Effect.Effect<number, SinkError>
  /** Drops the staged rows. */
  readonly discard: () => Effect.Effect<void, SinkError>
  readonly close: () => Effect.Effect<void>
}

export interface ParquetSinkService {
  readonly openFile: (columns: ReadonlyArray<Column>, sortKey: ReadonlyArray<string>) => Effect.Effect<StagedFile, SinkError>
  /** whether the open writers together stage more than the sink's staging budget (their users then finish files early) */
  readonly overBudget: () => boolean
  /** how many files the sink writes (COPYs) at once; more wait their turn */
  readonly writesAtOnce: number
  /**
   * Writes the rows of the Parquet files `inputs` into one file at `path`, atomically, sorted by
   * `sortKey` and then by input and row order (rows equal in the sort key keep their order), with
   * ZSTD and row groups of ~2 MB compressed: the merge of small files into one (compaction);
   * with `where` (an SQL condition on the columns), only the rows it holds for (a rollback's cut).
   */
  readonly rewrite: (
    inputs: ReadonlyArray<string>,
    path: string,
    sortKey: ReadonlyArray<string>,
    where?: string
  ) => Effect.Effect<WrittenFile, SinkError>
  /** Runs SQL on the sink's DuckDB (e.g. reading back what was written). */
  readonly query: (sql: string) => Effect.Effect<Array<Record<string, unknown>>, SinkError>
}

export class ParquetSink extends Context.Tag("chain-lake/ParquetSink")<ParquetSink, ParquetSinkService>() {}

const stageType = (t: ColumnType): "BIGINT" | "INTEGER" | "BOOLEAN" | "DOUBLE" | "VARCHAR" =>
  t === "BIGINT" || t === "INTEGER" || t === "BOOLEAN" || t === "DOUBLE" ? t : "VARCHAR"

/** The SELECT expression turning a staged column into its Parquet type. */
const finalExpr = (c: Column): string => {
  const id = quoteIdent(c.name)
  switch (c.type) {
    case "TIMESTAMP":
      return `CAST(${id} AS TIMESTAMP) AS ${id}`
    case "TIMESTAMP_NS":
      return `CAST(${id} AS TIMESTAMP_NS) AS ${id}`
    case "DECIMAL(38,0)":
      return `TRY_CAST(${id} AS DECIMAL(38,0)) AS ${id}`
    case "JSON":
      return `CAST(${id} AS JSON) AS ${id}`
    case "VARCHAR[]":
      return `from_json(${id}, '["VARCHAR"]') AS ${id}`
    default:
      return id
  }
}

/** a JSON escape of a surrogate, after an even run of backslashes (an odd one escapes the "\\" itself) */
const ESCAPED_SURROGATE = /(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g
/**
 * JSON text as DuckDB's JSON type takes it. JSON.stringify writes a lone surrogate (a string cut
 * mid-pair, which a server may send escaped) as its escape and a whole pair as itself, and
 * DuckDB refuses the escape ("Conversion Error", the whole file failing): so each escaped
 * surrogate becomes U+FFFD, as the appender stores a lone surrogate of a VARCHAR.
 */
export const wellFormedJson = (text: string): string => (text.indexOf("\\u") === -1 ? text : text.replace(ESCAPED_SURROGATE, "$1\ufffd"))

type Appendix = (a: DuckDBAppender, v: Value) => void
const appenderFor = (t: ColumnType): Appendix => {
  if (t === "JSON" || t === "VARCHAR[]") return (a, v) => (v === null ? a.appendNull() : a.appendVarchar(wellFormedJson(String(v))))
  switch (stageType(t)) {
    // Stryker disable next-line StringLiteral,ConditionalExpression: the staging column casts text to its type, so a value appended as text is stored the same (only slower)
    case "BIGINT":
      // Stryker disable next-line StringLiteral,ConditionalExpression: as above; BigInt of a bigint is itself
      return (a, v) => (v === null ? a.appendNull() : a.appendBigInt(typeof v === "bigint" ? v : BigInt(v as number | string)))
    // Stryker disable next-line StringLiteral,ConditionalExpression: as above
    case "INTEGER":
      return (a, v) => (v === null ? a.appendNull() : a.appendInteger(Number(v)))
    // Stryker disable next-line StringLiteral,ConditionalExpression: as above
    case "BOOLEAN":
      return (a, v) => (v === null ? a.appendNull() : a.appendBoolean(Boolean(v)))
    // Stryker disable next-line StringLiteral,ConditionalExpression: as above
    case "DOUBLE":
      return (a, v) => (v === null ? a.appendNull() : a.appendDouble(Number(v)))
    default:
      return (a, v) => (v === null ? a.appendNull() : a.appendVarchar(String(v)))
  }
}

// Stryker disable all: durability against power loss, which no test can observe
const fsyncFile = async (path: string) => {
  const fh = await open(path, "r")
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}
const fsyncDir = async (path: string) => {
  try {
    await fsyncFile(path)
  } catch {
    // some filesystems refuse fsync on directories; the rename is still atomic
  }
}
// Stryker restore all
export interface SinkConfig {
  /** DuckDB threads (default 2) */
  readonly threads?: number
  /** DuckDB keeps freed buffers up to this limit, so it bounds the sink's memory (default 512MB) */
  readonly memoryLimit?: string
  readonly rowGroupSize?: number
  /** where DuckDB spills what does not fit in memoryLimit (default: DuckDB's `.tmp` in the working directory); removed at the end */
  readonly tempDirectory?: string
  /**
   * bytes (of strings) all open writers may stage together before their users finish files early:
   * staged rows live in DuckDB's memory, so this keeps it within memoryLimit whatever the number
   * of writers (default: no budget beyond each user's own flush size)
   */
  readonly stagingBudget?: number
  /**
   * COPYs (files being written) at once: each builds its row groups in DuckDB's memory, beside
   * what the writers stage, so more of them at once than the memory holds fails the run with
   * DuckDB's out-of-memory (default: no limit)
   */
  readonly copies?: number
  /** what one COPY may hold in DuckDB's memory beside the staged tables (writers are `full` past it; default: no bound) */
  readonly copyBytes?: number
}

/** Removes a temp file that a failed COPY or commit may have left, so that no stray file stays in the lake. */
// Stryker disable next-line ObjectLiteral,BooleanLiteral: without force, rm of a file COPY never made throws, and that is caught too
const removeQuietly = (tmp: string) => Effect.promise(() => rm(tmp, { force: true }).catch(() => undefined))

/** Makes the file COPY wrote at `tmp` durable, hashes it and renames it to `path`; removes `tmp` on failure. */
const settle = (tmp: string, path: string, rows: number, sorted: boolean) =>
  Effect.tryPromise({
    try: async (): Promise<WrittenFile> => {
      await fsyncFile(tmp)
      const sha256 = await sha256File(tmp)
      const { size } = await stat(tmp)
      await rename(tmp, path)
      await fsyncDir(dirname(path))
      return { path, rows, bytes: size, sha256, sorted }
    },
    catch: (e) => new SinkError({ message: `could not commit ${path}: ${(e as Error).message}`, path })
  }).pipe(Effect.tapError(() => removeQuietly(tmp)))

let writerSeq = 0
/** the compressed bytes a rewritten file's row group holds, about (see `rewrite`) */
const REWRITE_GROUP_BYTES = 2 * 1024 * 1024
/**
 * An appender holds its rows in a chunk of 2,048 rows, outside DuckDB's memory limit, before they
 * go into its table: 6 MB of ordinary txs, but 80 MB and more of txs of 20 kB. Past this many
 * bytes of strings, it hands them over early (ordinary rows fill their 2,048 first: no change).
 */
const APPENDER_CHUNK_BYTES = 8 * 1024 * 1024
/**
 * What a COPY of staged rows holds in DuckDB's memory beside their table, about: the rows of one
 * chunk (2,048 rows, or the whole table when it is smaller) ~3.4 times (read, cast to JSON,
 * encoded), and ~8 MB more. Measured for txs-like rows (two columns of half the row each, one cast
 * to JSON) with tables of 8–32 MB: rows of 3 kB 23–31 MB whatever the table, rows of 20, 40 and
 * 100 kB 27, 51, 82 and 102–106 MB for 8, 16, 24 and 32 MB (bench/RESULTS.md).
 */
export const copyMemory = (bytes: number, rows: number) =>
  rows === 0 ? 0 : COPY_BASE_BYTES + 3.4 * Math.min(bytes, (bytes / rows) * CHUNK_ROWS)
const COPY_BASE_BYTES = 8 * 1024 * 1024
/** DuckDB's vector size: what an appender and a COPY handle at once */
const CHUNK_ROWS = 2048
/** the most string bytes a row group holds (see `finish`) */
const ROW_GROUP_BYTES = 8 * 1024 * 1024

export const makeParquetSink = (config: SinkConfig = {}) =>
  Effect.gen(function* () {
    /** The sink's open connections, each closed by its user, and any left by the instance's finalizer. */
    const connections = new Set<GuardedConnection>()
    const instance = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () =>
          // Stryker disable next-line StringLiteral: "" is DuckDB's in-memory database too
          (await import("@duckdb/node-api")).DuckDBInstance.create(":memory:", {
            threads: String(config.threads ?? 2),
            memory_limit: config.memoryLimit ?? "512MB",
            ...(config.tempDirectory ? { temp_directory: config.tempDirectory } : {}),
            autoinstall_known_extensions: "false",
            autoload_known_extensions: "true"
          }),
        catch: (e) => new SinkError({ message: `could not start DuckDB: ${(e as Error).message}` })
      }),
      (i) =>
        Effect.promise(async () => {
          // a writer left open (its scope cut short) still runs nothing when the instance goes
          // Stryker disable next-line ArrayDeclaration,ArrowFunction: closing the instance closes its connections too; this only orders it
          await Promise.all([...connections].map((c) => c.close()))
          i.closeSync()
          // Stryker disable next-line all: DuckDB removes the temp directory it made as it closes; this is for one that did not
          if (config.tempDirectory) await rm(config.tempDirectory, { recursive: true, force: true }).catch(() => undefined)
        })
    )
    const rowGroupSize = config.rowGroupSize ?? 122_880
    const connect = Effect.tryPromise({
      try: async () => {
        const conn = guardConnection(await instance.connect())
        connections.add(conn)
        return conn
      },
      // Stryker disable next-line ArrowFunction,ObjectLiteral: DuckDB failing to connect is not provoked by any test
      catch: (e) => new SinkError({ message: (e as Error).message })
    })
    const disconnect = (conn: GuardedConnection, beforeClosing?: () => void) =>
      // Stryker disable next-line BlockStatement: closing the instance closes every connection; this frees one early (memory, not results)
      Effect.promise(async () => {
        await conn.close(beforeClosing)
        connections.delete(conn)
      })
    const run = (conn: GuardedConnection, sql: string, path?: string) =>
      Effect.tryPromise({ try: () => conn.use((c) => c.run(sql)), catch: (e) => new SinkError({ message: (e as Error).message, path }) })

    // Stryker disable next-line LogicalOperator: a semaphore of undefined permits lets every taker through, as no limit does
    const writesAtOnce = config.copies ?? Number.MAX_SAFE_INTEGER
    const copying = yield* Effect.makeSemaphore(writesAtOnce)
    /**
     * Writes what `select` answers to `path`, whole or not at all: COPY (ZSTD, row groups of
     * `groupRows`) to a temp name beside it, then `settle`; a failed COPY's part-written temp file
     * is removed. `limited`: the COPY takes one of the sink's `copies` permits.
     */
    const copyToFile = (conn: GuardedConnection, select: string, path: string, groupRows: number, sorted: boolean, limited: boolean) =>
      Effect.gen(function* () {
        const tmp = `${path}.tmp`
        yield* Effect.tryPromise({
          try: () => makeFolder(dirname(path)),
          catch: (e) => new SinkError({ message: (e as Error).message, path })
        })
        const copy = run(
          conn,
          `COPY (${select}) TO ${sqlString(tmp)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${groupRows})`,
          path
        )
        // COPY answers the rows it wrote: what is left once repeats are dropped
        const copied = yield* (limited ? copying.withPermits(1)(copy) : copy).pipe(Effect.tapError(() => removeQuietly(tmp)))
        return yield* settle(tmp, path, copied.rowsChanged, sorted)
      })
    const open = new Set<StagedFile>()
    const budget = config.stagingBudget ?? Infinity
    const copyBytes = config.copyBytes ?? Infinity
    const overBudget = () => {
      let total = 0
      for (const w of open) total += w.stagedBytes()
      return total > budget
    }

    /*
     * DuckDB makes only the last folder of temp_directory: without its parents, the first spill
     * (writers past memory_limit) failed the run. Made when the first writer opens, so that a
     * sink that writes nothing (a dry run) creates nothing.
     */
    let scratchMade = !config.tempDirectory
    const makeScratch = Effect.suspend(() =>
      scratchMade
        ? Effect.void
        : Effect.tryPromise({
            try: () => makeFolder(dirname(config.tempDirectory!)),
            catch: (e) => new SinkError({ message: `cannot make DuckDB's scratch folder: ${(e as Error).message}` })
          }).pipe(
            // Stryker disable next-line ArrowFunction,BooleanLiteral: without the flag the folder is made again (mkdir -p: a cost, not a result)
            Effect.tap(() => {
              scratchMade = true
            })
          )
    )

    const openFile = (columns: ReadonlyArray<Column>, sortKey: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        yield* makeScratch
        const conn = yield* connect
        const table = `stage_${++writerSeq}`
        const ddl = [...columns.map((c) => `${quoteIdent(c.name)} ${stageType(c.type)}`), `"_ord" BIGINT`].join(", ")
        yield* run(conn, `CREATE TEMP TABLE ${table} (${ddl})`)
        // Stryker disable next-line ArrowFunction,ObjectLiteral: DuckDB failing to make an appender is not provoked by any test
        const newAppender = Effect.tryPromise({
          try: () => conn.use((c) => c.createAppender(table)),
          catch: (e) => new SinkError({ message: (e as Error).message })
        })
        let appender = yield* newAppender
        const appenders = columns.map((c) => appenderFor(c.type))
        let rows = 0
        let bytes = 0
        /** `bytes` when the appender's rows last went into the table */
        let flushedAt = 0
        /*
         * Rows usually arrive already in sort-key order (a shard's rows come in chain order); then
         * COPY needs no sort (the sort was ~2 µs per tx row of DuckDB CPU, bench/RESULTS.md).
         * Tracked only for sort keys that are plain integer columns, compared as numbers; any
         * other key, a null or an unsafe integer means "sort".
         */
        // Stryker disable next-line ConditionalExpression,LogicalOperator: order tracking only spares COPY a sort: a text key tracked reads NaN and sorts (same file)
        const keyColumns = sortKey.map((k) => columns.findIndex((c) => c.name === k && (c.type === "BIGINT" || c.type === "INTEGER")))
        // no sort key: append order is the order
        // Stryker disable next-line ConditionalExpression: as above (a missing column reads undefined: NaN, sort)
        const trackOrder = keyColumns.every((i) => i >= 0)
        // Stryker disable next-line ArrowFunction: as above (undefined compares false for the first row only)
        const lastKey = keyColumns.map(() => -Infinity)
        let inOrder = trackOrder
        const followsLast = (row: ReadonlyArray<Value>): boolean => {
          let after = false
          for (let k = 0; k < keyColumns.length; k++) {
            const v = row[keyColumns[k]]
            const n = v === null ? NaN : Number(v)
            if (!Number.isSafeInteger(n)) return false
            if (!after) {
              if (n < lastKey[k]) return false
              if (n > lastKey[k]) after = true
            }
            lastKey[k] = n
          }
          return true
        }
        // sort on the final (typed) values: a plain column name is quoted, "col DESC" is kept as is
        const inner = [...columns.map(finalExpr), `"_ord"`].join(", ")
        const outer = columns.map((c) => quoteIdent(c.name)).join(", ")
        const order = [...orderByOf(sortKey), `"_ord"`].join(", ")
        const reset = Effect.gen(function* () {
          // a new table, not DELETE: an in-memory table keeps the room of deleted rows, so each
          // file a writer finished stayed in DuckDB's memory (and spilled) until the writer closed
          yield* run(conn, `DROP TABLE ${table}; CREATE TEMP TABLE ${table} (${ddl})`)
          appender = yield* newAppender
          rows = 0
          bytes = 0
          flushedAt = 0
          inOrder = trackOrder
          lastKey.fill(-Infinity)
        })
        const writer: StagedFile = {
          append(row) {
            if (inOrder) inOrder = followsLast(row)
            for (let i = 0; i < appenders.length; i++) {
              const v = row[i]
              if (typeof v === "string") bytes += v.length
              appenders[i](appender, v)
            }
            appender.appendBigInt(BigInt(rows++))
            appender.endRow()
            // the appender's chunk (2,048 rows) lives outside DuckDB's memory limit: rows of large
            // records move into the table (inside it) every APPENDER_CHUNK_BYTES instead
            if (bytes - flushedAt > APPENDER_CHUNK_BYTES) {
              appender.flushSync()
              flushedAt = bytes
            }
          },
          rows: () => rows,
          stagedBytes: () => bytes,
          full: () => copyMemory(bytes, rows) > copyBytes,
          repeats: (keys) =>
            Effect.gen(function* () {
              // Stryker disable next-line ArrowFunction,ObjectLiteral: the appender failing to flush is not provoked by any test
              yield* Effect.try({ try: () => appender.flushSync(), catch: (e) => new SinkError({ message: (e as Error).message }) })
              const [r] = yield* Effect.tryPromise({
                try: async () =>
                  (
                    await conn.use((c) =>
                      c.runAndReadAll(
                        `SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT ${keys.map(quoteIdent).join(", ")} FROM ${table})) AS n FROM ${table}`
                      )
                    )
                  ).getRowObjectsJS(),
                // Stryker disable next-line ArrowFunction,ObjectLiteral: as above
                catch: (e) => new SinkError({ message: (e as Error).message })
              })
              return Number(r.n)
            }),
          finish: (path, options = {}) =>
            Effect.gen(function* () {
              const unique = options.uniqueBy && options.uniqueBy.length > 0 ? options.uniqueBy.map(quoteIdent).join(", ") : undefined
              // dropping repeats keeps the first staged of each key; the window may reorder, so COPY sorts
              const sorted = !inOrder || unique !== undefined
              // a row group is built whole in memory, outside DuckDB's limit: ~8 MB of strings at most, whatever the row size
              const groupRows = Math.max(2048, Math.min(rowGroupSize, Math.floor((rows * ROW_GROUP_BYTES) / Math.max(1, bytes))))
              // Stryker disable next-line ArrowFunction,ObjectLiteral: the appender failing to close is not provoked by any test
              yield* Effect.try({ try: () => appender.closeSync(), catch: (e) => new SinkError({ message: (e as Error).message, path }) })
              const written = yield* copyToFile(
                conn,
                `SELECT ${outer} FROM (SELECT ${inner} FROM ${table}${unique ? ` QUALIFY row_number() OVER (PARTITION BY ${unique} ORDER BY "_ord") = 1` : ""})${sorted ? ` ORDER BY ${order}` : ""}`,
                path,
                groupRows,
                sorted,
                true
              )
              yield* reset
              return written
            }),
          discard: () =>
            Effect.gen(function* () {
              // Stryker disable next-line ArrowFunction,ObjectLiteral: as above
              yield* Effect.try({ try: () => appender.closeSync(), catch: (e) => new SinkError({ message: (e as Error).message }) })
              yield* reset
            }),
          close: () =>
            Effect.zipRight(
              Effect.sync(() => open.delete(writer)),
              // Stryker disable next-line BlockStatement: the appender goes with its connection; closing it first only orders it
              disconnect(conn, () => {
                // Stryker disable next-line BlockStatement: as above
                try {
                  appender.closeSync()
                } catch {
                  /* already closed */
                }
              })
            )
        }
        open.add(writer)
        return writer
      })

    const query = (sql: string) =>
      Effect.gen(function* () {
        const conn = yield* connect
        return yield* Effect.tryPromise({
          try: async () => (await conn.use((c) => c.runAndReadAll(sql))).getRowObjectsJS() as Array<Record<string, unknown>>,
          catch: (e) => new SinkError({ message: (e as Error).message })
        }).pipe(Effect.ensuring(disconnect(conn)))
      })

    const rewrite = (inputs: ReadonlyArray<string>, path: string, sortKey: ReadonlyArray<string>, where?: string) =>
      Effect.gen(function* () {
        yield* makeScratch
        const sizes = yield* Effect.tryPromise({
          try: () => Promise.all(inputs.map((f) => stat(f).then((s) => s.size))),
          catch: (e) => new SinkError({ message: (e as Error).message, path })
        })
        const list = sqlStringList(inputs)
        const filter = where ? ` WHERE ${where}` : ""
        const conn = yield* connect
        return yield* Effect.gen(function* () {
          const [counted] = yield* Effect.tryPromise({
            try: async () =>
              (
                await conn.use((c) =>
                  c.runAndReadAll(
                    `SELECT count(*)::BIGINT AS n FROM read_parquet(${list}, hive_partitioning = false, union_by_name = true)${filter}`
                  )
                )
              ).getRowObjectsJS(),
            catch: (e) => new SinkError({ message: (e as Error).message, path })
          })
          const rows = Number(counted.n)
          // a row group is built whole in memory: ~2 MB of compressed input per group, whatever the row size
          const groupRows = Math.max(
            2048,
            Math.min(
              122_880,
              Math.floor(
                (rows * REWRITE_GROUP_BYTES) /
                  Math.max(
                    1,
                    sizes.reduce((a, b) => a + b, 0)
                  )
              )
            )
          )
          const order = [...orderByOf(sortKey), `list_position(${list}, filename)`, "file_row_number"].join(", ")
          return yield* copyToFile(
            conn,
            `SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet(${list}, hive_partitioning = false, union_by_name = true, filename = true, file_row_number = true)${filter} ORDER BY ${order}`,
            path,
            groupRows,
            true,
            false
          )
        }).pipe(Effect.ensuring(disconnect(conn)))
      })

    return { openFile, overBudget, writesAtOnce, rewrite, query } satisfies ParquetSinkService
  })

export const layerParquetSink = (config: SinkConfig = {}) => Layer.scoped(ParquetSink, makeParquetSink(config))
