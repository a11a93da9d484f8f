/**
 * walkPages, the one pager every paged list goes through, against an in-memory listing: which
 * page is asked for next, each stop rule (an empty page, no next_key, the row budget; not a short page),
 * and a repeated key failing loudly; and the list-envelope check that names what is wrong.
 */
import { Chunk, Effect, Either, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { walkPages, walkPagesAhead, type PageInfo } from "../../src/engine/pager.js"
import type { PageRequest } from "../../src/engine/Source.js"
import { IndexerPagingError } from "../../src/indexer/errors.js"
import { readListEnvelope } from "../../src/indexer/envelope.js"

/** the pager as the engine calls it, failing a repeated key as the indexer source does */
const cursorWalk = <P extends PageInfo>(
  endpoint: string,
  fetch: (page: PageRequest) => Effect.Effect<P>,
  options: { readonly first: PageRequest; readonly maxRows?: number; readonly limit?: () => number }
) => walkPages(fetch, { ...options, untrusted: (key, message) => new IndexerPagingError({ endpoint, key, message }) })

/** A listing of `rows` rows served `limit` at a time: keys are "k<position>", the last page has no next key unless `endless`. */
const listing = (rows: number, options: { readonly endless?: boolean; readonly repeatAt?: number; readonly shortAt?: number } = {}) => {
  const asked: Array<PageRequest> = []
  const fetch = (page: PageRequest) =>
    Effect.sync((): PageInfo & { readonly from: number } => {
      asked.push(page)
      const from = page.key ? Number(page.key.slice(1)) : (page.offset ?? 0)
      const limit = page.limit ?? 100
      const count = Math.max(0, Math.min(limit, rows - from, options.shortAt !== undefined && from >= options.shortAt ? limit - 1 : limit))
      const next = from + count
      const nextKey =
        options.repeatAt !== undefined && next > options.repeatAt
          ? `k${options.repeatAt}`
          : next < rows || options.endless
            ? `k${next}`
            : null
      return { key: page.key ?? null, nextKey, count, from }
    })
  return { asked, fetch }
}
const walk = <P, E>(stream: Stream.Stream<P, E>) =>
  Effect.runPromise(Effect.either(Stream.runCollect(stream).pipe(Effect.map(Chunk.toArray))))
const pagesOf = async <P, E>(stream: Stream.Stream<P, E>) => {
  const r = await walk(stream)
  if (Either.isLeft(r)) throw new Error(`walk failed: ${String(r.left)}`)
  return r.right
}

describe("walkPages", () => {
  it("asks the first page as given, then follows next_key with the same options, until a page without one", async () => {
    const l = listing(25)
    const pages = await pagesOf(cursorWalk("txs", l.fetch, { first: { offset: 3, limit: 10, reverse: false } }))
    expect(pages.map((p) => [p.from, p.count])).toEqual([
      [3, 10],
      [13, 10],
      [23, 2]
    ])
    expect(l.asked).toEqual([
      { offset: 3, limit: 10, reverse: false },
      { offset: undefined, key: "k13", limit: 10, reverse: false },
      { offset: undefined, key: "k23", limit: 10, reverse: false }
    ])
  })

  it("follows the next_key of a short page (a server cutting pages short) to the end, and stops on an empty page", async () => {
    const short = listing(100, { shortAt: 20 })
    const counts = (await pagesOf(cursorWalk("txs", short.fetch, { first: { limit: 10 } }))).map((p) => p.count)
    expect(counts.slice(0, 4)).toEqual([10, 10, 9, 9])
    expect(counts.reduce((a, b) => a + b, 0)).toBe(100)
    // a short page without a next key ends the list
    const last = listing(25)
    expect((await pagesOf(cursorWalk("txs", last.fetch, { first: { limit: 10 } }))).map((p) => p.count)).toEqual([10, 10, 5])
    const endless = listing(20, { endless: true })
    // the listing ends exactly at a page edge but keeps handing out keys: the empty page stops it
    expect((await pagesOf(cursorWalk("txs", endless.fetch, { first: { limit: 10 } }))).map((p) => p.count)).toEqual([10, 10, 0])
    expect(endless.asked.length).toBe(3)
  })

  it("stops at the row budget, the last page asking only for what is left", async () => {
    const l = listing(1000, { endless: true })
    const pages = await pagesOf(cursorWalk("txs", l.fetch, { first: { limit: 10 }, maxRows: 25 }))
    expect(pages.map((p) => p.count)).toEqual([10, 10, 5])
    expect(l.asked.map((p) => p.limit)).toEqual([10, 10, 5])
    // a budget of nothing asks nothing
    const none = listing(10)
    expect(await pagesOf(cursorWalk("txs", none.fetch, { first: { limit: 10 }, maxRows: 0 }))).toEqual([])
    expect(none.asked).toEqual([])
    // a full last page that names no next page ends the walk too
    const exact = listing(20)
    expect((await pagesOf(cursorWalk("txs", exact.fetch, { first: { limit: 10 } }))).map((p) => p.count)).toEqual([10, 10])
    expect(exact.asked.length).toBe(2)
  })

  it("starts from a key when the first page names one", async () => {
    const l = listing(30)
    const pages = await pagesOf(cursorWalk("blocks", l.fetch, { first: { key: "k12", limit: 10 } }))
    expect(pages.map((p) => p.from)).toEqual([12, 22])
  })

  it("fails with IndexerPagingError when a next_key comes back that was already followed (the server restarted the listing)", async () => {
    const l = listing(100, { repeatAt: 10 })
    const r = await walk(cursorWalk("txs", l.fetch, { first: { limit: 10 } }))
    expect(Either.isLeft(r)).toBe(true)
    if (Either.isLeft(r)) {
      expect(r.left).toMatchObject({ _tag: "IndexerPagingError", endpoint: "txs", key: "k10" })
      expect(String(r.left)).toBe(
        "pagination of txs cannot be trusted (page key k10): next_key k10 was already followed: the server restarted the listing"
      )
    }
    // the second page was the last one asked
    expect(l.asked.length).toBe(2)
  })

  it("remembers every key of the walk, the one it started from included: a key coming back 1, 2 or many pages later fails", async () => {
    // a listing of keys k0, k10, k20 … whose page at `loopAt` names `back` pages earlier again
    const cycling = (loopAt: number, back: number) => {
      const asked: Array<string | null> = []
      const fetch = (page: PageRequest) =>
        Effect.sync((): PageInfo => {
          asked.push(page.key ?? null)
          const from = page.key ? Number(page.key.slice(1)) : 0
          return { key: page.key ?? null, nextKey: from === loopAt ? `k${loopAt - 10 * (back - 1)}` : `k${from + 10}`, count: 10 }
        })
      return { asked, fetch }
    }
    for (const [start, back] of [
      [null, 1],
      [null, 2],
      [null, 7],
      ["k30", 3],
      ["k30", 8]
    ] as const) {
      const l = cycling(100, back)
      const r = await walk(cursorWalk("txs", l.fetch, { first: { limit: 10, ...(start ? { key: start } : {}) } }))
      const repeated = `k${100 - 10 * (back - 1)}`
      expect(Either.isLeft(r) && String(r.left), `back ${back} from ${start}`).toBe(
        `pagination of txs cannot be trusted (page key k100): next_key ${repeated} was already followed: the server restarted the listing`
      )
      // nothing past the page that named the key again was asked
      expect(l.asked.at(-1)).toBe("k100")
    }
  })

  it("asks each page for the limit its `limit` option gives at that moment (pages shrinking where records are large), never past the first's nor below 1, with the row budget as before", async () => {
    const l = listing(100)
    const limits = [10, 4, 4, 50, 0, 3]
    let i = 0
    const pages = await pagesOf(cursorWalk("txs", l.fetch, { first: { limit: 10 }, maxRows: 30, limit: () => limits[i++] ?? 7 }))
    expect(l.asked.map((p) => p.limit)).toEqual([10, 4, 4, 10, 1, 1])
    expect(pages.map((p) => [p.from, p.count])).toEqual([
      [0, 10],
      [10, 4],
      [14, 4],
      [18, 10],
      [28, 1],
      [29, 1]
    ])
    // a page longer than the smaller limit asked fails, as one longer than the page size does
    const m = listing(1000)
    const ignoring = (page: PageRequest) => m.fetch({ ...page, limit: 10 })
    const r = await walk(cursorWalk("txs", ignoring, { first: { limit: 10 }, limit: () => 5 }))
    expect(Either.isLeft(r) && String(r.left)).toBe("pagination of txs cannot be trusted: the page holds 10 records, 5 were asked for")
  })

  it("fails with IndexerPagingError when a page holds more records than were asked for (a server ignoring the limit)", async () => {
    const l = listing(1000)
    const ignoring = (page: PageRequest) => l.fetch({ ...page, limit: page.key ? 500 : page.limit })
    const r = await walk(cursorWalk("txs", ignoring, { first: { limit: 10 } }))
    expect(Either.isLeft(r)).toBe(true)
    if (Either.isLeft(r))
      expect(String(r.left)).toBe("pagination of txs cannot be trusted (page key k10): the page holds 500 records, 10 were asked for")
    expect(l.asked.length).toBe(2)
  })
})

describe("walkPagesAhead: the next page asked while this one's rows are made", () => {
  /**
   * The listing's pages as pages that have come: each page's rows are made by `handle`, which
   * logs, and which waits for `gate` where given; `drop` logs the pages let go unmade.
   */
  const arrivals =
    (l: ReturnType<typeof listing>, log: Array<string>, gate?: (from: number) => Effect.Effect<void>) => (page: PageRequest) =>
      Effect.map(l.fetch(page), (p) => {
        log.push(`came ${p.from}`)
        return {
          info: p,
          handle: Effect.zipRight(
            gate ? gate(p.from) : Effect.void,
            Effect.sync(() => (log.push(`made ${p.from}`), p))
          ),
          drop: Effect.sync(() => void log.push(`dropped ${p.from}`))
        }
      })
  const walkAhead = (arrive: ReturnType<typeof arrivals>, options: { readonly first: PageRequest; readonly maxRows?: number }) =>
    walkPagesAhead(
      arrive,
      { ...options, untrusted: (key, message) => new IndexerPagingError({ endpoint: "txs", key, message }) },
      { ahead: true }
    )

  it("asks page n + 1 before page n's rows are made, makes them in order, and asks exactly the pages a walk without it asks", async () => {
    const l = listing(35)
    const log: Array<string> = []
    const pages = await pagesOf(walkAhead(arrivals(l, log), { first: { limit: 10 } }))
    expect(pages.map((p) => p.from)).toEqual([0, 10, 20, 30])
    expect(log.filter((e) => e.startsWith("made"))).toEqual(["made 0", "made 10", "made 20", "made 30"])
    for (const from of [0, 10, 20]) expect(log.indexOf(`came ${from + 10}`), log.join(", ")).toBeLessThan(log.indexOf(`made ${from}`))
    const plain = listing(35)
    await pagesOf(cursorWalk("txs", plain.fetch, { first: { limit: 10 } }))
    expect(l.asked).toEqual(plain.asked)
    // the row budget, an empty page and a page without a next key end it without a page more
    const budget = listing(1000, { endless: true })
    await pagesOf(walkAhead(arrivals(budget, []), { first: { limit: 10 }, maxRows: 25 }))
    expect(budget.asked.map((a) => a.limit)).toEqual([10, 10, 5])
  })

  it("a walk that fails, or is stopped, while a page is asked ahead lets that page go unmade (drop): nothing it holds stays held", async () => {
    // page 10's rows cannot be made: the walk fails while page 20 has been asked ahead
    const failing = listing(100)
    const log: Array<string> = []
    const arrive = (page: PageRequest) =>
      Effect.map(arrivals(failing, log)(page), (p) =>
        p.info.from === 10
          ? {
              ...p,
              handle: Effect.zipRight(
                Effect.sync(() => log.push("failed 10")),
                Effect.die("no rows")
              )
            }
          : p
      )
    const r = await Effect.runPromise(Effect.exit(Stream.runDrain(walkAhead(arrive, { first: { limit: 10 } }))))
    expect(r._tag).toBe("Failure")
    expect(log).toEqual(["came 0", "came 10", "made 0", "came 20", "failed 10", "dropped 20"])
    // stopped while page 10's rows wait: page 20, asked ahead, is dropped once it has come
    const stopped = listing(100)
    const seen: Array<string> = []
    const never = stalledFrom10(stopped, seen)
    const fiber = Effect.runFork(Stream.runDrain(walkAhead(never, { first: { limit: 10 } })))
    await new Promise((resolve) => setTimeout(resolve, 50))
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(seen).toEqual(["came 0", "came 10", "made 0", "came 20", "dropped 20"])
  })

  it("a walk interrupted while it waits for the page asked ahead (a slow answer) interrupts that page's request: nothing is left asking after the walk", async () => {
    const l = listing(100)
    const log: Array<string> = []
    const arrive = (page: PageRequest) =>
      page.key === undefined || page.key === null
        ? arrivals(l, log)(page)
        : Effect.zipRight(
            Effect.sync(() => log.push(`asked ${page.key}`)),
            Effect.onInterrupt(Effect.never, () => Effect.sync(() => log.push(`stopped asking ${page.key}`)))
          )
    const fiber = Effect.runFork(Stream.runDrain(walkAhead(arrive, { first: { limit: 10 } })))
    await new Promise((resolve) => setTimeout(resolve, 50))
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(log).toEqual(["came 0", "asked k10", "made 0", "stopped asking k10"])
  })

  it("a page that cannot be trusted still has its rows made first, as without asking ahead, and nothing is asked after it", async () => {
    const l = listing(100, { repeatAt: 10 })
    const log: Array<string> = []
    const r = await walk(walkAhead(arrivals(l, log), { first: { limit: 10 } }))
    expect(Either.isLeft(r)).toBe(true)
    if (Either.isLeft(r)) expect(String(r.left)).toMatch(/^pagination of txs cannot be trusted \(page key k10\)/)
    expect(log).toEqual(["came 0", "came 10", "made 0", "made 10"])
  })
})

/** Arrivals whose rows from page 10 on wait for ever. */
const stalledFrom10 = (l: ReturnType<typeof listing>, log: Array<string>) => (page: PageRequest) =>
  Effect.map(l.fetch(page), (p) => {
    log.push(`came ${p.from}`)
    return {
      info: p,
      handle: p.from >= 10 ? Effect.never : Effect.sync(() => (log.push(`made ${p.from}`), p)),
      drop: Effect.sync(() => void log.push(`dropped ${p.from}`))
    }
  })

describe("readListEnvelope", () => {
  it("returns the records and pagination of a list response", () => {
    const pagination = { previous_key: null, next_key: "abc", total: "7" }
    expect(readListEnvelope({ txs: [{ a: 1 }], pagination }, "txs")).toEqual({ records: [{ a: 1 }], pagination })
    const last = { previous_key: "abc", next_key: null, total: "0" }
    expect(readListEnvelope({ txs: [], pagination: last }, "txs")).toEqual({ records: [], pagination: last })
  })

  it("names what is wrong: no records array, or a bad pagination field", () => {
    expect(readListEnvelope(null, "txs")).toEqual({ issue: { path: "txs", message: "is missing or not an array" } })
    expect(readListEnvelope("text", "txs")).toEqual({ issue: { path: "txs", message: "is missing or not an array" } })
    expect(readListEnvelope({ txs: {} }, "txs")).toEqual({ issue: { path: "txs", message: "is missing or not an array" } })
    expect(readListEnvelope({ txs: [] }, "txs")).toMatchObject({ issue: { path: "pagination" } })
    expect(readListEnvelope({ txs: [], pagination: { previous_key: null, next_key: null, total: 5 } }, "txs")).toEqual({
      issue: { path: "pagination.total", message: "Expected string, actual 5" }
    })
    expect(readListEnvelope({ txs: [], pagination: { previous_key: null, next_key: null, total: "1" }, extra: 1 }, "txs")).toMatchObject({
      records: []
    })
  })
})
