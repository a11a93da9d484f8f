/**
 * The keyset cursors the engine builds and reads: the indexer's JSON cursors, base64 in
 * `pagination.key` (Rollytics util/common-handler/common/pagination.go). A cursor names the row a
 * page starts after: `{"height": h}` pages blocks above h, `{"sequence": s}` the tx families'
 * rows above sequence s (ascending: `sequence > s`, no OFFSET: an index seek on the real server,
 * where an offset scans every row it skips). A page's next_key is its last row's cursor, on every
 * page that holds rows (ToResponseWithLastRecord); extra fields in a key are ignored there.
 *
 * Sequences start at 1. While they are contiguous (what a total of MAX(sequence) already
 * assumes), position p (0-based, ascending) is sequence p + 1: the rows from position p on are
 * those after cursor {"sequence": p}, and a page after sequence s holding n rows ends at s + n.
 */

const b64 = (text: string) => Buffer.from(text).toString("base64")

/** The cursor of the rows above `height`. */
export const heightCursor = (height: number): string => b64(JSON.stringify({ height }))

/** The cursor of the rows from position `position` on (those after sequence `position`). */
export const positionCursor = (position: number): string => b64(JSON.stringify({ sequence: position }))

/** The sequence a key names, or undefined where it is no sequence cursor. */
export const sequenceOf = (key: string | null | undefined): number | undefined => {
  if (!key) return undefined
  let cursor: unknown
  try {
    cursor = JSON.parse(Buffer.from(key, "base64").toString("utf8"))
  } catch {
    return undefined
  }
  const sequence = typeof cursor === "object" && cursor !== null ? (cursor as { sequence?: unknown }).sequence : undefined
  return typeof sequence === "number" && Number.isSafeInteger(sequence) ? sequence : undefined
}

/**
 * Why a page of a position source cannot be placed, or undefined: the page after sequence `after`
 * holding `rows` rows must name sequence after + rows as its next_key. Its rows are then exactly
 * the sequences after it, the positions asked for; a server that ignored the cursor (answering a
 * list's first rows to every shard), read it as "from" rather than "after", skipped rows or
 * served another page names another sequence.
 */
export const cursorPageProblem = (after: number, rows: number, nextKey: string | null): string | undefined => {
  if (rows === 0) return undefined
  if (nextKey === null)
    return `the page after sequence ${after} holds ${rows} rows but names no next_key: where they stand cannot be checked`
  const next = sequenceOf(nextKey)
  if (next === undefined) return `the page after sequence ${after} names next_key ${nextKey}, which is no sequence cursor`
  if (next !== after + rows)
    return `the page after sequence ${after} holds ${rows} rows, so it ends at sequence ${after + rows}, but its next_key names ${next}: the indexer did not honour the cursor, or its sequences are not contiguous`
  return undefined
}
