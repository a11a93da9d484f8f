/**
 * The CLI's runMain: @effect/platform-node's, with its signals handled as a data tool's user
 * expects. The first Ctrl-C (or SIGTERM) asks the command to stop (StopSignal): an export's
 * shards commit what they read and end, then it ends as interrupted (files being written are
 * dropped, the lock is released, an interrupted run report is written); a command with no part
 * that heeds a stop just then is interrupted at once. A second signal ends the process at once, as
 * a kill does (commits are atomic, a dead writer's lock is taken over), so that a clean-up stuck
 * on the file system cannot keep a process running that the user asked twice to stop.
 */
import { makeRunMain } from "@effect/platform/Runtime"
import { makeStopSignal } from "../stop/StopSignal.js"
import { stderrIsTerminal } from "./progress.js"

/** What the first Ctrl-C (or SIGTERM) prints, before the command stops. */
const FIRST_SIGNAL = "chain-lake: stopping (Ctrl-C again stops at once)"
const SECOND_SIGNAL =
  "chain-lake: stopped at once (second signal): every file committed so far is kept; run the same command again to resume"

/** What a signal after the run's end says while its output is still on its way (best effort: stderr may be the slow one). */
const CUT_OUTPUT =
  "chain-lake: stopped while its output was still being written (a slow reader): what it printed is cut short; the run itself had ended"

/** The process's stop signal: what the CLI's commands run with (main.ts provides it). */
export const { signal: processStop, ask: askProcessStop } = makeStopSignal({
  // (tests only: a shorter grace, so that a test of a stop that waits on a silent server ends in seconds)
  graceMs: Number(process.env.CHAIN_LAKE_TEST_STOP_GRACE_MS) || undefined,
  late: (ms) =>
    process.stderr.write(
      `chain-lake: the shards' commits have not ended ${ms / 1000} s after the stop (the indexer does not answer their checks, or another writer holds the lake's lock?): stopping without them\n`
    )
})

export const runMain = makeRunMain(({ fiber, teardown }) => {
  const keepAlive = setInterval(() => {}, 2 ** 31 - 1)
  let signals = 0
  // the run's exit code once it has ended (Node drains its output before it exits)
  let ended: number | undefined
  const onSignal = () => {
    // a signal after the run ended stops nothing: the process exits with the run's code, as it was
    // about to, unless its output is still on its way (a slow reader of a pipe): that is cut, 130
    if (ended !== undefined) {
      if (!process.stdout.writableLength && !process.stderr.writableLength) process.exit(ended)
      process.stderr.write(`${CUT_OUTPUT}\n`)
      process.exit(130)
    }
    // said at once, so that a user (or a test) knows the signal was taken, and what a second one does
    if (++signals === 1) {
      // on a terminal, from the line's start: a line redrawn in place (sample-routes' round under way) is not left under it
      process.stderr.write((stderrIsTerminal() ? "\r\x1b[K" : "") + FIRST_SIGNAL + "\n")
      if (!askProcessStop()) fiber.unsafeInterruptAsFork(fiber.id())
      return
    }
    process.stderr.write(SECOND_SIGNAL + "\n")
    process.exit(130)
  }
  // kept until the process exits: a signal in the instant between the run's end and the exit would
  // otherwise kill it (the default action), a complete run reading as killed. They take over from
  // those bin/chain-lake.mjs set while the CLI loaded, added before those go: a signal that came
  // while it loaded and waits for the event loop is dropped when a signal has no listener left
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  const whileStarting = (globalThis as Record<symbol, unknown>)[Symbol.for("chain-lake/whileStarting")]
  if (typeof whileStarting === "function")
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.removeListener(signal, whileStarting as () => void)
  fiber.addObserver((exit) => {
    clearInterval(keepAlive)
    // a command that failed after a first signal (a commit of the stop's refused) set its code
    // (process.exitCode) and ended: that code, never 0
    teardown(exit, (code) => {
      const final = code !== 0 ? code : Number(process.exitCode ?? 0)
      if (signals > 0 || final !== 0) process.exit(final)
      ended = final
      // exits by process.exit once the output is written (nothing left to do: beforeExit): Node's
      // own exit frees its environment after 'exit', which puts back the signals' default action
      // (~20 ms in which a Ctrl-C kills the process)
      process.once("beforeExit", () => process.exit(final))
    })
  })
})
