/**
 * The analytics' DuckDB: the instance (in memory, or the catalog's file), the one connection its
 * queries run on, and its settings: relative paths resolve against the data folder, Parquet
 * footers are cached, and a confined DuckDB (`chain-lake query`) is locked into the lake.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve, sep } from "node:path"
import { Effect } from "effect"
import { duckdbApi, guardConnection, type GuardedConnection } from "../lake/duckdb.js"
import { sqlString, sqlStringList } from "../lake/sql.js"
import { kindOfValue } from "../schema/decode.js"
import { AnalyticsError, realPathOf, type AnalyticsOptions } from "./types.js"

/** The settings of every analytics connection, and with `confine` DuckDB's sandbox around the lake (spilling into `scratch`). */
const configure = (conn: GuardedConnection, dataDir: string, confine: AnalyticsOptions["confine"], scratch: string | undefined) =>
  Effect.tryPromise({
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

/** What is wrong with reading the lake at `dataDir` (it is missing, or no folder), or undefined; a folder with no lake yet reads as empty. */
const dataDirProblem = (dataDir: string): string | undefined => {
  // (a caller in plain JavaScript)
  if (typeof dataDir !== "string") return `dataDir must be the path of the folder an export wrote, a string; got ${kindOfValue(dataDir)}`
  if (dataDir.trim() === "") return "dataDir is empty: give the folder an export wrote"
  try {
    return statSync(dataDir).isDirectory() ? undefined : `dataDir ${dataDir} is a file, not the folder an export wrote`
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return code === "ENOENT" || code === "ENOTDIR"
      ? `dataDir ${dataDir} does not exist: give the folder an export wrote`
      : `dataDir ${dataDir} cannot be read (${code ?? (e as Error).message})`
  }
}

/**
 * Opens the analytics' DuckDB and its connection, configured; the scope closes the connection,
 * then the instance, then removes the confined DuckDB's spill folder. `dataDir`: the data folder
 * as the connection knows it (a confined DuckDB's by its real path, as its sandbox compares paths).
 */
export const openAnalyticsDatabase = (options: AnalyticsOptions) =>
  Effect.gen(function* () {
    // a mistyped folder read as an empty lake: every count 0, with success
    const problem = dataDirProblem(options?.dataDir)
    if (problem) return yield* new AnalyticsError({ message: problem })
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
        try: async () => (await duckdbApi()).DuckDBInstance.create(options.dbFile ?? ":memory:", { autoinstall_known_extensions: "false" }),
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
    yield* configure(conn, dataDir, confine, scratch)
    return { dataDir, conn }
  })
