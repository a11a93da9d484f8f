/**
 * A `.duckdb` catalog file holding every view, with paths relative to the data folder: any DuckDB
 * client (CLI, DBeaver, Python) opened with the data folder as its working directory queries the
 * views, also after the folder is moved or copied.
 */
import { open, rm } from "node:fs/promises"
import { resolve } from "node:path"
import { Effect } from "effect"
import { AnalyticsError, LAKE_DATASETS, makeAnalytics, viewNames } from "./Analytics.js"
import { duckdbApi } from "../lake/duckdb.js"
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
    yield* refuseForeignCatalog(dbFile)
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

/** A DuckDB file says "DUCK" at bytes 8..11 of its header. */
const isDuckdbFile = async (path: string): Promise<boolean> => {
  const file = await open(path, "r")
  try {
    const head = Buffer.alloc(12)
    const { bytesRead } = await file.read(head, 0, 12, 0)
    return bytesRead === 12 && head.toString("latin1", 8, 12) === "DUCK"
  } finally {
    await file.close()
  }
}

/** What the DuckDB file at `path` holds besides the analytics' views (tables, macros, sequences, schemas, other views), read-only. */
const foreignObjects = async (path: string): Promise<ReadonlyArray<string>> => {
  const instance = await (await duckdbApi()).DuckDBInstance.create(path, {
    access_mode: "READ_ONLY",
    autoinstall_known_extensions: "false"
  })
  try {
    const conn = await instance.connect()
    try {
      const ours = new Set(viewNames())
      const names = async (sql: string) => (await conn.runAndReadAll(sql)).getRows().map((r) => String(r[0]))
      const views = await names("SELECT view_name FROM duckdb_views() WHERE NOT internal")
      return [
        ...(await names("SELECT 'table ' || table_name FROM duckdb_tables() WHERE NOT internal")),
        ...(await names("SELECT 'macro ' || function_name FROM duckdb_functions() WHERE NOT internal")),
        ...(await names("SELECT 'sequence ' || sequence_name FROM duckdb_sequences()")),
        ...(await names("SELECT 'schema ' || schema_name FROM duckdb_schemas() WHERE NOT internal")),
        ...(await names("SELECT 'type ' || type_name FROM duckdb_types() WHERE NOT internal")),
        ...views.filter((v) => !ours.has(v)).map((v) => `view ${v}`)
      ]
    } finally {
      conn.closeSync()
    }
  } finally {
    instance.closeSync()
  }
}

/**
 * A file at the catalog's path that is not a catalog this tool wrote (views of the lake and
 * nothing else) is left as it is: the command fails before it replaces anything. A user's own
 * DuckDB file (their tables) or any other file named by --db was deleted before.
 */
const refuseForeignCatalog = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      if (!(await isDuckdbFile(path))) return "it is no DuckDB file"
      const foreign = await foreignObjects(path)
      const shown = foreign.slice(0, 3).join(", ") + (foreign.length > 3 ? `, and ${foreign.length - 3} more` : "")
      return foreign.length > 0 ? `it holds ${shown}` : undefined
    },
    catch: (e) => {
      const message = (e as Error).message.split("\n")[0]
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
      // (a DuckDB client holding the file, as the catalog's hint has one open it)
      return /Could not set lock on file|Conflicting lock/.test(message)
        ? { open: message }
        : `it cannot be read to tell whether it is one (${message})`
    }
  }).pipe(
    Effect.merge,
    Effect.flatMap((why) =>
      why === undefined
        ? Effect.void
        : Effect.fail(
            new AnalyticsError({
              message:
                typeof why === "object"
                  ? `${path} is open in another DuckDB client (${why.open}): close it, and write the catalog again`
                  : `${path} exists and is no chain-lake catalog (${why}): it is left as it is; give the catalog another file (--db)`
            })
          )
    )
  )
