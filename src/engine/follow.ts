/**
 * Following the chain: after catching up, poll /status and export what is new, in small committed
 * increments, until stopped (or until a height is reached). Each round is an ordinary resumable
 * export, so stopping at any moment leaves committed state consistent.
 */
import { Duration, Effect } from "effect"
import type { Dataset } from "./Dataset.js"
import { runExport, type ExportOptions, type ExportReport } from "./export.js"
import { Source } from "./Source.js"

export interface FollowOptions {
  readonly poll: Duration.Duration
  /** stop once the lake reaches this height (default: never) */
  readonly untilHeight?: number
  readonly onRound?: (report: ExportReport) => void
}

/** The datasets a follow run keeps fresh by default: the append-only ones (snapshots are taken on their own schedule). */
export const followDefaults = (catalog: ReadonlyArray<Dataset>) => catalog.filter((d) => d.kind === "append").map((d) => d.name)

export const followExport = (catalog: ReadonlyArray<Dataset>, options: ExportOptions, follow: FollowOptions) =>
  Effect.gen(function* () {
    const source = yield* Source
    const datasets = options.datasets ?? followDefaults(catalog)
    // the watermarks the followed datasets export up to (internal txs lag the tip: their own mark)
    const marks = [...new Set(catalog.flatMap((d) => (d.kind === "append" && datasets.includes(d.name) ? [d.source.watermark] : [])))]
    const { untilHeight } = follow
    let last = ""
    for (;;) {
      const status = yield* source.status
      const now = [status.tip, ...marks.map((m) => status.watermarks[m])].join(",")
      if (now !== last) {
        // heights above a watermark are exported by a later round, when the chain has them
        const report = yield* runExport(catalog, { ...options, datasets, toHeight: untilHeight, toHeightAhead: true })
        follow.onRound?.(report)
        last = now
        // done once every followed dataset reached the height (a mark the source lacks: its dataset is skipped)
        if (untilHeight !== undefined && marks.every((m) => (status.watermarks[m] ?? untilHeight) >= untilHeight)) return report
      }
      yield* Effect.sleep(follow.poll)
    }
  })
