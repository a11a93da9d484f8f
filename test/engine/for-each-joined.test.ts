/**
 * The run's tasks end before the run does (src/engine/forEachJoined.ts): Effect 3.22's
 * `Effect.forEach` with bounded concurrency returned as soon as a task failed while others waited
 * to start, with a sibling still inside its uninterruptible commit; the run's scope then deleted
 * the staging folder under it, and the manifest listed a file that never arrived (found by an
 * adversary's load-balanced indexer: 3 runs in 53).
 */
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { forEachJoined } from "../../src/engine/forEachJoined.js"

/** Tasks: a quick one, one whose uninterruptible part (a commit) ends after `commitMs`, one failing after 30 ms, and more waiting. */
const scenario = () => {
  const log: Array<string> = []
  const note = (m: string) => Effect.sync(() => log.push(m))
  const quick = Effect.zipRight(Effect.sleep(5), note("quick"))
  const committing = Effect.zipRight(Effect.sleep(10), Effect.uninterruptible(Effect.zipRight(Effect.sleep(150), note("commit done"))))
  const failing = Effect.zipRight(Effect.sleep(30), Effect.fail("boom" as const))
  return { log, note, tasks: [quick, committing, failing, quick, quick, quick] as ReadonlyArray<Effect.Effect<void, "boom">> }
}

describe("forEachJoined", () => {
  it("Effect.forEach itself returns while a task's uninterruptible commit is under way (the Effect behaviour this guards against)", async () => {
    const { log, tasks } = scenario()
    const exit = await Effect.runPromiseExit(Effect.forEach(tasks, (t) => t, { concurrency: 2, discard: true }))
    expect(exit._tag).toBe("Failure")
    // (if a later Effect waits for it, forEachJoined is no longer needed: this test says so)
    expect(log).not.toContain("commit done")
    await new Promise((resolve) => setTimeout(resolve, 250))
    expect(log).toContain("commit done")
  })

  it("fails with the first failure only once the commit under way has ended, and starts nothing after it", async () => {
    const { log, tasks } = scenario()
    const exit = await Effect.runPromiseExit(forEachJoined(tasks, (t) => t, 2))
    expect(exit._tag).toBe("Failure")
    expect(String(exit._tag === "Failure" ? exit.cause : "")).toMatch(/boom/)
    expect(log).toContain("commit done")
    // the quick task ran before the failure; none of the three after it started
    expect(log.filter((m) => m === "quick")).toHaveLength(1)
  })

  it("interrupted from outside (Ctrl-C), it ends once the commit under way has ended", async () => {
    const { log, note, tasks } = scenario()
    await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(forEachJoined([tasks[1], tasks[0], tasks[0]], (t) => t, 2))
        yield* Effect.sleep(40)
        yield* Fiber.interrupt(fiber)
        yield* note("interrupted")
      })
    )
    expect(log.indexOf("commit done")).toBeGreaterThanOrEqual(0)
    expect(log.indexOf("commit done")).toBeLessThan(log.indexOf("interrupted"))
  })

  it("interrupted from outside (Ctrl-C), the caller's finalizers (the run's report, its staging folder) run only once the commit under way has ended (they ran first: a race's fibers were awaited only when the caller's fiber ended)", async () => {
    const { log, note, tasks } = scenario()
    await Effect.runPromise(
      Effect.gen(function* () {
        const run = forEachJoined([tasks[1], tasks[0], tasks[0]], (t) => t, 2).pipe(Effect.onInterrupt(() => note("the run's report")))
        const fiber = yield* Effect.fork(run)
        yield* Effect.sleep(40)
        yield* Fiber.interrupt(fiber)
      })
    )
    expect(log.filter((m) => m !== "quick")).toEqual(["commit done", "the run's report"])
  })

  it("runs every task at most `concurrency` at once when none fails", async () => {
    let running = 0
    let most = 0
    const task = Effect.acquireUseRelease(
      Effect.sync(() => (most = Math.max(most, ++running))),
      () => Effect.sleep(5),
      () => Effect.sync(() => running--)
    )
    const exit = await Effect.runPromiseExit(
      forEachJoined(
        Array.from({ length: 12 }, () => task),
        (t) => t,
        3
      )
    )
    expect(exit._tag).toBe("Success")
    expect(most).toBe(3)
  })
})
