/**
 * A list's page from the indexer: fetched as bytes and parsed in the same retried step (a body
 * that is not JSON is a truncated response, fetched again), its envelope checked, its records
 * left for whoever reads them.
 */
import { Effect } from "effect"
import type { PageBudgetService } from "../../engine/pageBudget.js"
import type { ListPage, ListRef, PageRequest } from "../../engine/Source.js"
import { notJson } from "../../http/body.js"
import { readJson, restoreString } from "../../engine/pageDecode.js"
import { IndexerDecodeError, IndexerTruncatedBody, type IndexerError } from "../../indexer/errors.js"
import type { IndexerClientService } from "../../indexer/IndexerClient.js"
import { readListEnvelope } from "../../indexer/envelope.js"
import type { FieldIssue } from "../../schema/decode.js"

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

/** One page of a list, fetched and parsed. */
export type PageReader = (list: ListRef, request: PageRequest) => Effect.Effect<ListPage, IndexerError>

/** The page reader over `indexer`: a body cut short fails retryably, so the client fetches it again. */
export const pageReader =
  (indexer: IndexerClientService): PageReader =>
  (list, request) => {
    const key = request.key ?? null
    return Effect.suspend(() =>
      indexer.getWith(list.endpoint, list.path, { ...indexer.pageQuery(request), ...list.query }, (raw) => {
        const parsed = parseListPage(raw.bytes, list.arrayKey)
        if (parsed._tag === "Truncated") return Effect.fail(new IndexerTruncatedBody({ url: raw.url, what: notJson(raw.bytes) }))
        if (parsed._tag === "BadEnvelope")
          return Effect.fail(
            new IndexerDecodeError({ endpoint: list.endpoint, key, path: parsed.issue.path, message: parsed.issue.message })
          )
        return Effect.succeed({ key, ...parsed.page, bytes: raw.bytes.byteLength })
      })
    )
  }

/** Pages read beside a run's lists (the txs that link receipts to cosmos txs): how each is read, and how many rows it asks. */
export interface Paging {
  readonly page: PageReader
  /** the limit of the next page, asked anew before each */
  readonly size: () => number
  /** the most rows a page asks: what `size` answers where records are small */
  readonly most: number
}

/**
 * Paging in the run's page budget (engine/pageBudget.ts): each page's weight learned under
 * `records` (the list whose records they are: their pages and its own weigh alike), and each page
 * asking `pageSize` rows, fewer where those records are large.
 */
export const budgetedPaging = (page: PageReader, budget: PageBudgetService, records: string, pageSize: number): Paging => ({
  page: (list, request) => Effect.tap(page(list, request), (p) => Effect.sync(() => budget.observe(records, p))),
  size: () => budget.limit(records, pageSize),
  most: pageSize
})
