/**
 * Writing a Parquet file whole or not at all: DuckDB COPYs to a temp name beside the target, the
 * file is fsynced, hashed and renamed into place, so a reader never sees a partial file; a failed
 * COPY or commit leaves no stray file in the lake.
 */
import { open, rename, rm, stat } from "node:fs/promises"
import { dirname } from "node:path"
import { Effect } from "effect"
import type { GuardedConnection } from "./duckdb.js"
import { makeFolder, sha256File } from "./files.js"
import { SinkError, type WrittenFile } from "./sinkTypes.js"
import { runSql } from "./sinkDatabase.js"
import { sqlString } from "./sql.js"

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

export interface CopyOptions {
  /** rows per row group */
  readonly groupRows: number
  /** whether `select` sorts the rows (reported in the written file) */
  readonly sorted: boolean
  /** the COPY takes one permit of these (the sink's COPYs at once) */
  readonly permits?: Effect.Semaphore
}

/**
 * Writes what `select` answers to `path`, whole or not at all: COPY (ZSTD, row groups of
 * `groupRows`) to a temp name beside it, then `settle`; a failed COPY's part-written temp file
 * is removed.
 */
export const copyToFile = (conn: GuardedConnection, select: string, path: string, options: CopyOptions) =>
  Effect.gen(function* () {
    const tmp = `${path}.tmp`
    yield* Effect.tryPromise({
      try: () => makeFolder(dirname(path)),
      catch: (e) => new SinkError({ message: (e as Error).message, path })
    })
    const copy = runSql(
      conn,
      `COPY (${select}) TO ${sqlString(tmp)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${options.groupRows})`,
      path
    )
    // COPY answers the rows it wrote: what is left once repeats are dropped
    const copied = yield* (options.permits ? options.permits.withPermits(1)(copy) : copy).pipe(Effect.tapError(() => removeQuietly(tmp)))
    return yield* settle(tmp, path, copied.rowsChanged, options.sorted)
  })
