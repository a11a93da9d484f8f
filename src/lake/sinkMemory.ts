/**
 * What the sink's writing holds in DuckDB's memory, and the bounds that keep it within the
 * sink's memory limit: the staging budget of all open writers together, what one COPY of staged
 * rows needs, and the size of the row groups a COPY builds whole in memory.
 */
import type { StagedFile } from "./sinkTypes.js"

/** DuckDB's vector size: what an appender and a COPY handle at once */
const CHUNK_ROWS = 2048
const COPY_BASE_BYTES = 8 * 1024 * 1024
/**
 * What a COPY of staged rows holds in DuckDB's memory beside their table, about: the rows of one
 * chunk (2,048 rows, or the whole table when it is smaller) ~3.4 times (read, cast to JSON,
 * encoded), and ~8 MB more. Measured for txs-like rows (two columns of half the row each, one cast
 * to JSON) with tables of 8–32 MB: rows of 3 kB 23–31 MB whatever the table, rows of 20, 40 and
 * 100 kB 27, 51, 82 and 102–106 MB for 8, 16, 24 and 32 MB (bench/RESULTS.md).
 */
export const copyMemory = (bytes: number, rows: number) =>
  rows === 0 ? 0 : COPY_BASE_BYTES + 3.4 * Math.min(bytes, (bytes / rows) * CHUNK_ROWS)

/**
 * An appender holds its rows in a chunk of 2,048 rows, outside DuckDB's memory limit, before they
 * go into its table: 6 MB of ordinary txs, but 80 MB and more of txs of 20 kB. Past this many
 * bytes of strings, it hands them over early (ordinary rows fill their 2,048 first: no change).
 */
export const APPENDER_CHUNK_BYTES = 8 * 1024 * 1024

/** the most string bytes a row group of staged rows holds (see `stagedGroupRows`) */
const ROW_GROUP_BYTES = 8 * 1024 * 1024
/** the compressed bytes a rewritten file's row group holds, about (see `rewriteGroupRows`) */
const REWRITE_GROUP_BYTES = 2 * 1024 * 1024
/** the most rows of a rewritten file's row group */
const REWRITE_GROUP_ROWS = 122_880

/** Rows per row group for `rows` rows of `bytes` bytes, so that a group holds about `groupBytes`: 2,048 at least, `most` at most. */
const groupRowsFor = (rows: number, bytes: number, groupBytes: number, most: number) =>
  Math.max(2048, Math.min(most, Math.floor((rows * groupBytes) / Math.max(1, bytes))))

/** A row group is built whole in memory, outside DuckDB's limit: ~8 MB of strings at most, whatever the row size. */
export const stagedGroupRows = (rows: number, stagedBytes: number, rowGroupSize: number) =>
  groupRowsFor(rows, stagedBytes, ROW_GROUP_BYTES, rowGroupSize)

/** A rewritten file's row group is built whole in memory: ~2 MB of compressed input per group, whatever the row size. */
export const rewriteGroupRows = (rows: number, inputBytes: number) =>
  groupRowsFor(rows, inputBytes, REWRITE_GROUP_BYTES, REWRITE_GROUP_ROWS)

/** The open writers, and whether together they stage more than `budget` bytes (their users then finish files early). */
export interface StagingBudget {
  readonly add: (file: StagedFile) => void
  readonly remove: (file: StagedFile) => void
  readonly over: () => boolean
}

export const makeStagingBudget = (budget: number): StagingBudget => {
  const open = new Set<StagedFile>()
  return {
    add: (file) => void open.add(file),
    remove: (file) => void open.delete(file),
    over: () => {
      let total = 0
      for (const w of open) total += w.stagedBytes()
      return total > budget
    }
  }
}
