/**
 * Fault injection for the devnet: transient faults a correct client recovers from (429 with
 * Retry-After, 500/502/503, connection reset, truncated body, stall past the client timeout),
 * plus, only when asked by name, a malformed record that no retry fixes and a COUNT timeout.
 * Decisions are a function of (seed, request, attempt number of that request), so a failing run
 * reproduces whatever the interleaving of concurrent requests.
 */
import { Rng } from "./rng.js"

export type TransientFault = "429" | "500" | "502" | "503" | "reset" | "truncate" | "stall"
export const TRANSIENT_FAULTS: ReadonlyArray<TransientFault> = ["429", "500", "502", "503", "reset", "truncate", "stall"]

export interface FaultSpec {
  readonly rates: Readonly<Record<TransientFault, number>>
  /** share of list responses with one schema-violating record (same URL → same answer, always) */
  readonly malformed: number
  /** filtered totals come back "-1", as when the real COUNT hits its 5 s timeout */
  readonly countTimeout: boolean
  /** how long a stalled response waits before it is sent anyway */
  readonly stallMs: number
  /** Retry-After seconds sent with 429 */
  readonly retryAfterSeconds: number
}

const zero: Record<TransientFault, number> = { "429": 0, "500": 0, "502": 0, "503": 0, reset: 0, truncate: 0, stall: 0 }

export const PROFILES: Readonly<Record<string, string>> = {
  none: "",
  light: "429=0.02,503=0.02,reset=0.01,truncate=0.01",
  // 25% of requests fail in some transient way
  heavy: "429=0.06,500=0.03,502=0.03,503=0.05,reset=0.03,truncate=0.04,stall=0.01"
}

export class FaultSpecError extends Error {}

/** Parses `none|light|heavy` (optionally with overrides) or `429=0.05,503=0.05,reset=0.02,truncate=0.02,malformed=0.01,count-timeout,stall-ms=2000`. */
export const parseFaults = (text: string | undefined): FaultSpec => {
  const source = text === undefined || text === "" ? "none" : text
  // a profile name may stand alone or be tuned: "heavy,stall-ms=2000"
  const expanded = source
    .split(",")
    .map((part) => PROFILES[part.trim()] ?? part)
    .join(",")
  const rates = { ...zero }
  let malformed = 0
  let countTimeout = false
  let stallMs = 10_000
  let retryAfterSeconds = 1
  for (const part of expanded
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = part.split("=")
    if (name === "count-timeout" && value === undefined) {
      countTimeout = true
      continue
    }
    const n = Number(value)
    if (value === undefined || !Number.isFinite(n) || n < 0)
      throw new FaultSpecError(
        `bad fault "${part}": expected NAME=NUMBER (names: ${[...TRANSIENT_FAULTS, "malformed", "stall-ms", "retry-after", "count-timeout"].join(", ")}) or a profile (none, light, heavy)`
      )
    if ((TRANSIENT_FAULTS as ReadonlyArray<string>).includes(name)) {
      if (n > 1) throw new FaultSpecError(`bad fault "${part}": a rate is between 0 and 1`)
      rates[name as TransientFault] = n
    } else if (name === "malformed") malformed = n
    else if (name === "stall-ms") stallMs = n
    else if (name === "retry-after") retryAfterSeconds = n
    else
      throw new FaultSpecError(
        `unknown fault "${name}" (names: ${[...TRANSIENT_FAULTS, "malformed", "stall-ms", "retry-after", "count-timeout"].join(", ")})`
      )
  }
  const total = Object.values(rates).reduce((a, b) => a + b, 0)
  if (total > 1) throw new FaultSpecError(`fault rates add up to ${total}, more than 1`)
  return { rates, malformed, countTimeout, stallMs, retryAfterSeconds }
}

export class FaultInjector {
  private readonly attempts = new Map<string, number>()
  constructor(
    readonly spec: FaultSpec,
    private readonly seed: number
  ) {}

  get active(): boolean {
    return Object.values(this.spec.rates).some((r) => r > 0)
  }

  /** The transient fault (if any) for this request; counts attempts per request key. */
  next(key: string): TransientFault | undefined {
    if (!this.active) return undefined
    const attempt = (this.attempts.get(key) ?? 0) + 1
    this.attempts.set(key, attempt)
    let x = new Rng(this.seed, "fault", key, attempt).next()
    for (const fault of TRANSIENT_FAULTS) {
      x -= this.spec.rates[fault]
      if (x < 0) return fault
    }
    return undefined
  }

  /** Whether this URL's response carries a malformed record: fixed per URL, so retries see it too. */
  malformed(key: string): boolean {
    return this.spec.malformed > 0 && new Rng(this.seed, "malformed", key).chance(this.spec.malformed)
  }

  /** Half of a truncated body is cut short with a clean end, half by a dropped connection. */
  truncateStyle(key: string): "short-body" | "drop" {
    return new Rng(this.seed, "trunc", key, this.attempts.get(key) ?? 0).chance(0.5) ? "short-body" : "drop"
  }
}

/**
 * Breaks one record of a list response: the first string field of a record becomes a number.
 * Returns the body unchanged when it has no list of objects.
 */
export const corruptOneRecord = (body: string, seed: number, key: string): string => {
  const value = JSON.parse(body) as Record<string, unknown>
  for (const v of Object.values(value)) {
    if (!Array.isArray(v) || v.length === 0 || typeof v[0] !== "object") continue
    const record = v[new Rng(seed, "victim", key).int(0, v.length - 1)] as Record<string, unknown>
    const field = Object.keys(record).find((k) => typeof record[k] === "string") ?? Object.keys(record)[0]
    record[field] = 12345
    return JSON.stringify(value)
  }
  return body
}
