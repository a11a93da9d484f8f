/**
 * The txs list read by sequence over a stretch of heights: many blocks' cosmos tx hashes in a few
 * pages, where txs/by_height costs a request per block (cosmosTxHashes.ts chooses). Where the
 * stretch's first tx stands is found by single-row probes (the plan's search: positions.ts),
 * bounded by where the txs seen so far stand: a shard's next page of receipts starts about where
 * its last walk ended, so it costs one probe at most.
 */
import { Effect } from "effect"
import type { ListPage, ListRef } from "../../engine/Source.js"
import { restoreString } from "../../engine/pageDecode.js"
import { misplacedPositionPage, rowMissingBelowNewest } from "../../engine/pagingRules.js"
import { firstAtOrAbove } from "../../engine/positions.js"
import { afterOfKey, sequenceCursor } from "../../indexer/cursors.js"
import type { IndexerError } from "../../indexer/errors.js"
import { INDEXER, listRef } from "../../indexer/endpoints.js"
import { invalidRecord, untrustedPaging } from "./failures.js"
import type { Paging } from "./pages.js"

const txsList: ListRef = listRef(INDEXER.txs)

/** txs a walk's page asks for at most: as by_height's documented default, so a page of large txs weighs what one block's did */
export const WALK_PAGE = 100
/** probes asked at once in a search: few, as each is a request (a search of 10M txs costs 30) */
const FANOUT = 2
/** the most places of txs remembered per run (each a walk's or a probe's); beyond this all are forgotten */
const PLACES_KEPT = 10_000

/** A tx of the list: its position (sequence - 1) and height. */
interface Place {
  readonly position: number
  readonly height: number
}

/** What a walk read: the hashes of each height it read whole, and the height from which it read none whole. */
export interface Walked {
  readonly hashes: ReadonlyMap<number, ReadonlyArray<string>>
  readonly wholeBelow: number
}

/** The hash of record `index` of a page of `list` (a txs list), as the list spells it, or what is wrong with it. */
export const txHashOf = (list: ListRef, page: ListPage, index: number): string | IndexerError => {
  const hash = (page.items[index] as { txhash?: unknown }).txhash
  if (typeof hash !== "string")
    return invalidRecord(list, page.key, index, { path: "txhash", message: "expected a tx with a string txhash" })
  return page.latin1 ? restoreString(hash) : hash
}

/** A walk's height and hash of one record, or what is wrong with it. */
const txOf = (page: ListPage, index: number): { height: number; hash: string } | IndexerError => {
  const hash = txHashOf(txsList, page, index)
  if (typeof hash !== "string") return hash
  const height = (page.items[index] as { height?: unknown }).height
  const h = typeof height === "string" ? Number(height) : Number.NaN
  if (!Number.isSafeInteger(h))
    return invalidRecord(txsList, page.key, index, { path: "height", message: "expected a tx with a string height" })
  return { height: h, hash }
}

export const makeTxWalk = () => {
  /** places seen, ascending by position (and so by height) */
  let places: Array<Place> = []
  /** MAX(sequence) when first asked: every position below it holds a tx */
  let newest: number | undefined
  const learn = (place: Place) => {
    // Stryker disable next-line all: bounds memory only
    if (places.length >= PLACES_KEPT) places = []
    let i = places.length
    while (i > 0 && places[i - 1].position > place.position) i--
    if (places[i - 1]?.position !== place.position) places.splice(i, 0, place)
  }
  /** the page of txs after position `after` (limit `limit`), its placement checked */
  const pageAfter = (paging: Paging, after: number, limit: number): Effect.Effect<ListPage, IndexerError> =>
    Effect.flatMap(paging.page(txsList, { key: sequenceCursor(after), limit, reverse: false }), (p) => {
      const problem = misplacedPositionPage(p.key, after, p.items.length, p.nextKey, afterOfKey("sequence", p.nextKey))
      return problem ? Effect.fail(untrustedPaging(txsList, p.key, problem)) : Effect.succeed(p)
    })
  const newestSequence = (paging: Paging) =>
    Effect.suspend(() =>
      newest !== undefined
        ? Effect.succeed(newest)
        : Effect.map(paging.page(txsList, { limit: 1, reverse: true }), (p) => {
            newest ??= p.items.length === 0 ? 0 : (afterOfKey("sequence", p.nextKey) ?? 0)
            const tx = newest > 0 ? txOf(p, 0) : undefined
            if (tx && !("_tag" in tx)) learn({ position: newest - 1, height: tx.height })
            return newest
          })
    )
  /** the height of the tx at `position` (null past the end: refused below the newest) */
  const heightAt = (paging: Paging, position: number, end: number): Effect.Effect<number | null, IndexerError> =>
    Effect.flatMap(pageAfter(paging, position, 1), (p) => {
      if (p.items.length === 0) {
        const missing = rowMissingBelowNewest(position, end)
        return missing ? Effect.fail(untrustedPaging(txsList, p.key, missing)) : Effect.succeed(null)
      }
      const tx = txOf(p, 0)
      if ("_tag" in tx) return Effect.fail(tx)
      learn({ position, height: tx.height })
      return Effect.succeed(tx.height)
    })
  /** the positions between which the first tx at or above `height` stands, as the places seen bound it: [from, to] */
  const bounds = (height: number, end: number): readonly [number, number] => {
    const i = places.findIndex((p) => p.height >= height)
    const below = i < 0 ? places.at(-1) : places[i - 1]
    return [below ? below.position + 1 : 0, i < 0 ? end : places[i].position]
  }
  /**
   * Where a walk for `height` starts, in pages of `size`: the first tx at or above it, or a tx seen
   * below it less than a page before that (a shard's next page of receipts starts about where its
   * last walk ended: at most one probe, and at most a page read more, instead of a search). `end`
   * where none is.
   */
  const startOf = (paging: Paging, size: number, height: number, end: number): Effect.Effect<number, IndexerError> =>
    Effect.gen(function* () {
      const [from, to] = bounds(height, end)
      if (to <= from) return to
      if (from > 0 && to - from <= size) return from
      // past the probe a page on, the search need not look below it
      let lowest = from
      if (from > 0) {
        const ahead = yield* heightAt(paging, from + size - 1, end)
        if (ahead !== null && ahead >= height) return from
        lowest = from + size
      }
      return lowest + (yield* firstAtOrAbove((k) => heightAt(paging, lowest + k, end), Math.min(to, end) - lowest, height, FANOUT))
    })
  /** the requests a walk for `height` in pages of `size` costs before its first page, at most: startOf's probe and search */
  const searchCost = (height: number, end: number, size: number) => {
    const [from, to] = bounds(height, end)
    if (to - from <= (from > 0 ? size : 0)) return 0
    return (from > 0 ? 1 : 0) + FANOUT * Math.ceil(Math.log(to - from + 1) / Math.log(FANOUT + 1))
  }
  /** wanted heights found and pages read by the run's walks: where they found fewer than one a page, by height costs less */
  let found = 0
  let paged = 0
  const pays = () => paged < 4 || found >= paged
  /**
   * The hashes of the txs of heights `from`..`to`, read by sequence from where startOf says, while
   * the pages from `from` on hold a height of `wanted` each on average (past that, by height asks
   * fewer requests; the bytes of the txs between wanted heights are read either way).
   */
  const walk = (from: number, to: number, wanted: ReadonlySet<number>, paging: Paging): Effect.Effect<Walked, IndexerError> =>
    Effect.gen(function* () {
      const end = yield* newestSequence(paging)
      let after = yield* startOf(paging, paging.size(), from, end)
      const read = readHeights(from, to, wanted)
      while (after < end && read.pays()) {
        const p = yield* pageAfter(paging, after, paging.size())
        if (p.items.length === 0) break
        for (let i = 0; i < p.items.length; i++) {
          const tx = txOf(p, i)
          if ("_tag" in tx) return yield* Effect.fail(tx)
          // where heights start, for later walks: each page's ends, and the first tx past `to` (the next page of receipts starts near it)
          if (i === 0 || i === p.items.length - 1 || tx.height > to) learn({ position: after + i, height: tx.height })
          if (tx.height > to) return read.done(true)
          read.tx(tx.height, tx.hash)
        }
        read.paged()
        after += p.items.length
      }
      // at the list's end every height up to `to` was read whole: the list holds every block up to the tip /status named when
      // the run began (Rollytics writes a block's txs, receipts and block row in one transaction), and `newest` was read after
      return read.done(after >= end)
    })
  /** The hashes a walk of heights `from`..`to` collects, and whether it still pays (the run's walks together: `found`, `paged`). */
  const readHeights = (from: number, to: number, wanted: ReadonlySet<number>) => {
    const hashes = new Map<number, Array<string>>()
    let current = -1
    let pages = 0
    let hits = 0
    return {
      tx: (height: number, hash: string) => {
        if (height !== current) {
          // (heights go up with sequences: one that went down is another page's, refused by its placement)
          current = height
          if (wanted.has(height)) hits++
        }
        if (height < from) return
        const at = hashes.get(height)
        if (at) at.push(hash)
        else hashes.set(height, [hash])
      },
      /** a page read: counted where it reached `from` (the pages a near start read below it do not) */
      paged: () => {
        if (current >= from) pages++
      },
      pays: () => pages <= hits,
      /** what was read: every height up to `to` where `whole` (the walk passed it, or the list ended), else those below the height read last */
      done: (whole: boolean): Walked => {
        found += hits
        paged += pages
        return { hashes, wholeBelow: whole ? to + 1 : Math.max(from, current) }
      }
    }
  }
  return {
    /** reads the newest tx (once a run, a single row): where the list ends, and what its records weigh before a page is asked */
    newest: (paging: Paging) => Effect.asVoid(newestSequence(paging)),
    /** what a walk from `from` costs in requests before its first page, at most */
    searchCost: (from: number, paging: Paging) => Effect.map(newestSequence(paging), (end) => searchCost(from, end, paging.size())),
    /** whether the run's walks so far read at least one wanted height a page (the first few always do) */
    pays,
    walk,
    forget: () => {
      places = []
      newest = undefined
      found = 0
      paged = 0
    }
  }
}
