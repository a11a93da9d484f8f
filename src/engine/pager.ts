/**
 * The one pager every paged list goes through: follow `next_key` from a first page, with explicit
 * stop rules (no next_key, an empty page, a row budget reached; not a short page that names a next one). A key that comes back
 * after it was followed, however many pages later, fails loudly (`untrusted`), since a key a server
 * does not understand silently restarts the listing at its first page; so does a page longer than
 * asked for. A server that hands out a fresh key for a page it served before is caught by the
 * records themselves (shard.ts, snapshot.ts).
 */
import { Effect, Either, Exit, Fiber, Option, Stream } from "effect"
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

/**
 * A page that has come, before its rows are made: what the walk needs to go on (its count and
 * next key), its rows to make (`handle`), and what letting it go unmade frees (`drop`: the bytes
 * it holds of the run's page budget). Exactly one of the two runs.
 */
export interface ArrivedPage<P, E, R> {
  readonly info: PageInfo
  readonly handle: Effect.Effect<P, E, R>
  readonly drop: Effect.Effect<void>
}

/** The pages of a list from `first` on, each fetched (and handled) by `fetch`. */
export const walkPages = <P extends PageInfo, E, R>(
  fetch: (page: PageRequest) => Effect.Effect<P, E, R>,
  options: WalkOptions<E>
): Stream.Stream<P, E, R> =>
  walkPagesAhead((request) => Effect.map(fetch(request), (p) => ({ info: p, handle: Effect.succeed(p), drop: Effect.void })), options, {
    ahead: false
  })

/**
 * The pages of a list from `first` on, each asked by `arrive` and its rows made by the page's
 * `handle`. With `ahead`, the next page is asked as soon as this one has come (its next key and
 * count say what to ask), while this one's rows are made: a shard's pages then wait for the
 * server or for their rows, not for both in turn. Pages are still handled one at a time, in
 * order, and the walk asks exactly the pages it asked without (the stop rules need only a page's
 * count and next key); a page asked ahead that is never handled (the walk failed or was stopped)
 * is dropped.
 */
export const walkPagesAhead = <P, E, R>(
  arrive: (page: PageRequest) => Effect.Effect<ArrivedPage<P, E, R>, E, R>,
  options: WalkOptions<E>,
  { ahead }: { readonly ahead: boolean }
): Stream.Stream<P, E, R> => {
  const maxRows = options.maxRows ?? Infinity
  const limit = options.first.limit
  // every key the walk follows, the one it starts from included: a key that comes back after any
  // number of pages fails the walk (one key per page, so at most rows / page size of them)
  const seen = new Set<string>(options.first.key ? [options.first.key] : [])
  /** the page asked ahead and what it asked, until the walk takes it */
  let pending: { readonly request: PageRequest; readonly fiber: Fiber.RuntimeFiber<ArrivedPage<P, E, R>, E> } | undefined
  interface State {
    readonly key: string | null
    readonly rows: number
    readonly first: boolean
  }
  const requestOf = (state: State): PageRequest => {
    const left = Math.min(options.limit ? Math.max(1, Math.min(limit, options.limit())) : limit, maxRows - state.rows)
    return state.first ? { ...options.first, limit: left } : { ...options.first, offset: undefined, key: state.key, limit: left }
  }
  /**
   * The page at `state` and what it asked: the one asked ahead for it, or asked now. The one asked
   * ahead stays pending until it has come: a walk interrupted while it waits lets it go (letGo), as
   * its fiber outlives the wait (a daemon) and would go on asking, retries and all.
   */
  const take = (state: State) => {
    const asked = pending
    if (asked)
      return Effect.map(Fiber.join(asked.fiber), (page) => {
        pending = undefined
        return { page, request: asked.request }
      })
    const request = requestOf(state)
    return Effect.map(arrive(request), (page) => ({ page, request }))
  }
  /*
   * A page's rows are made before the walk fails on what its count or next key say, as they were
   * before pages were asked ahead (a record met twice is then named as such, before a next key
   * that comes back); the next page is asked ahead only where the walk goes on.
   */
  const step = (state: State): Effect.Effect<readonly [P, Option.Option<State>], E, R> =>
    Effect.gen(function* () {
      const { page, request } = yield* take(state)
      const next = followed(page.info, request.limit ?? limit, state.rows)
      if (ahead && Either.isRight(next) && Option.isSome(next.right)) {
        const request = requestOf(next.right.value)
        pending = { request, fiber: yield* Effect.forkDaemon(arrive(request)) }
        // its request sent before this page's rows are made (making them does not yield)
        yield* Effect.yieldNow()
      }
      const handled = yield* page.handle
      return [handled, yield* next] as const
    })
  /** where the walk goes after `page` (asked for `asked` rows): none where it ends; a failure where the page cannot be trusted */
  const followed = (page: PageInfo, asked: number, rowsBefore: number): Either.Either<Option.Option<State>, E> => {
    // more records than asked for: a server ignoring the limit (130k records in one page) is not followed further
    const tooLong = longerThanAsked(page.count, asked)
    if (tooLong) return Either.left(options.untrusted(page.key, tooLong))
    const rows = rowsBefore + page.count
    // no next key ends the list, and so does an empty page (a key handed out past the end). A
    // short page with a next key does not: the indexer documents next_key as null after a short
    // offset page, so one that names a next page is a server cutting pages short, and stopping
    // there would lose the rest; a keyset list's last page costs one empty page more (unless the
    // caller, knowing the list's count, ends it: cosmosTxHashes.ts).
    if (page.nextKey === null || page.count === 0 || rows >= maxRows) return Either.right(Option.none())
    const repeated = keyFollowedBefore(seen, page.nextKey)
    if (repeated) return Either.left(options.untrusted(page.key, repeated))
    seen.add(page.nextKey)
    return Either.right(Option.some({ key: page.nextKey, rows, first: false }))
  }
  /** a page asked ahead and not taken (the walk failed, or was stopped): stopped, or dropped if it came */
  const letGo = Effect.suspend(() => {
    const asked = pending
    pending = undefined
    return asked
      ? Effect.flatMap(Fiber.interrupt(asked.fiber), (exit) => (Exit.isSuccess(exit) ? exit.value.drop : Effect.void))
      : Effect.void
  })
  if (maxRows <= 0) return Stream.empty
  // Stryker disable next-line LogicalOperator: the first request sends the key it is given; undefined and null both mean none
  return Stream.paginateEffect<State, P, E, R>({ key: options.first.key ?? null, rows: 0, first: true }, step).pipe(Stream.ensuring(letGo))
}
