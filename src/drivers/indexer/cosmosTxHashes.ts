/**
 * The cosmos tx hashes of blocks, asked only for blocks holding an EVM receipt that stands for a
 * cosmos tx: such a receipt names its cosmos tx only through a hash derived from it
 * (datasets/evm_txs.ts). A page's blocks are read by a walk of the txs list (txWalk.ts) where that
 * asks fewer requests, the rest from txs/by_height/{h} (keyset pages walked to the end, or to its
 * count). A block's hashes never change within a history, so they are remembered for the run.
 */
import { Effect, Stream } from "effect"
import type { ListPage, ListRef } from "../../engine/Source.js"
import { walkPages, type PageInfo } from "../../engine/pager.js"
import type { IndexerError } from "../../indexer/errors.js"
import { INDEXER, listRef } from "../../indexer/endpoints.js"
import { untrustedPaging } from "./failures.js"
import type { PageReader } from "./pages.js"
import { makeTxWalk, txHashOf } from "./txWalk.js"

/** the documented default page size */
const TX_HASH_PAGE = 100
/** blocks whose hashes are remembered per run; beyond this all are forgotten */
const TX_HASH_CACHE = 50_000

/** Walks every page of txs/by_height/{height}, appending each tx's hash to `hashes`. */
const readHashes = (page: PageReader, height: number, hashes: Array<string>): Effect.Effect<void, IndexerError> => {
  const list: ListRef = listRef(INDEXER.txsByHeight, height)
  const collect = (p: ListPage): Effect.Effect<PageInfo, IndexerError> => {
    for (let index = 0; index < p.items.length; index++) {
      const hash = txHashOf(list, p, index)
      if (typeof hash !== "string") return Effect.fail(hash)
      hashes.push(hash)
    }
    // a page short of the limit that completes the block's COUNT (by_height's total, "-1" past its
    // timeout) is the last: the real indexer names a next_key on every page with rows, and its empty
    // page cost a request per block; a server that serves fewer rows than asked is walked on
    const complete = p.items.length < TX_HASH_PAGE && Number(p.total) === new Set(hashes).size
    return Effect.succeed({ key: p.key, nextKey: complete ? null : p.nextKey, count: p.items.length })
  }
  // the pager's rules: a key that comes back (a cycle) or a page longer than asked for fails
  const pages = walkPages((request) => Effect.flatMap(page(list, request), collect), {
    first: { limit: TX_HASH_PAGE, reverse: false },
    untrusted: (key, message): IndexerError => untrustedPaging(list, key, message)
  })
  return Stream.runDrain(pages)
}

/** The cosmos tx hashes at each height asked, read through `page` and remembered until `forget`. */
export const makeCosmosTxHashes = (page: PageReader) => {
  const hashesAt = new Map<number, ReadonlyArray<string>>()
  const txWalk = makeTxWalk(page)
  const remember = (height: number, hashes: ReadonlyArray<string>) => {
    // Stryker disable next-line all: bounds memory only; no answer changes
    if (hashesAt.size >= TX_HASH_CACHE) hashesAt.clear()
    hashesAt.set(height, hashes)
  }
  const hashesOf = (height: number): Effect.Effect<ReadonlyArray<string>, IndexerError> =>
    Effect.suspend(() => {
      const known = hashesAt.get(height)
      if (known) return Effect.succeed(known)
      const hashes: Array<string> = []
      return Effect.as(
        Effect.tap(readHashes(page, height, hashes), () => remember(height, hashes)),
        hashes
      )
    })
  /**
   * The heights of `heights` not known yet, read by a walk of the txs list where walks read a wanted
   * block a page (the run's so far) and finding its start costs fewer requests than they are blocks.
   */
  const walkFor = (heights: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      const unknown = heights.filter((h) => !hashesAt.has(h)).sort((a, b) => a - b)
      if (unknown.length < 2 || !txWalk.pays() || (yield* txWalk.searchCost(unknown[0])) >= unknown.length) return
      const walked = yield* txWalk.walk(unknown[0], unknown.at(-1)!, new Set(unknown))
      for (const h of unknown) if (h < walked.wholeBelow) remember(h, walked.hashes.get(h) ?? [])
    })
  return {
    // a page's blocks walked where that pays, the rest by height at once: the client's request limiter bounds what is in flight
    hashesAt: (heights: ReadonlyArray<number>): Effect.Effect<ReadonlyMap<number, ReadonlyArray<string>>, IndexerError> =>
      Effect.zipRight(
        walkFor(heights),
        Effect.forEach(heights, (h) => Effect.map(hashesOf(h), (hashes) => [h, hashes] as const), { concurrency: "unbounded" })
      ).pipe(Effect.map((pairs) => new Map(pairs))),
    forget: () => {
      hashesAt.clear()
      txWalk.forget()
    }
  }
}
