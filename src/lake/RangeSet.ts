/** Sorted, disjoint half-open integer ranges [start, end): what is committed, what is missing. */
export type Range = readonly [start: number, end: number]

export const normalize = (ranges: ReadonlyArray<Range>): Array<Range> => {
  const sorted = ranges.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0])
  const out: Array<[number, number]> = []
  for (const [a, b] of sorted) {
    const last = out[out.length - 1]
    if (last && a <= last[1]) last[1] = Math.max(last[1], b)
    else out.push([a, b])
  }
  return out
}

/** `whole` minus `covered`. */
export const subtract = (whole: Range, covered: ReadonlyArray<Range>): Array<Range> => {
  const out: Array<Range> = []
  let cursor = whole[0]
  for (const [a, b] of normalize(covered)) {
    if (a >= whole[1]) break
    if (a > cursor) out.push([cursor, Math.min(a, whole[1])])
    cursor = Math.max(cursor, b)
  }
  if (cursor < whole[1]) out.push([cursor, whole[1]])
  return out
}

export const covers = (covered: ReadonlyArray<Range>, range: Range): boolean => subtract(range, covered).length === 0

/** Splits ranges at every boundary in `cuts` and into pieces of at most `size`. */
export const split = (ranges: ReadonlyArray<Range>, size: number, cuts: ReadonlyArray<number> = []): Array<Range> => {
  const points = [...new Set(cuts)].sort((a, b) => a - b)
  const out: Array<Range> = []
  for (const [a, b] of ranges) {
    const inner = points.filter((p) => p > a && p < b)
    let start = a
    for (const end of [...inner, b]) {
      const n = Math.ceil((end - start) / size)
      const step = Math.ceil((end - start) / n)
      for (let s = start; s < end; s += step) out.push([s, Math.min(end, s + step)])
      start = end
    }
  }
  return out
}

export const total = (ranges: ReadonlyArray<Range>) => ranges.reduce((s, [a, b]) => s + (b - a), 0)

/** What both range lists cover. */
export const intersect = (x: ReadonlyArray<Range>, y: ReadonlyArray<Range>): Array<Range> =>
  normalize(x).flatMap(([a, b]) =>
    normalize(y).flatMap(([c, d]): Array<Range> => (Math.max(a, c) < Math.min(b, d) ? [[Math.max(a, c), Math.min(b, d)]] : []))
  )

/** The parts of `ranges` below `end`. */
export const below = (ranges: ReadonlyArray<Range>, end: number): Array<Range> =>
  ranges.flatMap(([a, b]): Array<Range> => (a < end ? [[a, Math.min(b, end)]] : []))
