/**
 * The indexer as the engine's `Source`: /status as watermarks, a list served unless its own
 * endpoint answers 404, and any list's page fetched as bytes and parsed in the same retried step
 * (a body that is not JSON is a truncated response, fetched again). The errors the engine raises
 * on what the indexer sent are the indexer's own (IndexerDecodeError, IndexerPagingError).
 */
import { Effect, Layer } from "effect"
import { Source, type ListPage, type ListRef, type SourceService } from "../engine/Source.js"
import { readJson, restoreString } from "../engine/pageDecode.js"
import { IndexerDecodeError, IndexerPagingError, IndexerTruncatedBody, type IndexerError } from "../indexer/errors.js"
import { IndexerClient, type IndexerClientService } from "../indexer/IndexerClient.js"
import { readListEnvelope } from "../indexer/envelope.js"
import type { FieldIssue } from "../schema/decode.js"

/** A page's envelope from its bytes: the records (as parsed, not yet checked) and pagination, or what is wrong. */
export const parseListPage = (
  bytes: ArrayBuffer,
  arrayKey: string
): { readonly _tag: "Page"; readonly page: Omit<ListPage, "key"> } | { readonly _tag: "Truncated" } | { readonly _tag: "BadEnvelope"; readonly issue: FieldIssue } => {
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
const recordPath = (arrayKey: string, index: number, path: string) => `${arrayKey}[${index}]${path ? (path.startsWith("[") ? "" : ".") + path : ""}`

export const makeIndexerSource = (indexer: IndexerClientService): SourceService => {
  const page = (list: ListRef, request: Parameters<SourceService["page"]>[1]): Effect.Effect<ListPage, IndexerError> => {
    const key = request.key ?? null
    return Effect.suspend(() =>
      indexer.getWith(list.endpoint, list.path, { ...indexer.pageQuery(request), ...list.query }, (raw) => {
        const parsed = parseListPage(raw.bytes, list.arrayKey)
        if (parsed._tag === "Truncated") return Effect.fail(new IndexerTruncatedBody({ url: raw.url, bytes: raw.bytes.byteLength }))
        if (parsed._tag === "BadEnvelope") return Effect.fail(new IndexerDecodeError({ endpoint: list.endpoint, key, path: parsed.issue.path, message: parsed.issue.message }))
        return Effect.succeed({ key, ...parsed.page })
      })
    )
  }
  const is404 = (e: IndexerError) => e._tag === "IndexerHttpError" && e.status === 404
  return {
    status: indexer.status.pipe(
      Effect.map((s) => ({ chainId: s.chain_id, tip: s.height, watermarks: { height: s.height, internal_tx_height: s.internal_tx_height, rich_list_height: s.rich_list_height } }))
    ),
    // a height pruned away or above the tip: 404 "block not found"
    blockHash: (height) =>
      indexer.block(height).pipe(
        Effect.map((r): string | undefined => r.block.hash),
        Effect.catchIf(is404, () => Effect.succeed(undefined))
      ),
    // the real indexer answers 404 on routes it does not serve (EVM routes on Move/Wasm rollups)
    served: (list) =>
      page(list, { limit: 1, reverse: false }).pipe(
        Effect.as(true),
        Effect.catchIf(is404, () => Effect.succeed(false))
      ),
    page,
    invalidRecord: (list, key, index, issue) => new IndexerDecodeError({ endpoint: list.endpoint, key, path: recordPath(list.arrayKey, index, issue.path), message: issue.message }),
    untrustedPaging: (list, key, message) => new IndexerPagingError({ endpoint: list.endpoint, key, message })
  }
}

/** `Source` over the IndexerClient in context. */
export const layerIndexerSource = Layer.effect(Source, Effect.map(IndexerClient, makeIndexerSource))
