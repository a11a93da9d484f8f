/**
 * The real indexer's pagination (rollytics util/common-handler/common/pagination.go), served
 * faithfully: keyset cursors for blocks and the tx families, offset keys for NFT and rich-list
 * lists, and the exact 400 messages for bad parameters.
 */
import { b64, strictBase64Decode } from "./encoding.js"

export class BadRequest extends Error {}

export type PageKey =
  | { readonly type: "none" }
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
    const o = obj as Record<string, unknown>
    const int = (v: unknown) => {
      if (typeof v !== "number" || !Number.isInteger(v)) throw new BadRequest("invalid pagination.key format")
      return v
    }
    if ("sequence" in o) return { type: "sequence", value: int(o.sequence) }
    if ("height" in o && "token_id" in o) {
      if (typeof o.token_id !== "string") throw new BadRequest("invalid pagination.key format")
      return { type: "height_token", height: int(o.height), tokenId: o.token_id }
    }
    if ("height" in o) return { type: "height", value: int(o.height) }
    return { type: "none" }
  }
  if (!/^\d+$/.test(text)) throw new BadRequest("pagination.key must decode to a nonnegative integer")
  return { type: "offset", offset: Number(text) }
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
 * Keyset cursor mode: first page by offset, then `seq > X` (ASC) or `seq < X` (DESC). The next
 * key is set on every non-empty page; a cursor of another type falls back to pagination.offset.
 */
export const cursorPage = (
  list: SeqList,
  params: PageParams,
  cursor: "height" | "sequence",
  total: string
): { seqs: Array<number>; pagination: Pagination } => {
  const seqs: Array<number> = []
  const key = params.key
  let start: number
  if (key.type === cursor) {
    const x = key.value
    start = params.reverse ? firstAbove(list, x - 1) - 1 : firstAbove(list, x)
  } else {
    // a JSON cursor of another type sets no offset: the real server reads pagination.offset
    const offset = key.type === "offset" ? key.offset : params.offset
    start = params.reverse ? list.length - 1 - offset : offset
  }
  for (let i = start; seqs.length < params.limit && i >= 0 && i < list.length; i += params.reverse ? -1 : 1) seqs.push(list.at(i))
  const last = seqs[seqs.length - 1]
  return {
    seqs,
    pagination: {
      previous_key: null,
      next_key: seqs.length > 0 ? b64(JSON.stringify({ [cursor]: last })) : null,
      total
    }
  }
}

/** Offset mode: a decimal key overrides pagination.offset; next_key only on a full page. */
export const offsetPage = <A>(items: ReadonlyArray<A>, params: PageParams, total: string): { rows: Array<A>; pagination: Pagination } => {
  const o = params.key.type === "offset" ? params.key.offset : params.offset
  const n = params.limit
  const rows = items.slice(o, o + n)
  return {
    rows,
    pagination: {
      previous_key: o > 0 && o >= n ? b64(String(o - n)) : null,
      next_key: rows.length === n ? b64(String(o + n)) : null,
      total
    }
  }
}
