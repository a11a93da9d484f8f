/** Turns an Effect Schema parse error into "field.path: message" lines a user can act on. */
import { Either, ParseResult, Schema } from "effect"

/** `["blocks", 1, "height"]` → `blocks[1].height` */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`), "")

export interface FieldIssue {
  readonly path: string
  readonly message: string
}

/**
 * Decodes `value`; on failure returns the first issue with its field path. Fields the schema does
 * not name are ignored (a service's answers grow), or, `excess: "error"`, an issue (a caller's
 * options: a misspelt one did nothing).
 */
export const decodeWithPath = <A, I>(
  schema: Schema.Schema<A, I>,
  value: unknown,
  excess: "ignore" | "error" = "ignore"
): Either.Either<A, FieldIssue> => {
  const result = Schema.decodeUnknownEither(schema, { onExcessProperty: excess })(value)
  if (Either.isRight(result)) return Either.right(result.right)
  const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left)
  const first = issues[0]
  const path = first?.path ?? []
  return Either.left({ path: formatPath(path), message: shortMessage(first?.message ?? "invalid", valueAt(value, path)) })
}

/** The value at `path` inside `value`, where there is one. */
const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>((at, key) => (typeof at === "object" && at !== null ? (at as Record<PropertyKey, unknown>)[key] : undefined), value)

/** past this, a message spells out the whole expected type (a route's is ~2,000 characters): what was expected is said in a word */
const LONG_MESSAGE = 160

/** `message`, or where it spells out a whole struct or list type, "expected an object, got null" */
const shortMessage = (message: string, actual: unknown): string => {
  if (message.length <= LONG_MESSAGE) return message
  const expected = message.startsWith("Expected {") ? "an object" : message.startsWith("Expected ReadonlyArray<") ? "a list" : undefined
  return expected ? `expected ${expected}, got ${kindOfValue(actual)}` : message
}

/** What `value` is, as a message names it: "null", "array", or its typeof ("number", "undefined", …). */
export const kindOfValue = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)
