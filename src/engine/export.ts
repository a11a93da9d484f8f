/**
 * The export engine: runs the datasets of a registry against a `Source` into the lake. It knows no
 * dataset and no API by name: datasets are declarations (Dataset.ts), the API is a driver
 * (src/drivers/), the lake is Manifests and ParquetSink.
 *
 * A run: (1) asks the source's status and probes each selected dataset's list with one row (is it
 * served; where a height source starts, where a position source ends), all at once, then where the
 * asked heights fall in position sources, by cursor probes (no offset: see positionRange);
 * (2) plans each source's shards (plan.ts) from what its datasets have not committed; (3) runs
 * every shard of every dataset, and the snapshots, in one pool, largest first, at most
 * `concurrency` of them paging at once; a shard that has paged its range writes and commits its
 * last files without its paging slot, and the pool holds as many tasks again as the sink writes
 * files at once, so that when shards end paging together, that many more start paging while they
 * write (snapshots that read what this run commits, such as holders reading blocks' fee denoms,
 * start once those datasets are done).
 * Every request goes through the one request limiter of the source's client.
 */
import { Data, Effect, Option } from "effect"
import { DEFAULTS as EXPORT_DEFAULTS } from "../defaults.js"
import { Manifests, type ManifestError, type CommittedFile } from "../lake/Manifests.js"
import { retiredColumnsProblem } from "../lake/columns.js"
import { ParquetSink, type SinkError } from "../lake/ParquetSink.js"
import { covers, normalize, type Range } from "../lake/RangeSet.js"
import type { AppendDataset, AppendList, Dataset, SnapshotDataset } from "./Dataset.js"
import { olderColumnsNotice } from "./commit.js"
import { anchorIdentity, checkIdentity, HistoryGuard, historyGuard, type LakeIdentityError, type OnReorg } from "./identity.js"
import { heightBounds, planShards, progressOf, requestsFor } from "./plan.js"
import { firstAtOrAbove } from "./positions.js"
import { describeRollback, finishRollback, rollbackLake, type RollbackError } from "./rollback.js"
import { runShard, type ShardSettings } from "./shard.js"
import { ShardLake, shardLakeOf } from "./ShardLake.js"
import { type ShardPool, ShardWorkers, startShardWorkers } from "./workers.js"
import { PageBudget, runPageBudget } from "./pageBudget.js"
import { runSnapshot, snapshotInput } from "./snapshot.js"
import { misplacedPositionPage, newestRowUnaddressable, totalBelowData } from "./pagingRules.js"
import {
  Source,
  type ListPage,
  type ListRef,
  type PageRequest,
  type SourceFailure,
  type SourceService,
  type SourceStatus
} from "./Source.js"

export class ExportError extends Data.TaggedError("ExportError")<{ readonly message: string }> {}

export interface ExportOptions {
  /** dataset names; default: every dataset the registry exports */
  readonly datasets?: ReadonlyArray<string>
  /** list parameters of snapshot datasets, e.g. `{ denoms: [...] }` for holders */
  readonly params?: Readonly<Record<string, ReadonlyArray<string>>>
  readonly fromHeight?: number
  /** default: the tip seen at start (or the source's watermark, if lower) */
  readonly toHeight?: number
  /**
   * `toHeight` is a goal the chain may not have reached yet (a follow round): clipping it to a
   * watermark is expected and not announced (otherwise: a notice, since the user asked for more)
   */
  readonly toHeightAhead?: boolean
  readonly pageSize?: number
  readonly concurrency?: number
  readonly onInvalid?: "fail" | "quarantine"
  readonly bucketWidth?: number
  /** start a new file once a writer holds this many bytes of strings */
  readonly flushBytes?: number
  /** largest shard (heights or rows); shards are smaller when that keeps every worker busy */
  readonly maxShardUnits?: number
  /** the longest a shard holds what it read before committing it (ms; default DEFAULTS.checkpointMs) */
  readonly checkpointMs?: number
  readonly dryRun?: boolean
  /** take a lake that holds data but names no chain (no `_lake.json`), once its newest block is checked against the source */
  readonly adoptLake?: boolean
  /**
   * A source on another history than the lake above some height it holds (a reorg, an indexer
   * rolled back and re-synced): "refuse" (default), or "rollback": drop the lake's rows above the
   * last common height (rollback.ts) and export the source's history; a source that changes
   * history during the run then starts the run over (at most ROLLBACK_RESTARTS times).
   */
  readonly onReorg?: OnReorg
  readonly observer?: ExportObserver
}

/** Progress reports; the CLI renders them as bars or log lines. */
export interface ExportObserver {
  readonly notice?: (message: string) => void
  readonly planned?: (dataset: string, plan: DatasetPlan) => void
  /** rows made (a record gives any number: a receipt many logs, a tx no transfer); negative for staged rows dropped */
  readonly rows?: (dataset: string, rows: number) => void
  /** units of the dataset's plan read (records of its source, or heights): what its `todo` counts; negative for a range read again */
  readonly fetched?: (dataset: string, units: number) => void
  readonly committed?: (dataset: string, file: CommittedFile) => void
  readonly done?: (dataset: string, result: DatasetResult) => void
}

export interface DatasetPlan {
  readonly dataset: string
  readonly kind: "append" | "snapshot"
  readonly unit: "height" | "position" | "snapshot"
  readonly heights: readonly [number, number] | null
  /** units (heights or rows) to fetch in this run, and already committed */
  readonly todo: number
  readonly done: number
  readonly shards: number
  readonly estimatedRequests: number
  readonly watermark?: number
}

export interface DatasetResult {
  readonly dataset: string
  readonly rows: number
  readonly files: number
  readonly bytes: number
  readonly skipped?: string
  readonly quarantined: number
  readonly snapshotHeight?: number
  readonly consistency?: "exact" | "best-effort"
}

export interface ExportReport {
  readonly startedAt: string
  readonly finishedAt: string
  readonly chainId: string
  readonly tip: number
  readonly datasets: ReadonlyArray<DatasetResult>
  readonly plans: ReadonlyArray<DatasetPlan>
  readonly dryRun: boolean
}

type Env = Source | ParquetSink | Manifests
type Failure = SourceFailure | SinkError | ManifestError | ExportError | LakeIdentityError | RollbackError
type ExportableDataset = AppendDataset | SnapshotDataset

/**
 * The one-row page each list is probed with: whether it is served, and where it starts (a height
 * source's oldest row: a pruned node starts above 1) or ends (a position source's newest row: its
 * total, its MAX(sequence) as next_key, and the height it reaches), in one request.
 */
const probeRequest = (list: ListRef): PageRequest => ({ limit: 1, reverse: (list as Partial<AppendList>).unit === "position" })

/** The sources' answers a plan needs, asked all at once: the status, and each list's probe page (probeRequest). */
const probe = (source: SourceService, selected: ReadonlyArray<ExportableDataset>) => {
  const lists = new Map(selected.map((d) => [d.name, d.kind === "append" ? d.list : d.probe]))
  return Effect.all(
    [
      source.status,
      // Stryker disable next-line ObjectLiteral,StringLiteral: the probes at once or one after another: the same answers, only slower
      Effect.forEach(
        [...new Set(lists.values())],
        (list) => source.probe(list, probeRequest(list)).pipe(Effect.map((answer) => [list, answer] as const)),
        { concurrency: "unbounded" }
      )
    ],
    // Stryker disable next-line ObjectLiteral,StringLiteral: at once or one after another: the same answers, only slower
    { concurrency: "unbounded" }
  ).pipe(
    Effect.map(([status, answers]) => {
      const byList = new Map<ListRef, ListPage | "not served" | "refused">(answers)
      const pageOf = (list: ListRef) => {
        const answer = byList.get(list)
        return typeof answer === "object" ? answer : undefined
      }
      return {
        status,
        served: (d: ExportableDataset) => byList.get(lists.get(d.name)!) !== "not served",
        // the lowest height a height source serves; 1 where its probe found no row
        lowest: (list: AppendList) => {
          const page = pageOf(list)
          return page && page.items.length > 0 ? list.heightOf(page.items[0]) : 1
        },
        /** a position source's newest row, as its probe found it (none where the probe was refused) */
        newest: pageOf
      }
    })
  )
}

/** A position source's newest row: one row, newest first (probeRequest). */
const NEWEST_ROW: PageRequest = { limit: 1, reverse: true }

/** Single-row probes of a position list by the source's key after each position, each asked once: a position's height, or null past the end. */
const positionProbes = (source: SourceService, list: AppendList) => {
  const known = new Map<number, number | null>()
  const heightAt = (position: number): Effect.Effect<number | null, SourceFailure> =>
    known.has(position)
      ? Effect.succeed(known.get(position)!)
      : source.page(list, { key: source.keyAfter(list, position), limit: 1, reverse: false }).pipe(
          Effect.flatMap((p) => {
            // the row after sequence `position` must be sequence position + 1: position `position`'s
            const problem = misplacedPositionPage(p.key, position, p.items.length, p.nextKey, source.afterOfKey(list, p.nextKey))
            if (problem) return Effect.fail(source.untrustedPaging(list, p.key, problem))
            const height = p.items.length > 0 ? list.heightOf(p.items[0]) : null
            known.set(position, height)
            return Effect.succeed(height)
          })
        )
  return { heightAt, known }
}

/** MAX(sequence), as the newest row's next_key names it (undefined where the list holds no row). */
const newestSequence = (source: SourceService, list: AppendList, newest: ListPage): Effect.Effect<number | undefined, SourceFailure> => {
  if (newest.items.length === 0) return Effect.succeed(undefined)
  const sequence = source.afterOfKey(list, newest.nextKey)
  const problem = newestRowUnaddressable(newest.nextKey, sequence)
  return problem ? Effect.fail(source.untrustedPaging(list, null, problem)) : Effect.succeed(sequence)
}

/** Where the lake's committed rows of a position source start and end: the searches try these first. */
const committedGuesses = (group: ReadonlyArray<AppendDataset>) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const committed: Array<Range> = []
    for (const d of group) committed.push(...((yield* manifests.get(d.name))?.committed ?? []))
    const ranges = normalize(committed)
    return { start: ranges[0]?.[0], end: ranges.at(-1)?.[1] }
  })

/**
 * Rows in a position source and the positions of heights [from, to], found by cursor probes (no
 * offset: the real indexer scans every row an offset skips). The total, MAX(sequence), counts
 * the rows while sequences are contiguous: the newest row (the list's probe) must be the total's.
 * Where that row is at or below `to`, the range ends at the total with no search (a rerun, a
 * follow round); otherwise, and for a start above height 1, the searches try where the lake's
 * committed rows start and end first (`guesses`).
 */
const positionRange = (
  source: SourceService,
  list: AppendList,
  { from, to }: { readonly from: number; readonly to: number },
  fanout: number,
  probed: ListPage | undefined,
  guesses: { readonly start?: number; readonly end?: number }
) =>
  Effect.gen(function* () {
    // a list that refused the probe's parameters answers no page: asked again, it says why
    const newest = probed ?? (yield* source.page(list, NEWEST_ROW))
    const rows = Number(newest.total)
    if (!Number.isFinite(rows) || rows < 0)
      return yield* new ExportError({ message: `${list.endpoint} reports total ${newest.total}; cannot plan position shards` })
    if (rows === 0) return [0, 0] as Range
    const maxSequence = yield* newestSequence(source, list, newest)
    if (maxSequence === undefined || maxSequence < rows)
      return yield* new ExportError({
        message: `${list.endpoint}: total ${rows} but no row at position ${rows - 1}: sequences are not contiguous`
      })
    const { heightAt, known } = positionProbes(source, list)
    known.set(maxSequence - 1, list.heightOf(newest.items[0]))
    // the newest row is the total's: none past it, when the probe was answered
    if (maxSequence === rows) known.set(rows, null)
    // a total below the data (a stale count) would end the export early and quietly: a row past
    // it at a height already asked for cannot be one the chain added since
    const belowData = totalBelowData(rows, yield* heightAt(rows), to)
    if (belowData) return yield* Effect.fail(source.untrustedPaging(list, null, belowData))
    const lastHeight = known.get(rows - 1)
    // Stryker disable next-line all: from height 1 the search would find position 0 too (a round of probes saved); the two searches at once or in turn find the same
    const start = from <= 1 ? Effect.succeed(0) : firstAtOrAbove(heightAt, rows, from, fanout, guesses.start)
    const end =
      lastHeight !== undefined && lastHeight !== null && lastHeight <= to
        ? Effect.succeed(rows)
        : firstAtOrAbove(heightAt, rows, to + 1, fanout, guesses.end)
    return (yield* Effect.all([start, end], { concurrency: "unbounded" })) as Range
  })

/** One unit of work of the pool: a shard, or a snapshot. */
interface Task {
  /** units of work, for largest-first ordering */
  readonly size: number
  readonly run: Effect.Effect<void, Failure, Env>
}

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
  // `--datasets ""` (an unset shell variable) exported nothing and said it was done
  if (names.length === 0) return `no dataset named; known: ${all}`
  const unknown = names.filter((n) => !known.some((d) => d.name === n))
  return unknown.length > 0 ? `unknown dataset ${unknown.join(", ")}; known: ${all}` : undefined
}

/** What is wrong with a run's page size and height bounds, or undefined: checked before anything starts. */
export const exportOptionsProblem = (
  pageSize: number,
  maxPageSize: number,
  options: Pick<ExportOptions, "fromHeight" | "toHeight">
): string | undefined => {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize)
    return `--page-size must be 1..${maxPageSize} (the source's largest page), got ${pageSize}`
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a comparison with undefined is false, so the guards only say what is meant
  if (options.fromHeight !== undefined && options.toHeight !== undefined && options.fromHeight > options.toHeight)
    return `--from-height ${options.fromHeight} is above --to-height ${options.toHeight}`
  return undefined
}

/** How many times a run with `onReorg: "rollback"` starts over when its source changes history under it. */
export const ROLLBACK_RESTARTS = 3

/**
 * Exports the datasets of `catalog` that `options` selects. With `onReorg: "rollback"`, a run whose
 * source moves to another history (its history guard fails at a commit) starts over: the new
 * start finds the fork and rolls the lake back first.
 */
export const runExport = (
  catalog: ReadonlyArray<Dataset>,
  options: ExportOptions = {},
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
          return runExport(catalog, options, restarts + 1)
        }
      )
    : exportOnce(catalog, options)

const exportOnce = (catalog: ReadonlyArray<Dataset>, options: ExportOptions): Effect.Effect<ExportReport, Failure, Env> =>
  Effect.gen(function* () {
    const source = yield* Source
    const manifests = yield* Manifests
    const sink = yield* ParquetSink
    const observer = options.observer ?? {}
    const notice = (m: string) => observer.notice?.(m)
    const pageSize = options.pageSize ?? EXPORT_DEFAULTS.pageSize
    const concurrency = options.concurrency ?? EXPORT_DEFAULTS.concurrency
    const maxShardUnits = options.maxShardUnits ?? EXPORT_DEFAULTS.maxShardUnits
    const startedAt = new Date().toISOString()
    const badOptions = exportOptionsProblem(pageSize, source.maxPageSize, options)
    if (badOptions) return yield* new ExportError({ message: badOptions })

    const exportable = catalog.filter((d): d is ExportableDataset => d.kind !== "sample")
    const badNames = datasetNamesProblem(catalog, options.datasets)
    if (badNames) return yield* new ExportError({ message: badNames })
    const selected = exportable.filter((d) => !options.datasets || options.datasets.includes(d.name))

    const answers = yield* probe(source, selected)
    const status: SourceStatus = answers.status
    // the bytes of pages in flight, run-wide (pageBudget.ts); each list's records first weighed by its probe
    const budget = yield* runPageBudget(concurrency)
    for (const d of selected) if (d.kind === "append") budget.observe(d.list.id, answers.newest(d.list) ?? { items: [] })
    const settings: ShardSettings = {
      pageSize,
      bucketWidth: options.bucketWidth ?? EXPORT_DEFAULTS.bucketWidth,
      flushBytes: options.flushBytes ?? EXPORT_DEFAULTS.flushBytes,
      onInvalid: options.onInvalid ?? EXPORT_DEFAULTS.onInvalid,
      checkpointMs: options.checkpointMs ?? EXPORT_DEFAULTS.checkpointMs,
      chainId: status.chainId
    }
    // a rollback cut short first: the datasets it was cutting are unreadable until it is done
    if (!options.dryRun) yield* finishRollback(exportable, notice)
    // before anything is written: the lake must hold this source's chain (and history, or be rolled back to where they part)
    const { fork, verified } = yield* checkIdentity(
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
      notice(`this indexer's block ${height} differs from the lake's: ${describeRollback(manifests.root, report)}`)
    }
    const results = new Map<string, DatasetResult>()
    const plans = new Map<string, DatasetPlan>()
    const skip = (d: ExportableDataset, reason: string, message: string) => {
      notice(`${d.name}: skipped, ${message}`)
      results.set(d.name, { dataset: d.name, rows: 0, files: 0, bytes: 0, quarantined: 0, skipped: reason })
    }

    // ------------------------------------------------------------------ plans

    const live = selected.filter((d) => {
      const list = d.kind === "append" ? d.list : d.probe
      if (!answers.served(d)) skip(d, "not served", `its endpoint ${list.endpoint} answered that this indexer does not serve it (404)`)
      else {
        const watermark = status.watermarks[d.kind === "append" ? d.list.watermark : d.watermark]
        // none, or 0 (nothing indexed yet)
        if ((watermark ?? 0) >= 1) return true
        const name = d.kind === "append" ? d.list.watermark : d.watermark
        skip(d, `no ${name}`, `the source reports no ${name}`)
      }
      return false
    })
    // a dataset the user asked for by name that this source cannot serve fails the run, before anything is written
    // Stryker disable next-line ArrayDeclaration: no dataset has the name a mutant puts in the empty list
    const named = new Set(options.datasets ?? [])
    const refused = [...results.values()].filter((r) => named.has(r.dataset))
    if (refused.length > 0)
      return yield* new ExportError({
        message: refused.map((r) => `${r.dataset} cannot be exported from this source (${r.skipped})`).join("; ")
      })
    // the tip anchored, or (a source that does not serve its tip block) the anchor just checked: every commit checks it again
    const anchor = options.dryRun ? undefined : ((yield* anchorIdentity(status)) ?? (fork ? undefined : verified))
    const guard = anchor ? yield* historyGuard(anchor, manifests.root) : undefined
    const groups = new Map<string, Array<AppendDataset>>()
    for (const d of live) if (d.kind === "append") groups.set(d.list.id, [...(groups.get(d.list.id) ?? []), d])

    // each source's range, position sources searched all at once
    const ranges = yield* Effect.forEach(
      [...groups.values()],
      (group) =>
        Effect.gen(function* () {
          const list = group[0].list
          const watermark = status.watermarks[list.watermark]!
          const lowest = list.unit === "height" ? answers.lowest(list) : 1
          const bounds = heightBounds(options, lowest, watermark)
          // heights the source does not have: an empty run says so rather than end in silence
          if (bounds.to < bounds.from && !options.toHeightAhead)
            notice(
              `${group.map((d) => d.name).join(", ")}: nothing to export: heights ${options.fromHeight ?? lowest}${options.toHeight === undefined ? " and up" : `..${options.toHeight}`} were asked for, and the source has ${lowest}..${watermark} (${list.watermark})`
            )
          else if (bounds.clipped && !options.toHeightAhead)
            notice(
              `${group.map((d) => d.name).join(", ")}: --to-height ${options.toHeight} is above ${list.watermark} ${watermark}; exporting to ${watermark}`
            )
          // an empty or inverted range: nothing to do, and no position search to make
          const range: Range =
            bounds.to < bounds.from
              ? [0, 0]
              : list.unit === "height"
                ? [bounds.from, bounds.to + 1]
                : yield* positionRange(source, list, bounds, concurrency, answers.newest(list), yield* committedGuesses(group))
          return { group, list, watermark, bounds, range }
        }),
      // Stryker disable next-line ObjectLiteral,StringLiteral: at once or one after another: the same answers, only slower
      { concurrency: "unbounded" }
    )

    // paging slots: a shard takes one while it pages (shard.ts), a snapshot for all of its run
    const fetchSlots = yield* Effect.makeSemaphore(concurrency)
    const tasks: Array<Task> = []
    const after: Array<Task> = []
    const totals = new Map<string, { rows: number; files: number; bytes: number; quarantined: number }>(
      live.map((d) => [d.name, { rows: 0, files: 0, bytes: 0, quarantined: 0 }])
    )
    const events = {
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
        // Stryker disable next-line ArrayDeclaration: a record is quarantined only by a source with datasets in this run
        for (const d of groups.get(list.id) ?? []) totals.get(d.name)!.quarantined++
      },
      notice
    }
    // shards run here, or in the run's shard workers (each commit made here either way)
    const lake = yield* shardLakeOf(events.committed)
    const shardWorkers = yield* Effect.serviceOption(ShardWorkers)
    /** the shard workers, once started (below, for the time the tasks run) */
    let pool: ShardPool | undefined
    const shardRun = (list: AppendList, targets: ReadonlyArray<AppendDataset>, r: Range) =>
      Effect.suspend(() =>
        pool
          ? pool.run(list, targets, r)
          : runShard(list, targets, r, settings, events, fetchSlots).pipe(Effect.provideService(ShardLake, lake))
      )
    // a dataset is done when its last task is
    const pending = new Map<string, number>()
    const finish = (name: string, extra: Partial<DatasetResult> = {}) => {
      const result: DatasetResult = { dataset: name, ...totals.get(name)!, ...extra }
      results.set(name, result)
      observer.done?.(name, result)
    }
    const taskDone = (names: ReadonlyArray<string>) =>
      Effect.sync(() => {
        for (const n of names) {
          const left = pending.get(n)! - 1
          pending.set(n, left)
          if (left === 0) finish(n)
        }
      })

    for (const { group, list, watermark, bounds, range } of ranges) {
      const committed = new Map<string, ReadonlyArray<Range>>()
      for (const d of group) {
        // a dry run only reads: opening would start manifests and clear leftovers
        const m = options.dryRun ? yield* manifests.get(d.name) : yield* manifests.open(d.name, list.unit, d.columns)
        const retired = m && m.files.length > 0 ? retiredColumnsProblem(d.name, m.columns, d.columns) : undefined
        if (retired) return yield* new ExportError({ message: retired })
        const older = olderColumnsNotice(d.name, m, d.columns)
        if (older) notice(older)
        committed.set(d.name, m?.committed ?? [])
      }
      const shards = planShards(range, [...committed.values()], { concurrency, pageSize, maxShardUnits })
      for (const d of group) {
        plans.set(d.name, {
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
        pending.set(d.name, shards.filter((r) => !covers(committed.get(d.name)!, r)).length)
      }
      for (const r of shards) {
        // Stryker disable next-line MethodExpression: a dataset that already holds the shard's range would have its files refused at commit (shard.ts drops them and re-exports what is missing, here nothing): only work is wasted
        const targets = group.filter((d) => !covers(committed.get(d.name)!, r))
        // Stryker disable next-line ArithmeticOperator: size only orders the tasks (largest first), which changes when work runs, not what is written
        tasks.push({
          size: r[1] - r[0],
          run: shardRun(list, targets, r).pipe(Effect.zipRight(taskDone(targets.map((d) => d.name))))
        })
      }
    }

    const input = yield* snapshotInput(options.params ?? {}, pageSize)
    for (const d of live) {
      if (d.kind !== "snapshot") continue
      const height = status.watermarks[d.watermark]!
      plans.set(d.name, {
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
      const task: Task = {
        size: Infinity,
        run: fetchSlots
          .withPermits(1)(runSnapshot(d, height, input, { pageSize, notice, committed: (file) => events.committed(d.name, file) }))
          .pipe(
            Effect.flatMap((outcome) => {
              // nothing to read (no denoms) for a dataset asked for by name: the run fails
              // (a snapshot with no height is one skipped before reading)
              if (outcome.snapshotHeight === undefined && named.has(d.name) && !outcome.missing)
                return Effect.fail(new ExportError({ message: `${d.name} cannot be exported: ${outcome.skipped}` }))
              // lists the user named that the source does not have: what was read is committed, and the run fails
              if (outcome.missing) return Effect.fail(new ExportError({ message: `${d.name}: ${outcome.missing.join("; ")}` }))
              if (outcome.rows > 0) observer.rows?.(d.name, outcome.rows)
              totals.get(d.name)!.rows += outcome.rows
              const { skipped, snapshotHeight, consistency } = outcome
              // Stryker disable next-line ConditionalExpression: a key holding undefined is no key to JSON, the CLI and the tests' matchers
              finish(d.name, {
                ...(skipped !== undefined ? { skipped } : {}),
                ...(snapshotHeight !== undefined ? { snapshotHeight } : {}),
                ...(consistency ? { consistency } : {})
              })
              return Effect.void
            })
          )
      }
      // a snapshot that reads what this run commits (declared `after`) waits for those datasets
      if (d.after.some((n) => live.some((x) => x.name === n))) after.push(task)
      else tasks.push(task)
    }
    for (const d of selected) {
      const plan = plans.get(d.name)
      if (plan) observer.planned?.(d.name, plan)
    }

    if (!options.dryRun) {
      for (const [name, left] of pending) if (left === 0) finish(name)
      // Stryker disable next-line all: the order tasks start in (largest first keeps workers busy to the end) changes when work runs, not what is written
      const largestFirst = (ts: Array<Task>) => [...ts].sort((x, y) => y.size - x.size)
      // tasks under way: at most `concurrency` paging, and as many more as the sink writes files at
      // once, to page while shards that ended paging together write theirs (a whole second round
      // would mostly wait for the sink, each shard holding its writers' staged rows)
      // Stryker disable next-line MethodExpression: with more tasks (max) only memory differs, which no test measures
      const underWay = concurrency + Math.min(concurrency, sink.writesAtOnce)
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: whether forEach keeps the tasks' void results, nothing reads them
      // every commit checks first that the source still serves the history the run started on; pages in flight share the run's byte budget
      const checked = <A, E, R>(e: Effect.Effect<A, E, R>) =>
        Effect.provideService(guard ? Effect.provideService(e, HistoryGuard, guard) : e, PageBudget, budget)
      const work = Effect.gen(function* () {
        yield* checked(Effect.forEach(largestFirst(tasks), (t) => t.run, { concurrency: underWay, discard: true }))
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: whether forEach keeps the tasks' void results, nothing reads them
        yield* checked(Effect.forEach(after, (t) => t.run, { concurrency, discard: true }))
      })
      if (Option.isSome(shardWorkers) && shardWorkers.value.count > 0 && tasks.length > 0)
        yield* Effect.scoped(
          Effect.gen(function* () {
            pool = yield* startShardWorkers(shardWorkers.value, { settings, events, lake, fetchSlots })
            yield* work
          })
        )
      else yield* work
    } else for (const d of live) results.set(d.name, { dataset: d.name, rows: 0, files: 0, bytes: 0, quarantined: 0 })

    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      chainId: status.chainId,
      tip: status.tip,
      // in the registry's order, whatever the order of completion
      // Stryker disable next-line ArrayDeclaration: every selected dataset has a result by now (skipped, planned or done)
      datasets: selected.flatMap((d) => (results.has(d.name) ? [results.get(d.name)!] : [])),
      plans: selected.flatMap((d) => (plans.has(d.name) ? [plans.get(d.name)!] : [])),
      dryRun: options.dryRun === true
    }
  })
