/**
 * Rows of a date-partitioned dataset (router samples, tracked transfers) committed as one file per
 * UTC day of the partition's column: a round, or a flush, that spans midnight is two files, each
 * under the date of its rows (a file placed by the round's start put the next day's quotes under
 * the day before, and `WHERE date = …` missed them).
 */
import { Effect } from "effect"
import type { Column, Row } from "../lake/columns.js"
import { dateFile, type DatePartitioning } from "../lake/layout.js"
import { ParquetSink } from "../lake/ParquetSink.js"
import { commitFiles, writePending, type OnCommitted } from "../engine/commit.js"

/** What commitByDate needs of a dataset. */
export interface DatedDataset {
  readonly name: string
  readonly columns: ReadonlyArray<Column>
  readonly sortKey: ReadonlyArray<string>
  readonly partition: DatePartitioning
}

/** The UTC day (YYYY-MM-DD) of each row, by the partition's column. */
const daysOf = (dataset: DatedDataset, rows: ReadonlyArray<Row>) => {
  const at = dataset.columns.findIndex((c) => c.name === dataset.partition.column)
  const days = new Map<string, Array<Row>>()
  for (const row of rows) {
    const day = new Date(String(row[at])).toISOString().slice(0, 10)
    const group = days.get(day)
    if (group) group.push(row)
    else days.set(day, [row])
  }
  return days
}

/** Commits `rows` in one commit, a file per day named `name` under it (`onCommitted` told once it went through); the files' paths, in day order. */
export const commitByDate = (dataset: DatedDataset, rows: ReadonlyArray<Row>, name: string, onCommitted?: OnCommitted) =>
  Effect.gen(function* () {
    const sink = yield* ParquetSink
    const files = []
    for (const [day, group] of [...daysOf(dataset, rows)].sort(([a], [b]) => a.localeCompare(b))) {
      const writer = yield* sink.openFile(dataset.columns, dataset.sortKey)
      for (const row of group) writer.append(row)
      const rel = dateFile(new Date(`${day}T00:00:00Z`), name)
      files.push(yield* writePending(writer, dataset.name, rel, { min: null, max: null }).pipe(Effect.ensuring(writer.close())))
    }
    // the engine's commit: pending files, renamed into place with their manifest entry
    if (files.length > 0) yield* commitFiles(dataset.name, files, undefined, onCommitted)
    return files.map((f) => f.path)
  })
