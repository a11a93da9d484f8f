/**
 * A shard's open files: one per target dataset and height bucket, each a StagedFile of the sink,
 * written into the lake's staging folder when it grows past `flushBytes` (after the page that
 * took it there), when its rows are too large for a COPY of more (at once, mid-page), when the
 * run's files together stage more than the sink's budget (the largest first), and at each
 * commit. Written files wait in `take` for the commit that includes them.
 */
import { Effect } from "effect"
import type { CommittedFile } from "../lake/Manifests.js"
import { bucketOf, shardFile } from "../lake/layout.js"
import type { ParquetSinkService, SinkError, StagedFile } from "../lake/ParquetSink.js"
import type { Range } from "../lake/RangeSet.js"
import type { Value } from "../lake/columns.js"
import { writeStaged } from "./commit.js"
import type { AppendDataset, AppendList } from "./Dataset.js"

/** A shard's open file for one dataset and height bucket, with the heights staged in it. */
export interface BucketFile {
  readonly writer: StagedFile
  readonly dataset: AppendDataset
  readonly bucket: number
  part: number
  minHeight: number
  maxHeight: number
}

export interface ShardFilesOptions {
  readonly list: AppendList
  readonly targets: ReadonlyArray<AppendDataset>
  readonly range: Range
  readonly bucketWidth: number
  /** a file is written once it stages this many bytes of strings */
  readonly flushBytes: number
  /** the lake's staging folder */
  readonly staging: string
  readonly sink: ParquetSinkService
}

/**
 * All files of the run together past the sink's budget: a shard writes its largest early (smaller
 * files rather than DuckDB past its memory limit). A file with no rows is flushed as a no-op.
 */
const flushLargestOverBudget = <E>(
  sink: ParquetSinkService,
  files: ReadonlyArray<BucketFile>,
  flush: (w: BucketFile) => Effect.Effect<void, E>
) =>
  Effect.gen(function* () {
    // Stryker disable next-line ConditionalExpression: the loop asks again before each flush; this spares the sort under budget
    if (!sink.overBudget()) return
    const largestFirst = [...files].sort((x, y) => y.writer.stagedBytes() - x.writer.stagedBytes())
    for (const w of largestFirst) {
      if (!sink.overBudget()) break
      yield* flush(w)
    }
  })

export const makeShardFiles = (options: ShardFilesOptions) => {
  const { list, targets, range, bucketWidth, flushBytes, staging, sink } = options
  const byKey = new Map<string, BucketFile>()
  const written = new Map<string, Array<CommittedFile>>(targets.map((d) => [d.name, []]))
  const opened: Array<StagedFile> = []
  // the file each target used last: consecutive records nearly always share a bucket
  const current: Array<BucketFile | undefined> = targets.map(() => undefined)
  // files past flushBytes, written after the page (a file may pass it by at most one page)
  const pastSize = new Set<BucketFile>()

  const flush = (w: BucketFile) =>
    Effect.gen(function* () {
      if (w.writer.rows() === 0) return
      // (its range is set when it is committed: the part of the shard that commit completes)
      const heights = { min: w.minHeight, max: w.maxHeight }
      const rel = shardFile(w.bucket, list.unit, range, w.part++)
      written.get(w.dataset.name)!.push(yield* writeStaged(w.writer, staging, w.dataset.name, rel, heights, range))
      w.minHeight = Infinity
      w.maxHeight = -Infinity
    })

  /** The file target `t` used last, when `height` falls in its bucket. */
  const cached = (t: number, height: number): BucketFile | undefined => {
    const last = current[t]
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: a cache of the file byKey holds (a miss finds the same one, only slower); its "always hit" mutant misfiles rows, which the several-buckets test of shard-edges.test sees
    return last && height >= last.bucket && height < last.bucket + bucketWidth ? last : undefined
  }

  /** The file of target `t` for a row at `height`, opened where its bucket has none yet. */
  const open = (t: number, height: number): Effect.Effect<BucketFile, SinkError> =>
    Effect.gen(function* () {
      const d = targets[t]
      const bucket = bucketOf(height, bucketWidth)
      const key = `${d.name}/${bucket}`
      let w = byKey.get(key)
      // Stryker disable next-line ConditionalExpression: heights only go forward in a shard, so a bucket whose file exists is never asked for again: the lookup always misses
      if (!w) {
        const writer = yield* sink.openFile(d.columns, d.sortKey)
        opened.push(writer)
        w = { writer, dataset: d, bucket, part: 0, minHeight: Infinity, maxHeight: -Infinity }
        byKey.set(key, w)
      }
      current[t] = w
      return w
    })

  /** Stages `row` (at `height`) in `w`; a file whose rows are too large for a COPY of more is written at once. */
  const append = (w: BucketFile, row: ReadonlyArray<Value>, height: number): Effect.Effect<void, SinkError> | undefined => {
    w.writer.append(row)
    // Stryker disable next-line EqualityOperator: equal heights change nothing
    if (height < w.minHeight) w.minHeight = height
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a file's rows come in height order, so the last height is its largest
    if (height > w.maxHeight) w.maxHeight = height
    if (w.writer.full()) {
      pastSize.delete(w)
      return flush(w)
    }
    // Stryker disable next-line EqualityOperator: a file one byte larger is the same file
    if (w.writer.stagedBytes() > flushBytes) pastSize.add(w)
    return undefined
  }

  /** After a page: the files past flushBytes are written, then the largest while the run's staging is over the sink's budget. */
  const afterPage = Effect.gen(function* () {
    for (const w of pastSize) yield* flush(w)
    pastSize.clear()
    yield* flushLargestOverBudget(sink, [...byKey.values()], flush)
  })

  /** Writes every open file of the targets `active` holds true for (a commit holds whole records). */
  const flushAll = (active: ReadonlyArray<boolean>) =>
    Effect.forEach([...byKey.values()], (w) => (active[targets.indexOf(w.dataset)] ? flush(w) : Effect.void), { discard: true })

  /** The files of `dataset` written since the last take. */
  const take = (dataset: string): ReadonlyArray<CommittedFile> => {
    const files = written.get(dataset)!
    written.set(dataset, [])
    return files
  }

  // Stryker disable next-line ObjectLiteral,BooleanLiteral: whether forEach keeps the closes' results, nothing reads them
  const close = Effect.forEach(opened, (w) => w.close(), { discard: true })

  return { cached, open, append, afterPage, flushAll, take, close }
}

export type ShardFiles = ReturnType<typeof makeShardFiles>
