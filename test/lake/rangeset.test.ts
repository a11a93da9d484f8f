/**
 * RangeSet: the arithmetic of committed and missing ranges that resume relies on. A wrong
 * subtraction re-exports committed rows (duplicates) or skips missing ones (holes); a wrong split
 * gives shards that overlap, leave gaps, or straddle a committed boundary.
 */
import { describe, expect, it } from "vitest"
import { covers, normalize, split, subtract, total, type Range } from "../../src/lake/RangeSet.js"

/** Every integer the ranges hold, in order (small ranges only). */
const points = (ranges: ReadonlyArray<Range>) => ranges.flatMap(([a, b]) => Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i))

describe("RangeSet", () => {
  it("normalize sorts, merges overlapping and touching ranges, and drops empty ones", () => {
    expect(
      normalize([
        [5, 8],
        [1, 3],
        [3, 4],
        [7, 10],
        [12, 12],
        [11, 11],
        [20, 19]
      ])
    ).toEqual([
      [1, 4],
      [5, 10]
    ])
    expect(
      normalize([
        [1, 10],
        [2, 3]
      ])
    ).toEqual([[1, 10]])
    expect(
      normalize([
        [0, 1],
        [1, 2],
        [2, 3]
      ])
    ).toEqual([[0, 3]])
    expect(
      normalize([
        [4, 6],
        [1, 2]
      ])
    ).toEqual([
      [1, 2],
      [4, 6]
    ])
    expect(normalize([])).toEqual([])
    // the input is not modified
    const input: Array<Range> = [
      [3, 4],
      [1, 2]
    ]
    normalize(input)
    expect(input).toEqual([
      [3, 4],
      [1, 2]
    ])
  })

  it("subtract leaves exactly the points of the whole that no covered range holds", () => {
    const cases: Array<[Range, Array<Range>]> = [
      [[0, 10], []],
      [[0, 10], [[0, 10]]],
      [[0, 10], [[-5, 20]]],
      [
        [0, 10],
        [
          [2, 4],
          [6, 8]
        ]
      ],
      [
        [0, 10],
        [
          [6, 8],
          [2, 4]
        ]
      ],
      [[0, 10], [[0, 3]]],
      [[0, 10], [[7, 10]]],
      [
        [0, 10],
        [
          [10, 12],
          [-3, 0]
        ]
      ],
      [
        [5, 15],
        [
          [0, 6],
          [14, 30]
        ]
      ],
      [
        [5, 15],
        [
          [8, 9],
          [8, 12]
        ]
      ],
      [[1, 2], [[1, 2]]],
      // a covered range reaching past the end, then one wholly after it
      [
        [0, 10],
        [
          [5, 12],
          [15, 20]
        ]
      ],
      [
        [0, 10],
        [
          [3, 4],
          [4, 6],
          [2, 5]
        ]
      ]
    ]
    for (const [whole, covered] of cases) {
      const held = new Set(points(covered))
      const expected = points([whole]).filter((p) => !held.has(p))
      const got = subtract(whole, covered)
      expect(points(got), JSON.stringify([whole, covered])).toEqual(expected)
      // as maximal disjoint ranges
      expect(got, JSON.stringify([whole, covered])).toEqual(normalize(got))
    }
    expect(
      subtract(
        [0, 10],
        [
          [2, 4],
          [6, 8]
        ]
      )
    ).toEqual([
      [0, 2],
      [4, 6],
      [8, 10]
    ])
  })

  it("covers is true only when nothing of the range is missing", () => {
    expect(covers([[0, 10]], [2, 5])).toBe(true)
    expect(
      covers(
        [
          [0, 5],
          [5, 10]
        ],
        [0, 10]
      )
    ).toBe(true)
    expect(
      covers(
        [
          [0, 5],
          [6, 10]
        ],
        [0, 10]
      )
    ).toBe(false)
    expect(covers([[0, 9]], [0, 10])).toBe(false)
    expect(covers([[1, 10]], [0, 10])).toBe(false)
    expect(covers([], [3, 4])).toBe(false)
  })

  it("split cuts at every boundary given and into near-equal pieces of at most `size`, covering each point once", () => {
    const ranges: Array<Range> = [
      [0, 23],
      [30, 31],
      [40, 100]
    ]
    for (const size of [1, 3, 7, 10, 100]) {
      for (const cuts of [[], [5, 50, 61, 99], [99, 61, 5, 50, 61], [0, 23, 40]]) {
        const shards = split(ranges, size, cuts)
        expect(points(shards), `size ${size} cuts ${cuts}`).toEqual(points(ranges))
        for (const [a, b] of shards) {
          expect(b - a).toBeGreaterThan(0)
          expect(b - a).toBeLessThanOrEqual(size)
          // no shard straddles a cut
          for (const c of cuts) expect(c <= a || c >= b, `[${a}, ${b}) straddles ${c}`).toBe(true)
        }
      }
    }
    // equal pieces rather than full ones and a stub: 10 in pieces of at most 4 is 4, 3, 3 (by ceil)
    expect(split([[0, 10]], 4)).toEqual([
      [0, 4],
      [4, 8],
      [8, 10]
    ])
    expect(split([[0, 9]], 4)).toEqual([
      [0, 3],
      [3, 6],
      [6, 9]
    ])
    expect(split([[0, 10]], 5, [3])).toEqual([
      [0, 3],
      [3, 7],
      [7, 10]
    ])
    expect(split([[0, 10]], 10, [3, 3, 7])).toEqual([
      [0, 3],
      [3, 7],
      [7, 10]
    ])
  })

  it("total counts the points", () => {
    expect(
      total([
        [0, 10],
        [20, 25]
      ])
    ).toBe(15)
    expect(total([])).toBe(0)
  })
})
