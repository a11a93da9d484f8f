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
import { Context, Effect, Layer } from "effect"
import type { Column } from "./columns.js"
import { rewriteFiles } from "./rewrite.js"
import { openSinkDatabase, readRows } from "./sinkDatabase.js"
import { makeStagingBudget } from "./sinkMemory.js"
import { openStagedFile } from "./stagedFile.js"
import type { SinkConfig, SinkError, StagedFile, WrittenFile } from "./sinkTypes.js"

export { copyMemory } from "./sinkMemory.js"
export { SinkError, type SinkConfig, type StagedFile, type WrittenFile } from "./sinkTypes.js"

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
