/**
 * RequestLimiter: one concurrency limit and one requests-per-second limit shared by every
 * stream of a run (indexer and router clients alike), so parallel shards cannot overrun a server.
 */
import { Context, Effect, Layer } from "effect"
import { DEFAULTS } from "../defaults.js"

export interface LimiterConfig {
  /** requests in flight at once */
  readonly concurrency: number
  /** requests started per second; 0 = unlimited */
  readonly rps: number
}

export const DEFAULT_LIMITS: LimiterConfig = { concurrency: DEFAULTS.concurrency, rps: DEFAULTS.rps }

export interface RequestLimiterService {
  readonly config: LimiterConfig
  /** Runs `effect` once a concurrency permit and a rate slot are free. */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class RequestLimiter extends Context.Tag("chain-lake/RequestLimiter")<RequestLimiter, RequestLimiterService>() {}

/** the highest rate whose starts are counted per second (a ring of this many times) */
const WINDOW_MAX = 10_000

export const makeRequestLimiter = (config: LimiterConfig): Effect.Effect<RequestLimiterService> =>
  Effect.gen(function* () {
    const permits = yield* Effect.makeSemaphore(Math.max(1, config.concurrency))
    const spacingMs = config.rps > 0 ? 1000 / config.rps : 0
    // Each request reserves the next start slot, 1000/rps ms after the one before; an idle limiter
    // banks none (it allowed a second's burst: 2·rps + 1 starts in the first second). And a start
    // goes only where the second before it holds fewer than rps starts, counted as they go: slots
    // that fall due together (the event loop held up) are not all taken at once. So no second
    // holds more than rps starts, as a gateway that counts requests per second sees them.
    let nextSlot = 0
    // the times of the last `perSecond` starts, in a ring: `oldest` is the next to be replaced
    // (above WINDOW_MAX per second the spacing alone holds the rate)
    const perSecond = Math.max(1, Math.floor(config.rps))
    const started = perSecond <= WINDOW_MAX ? new Array<number>(perSecond).fill(-Infinity) : undefined
    let oldest = 0
    const windowOpen: Effect.Effect<void> = Effect.suspend(() => {
      if (!started) return Effect.void
      const now = Date.now()
      if (now - started[oldest] < 1000) return Effect.zipRight(Effect.sleep(started[oldest] + 1000 - now), windowOpen)
      started[oldest] = now
      oldest = (oldest + 1) % perSecond
      return Effect.void
    })
    const waitForSlot = Effect.suspend(() => {
      if (spacingMs === 0) return Effect.void
      const now = Date.now()
      const slot = Math.max(nextSlot, now)
      nextSlot = slot + spacingMs
      const wait = slot - now
      return Effect.zipRight(wait > 0 ? Effect.sleep(wait) : Effect.void, windowOpen)
    })
    return {
      config,
      run: (effect) => permits.withPermits(1)(Effect.zipRight(waitForSlot, effect))
    }
  })

export const layerRequestLimiter = (config: LimiterConfig = DEFAULT_LIMITS) => Layer.effect(RequestLimiter, makeRequestLimiter(config))
