/**
 * One fetched page of an append-only source, from bytes to rows: UTF-8 decoding, JSON.parse,
 * the envelope check (records array, pagination), the compiled per-record check, heights and
 * each dataset's `toRows`, in one pass over the page. Pure and synchronous.
 *
 * Measured and not kept: decoding in worker threads (pages' bytes transferred, rows cloned back)
 * halved the main thread's CPU per tx but raised the process's total by ~10% (the rows are
 * copied between threads) and cost ~1 s of start-up per run (bench/RESULTS.md).
 */
import { compileValidator } from "./fastValidate.js"
import { decodeBody } from "../http/body.js"
import { Pagination } from "../indexer/schemas.js"
import type { FieldIssue } from "../schema-path.js"
import type { AppendDataset, AppendSource, Row } from "./Dataset.js"

/** A record that passed its check: its height and, per target dataset (in order), its rows. */
export interface DecodedRecord {
  readonly height: number
  readonly rows: ReadonlyArray<ReadonlyArray<Row>>
}
/** A record that failed its check: the first problem and the record itself (for quarantine). */
export interface InvalidRecord {
  readonly issue: FieldIssue
  readonly record: unknown
}

export type DecodedPage =
  | {
      readonly _tag: "Page"
      readonly nextKey: string | null
      readonly total: string
      /** one entry per record of the page, in order */
      readonly records: ReadonlyArray<DecodedRecord | InvalidRecord>
    }
  /** not JSON: a body cut short (the request is retried) */
  | { readonly _tag: "Truncated"; readonly bytes: number }
  /** JSON, but not a page: no records array, or a bad pagination object */
  | { readonly _tag: "BadEnvelope"; readonly issue: FieldIssue }

const validatePagination = compileValidator(Pagination)

export const decodePage = (bytes: ArrayBuffer, source: AppendSource, datasets: ReadonlyArray<AppendDataset>): DecodedPage => {
  let body: unknown
  try {
    body = JSON.parse(decodeBody(bytes))
  } catch {
    return { _tag: "Truncated", bytes: bytes.byteLength }
  }
  const envelope = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {}
  const items = envelope[source.arrayKey]
  if (!Array.isArray(items)) return { _tag: "BadEnvelope", issue: { path: source.arrayKey, message: "is missing or not an array" } }
  const bad = validatePagination(envelope.pagination)
  if (bad) return { _tag: "BadEnvelope", issue: { path: `pagination${bad.path ? "." + bad.path : ""}`, message: bad.message } }
  const pagination = envelope.pagination as { next_key: string | null; total: string }
  const records = items.map((record): DecodedRecord | InvalidRecord => {
    const issue = source.validate(record)
    if (issue) return { issue, record }
    return { height: source.heightOf(record), rows: datasets.map((d) => d.toRows(record)) }
  })
  return { _tag: "Page", nextKey: pagination.next_key, total: pagination.total, records }
}

export const isInvalid = (r: DecodedRecord | InvalidRecord): r is InvalidRecord => "issue" in r
