/**
 * Pipelines: a declared, repeatable job — which datasets, from which services, which denoms and
 * route plan, on which schedule, into which folder. `definePipeline` only checks and returns the
 * definition; `runPipeline` (run.ts) carries it out.
 *
 * A definition is decoded with an Effect Schema, strictly: a key it does not know (`outt:` for
 * `out:`) is refused, not ignored, since an ignored misspelling silently runs with the default
 * (data written to another folder, every dataset exported); a value of the wrong type, an unknown
 * dataset or a cron field out of range is refused naming the field. The CLI decodes whatever a
 * pipeline file exports, so a file that skips `definePipeline` is held to the same rules.
 */
import { Cron, Either, ParseResult, Schema } from "effect"
import { DATASETS } from "../datasets/index.js"
import { datasetNamesProblem } from "../engine/export.js"
import { formatPath } from "../schema/decode.js"

export interface PipelineDefinition {
  readonly name: string
  readonly description: string
  /** datasets to export; default: every dataset the chain serves; [] exports none (a route-quote pipeline) */
  readonly datasets?: ReadonlyArray<string>
  /**
   * Service URLs; --indexer-url/--router-url and env CHAIN_LAKE_INDEXER_URL / CHAIN_LAKE_ROUTER_URL
   * override them. "devnet" runs on the embedded devnet (simulated data) when no URL is given; a
   * pipeline that names no URL runs on it only with `run --devnet`, never by default, so that a
   * forgotten URL cannot fill a real lake with simulated rows.
   */
  readonly sources?: "devnet" | { readonly indexerUrl?: string; readonly routerUrl?: string }
  readonly denoms?: ReadonlyArray<string>
  /** route-quote sampling plan: a JSON file, relative to the pipeline file's folder, sampled once per run */
  readonly routePlan?: string
  /** cron expression for `run --schedule` (5 fields, or 6 with seconds first) */
  readonly schedule: string
  /** output folder (relative to the working directory) */
  readonly out?: string
  /** how many snapshot heights to keep per snapshot dataset; older ones are deleted after each run */
  readonly keepSnapshots?: number
  readonly fromHeight?: number
  readonly toHeight?: number
}

export class PipelineError extends Error {}

/** Each cron field's name and range, in order, the seconds field first (present in 6-field expressions only). */
const CRON_FIELDS: ReadonlyArray<readonly [name: string, min: number, max: number]> = [
  ["second", 0, 59],
  ["minute", 0, 59],
  ["hour", 0, 23],
  ["day of month", 1, 31],
  ["month", 1, 12],
  ["day of week", 0, 7]
]

/** The first value out of its field's range ("hour: 25 is not 0..23"); steps (`*\/90`) are counts, not values. */
const outOfRange = (part: string, [name, min, max]: (typeof CRON_FIELDS)[number]): string | undefined => {
  const values = part.split(",").flatMap((item) => item.split("/")[0].match(/\d+/g) ?? [])
  const bad = values.map(Number).find((n) => n < min || n > max)
  return bad === undefined ? undefined : `${name}: ${bad} is not ${min}..${max}`
}

/** What is wrong with a cron expression, naming the field; undefined when Effect's Cron reads it. */
export const cronProblem = (expression: string): string | undefined => {
  const parts = expression.trim().split(/\s+/)
  if (parts.length !== 5 && parts.length !== 6)
    return `"${expression}" has ${parts.length} fields; a cron expression has 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)`
  const fields = CRON_FIELDS.slice(6 - parts.length)
  const range = parts.map((p, i) => outOfRange(p, fields[i])).find((p) => p !== undefined)
  if (range) return range
  const whole = Cron.parse(expression)
  if (Either.isRight(whole)) return undefined
  // the field Effect's parser refuses alone, every other field a wildcard
  const alone = parts.map((p, i) => Either.flip(Cron.parse(parts.map((_, j) => (j === i ? p : "*")).join(" "))))
  const bad = alone.findIndex(Either.isRight)
  return bad < 0 ? `"${expression}": ${whole.left.message}` : `${fields[bad][0]}: "${parts[bad]}": ${Either.getOrThrow(alone[bad]).message}`
}

const optional = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { exact: true })
const atLeastOne = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
const Names = Schema.Array(Schema.String)

/** The decoder of definitions; its type is the interface above, so the two cannot drift apart. */
const PipelineSchema: Schema.Schema<PipelineDefinition, PipelineDefinition> = Schema.Struct({
  name: Schema.String.pipe(Schema.filter((n) => /^[a-z0-9][a-z0-9-]*$/.test(n) || `"${n}" is not lowercase letters, digits and dashes`)),
  description: Schema.String,
  // [] is allowed: a pipeline that only samples route quotes
  datasets: optional(Names.pipe(Schema.filter((names) => names.length === 0 || (datasetNamesProblem(DATASETS, names) ?? true)))),
  sources: optional(
    Schema.Union(Schema.Literal("devnet"), Schema.Struct({ indexerUrl: optional(Schema.String), routerUrl: optional(Schema.String) }))
  ),
  denoms: optional(Names),
  routePlan: optional(Schema.String),
  schedule: Schema.String.pipe(Schema.filter((s) => cronProblem(s) ?? true)),
  out: optional(Schema.String),
  keepSnapshots: optional(atLeastOne),
  fromHeight: optional(atLeastOne),
  toHeight: optional(atLeastOne)
}).pipe(
  Schema.filter(
    (d) =>
      d.fromHeight === undefined ||
      d.toHeight === undefined ||
      d.fromHeight <= d.toHeight || { path: ["fromHeight"], message: `${d.fromHeight} is above toHeight ${d.toHeight}` }
  )
)

/**
 * One line for a decoding failure: the deepest issue (in a union such as `sources`, the member
 * that got furthest into the value says the most), as "field.path: what is wrong".
 */
const describeIssue = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const issue = issues.reduce((deepest, i) => (i.path.length > deepest.path.length ? i : deepest), issues[0])
  // Effect says `is unexpected, expected: "name" | "out"`: name the keys a user can write instead
  const message =
    issue._tag === "Unexpected"
      ? issue.message.replace(
          /^is unexpected, expected: (.*)$/,
          (_, keys: string) => `is not a pipeline field (fields: ${keys.replace(/"/g, "").split(" | ").join(", ")})`
        )
      : issue.message
  return issue.path.length === 0 ? message : `${formatPath(issue.path)}: ${message}`
}

/** The definition, decoded, or what is wrong with it in one line. */
export const decodePipeline = (value: unknown): Either.Either<PipelineDefinition, string> =>
  typeof value !== "object" || value === null || Array.isArray(value)
    ? Either.left(
        `a pipeline is an object with at least a name, a description and a schedule, not ${Array.isArray(value) ? "an array" : String(value)}`
      )
    : Schema.decodeUnknownEither(PipelineSchema, { onExcessProperty: "error", errors: "all" })(value).pipe(Either.mapLeft(describeIssue))

/** Checks a definition (see the module's comment) and returns it; throws a PipelineError naming what is wrong. */
export const definePipeline = (definition: PipelineDefinition): PipelineDefinition =>
  Either.getOrThrowWith(
    decodePipeline(definition),
    (problem) => new PipelineError(`pipeline ${typeof definition?.name === "string" ? `${definition.name}: ` : ""}${problem}`)
  )
