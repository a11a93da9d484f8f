/**
 * The export engine: runs the datasets of a registry against a `Source` into the lake. It knows no
 * dataset and no API by name: datasets are declarations (Dataset.ts), the API is a driver
 * (src/drivers/), the lake is Manifests and ParquetSink.
 *
 * A run: (1) starts its shard workers in the background, where it has some, and asks the source's
 * status and probes each selected dataset's list with one row (is it served; where a height
 * source starts, where a position source ends), all at once, then where the asked heights fall
 * in position sources, by cursor probes (no offset: see positionRange);
 * (2) plans each source's shards (plan.ts) from what its datasets have not committed; (3) runs
 * every shard of every dataset, and the snapshots, in one pool, largest first, at most
 * `concurrency` of them paging at once; a shard that has paged its range writes and commits its
 * last files without its paging slot, and the pool holds as many tasks again as the sink writes
 * files at once, so that when shards end paging together, that many more start paging while they
 * write (snapshots that read what this run commits, such as holders reading blocks' fee denoms,
 * start once those datasets are done).
 * Every request goes through the one request limiter of the source's client.
 */
import { randomUUID } from "node:crypto"
import { Effect, Either } from "effect"
import { DEFAULTS as EXPORT_DEFAULTS } from "../defaults.js"
import { decodeWithPath, kindOfValue } from "../schema/decode.js"
import { Manifests } from "../lake/Manifests.js"
import { ParquetSink } from "../lake/ParquetSink.js"
import type { Range } from "../lake/RangeSet.js"
import type { AppendDataset, AppendList, Dataset } from "./Dataset.js"
import { appendTasks, makeTally, runTasks, shardRunner, snapshotTasks, type RunContext, type Tally } from "./exportTasks.js"
import {
  ExportError,
  ExportOptionsSchema,
  type Env,
  type ExportableDataset,
  type ExportOptions,
  type ExportReport,
  type Failure
} from "./exportTypes.js"
import {
  ANCHOR_BELOW_TIP,
  anchorIdentity,
  checkIdentity,
  explainedByMove,
  highestHeld,
  historyGuard,
  type LakeIdentityError
} from "./identity.js"
import { runPageBudget } from "./pageBudget.js"
import { heightBounds } from "./plan.js"
import { committedGuesses, positionRange, probe, type PlanReads, type TipBlock } from "./probe.js"
import { describeRollback, finishRollback, rollbackLake } from "./rollback.js"
import { makePositionOrder } from "./positionOrder.js"
import { makeRowCounts } from "./rowCounts.js"
import type { ShardSettings } from "./shard.js"
import { shardLakeOf } from "./ShardLake.js"
import { Source, type SourceStatus } from "./Source.js"
import { noShardWorkers, startingShardWorkers } from "./workers.js"

export {
  ExportError,
  type DatasetPlan,
  type DatasetResult,
  type ExportObserver,
  type ExportOptions,
  type ExportReport
} from "./exportTypes.js"

/** What is wrong with the dataset names a user gave (unknown, or sampled rather than exported), or undefined: checked before anything starts. */
export const datasetNamesProblem = (catalog: ReadonlyArray<Dataset>, names: ReadonlyArray<string> | undefined): string | undefined => {
  // sampled datasets (router quotes, transfers) are written by their samplers, not exported
  if (names === undefined) return undefined
  const sampled = names.filter((n) => catalog.some((d) => d.name === n && d.kind === "sample"))
  if (sampled.length > 0)
    return `${sampled.join(", ")} ${sampled.length > 1 ? "are" : "is"} sampled from the router, not exported: use chain-lake sample-routes or track`
  return namesProblem(
    catalog.filter((d) => d.kind !== "sample"),
    names
  )
}

/** A list of dataset names that names none, or one `known` lacks, as one line; undefined when every name is known. */
export const namesProblem = (known: ReadonlyArray<{ readonly name: string }>, names: ReadonlyArray<string>): string | undefined => {
  const all = known.map((d) => d.name).join(", ")
  // an empty list (`--datasets ""`, an unset shell variable) is refused: a run of nothing is not a run done
  if (names.length === 0) return `no dataset named; known: ${all}`
  const unknown = names.filter((n) => !known.some((d) => d.name === n))
  // a name in other case, or the stem of datasets (token_transfers: the view over token_transfers_evm and _cosmos)
  const meant = known.filter((d) => unknown.some((n) => d.name.toLowerCase() === n.toLowerCase() || d.name.startsWith(`${n}_`)))
  const hint = meant.length > 0 ? ` (did you mean ${meant.map((d) => d.name).join(", ")}?)` : ""
  return unknown.length > 0 ? `unknown dataset ${unknown.join(", ")}${hint}; known: ${all}` : undefined
}

/** What is wrong with a run's page size and height bounds, or undefined: checked before anything starts. */
export const exportOptionsProblem = (
  pageSize: number,
  maxPageSize: number,
  options: Pick<ExportOptions, "fromHeight" | "toHeight">
): string | undefined => {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize)
    return `pageSize must be 1..${maxPageSize} (the source's largest page), got ${pageSize}`
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a comparison with undefined is false, so the guards only say what is meant
  if (options.fromHeight !== undefined && options.toHeight !== undefined && options.fromHeight > options.toHeight)
    return `fromHeight ${options.fromHeight} is above toHeight ${options.toHeight}`
  return undefined
}

/** How many times a run with `onReorg: "rollback"` starts over when its source changes history under it. */
export const ROLLBACK_RESTARTS = 3

/**
 * Exports the datasets of `catalog` that `options` selects. With `onReorg: "rollback"`, a run whose
 * source moves to another history (its history guard fails at a commit) starts over: the new
 * start finds the fork and rolls the lake back first.
 */
export const runExport = (catalog: ReadonlyArray<Dataset>, options: ExportOptions = {}): Effect.Effect<ExportReport, Failure, Env> =>
  Effect.suspend(() => {
    // (a caller in plain JavaScript: the schema's answer would spell out every option's type)
    if (typeof options !== "object" || options === null)
      return Effect.fail(new ExportError({ message: `the export's options must be an object, got ${kindOfValue(options)}` }))
    // the options as decoded, read once: an option inherited, or a getter's second answer, is not what was checked
    const checked = decodeWithPath(ExportOptionsSchema, options, "error")
    return Either.isLeft(checked)
      ? Effect.fail(new ExportError({ message: `the export's options: ${checked.left.path || "(all)"}: ${checked.left.message}` }))
      : exportRestarting(catalog, checked.right as ExportOptions)
  })

const exportRestarting = (
  catalog: ReadonlyArray<Dataset>,
  options: ExportOptions,
  restarts = 0
): Effect.Effect<ExportReport, Failure, Env> =>
  options.onReorg === "rollback" && restarts < ROLLBACK_RESTARTS
    ? Effect.catchIf(
        exportOnce(catalog, options),
        (e): e is LakeIdentityError => e._tag === "LakeIdentityError" && (e as LakeIdentityError).duringRun === true,
        () => {
          options.observer?.notice?.(
            "the indexer's history changed during the run: starting over, to roll back what it no longer holds (--on-reorg rollback)"
          )
          return exportRestarting(catalog, options, restarts + 1)
        }
      )
    : exportOnce(catalog, options)

const exportOnce = (catalog: ReadonlyArray<Dataset>, options: ExportOptions): Effect.Effect<ExportReport, Failure, Env> =>
  Effect.scoped(exportScoped(catalog, options))

const exportScoped = (catalog: ReadonlyArray<Dataset>, options: ExportOptions) =>
  Effect.gen(function* () {
    const source = yield* Source
    // block times and txs read by an earlier run of the process may be of another history now
    yield* source.forget
    const startedAt = new Date().toISOString()
    const pageSize = options.pageSize ?? EXPORT_DEFAULTS.pageSize
    const concurrency = options.concurrency ?? EXPORT_DEFAULTS.concurrency
    const notice = (m: string) => options.observer?.notice?.(m)
    const badOptions = exportOptionsProblem(pageSize, source.maxPageSize, options)
    if (badOptions) return yield* new ExportError({ message: badOptions })
    const badNames = datasetNamesProblem(catalog, options.datasets)
    if (badNames) return yield* new ExportError({ message: badNames })
    const exportable = catalog.filter((d): d is ExportableDataset => d.kind !== "sample")
    const selected = exportable.filter((d) => !options.datasets || options.datasets.includes(d.name))
    const manifests = yield* Manifests
    for (const d of selected) yield* manifests.checkUnlisted(d.name)
    // (a dry run writes nothing: not even the folder that tells other writers of it)
    const others = options.dryRun ? [] : yield* manifests.joinWriters
    if (others.length > 0) options.observer?.notice?.(anotherWriterNotice(manifests.root, others), true)
    // the run's shard workers (where it has some) start while it probes and plans: their start is otherwise on its critical path
    const withWorkers =
      options.dryRun || !selected.some((d) => d.kind === "append")
        ? noShardWorkers
        : yield* startingShardWorkers({ root: manifests.root, staging: manifests.staging })

    const anchors = (yield* manifests.identity)?.anchors ?? []
    const answers = yield* probe(
      source,
      selected,
      // the block anchorOfRun anchors, where the lake holds no anchor there
      (status) => topOf(status, selected, options) === status.tip && !anchors.some((a) => a.height === status.tip)
    )
    const status: SourceStatus = answers.status
    // the bytes of pages in flight, run-wide (pageBudget.ts); each list's records first weighed by its probe
    const budget = yield* runPageBudget(concurrency)
    for (const d of selected) if (d.kind === "append") budget.observe(d.list.id, answers.newest(d.list) ?? { items: [] })
    const settled = yield* settleHistory(exportable, status, options, notice)
    const tally = makeTally(selected, options.observer ?? {})
    const { anchor, below, unrecorded, unanchored, adoptedAnchor } = yield* anchorOfRun(
      status,
      selected,
      options,
      settled,
      notice,
      answers.tipBlock
    )
    const vouched = below === undefined ? status : { ...status, watermarks: capped(status.watermarks, below) }
    const live = yield* liveDatasets(selected, answers, status, tally, options, below)
    if (unanchored !== undefined && live.length > 0)
      return yield* new ExportError({
        message: `the indexer serves none of blocks ${Math.max(1, unanchored - ANCHOR_BELOW_TIP)}..${unanchored} yet, and the lake holds no anchor it serves: nothing anchors what this run would write to a history; rerun once it serves them`
      })
    // an adopted lake names its chain from now on, whatever this run commits
    if (adoptedAnchor) yield* manifests.recordIdentity(status.chainId, adoptedAnchor)
    // a lake without blocks knows its history by its anchors alone: each commit's top block is anchored too
    const blockless = !selected.some((d) => d.name === "blocks") && ((yield* manifests.get("blocks"))?.files.length ?? 0) === 0
    const guard = anchor
      ? yield* historyGuard(anchor, manifests.root, { id: status.chainId, unrecorded: unrecorded === true, witnessing: blockless })
      : undefined
    const groups = new Map<string, Array<AppendDataset>>()
    for (const d of live) if (d.kind === "append") groups.set(d.list.id, [...(groups.get(d.list.id) ?? []), d])
    const ranges = yield* explainedByMove(
      searchRanges([...groups.values()], answers, vouched, options, { fanout: concurrency, pageSize, budget }),
      guard
    )

    const counts = makeRowCounts({
      live: live.filter((d) => d.kind === "append"),
      catalog: catalog.filter((d): d is AppendDataset => d.kind === "append"),
      staging: manifests.staging,
      sink: yield* ParquetSink,
      committedFiles: manifests.withCommittedFiles,
      quarantinedIn: tally.quarantinedIn,
      disagreed: (at, from) =>
        Effect.flatMap(manifests.identity, (prior) =>
          prior
            ? Effect.asVoid(
                manifests.updateIdentity((now) => ({ ...(now ?? prior), disagreed: { at, from, found_at: new Date().toISOString() } }))
              )
            : Effect.void
        )
    })
    const run: RunContext = {
      options,
      settings: shardSettings(options, pageSize, status.chainId, ranges),
      concurrency,
      // paging slots: a shard takes one while it pages (shard.ts), a snapshot for all of its run
      fetchSlots: yield* Effect.makeSemaphore(concurrency),
      tally,
      // shards run here, or in the run's shard workers (each commit made here either way)
      lake: yield* shardLakeOf(tally.events.committed, [
        makePositionOrder({
          positioned: new Set(live.flatMap((d) => (d.kind === "append" && d.list.unit === "position" ? [d.name] : []))),
          manifest: manifests.get
        }),
        ...(counts ? [counts] : [])
      ])
    }
    const tasks = yield* appendTasks(ranges, run, yield* shardRunner(run))
    const snapshots = yield* snapshotTasks(live, status, run)
    for (const d of selected) {
      const plan = tally.plans.get(d.name)
      if (plan) options.observer?.planned?.(d.name, plan)
    }
    if (options.dryRun) {
      // (a snapshot the dry run found nothing to read for has its result: skipped)
      for (const d of live)
        if (!tally.results.has(d.name)) tally.results.set(d.name, { dataset: d.name, rows: 0, files: 0, bytes: 0, quarantined: 0 })
    } else yield* runTasks([...tasks, ...snapshots.now], snapshots.after, run, guard, budget, withWorkers)
    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      chainId: status.chainId,
      tip: status.tip,
      ...(below !== undefined ? { writtenTo: below } : {}),
      heldTo: yield* highestHeld(selected.filter((d) => d.kind === "append").map((d) => d.name)),
      // in the registry's order, whatever the order of completion
      // Stryker disable next-line ArrayDeclaration: every selected dataset has a result by now (skipped, planned or done)
      datasets: selected.flatMap((d) => (tally.results.has(d.name) ? [tally.results.get(d.name)!] : [])),
      plans: selected.flatMap((d) => (tally.plans.has(d.name) ? [tally.plans.get(d.name)!] : [])),
      dryRun: options.dryRun === true
    }
  })

/** Said where other processes write the lake as a run starts: allowed, and what it costs. */
export const anotherWriterNotice = (root: string, pids: ReadonlyArray<number>) =>
  `another chain-lake (pid ${pids.join(", ")}) is writing ${root}: where both export the same heights, the commit that comes second is dropped and its part read again (no row is written twice), so the indexer serves those pages twice`

const shardSettings = (
  options: ExportOptions,
  pageSize: number,
  chainId: string,
  ranges: ReadonlyArray<{ readonly list: AppendList; readonly bounds: { readonly from: number; readonly to: number } }>
): ShardSettings => ({
  run: randomUUID(),
  pageSize,
  bucketWidth: options.bucketWidth ?? EXPORT_DEFAULTS.bucketWidth,
  flushBytes: options.flushBytes ?? EXPORT_DEFAULTS.flushBytes,
  onInvalid: options.onInvalid ?? EXPORT_DEFAULTS.onInvalid,
  checkpointMs: options.checkpointMs ?? EXPORT_DEFAULTS.checkpointMs,
  chainId,
  positionHeights: Object.fromEntries(
    ranges.filter(({ list }) => list.unit === "position").map(({ list, bounds }) => [list.id, [bounds.from, bounds.to] as const])
  )
})

/**
 * Before anything is written: a rollback cut short is finished (the datasets it was cutting are
 * unreadable until it is done), and the lake must hold this source's chain and history, or be
 * rolled back to where they part (--on-reorg rollback).
 */
const settleHistory = (
  exportable: ReadonlyArray<ExportableDataset>,
  status: SourceStatus,
  options: ExportOptions,
  notice: (m: string) => void
) =>
  Effect.gen(function* () {
    if (!options.dryRun) yield* finishRollback(exportable, notice)
    const { fork, verified, adopted } = yield* checkIdentity(
      status,
      notice,
      { datasets: exportable.map((d) => d.name), adopt: options.adoptLake === true },
      options.onReorg
    )
    if (fork && options.dryRun)
      notice(
        `--on-reorg rollback would drop the lake's rows above height ${fork.common} (this indexer's block ${fork.differs.height} differs); the plan below is the lake's as it is`
      )
    else if (fork) {
      const { height, lakeHash, sourceHash } = fork.differs
      const report = yield* rollbackLake(exportable, fork.common, {
        by: "on-reorg",
        differs: { height, lake_hash: lakeHash, source_hash: sourceHash ?? null },
        notice
      })
      notice(`this indexer's block ${height} differs from the lake's: ${describeRollback((yield* Manifests).root, report)}`)
    }
    return { fork, verified, adopted }
  })

/**
 * The block a run anchors what it writes to, which every commit checks again: the top of what it
 * reads (the tip, or --to-height below it; snapshots are of the tip), or, where the source does not
 * serve that block, the newest it serves up to 3 below, or the anchor just checked; then the run
 * writes nothing above it (`below`): rows there no anchor would vouch for, and a fork there would go
 * unseen. Where it can anchor nothing, `unanchored` names the top: the run fails before it writes (a
 * lake whose data names no history is refused by every later run).
 */
const anchorOfRun = (
  status: SourceStatus,
  selected: ReadonlyArray<ExportableDataset>,
  options: ExportOptions,
  settled: Effect.Effect.Success<ReturnType<typeof settleHistory>>,
  notice: (m: string) => void,
  tipBlock: TipBlock | undefined
) =>
  Effect.gen(function* () {
    const top = topOf(status, selected, options)
    // (a dry run reads the same block, to plan what a run would write; it records nothing)
    const anchored = yield* anchorIdentity(top, tipBlock)
    const anchor = anchored?.anchor ?? (settled.fork ? undefined : settled.verified)
    if (anchor === undefined) return { unanchored: top }
    const below = anchor.height < top ? anchor.height : undefined
    if (below !== undefined)
      notice(
        `the indexer does not serve block ${top} yet: this run writes up to block ${below}, the newest it can anchor; a later run goes on from there`
      )
    return {
      anchor,
      below,
      unrecorded: anchored?.recorded === false && !settled.adopted,
      adoptedAnchor: settled.adopted && anchored && !anchored.recorded && !options.dryRun ? anchored.anchor : undefined
    }
  })

/** The top of what a run reads: the tip, or --to-height below it; snapshots are of the tip. */
const topOf = (status: SourceStatus, selected: ReadonlyArray<ExportableDataset>, options: ExportOptions) =>
  options.toHeight === undefined || selected.some((d) => d.kind === "snapshot") ? status.tip : Math.min(status.tip, options.toHeight)

/** Each watermark at most `height`. */
const capped = (watermarks: SourceStatus["watermarks"], height: number) =>
  Object.fromEntries(Object.entries(watermarks).map(([name, w]) => [name, w === undefined ? w : Math.min(w, height)]))

/**
 * The selected datasets this source serves and has data for; the others are skipped with a
 * notice, and one the user asked for by name fails the run, before anything is written. With
 * `below` (the run's anchor, under the tip), a snapshot of a height above it waits for a later run.
 */
const liveDatasets = (
  selected: ReadonlyArray<ExportableDataset>,
  answers: Effect.Effect.Success<ReturnType<typeof probe>>,
  status: SourceStatus,
  tally: Tally,
  options: ExportOptions,
  below?: number
) =>
  Effect.gen(function* () {
    const live = selected.filter((d) => {
      const list = d.kind === "append" ? d.list : d.probe
      if (!answers.served(d)) {
        tally.skip(d.name, "not served", `its endpoint ${list.endpoint} answered that this indexer does not serve it (404)`)
        return false
      }
      const name = d.kind === "append" ? d.list.watermark : d.watermark
      const watermark = status.watermarks[name] ?? 0
      // (a follow's later round takes it: not refused there)
      if (d.kind === "snapshot" && below !== undefined && watermark > below) {
        const why = `its ${name} ${watermark} is above block ${below}, the newest this run can anchor`
        if (options.toHeightAhead) options.observer?.notice?.(`${d.name}: not this round: ${why}`)
        else tally.skip(d.name, `${why}: rerun once the indexer serves block ${watermark}`, why)
        return false
      }
      // none, or 0 (nothing indexed yet)
      if (watermark >= 1) return true
      tally.skip(d.name, `no ${name}`, `the source reports no ${name}`)
      return false
    })
    // Stryker disable next-line ArrayDeclaration: no dataset has the name a mutant puts in the empty list
    const named = new Set(options.datasets ?? [])
    const refused = [...tally.results.values()].filter((r) => named.has(r.dataset))
    if (refused.length > 0)
      return yield* new ExportError({
        message: refused.map((r) => `${r.dataset} cannot be exported from this source (${r.skipped})`).join("; ")
      })
    return live
  })

/** Each list's range of the run (heights, or the positions of the asked heights), position lists searched all at once. */
const searchRanges = (
  groups: ReadonlyArray<ReadonlyArray<AppendDataset>>,
  answers: Effect.Effect.Success<ReturnType<typeof probe>>,
  status: SourceStatus,
  options: ExportOptions,
  reads: PlanReads
) =>
  Effect.forEach(
    groups,
    (group) =>
      Effect.gen(function* () {
        const list = group[0].list
        const watermark = status.watermarks[list.watermark]!
        const lowest = list.unit === "height" ? answers.lowest(list) : 1
        const bounds = heightBounds(options, lowest, watermark)
        const names = group.map((d) => d.name).join(", ")
        // heights the source does not have: an empty run says so rather than end in silence
        if (bounds.to < bounds.from && !options.toHeightAhead)
          options.observer?.notice?.(
            `${names}: nothing to export: heights ${options.fromHeight ?? lowest}${options.toHeight === undefined ? " and up" : `..${options.toHeight}`} were asked for, and the source has ${lowest}..${watermark} (${list.watermark})`
          )
        else if (bounds.clipped && !options.toHeightAhead)
          options.observer?.notice?.(
            `${names}: heights to ${options.toHeight} were asked for, above ${list.watermark} ${watermark}; exporting to ${watermark}`
          )
        // an empty or inverted range: nothing to do, and no position search to make
        const range: Range =
          bounds.to < bounds.from
            ? [0, 0]
            : list.unit === "height"
              ? [bounds.from, bounds.to + 1]
              : yield* positionRange(yield* Source, list, bounds, reads, answers.newest(list), yield* committedGuesses(group))
        return { group, list, watermark, bounds, range }
      }),
    // Stryker disable next-line ObjectLiteral,StringLiteral: at once or one after another: the same answers, only slower
    { concurrency: "unbounded" }
  )
