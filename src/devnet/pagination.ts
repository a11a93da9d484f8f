/**
 * The real indexer's pagination (rollytics util/common-handler/common/pagination.go), served
 * faithfully: keyset cursors for blocks and the tx families, offset keys for NFT and rich-list
 * lists, and the exact 400 messages for bad parameters.
 *
 * A page read by offset costs the real server every row it skips (SQL OFFSET scans them), a
 * keyset cursor none (an index seek): the rows each request skips are charged to the request's
 * `OffsetMeter`, so that a devnet can count them and answer as slowly as they cost.
 */
import { b64, strictBase64Decode } from "./encoding.js"

export class BadRequest extends Error {}

/** Rows skipped through offsets, counted per request. */
export interface OffsetMeter {
  rows: number
}
/*
 * The meter of the request being answered. Routes are synchronous, so the request whose handler
 * runs is the one whose meter is in force (`metered`): no route has to pass it along.
 */
let activeMeter: OffsetMeter | undefined
/** Runs a request's (synchronous) handler with `meter` counting the rows its pages skip. */
export const metered = <A>(meter: OffsetMeter, handler: () => A): A => {
  const outer = activeMeter
  activeMeter = meter
  try {
    return handler()
  } finally {
    activeMeter = outer
  }
}
/** SQL OFFSET scans the rows it skips, no more than the list holds. */
const chargeOffset = (offset: number, length: number) => {
  if (activeMeter) activeMeter.rows += Math.max(0, Math.min(offset, length))
}

export type PageKey =
  | { readonly type: "none" }
  /** a JSON key naming no cursor field: offset paging, with offset keys in the answer (CursorTypeOffset) */
  | { readonly type: "json_offset" }
  | { readonly type: "offset"; readonly offset: number }
  | { readonly type: "sequence"; readonly value: number }
  | { readonly type: "height"; readonly value: number }
  | { readonly type: "height_token"; readonly height: number; readonly tokenId: string }

export interface PageParams {
  readonly key: PageKey
  readonly offset: number
  readonly limit: number
  readonly countTotal: boolean
  readonly reverse: boolean
}

/** Go strconv.ParseBool; anything else falls back to the default, as Fiber's QueryBool does. */
const queryBool = (value: string | null, fallback: boolean): boolean => {
  if (value === null) return fallback
  if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false
  return fallback
}

/** Fiber's QueryInt: strconv.Atoi or the default. */
const queryInt = (value: string | null, fallback: number): number => {
  if (value === null || !/^[+-]?\d+$/.test(value)) return fallback
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : fallback
}

const parseKey = (raw: string | null): PageKey => {
  if (raw === null || raw === "") return { type: "none" }
  const text = strictBase64Decode(raw)
  if (text === undefined) throw new BadRequest("pagination.key must be a valid base64 encoded string")
  if (text.startsWith("{")) {
    let obj: unknown
    try {
      obj = JSON.parse(text)
    } catch {
      throw new BadRequest("invalid pagination.key format")
    }
    if (typeof obj !== "object" || obj === null || Array.isArray(obj)) throw new BadRequest("invalid pagination.key format")
    return jsonCursor(obj as Record<string, unknown>)
  }
  if (!/^\d+$/.test(text)) throw new BadRequest("pagination.key must decode to a nonnegative integer")
  return { type: "offset", offset: Number(text) }
}

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v)

/**
 * A JSON key as detectCursorType reads it: "sequence" first, then "height" (with "token_id": the
 * composite cursor). A cursor whose value is no integer (or a token_id no string) is not refused:
 * safeGetInt64 fails and the query falls back to pagination.offset, answering cursor next keys
 * all the same (its type is still a cursor type): that is key "none" here. A key with neither
 * field is CursorTypeOffset: offset paging, answered with offset keys.
 */
const jsonCursor = (o: Record<string, unknown>): PageKey => {
  if ("sequence" in o) return isInt(o.sequence) ? { type: "sequence", value: o.sequence } : { type: "none" }
  if ("height" in o && "token_id" in o)
    return isInt(o.height) && typeof o.token_id === "string"
      ? { type: "height_token", height: o.height, tokenId: o.token_id }
      : { type: "none" }
  if ("height" in o) return isInt(o.height) ? { type: "height", value: o.height } : { type: "none" }
  return { type: "json_offset" }
}

export const parsePagination = (q: URLSearchParams): PageParams => {
  const limit = queryInt(q.get("pagination.limit"), 100)
  if (limit < 1 || limit > 1000) throw new BadRequest("pagination.limit must be between 1 and 1000")
  const offset = queryInt(q.get("pagination.offset"), 0)
  if (offset < 0) throw new BadRequest("pagination.offset cannot be negative")
  return {
    key: parseKey(q.get("pagination.key")),
    offset,
    limit,
    countTotal: queryBool(q.get("pagination.count_total"), true),
    reverse: queryBool(q.get("pagination.reverse"), true)
  }
}

/** An ascending list of sequence numbers (or heights), possibly virtual. */
export interface SeqList {
  readonly length: number
  at(i: number): number
}
export const rangeList = (first: number, last: number): SeqList => ({
  length: Math.max(0, last - first + 1),
  at: (i) => first + i
})
export const arrayList = (items: ReadonlyArray<number>): SeqList => ({ length: items.length, at: (i) => items[i] })

/** First index whose value is > x (ascending list). */
const firstAbove = (list: SeqList, x: number): number => {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (list.at(mid) > x) hi = mid
    else lo = mid + 1
  }
  return lo
}

export interface Pagination {
  previous_key: string | null
  next_key: string | null
  total: string
}

/**
 * Keyset cursor mode (ApplySequence, ApplyToBlock): a cursor of the list's type reads
 * `seq > X` (ascending) or `seq < X` (reverse, the default) with no OFFSET; any other key, or
 * none, reads from pagination.offset (a decimal key sets it). The next key names the page's last
 * row on every page with rows, short or full (ToResponseWithLastRecord), except under a JSON key
 * with no cursor field, which pages as an offset list; an empty page names none.
 */
export const cursorPage = (
  list: SeqList,
  params: PageParams,
  cursor: "height" | "sequence",
  total: string
): { seqs: Array<number>; pagination: Pagination } => {
  const key = params.key
  const byCursor = key.type === cursor
  // a JSON cursor of another type sets no offset: the real server reads pagination.offset
  const offset = key.type === "offset" ? key.offset : params.offset
  if (!byCursor) chargeOffset(offset, list.length)
  const start = byCursor
    ? params.reverse
      ? firstAbove(list, key.value - 1) - 1
      : firstAbove(list, key.value)
    : params.reverse
      ? list.length - 1 - offset
      : offset
  const seqs: Array<number> = []
  for (let i = start; seqs.length < params.limit && i >= 0 && i < list.length; i += params.reverse ? -1 : 1) seqs.push(list.at(i))
  // no row to name (or no cursor type): ToResponse, whose previous key reads pagination.offset
  if (key.type === "json_offset" || seqs.length === 0)
    return { seqs, pagination: offsetPagination(offset, params.limit, seqs.length, total) }
  return { seqs, pagination: { previous_key: null, next_key: b64(JSON.stringify({ [cursor]: seqs[seqs.length - 1] })), total } }
}

/** ToResponse: the next offset after a full page only, the previous one from a whole page in. */
const offsetPagination = (offset: number, limit: number, rows: number, total: string): Pagination => ({
  previous_key: offset > 0 && offset >= limit ? b64(String(offset - limit)) : null,
  next_key: rows === limit ? b64(String(offset + limit)) : null,
  total
})

/** Offset mode: a decimal key overrides pagination.offset; next_key only on a full page. */
export const offsetPage = <A>(items: ReadonlyArray<A>, params: PageParams, total: string): { rows: Array<A>; pagination: Pagination } => {
  const o = params.key.type === "offset" ? params.key.offset : params.offset
  chargeOffset(o, items.length)
  const rows = items.slice(o, o + params.limit)
  return { rows, pagination: offsetPagination(o, params.limit, rows.length, total) }
}
