/**
 * The indexer as the engine's `Source`: /status as watermarks, a list served unless its own
 * endpoint answers 404, and any list's page fetched as bytes and parsed in the same retried step
 * (indexer/pages.ts). Block times and cosmos tx hashes are read from the indexer's own lists
 * (indexer/blockTimes.ts, indexer/cosmosTxHashes.ts). The errors the engine raises on what the
 * indexer sent are the indexer's own (IndexerDecodeError, IndexerPagingError: indexer/failures.ts).
 */
import { Effect, Layer } from "effect"
import { Source, type ListRef, type SourceService } from "../engine/Source.js"
import { IndexerClient, type IndexerClientService } from "../indexer/IndexerClient.js"
import { afterOfKey, keyAfter } from "../indexer/cursors.js"
import { MAX_PAGE_LIMIT, type KeyStyle } from "../indexer/endpoints.js"
import { IndexerVersionError } from "../indexer/errors.js"
import { makeBlockTimes } from "./indexer/blockTimes.js"
import { makeCosmosTxHashes } from "./indexer/cosmosTxHashes.js"
import { invalidRecord, untrustedPaging } from "./indexer/failures.js"
import { pageReader } from "./indexer/pages.js"
import { absentWords, isNotFound, probeWith } from "./indexer/served.js"

export { parseListPage } from "./indexer/pages.js"

/**
 * How a list's keys read: as it declares, else as its unit says (a height list is paged by height
 * cursors, a position list by sequence cursors: a caller's own list may leave `keys` out).
 */
const keyStyleOf = (list: ListRef): KeyStyle => {
  if (list.keys) return list.keys
  const unit = (list as { readonly unit?: string }).unit
  return unit === "height" ? "height" : unit === "position" ? "sequence" : "offset"
}

/** Whether a /status version ("v1.0.30", "1.0.30"; "dev" and others unknown: no) is a Rollytics before its cursors (v1.0.36). */
const beforeCursors = (version: string): boolean => {
  const v = /^v?(\d+)\.(\d+)\.(\d+)(?:$|[-+])/.exec(version)
  if (!v) return false
  const [major, minor, patch] = v.slice(1).map(Number)
  return major < 1 || (major === 1 && minor === 0 && patch < 36)
}

export const makeIndexerSource = (indexer: IndexerClientService): SourceService => {
  const page = pageReader(indexer)
  const probe = probeWith(page)
  const blockTimes = makeBlockTimes(page)
  const cosmosTxHashes = makeCosmosTxHashes(page)
  return {
    status: indexer.status.pipe(
      Effect.filterOrFail(
        (s) => !beforeCursors(s.version),
        (s) =>
          new IndexerVersionError({
            message: `the indexer runs Rollytics ${s.version}, older than v1.0.36: its lists page by offset keys only (the cursors chain-lake reads came with v1.0.36); upgrade the indexer`
          })
      ),
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
        Effect.catchIf(isNotFound, () => Effect.succeed(undefined))
      ),
    // Stryker disable next-line BooleanLiteral: either end of the list answers whether it is served
    served: (list) => Effect.map(probe(list, { limit: 1, reverse: false }), (answer) => answer !== "not served"),
    probe,
    absent: absentWords,
    keyAfter: (list, after) => keyAfter(keyStyleOf(list), after),
    afterOfKey: (list, key) => afterOfKey(keyStyleOf(list), key),
    maxPageSize: MAX_PAGE_LIMIT,
    page,
    blockTimes: blockTimes.timesOf,
    cosmosTxHashes: cosmosTxHashes.hashesAt,
    forget: Effect.sync(() => {
      blockTimes.forget()
      cosmosTxHashes.forget()
    }),
    invalidRecord,
    untrustedPaging
  }
}

/** `Source` over the IndexerClient in context. */
export const layerIndexerSource = Layer.effect(Source, Effect.map(IndexerClient, makeIndexerSource))
