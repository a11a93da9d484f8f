/**
 * `--help`, written for people: a command's one-line purpose, its usage as typed
 * (`chain-lake export …`), each flag with what it takes, its description and its default, and
 * examples; plain text wrapped to the terminal (80 columns when not a terminal), never colour.
 * @effect/cli's own help ran to ~350 columns, put ANSI codes into pipes, showed no defaults and
 * repeated "A user-defined piece of text. / This setting is optional." under every flag; its
 * HelpDoc still supplies the flags and descriptions, so nothing here repeats a flag's declaration.
 */
import { CliConfig, Command, type HelpDoc } from "@effect/cli"
import { viewNames } from "../analytics/schema.js"
import { DATASETS } from "../datasets/index.js"

/** Examples shown under each command's help (a newcomer copies these first). */
export const EXAMPLES: Readonly<Record<string, ReadonlyArray<string>>> = {
  "": [
    "chain-lake demo",
    "chain-lake export --indexer-url https://indexer.example.com --datasets blocks,txs",
    'chain-lake query "SELECT count(*) FROM blocks"',
    "chain-lake export --help"
  ],
  run: [
    "chain-lake run daily-snapshot --indexer-url https://indexer.example.com",
    "chain-lake run ./my-pipeline.ts --schedule",
    "chain-lake run full-history --devnet --out /tmp/lake"
  ],
  export: [
    "chain-lake export --indexer-url https://indexer.example.com --datasets blocks,txs --from-height 1 --to-height 100000",
    "chain-lake export --devnet --devnet-blocks 500 --out /tmp/devnet-lake",
    "chain-lake export --indexer-url https://indexer.example.com --follow --poll 5s",
    "CHAIN_LAKE_INDEXER_HEADERS='x-api-key: …' chain-lake export --indexer-url https://indexer.example.com --out s3://bucket/lake"
  ],
  "sample-routes": [
    "chain-lake sample-routes --router-url https://router.example.com --every 5m",
    "chain-lake sample-routes --devnet --plan pipelines/route-quotes.json --count 3"
  ],
  // addresses the embedded devnet's router takes (any well-formed address of each chain's prefix)
  bridge: [
    "chain-lake bridge --devnet --from noble-1:uusdc --to interwoven-1:uinit --amount 1000000 --address noble-1=noble1qyqszqgpqyqszqgpqyqszqgpqyqszqgp2q8dz8 --address interwoven-1=init1qyqszqgpqyqszqgpqyqszqgpqyqszqgp2q8dz8"
  ],
  track: ["chain-lake track --router-url https://router.example.com --tx-hash ABC… --chain-id noble-1"],
  // run as printed by cli-query.test (in double quotes, the shell took "$min" for its own variable)
  query: [
    'chain-lake query "SELECT height, tx_count FROM blocks ORDER BY height DESC LIMIT 5"',
    "chain-lake query --param min=100 'SELECT * FROM txs WHERE height >= $min' --format csv --output txs.csv",
    "chain-lake query --format markdown - < q.sql"
  ],
  schema: ["chain-lake schema", "chain-lake schema --dataset blocks", "chain-lake schema --format json"],
  catalog: ["chain-lake catalog --data data --db lake.duckdb"],
  report: ["chain-lake report --data data --out report.html"],
  verify: ["chain-lake verify --data data", "chain-lake verify --data data --indexer-url https://indexer.example.com"],
  publish: ["chain-lake publish --data data --to releases --name mychain --version 2026-11-23"],
  validate: ["chain-lake validate releases/mychain/2026-11-23"],
  devnet: ["chain-lake devnet --port 8080 --block-time 500", "chain-lake devnet --faults heavy --latency-ms 20"],
  demo: ["chain-lake demo", "npm start"]
}

/** @effect/cli's sentences that say nothing a flag's placeholder does not (or that are wrong for us). */
const BOILERPLATE =
  /^(A user-defined piece of text\.|An integer\.|A true or false value\.|A file\.|A directory\.|A floating point number\.|This setting is optional\.|One of the following: .*)$/

/** Built-in flags of @effect/cli that chain-lake does not advertise. */
const HIDDEN = new Set(["--wizard", "--completions", "--log-level"])

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- commands of every handler type
// biome-ignore lint/suspicious/noExplicitAny: any command of the tree, whatever its name, config, environment and error
export type AnyCommand = Command.Command<any, any, any, any>

const PLACEHOLDER: Readonly<Record<string, string>> = { text: "TEXT", integer: "N", file: "FILE", directory: "DIR", float: "X" }

/** A placeholder that says what a text flag takes, by its name. */
const placeholderOf = (name: string, type: string): string => {
  const repeated = type.endsWith("...")
  const base = repeated ? type.slice(0, -3) : type
  const named =
    base !== "text"
      ? undefined
      : /-url$|endpoint$/.test(name)
        ? "URL"
        : /header$/.test(name)
          ? "'NAME: VALUE'"
          : /^--(poll|every|poll-\w+|near-window)$/.test(name)
            ? "DURATION"
            : /^--(datasets|denoms)$/.test(name)
              ? "LIST"
              : undefined
  return named ?? PLACEHOLDER[base] ?? base.replace(/ \| /g, "|")
}

/** The plain text of a span or doc. */
const textOf = (d: unknown): string => {
  const n = d as { _tag: string; value?: unknown; left?: unknown; right?: unknown; uri?: string }
  switch (n._tag) {
    case "Text":
    case "Code":
      return String(n.value)
    case "Sequence":
      return textOf(n.left) + textOf(n.right)
    case "Highlight":
    case "Strong":
    case "Weak":
    case "Paragraph":
      return textOf(n.value)
    case "URI":
      return String(n.uri)
    default:
      return ""
  }
}

/** The paragraphs under one definition, and the description lists (flag, paragraphs) of a doc. */
const paragraphs = (d: unknown): Array<string> => {
  const n = d as { _tag: string; value?: unknown; left?: unknown; right?: unknown }
  if (n._tag === "Paragraph") return [textOf(n.value)]
  if (n._tag === "Sequence") return [...paragraphs(n.left), ...paragraphs(n.right)]
  return []
}

interface Entry {
  readonly term: string
  readonly text: string
}

/** The DESCRIPTION paragraph, and the ARGUMENTS and OPTIONS entries, of a command's HelpDoc. */
const sections = (doc: HelpDoc.HelpDoc) => {
  const found = { description: "", arguments: [] as Array<Entry>, options: [] as Array<Entry> }
  let header = ""
  const visit = (d: unknown) => {
    const n = d as {
      _tag: string
      value?: unknown
      left?: unknown
      right?: unknown
      definitions?: ReadonlyArray<readonly [unknown, unknown]>
    }
    if (n._tag === "Sequence") {
      visit(n.left)
      visit(n.right)
    } else if (n._tag === "Header") header = textOf(n.value)
    else if (n._tag === "Paragraph" && header === "DESCRIPTION") found.description ||= textOf(n.value)
    else if (n._tag === "DescriptionList") {
      const list = header === "ARGUMENTS" ? found.arguments : found.options
      for (const [term, desc] of n.definitions ?? []) list.push({ term: textOf(term), text: paragraphs(desc).join("\n") })
    }
  }
  visit(doc)
  return found
}

/** Defaults given with Options.withDefault, by flag name (booleans, false by default, left out). */
const defaultsOf = (command: unknown): Map<string, string> => {
  const defaults = new Map<string, string>()
  const seen = new Set<unknown>()
  const firstName = (o: unknown): string | undefined => {
    const n = o as { _tag?: string; name?: string; options?: unknown; left?: unknown }
    if (!n || typeof n !== "object") return undefined
    return n._tag === "Single" ? n.name : (firstName(n.options) ?? firstName(n.left))
  }
  const walk = (o: unknown) => {
    if (!o || typeof o !== "object" || seen.has(o)) return
    seen.add(o)
    const n = o as Record<string, unknown>
    if (n._tag === "WithDefault") {
      const name = firstName(n.options)
      const fallback = n.fallback
      const shown = typeof fallback === "string" || typeof fallback === "number" ? String(fallback) : undefined
      if (name && shown !== undefined) defaults.set(`--${name}`, shown === "" ? '""' : shown)
    }
    for (const k of ["descriptor", "command", "options", "left", "right", "args"]) walk(n[k])
  }
  walk(command)
  return defaults
}

/** `text` wrapped to `width`, each line after the first indented by `indent` spaces. */
export const wrap = (text: string, width: number, indent: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line) lines.push(line)
  return lines.map((l) => " ".repeat(indent) + l)
}

/** One flag: its term as typed (`--page-size N`, `--on-invalid fail|quarantine`), then its description, what it takes and its default. */
const describeOption = (entry: Entry, defaults: ReadonlyMap<string, string>): Entry | undefined => {
  // a second long name (publish's --version, --release-version) is kept in the term
  const flag = /^\(?(-\w, )?(--[a-z0-9-]+)((?:, --[a-z0-9-]+)*)\)?/.exec(entry.term)
  if (!flag || HIDDEN.has(flag[2])) return undefined
  const rest = entry.term.slice(flag[0].length).replace(/\)$/, "").trim()
  const placeholder = placeholderOf(flag[2], rest)
  const lines = entry.text.split("\n").filter(Boolean)
  const optional = lines.includes("This setting is optional.")
  const repeated = lines.some((l) => /may be repeated/.test(l))
  const own = lines.filter((l) => !BOILERPLATE.test(l) && !/may be repeated/.test(l))
  const isBoolean = entry.text.includes("A true or false value.")
  const name = flag[2]
  const notes = [
    ...(repeated && !own.join(" ").includes("repeatable") ? ["repeatable"] : []),
    // a description that speaks of its default already says it better than the raw value
    ...(defaults.has(name) && !/\bdefault\b/.test(own.join(" "))
      ? [`default: ${defaults.get(name)}`]
      : defaults.has(name)
        ? []
        : !optional && !isBoolean && !repeated && name !== "--help"
          ? ["required"]
          : [])
  ]
  const text = [own.join(" "), notes.length ? `(${notes.join("; ")})` : ""].filter(Boolean).join(" ")
  return { term: `${flag[1] ?? ""}${name}${flag[3]}${placeholder && !isBoolean ? ` ${placeholder}` : ""}`, text }
}

const builtIns = (): Array<Entry> => [
  { term: "-h, --help", text: "show this help" },
  { term: "--version", text: "print chain-lake's version" }
]

/** Help for `chain-lake <name>` (or the root's, with `subcommands` listed), `width` columns at most. */
export const renderHelp = (
  command: AnyCommand,
  path: ReadonlyArray<string>,
  width: number,
  subcommands: ReadonlyArray<AnyCommand> = []
): string => {
  const { description, arguments: args, options } = sections(Command.getHelp(command, CliConfig.defaultConfig))
  const defaults = defaultsOf(command)
  // the built-ins are listed below; a command's own --version (publish's release version) stays
  const builtIn = (o: Entry) =>
    /^\(?(-h, )?--help\b/.test(o.term) || (/^--version\b/.test(o.term) && o.text.includes("Show the version of the application"))
  const flags = options.filter((o) => !builtIn(o)).flatMap((o) => describeOption(o, defaults) ?? [])
  const out: Array<string> = []
  const name = ["chain-lake", ...path].join(" ")
  out.push(...wrap(`${name} — ${description}`, width, 0), "")
  const argTerms = args.map((a) => a.term.split(" ")[0])
  out.push(
    "Usage:",
    ...wrap(
      `${name}${subcommands.length ? " COMMAND" : ""}${flags.length ? " [options]" : ""}${argTerms.map((a) => ` ${a}`).join("")}`,
      width,
      2
    ),
    ""
  )
  const list = (title: string, entries: ReadonlyArray<Entry>) => {
    if (entries.length === 0) return
    out.push(`${title}:`)
    for (const e of entries) out.push(`  ${e.term}`, ...wrap(e.text, width, 6))
    out.push("")
  }
  if (subcommands.length)
    list(
      "Commands",
      subcommands.map((c) => {
        const cName = [...Command.getNames(c)][0]
        return { term: cName, text: sections(Command.getHelp(c, CliConfig.defaultConfig)).description }
      })
    )
  list(
    "Arguments",
    args.map((a) => ({
      term: a.term.split(" ")[0],
      text: a.text
        .split("\n")
        .filter((l) => !BOILERPLATE.test(l))
        .join(" ")
    }))
  )
  // (publish's --version is its release's: chain-lake's own is asked at the top level there)
  list("Options", [...flags, ...builtIns().filter((b) => !flags.some((f) => f.term.split(/[ ,]/)[0] === b.term))])
  const more = MORE[path.join(" ")]?.()
  if (more) list(more.title, more.entries)
  const examples = EXAMPLES[path.join(" ")] ?? []
  if (examples.length) {
    out.push("Examples:")
    for (const e of examples) out.push(...wrap(e, width - 2, 2).map((l, i) => (i === 0 ? l : `    ${l.trimStart()}`)))
    out.push("")
  }
  return out.join("\n")
}

/** Sections after the flags, by command: `query` lists the views it reads, each with the question it answers. */
const MORE: Readonly<Record<string, () => { readonly title: string; readonly entries: ReadonlyArray<Entry> }>> = {
  query: () => ({
    title: "Views",
    entries: [
      { term: "one per dataset", text: `${DATASETS.map((d) => d.name).join(", ")} (chain-lake schema lists their columns)` },
      ...viewNames().map((v) => ({ term: v.name, text: v.question }))
    ]
  })
}

/** Each flag of `command` (@effect/cli's built-ins too): its names as typed, and whether it takes a value. */
export const flagsOf = (command: AnyCommand): Array<{ readonly names: ReadonlyArray<string>; readonly takesValue: boolean }> =>
  sections(Command.getHelp(command, CliConfig.defaultConfig)).options.map((o) => {
    const words = o.term.replace(/^\(|\)$/g, "").split(/,? /)
    const names = words.filter((w) => w.startsWith("-"))
    return { names, takesValue: words.length > names.length }
  })

/** Whether `command` takes an argument besides its flags (query's SQL). */
export const takesArguments = (command: AnyCommand): boolean =>
  sections(Command.getHelp(command, CliConfig.defaultConfig)).arguments.length > 0

/** The flags of `command` that take one of a few values, with those values (`--on-invalid` → fail, quarantine). */
export const choiceFlags = (command: AnyCommand): Map<string, ReadonlyArray<string>> =>
  new Map(
    sections(Command.getHelp(command, CliConfig.defaultConfig)).options.flatMap((o) => {
      const m = /^(--[a-z0-9-]+) (\S+(?: \| \S+)+)$/.exec(o.term)
      return m && !HIDDEN.has(m[1]) ? [[m[1], m[2].split(" | ")] as const] : []
    })
  )

/** The width help is wrapped to: the terminal's (at most 100), or 80 when output is not a terminal. */
/** 80 columns, or the terminal's width where it is narrower (at least 40): the same text in a pipe and a terminal (bin/chain-lake.mjs answers --help from the build). */
export const helpWidth = (): number =>
  process.stdout.isTTY && process.stdout.columns && process.stdout.columns < 80 ? Math.max(40, process.stdout.columns) : 80
