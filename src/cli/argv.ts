/**
 * What @effect/cli is handed, and what it is not: the command line as typed (`args`, the command's
 * name first), rewritten where @effect/cli would read it otherwise than the command's help says.
 */
import { flagsOf, takesArguments, type AnyCommand } from "./help.js"

/** A flag as typed: `--name`, `--name=value` or `-x`, one word (SQL that opens with a `--` comment has a space or a line break). */
const FLAG_LIKE = /^--?[A-Za-z][A-Za-z0-9-]*(=[^\n]*)?$/

/** The places in `args` (the command's, before `--`) where a flag may stand: not where the value of the flag before it does. */
const flagPlaces = (args: ReadonlyArray<string>, command: AnyCommand): Array<number> => {
  const takesValue = new Set(flagsOf(command).flatMap((f) => (f.takesValue ? f.names : [])))
  const end = args.includes("--") ? args.indexOf("--") : args.length
  return Array.from({ length: end - 1 }, (_, i) => i + 1).filter((i) => i === 1 || !takesValue.has(args[i - 1].toLowerCase()))
}

/**
 * An unknown flag where a command takes an argument (query's SQL, validate's DEST, run's
 * pipeline): @effect/cli took it for the argument (`query --nope` ran "--nope" as SQL), so it is
 * refused here, as it is where the command takes none.
 */
export const unknownFlag = (args: ReadonlyArray<string>, command: AnyCommand | undefined): string | undefined => {
  if (command === undefined || !takesArguments(command)) return undefined
  const known = new Set(flagsOf(command).flatMap((f) => f.names))
  return flagPlaces(args, command)
    .map((i) => args[i])
    .find((a) => FLAG_LIKE.test(a) && !known.has(a.split("=")[0].toLowerCase()))
}

/** The flags @effect/cli matches in every command before the command's own (as its built-ins). */
const BUILT_IN_FLAGS = ["--version", "--wizard", "--completions", "--log-level"]

/**
 * A command's own flag named like a built-in (publish's --version) is handed to @effect/cli under
 * its second name (--release-version): under its first the built-in won, and `publish --version
 * v1` printed chain-lake's version and exited 0. Such a flag must be declared with a second name.
 */
export const ownFlags = (args: ReadonlyArray<string>, command: AnyCommand | undefined): ReadonlyArray<string> => {
  if (command === undefined) return args
  const renamed = new Map(
    flagsOf(command).flatMap(({ names }) => {
      const other = names.find((n) => n.startsWith("--") && !BUILT_IN_FLAGS.includes(n))
      return other === undefined ? [] : names.filter((n) => BUILT_IN_FLAGS.includes(n)).map((n) => [n, other] as const)
    })
  )
  const places = new Set(flagPlaces(args, command))
  return args.map((a, i) => {
    const [flag, ...value] = a.split("=")
    const other = places.has(i) ? renamed.get(flag.toLowerCase()) : undefined
    return other === undefined ? a : [other, ...value].join("=")
  })
}

/**
 * A lone `-` (query's SQL from stdin) is handed to @effect/cli after the flags: it stops looking
 * for a flag at a word that starts with `-` and is not one, so `query - --format csv` refused
 * --format.
 */
export const stdinLast = (args: ReadonlyArray<string>, command: AnyCommand | undefined): ReadonlyArray<string> => {
  if (command === undefined || !takesArguments(command)) return args
  const places = new Set(flagPlaces(args, command))
  const isStdin = (a: string, i: number) => a === "-" && places.has(i)
  const rest = args.filter((a, i) => !isStdin(a, i))
  const end = rest.includes("--") ? rest.indexOf("--") : rest.length
  return [...rest.slice(0, end), ...args.filter(isStdin), ...rest.slice(end)]
}
