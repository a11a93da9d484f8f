/**
 * The cosmos tx hashes of blocks, asked only for blocks holding an EVM receipt that stands for a
 * cosmos tx: such a receipt names its cosmos tx only through a hash derived from it
 * (datasets/evm_txs.ts). A page's blocks are read by a walk of the txs list (txWalk.ts) where that
 * asks fewer requests, the rest from txs/by_height/{h} (keyset pages walked to the end, or to its
 * count). A block's hashes never change within a history, so they are remembered for the run.
 * Their pages are the run's like any list's: at most its page size, fewer where txs are large
 * (the run's page budget, weighed with the txs list's own pages).
 */
import { Effect, Stream } from "effect"
import type { ListPage, ListRef } from "../../engine/Source.js"
import { pageBudgetOf } from "../../engine/pageBudget.js"
import { walkPages, type PageInfo } from "../../engine/pager.js"
import type { IndexerError } from "../../indexer/errors.js"
import { INDEXER, listRef } from "../../indexer/endpoints.js"
import { untrustedPaging } from "./failures.js"
import { budgetedPaging, type PageReader, type Paging } from "./pages.js"
import { makeTxWalk, txHashOf, WALK_PAGE } from "./txWalk.js"

/** the records of both lists read here: their pages are weighed as the txs list's (pageBudget.ts) */
const TXS_RECORDS = INDEXER.txs.name
/** blocks whose hashes are remembered per run; beyond this all are forgotten */
const TX_HASH_CACHE = 50_000

/** Walks every page of txs/by_height/{height}, appending each tx's hash to `hashes`. */
const readHashes = (paging: Paging, height: number, hashes: Array<string>): Effect.Effect<void, IndexerError> => {
  const list: ListRef = listRef(INDEXER.txsByHeight, height)
  const collect = (p: ListPage, limit: number): Effect.Effect<PageInfo, IndexerError> => {
    for (let index = 0; index < p.items.length; index++) {
      const hash = txHashOf(list, p, index)
      if (typeof hash !== "string") return Effect.fail(hash)
      hashes.push(hash)
    }
    // a page short of the limit that completes the block's COUNT (by_height's total, "-1" past its
    // timeout) is the last: the real indexer names a next_key on every page with rows, and its empty
    // page cost a request per block; a server that serves fewer rows than asked is walked on
    const complete = p.items.length < limit && Number(p.total) === new Set(hashes).size
    return Effect.succeed({ key: p.key, nextKey: complete ? null : p.nextKey, count: p.items.length })
  }
  // the pager's rules: a key that comes back (a cycle) or a page longer than asked for fails; each
  // page asks what the budget allows then (pages shrink after large txs and grow back after small ones)
  const pages = walkPages((request) => Effect.flatMap(paging.page(list, request), (p) => collect(p, request.limit)), {
    first: { limit: paging.most, reverse: false },
    limit: paging.size,
    untrusted: (key, message): IndexerError => untrustedPaging(list, key, message)
  })
  return Stream.runDrain(pages)
}

/** The cosmos tx hashes at each height asked, read through `page` and remembered until `forget`. */
export const makeCosmosTxHashes = (page: PageReader) => {
  const hashesAt = new Map<number, ReadonlyArray<string>>()
  const txWalk = makeTxWalk()
  const remember = (height: number, hashes: ReadonlyArray<string>) => {
    // Stryker disable next-line all: bounds memory only; no answer changes
    if (hashesAt.size >= TX_HASH_CACHE) hashesAt.clear()
    hashesAt.set(height, hashes)
  }
  const hashesOf = (paging: Paging, height: number): Effect.Effect<ReadonlyArray<string>, IndexerError> =>
    Effect.suspend(() => {
      const known = hashesAt.get(height)
      if (known) return Effect.succeed(known)
      const hashes: Array<string> = []
      return Effect.as(
        Effect.tap(readHashes(paging, height, hashes), () => remember(height, hashes)),
        hashes
      )
    })
  /**
   * The heights of `heights` not known yet, read by a walk of the txs list where walks read a wanted
   * block a page (the run's so far) and finding its start costs fewer requests than they are blocks.
   */
  const walkFor = (paging: Paging, heights: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      const unknown = heights.filter((h) => !hashesAt.has(h)).sort((a, b) => a - b)
      if (unknown.length < 2 || !txWalk.pays() || (yield* txWalk.searchCost(unknown[0], paging)) >= unknown.length) return
      const walked = yield* txWalk.walk(unknown[0], unknown.at(-1)!, new Set(unknown), paging)
      for (const h of unknown) if (h < walked.wholeBelow) remember(h, walked.hashes.get(h) ?? [])
    })
  return {
    // a page's blocks walked where that pays, the rest by height at once: the client's request limiter bounds what is in flight
    hashesAt: (heights: ReadonlyArray<number>, pageSize: number): Effect.Effect<ReadonlyMap<number, ReadonlyArray<string>>, IndexerError> =>
      Effect.flatMap(pageBudgetOf, (budget) => {
        const paging = budgetedPaging(page, budget, TXS_RECORDS, Math.min(WALK_PAGE, pageSize))
        // (the newest tx first: no page is asked before the txs' weight is known)
        return Effect.zipRight(
          Effect.zipRight(txWalk.newest(paging), walkFor(paging, heights)),
          Effect.forEach(heights, (h) => Effect.map(hashesOf(paging, h), (hashes) => [h, hashes] as const), {
            concurrency: "unbounded"
          })
        ).pipe(Effect.map((pairs) => new Map(pairs)))
      }),
    forget: () => {
      hashesAt.clear()
      txWalk.forget()
    }
  }
}
