/**
 * One shard of an append-only source: the rows of [a, b) (heights or positions), paged, decoded,
 * written to one file per dataset and height bucket (more when a file grows past `flushBytes`),
 * and committed with the range they complete: at the end, and on the way every `checkpointMs`
 * (every writer is then finished and the range read so far committed), so that a stop loses that
 * much work at most, not a shard's. Nothing of a shard is visible before a commit.
 */
import { appendFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import type { ManifestError, CommittedFile } from "../lake/Manifests.js"
import { bucketOf, shardFile } from "../lake/layout.js"
import { ParquetSink, type StagedFile, type SinkError } from "../lake/ParquetSink.js"
import { subtract, type Range } from "../lake/RangeSet.js"
import { writeStaged } from "./commit.js"
import { ShardLake } from "./ShardLake.js"
import { NO_CONTEXT, type AppendDataset, type AppendList, type RowContext } from "./Dataset.js"
import { decodeRecord, isInvalid } from "./pageDecode.js"
import { endedEarly, foreignChain, misplacedPositionPage, outsideShard, recordTwice, rowsAtOtherHeight, wentBack } from "./pagingRules.js"
import { walkPages, type PageInfo } from "./pager.js"
import { pageBudgetOf } from "./pageBudget.js"
import { Source, type InvalidRecordFailure, type ListPage, type PageRequest, type SourceFailure } from "./Source.js"
import { makeFolder } from "../lake/files.js"
import { redactedJson } from "../secrets/redact.js"

/** What a shard (or a snapshot) fails with. */
export type WriteFailure = SourceFailure | SinkError | ManifestError

/** The run's paging slots (--concurrency): a shard holds one while it pages. */
export type FetchSlots = Pick<Effect.Semaphore, "withPermits">

export interface ShardSettings {
  readonly pageSize: number
  readonly bucketWidth: number
  /** start a new file once a writer holds this many bytes of strings */
  readonly flushBytes: number
  readonly onInvalid: "fail" | "quarantine"
  /** the longest a shard holds what it read before it commits it: a stop loses at most this much work (a commit finishes every open file: a shorter time makes smaller files) */
  readonly checkpointMs: number
  /** the chain /status names: a record that names another (see AppendList.chainIdOf) fails the run */
  readonly chainId: string
}

/** What the engine counts while shards run, per dataset. */
export interface ShardEvents {
  readonly rows: (dataset: string, rows: number) => void
  /** records (heights, positions) of the shard's range read, for each target: the plan's unit, which rows are not */
  readonly fetched: (dataset: string, units: number) => void
  readonly quarantined: (list: AppendList) => void
  readonly notice: (message: string) => void
}

/** A shard's open file for one dataset and height bucket, with the heights staged in it. */
interface BucketFile {
  readonly writer: StagedFile
  readonly dataset: AppendDataset
  readonly bucket: number
  part: number
  minHeight: number
  maxHeight: number
}

/** A row asked for the time of a height its record did not name (see `contextOf`). */
class MissingBlockTime {
  constructor(readonly height: number) {}
}

/** Appends an invalid record to OUT/_quarantine/<list id>.ndjson with where it was and what is wrong. */
const quarantine = (root: string, list: AppendList, err: InvalidRecordFailure, record: unknown) =>
  Effect.promise(async () => {
    const dir = join(root, "_quarantine")
    await makeFolder(dir)
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
    await appendFile(join(dir, `${list.id}.ndjson`), line + "\n")
  })

/**
 * Exports [a, b) of `source` for `targets` (the datasets of the source that lack this range) and
 * commits it. Writers hold DuckDB connections: they are closed whatever happens to the shard.
 *
 * The shard holds one of `fetchSlots` while it pages, and lets it go before its last files are
 * written and committed: those wait on DuckDB (the sink's COPYs at once), not on the source, so
 * another shard's requests run meanwhile. (Holding it to the end, every dataset's shards of equal
 * size ended together, and the next dataset's shards waited for all their COPYs: ~0.6 s of a
 * 3.4 s blocks + txs export with no request in flight, bench/RESULTS.md.)
 */
export const runShard = (
  list: AppendList,
  targets: ReadonlyArray<AppendDataset>,
  [a, b]: Range,
  settings: ShardSettings,
  events: ShardEvents,
  fetchSlots: FetchSlots
): Effect.Effect<void, WriteFailure, Source | ParquetSink | ShardLake> =>
  Effect.gen(function* () {
    const source = yield* Source
    const sink = yield* ParquetSink
    const lake = yield* ShardLake
    // the bytes of pages in flight, run-wide (pageBudget.ts): a page asks fewer rows where records are large
    const budget = yield* pageBudgetOf
    const { pageSize, bucketWidth, flushBytes, onInvalid, chainId } = settings
    const byKey = new Map<string, BucketFile>()
    const files = new Map<string, Array<CommittedFile>>(targets.map((d) => [d.name, []]))
    const opened: Array<StagedFile> = []
    /** the targets still written: one whose commit another writer's refused is read again later (gaps), not here */
    const active = targets.map(() => true)
    /** where what is not committed yet starts, and since when it has been read */
    let from = a
    let since = Date.now()

    const flush = (w: BucketFile) =>
      Effect.gen(function* () {
        if (w.writer.rows() === 0) return
        // (its range is set when it is committed: the part of the shard that commit completes)
        const file = yield* writeStaged(
          w.writer,
          lake.staging,
          w.dataset.name,
          shardFile(w.bucket, list.unit, [a, b], w.part++),
          { min: w.minHeight, max: w.maxHeight },
          [a, b]
        )
        files.get(w.dataset.name)!.push(file)
        w.minHeight = Infinity
        w.maxHeight = -Infinity
      })
    // the writer each target dataset used last: consecutive records nearly always share a bucket
    const current: Array<BucketFile | undefined> = targets.map(() => undefined)
    const writerFor = (t: number, height: number) =>
      Effect.gen(function* () {
        const d = targets[t]
        const bucket = bucketOf(height, bucketWidth)
        const key = `${d.name}/${bucket}`
        let w = byKey.get(key)
        // Stryker disable next-line ConditionalExpression: heights only go forward in a shard (checked in ingest), so a bucket whose writer exists is never asked for again: the lookup always misses
        if (!w) {
          const writer = yield* sink.openFile(d.columns, d.sortKey)
          opened.push(writer)
          w = { writer, dataset: d, bucket, part: 0, minHeight: Infinity, maxHeight: -Infinity }
          byKey.set(key, w)
        }
        current[t] = w
        return w
      })
    /*
     * Each record is decoded just before its rows are appended, in the step that parsed the page,
     * and dropped once its rows are made: nothing of a page outlives it. (Against whole pages
     * decoded on arrival and buffered one per shard: scavenges ~20% cheaper, GC in all about the
     * same.) Only a new bucket's writer, a flush and quarantine wait (slow paths, a few per file).
     */
    /*
     * Every record must come after every record before it in the walk: heights never go back
     * (blocks: always forward), and no record comes twice. Since heights never go back, a record
     * that comes again comes at the height the walk is at (every record since it had that height
     * too), so remembering every record of the current height catches a repeat after any number
     * of pages, whatever keys the server hands out: a cursor cycling back one page or a hundred
     * inside a block fails the shard before anything of it is committed. Memory stays bounded by
     * the records of one height (and by the shard's rows).
     */
    let lastHeight = -Infinity
    const atHeight = new Set<string>()
    /*
     * Datasets whose rows carry a block time their records lack (EVM receipts have a height only)
     * get the times of the page's heights from the source, in a few requests per page, before the
     * page's rows are made.
     */
    // Stryker disable next-line MethodExpression: every source's datasets agree on blockTime (evm_txs' four carry it, txs' two do not), so some = every here
    const timed = targets.some((d) => d.blockTime)
    const linked = list.needsCosmosTxs
    const contextOf = (page: ListPage): Effect.Effect<RowContext, SourceFailure> => {
      if (!timed && !linked) return Effect.succeed(NO_CONTEXT)
      const heights = new Set<number>()
      const linkHeights = new Set<number>()
      for (const item of page.items) {
        // a record that breaks its schema fails (or is quarantined) below; its height is not asked for
        let h = NaN
        let link = false
        try {
          h = list.heightOf(item)
          link = linked?.(item) === true
        } catch {}
        // Stryker disable next-line all: a record with no usable height fails its schema in decodeRecord before any row asks for a time
        if (Number.isSafeInteger(h) && h > 0) {
          heights.add(h)
          if (link) linkHeights.add(h)
        }
      }
      return Effect.all([
        timed ? source.blockTimes([...heights]) : Effect.succeed(new Map<number, string>()),
        linkHeights.size > 0 ? source.cosmosTxHashes([...linkHeights]) : Effect.succeed(new Map<number, ReadonlyArray<string>>())
      ]).pipe(
        Effect.map(([times, cosmos]) => ({
          blockTime: timed
            ? (height: number) => {
                const time = times.get(height)
                // Stryker disable next-line ConditionalExpression: unreachable today (every row's height is its record's, whose time was asked for); a guard for a dataset that breaks that
                if (time === undefined) throw new MissingBlockTime(height)
                return time
              }
            : NO_CONTEXT.blockTime,
          // a block not asked for (its records need no link) has none to give
          cosmosTxHashes: (height: number) => cosmos.get(height) ?? []
        }))
      )
    }
    const ingest = (page: ListPage) =>
      Effect.gen(function* () {
        const flushes = new Set<BucketFile>()
        const context = yield* contextOf(page)
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
            if (onInvalid === "fail") return yield* Effect.fail(err)
            yield* quarantine(lake.root, list, err, record.record)
            events.quarantined(list)
            continue
          }
          const h = record.height
          // (a block at the height before it is its identity again: recordTwice names it)
          const misplaced = outsideShard(list.unit, h, a, b) ?? wentBack(h, lastHeight) ?? foreignChain(h, list.chainIdOf?.(item), chainId)
          if (misplaced) return yield* Effect.fail(source.untrustedPaging(list, page.key, misplaced))
          const id = list.identityOf(item)
          if (h > lastHeight) atHeight.clear()
          else if (atHeight.has(id)) return yield* Effect.fail(source.untrustedPaging(list, page.key, recordTwice(id, h)))
          atHeight.add(id)
          lastHeight = h
          for (let t = 0; t < targets.length; t++) {
            if (!active[t]) continue
            const d = targets[t]
            const rows = record.rows[t]
            for (const row of rows) {
              const height = Number(row[d.heightColumn])
              const last = current[t]
              // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: a cache of the writer byKey holds (a miss finds the same one, only slower); its "always hit" mutant misfiles rows, which the several-buckets test of shard-edges.test sees
              const w = last && height >= last.bucket && height < last.bucket + bucketWidth ? last : yield* writerFor(t, height)
              w.writer.append(row)
              // Stryker disable next-line EqualityOperator: equal heights change nothing
              if (height < w.minHeight) w.minHeight = height
              // Stryker disable next-line ConditionalExpression,EqualityOperator: a writer's rows come in height order, so the last height is its largest
              if (height > w.maxHeight) w.maxHeight = height
              // rows so large that a COPY of more would need more than DuckDB gives one: written now, mid-page
              if (w.writer.full()) {
                flushes.delete(w)
                yield* flush(w)
              }
              // Stryker disable next-line EqualityOperator: a file one byte larger is the same file
              else if (w.writer.stagedBytes() > flushBytes) flushes.add(w)
            }
            events.rows(d.name, rows.length)
          }
        }
        // after the page: a writer may pass flushBytes by at most one page
        for (const w of flushes) yield* flush(w)
        // all writers of the run together past the sink's budget: this shard finishes its largest
        // files early (smaller files rather than DuckDB past its memory limit)
        // Stryker disable next-line ConditionalExpression: the loop asks again before each flush; this spares the sort under budget
        if (sink.overBudget()) {
          // (a writer with no rows is flushed as a no-op)
          const own = [...byKey.values()].sort((x, y) => y.writer.stagedBytes() - x.writer.stagedBytes())
          for (const w of own) {
            if (!sink.overBudget()) break
            yield* flush(w)
          }
        }
      })
    /*
     * Every page by a keyset key, the first one the source's keyAfter: the rows above height a - 1
     * (blocks), or after sequence a, position a's (the tx families), never by
     * offset, which the real indexer pays for with every row it skips. The pager asks no page for
     * more than the shard's rows left (maxRows).
     */
    const first: PageRequest = { key: source.keyAfter(list, list.unit === "height" ? a - 1 : a), limit: pageSize, reverse: false }
    const fetchAndWrite = (request: PageRequest): Effect.Effect<PageInfo, WriteFailure> =>
      budget.around(
        list.id,
        request.limit,
        source.page(list, request),
        (page) => page,
        (page) => ingest(page).pipe(Effect.as({ key: page.key, nextKey: page.nextKey, count: page.items.length }))
      )
    /*
     * A position list's page must end where its key and row count say (misplacedPositionPage): the
     * shard's first row is then the row its position names, and no page overlaps, skips or
     * repeats another. Checked once its records have been (a record met twice is named as such)
     * and the pager has (a next_key that comes back is named as such), before it is counted.
     */
    const placed = (page: PageInfo): Effect.Effect<void, SourceFailure> => {
      if (list.unit !== "position") return Effect.void
      // (a key the pager followed was a page's next_key, found to be a sequence cursor here first)
      const problem = misplacedPositionPage(
        page.key,
        source.afterOfKey(list, page.key),
        page.count,
        page.nextKey,
        source.afterOfKey(list, page.nextKey)
      )
      return problem ? Effect.fail(source.untrustedPaging(list, page.key, problem)) : Effect.void
    }
    let seen = 0
    const gaps: Array<readonly [AppendDataset, Range]> = []
    /**
     * Commits what each active target holds of [from, to): every writer finished first (a file
     * holds whole records), each file's range the part it completes. A target whose commit is
     * refused (another writer committed some of it first) is not written further here: what the
     * other left of [from, b) is read again once this shard is done.
     */
    const commitUpTo = (to: number) =>
      Effect.gen(function* () {
        for (const [t, w] of [...byKey.values()].map((w) => [targets.indexOf(w.dataset), w] as const)) if (active[t]) yield* flush(w)
        for (let t = 0; t < targets.length; t++) {
          if (!active[t]) continue
          const d = targets[t]
          const staged = files.get(d.name)!.map((f): CommittedFile => ({ ...f, range: [from, to] }))
          files.set(d.name, [])
          const outcome = yield* lake.commit(d.name, staged, [from, to])
          if (outcome.committed) continue
          // its rows stand, these were dropped: counted back, and what it left read again
          active[t] = false
          events.rows(d.name, -staged.reduce((n, f) => n + f.rows, 0))
          events.fetched(d.name, -(a + seen - from))
          events.notice(`${d.name}: ${outcome.reason}; exporting the rest of it again`)
          for (const gap of subtract([from, b], outcome.ranges)) gaps.push([d, gap])
        }
        from = to
        since = Date.now()
      })
    /** Where the records read so far end, when they are whole: heights with no gap (blocks), or positions (placed checked each page). */
    const readUpTo = (): number | undefined => (list.unit === "position" || lastHeight + 1 - a === seen ? a + seen : undefined)
    const work = Effect.gen(function* () {
      yield* fetchSlots.withPermits(1)(
        Stream.runForEach(
          walkPages(fetchAndWrite, {
            first,
            maxRows: b - a,
            limit: () => budget.limit(list.id, pageSize),
            untrusted: (key, message) => source.untrustedPaging(list, key, message)
          }),
          (page) =>
            Effect.gen(function* () {
              yield* placed(page)
              seen += page.count
              for (let t = 0; t < targets.length; t++) if (active[t]) events.fetched(targets[t].name, page.count)
              const to = readUpTo()
              if (to !== undefined && to < b && to > from && Date.now() - since >= settings.checkpointMs) yield* commitUpTo(to)
            })
        )
      )
      const short = endedEarly(list.unit, a, b, seen)
      if (short) return yield* Effect.fail(source.untrustedPaging(list, null, short))
      yield* commitUpTo(b)
      for (const [d, gap] of gaps) yield* runShard(list, [d], gap, settings, events, fetchSlots)
    })
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: whether forEach keeps the closes' results, nothing reads them
    return yield* work.pipe(Effect.ensuring(Effect.forEach(opened, (w) => w.close(), { discard: true })))
  })
