/**
 * When a source's pages cannot be trusted: every rule the engine holds paging to, each a small
 * predicate naming what is wrong (the message of the source's `untrustedPaging` error), or
 * undefined where the pages hold. The pager (pager.ts), shards (shard.ts), snapshots
 * (snapshot.ts) and the plan's position search (export.ts) call them; nothing else decides
 * whether paging is trusted. A rule that fails stops the read: nothing of an untrusted listing is
 * committed.
 */
import type { AppendList } from "./Dataset.js"

/** A page of more records than were asked for: a server ignoring the limit is not followed further. */
export const longerThanAsked = (count: number, asked: number): string | undefined =>
  count > asked ? `the page holds ${count} records, ${asked} were asked for` : undefined

/** A next_key the walk already followed: a key a server does not understand silently restarts the listing. */
export const keyFollowedBefore = (followed: ReadonlySet<string>, nextKey: string): string | undefined =>
  followed.has(nextKey) ? `next_key ${nextKey} was already followed: the server restarted the listing` : undefined

/**
 * A page of a position (sequence) list placed where its cursor says: the page after sequence
 * `after` holding `rows` rows must name sequence after + rows (`next`, what its next_key names).
 * A server that ignored the cursor, read it as "from" rather than "after", skipped rows or served
 * another page names another sequence.
 */
export const misplacedPositionPage = (
  key: string | null,
  after: number | undefined,
  rows: number,
  nextKey: string | null,
  next: number | undefined
): string | undefined => {
  if (after === undefined) return `the page was asked with key ${key}, which is no sequence cursor`
  if (rows === 0) return undefined
  if (nextKey === null)
    return `the page after sequence ${after} holds ${rows} rows but names no next_key: where they stand cannot be checked`
  if (next === undefined) return `the page after sequence ${after} names next_key ${nextKey}, which is no sequence cursor`
  if (next !== after + rows)
    return `the page after sequence ${after} holds ${rows} rows, so it ends at sequence ${after + rows}, but its next_key names ${next}: the indexer did not honour the cursor, or its sequences are not contiguous`
  return undefined
}

/** The newest row of a position list must name its sequence, or its rows cannot be addressed by sequence. */
export const newestRowUnaddressable = (nextKey: string | null, sequence: number | undefined): string | undefined =>
  sequence === undefined
    ? `its newest row names next_key ${nextKey}, which is no sequence cursor: its rows cannot be addressed by sequence`
    : undefined

/** No row after sequence `after`, where the list's newest row is sequence `newestSequence` further on: the answers come from lists of different lengths. */
export const rowMissingBelowNewest = (after: number, newestSequence: number): string | undefined =>
  after < newestSequence
    ? `no row follows sequence ${after}, yet the list's newest row is sequence ${newestSequence}: the indexer's answers disagree (a replica behind the others, or a cache that ignores Cache-Control: no-cache); nothing was written: rerun once they agree`
    : undefined

/** A row past a position list's total at a height already asked for: the total is lower than the data (a stale count). */
export const totalBelowData = (rows: number, pastHeight: number | null, to: number): string | undefined =>
  pastHeight !== null && pastHeight <= to
    ? `pagination.total says ${rows} rows, but position ${rows} holds a row at height ${pastHeight} (at most ${to} asked for): the total is lower than the data`
    : undefined

/** A position list whose newest record is below the tip /status names, where a height between holds records of it. */
export const newestBehindStatus = (newest: number, height: number, count: number, tip: number, says?: string): string | undefined =>
  count > 0
    ? `its newest record is at height ${newest}, but block ${height} (of the ${tip} that /status names) ${says ?? `counts ${count} of them`}: the indexer's answers disagree (a replica behind the others, or a cache that ignores Cache-Control: no-cache); nothing was written: rerun once they agree`
    : undefined

/** A record standing for one of its block's cosmos txs (an EVM receipt minievm built for one) that none of the `count` txs the indexer lists at its height is. */
export const cosmosTxNotFound = (id: string, height: number, count: number): string =>
  `${id} at height ${height} stands for a cosmos tx, but none of the ${count} txs the indexer lists at that height is it: the indexer's answers disagree (a replica behind the others, or a cache that ignores Cache-Control: no-cache); nothing of the page was written: rerun once they agree`

/** A record whose rows stand at another height than its own. */
export const rowsAtOtherHeight = (index: number, height: number): string =>
  `record ${index} has rows at height ${height}, not its own height: the record contradicts itself`

/**
 * A record outside the shard's heights [a, b) (a height list), or outside the heights [from, to]
 * whose positions a position list's shard reads (`asked`): there the plan's position search was
 * answered by lists that disagree, and the record is not one the run asked for.
 */
export const outsideShard = (
  unit: "height" | "position",
  height: number,
  [a, b]: readonly [number, number],
  asked?: readonly [number, number]
): string | undefined => {
  if (unit === "height") return height < a || height >= b ? `height ${height} is outside the shard ${a}..${b - 1}` : undefined
  return asked && (height < asked[0] || height > asked[1])
    ? `a record at height ${height} came among positions ${a}..${b - 1}, which were found to hold heights ${asked[0]}..${asked[1]}: the indexer's answers disagree (a replica behind the others, or a cache that ignores Cache-Control: no-cache)`
    : undefined
}

/** Heights go up through an append list's pages: one that goes down means pages overlap or went back. */
export const wentBack = (height: number, last: number): string | undefined =>
  height < last ? `height ${height} came after height ${last}: the pages overlap or went back` : undefined

/** A record naming another chain than the one /status names is foreign (one that names none, where its list says records name one, too). */
export const foreignChain = (height: number, chainOfRecord: string | undefined, chainId: string): string | undefined =>
  chainOfRecord !== chainId
    ? `the record at height ${height} is of chain ${JSON.stringify(chainOfRecord)}, not ${chainId} (the chain /status names)`
    : undefined

/** A record met twice at its height: the pages overlap or cycle. */
export const recordTwice = (id: string, height: number): string =>
  `the record ${id} at height ${height} came twice: the pages overlap or cycle`

/** A shard's listing that ended before the rows its range holds. */
export const endedEarly = (unit: "height" | "position", a: number, b: number, seen: number): string | undefined =>
  seen !== b - a ? `expected ${b - a} rows for ${unit}s ${a}..${b - 1}, the listing ended after ${seen}` : undefined

/**
 * An offset list's short page that names a next one: an offset key follows only a full page, so
 * the server cut it short and the rows between are lost (a keyset list's short page is followed).
 */
export const offsetPageCutShort = (keys: string | undefined, count: number, asked: number, nextKey: string | null): string | undefined =>
  keys === "offset" && count > 0 && count < asked && nextKey !== null
    ? `the page held ${count} of the ${asked} records asked for, yet named a next page (an offset key follows only a full page): the server cut it short, and rows may be lost`
    : undefined

/** A page starting with the record an earlier page started with: a listing that cycles with fresh keys. */
export const pageStartsAgain = (starts: ReadonlySet<string>, start: string): string | undefined =>
  starts.has(start) ? "a page starts with a record an earlier page started with: the listing cycles" : undefined

/** Pages a list with an estimated total may always read, however low the estimate (a table never analyzed says 0 or -1). */
export const ESTIMATE_SLACK_PAGES = 200

/**
 * A snapshot's listing that does not end: past an exact total by more than two pages, or, where
 * the total is an estimate (stale, or -1), past ten times it and ESTIMATE_SLACK_PAGES pages.
 */
export const listingDoesNotEnd = (rows: number, total: number, pageSize: number, totalIsEstimate: boolean): string | undefined => {
  if (!totalIsEstimate && total >= 0 && rows > total + 2 * pageSize)
    return `${rows} records read, but pagination.total says ${total}: the listing does not end`
  if (totalIsEstimate && rows > Math.max(10 * total, ESTIMATE_SLACK_PAGES * pageSize))
    return `${rows} records read, ten times what pagination.total estimates (${total}) and past ${ESTIMATE_SLACK_PAGES} pages: the listing does not end`
  return undefined
}

/**
 * The order records of an append list must come in, checked record by record: inside the shard's
 * heights (height lists) or the heights its positions were found for (`asked`), heights never going back, none of another chain, and no record twice.
 * Since heights never go back, a record that comes again comes at the height the walk is at (every
 * record since it had that height too), so remembering the records of the current height catches
 * a repeat after any number of pages, whatever keys the server hands out: a cursor cycling back
 * one page or a hundred inside a block fails the shard before anything of it is committed. Memory
 * stays bounded by the records of one height.
 */
export const recordOrder = (
  list: Pick<AppendList, "unit" | "identityOf" | "chainIdOf">,
  range: readonly [number, number],
  chainId: string,
  asked?: readonly [number, number]
) => {
  let lastHeight = -Infinity
  const atHeight = new Set<string>()
  /** what is wrong with `item` (at height `h`) coming next, or undefined */
  const next = (item: unknown, h: number): string | undefined => {
    // (a block at the height before it is its identity again: recordTwice names it)
    const misplaced =
      outsideShard(list.unit, h, range, asked) ??
      wentBack(h, lastHeight) ??
      foreignChain(h, list.chainIdOf ? list.chainIdOf(item) : chainId, chainId)
    if (misplaced) return misplaced
    const id = list.identityOf(item)
    if (h > lastHeight) atHeight.clear()
    else if (atHeight.has(id)) return recordTwice(id, h)
    atHeight.add(id)
    lastHeight = h
    return undefined
  }
  return { next, lastHeight: () => lastHeight }
}
