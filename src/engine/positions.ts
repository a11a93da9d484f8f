/**
 * Where heights start in a position source (the tx families: rows in ascending height, addressed by
 * position, each probed by the source's key after it: Source.keyAfter). A k-ary search: each round asks
 * `fanout` single-row probes at once (the concurrency the run has) and narrows the interval by
 * that factor, instead of one round trip per halving. A guess (where the lake's committed rows
 * start or end) is tried first: two probes settle it when it is right (a rerun, a follow round),
 * and bound the search on one side when it is not.
 */
import { Effect } from "effect"

/**
 * The first position in [0, rows) whose height is >= `height`, or `rows` if none; `heightAt`
 * gives a position's height (null past the end). Heights ascend with positions.
 */
export const firstAtOrAbove = <E, R>(
  heightAt: (position: number) => Effect.Effect<number | null, E, R>,
  rows: number,
  height: number,
  fanout: number,
  guess?: number
) =>
  Effect.gen(function* () {
    // Stryker disable next-line ConditionalExpression: null >= height is false for every height a run asks (>= 1)
    const isAbove = (h: number | null) => h !== null && h >= height
    // every position below lo is below `height`; every position from hi on is not
    let lo = 0
    let hi = rows
    if (guess !== undefined && Number.isSafeInteger(guess) && guess >= 0 && guess <= rows) {
      const [before, at] = yield* Effect.all(
        [guess > 0 ? heightAt(guess - 1) : Effect.succeed(null), guess < rows ? heightAt(guess) : Effect.succeed(null)],
        { concurrency: "unbounded" }
      )
      if (guess > 0 && isAbove(before)) hi = guess - 1
      // every position below the guess is below `height`: the guess is the answer, or below it
      else if (guess === rows || isAbove(at)) return guess
      else lo = guess + 1
    }
    const k = Math.max(2, fanout)
    // Stryker disable next-line EqualityOperator: at lo === hi the round below probes nothing and returns lo
    while (lo < hi) {
      const span = hi - lo
      // Stryker disable next-line ConditionalExpression,EqualityOperator: at span === k either way finds the same position (one round more or less)
      const probes =
        span <= k
          ? Array.from({ length: span }, (_, i) => lo + i)
          : Array.from({ length: k }, (_, i) => lo + Math.floor(((i + 1) * span) / (k + 1)))
      const heights = yield* Effect.forEach(probes, heightAt, { concurrency: "unbounded" })
      const first = heights.findIndex(isAbove)
      // Stryker disable next-line ConditionalExpression,EqualityOperator: as above
      if (span <= k) return first < 0 ? hi : probes[first]
      if (first >= 0) hi = probes[first]
      // Stryker disable next-line ArithmeticOperator,EqualityOperator: a lower bound one or two below is still below (a step more); first is not 0 in the inner test
      lo = first === 0 ? lo : probes[(first < 0 ? probes.length : first) - 1] + 1
    }
    return lo
  })
