/**
 * Paging as an Effect Stream that follows `next_key` (cursor keys of blocks and the tx families,
 * offset keys of collections, tokens and the rich list alike), with explicit stop rules: an empty
 * page or a null `next_key`, a short page, or a row budget reached. A repeated key fails loudly, because a key
 * the server does not understand silently restarts at the first page.
 */
import { Effect, Option, Stream } from "effect"
import { compileValidator } from "../engine/fastValidate.js"
import { IndexerDecodeError, IndexerPagingError, type IndexerError } from "./errors.js"
import type { IndexerClientService, PageRequest } from "./IndexerClient.js"
import type { FieldIssue } from "../schema-path.js"
import { Pagination } from "./schemas.js"

/** What following a cursor needs to know of a page. */
export interface PageInfo {
  /** the key this page was requested with (null for the first page) */
  readonly key: string | null
  readonly nextKey: string | null
  /** records in the page */
  readonly count: number
}

export interface Page extends PageInfo {
  readonly endpoint: string
  readonly records: ReadonlyArray<unknown>
  readonly total: string
}

export interface ListRequest {
  readonly endpoint: string
  readonly path: string
  readonly arrayKey: string
  readonly extra?: Record<string, string | ReadonlyArray<string> | boolean | undefined>
}

const validatePagination = compileValidator(Pagination)

/** A list response's envelope: its records array and pagination, or the first problem with either. */
export type ListEnvelope =
  | { readonly records: ReadonlyArray<unknown>; readonly pagination: { readonly next_key: string | null; readonly total: string } }
  | { readonly issue: FieldIssue }

/** Checks a parsed list response's envelope (records array under `arrayKey`, pagination object), not its records. */
export const readListEnvelope = (body: unknown, arrayKey: string): ListEnvelope => {
  const envelope = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {}
  const records = envelope[arrayKey]
  if (!Array.isArray(records)) return { issue: { path: arrayKey, message: "is missing or not an array" } }
  const bad = validatePagination(envelope.pagination)
  if (bad) return { issue: { path: `pagination${bad.path ? "." + bad.path : ""}`, message: bad.message } }
  return { records, pagination: envelope.pagination as { next_key: string | null; total: string } }
}

/** Fetches one page and checks its envelope (array and pagination object), not its records. */
export const fetchPage = (client: IndexerClientService, req: ListRequest, page: PageRequest): Effect.Effect<Page, IndexerError> =>
  Effect.suspend(() => client.getJson(req.endpoint, req.path, { ...client.pageQuery(page), ...req.extra })).pipe(
    Effect.flatMap((json) => {
      const key = page.key ?? null
      const envelope = readListEnvelope(json, req.arrayKey)
      if ("issue" in envelope) return Effect.fail(new IndexerDecodeError({ endpoint: req.endpoint, key, path: envelope.issue.path, message: envelope.issue.message }))
      const { records, pagination } = envelope
      return Effect.succeed({ endpoint: req.endpoint, key, records, count: records.length, nextKey: pagination.next_key, total: pagination.total })
    })
  )

export interface CursorOptions {
  readonly first: PageRequest
  /** stop after this many rows in all (the last page asks only for what is left) */
  readonly maxRows?: number
}

/** Follows `next_key` from `first` until an empty or short page, a null key, or `maxRows`. */
export const cursorPages = (client: IndexerClientService, req: ListRequest, options: CursorOptions): Stream.Stream<Page, IndexerError> =>
  cursorWalk(req.endpoint, (page) => fetchPage(client, req, page), options)

/** `cursorPages` over any page fetcher (e.g. one that decodes pages its own way). */
export const cursorWalk = <P extends PageInfo, E>(endpoint: string, fetch: (page: PageRequest) => Effect.Effect<P, E>, options: CursorOptions): Stream.Stream<P, E | IndexerPagingError> => {
  const limit = options.first.limit ?? 100
  const seen = new Set<string>()
  interface State {
    readonly key: string | null
    readonly rows: number
    readonly first: boolean
  }
  const step = (state: State): Effect.Effect<readonly [P, Option.Option<State>], E | IndexerPagingError> =>
    Effect.gen(function* () {
      const left = options.maxRows === undefined ? limit : Math.min(limit, options.maxRows - state.rows)
      const request: PageRequest = state.first ? { ...options.first, limit: left } : { ...options.first, offset: undefined, key: state.key, limit: left }
      const page = yield* fetch(request)
      const rows = state.rows + page.count
      const done = page.count === 0 || page.nextKey === null || page.count < left || (options.maxRows !== undefined && rows >= options.maxRows)
      if (!done) {
        if (seen.has(page.nextKey!))
          return yield* new IndexerPagingError({ endpoint, key: page.key, message: `next_key ${page.nextKey} was already followed: the server restarted the listing` })
        seen.add(page.nextKey!)
      }
      return [page, done ? Option.none<State>() : Option.some<State>({ key: page.nextKey, rows, first: false })] as const
    })
  if (options.maxRows !== undefined && options.maxRows <= 0) return Stream.empty
  return Stream.paginateEffect<State, P, E | IndexerPagingError, never>({ key: options.first.key ?? null, rows: 0, first: true }, step)
}
