/**
 * The one pager every paged list goes through: follow `next_key` from a first page, with explicit
 * stop rules (no next_key, an empty page, a row budget reached; not a short page that names a next one). A key that comes back
 * after it was followed, however many pages later, fails loudly (`untrusted`), since a key a server
 * does not understand silently restarts the listing at its first page; so does a page longer than
 * asked for. A server that hands out a fresh key for a page it served before is caught by the
 * records themselves (shard.ts, snapshot.ts).
 */
import { Effect, Option, Stream } from "effect"
import { keyFollowedBefore, longerThanAsked } from "./pagingRules.js"
import type { PageRequest } from "./Source.js"

/** What following a cursor needs to know of a page. */
export interface PageInfo {
  /** the key this page was requested with (null for the first page) */
  readonly key: string | null
  readonly nextKey: string | null
  /** records in the page */
  readonly count: number
}

export interface WalkOptions<E> {
  readonly first: PageRequest
  /** stop after this many rows in all (the last page asks only for what is left) */
  readonly maxRows?: number
  /**
   * the limit of each request, asked anew before it is sent (at most `first.limit`): pages shrink
   * where records are large (pageBudget.ts); default `first.limit` for every page
   */
  readonly limit?: () => number
  /** the error for pages that cannot be trusted (`key`: the page's), with what was wrong */
  readonly untrusted: (key: string | null, message: string) => E
}

/** The pages of a list from `first` on, each fetched (and handled) by `fetch`. */
export const walkPages = <P extends PageInfo, E, R>(
  fetch: (page: PageRequest) => Effect.Effect<P, E, R>,
  options: WalkOptions<E>
): Stream.Stream<P, E, R> => {
  const maxRows = options.maxRows ?? Infinity
  const limit = options.first.limit
  // every key the walk follows, the one it starts from included: a key that comes back after any
  // number of pages fails the walk (one key per page, so at most rows / page size of them)
  const seen = new Set<string>(options.first.key ? [options.first.key] : [])
  interface State {
    readonly key: string | null
    readonly rows: number
    readonly first: boolean
  }
  const step = (state: State): Effect.Effect<readonly [P, Option.Option<State>], E, R> =>
    Effect.gen(function* () {
      const left = Math.min(options.limit ? Math.max(1, Math.min(limit, options.limit())) : limit, maxRows - state.rows)
      const request: PageRequest = state.first
        ? { ...options.first, limit: left }
        : { ...options.first, offset: undefined, key: state.key, limit: left }
      const page = yield* fetch(request)
      // more records than asked for: a server ignoring the limit (130k records in one page) is not followed further
      const tooLong = longerThanAsked(page.count, left)
      if (tooLong) return yield* Effect.fail(options.untrusted(page.key, tooLong))
      const rows = state.rows + page.count
      // no next key ends the list, and so does an empty page (a key handed out past the end). A
      // short page with a next key does not: the indexer documents next_key as null after a short
      // offset page, so one that names a next page is a server cutting pages short, and stopping
      // there would lose the rest; a keyset list's last page costs one empty page more.
      const done = page.nextKey === null || page.count === 0 || rows >= maxRows
      if (!done) {
        const repeated = keyFollowedBefore(seen, page.nextKey!)
        if (repeated) return yield* Effect.fail(options.untrusted(page.key, repeated))
        seen.add(page.nextKey!)
      }
      return [page, done ? Option.none<State>() : Option.some<State>({ key: page.nextKey, rows, first: false })] as const
    })
  if (maxRows <= 0) return Stream.empty
  // Stryker disable next-line LogicalOperator: the first request sends the key it is given; undefined and null both mean none
  return Stream.paginateEffect<State, P, E, R>({ key: options.first.key ?? null, rows: 0, first: true }, step)
}
