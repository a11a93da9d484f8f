/**
 * ParquetSink: rows in, complete Parquet files out, written by DuckDB itself. Rows are appended
 * to a per-writer staging table; `finish` COPYs them (sorted, ZSTD, statistics on) to a temp
 * name beside the target, fsyncs, hashes and renames, so a reader never sees a partial file.
 * Memory is bounded per writer: callers finish a file every `flushBytes`.
 *
 * Its parts: the DuckDB instance and its connections (sinkDatabase.ts), a staged file
 * (stagedFile.ts, its columns' staging in stagedColumns.ts), the atomic COPY (atomicCopy.ts),
 * the merge of files (rewrite.ts) and what all of it holds in DuckDB's memory (sinkMemory.ts).
 */
import { Context, Data, Effect, Layer } from "effect"
import type { Column, Value } from "./columns.js"
import { rewriteFiles } from "./rewrite.js"
import { openSinkDatabase, readRows } from "./sinkDatabase.js"
import { makeStagingBudget } from "./sinkMemory.js"
import { openStagedFile } from "./stagedFile.js"

export { copyMemory } from "./sinkMemory.js"

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

export const makeParquetSink = (config: SinkConfig = {}) =>
  Effect.gen(function* () {
    const db = yield* openSinkDatabase(config)
    // Stryker disable next-line LogicalOperator: a semaphore of undefined permits lets every taker through, as no limit does
    const writesAtOnce = config.copies ?? Number.MAX_SAFE_INTEGER
    const copying = yield* Effect.makeSemaphore(writesAtOnce)
    const budget = makeStagingBudget(config.stagingBudget ?? Infinity)
    const staging = { rowGroupSize: config.rowGroupSize ?? 122_880, copyBytes: config.copyBytes ?? Infinity, copying, budget }
    const query = (sql: string) =>
      Effect.gen(function* () {
        const conn = yield* db.connect
        return yield* readRows(conn, sql).pipe(Effect.ensuring(db.disconnect(conn)))
      })
    return {
      openFile: (columns, sortKey) => openStagedFile(db, columns, sortKey, staging),
      overBudget: budget.over,
      writesAtOnce,
      rewrite: (inputs, path, sortKey, where) => rewriteFiles(db, inputs, path, sortKey, where),
      query
    } satisfies ParquetSinkService
  })

export const layerParquetSink = (config: SinkConfig = {}) => Layer.scoped(ParquetSink, makeParquetSink(config))
