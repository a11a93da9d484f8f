/**
 * The planner's pure functions and the position search, on their own: shards cover exactly what
 * some dataset lacks, never straddle a committed boundary, come in a multiple of the concurrency;
 * bounds clip to what the source serves; the k-ary search finds the same position as a linear
 * scan in few rounds.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { heightBounds, MAX_SHARDS, planShards, progressOf, requestsFor } from "../../src/engine/plan.js"
import { firstAtOrAbove } from "../../src/engine/positions.js"
import { normalize, subtract, type Range } from "../../src/lake/RangeSet.js"

const points = (ranges: ReadonlyArray<Range>) => ranges.flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => a + i))

describe("planShards", () => {
  it("covers exactly what some dataset lacks, each shard wanted whole or not at all by each dataset", () => {
    const range: Range = [1, 1001]
    const committed: Array<Array<Range>> = [
      [
        [1, 301],
        [600, 700]
      ],
      [
        [1, 201],
        [650, 1001]
      ]
    ]
    for (const concurrency of [1, 3, 8]) {
      const shards = planShards(range, committed, { concurrency, pageSize: 10, maxShardUnits: 100 })
      const lacking = normalize(committed.flatMap((c) => subtract(range, c)))
      expect(points(shards), `concurrency ${concurrency}`).toEqual(points(lacking))
      for (const shard of shards)
        for (const c of committed) {
          const lacking = subtract(shard, c)
          // wholly committed, or wholly lacking
          expect(
            lacking.length === 0 || (lacking.length === 1 && lacking[0][0] === shard[0] && lacking[0][1] === shard[1]),
            `${shard} against ${JSON.stringify(c)}`
          ).toBe(true)
        }
      for (const [a, b] of shards) expect(b - a).toBeLessThanOrEqual(100)
    }
  })

  it("a multiple of the concurrency, of near-equal size, never below a page", () => {
    const shards = planShards([0, 10_000], [[]], { concurrency: 8, pageSize: 100, maxShardUnits: 100_000 })
    expect(shards.length).toBe(8)
    expect(new Set(shards.map(([a, b]) => b - a))).toEqual(new Set([1250]))
    // more work than one round of maxShardUnits: more rounds, still a multiple of 8
    expect(planShards([0, 2_000_000], [[]], { concurrency: 8, pageSize: 100, maxShardUnits: 100_000 }).length).toBe(24)
    // little work: shards of at most a page and of near-equal size, so fewer than the workers
    expect(planShards([0, 250], [[]], { concurrency: 8, pageSize: 100, maxShardUnits: 100_000 })).toEqual([
      [0, 84],
      [84, 168],
      [168, 250]
    ])
    expect(planShards([0, 100], [[[0, 100]]], { concurrency: 4, pageSize: 10, maxShardUnits: 1000 })).toEqual([])
  })

  it("a huge range (a /status claiming height 1e15) plans a bounded number of shards that still cover it exactly", () => {
    const range: Range = [1, 1e15 + 1]
    const shards = planShards(range, [[]], { concurrency: 8, pageSize: 100, maxShardUnits: 100_000 })
    expect(shards.length).toBeLessThanOrEqual(MAX_SHARDS)
    expect(shards.length % 8).toBe(0)
    expect(shards[0][0]).toBe(1)
    expect(shards.at(-1)![1]).toBe(1e15 + 1)
    for (let i = 1; i < shards.length; i++) expect(shards[i][0]).toBe(shards[i - 1][1])
  })
})

describe("plan figures", () => {
  it("progressOf, requestsFor and heightBounds", () => {
    expect(
      progressOf(
        [0, 100],
        [
          [0, 30],
          [90, 200]
        ]
      )
    ).toEqual({ todo: 60, done: 40 })
    expect(progressOf([0, 100], [])).toEqual({ todo: 100, done: 0 })
    expect(
      requestsFor(
        [
          [0, 100],
          [100, 250],
          [250, 251]
        ],
        100
      )
    ).toBe(1 + 2 + 1)
    expect(heightBounds({}, 1, 500)).toEqual({ from: 1, to: 500, clipped: false })
    expect(heightBounds({ fromHeight: 20, toHeight: 30 }, 1, 500)).toEqual({ from: 20, to: 30, clipped: false })
    // a pruned source starts later; a watermark below the asked end clips it, and says so
    expect(heightBounds({ fromHeight: 5, toHeight: 900 }, 11, 500)).toEqual({ from: 11, to: 500, clipped: true })
    expect(heightBounds({ toHeight: 500 }, 1, 500)).toEqual({ from: 1, to: 500, clipped: false })
  })
})

describe("firstAtOrAbove (k-ary position search)", () => {
  it("finds what a linear scan finds, in few rounds of at most `fanout` probes", () => {
    // heights of 1,000 rows: several rows per height, gaps of empty blocks
    const heights: Array<number> = []
    for (let h = 1; heights.length < 1000; h += 1 + (h % 7 === 0 ? 3 : 0)) for (let k = 0; k < (h * 7919) % 5; k++) heights.push(h)
    heights.length = 1000
    for (const fanout of [2, 4, 16]) {
      for (const target of [0, 1, 2, heights[0], heights[500], heights[500] + 1, heights[999], heights[999] + 1, 10_000]) {
        let probes = 0
        const heightAt = (p: number) =>
          Effect.sync(() => {
            probes++
            return p < heights.length ? heights[p] : null
          })
        const found = Effect.runSync(firstAtOrAbove(heightAt, heights.length, target, fanout))
        const expected = heights.findIndex((h) => h >= target)
        expect(found, `fanout ${fanout}, height ${target}`).toBe(expected < 0 ? heights.length : expected)
        // log_(fanout+1) of the rows, and one last round over what is left
        expect(probes, `fanout ${fanout}, height ${target}: ${probes} probes`).toBeLessThanOrEqual(
          fanout * (Math.ceil(Math.log(1000) / Math.log(fanout + 1)) + 1)
        )
      }
    }
    expect(Effect.runSync(firstAtOrAbove(() => Effect.succeed(5), 0, 1, 8))).toBe(0)
  })

  it("asks a round's `fanout` probes at once (the concurrency the run has), not one after another", async () => {
    for (const fanout of [4, 16]) {
      let inFlight = 0
      let most = 0
      const heightAt = (p: number) =>
        Effect.promise(async () => {
          most = Math.max(most, ++inFlight)
          await new Promise((resolve) => setTimeout(resolve, 1))
          inFlight--
          return p < 1000 ? Math.floor(p / 3) : null
        })
      expect(await Effect.runPromise(firstAtOrAbove(heightAt, 1000, 200, fanout))).toBe(600)
      expect(most, `fanout ${fanout}`).toBe(fanout)
    }
  })

  it("a guess (where the lake's rows end) is settled by its two neighbours when right, and bounds the search when wrong", () => {
    // three rows a height: position p is at height floor(p / 3) + 1
    const search = (height: number, guess: number) => {
      const asked: Array<number> = []
      const heightAt = (p: number) => Effect.sync(() => (asked.push(p), p < 1000 ? Math.floor(p / 3) + 1 : null))
      return { found: Effect.runSync(firstAtOrAbove(heightAt, 1000, height, 8, guess)), asked }
    }
    // right: two probes, the guess and the row before it
    expect(search(201, 600)).toEqual({ found: 600, asked: [599, 600] })
    // right at either end: the first row, or past the last (no row to ask there)
    expect(search(1, 0)).toEqual({ found: 0, asked: [0] })
    expect(search(10_000, 1000)).toEqual({ found: 1000, asked: [999] })
    for (const [height, guess] of [
      [201, 500],
      [201, 700],
      [201, 601],
      [2, 999],
      [334, 3]
    ] as const) {
      const { found, asked } = search(height, guess)
      expect(found, `height ${height}, guess ${guess}`).toBe(Math.min(1000, (height - 1) * 3))
      // the search goes on past the guess, on the side it says: never back over it
      const rest = asked.slice(2)
      expect(
        rest.every((p) => (found < guess ? p < guess : p > guess)),
        `height ${height}, guess ${guess}: ${asked}`
      ).toBe(true)
    }
  })
})
