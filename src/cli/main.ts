/** The chain-lake CLI: parses flags, builds layers and calls the library. */
import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Console, Effect, Exit } from "effect"
import { demoCommand } from "./demo.js"
import { devnetCommand } from "./devnet.js"
import { exportCommand } from "./export.js"
import { catalogCommand, queryCommand, reportCommand } from "./query.js"
import { sampleCommand } from "./sample.js"
import { bridgeCommand } from "./bridge.js"
import { trackCommand } from "./track.js"
import { publishCommand, validateCommand } from "./publish.js"
import { verifyCommand } from "./verify.js"
import { runCommand } from "./run.js"

const root = Command.make("chain-lake").pipe(
  Command.withDescription("Export a rollup chain's indexer and router APIs to Parquet and query them with DuckDB"),
  Command.withSubcommands([runCommand, exportCommand, sampleCommand, bridgeCommand, trackCommand, queryCommand, catalogCommand, reportCommand, verifyCommand, publishCommand, validateCommand, devnetCommand, demoCommand])
)

const cli = Command.run(root, { name: "chain-lake", version: "0.1.0" })

/** The last resort: what failed, in one line, and exit 1. */
const oneLine = (e: unknown) => {
  const o = (typeof e === "object" && e !== null ? e : {}) as { _tag?: string; message?: unknown; pathOrDescriptor?: unknown; description?: string }
  // a path a flag names (--out, --db, --output) that cannot be used, as @effect/platform says it
  const message =
    o._tag === "SystemError" && o.pathOrDescriptor !== undefined
      ? `cannot use ${String(o.pathOrDescriptor)}: ${o.description ?? String(o.message)}`
      : o.message !== undefined
        ? String(o.message)
        : String(e)
  return Console.error(`chain-lake: error: ${message.split("\n")[0]}`).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = 1))))
}

cli(process.argv).pipe(
  Effect.catchTag("UserError", (e) =>
    Console.error(`chain-lake: error: ${e.message}`).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = e.exitCode ?? 1))))
  ),
  // @effect/cli has already printed what was wrong with the flags
  Effect.catchIf(ValidationError.isValidationError, () => Effect.sync(() => (process.exitCode = 2))),
  // anything else (a path a flag names that cannot be used, a failure no command described): one
  // line, never a stack trace
  Effect.catchAll((e) => oneLine(e)),
  Effect.catchAllDefect((e) => oneLine(e)),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({
    // stopped by Ctrl-C (or SIGTERM): 130, as a shell reports a program ended by SIGINT, so that
    // scripts never read an interrupted run as a finished one; other failures 1; a success exits
    // by itself, with the code a command set (process.exitCode)
    teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? 0 : Cause.isInterruptedOnly(exit.cause) ? 130 : 1)
  })
)
