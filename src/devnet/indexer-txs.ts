/**
 * The devnet indexer's cosmos tx lists (/indexer/tx/v1/txs): all txs, by height, by account and
 * by hash, with the `msgs` type filter; by_account and filtered scans are cached and extended as
 * the chain grows.
 */
import type { Chain } from "./chain.js"
import { arrayList, cursorPage, parsePagination, rangeList, type Pagination } from "./pagination.js"
import { knownMsgTypes, msgTypeOf, txAccounts, txJson } from "./render.js"
import {
  HttpError,
  json,
  parseAccount,
  parseHeight,
  signerOnly,
  type DevnetResponse,
  type EndpointRequest,
  type ScanCache
} from "./indexer-wire.js"

/** A page of cosmos txs by sequence, as every list of cosmos txs (NFT token txs too) returns it. */
export const txsPage = (c: Chain, page: { seqs: Array<number>; pagination: Pagination }): DevnetResponse =>
  json({
    txs: page.seqs.map((s) => {
      const { height, index } = c.txAtSeq(s)
      return txJson(c, height, index)
    }),
    pagination: page.pagination
  })

export const txs = (c: Chain, scans: ScanCache, { rest, q, filtered }: EndpointRequest): DevnetResponse => {
  const msgs = msgFilter(c, q)
  if (rest.length === 0) {
    const p = parsePagination(q)
    if (!msgs) return txsPage(c, cursorPage(rangeList(1, c.txTotal()), p, "sequence", p.countTotal ? String(c.txTotal()) : "0"))
    const list = scan(c, scans, `msgs:${[...msgs].sort().join(",")}`, (h, i) => msgs.has(msgTypeOf(c, c.plan(h, i)).slice(1)))
    return txsPage(c, cursorPage(arrayList(list), p, "sequence", filtered(list.length)))
  }
  if (rest[0] === "by_height" && rest.length === 2) {
    const h = parseHeight(rest[1])
    const p = parsePagination(q)
    const seqs: Array<number> = []
    if (h <= c.tip) {
      for (let i = 0; i < c.blockTxCount(h); i++) {
        if (!msgs || msgs.has(msgTypeOf(c, c.plan(h, i)).slice(1))) seqs.push(c.txSeqBefore(h) + i + 1)
      }
    }
    return txsPage(c, cursorPage(arrayList(seqs), p, "sequence", filtered(seqs.length)))
  }
  if (rest[0] === "by_account" && rest.length === 2) {
    const account = parseAccount(rest[1])
    const p = parsePagination(q)
    const isSigner = signerOnly(q)
    const list = scan(
      c,
      scans,
      `acct:${account}:${isSigner}:${msgs ? [...msgs].sort().join(",") : ""}`,
      (h, i) =>
        txAccounts(c, h, i).some((a) => a.hex === account && (!isSigner || a.signer)) &&
        (!msgs || msgs.has(msgTypeOf(c, c.plan(h, i)).slice(1)))
    )
    return txsPage(c, cursorPage(arrayList(list), p, "sequence", filtered(list.length)))
  }
  if (rest.length === 1) {
    // as util.HexToBytes: a 0x prefix is dropped (lowercase "0x" only, as strings.TrimPrefix)
    const hash = rest[0].replace(/^0x/, "")
    if (!/^[0-9a-fA-F]+$/.test(hash)) throw new HttpError(400, "invalid hash format")
    const found = c.lookupTxHash(hash.toUpperCase())
    if (!found) throw new HttpError(404, "[NOT_FOUND] transaction not found")
    return json({ tx: txJson(c, found.height, found.index) })
  }
  throw new HttpError(404, `Cannot GET /indexer/tx/v1/txs/${rest.join("/")}`)
}

/** `msgs` filter: repeated params, no leading slash; unknown types dropped; none known = no filter. */
const msgFilter = (c: Chain, q: URLSearchParams): Set<string> | undefined => {
  const known = knownMsgTypes(c)
  const asked = q.getAll("msgs").filter((m) => known.has(m))
  return asked.length > 0 ? new Set(asked) : undefined
}

/** Sequences (ascending) of cosmos txs matching `pred`, cached and extended as the chain grows. */
const scan = (c: Chain, cache: ScanCache, key: string, pred: (height: number, index: number) => boolean): Array<number> => {
  let entry = cache.get(key)
  if (!entry) {
    entry = { tip: 0, seqs: [] }
    if (cache.size > 256) cache.clear()
    cache.set(key, entry)
  }
  for (let h = entry.tip + 1; h <= c.tip; h++) {
    for (let i = 0; i < c.blockTxCount(h); i++) if (pred(h, i)) entry.seqs.push(c.txSeqBefore(h) + i + 1)
  }
  entry.tip = c.tip
  return entry.seqs
}
