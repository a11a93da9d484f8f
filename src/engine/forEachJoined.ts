/**
 * `Effect.forEach` with bounded concurrency that returns only once every element it started has
 * ended. Effect 3.22's returns as soon as an element fails while others wait for a fiber: its
 * failed element is counted twice (fiberRuntime.ts forEachConcurrentDiscard, `onRes` then the
 * fiber's observer), so a sibling still inside an uninterruptible commit outlived the run, and the
 * run's scope deleted the staging folder under it: a manifest listed a file that never arrived.
 * Here no element fails inside forEach: the first failure stops what has not started, interrupts
 * what runs (an uninterruptible part ends first), and is the result once all have ended.
 */
import { type Cause, Deferred, Effect, Exit } from "effect"

export const forEachJoined = <A, E, R>(
  items: Iterable<A>,
  f: (item: A) => Effect.Effect<unknown, E, R>,
  concurrency: number
): Effect.Effect<void, E, R> =>
  Effect.gen(function* () {
    const stop = yield* Deferred.make<void>()
    let failure: Cause.Cause<E> | undefined
    const stopped = Effect.zipRight(Deferred.await(stop), Effect.interrupt)
    yield* Effect.forEach(
      items,
      (item) =>
        Effect.suspend(() =>
          failure !== undefined
            ? Effect.void
            : Effect.flatMap(Effect.exit(Effect.raceFirst(f(item), stopped)), (exit) => {
                if (Exit.isSuccess(exit) || failure !== undefined) return Effect.void
                failure = exit.cause
                return Deferred.succeed(stop, undefined)
              })
        ),
      { concurrency, discard: true }
    )
    if (failure !== undefined) return yield* Effect.failCause(failure)
  })
