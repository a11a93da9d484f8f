/**
 * Following the chain: after catching up, poll /status and export what is new, in small committed
 * increments, until stopped (or until a height is reached). Each round is an ordinary resumable
 * export, so stopping at any moment leaves committed state consistent.
 *
 * Every round commits a few small files per dataset (~2,500 an hour at 0.5 s blocks), so a round
 * after which a partition holds `compactAfter` small files compacts it (lake/compaction.ts), and a
 * run that reaches its height compacts what is left: the lake stays a handful of files per partition.
 */
import { type Duration, Effect } from "effect"
import { compactLake, DEFAULT_COMPACTION, type CompactOptions, type DatasetCompaction } from "../lake/compaction.js"
import type { Dataset } from "./Dataset.js"
import { ExportError, runExport, type ExportOptions, type ExportReport } from "./export.js"
import { Manifests } from "../lake/Manifests.js"
import { LakeIdentityError } from "./identity.js"
import { Source } from "./Source.js"
import { withShardWorkers } from "./workers.js"

export interface FollowOptions {
  readonly poll: Duration.Duration
  /** stop once the lake reaches this height (default: never) */
  readonly untilHeight?: number
  readonly onRound?: (report: ExportReport) => void
  /** small files a partition may hold before a round compacts it; 0: never compact (default 8) */
  readonly compactAfter?: number
  /** how compaction sizes files and how long replaced files stay (lake/compaction.ts) */
  readonly compaction?: Omit<CompactOptions, "dryRun" | "onMerged">
  readonly onCompacted?: (reports: ReadonlyArray<DatasetCompaction>) => void
  /** after a poll that found nothing new: the tip, and since when it has not moved */
  readonly onWaiting?: (tip: number, since: Date) => void
  /**
   * polls a lagging watermark may stay put below --until-height, with the tip past it, before the
   * run stops; and rounds in a row whose pages may disagree (replicas apart) before it fails (default 20)
   */
  readonly settlePolls?: number
  /** how long rounds whose indexer serves the lake's history short of the lake's tip (a replica catching up after a restart) are tried again before the run fails (ms; default 10 minutes) */
  readonly behindForMs?: number
}

/** How long a follow tries again rounds that find the indexer behind the lake's tip. */
const BEHIND_FOR_MS = 10 * 60_000

/** Small files a followed partition holds before a round compacts it. */
export const FOLLOW_COMPACT_AFTER = 8

/** The datasets a follow run keeps fresh by default: the append-only ones (snapshots are taken on their own schedule). */
export const followDefaults = (catalog: ReadonlyArray<Dataset>) => catalog.filter((d) => d.kind === "append").map((d) => d.name)

/**
 * Follows the chain with one set of shard workers for the whole run (where the run has some):
 * started once, not at every round.
 */
export const followExport = (catalog: ReadonlyArray<Dataset>, options: ExportOptions, follow: FollowOptions) =>
  options.dryRun || options.toHeight !== undefined
    ? Effect.fail(
        new ExportError({
          message: options.dryRun
            ? "a dry run plans one export and writes nothing: a follow writes every round"
            : "toHeight bounds one export: a follow stops at untilHeight"
        })
      )
    : Effect.flatMap(Manifests, (manifests) => withShardWorkers(followRounds(catalog, options, follow), manifests))

const followRounds = (catalog: ReadonlyArray<Dataset>, options: ExportOptions, follow: FollowOptions) =>
  Effect.gen(function* () {
    const source = yield* Source
    const datasets = options.datasets ?? followDefaults(catalog)
    // the watermarks the followed datasets export up to (internal txs lag the tip: their own mark)
    const marks = [...new Set(catalog.flatMap((d) => (d.kind === "append" && datasets.includes(d.name) ? [d.list.watermark] : [])))]
    const { untilHeight } = follow
    /** the height a round planned its datasets of watermark `m` up to (Infinity where it planned none: they are skipped) */
    const planned = (report: ExportReport, m: string) =>
      Math.min(
        ...report.plans.flatMap((p) => {
          const d = catalog.find((x) => x.name === p.dataset)
          return d?.kind === "append" && d.list.watermark === m ? [p.heights?.[1] ?? -1] : []
        })
      )
    let last = ""
    let lastTip = -1
    let since = new Date()
    const compactAfter = follow.compactAfter ?? FOLLOW_COMPACT_AFTER
    const compact = (minFiles: number) =>
      compactAfter > 0
        ? Effect.tap(
            compactLake(
              catalog.filter((d) => datasets.includes(d.name)),
              // a `chain-lake compact` of this lake running beside: this round's compaction is skipped, not waited for (the next round's does it)
              {
                ...follow.compaction,
                policy: { ...(follow.compaction?.policy ?? DEFAULT_COMPACTION), minFiles },
                whenBusy: "skip",
                onBusy: (m) => options.observer?.notice?.(m)
              }
            ),
            (reports) => Effect.sync(() => (reports.some((r) => r.merged.length > 0) ? follow.onCompacted?.(reports) : undefined))
          )
        : Effect.void
    /*
     * A lagging watermark is no promise that every height below it will fill: internal_tx_height is
     * the highest height holding internal txs, and a height whose trace failed is skipped for good
     * (Rollytics `util/common-handler/status/status.go` `getInternalTxHeight`, the internal-tx
     * extension's consumer logs the failure and goes on). So with the tip past --until-height and a
     * mark that has not moved for `settlePolls` polls, the run ends rather than wait for rows that
     * may never come; but a stalled extension looks the same from /status, so it cannot say the
     * heights between are complete: it fails (exit 1) naming them, everything else committed.
     */
    const settlePolls = follow.settlePolls ?? 20
    /** rounds in a row whose pages disagreed (IndexerPagingError): tried again at the next poll, `settlePolls` times at most */
    let disagreeing = 0
    /** since when the rounds found the indexer behind the lake's tip (its own limit: a replica catches up in minutes, not polls) */
    let behindSince: number | undefined
    const behindFor = follow.behindForMs ?? BEHIND_FOR_MS
    /** whether a round's failure is one the next poll tries again, and which of the two (counted as it is judged) */
    const triedAgain = (e: { readonly _tag: string }): string | undefined => {
      if (e instanceof LakeIdentityError && e.behindAt !== undefined) {
        behindSince ??= Date.now()
        const waited = Date.now() - behindSince
        return waited < behindFor ? `${Math.round(waited / 1000)} s of ${Math.round(behindFor / 1000)} s behind` : undefined
      }
      return e._tag === "IndexerPagingError" && ++disagreeing <= settlePolls ? `${disagreeing} of ${settlePolls}` : undefined
    }
    const still = new Map<string, { value: number | undefined; polls: number }>()
    let lastReport: ExportReport | undefined
    const notices = roundNotices((m) => options.observer?.notice?.(m))
    /** adoptLake is the user's word for the lake as the run found it: the rounds adopt until one has exported, not after (a later rollback's lake is checked) */
    let adopting = options.adoptLake === true
    for (;;) {
      const status = yield* source.status
      for (const m of marks) {
        const seen = still.get(m)
        if (seen && seen.value === status.watermarks[m]) seen.polls++
        else still.set(m, { value: status.watermarks[m], polls: 0 })
      }
      const now = [status.tip, ...marks.map((m) => status.watermarks[m])].join(",")
      // the tip's last move, for onWaiting (a watermark catching up is not a new block)
      if (status.tip !== lastTip) {
        lastTip = status.tip
        since = new Date()
      }
      const changed = now !== last
      if (changed) {
        // heights above a watermark are exported by a later round, when the chain has them
        const report = yield* runExport(catalog, {
          ...options,
          datasets,
          adoptLake: adopting,
          toHeight: untilHeight,
          toHeightAhead: true,
          observer: { ...options.observer, notice: (m, standing) => (standing ? notices.say(m) : options.observer?.notice?.(m)) }
        }).pipe(
          // replicas a block apart answer a round differently now and then, and one behind the lake's
          // tip serves its history short of it: the next poll tries again (what a round committed stays)
          Effect.catchAll((e) => {
            const again = triedAgain(e)
            if (again === undefined) return Effect.fail(e)
            options.observer?.notice?.(
              `${e._tag === "IndexerPagingError" ? String(e) : e.message} (following: trying again at the next poll, ${again})`
            )
            return Effect.succeed(undefined)
          })
        )
        notices.roundEnded()
        if (report === undefined) {
          last = ""
          yield* Effect.sleep(follow.poll)
          continue
        }
        disagreeing = 0
        behindSince = undefined
        adopting = false
        lastReport = report
        follow.onRound?.(lastReport)
        // a round that wrote short of its tip (the indexer did not serve the tip's block yet), or
        // planned below what this poll saw (its /status answered by a replica behind), is run again at the next poll
        const behind = marks.some((m) => planned(report, m) < Math.min(untilHeight ?? Infinity, status.watermarks[m] ?? Infinity))
        last = lastReport.writtenTo === undefined && !behind ? now : ""
      }
      const short = lastReport?.writtenTo !== undefined && lastReport.writtenTo < (untilHeight ?? Infinity)
      if (untilHeight !== undefined && lastReport && !short) {
        const settled = marks.filter(
          (m) => (status.watermarks[m] ?? untilHeight) < untilHeight && status.tip >= untilHeight && still.get(m)!.polls >= settlePolls
        )
        // done once every followed dataset's round planned up to the height (a mark the source lacks: its dataset is skipped)
        if (marks.every((m) => planned(lastReport!, m) >= untilHeight || settled.includes(m))) {
          yield* compact(2)
          if (settled.length > 0)
            return yield* new ExportError({
              message: settled
                .map(
                  (m) =>
                    `${m} stayed at ${status.watermarks[m]} for ${settlePolls} polls with the tip at ${status.tip}: heights ${status.watermarks[m]! + 1}..${untilHeight} of its datasets are not exported (traces that failed, which the indexer skips for good, hold none; an extension that stalled holds them back); everything else is committed to ${untilHeight}: rerun later to find out`
                )
                .join("; ")
            })
          return lastReport
        }
      }
      if (changed) yield* compact(compactAfter)
      else follow.onWaiting?.(status.tip, since)
      yield* Effect.sleep(follow.poll)
    }
  })

/**
 * A round's standing notices (another writer of the lake, columns an older chain-lake did not
 * write), less those the round before said too: a follow says a condition once, not every poll,
 * and again once it has gone and come back. Other notices (a restart after a reorg) are events:
 * said each time.
 */
const roundNotices = (notice: (message: string) => void) => {
  let before = new Set<string>()
  let now = new Set<string>()
  return {
    say: (message: string) => {
      if (!before.has(message) && !now.has(message)) notice(message)
      now.add(message)
    },
    roundEnded: () => {
      before = now
      now = new Set()
    }
  }
}
