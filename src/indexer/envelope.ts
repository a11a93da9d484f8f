/**
 * A list response's envelope, as every list endpoint of the indexer sends it: the records under
 * the list's array key and a pagination object ({previous_key, next_key, total}). The records
 * themselves are checked by whoever reads them (the export engine on its hot path, the client's
 * Schemas elsewhere).
 */
import type { FieldIssue } from "../schema/decode.js"
import { compileValidator } from "../schema/fastValidate.js"
import { Pagination } from "./schemas.js"

const validatePagination = compileValidator(Pagination)

/** A list response's envelope: its records array and pagination, or the first problem with either. */
export type ListEnvelope =
  | { readonly records: ReadonlyArray<unknown>; readonly pagination: { readonly next_key: string | null; readonly total: string } }
  | { readonly issue: FieldIssue }

/** Checks a parsed list response's envelope (records array under `arrayKey`, pagination object), not its records. */
export const readListEnvelope = (body: unknown, arrayKey: string): ListEnvelope => {
  // Stryker disable next-line ConditionalExpression: a string or number read as a record has no array under any list key either
  const envelope = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {}
  const records = envelope[arrayKey]
  if (!Array.isArray(records)) return { issue: { path: arrayKey, message: "is missing or not an array" } }
  const bad = validatePagination(envelope.pagination)
  if (bad) return { issue: { path: `pagination${bad.path ? "." + bad.path : ""}`, message: bad.message } }
  return { records, pagination: envelope.pagination as { next_key: string | null; total: string } }
}
