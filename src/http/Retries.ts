/**
 * Retries: a tally of the requests asked again after a transient failure (a 429, a 5xx, no answer
 * in time, a dropped connection, a body that is not JSON), by why, so that a run a server slows down
 * says so rather than looking stuck. The tally is kept in shared memory: a run's shard workers,
 * given its buffer, count into the run's own tally.
 */
import { Context, Layer } from "effect"

/** Why a request was asked again. */
export const RETRY_REASONS = ["429", "500", "502", "503", "504", "other 5xx", "timeout", "connection lost", "body not JSON"] as const
export type RetryReason = (typeof RETRY_REASONS)[number]
/** Requests asked again, by why (reasons with none left out). */
export type RetryCounts = Readonly<Partial<Record<RetryReason, number>>>

/** What the tally reads of a client's retryable failure: its tag, and its status where it is an answer. */
export interface RetriedFailure {
  readonly _tag: string
  readonly status?: number
}

/** The reasons of the client failures that are not answers (an answer's is its status). */
const FAILURE_REASONS: Readonly<Record<string, RetryReason>> = {
  IndexerTimeout: "timeout",
  RouterTimeout: "timeout",
  // a connection refused, reset or dropped, a body cut short in transit
  IndexerNetworkError: "connection lost",
  RouterNetworkError: "connection lost",
  // a whole answer that is not JSON: cut short, or a proxy's HTML page
  IndexerTruncatedBody: "body not JSON",
  RouterDecodeError: "body not JSON"
}

/** Why `failure` was asked again: its status, or what kind of failure it was. */
export const retryReason = (failure: RetriedFailure): RetryReason => {
  if (failure.status !== undefined) {
    const status = String(failure.status)
    return RETRY_REASONS.find((r) => r === status) ?? "other 5xx"
  }
  return FAILURE_REASONS[failure._tag] ?? "connection lost"
}

export interface RetriesService {
  /** counts one request asked again after `failure` (as its wait starts: a run stopped meanwhile never sends it) */
  readonly retried: (failure: RetriedFailure) => void
  /** the requests asked again so far, by why (reasons with none left out) */
  readonly counts: () => RetryCounts
  /** the shared memory of the tally: a thread given it counts into the same tally (retriesIn) */
  readonly buffer: SharedArrayBuffer
}

export class Retries extends Context.Tag("chain-lake/Retries")<Retries, RetriesService>() {}

/** A tally kept in `buffer` (a new one, or another thread's, to count into its tally). */
export const retriesIn = (buffer = new SharedArrayBuffer(RETRY_REASONS.length * Int32Array.BYTES_PER_ELEMENT)): RetriesService => {
  const slots = new Int32Array(buffer)
  return {
    buffer,
    retried: (failure) => {
      Atomics.add(slots, RETRY_REASONS.indexOf(retryReason(failure)), 1)
    },
    counts: () =>
      Object.fromEntries(
        RETRY_REASONS.flatMap((reason, i) => {
          const n = Atomics.load(slots, i)
          return n > 0 ? [[reason, n]] : []
        })
      )
  }
}

export const layerRetries = (buffer?: SharedArrayBuffer) => Layer.sync(Retries, () => retriesIn(buffer))

/** The requests asked again in `now` beyond those in `before` (two readings of one tally). */
export const retriedAfter = (before: RetryCounts, now: RetryCounts): RetryCounts =>
  Object.fromEntries(
    RETRY_REASONS.flatMap((reason) => {
      const n = (now[reason] ?? 0) - (before[reason] ?? 0)
      return n > 0 ? [[reason, n]] : []
    })
  )

/** A reader of `tally` that answers the requests asked again since it last answered (a round's, each round). */
export const retriedSinceLast = (tally: RetriesService) => {
  let before = tally.counts()
  return (): RetryCounts => {
    const now = tally.counts()
    const since = retriedAfter(before, now)
    before = now
    return since
  }
}

/** "1 request", "12 requests" */
export const requestsCounted = (n: number) => `${n} request${n === 1 ? "" : "s"}`

/** ", 12 requests asked again (503 ×7, 429 ×5)", or nothing where there were none: what a round's line ends with. */
export const retriedClause = (counts: RetryCounts) =>
  retriedTotal(counts) > 0 ? `, ${requestsCounted(retriedTotal(counts))} asked again (${retriesText(counts)})` : ""

/** The requests asked again in all. */
export const retriedTotal = (counts: RetryCounts) => Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0)

/** "503 ×7, 429 ×5": the counts, the most first. */
export const retriesText = (counts: RetryCounts) =>
  Object.entries(counts)
    .sort(([, a], [, b]) => (b ?? 0) - (a ?? 0))
    .map(([reason, n]) => `${reason} ×${n}`)
    .join(", ")
