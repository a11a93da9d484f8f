/**
 * The plan's questions to the source: its status, then each list's one-row probe, and where asked
 * heights fall in position lists, by single-row probes of the source's key after a position (no
 * offset: the real indexer scans every row an offset skips).
 */
import { Chunk, Effect, Stream } from "effect"
import { Manifests } from "../lake/Manifests.js"
import { normalize, type Range } from "../lake/RangeSet.js"
import type { AppendDataset, AppendList } from "./Dataset.js"
import { ExportError, type ExportableDataset } from "./exportTypes.js"
import { misplacedPositionPage, newestBehindStatus, newestRowUnaddressable, rowMissingBelowNewest, totalBelowData } from "./pagingRules.js"
import type { PageBudgetService } from "./pageBudget.js"
import { walkPages } from "./pager.js"
import { placed } from "./positionOrder.js"
import { firstAtOrAbove } from "./positions.js"
import type { ListPage, ListRef, PageRequest, SourceFailure, SourceService, SourceStatus } from "./Source.js"

/**
 * The one-row page each list is probed with: whether it is served, and where it starts (a height
 * source's oldest row: a pruned node starts above 1) or ends (a position source's newest row: its
 * total, its MAX(sequence) as next_key, and the height it reaches), in one request.
 */
const probeRequest = (list: ListRef): PageRequest => ({ limit: 1, reverse: (list as Partial<AppendList>).unit === "position" })

/**
 * The sources' answers a plan needs: the status, then each list's probe page (probeRequest), the
 * probes at once, and beside them the tip block where the run anchors it (TipBlock). The probes
 * are asked once the status has answered: the indexer reads each request in a transaction of its
 * own and writes a block with its txs in one, so a probe read after the status's read holds every
 * row of the heights it names; asked beside it, a probe read first could end a block before the
 * status's tip and the plan would end there with that block's txs missing.
 */
export const probe = (
  source: SourceService,
  selected: ReadonlyArray<ExportableDataset>,
  /** whether the run will anchor the status's tip block (TipBlock): then it is asked beside the probes, a round trip earlier */
  anchorsTip: (status: SourceStatus) => boolean = () => false
) => {
  const lists = new Map(selected.map((d) => [d.name, d.kind === "append" ? d.list : d.probe]))
  return Effect.flatMap(source.status, (status) =>
    Effect.all(
      [
        // Stryker disable next-line ObjectLiteral,StringLiteral: the probes at once or one after another: the same answers, only slower
        Effect.forEach(
          [...new Set(lists.values())],
          (list) => source.probe(list, probeRequest(list)).pipe(Effect.map((answer) => [list, answer] as const)),
          { concurrency: "unbounded" }
        ),
        anchorsTip(status)
          ? Effect.map(source.blockHash(status.tip), (hash): TipBlock | undefined => ({ height: status.tip, hash }))
          : Effect.succeed(undefined)
      ],
      { concurrency: "unbounded" }
    ).pipe(
      Effect.map(([answers, tipBlock]) => {
        const byList = new Map<ListRef, ListPage | "not served" | "refused">(answers)
        const pageOf = (list: ListRef) => {
          const answer = byList.get(list)
          return typeof answer === "object" ? answer : undefined
        }
        return {
          status,
          tipBlock,
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
  )
}

/**
 * The tip block's hash as the source served it beside the probes (undefined where it does not
 * serve it yet): the block a run anchors, read once the status has answered, as it was read after
 * the probes before. Every commit reads it again (HistoryGuard), so a change after this read is
 * caught as one after the run's start always was.
 */
export interface TipBlock {
  readonly height: number
  readonly hash: string | undefined
}

/** A position source's newest row: one row, newest first (probeRequest). */
const NEWEST_ROW: PageRequest = { limit: 1, reverse: true }

/**
 * Single-row probes of a position list by the source's key after each position, each asked once: a
 * position's height, or null past the end. Below `newest` (the newest row's sequence) every
 * position holds a row: a probe there that finds none was answered by a shorter list than the
 * newest row's (rowMissingBelowNewest), and read as past the end it would place the plan's end past
 * rows above the heights asked.
 */
const positionProbes = (source: SourceService, list: AppendList, newest: number) => {
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
            const missing = height === null ? rowMissingBelowNewest(position, newest) : undefined
            if (missing) return Effect.fail(source.untrustedPaging(list, p.key, missing))
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

/** How the plan reads lists: probes at once (`fanout`), pages of `pageSize` at most, in the run's page `budget`. */
export interface PlanReads {
  readonly fanout: number
  readonly pageSize: number
  readonly budget: PageBudgetService
}

/**
 * the most heights below the tip a counting list is read at: a replica lags a few blocks, one
 * page of blocks; a position counting list (txs) is read newest first as far, within
 * COUNTED_PAGES pages of COUNTED_RECORDS (a tip quiet for more than those records hides a lag below them)
 */
const COUNTED_HEIGHTS = 100
const COUNTED_RECORDS = 100
const COUNTED_PAGES = 10

/**
 * The records of a position list above height `from`, newest first: pages back until one reaches
 * `from` (or the list's start, or COUNTED_RECORDS * COUNTED_PAGES records); and the newest height
 * it holds. Pages of the run's page size at most, fewer where its records are large (the run's page
 * budget: the first page a single record where their weight is not known yet).
 */
const newestRecords = (source: SourceService, list: AppendList, from: number, { pageSize, budget }: PlanReads) =>
  walkPages(
    (request) =>
      Effect.map(source.page(list, request), (page) => {
        budget.observe(list.id, page)
        return { ...page, count: page.items.length }
      }),
    {
      first: { limit: Math.min(COUNTED_RECORDS, pageSize), reverse: true },
      limit: () => (budget.weighed(list.id) ? budget.limit(list.id, pageSize) : 1),
      maxRows: COUNTED_RECORDS * COUNTED_PAGES,
      untrusted: (key, message) => source.untrustedPaging(list, key, message)
    }
  ).pipe(
    Stream.takeUntil((page) => page.items.length === 0 || list.heightOf(page.items.at(-1)) <= from),
    Stream.runCollect,
    Effect.map((pages) => {
      const records = Chunk.toArray(pages).flatMap((page) => page.items)
      return { records, reached: Math.max(0, ...records.map((r) => list.heightOf(r))) }
    })
  )

/**
 * A position list whose newest record (at `newest`) is below the plan's tip `to`: the heights above
 * it up to the tip must count none of its records on its counting list (AppendList.countedBy),
 * else the plan would end short of the tip with exit 0. The counting list is read at the last
 * COUNTED_HEIGHTS of them (a position one newest first); where a position one ends below the tip,
 * it is held to its own counting list in turn (a replica behind would show nothing above).
 */
const noneAbove = (
  source: SourceService,
  list: AppendList,
  newest: number,
  to: number,
  reads: PlanReads
): Effect.Effect<void, SourceFailure> => {
  const counted = list.countedBy
  if (!counted) return Effect.void
  const byHeight = counted.list.unit === "height"
  const from = Math.max(newest, to - COUNTED_HEIGHTS)
  const read = byHeight
    ? Effect.map(source.page(counted.list, { key: source.keyAfter(counted.list, from), limit: to - from, reverse: false }), (page) => ({
        records: page.items as ReadonlyArray<unknown>,
        reached: to
      }))
    : newestRecords(source, counted.list, from, reads)
  return Effect.flatMap(read, ({ records, reached }) => {
    const counts = new Map<number, number>()
    for (const record of records) {
      const at = counted.list.heightOf(record)
      if (at > newest && at <= to) counts.set(at, (counts.get(at) ?? 0) + counted.count(record))
    }
    for (const at of [...counts.keys()].sort((a, b) => a - b)) {
      const problem = newestBehindStatus(newest, at, counts.get(at)!, to, counted.says)
      if (problem) return Effect.fail(source.untrustedPaging(list, null, problem))
    }
    return !byHeight && reached < to ? noneAbove(source, counted.list, reached, to, reads) : Effect.void
  })
}

/**
 * A record at an edge of the lake's committed positions, as a committed file holds it: the list's
 * record at `position` is at `height`; exactly where the file holds a row for each record of its
 * range, else at least there (the range's last record) or at most (its first): a dataset of
 * several rows a record, or none (evm_logs), ends at the height of its last record with rows.
 */
export interface CommittedEdge {
  readonly dataset: string
  readonly position: number
  readonly height: number
  readonly side: "first" | "last"
  readonly exact: boolean
}

/**
 * Where the lake's committed rows of a position source start and end (the searches try these
 * first), and the records at the edges of its committed ranges (positionRange checks them).
 */
export const committedGuesses = (group: ReadonlyArray<AppendDataset>) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const committed: Array<Range> = []
    const edges: Array<CommittedEdge> = []
    for (const d of group) {
      const manifest = yield* manifests.get(d.name)
      committed.push(...(manifest?.committed ?? []))
      for (const f of placed(manifest?.files ?? [])) {
        // (a row per record, none quarantined: the file's edge rows are the records at its positions' edges)
        const exact = d.rowPerRecord && f.rows === f.range[1] - f.range[0]
        edges.push(
          { dataset: d.name, position: f.range[0], height: f.min, side: "first", exact },
          { dataset: d.name, position: f.range[1] - 1, height: f.max, side: "last", exact }
        )
      }
    }
    const ranges = normalize(committed)
    // (edges inside a committed range border no position a run asks for)
    const starts = new Set(ranges.map(([a]) => a))
    const ends = new Set(ranges.map(([, b]) => b))
    return {
      start: ranges[0]?.[0],
      end: ranges.at(-1)?.[1],
      edges: edges.filter((e) => (e.side === "first" ? starts.has(e.position) : ends.has(e.position + 1)))
    }
  })

/**
 * The lake's committed positions are this source's: each record at an edge of them that borders
 * positions the run reads [start, end) is at the height the lake's file holds there. A source
 * that numbers its records otherwise (an indexer re-synced from another height, another
 * deployment behind the address) would have the run read the wrong positions beside the lake's:
 * rows missing or held twice, with exit 0.
 */
const checkEdges = (
  heightAt: (position: number) => Effect.Effect<number | null, SourceFailure>,
  list: AppendList,
  [start, end]: Range,
  edges: ReadonlyArray<CommittedEdge>
) =>
  Effect.forEach(
    edges.filter((e) => (e.side === "last" ? e.position + 1 >= start && e.position + 1 < end : e.position > start && e.position <= end)),
    (e) =>
      Effect.flatMap(heightAt(e.position), (height) => {
        const agrees = height !== null && (e.exact ? height === e.height : e.side === "last" ? height >= e.height : height <= e.height)
        return agrees
          ? Effect.void
          : Effect.fail(
              new ExportError({
                message: `${e.dataset}: the lake's committed ${e.side === "last" ? "rows end" : "rows start"} with the record at position ${e.position} of the ${list.endpoint} list, at height ${e.height}; this indexer has ${height === null ? "no record" : `height ${height}`} there: it numbers its records otherwise than the indexer the lake was exported from (re-synced from another height, or another deployment behind this address), and the rows it would add beside the lake's would be missing or doubled; nothing was written: export into another --out`
              })
            )
      }),
    { concurrency: "unbounded", discard: true }
  )

/**
 * Rows in a position source and the positions of heights [from, to], found by cursor probes (no
 * offset: the real indexer scans every row an offset skips). The total, MAX(sequence), counts
 * the rows while sequences are contiguous: the newest row (the list's probe) must be the total's.
 * Where that row is at or below `to`, the range ends at the total with no search (a rerun, a
 * follow round); otherwise, and for a start above height 1, the searches try where the lake's
 * committed rows start and end first (`guesses`).
 */
export const positionRange = (
  source: SourceService,
  list: AppendList,
  { from, to }: { readonly from: number; readonly to: number },
  reads: PlanReads,
  probed: ListPage | undefined,
  guesses: { readonly start?: number; readonly end?: number; readonly edges?: ReadonlyArray<CommittedEdge> }
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
    const { heightAt, known } = positionProbes(source, list, maxSequence)
    known.set(maxSequence - 1, list.heightOf(newest.items[0]))
    // the newest row is the total's: none past it, when the probe was answered
    if (maxSequence === rows) known.set(rows, null)
    // a total below the data (a stale count) would end the export early and quietly: a row past
    // it at a height already asked for cannot be one the chain added since
    const belowData = totalBelowData(rows, yield* heightAt(rows), to)
    if (belowData) return yield* Effect.fail(source.untrustedPaging(list, null, belowData))
    const lastHeight = known.get(rows - 1)
    if (lastHeight !== undefined && lastHeight !== null && lastHeight < to) yield* noneAbove(source, list, lastHeight, to, reads)
    // Stryker disable next-line all: from height 1 the search would find position 0 too (a round of probes saved); the two searches at once or in turn find the same
    const start = from <= 1 ? Effect.succeed(0) : firstAtOrAbove(heightAt, rows, from, reads.fanout, guesses.start)
    const end =
      lastHeight !== undefined && lastHeight !== null && lastHeight <= to
        ? Effect.succeed(rows)
        : firstAtOrAbove(heightAt, rows, to + 1, reads.fanout, guesses.end)
    const range = (yield* Effect.all([start, end], { concurrency: "unbounded" })) as Range
    yield* checkEdges(heightAt, list, range, guesses.edges ?? [])
    return range
  })
