/**
 * The bytes of pages in flight, bounded run-wide: what the run's memory limit leaves Node
 * (lake/writer.ts `RunMemory`) bounds the response bodies being fetched, parsed and turned into
 * rows at once, whatever the records weigh, rather than the number of pages (--concurrency ×
 * --page-size). Two levers, both per list (a source such as txs):
 *
 * - **The page asked shrinks** where records are large: a list's next page asks for at most
 *   `target / bytes per record` rows (never more than --page-size, never fewer than one), bytes
 *   per record learned from the list's pages so far (its one-row probe first). A cursor page of
 *   any limit is a page like another: the pager follows `next_key` as before.
 * - **A weighted gate** (FIFO, in bytes): a page is fetched and its rows made while it holds what
 *   it is expected to weigh (once it has come, what it weighs where that is less); pages that would
 *   pass the budget wait for earlier ones to be written, weighed when their turn comes.
 * - Near the limit, what written pages left behind is collected at once (`collector`), not at V8's
 *   own pace.
 *
 * Rows, records and keys are untouched: only how many rows a request asks for, and when it is
 * sent, change, so the walk's checks (shard.ts, pager.ts) and exactly-once commits hold as they are.
 */
import { runInNewContext } from "node:vm"
import { setFlagsFromString } from "node:v8"
import { Context, Effect } from "effect"
import { RunMemory } from "../lake/writer.js"
import type { ListPage } from "./Source.js"

/** What the run may hold of response bodies at once, in bytes, and how many pages may be in flight (--concurrency). */
export interface PageBudgetConfig {
  readonly bytes: number
  readonly concurrency: number
  /** the run's whole memory limit: past a share of it (RSS), what pages left behind is collected at once (see `collector`) */
  readonly limitBytes?: number
  /** how RSS is read and a full collection made: the process's and V8's where not given */
  readonly memory?: MemoryControl
}

export interface MemoryControl {
  readonly rss: () => number
  readonly collect: () => void
}

/**
 * A page weighs this share of the budget at most (the whole of it at --concurrency 1, a quarter of
 * it from --concurrency 4 up): large records make smaller pages, and at most 4 of them in flight;
 * pages of ordinary records (a txs page of 1000 is ~3 MB) are not cut from 512MB up.
 */
const PAGES_AT_FULL_SIZE = 4

export interface PageBudgetService {
  /** the limit the next page of `list` asks for: `pageSize`, or fewer where its records are large */
  readonly limit: (list: string, pageSize: number) => number
  /** whether what `list`'s records weigh is known (a page of them was observed), or need not be (no budget) */
  readonly weighed: (list: string) => boolean
  /** learns what `page` of `list` weighed (a page of any limit, a probe's too) */
  readonly observe: (list: string, page: Pick<ListPage, "bytes" | "items">) => void
  /**
   * Runs `fetch` (one page of `list`, asked with `limit`) and then `use` (its rows made and
   * appended) holding the bytes the page is expected to weigh; the page's real size is learned
   * before `use` runs, which holds that where it is less.
   */
  readonly around: <A, E, R, B, E2, R2>(
    list: string,
    limit: number,
    fetch: Effect.Effect<A, E, R>,
    bytesOf: (a: A) => Pick<ListPage, "bytes" | "items">,
    use: (a: A) => Effect.Effect<B, E2, R2>
  ) => Effect.Effect<B, E | E2, R | R2>
  /**
   * `around` in two steps: `fetch` holding what the page is expected to weigh (once it has come,
   * what it weighs where less) until the answer's `release` runs (once, by its taker: after the
   * rows are made, or unmade); a fetch that fails or is stopped holds nothing. For a page asked
   * while the one before it is written.
   */
  readonly hold: <A, E, R>(
    list: string,
    limit: number,
    fetch: Effect.Effect<A, E, R>,
    bytesOf: (a: A) => Pick<ListPage, "bytes" | "items">
  ) => Effect.Effect<{ readonly value: A; readonly release: Effect.Effect<void> }, E, R>
  /** bytes held now (tests) */
  readonly held: () => number
}

export class PageBudget extends Context.Tag("chain-lake/PageBudget")<PageBudget, PageBudgetService>() {}

/**
 * A gate of `capacity` bytes: takers are served in the order they came (a large page is not
 * starved by small ones). A taker weighs what it takes when its turn comes (`weigh`), not when it
 * came: pages asked before any of their list's pages was weighed wait at a page's target each, and
 * once one has come the rest pass at what they are now known to weigh (a shard worker's budget
 * learns nothing before its first pages: its 16 first pages went 4 at a time, one round trip each).
 */
const makeGate = (capacity: number) => {
  let used = 0
  const queue: Array<{ readonly weigh: () => number; readonly wake: (n: number) => void }> = []
  const pump = () => {
    // the head only: FIFO
    while (queue.length > 0) {
      const n = queue[0].weigh()
      if (used + n > capacity) return
      used += n
      queue.shift()!.wake(n)
    }
  }
  /** what was taken; taken uninterruptibly (acquireUseRelease): a waiter is woken once holders give back, holders being interruptible */
  const take = (weigh: () => number) =>
    Effect.async<number>((resume) => {
      const n = weigh()
      if (queue.length === 0 && used + n <= capacity) {
        used += n
        resume(Effect.succeed(n))
      } else queue.push({ weigh, wake: (taken) => resume(Effect.succeed(taken)) })
    })
  const give = (n: number) =>
    Effect.sync(() => {
      used -= n
      pump()
    })
  /** lets waiters through whose weight fell (their list's records were weighed) */
  return { take, give, reweigh: pump, held: () => used }
}

/**
 * V8's full collection, where the runtime lets it be had (`--expose-gc` set at run time; undefined
 * where it cannot be).
 */
let fullGc: (() => void) | undefined | null = null
const gcFunction = (): (() => void) | undefined => {
  if (fullGc === null) {
    try {
      setFlagsFromString("--expose-gc")
      const gc = runInNewContext("gc") as unknown
      fullGc = typeof gc === "function" ? (gc as () => void) : undefined
    } catch {
      fullGc = undefined
    }
  }
  return fullGc
}

/** RSS at this share of the limit: what pages left behind is collected rather than left to V8's own pace */
const COLLECT_AT = 0.7

/**
 * What pages leave behind (their bodies, the text read from them, their records) is garbage V8
 * collects at its own pace: bodies are external memory, and V8 lets ~64 MB of it pile up before
 * a full collection, whatever the budget of pages in flight. So once the pages written since the
 * last collection weigh the whole budget, and the process is past COLLECT_AT of its limit, a
 * full collection runs. Measured at 512MB, txs at concurrency 16 (bench/RESULTS.md): peaks
 * 410–427 MB against 448–475 without (50 kB records), 414–417 against 436–452 (ordinary ones),
 * for ~5% more CPU; at the default 1GB an ordinary run seldom reaches 70%.
 */
const collector = (budgetBytes: number, limitBytes: number | undefined, memory: MemoryControl = PROCESS_MEMORY) => {
  let since = 0
  return (bytes: number) => {
    if (limitBytes === undefined) return
    since += bytes
    if (since < budgetBytes) return
    since = 0
    if (memory.rss() < limitBytes * COLLECT_AT) return
    memory.collect()
  }
}

const PROCESS_MEMORY: MemoryControl = { rss: () => process.memoryUsage.rss(), collect: () => gcFunction()?.() }

export const makePageBudget = (config: PageBudgetConfig): PageBudgetService => {
  const capacity = Math.max(1, Math.floor(config.bytes))
  const collect = collector(capacity, config.limitBytes, config.memory)
  const target = capacity / Math.max(1, Math.min(config.concurrency, PAGES_AT_FULL_SIZE))
  const gate = makeGate(capacity)
  /** per list: body bytes and records seen, and the last page's bytes per record */
  const seen = new Map<string, { bytes: number; records: number; last: number }>()
  /** bytes per record of `list`: the larger of its mean and its last page's (records that grow are followed at once) */
  const perRecord = (list: string): number | undefined => {
    const s = seen.get(list)
    return s === undefined ? undefined : Math.max(s.bytes / s.records, s.last)
  }
  const observe = (list: string, page: Pick<ListPage, "bytes" | "items">) => {
    // (a driver that does not say, or an empty page, teaches nothing)
    if (page.bytes === undefined || page.items.length === 0) return
    const s = seen.get(list) ?? { bytes: 0, records: 0, last: 0 }
    s.bytes += page.bytes
    s.records += page.items.length
    s.last = page.bytes / page.items.length
    seen.set(list, s)
    gate.reweigh()
  }
  const limit = (list: string, pageSize: number) => {
    const each = perRecord(list)
    return each === undefined ? pageSize : Math.max(1, Math.min(pageSize, Math.floor(target / each)))
  }
  /** what a page of `limit` rows of `list` is expected to weigh: a page's target where nothing is known yet, never past the whole budget */
  const expected = (list: string, limit: number) => {
    const each = perRecord(list)
    return Math.min(capacity, Math.ceil(each === undefined ? target : each * limit))
  }
  /** learns what a page weighed; what it weighed, in bytes */
  const weigh = (list: string, page: Pick<ListPage, "bytes" | "items">) => {
    observe(list, page)
    return page.bytes ?? 0
  }
  const release = (n: number, weighed: number) =>
    Effect.zipRight(
      gate.give(n),
      Effect.sync(() => collect(weighed))
    )
  /**
   * A page that has come, held at `n`: weighed, and from now on holding what it weighs where that is
   * less (the rest given back at once: a page asked before its list was weighed held a page's
   * target); what it holds now, and what it weighed.
   */
  const arrived = (list: string, n: number, page: Pick<ListPage, "bytes" | "items">) => {
    const weighed = weigh(list, page)
    const holds = page.bytes === undefined ? n : Math.min(n, weighed)
    return Effect.as(holds < n ? gate.give(n - holds) : Effect.void, { holds, weighed })
  }
  return {
    limit,
    weighed: (list) => seen.has(list),
    observe,
    around: (list, limit, fetch, bytesOf, use) => {
      let held: { readonly holds: number; readonly weighed: number } | undefined
      return Effect.acquireUseRelease(
        gate.take(() => expected(list, limit)),
        (n) =>
          Effect.flatMap(fetch, (a) =>
            Effect.flatMap(arrived(list, n, bytesOf(a)), (h) => {
              held = h
              return use(a)
            })
          ),
        (n) => release(held?.holds ?? n, held?.weighed ?? 0)
      )
    },
    hold: (list, limit, fetch, bytesOf) =>
      // taken uninterruptibly, as `around` takes it; the fetch stays interruptible
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(
          gate.take(() => expected(list, limit)),
          (n) =>
            restore(fetch).pipe(
              Effect.onError(() => gate.give(n)),
              Effect.flatMap((value) =>
                Effect.map(arrived(list, n, bytesOf(value)), ({ holds, weighed }) => ({ value, release: release(holds, weighed) }))
              )
            )
        )
      ),
    held: gate.held
  }
}

/** No budget (a run whose memory the lake writer does not say): every page at the size asked, none waiting. */
export const UNBOUNDED: PageBudgetService = {
  limit: (_list, pageSize) => pageSize,
  weighed: () => true,
  observe: () => undefined,
  around: (_list, _limit, fetch, _bytesOf, use) => Effect.flatMap(fetch, use),
  hold: (_list, _limit, fetch) => Effect.map(fetch, (value) => ({ value, release: Effect.void })),
  held: () => 0
}

/** The run's budget where one is provided (runExport provides it), else UNBOUNDED. */
export const pageBudgetOf: Effect.Effect<PageBudgetService> = Effect.map(Effect.serviceOption(PageBudget), (b) =>
  b._tag === "Some" ? b.value : UNBOUNDED
)

/** A run's budget from the memory its lake writer was given (RunMemory), for `concurrency` pages in flight; UNBOUNDED where none is given. */
export const runPageBudget = (concurrency: number): Effect.Effect<PageBudgetService> =>
  Effect.map(Effect.serviceOption(RunMemory), (m) =>
    m._tag === "Some" ? makePageBudget({ bytes: m.value.pageBytes, concurrency, limitBytes: m.value.limitBytes }) : UNBOUNDED
  )
