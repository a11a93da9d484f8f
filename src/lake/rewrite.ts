/**
 * The merge of Parquet files into one (compaction, a rollback's cut): DuckDB reads the inputs and
 * writes one file of their rows, sorted, atomically (atomicCopy.ts).
 */
import { stat } from "node:fs/promises"
import { Effect } from "effect"
import { copyToFile } from "./atomicCopy.js"
import { SinkError } from "./sinkTypes.js"
import { readRows, type SinkDatabase } from "./sinkDatabase.js"
import { rewriteGroupRows } from "./sinkMemory.js"
import { orderByOf, sqlStringList } from "./sql.js"

/**
 * Writes the rows of the Parquet files `inputs` into one file at `path`, sorted by `sortKey` and
 * then by input and row order; with `where`, only the rows it holds for (ParquetSinkService.rewrite).
 */
export const rewriteFiles = (
  db: SinkDatabase,
  inputs: ReadonlyArray<string>,
  path: string,
  sortKey: ReadonlyArray<string>,
  where?: string
) =>
  Effect.gen(function* () {
    yield* db.makeScratch
    const sizes = yield* Effect.tryPromise({
      try: () => Promise.all(inputs.map((f) => stat(f).then((s) => s.size))),
      catch: (e) => new SinkError({ message: (e as Error).message, path })
    })
    const list = sqlStringList(inputs)
    const filter = where ? ` WHERE ${where}` : ""
    const conn = yield* db.connect
    return yield* Effect.gen(function* () {
      const [counted] = yield* readRows(
        conn,
        `SELECT count(*)::BIGINT AS n FROM read_parquet(${list}, hive_partitioning = false, union_by_name = true)${filter}`,
        path
      )
      const groupRows = rewriteGroupRows(
        Number(counted.n),
        sizes.reduce((a, b) => a + b, 0)
      )
      const order = [...orderByOf(sortKey), `list_position(${list}, filename)`, "file_row_number"].join(", ")
      return yield* copyToFile(
        conn,
        `SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet(${list}, hive_partitioning = false, union_by_name = true, filename = true, file_row_number = true)${filter} ORDER BY ${order}`,
        path,
        { groupRows, sorted: true }
      )
    }).pipe(Effect.ensuring(db.disconnect(conn)))
  })
