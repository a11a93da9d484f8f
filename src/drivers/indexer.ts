/**
 * The indexer as the engine's `Source`: /status as watermarks, a list served unless its own
 * endpoint answers 404, and any list's page fetched as bytes and parsed in the same retried step
 * (a body that is not JSON is a truncated response, fetched again). The errors the engine raises
 * on what the indexer sent are the indexer's own (IndexerDecodeError, IndexerPagingError).
 */
import { Effect, Layer, Stream } from "effect"
import { Source, type ListPage, type ListRef, type SourceService } from "../engine/Source.js"
import { readJson, restoreString } from "../engine/pageDecode.js"
import { walkPages, type PageInfo } from "../engine/pager.js"
import { IndexerDecodeError, IndexerPagingError, IndexerTruncatedBody, type IndexerError } from "../indexer/errors.js"
import { bodyExcerpt } from "../http/body.js"
import { IndexerClient, type IndexerClientService } from "../indexer/IndexerClient.js"
import { afterOfKey, heightCursor, keyAfter } from "../indexer/cursors.js"
import { INDEXER, listRef, MAX_PAGE_LIMIT } from "../indexer/endpoints.js"
import { readListEnvelope } from "../indexer/envelope.js"
import type { FieldIssue } from "../schema/decode.js"

/** A page's envelope from its bytes: the records (as parsed, not yet checked) and pagination, or what is wrong. */
export const parseListPage = (
  bytes: ArrayBuffer,
  arrayKey: string
):
  | { readonly _tag: "Page"; readonly page: Omit<ListPage, "key"> }
  | { readonly _tag: "Truncated" }
  | { readonly _tag: "BadEnvelope"; readonly issue: FieldIssue } => {
  const parsed = readJson(bytes)
  if (!parsed) return { _tag: "Truncated" }
  const envelope = readListEnvelope(parsed.json, arrayKey)
  if ("issue" in envelope) return { _tag: "BadEnvelope", issue: envelope.issue }
  const { records, pagination } = envelope
  // a key is ASCII on every indexer seen; restored all the same if the page was read as latin1
  const nextKey = parsed.latin1 && pagination.next_key !== null ? restoreString(pagination.next_key) : pagination.next_key
  return { _tag: "Page", page: { items: records, nextKey, total: pagination.total, latin1: parsed.latin1 } }
}

/** A record's field path within its page: `txs[3].height`. */
const recordPath = (arrayKey: string, index: number, path: string) =>
  `${arrayKey}[${index}]${path ? (path.startsWith("[") ? "" : ".") + path : ""}`

/** The block list, read by height for the block times of lists whose records carry only a height. */
const blockList: ListRef = listRef(INDEXER.blocks)
/** the documented default page size: a server that caps pages lower still answers in order, and the walk goes on */
const BLOCK_TIME_PAGE = 100
/** block times remembered per run (a height's time never changes); beyond this the oldest are forgotten */
const BLOCK_TIME_CACHE = 50_000

export const makeIndexerSource = (indexer: IndexerClientService): SourceService => {
  const page = (list: ListRef, request: Parameters<SourceService["page"]>[1]): Effect.Effect<ListPage, IndexerError> => {
    const key = request.key ?? null
    return Effect.suspend(() =>
      indexer.getWith(list.endpoint, list.path, { ...indexer.pageQuery(request), ...list.query }, (raw) => {
        const parsed = parseListPage(raw.bytes, list.arrayKey)
        if (parsed._tag === "Truncated") return Effect.fail(new IndexerTruncatedBody({ url: raw.url, bytes: raw.bytes.byteLength }))
        if (parsed._tag === "BadEnvelope")
          return Effect.fail(
            new IndexerDecodeError({ endpoint: list.endpoint, key, path: parsed.issue.path, message: parsed.issue.message })
          )
        return Effect.succeed({ key, ...parsed.page, bytes: raw.bytes.byteLength })
      })
    )
  }
  const is404 = (e: IndexerError) => e._tag === "IndexerHttpError" && e.status === 404
  // a handler that refuses its path parameter (the rich list of a denom it cannot map to an ERC-20
  // contract answers 400 with the lookup's error: rollytics api/handler/richlist/richlist.go) is a
  // route that is served: only 404 says a route is not
  const refused = (e: IndexerError) => e._tag === "IndexerHttpError" && e.status === 400
  // the real indexer answers 404 on routes it does not serve (EVM routes on Move/Wasm rollups)
  const probe = (
    list: ListRef,
    request: Parameters<SourceService["page"]>[1]
  ): Effect.Effect<ListPage | "not served" | "refused", IndexerError> =>
    page(list, request).pipe(
      Effect.map((p): ListPage | "not served" | "refused" => p),
      Effect.catchIf(is404, () => Effect.succeed("not served" as const)),
      Effect.catchIf(refused, () => Effect.succeed("refused" as const))
    )

  const times = new Map<number, string>()
  const remember = (height: number, time: string) => {
    // Stryker disable next-line all: bounds memory only (50,000 heights of a run); no answer changes
    if (times.size >= BLOCK_TIME_CACHE) for (const old of [...times.keys()].slice(0, BLOCK_TIME_CACHE / 10)) times.delete(old)
    times.set(height, time)
  }
  /*
   * The heights a page asks for are ascending and close together (a page of receipts spans a few
   * blocks), so they are read as runs of the block list from a height cursor: one request per
   * run of up to BLOCK_TIME_PAGE heights, never more requests than heights.
   */
  const readBlockTimes = (heights: ReadonlyArray<number>): Effect.Effect<void, IndexerError> =>
    Effect.gen(function* () {
      const missing = heights.filter((h) => !times.has(h)).sort((x, y) => x - y)
      let i = 0
      while (i < missing.length) {
        const from = missing[i]
        let to = from
        // (past the end missing[i] is undefined, and undefined < n is false)
        while (missing[i] < from + BLOCK_TIME_PAGE) to = missing[i++]
        let key = heightCursor(from - 1)
        let next = from
        // a server may cap the page below what was asked: walk on from the last height it gave
        while (next <= to) {
          const got: ListPage = yield* page(blockList, { key, limit: to - next + 1, reverse: false })
          let last = next - 1
          for (const [index, block] of got.items.entries()) {
            const b = block as { height?: unknown; timestamp?: unknown }
            const height = typeof b.height === "string" ? Number(b.height) : NaN
            if (!Number.isSafeInteger(height) || typeof b.timestamp !== "string")
              return yield* Effect.fail(
                new IndexerDecodeError({
                  endpoint: blockList.endpoint,
                  key,
                  path: recordPath(blockList.arrayKey, index, typeof b.timestamp !== "string" ? "timestamp" : "height"),
                  message: "expected a block with a string height and timestamp"
                })
              )
            if (height <= last)
              return yield* Effect.fail(
                new IndexerPagingError({
                  endpoint: blockList.endpoint,
                  key,
                  message: `height ${height} came after height ${last}: the block list went back`
                })
              )
            last = height
            if (height > to) break
            remember(height, got.latin1 ? restoreString(b.timestamp) : b.timestamp)
          }
          // (a page with blocks has moved `last` past `next - 1`: only an empty one makes no progress)
          if (got.items.length === 0) break
          next = last + 1
          key = heightCursor(last)
        }
      }
    })
  const blockTimes = (heights: ReadonlyArray<number>): Effect.Effect<ReadonlyMap<number, string>, IndexerError> =>
    readBlockTimes(heights).pipe(
      Effect.flatMap(() => {
        const answer = new Map<number, string>()
        for (const h of heights) {
          const time = times.get(h)
          if (time === undefined)
            return Effect.fail(
              new IndexerPagingError({
                endpoint: blockList.endpoint,
                key: heightCursor(h - 1),
                message: `block ${h} is not in the block list (pruned, or not indexed yet), so the rows at that height have no block time`
              })
            )
          answer.set(h, time)
        }
        return Effect.succeed(answer)
      })
    )
  /*
   * The cosmos tx hashes of a block, from /indexer/tx/v1/txs/by_height/{h} (keyset pages walked to
   * the end), asked only for blocks holding an EVM receipt that stands for a cosmos tx: such a
   * receipt names its cosmos tx only through a hash derived from it (datasets/evm_txs.ts).
   */
  const hashesAt = new Map<number, ReadonlyArray<string>>()
  const hashesOf = (h: number): Effect.Effect<ReadonlyArray<string>, IndexerError> =>
    Effect.suspend(() => {
      const known = hashesAt.get(h)
      if (known) return Effect.succeed(known)
      const list: ListRef = listRef(INDEXER.txsByHeight, h)
      const hashes: Array<string> = []
      const collect = (p: ListPage): Effect.Effect<PageInfo, IndexerError> => {
        for (const [index, t] of p.items.entries()) {
          const hash = (t as { txhash?: unknown }).txhash
          if (typeof hash !== "string")
            return Effect.fail(
              new IndexerDecodeError({
                endpoint: list.endpoint,
                key: p.key,
                path: recordPath(list.arrayKey, index, "txhash"),
                message: "expected a tx with a string txhash"
              })
            )
          hashes.push(p.latin1 ? restoreString(hash) : hash)
        }
        return Effect.succeed({ key: p.key, nextKey: p.nextKey, count: p.items.length })
      }
      // the pager's rules: a key that comes back (a cycle) or a page longer than asked for fails
      const pages = walkPages((request) => Effect.flatMap(page(list, request), collect), {
        first: { limit: BLOCK_TIME_PAGE, reverse: false },
        untrusted: (key, message): IndexerError => new IndexerPagingError({ endpoint: list.endpoint, key, message })
      })
      return Stream.runDrain(pages).pipe(
        Effect.map(() => {
          // Stryker disable next-line all: bounds memory only; no answer changes
          if (hashesAt.size >= BLOCK_TIME_CACHE) hashesAt.clear()
          hashesAt.set(h, hashes)
          return hashes
        })
      )
    })
  // the blocks of one page at once: the client's request limiter bounds what is in flight
  const cosmosTxHashes = (heights: ReadonlyArray<number>): Effect.Effect<ReadonlyMap<number, ReadonlyArray<string>>, IndexerError> =>
    Effect.forEach(heights, (h) => Effect.map(hashesOf(h), (hashes) => [h, hashes] as const), { concurrency: "unbounded" }).pipe(
      Effect.map((pairs) => new Map(pairs))
    )
  return {
    status: indexer.status.pipe(
      Effect.map((s) => ({
        chainId: s.chain_id,
        tip: s.height,
        watermarks: { height: s.height, internal_tx_height: s.internal_tx_height, rich_list_height: s.rich_list_height }
      }))
    ),
    // a height pruned away or above the tip: 404 "block not found"
    blockHash: (height) =>
      indexer.block(height).pipe(
        Effect.map((r): string | undefined => r.block.hash),
        Effect.catchIf(is404, () => Effect.succeed(undefined))
      ),
    // Stryker disable next-line BooleanLiteral: either end of the list answers whether it is served
    served: (list) => Effect.map(probe(list, { limit: 1, reverse: false }), (answer) => answer !== "not served"),
    probe,
    absent: (failure) => {
      const e = failure as IndexerError
      // a 400 only: a 404 is a route (or a gateway) that is not there, not a parameter refused
      if (e._tag !== "IndexerHttpError" || !refused(e)) return undefined
      return bodyExcerpt(e.body) || `answered ${e.status}`
    },
    keyAfter: (list, after) => keyAfter(list.keys ?? "offset", after),
    afterOfKey: (list, key) => afterOfKey(list.keys ?? "offset", key),
    maxPageSize: MAX_PAGE_LIMIT,
    page,
    blockTimes,
    cosmosTxHashes,
    invalidRecord: (list, key, index, issue) =>
      new IndexerDecodeError({ endpoint: list.endpoint, key, path: recordPath(list.arrayKey, index, issue.path), message: issue.message }),
    untrustedPaging: (list, key, message) => new IndexerPagingError({ endpoint: list.endpoint, key, message })
  }
}

/** `Source` over the IndexerClient in context. */
export const layerIndexerSource = Layer.effect(Source, Effect.map(IndexerClient, makeIndexerSource))
