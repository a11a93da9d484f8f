/**
 * One snapshot of a mutable-state dataset (NFT collections and ownership, the rich list): its
 * lists read at a watermark with the engine's pager, duplicate keys dropped, and read again (up to
 * three times) when the watermark moved under them or the rows did not add up; committed as one
 * file of the snapshot height, "exact" or "best-effort" in the manifest.
 */
import { Effect, Stream } from "effect"
import { Manifests, type CommittedFile, type CommittedSnapshot } from "../lake/Manifests.js"
import { integerRangeCheck } from "../lake/columns.js"
import { snapshotFile } from "../lake/layout.js"
import { ParquetSink, type StagedFile } from "../lake/ParquetSink.js"
import { sqlStringList } from "../lake/sql.js"
import { commitSnapshot, olderColumnsNotice, writePending } from "./commit.js"
import type { SnapshotDataset, SnapshotInput, SnapshotList } from "./Dataset.js"
import { restoreDeep, restoreRow } from "./pageDecode.js"
import { pageBudgetOf } from "./pageBudget.js"
import { walkPages } from "./pager.js"
import { listingDoesNotEnd, offsetPageCutShort, pageStartsAgain } from "./pagingRules.js"
import type { WriteFailure } from "./shard.js"
import { Source, type ListRef, type SourceFailure, type SourceService, type SourceStatus } from "./Source.js"
import type { FieldIssue } from "../schema/decode.js"

export interface SnapshotOutcome {
  readonly rows: number
  readonly files: number
  readonly bytes: number
  readonly skipped?: string
  readonly snapshotHeight?: number
  readonly consistency?: "exact" | "best-effort"
  /** the file committed, if any */
  readonly committed?: CommittedFile
  /** lists the user named that the source said it does not have, each with the source's words: the run fails on them */
  readonly missing?: ReadonlyArray<string>
}

const MAX_READS = 3

/**
 * Every item of `list`, pages of `pageSize`, each checked by `validate`. Where the list's total is
 * a count (not an estimate), reading more than two pages past it is a listing that does not end
 * (fresh records forever): it fails rather than reading on; where it is an estimate, reading ten
 * times past it and past 200 pages does.
 */
const readList = (
  list: ListRef,
  validate: (item: unknown) => FieldIssue | undefined,
  pageSize: number,
  reverse: boolean,
  /** takes one checked item; a problem it names (a value its column cannot hold) fails the read as an invalid record */
  onItem: (item: unknown, latin1: boolean) => FieldIssue | undefined,
  totalIsEstimate = true
) =>
  Effect.gen(function* () {
    const source = yield* Source
    // pages in flight are the run's, in bytes: a list of large records asks smaller pages (pageBudget.ts)
    const budget = yield* pageBudgetOf
    let rows = 0
    // Stryker disable next-line UnaryOperator: every walk reads a page, which sets it
    let total = -1
    // a listing that cycles with fresh keys (the pager catches repeated ones) serves a page it
    // served before: its first record is met again. One string per page is held, not the rows.
    const pageStarts = new Set<string>()
    yield* Stream.runForEach(
      walkPages(
        (request) =>
          budget.around(
            list.endpoint,
            request.limit ?? pageSize,
            source.page(list, request),
            (page) => page,
            (page) => {
              const untrusted = (problem: string) => Effect.fail(source.untrustedPaging(list, page.key, problem))
              // an offset list's short page that names a next one was cut short (the pager follows it, for keyset lists)
              const cutShort = offsetPageCutShort(list.keys, page.items.length, request.limit ?? pageSize, page.nextKey)
              if (cutShort) return untrusted(cutShort)
              // (an empty page, whose start is undefined, ends the walk: pager.ts)
              const start = JSON.stringify(page.items[0])
              const again = pageStartsAgain(pageStarts, start)
              if (again) return untrusted(again)
              pageStarts.add(start)
              for (let i = 0; i < page.items.length; i++) {
                const issue = validate(page.items[i])
                if (issue) return Effect.fail(source.invalidRecord(list, page.key, i, issue))
                const problem = onItem(page.items[i], page.latin1)
                if (problem) return Effect.fail(source.invalidRecord(list, page.key, i, problem))
              }
              rows += page.items.length
              total = Number(page.total)
              const endless = listingDoesNotEnd(rows, total, pageSize, totalIsEstimate)
              if (endless) return untrusted(endless)
              return Effect.succeed({ key: page.key, nextKey: page.nextKey, count: page.items.length })
            }
          ),
        {
          first: { limit: pageSize, reverse },
          limit: () => budget.limit(list.endpoint, pageSize),
          untrusted: (key, message) => source.untrustedPaging(list, key, message)
        }
      ),
      () => Effect.void
    )
    return { rows, total }
  })

/** What a snapshot dataset may use to name its lists (see SnapshotInput). */
export const snapshotInput = (params: SnapshotInput["params"], pageSize: number) =>
  Effect.gen(function* () {
    const source = yield* Source
    const sink = yield* ParquetSink
    const manifests = yield* Manifests
    const input: SnapshotInput = {
      params,
      readAll: (list, validate) =>
        Effect.suspend(() => {
          const items: Array<unknown> = []
          return readList(list, validate, pageSize, false, (item, latin1) => void items.push(latin1 ? restoreDeep(item) : item)).pipe(
            Effect.as(items),
            Effect.provideService(Source, source)
          )
        }),
      // the lake's files at once, or (an S3 export's, fetched) one at a time: the select runs per batch
      readCommitted: (dataset, select) =>
        manifests
          .withCommittedFiles(dataset, (paths) =>
            sink.query(`WITH committed AS (SELECT * FROM read_parquet(${sqlStringList(paths)})) ${select}`)
          )
          .pipe(Effect.mapError((e): SourceFailure => e))
    }
    return input
  })

type SnapshotSettings = {
  readonly pageSize: number
  readonly notice: (m: string) => void
  readonly committed?: (file: CommittedFile) => void
}

/**
 * Takes (or completes) the snapshot of `d` at the watermark `before`, unless it is committed
 * already. A watermark that moved before a read again plans the snapshot anew at the height it
 * moved to (its lists named and checked against the lake there: the collections nft_tokens reads
 * may have grown), within MAX_READS reads in all (`spent`: those made at heights before). The
 * first read of all starts from a /status read just before it, not the run's plan's (read before
 * the run planned and probed: on a live chain it had moved by then, and the first read was judged
 * against it).
 */
export const runSnapshot = (
  d: SnapshotDataset,
  before: number,
  input: SnapshotInput,
  settings: SnapshotSettings,
  spent = 0,
  fresh = true
): Effect.Effect<SnapshotOutcome, WriteFailure, Source | ParquetSink | Manifests> =>
  Effect.gen(function* () {
    const todo = yield* listsToRead(d, before, input, settings.notice)
    if (!Array.isArray(todo)) return todo as SnapshotOutcome
    const lists: ReadonlyArray<SnapshotList> = todo
    const writer = yield* Effect.acquireRelease((yield* ParquetSink).openFile(d.columns, d.sortKey), (w) => w.close())
    const read = yield* readConsistent(d, lists, before, writer, settings, spent, fresh)
    if (read.movedTo !== undefined) return yield* runSnapshot(d, read.movedTo, input, settings, read.reads, false)
    const height = before
    const missing = [...read.absent].filter(([l]) => l.whenAbsent === "fail").map(([l, why]) => `the source has no ${l.label} (${why})`)
    const empties = [...read.absent].filter(([l]) => l.whenAbsent === "empty")
    for (const [l, why] of empties) settings.notice(`${d.name}: the source has no ${l.label} (${why}); recorded as absent in the snapshot`)
    const labels = lists.filter((l) => read.absent.get(l) === undefined || l.whenAbsent === "empty").map((l) => l.label)
    if (labels.length === 0) return { rows: 0, files: 0, bytes: 0, skipped: "every list named is absent from the source", missing }
    // staged as part 0: the commit gives the part its number, under the dataset's lock
    const file = yield* writePending(writer, d.name, snapshotFile(height, 0), { min: height, max: height }, undefined, d.key)
    const snapshot = snapshotRecord(
      height,
      read,
      file.rows,
      labels,
      empties.map(([l]) => l.label)
    )
    // Stryker disable next-line OptionalChaining: every caller passes committed; it stays optional for the ones that do not watch
    const commit = yield* commitSnapshot(d.name, [file], snapshot, () => settings.committed?.(file))
    if (!commit.committed) {
      // another writer committed some of these lists first: theirs stand; what is left is read again
      settings.notice(`${d.name}: ${commit.reason}; reading what is left of it again`)
      return yield* runSnapshot(d, height, input, settings)
    }
    // (the summary says "best-effort"; this says why, rows missing included)
    if (snapshot.note) settings.notice(`${d.name}: snapshot ${height} committed as best-effort: ${snapshot.note}`)
    const outcome: SnapshotOutcome = {
      rows: file.rows,
      files: 1,
      bytes: file.bytes,
      snapshotHeight: height,
      consistency: snapshot.consistency,
      committed: file,
      ...(missing.length > 0 ? { missing } : {})
    }
    return outcome
  }).pipe(Effect.scoped)

/** The lists of `d` still to read for the snapshot at `before`, or the outcome of a snapshot with none (skipped, or committed already). */
const listsToRead = (d: SnapshotDataset, before: number, input: SnapshotInput, notice: (m: string) => void) =>
  Effect.gen(function* () {
    const empty: SnapshotOutcome = { rows: 0, files: 0, bytes: 0 }
    const manifest = yield* (yield* Manifests).open(d.name, "snapshot", d.columns)
    const older = olderColumnsNotice(d.name, manifest, d.columns)
    if (older) notice(older)
    const named = yield* d.lists(input)
    if ("skip" in named) {
      notice(`${d.name}: skipped, ${named.skip}${named.hint ? `: ${named.hint}` : ""}`)
      return { ...empty, skipped: named.skip }
    }
    const prior = manifest.snapshots.find((s) => s.snapshot_height === before)
    const lists = named.filter((l) => !prior?.lists.includes(l.label))
    if (lists.length > 0) return lists
    notice(`${d.name}: snapshot at height ${before} is already committed`)
    return { ...empty, skipped: `snapshot ${before} already committed`, snapshotHeight: before }
  })

/** What a snapshot's reads found: the last read's time, how many reads, what was dropped, and whether the last was consistent. */
interface SnapshotRead {
  readonly reads: number
  readonly duplicates: number
  readonly after: number
  /** the block past its /status tip the source served after the last read (statusBehindLists) */
  readonly behind?: number
  readonly consistent: boolean
  /** the watermark found moved before a read again: the snapshot is to be planned anew there */
  readonly movedTo?: number
  /** keys the lists' totals count that no read served */
  readonly missing: number
  readonly snapshotTime: string
  /** lists the source said it does not have, in the last read: each with its words */
  readonly absent: ReadonlyMap<SnapshotList, string>
}

/**
 * Reads `lists` into `writer` until what it holds is consistent, MAX_READS reads in all at most
 * (`spent` made already): the watermark unmoved, as many keys as the lists' totals, and no row
 * holding state from past `before`. Offset paging repeats and skips rows (over changing state, and over equal sort values,
 * whose order the database need not keep from one query to the next): reads at an unmoved
 * watermark are of the same rows, so they add up (what one skipped, another served; each key is
 * kept once: Dataset.key), and a read again asks the source's largest pages (the fewest page
 * boundaries). A watermark found moved before a read again ends the reads here (`movedTo`): the
 * snapshot is planned anew there (runSnapshot). Keys are counted in DuckDB (which spills if need
 * be), so no key set grows with the snapshot in memory.
 */
const readConsistent = (
  d: SnapshotDataset,
  lists: ReadonlyArray<SnapshotList>,
  before: number,
  writer: StagedFile,
  settings: SnapshotSettings,
  spent: number,
  fresh: boolean
) =>
  Effect.gen(function* () {
    const source = yield* Source
    let read: SnapshotRead = {
      reads: spent,
      duplicates: 0,
      after: before,
      consistent: false,
      missing: 0,
      snapshotTime: "",
      absent: new Map()
    }
    // the watermark every read the writer holds was taken at, where it held still through each
    let held: number | undefined
    while (read.reads < MAX_READS && !read.consistent) {
      const reads = read.reads + 1
      const first = reads === spent + 1
      // (the first read of a snapshot planned anew goes by the status it was planned at, read just now)
      const statusBefore: SourceStatus | undefined = first && !fresh ? undefined : yield* source.status
      const mark = statusBefore ? (statusBefore.watermarks[d.watermark] ?? before) : before
      if (mark !== before) return { ...read, movedTo: mark }
      // Stryker disable next-line ConditionalExpression,EqualityOperator: before the first read the writer holds nothing to discard
      if (!first && held !== mark) yield* writer.discard()
      const pageSize = reads === 1 ? settings.pageSize : Math.max(settings.pageSize, source.maxPageSize)
      const once = yield* readOnce(d, lists, before, writer, pageSize)
      const duplicates = yield* writer.repeats(d.key)
      const statusAfter = yield* source.status
      const after = statusAfter.watermarks[d.watermark] ?? mark
      const behind = yield* statusBehindLists(source, statusAfter.tip)
      const counts = { keys: writer.rows() - duplicates, duplicates }
      const verdict = judged(
        once,
        counts,
        { watermark: d.watermark, before, mark, after, behind },
        first || sameKeys(once.absent, read.absent)
      )
      held = verdict.addsUp ? mark : undefined
      read = {
        reads,
        duplicates,
        after,
        behind,
        consistent: verdict.consistent,
        missing: verdict.missing,
        snapshotTime: once.snapshotTime,
        absent: once.absent
      }
      if (!verdict.consistent && reads < MAX_READS) settings.notice(`${d.name}: ${verdict.why.join(", ")} during the read; reading again`)
    }
    return read
  })

/**
 * A block the source serves above the tip its /status named (read just before): a /status behind
 * the lists (a cached or lagging replica behind one address), whose watermarks then label state
 * the lists answered from later heights. Rows of the rich list and the collections carry no
 * height to tell by, so this asks the block list; a block made between the two requests is told
 * apart by a /status read again, which names it then.
 */
const statusBehindLists = (source: SourceService, tip: number): Effect.Effect<number | undefined, SourceFailure> =>
  Effect.flatMap(source.blockHash(tip + 1), (hash) =>
    hash === undefined
      ? Effect.succeed(undefined)
      : // a block made between the two requests: /status names it now (chain growth, which the watermark judges)
        Effect.map(source.status, (now) => (now.tip > tip ? undefined : tip + 1))
  )

/**
 * What one read of a snapshot's lists at `before` shows, the writer holding `keys` distinct keys
 * (`duplicates` more rows), the watermark at `mark` before the read and `after` after it: consistent (the watermark unmoved,
 * as many keys as the lists' exact totals, or no repeat where a total is an estimate, and no row
 * from past the height); whether what the writer holds adds up with the next read (the same
 * rows: the watermark unmoved, exact totals, no row past the height, no more keys than counted,
 * the same lists absent as before); and why it is not consistent.
 */
const judged = (
  once: { readonly total: number | undefined; readonly later: number },
  { keys, duplicates }: { readonly keys: number; readonly duplicates: number },
  {
    watermark,
    before,
    mark,
    after,
    behind
  }: {
    readonly watermark: string
    readonly before: number
    readonly mark: number
    readonly after: number
    readonly behind: number | undefined
  },
  sameLists: boolean
) => {
  // keys held less the lists' totals: short (skipped rows) or over (the data changed)
  const offBy = once.total === undefined ? 0 : keys - once.total
  const missing = Math.max(0, -offBy)
  const counted = once.total !== undefined ? offBy === 0 : duplicates === 0
  const why = [
    after !== mark ? `the ${watermark} moved (${mark} → ${after})` : undefined,
    missing > 0 ? `${missing} of the ${once.total} rows its pagination.total counts not served yet` : undefined,
    offBy > 0 ? `${offBy} rows more than its pagination.total counts` : undefined,
    once.total === undefined && duplicates > 0 ? `pages overlapped (${duplicates} duplicates)` : undefined,
    once.later > 0 ? `${once.later} ${once.later === 1 ? "row holds" : "rows hold"} state from after height ${before}` : undefined,
    behind !== undefined ? `the source served block ${behind}, past the tip its /status names` : undefined
  ].filter((w) => w !== undefined)
  const still = after === mark && behind === undefined
  return {
    consistent: still && counted && once.later === 0,
    addsUp: still && once.total !== undefined && once.later === 0 && offBy <= 0 && sameLists,
    missing,
    why
  }
}

/** Whether two maps have the same keys. */
const sameKeys = <K>(a: ReadonlyMap<K, unknown>, b: ReadonlyMap<K, unknown>) => a.size === b.size && [...a.keys()].every((k) => b.has(k))

/** One read of every list into `writer`, each row stamped with the read's time. */
const readOnce = (d: SnapshotDataset, lists: ReadonlyArray<SnapshotList>, before: number, writer: StagedFile, pageSize: number) =>
  Effect.gen(function* () {
    const source = yield* Source
    const fits = integerRangeCheck(d.columns)
    const snapshotTime = new Date().toISOString()
    const absent = new Map<SnapshotList, string>()
    // the rows the lists' totals count, where each total is exact
    let total: number | undefined = 0
    // rows whose state is from past the snapshot's height, which labels the file (a lagging /status, or a later read)
    let later = 0
    const stateHeight = d.stateHeightColumn
    for (const list of lists) {
      let listRows = 0
      const take = (item: unknown, latin1: boolean): FieldIssue | undefined => {
        const rows = list.toRows(item)
        for (const row of rows) {
          const problem = fits(row)
          if (problem) return { path: "", message: `${d.name}: ${problem.message}` }
        }
        for (const row of rows) {
          // a page read as latin1 (see pageDecode.ts): its strings are UTF-8 again here
          if (latin1) restoreRow(row)
          if (stateHeight !== undefined && Number(row[stateHeight]) > before) later++
          row.push(snapshotTime)
          listRows++
          writer.append(row)
        }
        return undefined
      }
      const read = readList(list.list, list.validate, pageSize, list.reverse ?? false, take, list.totalIsEstimate ?? false)
      // the source's answer (before any row) that the list does not exist, where the list allows it
      const result =
        list.whenAbsent === undefined
          ? yield* read
          : yield* read.pipe(
              Effect.catchIf(
                (e) => listRows === 0 && source.absent(e) !== undefined,
                (e) => Effect.sync(() => void absent.set(list, source.absent(e)!))
              )
            )
      if (result === undefined) continue
      total = total === undefined || list.totalIsEstimate || result.total < 0 ? undefined : total + result.total
    }
    return { snapshotTime, absent, total, later }
  })

/** The manifest's record of a snapshot read as `read` found it. */
const snapshotRecord = (
  before: number,
  read: SnapshotRead,
  rows: number,
  lists: ReadonlyArray<string>,
  absent: ReadonlyArray<string>
): CommittedSnapshot => ({
  snapshot_height: before,
  snapshot_time: read.snapshotTime,
  consistency: read.consistent ? "exact" : "best-effort",
  watermark_before: before,
  watermark_after: read.after,
  rows,
  duplicates_dropped: read.duplicates,
  reads: read.reads,
  lists: [...lists],
  ...(absent.length > 0 ? { absent: [...absent] } : {}),
  ...(read.consistent ? {} : { note: inconsistency(read, before) })
})

/** Why a snapshot is best-effort: the data moved under its reads, or (held still) rows no read served. */
const inconsistency = (read: SnapshotRead, before: number) =>
  read.behind !== undefined
    ? `the source served block ${read.behind}, past the tip its /status named after the last read (${read.reads} reads in all): its /status is behind its lists (a cached or lagging replica behind one address?), so the rows may hold state from after height ${before}, which labels them`
    : read.after === before && read.missing > 0
      ? `${read.missing} of the rows the source counts were not served at height ${before} (${read.reads} reads in all; offset pages over equal sort values, whose order the source does not keep): the rows held are of that height, but not all of them`
      : "the data changed while it was read; duplicates were dropped by key, but rows may be missing or from a later height"
