/**
 * One fetched page, from bytes to rows: UTF-8 decoding and JSON.parse in `readJson` (a source
 * driver then reads its own envelope: records and pagination); then per record the compiled
 * check, its height and each dataset's `toRows` in `decodeRecord`. Pure and synchronous; the
 * engine decodes a record just before it appends its rows, so that rows never outlive a page.
 *
 * Measured and not kept: decoding in worker threads (pages' bytes transferred, rows cloned back)
 * halved the main thread's CPU per tx but raised the process's total by ~10% (the rows are
 * copied between threads) and cost ~1 s of start-up per run (bench/RESULTS.md).
 */
import { Buffer, isAscii } from "node:buffer"
import type { FieldIssue } from "../schema/decode.js"
import { NO_CONTEXT, type AppendDataset, type AppendList, type RowContext } from "./Dataset.js"
import { integerRangeCheck, type Row } from "../lake/columns.js"

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

/*
 * Pages are ASCII but for a few strings (memos, monikers, names). Decoded as UTF-8, one such
 * string makes the whole page a two-byte string: slower to decode, to parse and to hold. So a
 * page is read as latin1 (a copy, one char per byte), parsed, and only the strings that carry
 * bytes >= 0x80 are re-decoded as UTF-8 on their way out (measured ~7 µs per tx, 15%, in
 * bench/RESULTS.md). A JSON escape of any char past ASCII (`\u00e9`, and `\u2028` as Go writes
 * it) would be parsed into the latin1 text as its char, which the re-decode cannot tell from raw
 * bytes (U+00E9 came back as U+FFFD, U+2028 as its low byte: "("): a page holding one is
 * decoded as UTF-8 up front.
 */
/** whether the text holds a JSON escape of a char past ASCII, \u0080 and up (indexOf is far faster than a regex over a page) */
// Stryker disable all: a wrong "yes" only decodes the page as UTF-8 up front (same rows, slower), so
// those mutants cannot be told apart by output; a wrong "no" is caught by page-decode.test
const hasEscapedNonAscii = (text: string): boolean => {
  for (let i = text.indexOf("\\u"); i >= 0; i = text.indexOf("\\u", i + 2)) {
    // \u01xx and up (an escaped backslash before "u" reads as one too: UTF-8 up front, still exact)
    if (text.charCodeAt(i + 2) !== 48 || text.charCodeAt(i + 3) !== 48) return true
    const c = text.charCodeAt(i + 4)
    if ((c >= 56 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70)) return true // \u0080..\u00ff: 8-9, a-f, A-F
  }
  return false
}
// Stryker restore all
/** a latin1-read string has a byte >= 0x80 iff its UTF-8 length exceeds its length (a native count: ~30× a regex) */
// Stryker disable next-line ConditionalExpression,StringLiteral: re-decoding an ASCII string gives it back unchanged (a cost, not a result)
export const restoreString = (s: string): string =>
  Buffer.byteLength(s, "utf8") !== s.length ? Buffer.from(s, "latin1").toString("utf8") : s
export const restoreDeep = (v: unknown): unknown =>
  typeof v === "string"
    ? restoreString(v)
    : Array.isArray(v)
      ? v.map(restoreDeep)
      : typeof v === "object" && v !== null
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [restoreString(k), restoreDeep(x)]))
        : v
/** in place: the rows are the decoder's own */
export const restoreRow = (row: Row): void => {
  // Stryker disable next-line EqualityOperator: one step past the end reads undefined, which is not a string
  for (let i = 0; i < row.length; i++) {
    const v = row[i]
    if (typeof v === "string") row[i] = restoreString(v)
  }
}

/** The page's text, and whether its strings still need `restore…` (read as latin1 with high bytes). */
const pageText = (bytes: ArrayBuffer): { readonly text: string; readonly latin1: boolean } => {
  const buffer = Buffer.from(bytes)
  // Stryker disable next-line ConditionalExpression,BooleanLiteral: an ASCII page taken for a latin1 one is restored string by string, unchanged (slower, same rows)
  if (isAscii(buffer)) return { text: buffer.toString("latin1"), latin1: false }
  const text = buffer.toString("latin1")
  return hasEscapedNonAscii(text) ? { text: buffer.toString("utf8"), latin1: false } : { text, latin1: true }
}

/** Bytes to JSON, reading the text as latin1 where that is exact (see above); undefined if it is not JSON (a body cut short). */
export const readJson = (bytes: ArrayBuffer): { readonly json: unknown; readonly latin1: boolean } | undefined => {
  const { text, latin1 } = pageText(bytes)
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return undefined
  }
  return { json, latin1 }
}

/** One record of a parsed page: its check, height and each dataset's rows (in `datasets` order). */
export const decodeRecord = (
  record: unknown,
  latin1: boolean,
  list: AppendList,
  datasets: ReadonlyArray<AppendDataset>,
  context: RowContext = NO_CONTEXT
): DecodedRecord | InvalidRecord => {
  const issue = list.validate(record)
  if (issue) return invalid(issue, record, latin1)
  let rows: Array<Array<Row>>
  try {
    rows = datasets.map((d) => d.toRows(record, context))
  } catch (e) {
    // JSON nested thousands deep parses, but stringifying it for a JSON column overflows the stack
    if (e instanceof RangeError && /call stack/i.test(e.message))
      return invalid({ path: "", message: `cannot be written: ${e.message} (JSON nested too deeply?)` }, record, latin1)
    throw e
  }
  for (let t = 0; t < datasets.length; t++) {
    const check = rangeCheckOf(datasets[t])
    for (const row of rows[t]) {
      const problem = check(row)
      if (problem) return invalid({ path: "", message: `${datasets[t].name}: ${problem.message}` }, record, latin1)
    }
  }
  if (latin1) for (const forDataset of rows) for (const row of forDataset) restoreRow(row)
  return { height: list.heightOf(record), rows }
}

const rangeChecks = new WeakMap<AppendDataset, ReturnType<typeof integerRangeCheck>>()
const rangeCheckOf = (d: AppendDataset) => {
  let check = rangeChecks.get(d)
  if (!check) rangeChecks.set(d, (check = integerRangeCheck(d.columns)))
  return check
}

/** An invalid record, its text UTF-8 again if it was read as latin1 (a record too deep to walk is kept as it is). */
const invalid = (issue: FieldIssue, record: unknown, latin1: boolean): InvalidRecord => {
  if (!latin1) return { issue, record }
  let restored: unknown = record
  try {
    restored = restoreDeep(record)
  } catch {
    /* nested too deeply to walk: kept as read */
  }
  return { issue: { path: restoreString(issue.path), message: restoreString(issue.message) }, record: restored }
}

export const isInvalid = (r: DecodedRecord | InvalidRecord): r is InvalidRecord => "issue" in r
