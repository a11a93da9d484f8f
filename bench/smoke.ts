/**
 * Smoke size, shared by every bench: BENCH_SMOKE=1 runs a bench through every part it has, at a
 * size that takes seconds, so that test/bench-smoke.test.ts runs each bench as a process and a
 * bench that no longer runs (a renamed column, a view that now reads another, a moved script)
 * fails CI instead of the next person who wants a number. At smoke size a bench prints its
 * tables as usual but they mean nothing (a few hundred rows, one run): no goal is judged on them.
 * Sizes only: a smoke run takes the same code paths as a full one, or it would not prove they run.
 */

/** Whether this run is a smoke run (BENCH_SMOKE=1). */
export const SMOKE = process.env.BENCH_SMOKE === "1"

/** A size: the environment variable `name` where set (a smoke run obeys it too), else `smoke` in a smoke run, else `normal`. */
export const size = (name: string, normal: number, smoke: number): number => {
  const given = process.env[name]
  if (given !== undefined && given !== "") {
    const n = Number(given)
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name}=${given}: a number, please`)
    return n
  }
  return SMOKE ? smoke : normal
}

/** The line a smoke run prints first, so that nobody copies its numbers into bench/RESULTS.md. */
export const smokeBanner = (bench: string) => {
  if (SMOKE) console.log(`# ${bench}: SMOKE SIZE (BENCH_SMOKE=1): checks that it runs; its numbers mean nothing`)
}
