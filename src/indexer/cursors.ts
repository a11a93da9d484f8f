/**
 * The indexer's keyset cursors: JSON, base64 in `pagination.key` (Rollytics
 * util/common-handler/common/pagination.go). A cursor names the row a page starts after:
 * `{"height": h}` pages blocks above h, `{"sequence": s}` the tx families' rows above sequence s
 * (ascending: `sequence > s`, no OFFSET: an index seek on the real server, where an offset scans
 * every row it skips). A page's next_key is its last row's cursor, on every page that holds rows
 * (ToResponseWithLastRecord); extra fields in a key are ignored there.
 *
 * Sequences start at 1. While they are contiguous (what a total of MAX(sequence) already
 * assumes), the rows after sequence s are those from position s on (0-based), and a page after
 * sequence s holding n rows ends at s + n.
 */
import type { KeyStyle } from "./endpoints.js"

const b64 = (text: string) => Buffer.from(text).toString("base64")

/** The cursor of the rows above `height`. */
export const heightCursor = (height: number): string => b64(JSON.stringify({ height }))

/** The cursor of the rows after sequence `sequence`. */
export const sequenceCursor = (sequence: number): string => b64(JSON.stringify({ sequence }))

/** The number a cursor of `style` names (its height or sequence), or undefined where the key is no such cursor. */
const cursorValue = (style: "height" | "sequence", key: string | null | undefined): number | undefined => {
  if (!key) return undefined
  let cursor: unknown
  try {
    cursor = JSON.parse(Buffer.from(key, "base64").toString("utf8"))
  } catch {
    return undefined
  }
  const value = typeof cursor === "object" && cursor !== null ? (cursor as Record<string, unknown>)[style] : undefined
  return typeof value === "number" && Number.isSafeInteger(value) ? value : undefined
}

/** The sequence a key names, or undefined where it is no sequence cursor. */
export const sequenceOf = (key: string | null | undefined): number | undefined => cursorValue("sequence", key)

/** The key of the rows after `after` of a keyset list (a height, or a sequence); an offset list has none. */
export const keyAfter = (style: KeyStyle, after: number): string => {
  if (style === "offset") throw new Error("an offset list is not read from a cursor")
  return style === "height" ? heightCursor(after) : sequenceCursor(after)
}

/** The height or sequence a keyset list's key names (keyAfter's inverse), or undefined. */
export const afterOfKey = (style: KeyStyle, key: string | null | undefined): number | undefined =>
  style === "offset" ? undefined : cursorValue(style, key)
