/**
 * A run's work, once planned: what it counts per dataset (the tally), the tasks of the pool (a
 * shard of a list's range, or a snapshot), and the pool itself: largest first, at most
 * `concurrency` paging at once, as many more waiting to page and as many as the sink writes files
 * at once; snapshots that read what this run commits (declared `after`) once the rest is done.
 * Shards run here, or in the run's shard workers, each commit made here either way.
 */
import { type Context, Effect, Exit, Fiber, Option } from "effect"
import { Manifests, type CommittedFile } from "../lake/Manifests.js"
import { retiredColumnsProblem } from "../lake/columns.js"
import { ParquetSink } from "../lake/ParquetSink.js"
import { covers, type Range } from "../lake/RangeSet.js"
import { olderColumnsNotice } from "./commit.js"
import { explainedByMove, HistoryGuard } from "./identity.js"
import { PageBudget } from "./pageBudget.js"
import { DEFAULTS } from "../defaults.js"
import type { AppendDataset, AppendList, SnapshotDataset } from "./Dataset.js"
import {
  ExportError,
  type DatasetPlan,
  type DatasetResult,
  type ExportableDataset,
  type ExportObserver,
  type ExportOptions,
  type Env,
  type Failure,
  type Task
} from "./exportTypes.js"
import { forEachJoined } from "./forEachJoined.js"
import { planShards, progressOf, requestsFor } from "./plan.js"
import { runShard, type FetchSlots, type ShardEnd, type ShardSettings } from "./shard.js"
import { ShardLake, type ShardLakeService } from "./ShardLake.js"
import { runSnapshot, snapshotInput } from "./snapshot.js"
import type { SourceStatus } from "./Source.js"
import { stopSignalOf, untilStopped } from "../stop/StopSignal.js"
import { RunningShardWorkers, type ShardContext, ShardWorkers, type WithShardWorkers } from "./workers.js"

/** What a run counts per dataset, and reports as each is done. */
export const makeTally = (selected: ReadonlyArray<ExportableDataset>, observer: ExportObserver) => {
  const totals = new Map(selected.map((d) => [d.name, { rows: 0, files: 0, bytes: 0, quarantined: 0 }]))
  const results = new Map<string, DatasetResult>()
  const plans = new Map<string, DatasetPlan>()
  /** tasks left per dataset: a dataset is done when its last task is */
  const pending = new Map<string, number>()
  const tally = {
    results,
    plans,
    pending,
    /** how many of `name`'s records the run quarantined so far */
    quarantinedIn: (name: string) => totals.get(name)?.quarantined ?? 0,
    skip: (name: string, reason: string, message: string) => {
      observer.notice?.(`${name}: skipped, ${message}`)
      results.set(name, { dataset: name, rows: 0, files: 0, bytes: 0, quarantined: 0, skipped: reason })
    },
    finish: (name: string, extra: Partial<DatasetResult> = {}) => {
      const result: DatasetResult = { dataset: name, ...totals.get(name)!, ...extra }
      results.set(name, result)
      observer.done?.(name, result)
    },
    taskDone: (names: ReadonlyArray<string>) =>
      Effect.sync(() => {
        for (const n of names) {
          const left = pending.get(n)! - 1
          pending.set(n, left)
          if (left === 0) tally.finish(n)
        }
      }),
    events: {
      rows: (dataset: string, rows: number) => {
        totals.get(dataset)!.rows += rows
        observer.rows?.(dataset, rows)
      },
      fetched: (dataset: string, units: number) => observer.fetched?.(dataset, units),
      committed: (dataset: string, file: CommittedFile) => {
        const t = totals.get(dataset)!
        t.files++
        t.bytes += file.bytes
        observer.committed?.(dataset, file)
      },
      quarantined: (list: AppendList) => {
        // every dataset of the list: they run (or are skipped) together
        for (const d of selected) if (d.kind === "append" && d.list.id === list.id) totals.get(d.name)!.quarantined++
      },
      notice: (message: string) => observer.notice?.(message)
    }
  }
  return tally
}

export type Tally = ReturnType<typeof makeTally>

/** What the pool's tasks share. */
export interface RunContext {
  readonly options: ExportOptions
  readonly settings: ShardSettings
  readonly concurrency: number
  readonly fetchSlots: FetchSlots
  readonly tally: Tally
  /** the lake shards commit into */
  readonly lake: ShardLakeService
}

/**
 * How a shard runs: in the run's shard workers where they are running (RunningShardWorkers, in
 * runTasks) and serve all of its datasets, else here.
 */
export const shardRunner = (run: RunContext) =>
  Effect.gen(function* () {
    const workers = yield* Effect.serviceOption(ShardWorkers)
    const { settings, tally, lake, fetchSlots } = run
    const context: ShardContext = { settings, events: tally.events, lake, fetchSlots }
    const served = new Set<unknown>(Option.isSome(workers) ? workers.value.datasets : [])
    return (list: AppendList, targets: ReadonlyArray<AppendDataset>, r: Range) =>
      Effect.flatMap(Effect.serviceOption(RunningShardWorkers), (pool) =>
        Option.isSome(pool) && targets.every((d) => served.has(d))
          ? pool.value.run(list, targets, r, context)
          : runShard(list, targets, r, settings, tally.events, fetchSlots).pipe(Effect.provideService(ShardLake, lake))
      )
  })

/** The shards of each list's range its datasets have not committed, as tasks; each dataset's plan. */
export const appendTasks = (
  ranges: ReadonlyArray<{
    readonly group: ReadonlyArray<AppendDataset>
    readonly list: AppendList
    readonly watermark: number
    readonly bounds: { readonly from: number; readonly to: number }
    readonly range: Range
  }>,
  run: RunContext,
  shardRun: (list: AppendList, targets: ReadonlyArray<AppendDataset>, r: Range) => Effect.Effect<ShardEnd, Failure, Env>
) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const { pageSize } = run.settings
    const tasks: Array<Task> = []
    for (const { group, list, watermark, bounds, range } of ranges) {
      const committed = new Map<string, ReadonlyArray<Range>>()
      for (const d of group) {
        // a dry run only reads: opening would start manifests and clear leftovers
        const m = run.options.dryRun ? yield* manifests.get(d.name) : yield* manifests.open(d.name, list.unit, d.columns)
        const retired = m && m.files.length > 0 ? retiredColumnsProblem(d.name, m.columns, d.columns) : undefined
        if (retired) return yield* new ExportError({ message: retired })
        const older = olderColumnsNotice(d.name, m, d.columns)
        if (older) run.options.observer?.notice?.(older, true)
        committed.set(d.name, m?.committed ?? [])
      }
      const shards = planShards(range, [...committed.values()], {
        concurrency: run.concurrency,
        pageSize,
        maxShardUnits: run.options.maxShardUnits ?? DEFAULTS.maxShardUnits
      })
      for (const d of group) {
        run.tally.plans.set(d.name, {
          dataset: d.name,
          kind: "append",
          unit: list.unit,
          heights: bounds.to >= bounds.from ? [bounds.from, bounds.to] : null,
          ...progressOf(range, committed.get(d.name)!),
          shards: shards.length,
          // datasets that read block times add a block-list request per page where the list's records are
          // dense in height (more where they are sparse: up to one per distinct height)
          estimatedRequests: requestsFor(shards, pageSize) * (group.some((g) => g.blockTime) ? 2 : 1),
          watermark
        })
        run.tally.pending.set(d.name, shards.filter((r) => !covers(committed.get(d.name)!, r)).length)
      }
      for (const r of shards) {
        // Stryker disable next-line MethodExpression: a dataset that already holds the shard's range would have its files refused at commit (shard.ts drops them and re-exports what is missing, here nothing): only work is wasted
        const targets = group.filter((d) => !covers(committed.get(d.name)!, r))
        // Stryker disable next-line ArithmeticOperator: size only orders the tasks (largest first), which changes when work runs, not what is written
        tasks.push({
          size: r[1] - r[0],
          // (a shard stopped by a stop asked of the run leaves its datasets not done)
          run: Effect.flatMap(shardRun(list, targets, r), (end) =>
            end === "done" ? run.tally.taskDone(targets.map((d) => d.name)) : Effect.void
          )
        })
      }
    }
    return tasks
  })

/** A task per snapshot dataset, and its plan: `now`, or `after` the datasets this run commits that it reads. */
export const snapshotTasks = (live: ReadonlyArray<ExportableDataset>, status: SourceStatus, run: RunContext) =>
  Effect.gen(function* () {
    const { options, tally } = run
    const pageSize = run.settings.pageSize
    const input = yield* snapshotInput(options.params ?? {}, pageSize)
    const now: Array<Task> = []
    const after: Array<Task> = []
    for (const d of live) {
      if (d.kind !== "snapshot") continue
      // a dry run judges a snapshot that reads only what the lake holds now (no dataset it reads is
      // in this run) as the run will: one with nothing to read (no denoms) is said, not planned
      if (options.dryRun && d.after.length > 0 && !d.after.some((n) => live.some((x) => x.name === n))) {
        const lists = yield* d.lists(input)
        if ("skip" in lists) {
          const why = `${lists.skip}${lists.hint ? `: ${lists.hint}` : ""}`
          if ((options.datasets ?? []).includes(d.name)) return yield* new ExportError({ message: `${d.name} cannot be exported: ${why}` })
          tally.skip(d.name, lists.skip, why)
          continue
        }
      }
      const height = status.watermarks[d.watermark]!
      tally.plans.set(d.name, {
        dataset: d.name,
        kind: "snapshot",
        unit: "snapshot",
        heights: [height, height],
        todo: 1,
        done: 0,
        shards: 1,
        estimatedRequests: 1,
        watermark: height
      })
      const snapshot = runSnapshot(d, height, input, {
        pageSize,
        notice: tally.events.notice,
        committed: (file) => tally.events.committed(d.name, file)
      })
      const task: Task = {
        size: Infinity,
        run: run.fetchSlots
          .withPermits(1)(snapshot)
          .pipe(Effect.flatMap((o) => snapshotDone(d, o, run)))
      }
      // a snapshot that reads what this run commits (declared `after`) waits for those datasets
      if (d.after.some((n) => live.some((x) => x.name === n))) after.push(task)
      else now.push(task)
    }
    return { now, after }
  })

/** A snapshot's outcome counted, or the run failed where it read nothing of a dataset asked for by name, or missed a list the user named. */
const snapshotDone = (d: SnapshotDataset, outcome: Effect.Effect.Success<ReturnType<typeof runSnapshot>>, run: RunContext) => {
  // nothing to read (no denoms) for a dataset asked for by name: the run fails
  // (a snapshot with no height is one skipped before reading)
  if (outcome.snapshotHeight === undefined && (run.options.datasets ?? []).includes(d.name) && !outcome.missing)
    return Effect.fail(new ExportError({ message: `${d.name} cannot be exported: ${outcome.skipped}` }))
  // lists the user named that the source does not have: what was read is committed, and the run fails
  if (outcome.missing) return Effect.fail(new ExportError({ message: `${d.name}: ${outcome.missing.join("; ")}` }))
  if (outcome.rows > 0) run.tally.events.rows(d.name, outcome.rows)
  const { skipped, snapshotHeight, consistency } = outcome
  // Stryker disable next-line ConditionalExpression: a key holding undefined is no key to JSON, the CLI and the tests' matchers
  run.tally.finish(d.name, {
    ...(skipped !== undefined ? { skipped } : {}),
    ...(snapshotHeight !== undefined ? { snapshotHeight } : {}),
    ...(consistency ? { consistency } : {})
  })
  return Effect.void
}

/** how long the snapshots that read nothing of the run have the source to themselves before the shards start */
const SNAPSHOTS_ALONE_MS = 3_000

/**
 * Runs the tasks: the snapshots that read nothing of this run first (see below), then the shards
 * largest first, at most `concurrency` paging, as many more ready to page the
 * moment one ends, and as many as the sink writes files at once (shards of equal size end paging
 * together, then write and commit theirs, a history check each: the next ones page meanwhile); then
 * the tasks that wait for them, each with the run's history guard (where it has one) and page
 * budget, and the shards with the run's workers (`withWorkers`, where it started some).
 */
export const runTasks = (
  tasks: ReadonlyArray<Task>,
  after: ReadonlyArray<Task>,
  run: RunContext,
  guard: Context.Tag.Service<typeof HistoryGuard> | undefined,
  budget: Context.Tag.Service<typeof PageBudget>,
  withWorkers: WithShardWorkers
) =>
  Effect.gen(function* () {
    for (const [name, left] of run.tally.pending) if (left === 0) run.tally.finish(name)
    const sink = yield* ParquetSink
    // Stryker disable next-line all: the order tasks start in (largest first keeps workers busy to the end) changes when work runs, not what is written
    const largestFirst = [...tasks].sort((x, y) => y.size - x.size)
    // (staged rows count in the sink's DuckDB memory limit, not per shard: the peak does not grow with them, bench/RESULTS.md)
    // Stryker disable next-line MethodExpression,ArithmeticOperator: with more tasks (max) only memory and time differ, which no test measures
    const underWay = 2 * run.concurrency + Math.min(run.concurrency, sink.writesAtOnce)
    // every commit checks first that the source still serves the history the run started on; pages in flight share the run's byte budget
    const checked = <A, E, R>(e: Effect.Effect<A, E, R>) =>
      Effect.provideService(guard ? Effect.provideService(e, HistoryGuard, guard) : e, PageBudget, budget)
    /*
     * Snapshots first, alone, for up to SNAPSHOTS_ALONE_MS: a snapshot is exact only when a read of
     * its lists ends before the chain moves its watermark, and beside the shards (their requests,
     * their rows on this thread) a read took seconds, so on a live chain every one was
     * best-effort. A snapshot of many pages (a chain's every NFT) does not hold the shards back
     * longer: they start then, beside it. The shards' workers start meanwhile.
     */
    const snapshots = largestFirst.filter((t) => t.size === Infinity)
    const shards = largestFirst.filter((t) => t.size !== Infinity)
    /*
     * A stop asked of the run (StopSignal) is heeded: its shards commit what they read and end, and
     * the run is interrupted once they have. A snapshot keeps nothing it read before its end: it
     * ends at once, with nothing.
     */
    const stop = yield* stopSignalOf
    const snapshotRun = (t: Task) => untilStopped(stop, t.run, Effect.void)
    const work = Effect.gen(function* () {
      // (a failed task's siblings end before the run does: a commit under way finishes, forEachJoined.ts)
      const first = yield* Effect.fork(checked(forEachJoined(snapshots, snapshotRun, run.concurrency)))
      yield* Effect.race(Effect.asVoid(Fiber.await(first)), Effect.sleep(SNAPSHOTS_ALONE_MS))
      // snapshots that failed alone: no shard starts
      const ended = yield* Fiber.poll(first)
      if (Option.isSome(ended) && Exit.isFailure(ended.value)) return yield* Effect.failCause(ended.value.cause)
      yield* checked(forEachJoined(shards, (t) => t.run, underWay)).pipe(Effect.onError(() => Fiber.await(first)))
      yield* Fiber.join(first)
      yield* checked(forEachJoined(after, snapshotRun, run.concurrency))
    })
    // (snapshots run in this thread: a run with no shard to run does not wait for its workers)
    const ran = tasks.some((t) => t.size !== Infinity) ? withWorkers(work) : work
    yield* explainedByMove(stop ? stop.heeded(ran) : ran, guard)
  })
