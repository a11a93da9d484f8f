/**
 * One shard of an append-only source: the rows of [a, b) (heights or positions), paged, decoded,
 * written to one file per dataset and height bucket (more when a file grows past `flushBytes`),
 * and committed with the range they complete: at the end, and on the way every `checkpointMs`
 * (every writer is then finished and the range read so far committed), so that a kill loses that
 * much work at most, not a shard's; and when a stop is asked (src/stop/StopSignal.ts), at its next page,
 * so that a stop loses only the pages on their way. Nothing of a shard is visible before a commit.
 */
import { appendFile } from "node:fs/promises"
import { dirname } from "node:path"
import { Data, Effect, Stream } from "effect"
import type { ManifestError, CommittedFile } from "../lake/Manifests.js"
import { ParquetSink, type SinkError } from "../lake/ParquetSink.js"
import { subtract, type Range } from "../lake/RangeSet.js"
import { makeFolder } from "../lake/files.js"
import { quarantineFile } from "../lake/layout.js"
import { redactedJson } from "../secrets/redact.js"
import type { AppendDataset, AppendList } from "./Dataset.js"
import { MissingBlockTime, pageContextOf } from "./pageContext.js"
import { decodeRecord, isInvalid } from "./pageDecode.js"
import { type ArrivedPage, type PageInfo, walkPagesAhead } from "./pager.js"
import { pageBudgetOf } from "./pageBudget.js"
import { endedEarly, misplacedPositionPage, recordOrder, rowsAtOtherHeight } from "./pagingRules.js"
import { makeShardFiles, type ShardFiles } from "./shardFiles.js"
import { ShardLake, type ShardLakeService } from "./ShardLake.js"
import { Source, type InvalidRecordFailure, type ListPage, type PageRequest, type SourceFailure, type SourceService } from "./Source.js"
import { stopSignalOf, type StopSignalService, untilStopped } from "../stop/StopSignal.js"

/** What a shard (or a snapshot) fails with. */
export type WriteFailure = SourceFailure | SinkError | ManifestError

/** How a shard ended: its whole range read and committed, or what it read up to a stop asked of the run (StopSignal). */
export type ShardEnd = "done" | "stopped"

/** A stop asked of the run, met by a shard's walk: it ends there and commits what it read. */
class StopAsked extends Data.TaggedError("StopAsked") {}

/** `fetch`, unless a stop is asked first (it is then interrupted: its request aborted, a retry's wait cut). */
const unlessStopped = <A, E, R>(fetch: Effect.Effect<A, E, R>, stop: StopSignalService | undefined) =>
  untilStopped(stop, fetch, Effect.fail(new StopAsked()))

/** The run's paging slots (--concurrency): a shard holds one while it pages. */
export type FetchSlots = Pick<Effect.Semaphore, "withPermits">

export interface ShardSettings {
  readonly pageSize: number
  readonly bucketWidth: number
  /** start a new file once a writer holds this many bytes of strings */
  readonly flushBytes: number
  readonly onInvalid: "fail" | "quarantine"
  /** the longest a shard holds what it read before it commits it: a kill or a failure loses at most this much work, a stop (StopSignal) only the pages on their way (a commit finishes every open file: a shorter time makes smaller files) */
  readonly checkpointMs: number
  /** the chain /status names: a record that names another (see AppendList.chainIdOf) fails the run */
  readonly chainId: string
  /** the run's own id: a shard worker that serves a new run first forgets what its source remembers of blocks (Source.forget) */
  readonly run: string
  /** by list id, the heights [from, to] a position list's positions were found for: a record outside them fails the shard */
  readonly positionHeights: Readonly<Record<string, readonly [number, number]>>
}

/** What the engine counts while shards run, per dataset. */
export interface ShardEvents {
  readonly rows: (dataset: string, rows: number) => void
  /** records (heights, positions) of the shard's range read, for each target: the plan's unit, which rows are not */
  readonly fetched: (dataset: string, units: number) => void
  readonly quarantined: (list: AppendList) => void
  readonly notice: (message: string) => void
}

/** Appends an invalid record to OUT/_quarantine/<list id>.ndjson with where it was and what is wrong. */
const quarantine = (root: string, list: AppendList, err: InvalidRecordFailure, record: unknown) =>
  Effect.promise(async () => {
    const file = quarantineFile(root, list.id)
    await makeFolder(dirname(file))
    const entry = { endpoint: err.endpoint, key: err.key, path: err.path, message: err.message }
    let line: string
    try {
      // what a service said, as it leaves the process: redacted (secrets/redact.ts)
      line = redactedJson({ ...entry, record })
    } catch {
      // a record nested too deeply to stringify: where it was and why, with its top-level values (a
      // tx's hash and height name it) and without what is nested
      const top =
        typeof record === "object" && record !== null
          ? Object.fromEntries(Object.entries(record).filter(([, v]) => typeof v !== "object" || v === null))
          : null
      line = redactedJson({ ...entry, record: top, record_omitted: "its nested values: too deep to store" })
    }
    await appendFile(file, line + "\n")
  })

/**
 * Exports [a, b) of `source` for `targets` (the datasets of the source that lack this range) and
 * commits it; where a stop is asked (StopSignal) first, the part of it read up to there, "stopped".
 * Writers hold DuckDB connections: they are closed whatever happens to the shard.
 *
 * The shard holds one of `fetchSlots` while it pages, and lets it go before its last files are
 * written and committed: those wait on DuckDB (the sink's COPYs at once), not on the source, so
 * another shard's requests run meanwhile (held to the end, shards of equal size that end together
 * would leave the source idle while all their COPYs run: bench/RESULTS.md).
 */
export const runShard = (
  list: AppendList,
  targets: ReadonlyArray<AppendDataset>,
  [a, b]: Range,
  settings: ShardSettings,
  events: ShardEvents,
  fetchSlots: FetchSlots
): Effect.Effect<ShardEnd, WriteFailure, Source | ParquetSink | ShardLake> =>
  Effect.gen(function* () {
    const source = yield* Source
    const lake = yield* ShardLake
    const stop = yield* stopSignalOf
    // the bytes of pages in flight, run-wide (pageBudget.ts): a page asks fewer rows where records are large
    const budget = yield* pageBudgetOf
    const files = makeShardFiles({ ...settings, list, targets, range: [a, b], staging: lake.staging, sink: yield* ParquetSink })
    /** the targets still written: one whose commit another writer's refused is read again later (gaps), not here */
    const active = targets.map(() => true)
    const asked = settings.positionHeights[list.id]
    // (the plan names the heights of every position list it shards: without them the check would be off)
    if (list.unit === "position" && asked === undefined) return yield* Effect.die(new Error(`no heights planned for ${list.id}`))
    const order = recordOrder(list, [a, b], settings.chainId, asked)
    const ingest = pageIngest({ source, list, targets, active, files, order, settings, events, root: lake.root, stop })
    const commits = shardCommits(targets, [a, b], active, files, events, lake)
    /*
     * Every page by a keyset key, the first one the source's keyAfter: the rows above height a - 1
     * (blocks), or after sequence a, position a's (the tx families), never by offset, which the
     * real indexer pays for with every row it skips. The pager asks no page for more than the
     * shard's rows left (maxRows).
     */
    const first: PageRequest = { key: source.keyAfter(list, list.unit === "height" ? a - 1 : a), limit: settings.pageSize, reverse: false }
    /** a page that has come, holding its bytes of the run's page budget until its rows are made (or it is dropped) */
    const arrive = (
      request: PageRequest
    ): Effect.Effect<ArrivedPage<MadePage, WriteFailure | StopAsked, never>, WriteFailure | StopAsked> =>
      Effect.map(
        budget.hold(list.id, request.limit, unlessStopped(source.page(list, request), stop), (page) => page),
        ({ value: page, release }) => {
          const info: PageInfo = { key: page.key, nextKey: page.nextKey, count: page.items.length }
          const handle = Effect.map(ingest(page), (rows): MadePage => ({ ...info, rows }))
          return { info, handle: Effect.ensuring(handle, release), drop: release }
        }
      )
    let seen = 0
    /** Where the records read so far end, when they are whole: heights with no gap (blocks), or positions (placed checked each page). */
    const readUpTo = (): number | undefined => (list.unit === "position" || order.lastHeight() + 1 - a === seen ? a + seen : undefined)
    // the next page is asked while this one's rows are made (walkPagesAhead)
    const pages = walkPagesAhead<MadePage, WriteFailure | StopAsked, never>(
      arrive,
      {
        first,
        maxRows: b - a,
        limit: () => budget.limit(list.id, settings.pageSize),
        untrusted: (key, message) => source.untrustedPaging(list, key, message)
      },
      { ahead: true }
    )
    const work = Effect.gen(function* () {
      // (a shard started once a stop is asked reads nothing)
      if (stop?.isAsked()) return "stopped" as const
      const walked = fetchSlots.withPermits(1)(
        Stream.runForEach(pages, (page) =>
          Effect.gen(function* () {
            yield* placed(source, list, page)
            seen += page.count
            // a page's records and rows counted together once it is made, records first: progress never
            // shows rows of records it has not counted as read
            for (let t = 0; t < targets.length; t++)
              if (active[t]) {
                events.fetched(targets[t].name, page.count)
                events.rows(targets[t].name, page.rows[t])
              }
            const to = readUpTo()
            if (to !== undefined && commits.due(to, settings.checkpointMs)) yield* commits.upTo(to, a + seen)
            if (stop?.isAsked()) return yield* new StopAsked()
          })
        )
      )
      const stopped = yield* Effect.as(walked, false).pipe(
        Effect.catchIf(
          (e): e is StopAsked => e instanceof StopAsked,
          () => Effect.succeed(true)
        )
      )
      if (stopped) {
        // what is read up to a whole record is committed; the rest of the range (and any gap) waits for the next run
        const to = readUpTo()
        if (to !== undefined && to > commits.from()) yield* commits.upTo(to, a + seen)
        return "stopped" as const
      }
      const short = endedEarly(list.unit, a, b, seen)
      if (short) return yield* Effect.fail(source.untrustedPaging(list, null, short))
      yield* commits.upTo(b, b)
      for (const [d, gap] of commits.gaps)
        if ((yield* runShard(list, [d], gap, settings, events, fetchSlots)) === "stopped") return "stopped"
      return "done"
    })
    return yield* work.pipe(Effect.ensuring(files.close))
  })

/*
 * A position list's page must end where its key and row count say (misplacedPositionPage): the
 * shard's first row is then the row its position names, and no page overlaps, skips or repeats
 * another. Checked once its records have been (a record met twice is named as such) and the pager
 * has (a next_key that comes back is named as such), before it is counted.
 */
const placed = (source: SourceService, list: AppendList, page: PageInfo): Effect.Effect<void, SourceFailure> => {
  if (list.unit !== "position") return Effect.void
  // (a key the pager followed was a page's next_key, found to be a sequence cursor here first)
  const after = source.afterOfKey(list, page.key)
  const problem = misplacedPositionPage(page.key, after, page.count, page.nextKey, source.afterOfKey(list, page.nextKey))
  return problem ? Effect.fail(source.untrustedPaging(list, page.key, problem)) : Effect.void
}

/**
 * The commits of a shard: what each active target holds of [from, to), every file written first
 * (a file holds whole records), each file's range the part it completes. A target whose commit is
 * refused (another writer committed some of it first) is not written further here: what the
 * other left of [from, b) is read again once this shard is done (`gaps`).
 */
const shardCommits = (
  targets: ReadonlyArray<AppendDataset>,
  [a, b]: Range,
  active: Array<boolean>,
  files: ShardFiles,
  events: ShardEvents,
  lake: ShardLakeService
) => {
  /** where what is not committed yet starts, and since when it has been read */
  let from = a
  let since = Date.now()
  const gaps: Array<readonly [AppendDataset, Range]> = []
  /** whether what is read up to `to` has been held long enough to commit it on the way */
  const due = (to: number, checkpointMs: number) => to < b && to > from && Date.now() - since >= checkpointMs
  /** commits [from, to); `readTo`: where the walk has read to (what a refused commit drops from the counts) */
  const upTo = (to: number, readTo: number) =>
    Effect.gen(function* () {
      yield* files.flushAll(active)
      for (let t = 0; t < targets.length; t++) {
        if (!active[t]) continue
        const d = targets[t]
        const staged = files.take(d.name).map((f): CommittedFile => ({ ...f, range: [from, to] }))
        const outcome = yield* lake.commit(d.name, staged, [from, to])
        if (outcome.committed) continue
        // its rows stand, these were dropped: counted back, and what it left read again
        active[t] = false
        events.rows(d.name, -staged.reduce((n, f) => n + f.rows, 0))
        events.fetched(d.name, -(readTo - from))
        events.notice(`${d.name}: ${outcome.reason}; exporting the rest of it again`)
        for (const gap of subtract([from, b], outcome.ranges)) gaps.push([d, gap])
      }
      from = to
      since = Date.now()
    })
  return { due, upTo, gaps, from: () => from }
}

/** A page whose rows are made: what the walk follows, and the rows made of it per target. */
interface MadePage extends PageInfo {
  readonly rows: ReadonlyArray<number>
}

interface IngestContext {
  readonly source: SourceService
  readonly list: AppendList
  readonly targets: ReadonlyArray<AppendDataset>
  readonly active: ReadonlyArray<boolean>
  readonly files: ShardFiles
  readonly order: ReturnType<typeof recordOrder>
  readonly settings: ShardSettings
  readonly events: ShardEvents
  /** the lake's root (its quarantine) */
  readonly root: string
  /** the run's stop signal, where it has one */
  readonly stop: StopSignalService | undefined
}

/*
 * A page's rows, staged. Each record is decoded just before its rows are appended, in the step
 * that parsed the page, and dropped once its rows are made: nothing of a page outlives it.
 * (Against whole pages decoded on arrival and buffered one per shard: scavenges ~20% cheaper, GC
 * in all about the same.) Only a new bucket's file, a flush and quarantine wait (slow paths, a
 * few per file).
 */
const pageIngest = (c: IngestContext) => {
  const { source, list, targets, active, files, order, events } = c
  const contextOf = pageContextOf(source, list, targets, c.settings.pageSize)
  return (page: ListPage) =>
    Effect.gen(function* () {
      // (what the page's rows need of other lists, its block times, is not waited for past a stop: the page is dropped, nothing of it made)
      const context = yield* unlessStopped(contextOf(page), c.stop)
      const made = targets.map(() => 0)
      for (let i = 0; i < page.items.length; i++) {
        const item = page.items[i]
        let record: ReturnType<typeof decodeRecord>
        try {
          record = decodeRecord(item, page.latin1, list, targets, context)
        } catch (e) {
          // (between the blocks, where Stryker reads it as the catch clause's: the try block's own mutants stay scored)
          // Stryker disable all: the catch is reached only by a row whose height is not its record's (above), which no dataset makes
          if (!(e instanceof MissingBlockTime)) throw e
          return yield* Effect.fail(source.untrustedPaging(list, page.key, rowsAtOtherHeight(i, e.height)))
        }
        // Stryker restore all
        // the parsed record is not needed past here: let the GC have it mid-page
        ;(page.items as Array<unknown>)[i] = undefined
        if (isInvalid(record)) {
          const err = source.invalidRecord(list, page.key, i, record.issue)
          if (c.settings.onInvalid === "fail") return yield* Effect.fail(err)
          yield* quarantine(c.root, list, err, record.record)
          events.quarantined(list)
          continue
        }
        const misplaced = order.next(item, record.height)
        if (misplaced) return yield* Effect.fail(source.untrustedPaging(list, page.key, misplaced))
        for (let t = 0; t < targets.length; t++) {
          if (!active[t]) continue
          const d = targets[t]
          const rows = record.rows[t]
          for (const row of rows) {
            const height = Number(row[d.heightColumn])
            const w = files.cached(t, height) ?? (yield* files.open(t, height))
            const written = files.append(w, row, height)
            if (written) yield* written
          }
          made[t] += rows.length
        }
      }
      yield* files.afterPage
      return made
    })
}
