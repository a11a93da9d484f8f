/**
 * The sink's DuckDB: one in-memory instance within the sink's memory limit, spilling into its
 * temp directory, and the connections its writers and queries open on it. The instance's
 * finalizer closes every connection still open, then the instance, then removes the spill folder.
 */
import { rm } from "node:fs/promises"
import { dirname } from "node:path"
import type { DuckDBInstance } from "@duckdb/node-api"
import { Effect } from "effect"
import { duckdbApi, guardConnection, type GuardedConnection } from "./duckdb.js"
import { makeFolder } from "./files.js"
import { SinkError, type SinkConfig } from "./sinkTypes.js"

export interface SinkDatabase {
  /** A new connection: its user closes it (`disconnect`); any left open close with the instance. */
  readonly connect: Effect.Effect<GuardedConnection, SinkError>
  readonly disconnect: (conn: GuardedConnection, beforeClosing?: () => void) => Effect.Effect<void>
  /** Makes the folders DuckDB's spill folder goes in, once (before the first write). */
  readonly makeScratch: Effect.Effect<void, SinkError>
}

/** Runs SQL that answers no rows; a failure names `path` when one is given. */
export const runSql = (conn: GuardedConnection, sql: string, path?: string) =>
  Effect.tryPromise({ try: () => conn.use((c) => c.run(sql)), catch: (e) => new SinkError({ message: (e as Error).message, path }) })

/** Runs SQL and answers its rows as objects; a failure names `path` when one is given. */
export const readRows = (conn: GuardedConnection, sql: string, path?: string) =>
  Effect.tryPromise({
    try: async () => (await conn.use((c) => c.runAndReadAll(sql))).getRowObjectsJS() as Array<Record<string, unknown>>,
    catch: (e) => new SinkError({ message: (e as Error).message, path })
  })

type DatabaseConfig = Pick<SinkConfig, "threads" | "memoryLimit" | "tempDirectory">

/**
 * The DuckDB instance, started when it is first asked for (a run that writes nothing, or whose
 * shards are written by its shard workers, starts none: ~0.1 s of CPU and DuckDB's threads), and
 * closed with the scope after the connections in `connections`.
 */
const startInstance = (config: DatabaseConfig, connections: Set<GuardedConnection>) =>
  Effect.gen(function* () {
    let started: Promise<DuckDBInstance> | undefined
    const start = async () =>
      // Stryker disable next-line StringLiteral: "" is DuckDB's in-memory database too
      (await duckdbApi()).DuckDBInstance.create(":memory:", {
        threads: String(config.threads ?? 2),
        memory_limit: config.memoryLimit ?? "512MB",
        ...(config.tempDirectory ? { temp_directory: config.tempDirectory } : {}),
        autoinstall_known_extensions: "false",
        autoload_known_extensions: "true"
      })
    yield* Effect.addFinalizer(() =>
      started === undefined
        ? Effect.void
        : Effect.promise(async () => {
            const instance = await started!.catch(() => undefined)
            // a writer left open (its scope cut short) still runs nothing when the instance goes
            // Stryker disable next-line ArrayDeclaration,ArrowFunction: closing the instance closes its connections too; this only orders it
            await Promise.all([...connections].map((c) => c.close()))
            instance?.closeSync()
            // Stryker disable next-line all: DuckDB removes the temp directory it made as it closes; this is for one that did not
            if (config.tempDirectory) await rm(config.tempDirectory, { recursive: true, force: true }).catch(() => undefined)
          })
    )
    return Effect.tryPromise({
      try: () => (started ??= start()),
      catch: (e) => new SinkError({ message: `could not start DuckDB: ${(e as Error).message}` })
    })
  })

/*
 * DuckDB makes only the last folder of temp_directory: without its parents, the first spill
 * (writers past memory_limit) failed the run. Made when the first writer opens, so that a
 * sink that writes nothing (a dry run) creates nothing.
 */
const scratchMaker = (tempDirectory: string | undefined): Effect.Effect<void, SinkError> => {
  let scratchMade = !tempDirectory
  return Effect.suspend(() =>
    scratchMade
      ? Effect.void
      : Effect.tryPromise({
          try: () => makeFolder(dirname(tempDirectory!)),
          catch: (e) => new SinkError({ message: `cannot make DuckDB's scratch folder: ${(e as Error).message}` })
        }).pipe(
          // Stryker disable next-line ArrowFunction,BooleanLiteral: without the flag the folder is made again (mkdir -p: a cost, not a result)
          Effect.tap(() => {
            scratchMade = true
          })
        )
  )
}

export const openSinkDatabase = (config: DatabaseConfig) =>
  Effect.gen(function* () {
    /** The sink's open connections, each closed by its user, and any left by the instance's finalizer. */
    const connections = new Set<GuardedConnection>()
    const instance = yield* startInstance(config, connections)
    const connect = Effect.flatMap(instance, (started) =>
      Effect.tryPromise({
        try: async () => {
          const conn = guardConnection(await started.connect())
          connections.add(conn)
          return conn
        },
        // Stryker disable next-line ArrowFunction,ObjectLiteral: DuckDB failing to connect is not provoked by any test
        catch: (e) => new SinkError({ message: (e as Error).message })
      })
    )
    const disconnect = (conn: GuardedConnection, beforeClosing?: () => void) =>
      // Stryker disable next-line BlockStatement: closing the instance closes every connection; this frees one early (memory, not results)
      Effect.promise(async () => {
        await conn.close(beforeClosing)
        connections.delete(conn)
      })
    return { connect, disconnect, makeScratch: scratchMaker(config.tempDirectory) } satisfies SinkDatabase
  })
