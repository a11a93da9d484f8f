/**
 * Block times from the block list, for lists whose records carry only a height. The heights a page
 * asks for are ascending and close together (a page of receipts spans a few blocks), so they are
 * read as runs of the block list from a height cursor: one request per run of up to
 * BLOCK_TIME_PAGE heights, never more requests than heights. A height's time does not change within
 * a history, so the times read are remembered for the run (Source.forget at the next run's start).
 */
import { Effect } from "effect"
import type { ListPage, ListRef } from "../../engine/Source.js"
import { restoreString } from "../../engine/pageDecode.js"
import type { IndexerError } from "../../indexer/errors.js"
import { heightCursor } from "../../indexer/cursors.js"
import { INDEXER, listRef } from "../../indexer/endpoints.js"
import { invalidRecord, untrustedPaging } from "./failures.js"
import type { PageReader } from "./pages.js"

/** The block list, read by height. */
const blockList: ListRef = listRef(INDEXER.blocks)
/** the documented default page size: a server that caps pages lower still answers in order, and the walk goes on */
const BLOCK_TIME_PAGE = 100
/** block times remembered per run (a height's time does not change within a history); beyond this the oldest are forgotten */
const BLOCK_TIME_CACHE = 50_000

type Remember = (height: number, time: string) => void

/** The runs [from, to] that cover `missing` (ascending), each spanning fewer than BLOCK_TIME_PAGE heights. */
const runsOf = (missing: ReadonlyArray<number>): Array<readonly [number, number]> => {
  const runs: Array<readonly [number, number]> = []
  let i = 0
  while (i < missing.length) {
    const from = missing[i]
    let to = from
    // (past the end missing[i] is undefined, and undefined < n is false)
    while (missing[i] < from + BLOCK_TIME_PAGE) to = missing[i++]
    runs.push([from, to])
  }
  return runs
}

/**
 * Remembers the time of each block of `got` (the page of `key`) up to height `to`, and answers the
 * last height it gave (`after` if none); heights must rise past `after`.
 */
const rememberPage = (got: ListPage, key: string, after: number, to: number, remember: Remember): Effect.Effect<number, IndexerError> => {
  let last = after
  for (const [index, block] of got.items.entries()) {
    const b = block as { height?: unknown; timestamp?: unknown }
    const height = typeof b.height === "string" ? Number(b.height) : NaN
    if (!Number.isSafeInteger(height) || typeof b.timestamp !== "string")
      return Effect.fail(
        invalidRecord(blockList, key, index, {
          path: typeof b.timestamp !== "string" ? "timestamp" : "height",
          message: "expected a block with a string height and timestamp"
        })
      )
    if (height <= last)
      return Effect.fail(untrustedPaging(blockList, key, `height ${height} came after height ${last}: the block list went back`))
    last = height
    if (height > to) break
    remember(height, got.latin1 ? restoreString(b.timestamp) : b.timestamp)
  }
  return Effect.succeed(last)
}

/** The times of the run of heights `from`..`to`: a server may cap the page below what was asked, so the walk goes on from the last height it gave. */
const readRun = (page: PageReader, remember: Remember, from: number, to: number): Effect.Effect<void, IndexerError> =>
  Effect.gen(function* () {
    let key = heightCursor(from - 1)
    let next = from
    while (next <= to) {
      const got = yield* page(blockList, { key, limit: to - next + 1, reverse: false })
      const last = yield* rememberPage(got, key, next - 1, to, remember)
      // (a page with blocks has moved `last` past `next - 1`: only an empty one makes no progress)
      if (got.items.length === 0) break
      next = last + 1
      key = heightCursor(last)
    }
  })

/** The block time of each height asked, read through `page` and remembered until `forget`; a height the block list lacks fails. */
export const makeBlockTimes = (page: PageReader) => {
  const times = new Map<number, string>()
  const remember: Remember = (height, time) => {
    // Stryker disable next-line all: bounds memory only (50,000 heights of a run); no answer changes
    if (times.size >= BLOCK_TIME_CACHE) for (const old of [...times.keys()].slice(0, BLOCK_TIME_CACHE / 10)) times.delete(old)
    times.set(height, time)
  }
  const readMissing = (heights: ReadonlyArray<number>): Effect.Effect<void, IndexerError> =>
    Effect.gen(function* () {
      const missing = heights.filter((h) => !times.has(h)).sort((x, y) => x - y)
      for (const [from, to] of runsOf(missing)) yield* readRun(page, remember, from, to)
    })
  const answer = (heights: ReadonlyArray<number>): Effect.Effect<ReadonlyMap<number, string>, IndexerError> => {
    const known = new Map<number, string>()
    for (const h of heights) {
      const time = times.get(h)
      if (time === undefined)
        return Effect.fail(
          untrustedPaging(
            blockList,
            heightCursor(h - 1),
            `block ${h} is not in the block list (pruned, or not indexed yet), so the rows at that height have no block time`
          )
        )
      known.set(h, time)
    }
    return Effect.succeed(known)
  }
  return {
    timesOf: (heights: ReadonlyArray<number>): Effect.Effect<ReadonlyMap<number, string>, IndexerError> =>
      readMissing(heights).pipe(Effect.flatMap(() => answer(heights))),
    forget: () => times.clear()
  }
}
