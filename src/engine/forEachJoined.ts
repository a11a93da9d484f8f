/**
 * `Effect.forEach` with bounded concurrency that returns only once every element it started has
 * ended. Effect 3.22's returns as soon as an element fails while others wait for a fiber: its
 * failed element is counted twice (fiberRuntime.ts forEachConcurrentDiscard, `onRes` then the
 * fiber's observer), so a sibling still inside an uninterruptible commit outlived the run, and the
 * run's scope deleted the staging folder under it: a manifest listed a file that never arrived.
 * Here no element fails inside forEach: the first failure stops what has not started, interrupts
 * what runs (an uninterruptible part ends first), and is the result once all have ended. Each
 * element runs in a fiber that only this function interrupts and awaits: one forked as a child
 * (a race's) is awaited only when the caller's fiber ends, after the caller's finalizers ran, so
 * a Ctrl-C closed the run (its report, its staging folder) while a commit was still under way.
 */
import { type Cause, Effect, Exit, Fiber } from "effect"

export const forEachJoined = <A, E, R>(
  items: Iterable<A>,
  f: (item: A) => Effect.Effect<unknown, E, R>,
  concurrency: number
): Effect.Effect<void, E, R> =>
  Effect.gen(function* () {
    let failure: Cause.Cause<E> | undefined
    /** the elements under way, each in a fiber of its own that only this function ends, and awaits */
    const running = new Set<Fiber.RuntimeFiber<unknown, E>>()
    const element = (item: A) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          if (failure !== undefined) return Effect.void
          return Effect.flatMap(Effect.forkDaemon(restore(f(item))), (fiber) => {
            running.add(fiber)
            return restore(Fiber.await(fiber)).pipe(
              // interrupted from outside (a sibling's failure, the caller's): the element ends, an uninterruptible part first, before this does
              Effect.onInterrupt(() => Fiber.interrupt(fiber)),
              Effect.flatMap((exit) => {
                running.delete(fiber)
                if (Exit.isSuccess(exit) || failure !== undefined) return Effect.void
                failure = exit.cause
                return Fiber.interruptAll([...running])
              })
            )
          })
        })
      )
    yield* Effect.forEach(items, element, { concurrency, discard: true })
    if (failure !== undefined) return yield* Effect.failCause(failure)
  })
