/** `chain-lake query` and `chain-lake catalog`: SQL over the lake's views, and a catalog file for other clients. */
import { readSize } from "./sizes.js"
import { Args, Command, Options } from "@effect/cli"
import { existsSync } from "node:fs"
import { mkdir, readFile } from "node:fs/promises"
import { dirname, isAbsolute, join, resolve } from "node:path"
import { Console, Duration, Effect, Exit, Option } from "effect"
import { defaultMemoryLimit } from "../lake/writer.js"
import { parseEvery } from "../sampling/sampler.js"
import { landingPath, refuseInsideLake } from "./lakeBounds.js"
import {
  Analytics,
  isLake,
  layerAnalytics,
  type ParamValue,
  type QueryResult,
  type ShownRows,
  type SqlError
} from "../analytics/Analytics.js"
import { writeCatalog } from "../analytics/catalog.js"
import { writeReport } from "../analytics/report.js"
import { UserError } from "./errors.js"
import { answerSink, landing, type Output } from "./answerSink.js"
import { FORMATS, type Format, streamedWriter, TABLE_ROWS, tableWriter } from "./resultFormats.js"
import { shellWord } from "./shellWord.js"
import { isS3Url } from "../s3/s3.js"

const dataOption = Options.directory("data").pipe(Options.withDefault("data"), Options.withDescription("the export folder"))

/**
 * A folder that holds no lake (mistyped, or run from another folder) is an error, not an empty
 * answer; an s3:// address is named as such (it was read as the local folder "s3:/bucket/…").
 */
export const requireLake = (data: string) =>
  isS3Url(data)
    ? Effect.fail(
        new UserError({
          message: `--data ${data}: this command reads a local lake; copy it down first (e.g. aws s3 sync ${data} DIR) and give --data DIR`,
          exitCode: 2
        })
      )
    : isLake(data)
      ? Effect.void
      : Effect.fail(
          new UserError({
            // run from inside the lake (the demo's hints lead there), the default "data" is one level too deep
            message: noLake(data),
            exitCode: 2
          })
        )

/** Why `data` is no lake, in one line: missing, or a folder without a lake's files. */
export const noLake = (data: string) => {
  const what = existsSync(resolve(data)) ? "holds no lake (no _lake.json, no <dataset>/_manifest.json)" : "does not exist"
  return `${resolve(data)} ${what}: ${isLake(".") ? "this folder is a lake itself: give --data ." : "give --data the folder an export wrote"}`
}

/** `name=value`; integers, decimals and true/false are typed, `name:text=value` keeps a string. */
export const parseParam = (text: string): [string, ParamValue] => {
  const eq = text.indexOf("=")
  if (eq < 1) throw new Error(`--param must look like name=value, got "${text}"`)
  const asText = text.slice(0, eq).endsWith(":text")
  const name = text.slice(0, asText ? eq - 5 : eq)
  const raw = text.slice(eq + 1)
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`--param name "${name}" must be a SQL identifier`)
  if (asText) return [name, raw]
  if (/^-?\d+$/.test(raw)) return [name, BigInt(raw)]
  if (/^-?\d+\.\d+$/.test(raw)) return [name, Number(raw)]
  if (raw === "true" || raw === "false") return [name, raw === "true"]
  if (raw === "null") return [name, null]
  return [name, raw]
}

/** Every --param, each name once: a second value for a name is refused (it silently replaced the first). */
export const parseParams = (texts: ReadonlyArray<string>): Record<string, ParamValue> => {
  const params: Record<string, ParamValue> = {}
  for (const text of texts) {
    const [name, value] = parseParam(text)
    if (Object.hasOwn(params, name)) throw new Error(`--param ${name} is given twice: give each parameter once`)
    params[name] = value
  }
  return params
}

/** The time an answer's writes waited on its reader: those done, and since when the one under way waits. */
interface Waits {
  ms: number
  since: number | undefined
}

/**
 * Fails with `timedOut` once `ms` of the query's own time have passed: all of it but `waited()`,
 * the time its answer waited on the reader. Raced against the query, which it interrupts (DuckDB
 * is interrupted as the scope closes, lake/duckdb.ts).
 */
const deadline = (ms: number, waited: () => number, timedOut: UserError): Effect.Effect<never, UserError> => {
  const started = Date.now()
  const check: Effect.Effect<never, UserError> = Effect.suspend(() => {
    const left = ms - (Date.now() - started - waited())
    return left <= 0 ? Effect.fail(timedOut) : Effect.zipRight(Effect.sleep(Duration.millis(left)), check)
  })
  return check
}

/** How an answer is written as its rows come: text for the columns once known, for each chunk of rows, and at the end. */
interface AnswerWriter {
  readonly start: (columns: QueryResult["columns"]) => string
  readonly chunk: (columns: QueryResult["columns"], rows: QueryResult["rows"]) => string
  readonly end: (columns: QueryResult["columns"]) => string
}

/**
 * The table: on a terminal its first TABLE_ROWS rows (no one reads more there; the answer is read
 * no further), saying on stderr where it had more; elsewhere every row, in blocks (resultFormats.ts tableWriter), saying on
 * stderr where a later block widened its columns.
 */
const tableAnswerWriter = (
  onTerminal: boolean
): AnswerWriter & { readonly notes: () => ReadonlyArray<string>; readonly shown?: ShownRows } => {
  const table = tableWriter()
  let total = 0
  let hasMore = false
  return {
    ...(onTerminal ? { shown: { rows: TABLE_ROWS, onMore: () => void (hasMore = true) } } : {}),
    start: () => "",
    chunk: (columns, rows) => {
      const written = onTerminal ? rows.slice(0, Math.max(0, TABLE_ROWS - total)) : rows
      total += rows.length
      return table.chunk(columns, written)
    },
    end: table.end,
    notes: () => [
      ...(hasMore
        ? [`chain-lake: the table shows the first ${TABLE_ROWS} rows; the answer has more: --format csv, json or ndjson writes every row`]
        : []),
      ...(table.widened()
        ? [
            `chain-lake: the table is written ${TABLE_ROWS} rows at a time: later rows widen columns where their values are wider (--format csv or ndjson for a machine)`
          ]
        : [])
    ]
  }
}

/** The answer in `format`, written as its rows come (answerSink.ts); `waits` counts the time the writes waited on the reader. */
const streamedAnswer = (
  sql: string,
  params: Readonly<Record<string, ParamValue>>,
  format: Format,
  output: Output | undefined,
  waits: Waits
) =>
  Effect.gen(function* () {
    const analytics = yield* Analytics
    const table = format === "table" ? tableAnswerWriter(output === undefined && process.stdout.isTTY === true) : undefined
    const writer: AnswerWriter = table ?? streamedWriter(format as Exclude<Format, "table">)
    const sink = answerSink(output)
    const write = async (text: string) => {
      waits.since = Date.now()
      await sink.write(text)
      waits.ms += Date.now() - waits.since
      waits.since = undefined
    }
    let columns: QueryResult["columns"] | undefined
    const take = async (c: QueryResult["columns"], rows: QueryResult["rows"]) => {
      // a reader that went away (`| head`) has what it wanted: DuckDB is stopped
      if (sink.readerGone()) throw new Error("the reader of stdout went away")
      const head = columns === undefined ? writer.start(c) : ""
      columns = c
      await write(head + writer.chunk(c, rows))
    }
    yield* analytics.stream(sql, params, take, table?.shown).pipe(
      Effect.zipRight(
        Effect.tryPromise({ try: () => write(writer.end(columns ?? [])), catch: (e) => new UserError({ message: (e as Error).message }) })
      ),
      Effect.zipRight(sink.done),
      Effect.tap(() =>
        Effect.sync(() => {
          for (const note of table?.notes() ?? []) process.stderr.write(`${note}\n`)
        })
      ),
      Effect.catchIf(
        () => sink.readerGone(),
        () => Effect.void
      ),
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : sink.abandon))
    )
  })

/** A query that is not stopped sooner is stopped after this: `range(1e13)` ran until killed. */
export const QUERY_TIMEOUT = "5m"

/**
 * DuckDB's message, made one line where the user can act on it: a path outside the lake (the
 * sandbox refused it) or a query past its memory; other SQL errors keep DuckDB's own text, which
 * points at the place in the SQL.
 */
const sqlProblem = ({ message, lake }: SqlError, data: string, memoryLimit: string): UserError => {
  const denied = /Permission Error: Cannot access file "([^"]*)"/.exec(message)
  // a relative path is checked as written (file_search_path does not apply in the sandbox)
  if (denied && !isAbsolute(denied[1]))
    return new UserError({
      message: `query reads only the lake, by full paths: "${denied[1]}" is relative; query the views (txs, blocks …) or give the path in full (${join(resolve(data), denied[1])})`,
      exitCode: 2
    })
  if (denied)
    return new UserError({
      message: `query reads only the lake (${resolve(data)}): "${denied[1]}" is outside it; copy what you need into a folder of its own and query it there`,
      exitCode: 2
    })
  if (/^Out of Memory Error/.test(message))
    return new UserError({
      message: `the query needs more memory than --memory-limit ${memoryLimit} (${message.split("\n")[0].replace(/^Out of Memory Error: /, "")}): narrow it, or raise --memory-limit`
    })
  // a lake that cannot be read is no mistake in the query: exit 1, as a run's failures (a path the SQL names that is not there is one: 2)
  return new UserError({ message: sqlErrorLine(message), exitCode: lake ? 1 : 2 })
}

/**
 * DuckDB's error in one line: its first, with the SQL line it points at; a table the lake has
 * not named with what lists the names (DuckDB's own guess is one of its catalog functions).
 */
const sqlErrorLine = (message: string): string => {
  const [first, ...rest] = message.split("\n").map((l) => l.trim())
  const missing = /^Catalog Error: Table with name (\S+) does not exist/.exec(first)
  // (DuckDB always guesses: one that does not start as the name did is no help)
  const near = (g: string | undefined) =>
    g !== undefined && missing !== null && g.slice(0, 3).toLowerCase() === missing[1].slice(0, 3).toLowerCase()
  const guess = rest.map((l) => /^Did you mean "([^"]+)"/.exec(l)?.[1]).find(near)
  if (missing)
    return `no view or table named ${missing[1]} in the lake${guess ? ` (did you mean ${guess}?)` : ""}: SHOW TABLES lists them (README, chain-lake query, says what each view holds)`
  const at = rest.find((l) => /^LINE \d+:/.test(l))
  return at ? `${first} (${at})` : first
}

/** Everything on stdin, as text. */
const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString("utf8")
}

/**
 * The SQL: the argument, or the --file, either `-` for stdin (as `duckdb < q.sql` reads it), one
 * of them only; SQL that is only blanks is no SQL (stdin closed at once ran "" and said nothing).
 */
const sqlOf = (arg: Option.Option<string>, file: Option.Option<string>) =>
  Effect.gen(function* () {
    const bad = (message: string) => new UserError({ message, exitCode: 2 })
    if (Option.isSome(arg) && Option.isSome(file)) return yield* bad("give the SQL as an argument or with --file, not both")
    if (Option.isSome(arg) && arg.value !== "-") return arg.value.trim() === "" ? yield* bad("no SQL: the argument is empty") : arg.value
    const path = Option.isSome(arg) ? "-" : Option.getOrUndefined(file)
    if (path === undefined) return yield* bad('no SQL: pass it as an argument ("SELECT …"), with --file q.sql, or on stdin with -')
    const from = path === "-" ? "stdin" : `--file ${path}`
    const sql = yield* Effect.tryPromise({
      try: () => (path === "-" ? readStdin() : readFile(path, "utf8")),
      catch: (e) => bad(`cannot read ${from}: ${(e as Error).message}`)
    })
    if (sql.trim() === "") return yield* bad(`no SQL: ${from} is empty`)
    return sql
  })

export const queryCommand = Command.make(
  "query",
  {
    data: dataOption,
    sql: Args.text({ name: "SQL" }).pipe(Args.optional, Args.withDescription("the SQL, or - to read it from stdin (or use --file)")),
    file: Options.file("file").pipe(Options.optional, Options.withDescription("read the SQL from a file (- for stdin)")),
    params: Options.text("param").pipe(
      Options.repeated,
      Options.withDescription("name=value, bound to $name (repeatable); name:text=… keeps a string")
    ),
    format: Options.choice("format", FORMATS).pipe(
      Options.withDefault("table" as const),
      Options.withDescription("how the result is written: ndjson is one JSON object a line; markdown a table with | escaped")
    ),
    output: Options.file("output").pipe(
      Options.optional,
      Options.withDescription(
        "write to this file instead of stdout (required for parquet); not among the lake's own files (its dataset folders, manifests, _runs/); its top folder is allowed"
      )
    ),
    memoryLimit: Options.text("memory-limit").pipe(
      Options.withDefault(defaultMemoryLimit()),
      Options.withDescription(
        "the memory DuckDB may use for the query (it spills sorts and joins past it into a temporary folder; what cannot spill fails)"
      )
    ),
    timeout: Options.text("timeout").pipe(
      Options.withDefault(QUERY_TIMEOUT),
      Options.withDescription(
        `how long the query may run before it is stopped, exit 1; the time its output waits on a reader is not counted (e.g. 30s, 10m; 0 for no limit; default ${QUERY_TIMEOUT})`
      )
    )
  },
  (o) =>
    Effect.gen(function* () {
      const bad = (message: string) => new UserError({ message, exitCode: 2 })
      const sql = yield* sqlOf(o.sql, o.file)
      const params = yield* Effect.try({ try: () => parseParams(o.params), catch: (e) => bad((e as Error).message) })
      if (o.format === "parquet" && Option.isNone(o.output)) return yield* bad("--format parquet needs --output FILE")
      const memory = readSize("--memory-limit", o.memoryLimit, { atLeast: "128MB", examples: "512MB, 2GB" })
      if (typeof memory === "string") return yield* bad(memory)
      const timeout = /^\s*0\s*$/.test(o.timeout) ? Duration.zero : parseEvery(o.timeout)
      if (timeout === undefined) return yield* bad(`--timeout must look like 30s, 10m or 1h (0 for no limit), got "${o.timeout}"`)
      yield* requireLake(o.data)
      if (Option.isSome(o.output)) yield* refuseInsideLake("--output", o.output.value, o.data)
      const timedOut = new UserError({
        message: `the query ran past --timeout ${o.timeout.trim()} and was stopped: narrow it, or give a longer --timeout (0 for no limit)`
      })
      // the time its answer waited on a reader (a pager, a slow pipe) is not the query's
      const waits: Waits = { ms: 0, since: undefined }
      const waited = () => waits.ms + (waits.since === undefined ? 0 : Date.now() - waits.since)
      const limited = <A, E, R>(run: Effect.Effect<A, E, R>) =>
        Duration.toMillis(timeout) === 0 ? run : Effect.raceFirst(run, deadline(Duration.toMillis(timeout), waited, timedOut))
      // where the output lands, links and `..` walked as the kernel walks them: the one file outside the lake DuckDB may open
      const output = Option.getOrUndefined(Option.map(o.output, (named) => ({ named, at: landingPath(named) })))
      // DuckDB writes parquet itself: to a part file beside --output (given: checked above), which lands when the copy ends
      const answer = o.format === "parquet" ? { parquet: landing(Option.getOrThrow(Option.fromNullable(output))) } : { format: o.format }
      yield* limited(
        Effect.gen(function* () {
          const analytics = yield* Analytics
          if (answer.parquet !== undefined) {
            const { parquet } = answer
            yield* analytics.copyToParquet(sql, params, parquet.path).pipe(
              // a failure naming the part file is the write's (a full disk, a folder it may not write in), not the SQL's
              Effect.catchIf(
                (e) => e.message.includes(parquet.path),
                (e) => Effect.fail(parquet.cannot(e))
              )
            )
            yield* Effect.tryPromise({ try: parquet.land, catch: (e) => parquet.cannot(e as Error) })
            yield* Console.error(`wrote ${resolve(Option.getOrThrow(o.output))}`)
            return
          }
          const { format } = answer
          return yield* streamedAnswer(sql, params, format, output, waits)
        }).pipe(
          // the user's SQL reads the lake and nothing else: the output file is the one other path DuckDB may open
          Effect.provide(
            layerAnalytics({
              dataDir: o.data,
              confine: {
                paths: answer.parquet === undefined ? [] : [answer.parquet.path],
                memoryLimit: `${Math.floor(memory / 1024 / 1024)}MiB`
              }
            })
          ),
          Effect.catchTags({
            SqlError: (e) => Effect.fail(sqlProblem(e, o.data, o.memoryLimit)),
            AnalyticsError: (e) => Effect.fail(new UserError({ message: e.message }))
          })
        )
      ).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => answer.parquet?.abandon()))))
    })
).pipe(Command.withDescription("Run SQL over the lake's views (datasets and analytics); parameters are bound, never spliced"))

export const catalogCommand = Command.make(
  "catalog",
  {
    data: dataOption,
    db: Options.file("db").pipe(Options.optional, Options.withDescription("the .duckdb file (default DATA/chain-lake.duckdb)"))
  },
  (o) =>
    Effect.gen(function* () {
      yield* requireLake(o.data)
      // the catalog replaces its file and the .wal beside it
      if (Option.isSome(o.db)) yield* refuseInsideLake("--db", o.db.value, o.data, [o.db.value + ".wal"])
      const { dbFile, views, problems } = yield* writeCatalog({ dataDir: o.data, dbFile: Option.getOrUndefined(o.db) }).pipe(
        Effect.mapError((e) => new UserError({ message: e.message }))
      )
      yield* Console.log(`wrote ${dbFile} with ${views.length} views: ${views.join(", ")}`)
      // (the view was made failing: it stays so until the catalog is written again)
      for (const p of problems)
        yield* Console.error(
          `chain-lake: warning: a view of this catalog fails every query until the lake is repaired and the catalog written again: ${p}`
        )
      yield* Console.log(
        `open it with the data folder as the working directory, e.g.: cd ${shellWord(resolve(o.data))} && duckdb ${shellWord(dbFile)}`
      )
    })
).pipe(Command.withDescription("Write a .duckdb file with every view, for the duckdb CLI, DBeaver or Python"))

export const reportCommand = Command.make(
  "report",
  {
    data: dataOption,
    out: Options.file("out").pipe(Options.optional, Options.withDescription("the HTML file (default DATA/report.html)"))
  },
  (o) =>
    Effect.gen(function* () {
      yield* requireLake(o.data)
      if (Option.isSome(o.out)) yield* refuseInsideLake("--out", o.out.value, o.data)
      const path = resolve(Option.getOrElse(o.out, () => resolve(o.data, "report.html")))
      // its folder is made where missing, as every command makes its output folder
      yield* Effect.tryPromise({
        try: () => mkdir(dirname(path), { recursive: true }),
        catch: (e) => new UserError({ message: `cannot write --out ${path}: ${(e as Error).message}` })
      })
      const summary = yield* writeReport(path).pipe(
        Effect.provide(layerAnalytics({ dataDir: o.data })),
        Effect.mapError((e) => new UserError({ message: e.message }))
      )
      yield* Console.log(`wrote ${summary.path}: ${summary.charts.map((c) => `${c.id} (${c.rows} rows)`).join(", ")}`)
    })
).pipe(Command.withDescription("Write one self-contained HTML file with charts of the main views"))
