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
    let lastTip = -1
    for (;;) {
      const status = yield* source.status
      if (status.tip !== lastTip) {
        const toHeight = follow.untilHeight !== undefined ? Math.min(follow.untilHeight, status.tip) : undefined
        const report = yield* runExport(catalog, { ...options, datasets, toHeight })
        follow.onRound?.(report)
        lastTip = status.tip
        if (follow.untilHeight !== undefined && status.tip >= follow.untilHeight) return report
      }
      yield* Effect.sleep(follow.poll)
    }
  })
