/** The Parquet sink's configuration, its staged files and what they write, and its error (ParquetSink.ts is the service). */
import { Data, type Effect } from "effect"
import type { Value } from "./columns.js"

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
