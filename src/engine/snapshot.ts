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
import { ParquetSink } from "../lake/ParquetSink.js"
import { sqlStringList } from "../lake/sql.js"
import { commitSnapshot, olderColumnsNotice, writePending } from "./commit.js"
import type { SnapshotDataset, SnapshotInput, SnapshotList } from "./Dataset.js"
import { restoreDeep, restoreRow } from "./pageDecode.js"
import { walkPages } from "./pager.js"
import { listingDoesNotEnd, offsetPageCutShort, pageStartsAgain } from "./pagingRules.js"
import type { WriteFailure } from "./shard.js"
import { Source, type ListRef, type SourceFailure, type SourceStatus } from "./Source.js"
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
    let rows = 0
    // Stryker disable next-line UnaryOperator: every walk reads a page, which sets it
    let total = -1
    // a listing that cycles with fresh keys (the pager catches repeated ones) serves a page it
    // served before: its first record is met again. One string per page is held, not the rows.
    const pageStarts = new Set<string>()
    yield* Stream.runForEach(
      walkPages(
        (request) =>
          source.page(list, request).pipe(
            Effect.flatMap((page) => {
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
            })
          ),
        { first: { limit: pageSize, reverse }, untrusted: (key, message) => source.untrustedPaging(list, key, message) }
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

/** Takes (or completes) the snapshot of `d` at `status`'s watermark, unless it is committed already. */
export const runSnapshot = (
  d: SnapshotDataset,
  before: number,
  input: SnapshotInput,
  settings: { readonly pageSize: number; readonly notice: (m: string) => void; readonly committed?: (file: CommittedFile) => void }
): Effect.Effect<SnapshotOutcome, WriteFailure, Source | ParquetSink | Manifests> =>
  Effect.gen(function* () {
    const source = yield* Source
    const sink = yield* ParquetSink
    const manifests = yield* Manifests
    const empty: SnapshotOutcome = { rows: 0, files: 0, bytes: 0 }
    const manifest = yield* manifests.open(d.name, "snapshot", d.columns)
    const older = olderColumnsNotice(d.name, manifest, d.columns)
    if (older) settings.notice(older)
    const named = yield* d.lists(input)
    if ("skip" in named) {
      settings.notice(`${d.name}: skipped, ${named.skip}${named.hint ? `: ${named.hint}` : ""}`)
      return { ...empty, skipped: named.skip }
    }
    const prior = manifest.snapshots.find((s) => s.snapshot_height === before)
    const lists = named.filter((l) => !prior?.lists.includes(l.label))
    if (lists.length === 0) {
      settings.notice(`${d.name}: snapshot at height ${before} is already committed`)
      return { ...empty, skipped: `snapshot ${before} already committed`, snapshotHeight: before }
    }
    const writer = yield* Effect.acquireRelease(sink.openFile(d.columns, d.sortKey), (w) => w.close())
    // lists the source said it does not have, this read: label → its words
    const absent = new Map<SnapshotList, string>()
    /** `read`, or undefined where the source answers (before any row) that the list does not exist and the list allows it */
    const whenAbsent = <A>(list: SnapshotList, rowsRead: () => number, read: Effect.Effect<A, SourceFailure, Source>) =>
      list.whenAbsent === undefined
        ? read
        : read.pipe(
            Effect.catchIf(
              (e) => rowsRead() === 0 && source.absent(e) !== undefined,
              (e) => Effect.sync(() => void absent.set(list, source.absent(e)!))
            )
          )
    const fits = integerRangeCheck(d.columns)
    let reads = 0
    let duplicates = 0
    let after = before
    let consistent = false
    // Stryker disable next-line StringLiteral: set by every read, and there is at least one
    let snapshotTime = ""
    while (reads < MAX_READS && !consistent) {
      reads++
      // Stryker disable next-line ConditionalExpression,EqualityOperator: before the first read the writer holds nothing to discard
      if (reads > 1) yield* writer.discard()
      const statusBefore: SourceStatus | undefined = reads === 1 ? undefined : yield* source.status
      const mark = statusBefore ? (statusBefore.watermarks[d.watermark] ?? before) : before
      snapshotTime = new Date().toISOString()
      let shortOfTotal = false
      // rows whose state is from past the snapshot's height, which labels the file (a lagging /status, or a later read)
      let later = 0
      absent.clear()
      const stateHeight = d.stateHeightColumn
      for (const list of lists) {
        let listRows = 0
        const read = yield* whenAbsent(
          list,
          () => listRows,
          readList(
            list.list,
            list.validate,
            settings.pageSize,
            list.reverse ?? false,
            (item, latin1) => {
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
            },
            list.totalIsEstimate ?? false
          )
        )
        if (read === undefined) continue
        if (!list.totalIsEstimate && read.total >= 0 && listRows !== read.total) shortOfTotal = true
      }
      /*
       * Offset paging over changing state can repeat rows: they are counted and dropped by key
       * in DuckDB (which spills if need be), so no key set grows with the snapshot in memory.
       */
      duplicates = yield* writer.repeats(d.key)
      const statusAfter = yield* source.status
      after = statusAfter.watermarks[d.watermark] ?? mark
      consistent = after === mark && duplicates === 0 && !shortOfTotal && later === 0
      if (!consistent && reads < MAX_READS) {
        const what = [
          after !== mark ? `the ${d.watermark} moved (${mark} → ${after})` : undefined,
          duplicates > 0 ? `pages overlapped (${duplicates} duplicates)` : undefined,
          shortOfTotal ? "a list ended short of its pagination.total" : undefined,
          later > 0 ? `${later} rows hold state from after height ${before}` : undefined
        ]
        settings.notice(`${d.name}: ${what.filter((w) => w !== undefined).join(", ")} during the read; reading again`)
      }
    }
    const missing = [...absent].filter(([l]) => l.whenAbsent === "fail").map(([l, why]) => `the source has no ${l.label} (${why})`)
    const empties = [...absent].filter(([l]) => l.whenAbsent === "empty")
    for (const [l, why] of empties) settings.notice(`${d.name}: the source has no ${l.label} (${why}); recorded as absent in the snapshot`)
    const read = lists.filter((l) => absent.get(l) === undefined || l.whenAbsent === "empty")
    if (read.length === 0) return { ...empty, skipped: "every list named is absent from the source", missing }
    // staged as part 0: the commit gives the part its number, under the dataset's lock
    const rel = snapshotFile(before, 0)
    const file = yield* writePending(writer, d.name, rel, { min: before, max: before }, undefined, d.key)
    const snapshot: CommittedSnapshot = {
      snapshot_height: before,
      snapshot_time: snapshotTime,
      consistency: consistent ? "exact" : "best-effort",
      watermark_before: before,
      watermark_after: after,
      rows: file.rows,
      duplicates_dropped: duplicates,
      reads,
      lists: read.map((l) => l.label),
      ...(empties.length > 0 ? { absent: empties.map(([l]) => l.label) } : {}),
      ...(consistent
        ? {}
        : { note: "the data changed while it was read; duplicates were dropped by key, but rows may be missing or from a later height" })
    }
    // Stryker disable next-line OptionalChaining: every caller passes committed; it stays optional for the ones that do not watch
    const commit = yield* commitSnapshot(d.name, [file], snapshot, () => settings.committed?.(file))
    if (!commit.committed) {
      // another writer committed some of these lists first: theirs stand; what is left is read again
      settings.notice(`${d.name}: ${commit.reason}; reading what is left of it again`)
      return yield* runSnapshot(d, before, input, settings)
    }
    const outcome: SnapshotOutcome = {
      rows: file.rows,
      files: 1,
      bytes: file.bytes,
      snapshotHeight: before,
      consistency: snapshot.consistency,
      committed: file,
      ...(missing.length > 0 ? { missing } : {})
    }
    return outcome
  }).pipe(Effect.scoped)
