/**
 * A stop asked of a run from outside (Ctrl-C, SIGTERM, a caller's own): a run's shards end at
 * their next page and commit what they read before they end, instead of being interrupted and
 * losing it (up to ExportOptions.checkpointMs of reading each). Where no StopSignal is provided,
 * a run stops only by interruption, as any Effect does.
 *
 * Work that does not heed it (planning, a snapshot, a follow's wait) is interrupted: a stop asked
 * while none of the run heeds it interrupts the run at once (`ask` says whether any part did). A
 * part that has not ended `graceMs` after the stop (its commits' checks wait on a server that does
 * not answer) is interrupted too: a stop never waits on the source for long.
 */
import { Context, Deferred, Duration, Effect, Exit, FiberId, Option } from "effect"

export interface StopSignalService {
  /** completes once a stop is asked */
  readonly asked: Effect.Effect<void>
  readonly isAsked: () => boolean
  /** when (Date.now()) the stop was asked; undefined before */
  readonly askedAt: () => number | undefined
  /**
   * runs `effect` as a part that heeds a stop (it ends early, keeping what it read): a stop asked
   * while it runs interrupts nothing, and once it has ended, the caller is interrupted (also where
   * the stop came as its last commit ended: a stopped run never reads as finished)
   */
  readonly heeded: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export class StopSignal extends Context.Tag("chain-lake/StopSignal")<StopSignal, StopSignalService>() {}

/** How long a part that heeds a stop may take to end once it is asked, by default. */
const GRACE_MS = 20_000

/**
 * A stop signal, and `ask`: asks the stop, and says whether a part that heeds it is running (else
 * the caller interrupts the run). `late` is told when a part is interrupted for taking longer than
 * `graceMs` to end.
 */
export const makeStopSignal = (
  options: { readonly graceMs?: number; readonly late?: (graceMs: number) => void } = {}
): { readonly signal: StopSignalService; readonly ask: () => boolean } => {
  const graceMs = options.graceMs ?? GRACE_MS
  const stop = Deferred.unsafeMake<void>(FiberId.none)
  let askedAt: number | undefined
  /** parts that heed a stop, running */
  let heeding = 0
  const deadline = Effect.zipRight(
    Effect.zipRight(Deferred.await(stop), Effect.sleep(Duration.millis(graceMs))),
    Effect.zipRight(
      Effect.sync(() => options.late?.(graceMs)),
      Effect.interrupt
    )
  )
  const signal: StopSignalService = {
    asked: Deferred.await(stop),
    isAsked: () => askedAt !== undefined,
    askedAt: () => askedAt,
    // (asked looked at once no longer heeding: a stop asked before is heeded here, one asked after interrupts the caller)
    heeded: (effect) =>
      Effect.zipLeft(
        Effect.acquireUseRelease(
          Effect.sync(() => heeding++),
          () => Effect.raceFirst(effect, deadline),
          () => Effect.sync(() => heeding--)
        ),
        Effect.suspend(() => (askedAt !== undefined ? Effect.interrupt : Effect.void))
      )
  }
  const ask = () => {
    askedAt ??= Date.now()
    Deferred.unsafeDone(stop, Exit.void)
    return heeding > 0
  }
  return { signal, ask }
}

/** The run's stop signal, where it has one. */
export const stopSignalOf = Effect.map(Effect.serviceOption(StopSignal), Option.getOrUndefined)

/**
 * `effect`, unless a stop is asked before it ends: it is then interrupted (a request aborted, a
 * wait cut) and `onStop` is what it gives. Without a stop signal, `effect` alone.
 */
export const untilStopped = <A, E, R, B, E2>(
  stop: StopSignalService | undefined,
  effect: Effect.Effect<A, E, R>,
  onStop: Effect.Effect<B, E2>
): Effect.Effect<A | B, E | E2, R> => (stop ? Effect.raceFirst(effect, Effect.zipRight(stop.asked, onStop)) : effect)
