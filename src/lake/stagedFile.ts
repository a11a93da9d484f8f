/**
 * A StagedFile: rows appended to a staging table of their own (one per writer, on a connection of
 * its own), then written to Parquet by one COPY (`finish`, atomicCopy.ts) and the table made anew
 * for the next file.
 */
import type { DuckDBAppender } from "@duckdb/node-api"
import { Effect } from "effect"
import { copyToFile } from "./atomicCopy.js"
import type { Column, Value } from "./columns.js"
import type { GuardedConnection } from "./duckdb.js"
import { SinkError, type StagedFile } from "./sinkTypes.js"
import { readRows, runSql, type SinkDatabase } from "./sinkDatabase.js"
import { APPENDER_CHUNK_BYTES, copyMemory, stagedGroupRows, type StagingBudget } from "./sinkMemory.js"
import { orderByOf, quoteIdent } from "./sql.js"
import { appenderFor, finalExpr, stageType } from "./stagedColumns.js"

export interface StagingOptions {
  readonly rowGroupSize: number
  /** what one COPY may hold in DuckDB's memory beside the staged tables (the file is `full` past it) */
  readonly copyBytes: number
  /** the sink's COPYs at once: `finish` takes one permit */
  readonly copying: Effect.Semaphore
  readonly budget: StagingBudget
}

let writerSeq = 0

/**
 * Whether rows arrive in sort-key order. They usually do (a shard's rows come in chain order);
 * then COPY needs no sort (the sort was ~2 µs per tx row of DuckDB CPU, bench/RESULTS.md).
 * Tracked only for sort keys that are plain integer columns, compared as numbers; any other key,
 * a null or an unsafe integer means "sort".
 */
const orderTracker = (columns: ReadonlyArray<Column>, sortKey: ReadonlyArray<string>) => {
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
  return {
    see: (row: ReadonlyArray<Value>) => {
      if (inOrder) inOrder = followsLast(row)
    },
    inOrder: () => inOrder,
    reset: () => {
      inOrder = trackOrder
      lastKey.fill(-Infinity)
    }
  }
}

/** A writer's staging table: the columns in their staging types, and `_ord`, the order rows were appended in. */
const stagingTable = (conn: GuardedConnection, columns: ReadonlyArray<Column>) => {
  const name = `stage_${++writerSeq}`
  const ddl = [...columns.map((c) => `${quoteIdent(c.name)} ${stageType(c.type)}`), `"_ord" BIGINT`].join(", ")
  return {
    name,
    create: runSql(conn, `CREATE TEMP TABLE ${name} (${ddl})`),
    // a new table, not DELETE: an in-memory table keeps the room of deleted rows, so each
    // file a writer finished stayed in DuckDB's memory (and spilled) until the writer closed
    recreate: runSql(conn, `DROP TABLE ${name}; CREATE TEMP TABLE ${name} (${ddl})`),
    // Stryker disable next-line ArrowFunction,ObjectLiteral: DuckDB failing to make an appender is not provoked by any test
    newAppender: Effect.tryPromise({
      try: () => conn.use((c) => c.createAppender(name)),
      catch: (e) => new SinkError({ message: (e as Error).message })
    })
  }
}

/**
 * The SELECT a file is written from: the staged rows in their Parquet types; with `unique` (a
 * list of quoted columns), only the first staged of each value of them; sorted on the final
 * (typed) values when `sorted`, rows equal in the sort key kept in append order.
 */
const finishSelect = (
  columns: ReadonlyArray<Column>,
  sortKey: ReadonlyArray<string>,
  table: string,
  unique: string | undefined,
  sorted: boolean
) => {
  const inner = [...columns.map(finalExpr), `"_ord"`].join(", ")
  const outer = columns.map((c) => quoteIdent(c.name)).join(", ")
  const order = [...orderByOf(sortKey), `"_ord"`].join(", ")
  return `SELECT ${outer} FROM (SELECT ${inner} FROM ${table}${unique ? ` QUALIFY row_number() OVER (PARTITION BY ${unique} ORDER BY "_ord") = 1` : ""})${sorted ? ` ORDER BY ${order}` : ""}`
}

/** How many staged rows repeat an earlier row's values of the quoted `keys`. */
const countRepeats = (conn: GuardedConnection, table: string, keys: string) =>
  Effect.map(readRows(conn, `SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT ${keys} FROM ${table})) AS n FROM ${table}`), ([r]) =>
    Number(r.n)
  )

/** Closes an appender, which hands its last rows to its table. */
const closeAppender = (appender: DuckDBAppender, path?: string) =>
  // Stryker disable next-line ArrowFunction,ObjectLiteral: the appender failing to close is not provoked by any test
  Effect.try({ try: () => appender.closeSync(), catch: (e) => new SinkError({ message: (e as Error).message, path }) })

/** Closes an appender that may be closed already, before its connection closes (the appender goes with it; this only orders it). */
// Stryker disable next-line BlockStatement: closing the appender first only orders it
const closeAppenderQuietly = (appender: DuckDBAppender) => {
  // Stryker disable next-line BlockStatement: as above
  try {
    appender.closeSync()
  } catch {
    /* already closed */
  }
}

export const openStagedFile = (db: SinkDatabase, columns: ReadonlyArray<Column>, sortKey: ReadonlyArray<string>, options: StagingOptions) =>
  Effect.gen(function* () {
    yield* db.makeScratch
    const conn = yield* db.connect
    const table = stagingTable(conn, columns)
    yield* table.create
    let appender = yield* table.newAppender
    const appenders = columns.map((c) => appenderFor(c.type))
    const order = orderTracker(columns, sortKey)
    let rows = 0
    let bytes = 0
    /** `bytes` when the appender's rows last went into the table */
    let flushedAt = 0
    const reset = Effect.gen(function* () {
      yield* table.recreate
      appender = yield* table.newAppender
      rows = 0
      bytes = 0
      flushedAt = 0
      order.reset()
    })
    const file: StagedFile = {
      append(row) {
        order.see(row)
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
      full: () => copyMemory(bytes, rows) > options.copyBytes,
      repeats: (keys) =>
        Effect.gen(function* () {
          // Stryker disable next-line ArrowFunction,ObjectLiteral: the appender failing to flush is not provoked by any test
          yield* Effect.try({ try: () => appender.flushSync(), catch: (e) => new SinkError({ message: (e as Error).message }) })
          return yield* countRepeats(conn, table.name, keys.map(quoteIdent).join(", "))
        }),
      finish: (path, finishOptions = {}) =>
        Effect.gen(function* () {
          const uniqueBy = finishOptions.uniqueBy
          const unique = uniqueBy && uniqueBy.length > 0 ? uniqueBy.map(quoteIdent).join(", ") : undefined
          // dropping repeats keeps the first staged of each key; the window may reorder, so COPY sorts
          const sorted = !order.inOrder() || unique !== undefined
          const groupRows = stagedGroupRows(rows, bytes, options.rowGroupSize)
          yield* closeAppender(appender, path)
          const select = finishSelect(columns, sortKey, table.name, unique, sorted)
          const written = yield* copyToFile(conn, select, path, { groupRows, sorted, permits: options.copying })
          yield* reset
          return written
        }),
      discard: () =>
        Effect.gen(function* () {
          yield* closeAppender(appender)
          yield* reset
        }),
      close: () =>
        Effect.zipRight(
          Effect.sync(() => options.budget.remove(file)),
          // Stryker disable next-line ArrowFunction: the appender goes with its connection; closing it first only orders it
          db.disconnect(conn, () => closeAppenderQuietly(appender))
        )
    }
    options.budget.add(file)
    return file
  })
