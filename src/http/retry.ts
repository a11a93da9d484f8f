/**
 * The retry policy both API clients share: exponential backoff with full jitter on transient
 * failures (429, 5xx, connection reset, timeout, truncated body), honouring Retry-After
 * (delta-seconds or HTTP-date), capped by attempts and total time. Other 4xx never retry.
 */
import { Duration, Effect, Schedule, ScheduleDecision } from "effect"
import { DEFAULTS } from "../defaults.js"

export interface RetryPolicy {
  readonly maxRetries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  /** give up once this much time has passed since the first attempt */
  readonly maxElapsedMs: number
  /** per-request timeout */
  readonly timeoutMs: number
}

export const DEFAULT_RETRY: RetryPolicy = DEFAULTS.retry

/** What the schedule needs to know of a failure. */
export interface RetryableError {
  readonly retryable: boolean
  /** server-requested wait (Retry-After), if any */
  readonly retryAfterMs?: number
}

/** Parses Retry-After: delta-seconds or an HTTP-date; undefined if absent or unreadable. */
export const parseRetryAfter = (value: string | null | undefined, now = Date.now()): number | undefined => {
  if (!value) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** Full jitter: uniform in [0, min(max, base·2^n)]; a Retry-After wins when it is longer. */
export const retryDelayMs = (error: RetryableError, retry: number, policy: RetryPolicy, random = Math.random): number => {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry)
  const jittered = random() * ceiling
  return error.retryAfterMs !== undefined ? Math.max(Math.min(error.retryAfterMs, policy.maxDelayMs * 6), jittered) : jittered
}

/** The schedule of a request's retries under `policy`; `onRetry` is told of each failure that is asked again. */
export const retrySchedule = <E extends RetryableError>(policy: RetryPolicy, onRetry?: (failure: E) => void) =>
  Schedule.identity<E>().pipe(
    Schedule.whileInput((e: E) => e.retryable),
    Schedule.intersect(Schedule.recurs(policy.maxRetries)),
    Schedule.addDelay(([error, retry]) => Duration.millis(retryDelayMs(error, retry, policy))),
    Schedule.upTo(Duration.millis(policy.maxElapsedMs)),
    Schedule.onDecision(([error], decision) =>
      Effect.sync(() => {
        if (onRetry && ScheduleDecision.isContinue(decision)) onRetry(error)
      })
    )
  )
