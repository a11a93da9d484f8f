/**
 * What a lake that is not whole (a run stopped, a stretch not exported yet) holds in full, from its
 * manifests: the checks compare datasets only there, so an unfinished lake is not taken for a wrong
 * one, and a row lost inside what a manifest says is committed is still found.
 */
import type { Manifest } from "./manifest.js"
import { covers, normalize, type Range } from "./RangeSet.js"

/**
 * The heights a position dataset (rows in ascending height, committed as ranges of list positions)
 * holds every row of: within a span of positions committed without a hole, every height between
 * its first row's and its last row's. Those two (`edges`) may be held in part: a span may start or
 * end inside a height (a stopped run commits a page at a time); one starting at the list's first
 * position holds its first height whole.
 */
export const wholeHeights = (m: Manifest): { readonly whole: Array<Range>; readonly edges: Array<number> } => {
  const whole: Array<Range> = []
  const edges = new Set<number>()
  for (const { span, low, high } of spanHeights(m)) {
    const from = span[0] === 0 ? low : low + 1
    if (from < high) whole.push([from, high])
    if (span[0] !== 0) edges.add(low)
    edges.add(high)
  }
  return { whole: normalize(whole), edges: [...edges].sort((a, b) => a - b) }
}

/** Each span of positions a dataset committed without a hole, with the heights of its first and last rows (spans without rows left out). */
const spanHeights = (m: Manifest) =>
  normalize(m.committed).flatMap((span) => {
    const inside = m.files.filter((f) => f.range !== undefined && f.min_height !== null && f.max_height !== null && covers([span], f.range))
    return inside.length === 0
      ? []
      : [
          {
            span,
            low: inside.reduce((low, f) => Math.min(low, f.min_height!), Infinity),
            high: inside.reduce((high, f) => Math.max(high, f.max_height!), -Infinity)
          }
        ]
  })

/**
 * The stretches a dataset's manifest lists as not committed between its committed ones, in heights:
 * a height dataset's missing heights; a position dataset's rows between the last height of one
 * committed span and the first of the next (those two held in part).
 */
export const missingHeights = (m: Manifest): Array<Range> => {
  const spans = normalize(m.committed)
  if (m.unit === "height") return spans.slice(1).map(([a], i): Range => [spans[i][1], a])
  const heights = spanHeights(m)
  return heights.slice(1).map(({ low }, i): Range => [heights[i].high, low + 1])
}

/** A SQL predicate: `column` inside one of `ranges`. */
export const inRanges = (column: string, ranges: ReadonlyArray<Range>) =>
  ranges.length === 0 ? "false" : `(${ranges.map(([a, b]) => `(${column} >= ${a} AND ${column} < ${b})`).join(" OR ")})`

/** Ranges as the heights they hold, e.g. "51-79, 121". */
export const describeRanges = (ranges: ReadonlyArray<Range>, most = 3) => {
  const shown = ranges.slice(0, most).map(([a, b]) => (b - a === 1 ? `${a}` : `${a}-${b - 1}`))
  return `${shown.join(", ")}${ranges.length > most ? ` and ${ranges.length - most} more` : ""}`
}
