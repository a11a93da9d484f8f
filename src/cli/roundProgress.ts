/**
 * sample-routes' line of the round under way: how many of its quotes are back, how long it has
 * taken, and what it asked again. A router that answers nothing (every quote waiting out its
 * timeout and asked again) showed no sign of life until the round ended, minutes later.
 * On a terminal the line is redrawn in place each second; in a log it is written every 10 s of a
 * round (a round shorter than that says nothing more than its closing line).
 */
import type { RoundWatcher } from "../sampling/sampler.js"
import { retriedAfter, retriedClause, type RetriesService, type RetryCounts } from "../http/Retries.js"
import { clock, count, cut } from "./progress.js"

export interface RoundProgressOptions {
  /** redraw the line in place (stderr is a terminal) */
  readonly tty: boolean
  readonly write: (text: string) => void
  readonly retries: RetriesService
  /** ms between two lines (default: 1 s on a terminal, 10 s in a log) */
  readonly every?: number
  /** the terminal's width: a line redrawn in place must not wrap (default: stderr's) */
  readonly columns?: () => number
}

interface Round {
  readonly roundId: string
  readonly asks: number
  readonly since: number
  readonly retriedBefore: RetryCounts
  done: number
  failed: number
}

/**
 * "round 20261129-004512345Z under way: 40 of 120 quotes back (3 failed) after 00:12, 5 requests
 * asked again (timeout ×5)"; without the round's id on a terminal, where the counts must fit.
 */
export const underWayLine = (round: Round, now: number, retried: RetryCounts, withId = true): string =>
  `round${withId ? ` ${round.roundId}` : ""} under way: ${count(round.done)} of ${count(round.asks)} quotes back${round.failed > 0 ? ` (${count(round.failed)} failed)` : ""} after ${clock(Math.max(0, now - round.since) / 1000)}${retriedClause(retried)}`

export const roundProgress = (options: RoundProgressOptions) => {
  const every = options.every ?? (options.tty ? 1000 : 10_000)
  let round: Round | undefined
  let drawn = false
  let written = 0
  const retriedInRound = (): RetryCounts => (round ? retriedAfter(round.retriedBefore, options.retries.counts()) : {})
  const clear = () => {
    if (drawn) options.write("\r\x1b[K")
    drawn = false
  }
  // ticks each second whatever `every`: a round that began just after a tick is not first said `every` late
  const timer = setInterval(
    () => {
      const now = Date.now()
      if (!round || now - round.since < every || now - written < every) return
      written = now
      const line = underWayLine(round, now, retriedInRound(), !options.tty)
      if (options.tty) {
        // one column short of the width: a line that fills the last column wraps on some terminals
        options.write(`\r\x1b[K${cut(line, (options.columns?.() ?? (process.stderr.columns || 80)) - 1)}`)
        drawn = true
      } else options.write(`${line}\n`)
    },
    Math.min(every, 1000)
  )
  timer.unref()
  const watcher: RoundWatcher = {
    started: (roundId, asks) => {
      round = { roundId, asks, since: Date.now(), retriedBefore: options.retries.counts(), done: 0, failed: 0 }
    },
    // failed as the round's own line counts them: stored quotes with no route
    quoted: (ok, stored) => {
      if (!round) return
      round.done++
      if (stored && !ok) round.failed++
    }
  }
  return {
    watcher,
    /** the requests asked again since the round under way began (none between rounds) */
    retriedInRound,
    /** takes the line off the terminal before another is written; the round is over */
    roundOver: () => {
      clear()
      round = undefined
    },
    stop: () => {
      clearInterval(timer)
      clear()
    }
  }
}
