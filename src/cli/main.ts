/** The chain-lake CLI: parses flags, builds layers and calls the library. */
import { Command, ValidationError } from "@effect/cli"
// the subpaths: the package index loads its HTTP server, sockets and workers too (~0.5 s of start-up)
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Cause, Console, Effect, Exit } from "effect"
import { redactStandardStreams, rememberGivenSecrets, stderrAsJsonLines, wantsJsonLogs } from "./output.js"
import { demoCommand } from "./demo.js"
import { choiceFlags, helpWidth, renderHelp, type AnyCommand } from "./help.js"
import { ownFlags, stdinLast, unknownFlag } from "./argv.js"
import { devnetCommand } from "./devnet.js"
import { exportCommand } from "./export.js"
import { catalogCommand, queryCommand, reportCommand } from "./query.js"
import { sampleCommand } from "./sample.js"
import { bridgeCommand } from "./bridge.js"
import { trackCommand } from "./track.js"
import { publishCommand, validateCommand } from "./publish.js"
import { verifyCommand } from "./verify.js"
import { compactCommand } from "./compact.js"
import { rollbackCommand } from "./rollback.js"
import { runCommand } from "./run.js"
import { schemaCommand } from "./schema.js"
import { processStop, runMain } from "./runMain.js"
import { StopSignal } from "../stop/StopSignal.js"
import { LockWaits } from "../lake/lock.js"

const commands = [
  runCommand,
  exportCommand,
  sampleCommand,
  bridgeCommand,
  trackCommand,
  queryCommand,
  schemaCommand,
  catalogCommand,
  reportCommand,
  verifyCommand,
  compactCommand,
  rollbackCommand,
  publishCommand,
  validateCommand,
  devnetCommand,
  demoCommand
] as const
/** The command `name` names, if it names one. */
const commandNamed = (name: string | undefined): AnyCommand | undefined =>
  (commands as ReadonlyArray<AnyCommand>).find((c) => [...Command.getNames(c)].includes(name ?? ""))
/*
 * What @effect/cli says about flags it cannot parse (several lines, no flag name: "'abc' is not a
 * integer") is held back and said as one line instead (cliProblem). It prints before any handler
 * runs; once one runs (the flags parsed), the commands' own messages go straight through.
 */
let flagsParsed = false
const heldBack: Array<string> = []

const root = Command.make("chain-lake").pipe(
  Command.withDescription("Export a rollup chain's indexer and router APIs to Parquet and query them with DuckDB"),
  Command.withSubcommands(commands),
  Command.transformHandler((handler) =>
    Effect.zipRight(
      Effect.sync(() => (flagsParsed = true)),
      handler
    )
  )
)

/** What @effect/cli printed before any handler ran, as one line. */
const heldBackText = (): string =>
  heldBack
    .join("\n")
    .replace(/\x1b\[[0-9;]*m/g, "")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join("; ")
    .replace(/\bis not a integer\b/g, "is not an integer")

/** @effect/cli's complaint (or `text`) as one line: which flag, what was wrong, where to look. */
const cliProblem = (args: ReadonlyArray<string>, text = heldBackText()): string => {
  const command = commandNamed(args[0])
  const sub = command ? ` ${args[0]}` : ""
  // the flag whose value was refused: the one before a value the message quotes, or the choice
  // flag whose values the message lists ("Expected one of the following cases: fail, quarantine")
  const value = /'([^']*)'/.exec(text)?.[1]
  const at = value === undefined ? -1 : valueAt(args, value, text, command)
  const cases = /following cases: (.*)$/.exec(text.split("; ")[0])?.[1]
  const choice = cases && command ? [...choiceFlags(command)].find(([, values]) => values.join(", ") === cases)?.[0] : undefined
  const given = choice ? args[args.indexOf(choice) + 1] : undefined
  const flag =
    at > 0 && args[at - 1].startsWith("--") ? `${args[at - 1]}: ` : choice ? `${choice}${given !== undefined ? ` "${given}"` : ""}: ` : ""
  if (!command && args[0] !== undefined && !args[0].startsWith("-") && text.startsWith("Invalid subcommand")) {
    const near = nearest(
      args[0],
      [...text.matchAll(/'([a-z-]+)'/g)].map((m) => m[1])
    )
    return `no command "${args[0]}"${near ? `: did you mean ${near}?` : ""} (chain-lake --help lists the commands)`
  }
  const unknown = /Received unknown argument: '(--[^']+)'/.exec(text)?.[1]
  const near =
    unknown && command
      ? nearest(
          unknown.split("=")[0],
          [...renderHelp(command, [args[0]], 200).matchAll(/^ {2}(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1])
        )
      : undefined
  // a flag of the command, given again
  const times = (f: string) => args.filter((a) => a === f || a.startsWith(`${f}=`)).length
  // (the parser names either the repeated flag or the value after it)
  const repeated = unknown && near === unknown.split("=")[0] ? near : at > 0 && args[at - 1].startsWith("--") ? args[at - 1] : undefined
  if (repeated && times(repeated) > 1) return `${repeated} is given more than once: give it once (chain-lake${sub} --help lists the flags)`
  return `${flag}${text || "the command line could not be read"}${near ? `: did you mean ${near}?` : ""} (chain-lake${sub} --help lists the ${sub ? "flags" : "commands"})`
}

/**
 * Where in `args` the value a message quotes stands: where it is given to a flag of the kind the
 * message expects (a FILE flag for "to be a regular file", a DIR flag for "to be a directory") when
 * it is given to several (`query --data D --output D` blamed --data, given first), else its first place.
 */
const valueAt = (args: ReadonlyArray<string>, value: string, text: string, command: ReturnType<typeof commandNamed>): number => {
  const first = args.indexOf(value)
  const kind = /to be a regular file/.test(text) ? "FILE" : /to be a directory/.test(text) ? "DIR" : undefined
  if (kind === undefined || command === undefined) return first
  const ofKind = new Set(
    [...renderHelp(command, [args[0]], 200).matchAll(new RegExp(`^ {2}(--[a-z][a-z0-9-]*) ${kind}\\b`, "gm"))].map((m) => m[1])
  )
  const at = args.findIndex((a, i) => a === value && i > 0 && ofKind.has(args[i - 1]))
  return at > 0 ? at : first
}

/** The name closest to a mistyped one (`--dataset` → `--datasets`, `expor` → `export`): at most 2 edits, or one a prefix of the other. */
const nearest = (typed: string, names: ReadonlyArray<string>): string | undefined => {
  const scored = [...new Set(names)]
    .map((name) => ({ name, d: name === typed ? 0 : name.startsWith(typed) || typed.startsWith(name) ? 1 : editDistance(typed, name) }))
    .filter((x) => x.d <= 2)
  return scored.sort((a, b) => a.d - b.d)[0]?.name
}
const editDistance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]
}

const cli = Command.run(root, { name: "chain-lake", version: "0.1.0" })

/** The last resort: what failed, in one line, and exit 1. */
const oneLine = (e: unknown) => {
  const o = (typeof e === "object" && e !== null ? e : {}) as {
    _tag?: string
    message?: unknown
    pathOrDescriptor?: unknown
    description?: string
  }
  // a path a flag names (--out, --db, --output) that cannot be used, as @effect/platform says it
  const message =
    o._tag === "SystemError" && o.pathOrDescriptor !== undefined
      ? `cannot use ${String(o.pathOrDescriptor)}: ${o.description ?? String(o.message)}`
      : o.message !== undefined
        ? String(o.message)
        : String(e)
  return Console.error(`chain-lake: error: ${message.split("\n")[0]}`).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = 1))))
}

/** `--help` (or no command at all) is answered by help.ts, readable in a terminal and in a pipe. */
const helpFor = (args: ReadonlyArray<string>): string | undefined => {
  const flags = args.slice(0, args.includes("--") ? args.indexOf("--") : undefined)
  if (args.length > 0 && !flags.includes("--help") && !flags.includes("-h")) return undefined
  const sub = commandNamed(args[0])
  return sub ? renderHelp(sub, [args[0]], helpWidth()) : renderHelp(root, [], helpWidth(), commands)
}

/**
 * Tests only: milliseconds a stop's clean-up takes at least, standing in for one stuck on the file
 * system, so that a test's second signal lands in it (test/engine/export-resume.test.ts).
 */
const testStuckCleanup = Effect.promise(() => {
  const ms = Number(process.env.CHAIN_LAKE_TEST_STOP_CLEANUP_MS)
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()
})

// before anything prints: every line out is redacted (output.ts), knowing the secrets given
redactStandardStreams()
const args = process.argv.slice(2)
rememberGivenSecrets(args, process.env)
if (wantsJsonLogs(args, process.env)) stderrAsJsonLines()
const command = commandNamed(args[0])
const help = helpFor(args)
const unknown = help === undefined ? unknownFlag(args, command) : undefined
if (help !== undefined) process.stdout.write(help + "\n")
else if (unknown !== undefined) {
  process.stderr.write(`chain-lake: error: ${cliProblem(args, `Received unknown argument: '${unknown}'`)}\n`)
  process.exitCode = 2
} else {
  Effect.flatMap(Console.consoleWith(Effect.succeed), (console) =>
    cli([...process.argv.slice(0, 2), ...stdinLast(ownFlags(args, command), command)]).pipe(
      Effect.withConsole({
        ...console,
        error: (...args: ReadonlyArray<unknown>) =>
          flagsParsed ? console.error(...args) : Effect.sync(() => void heldBack.push(args.map(String).join(" ")))
      }),
      Effect.onInterrupt(() => testStuckCleanup),
      // Ctrl-C and SIGTERM ask the command to stop (runMain.ts)
      Effect.provideService(StopSignal, processStop),
      // a wait for another writer's lock is said once it lasts
      Effect.provideService(LockWaits, (line) => process.stderr.write(`chain-lake: ${line}\n`))
    )
  ).pipe(
    Effect.catchTag("UserError", (e) =>
      Console.error(`chain-lake: error: ${e.message}`).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = e.exitCode ?? 1))))
    ),
    Effect.catchIf(ValidationError.isValidationError, () =>
      Console.error(`chain-lake: error: ${cliProblem(args)}`).pipe(Effect.zipRight(Effect.sync(() => (process.exitCode = 2))))
    ),
    // anything else (a path a flag names that cannot be used, a failure no command described): one
    // line, never a stack trace
    Effect.catchAll((e) => oneLine(e)),
    Effect.catchAllDefect((e) => oneLine(e)),
    Effect.provide(NodeContext.layer),
    runMain({
      // stopped by Ctrl-C (or SIGTERM): 130, as a shell reports a program ended by SIGINT, so that
      // scripts never read an interrupted run as a finished one; other failures 1; a success exits
      // by itself, with the code a command set (process.exitCode)
      teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) ? 0 : Cause.isInterruptedOnly(exit.cause) ? 130 : 1)
    })
  )
}
