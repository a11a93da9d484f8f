/**
 * The devnet indexer's EVM families, served on EVM chains only: receipts (/indexer/tx/v1/evm-txs)
 * and internal txs (/indexer/tx/v1/evm-internal-txs), the latter only up to the internal-tx
 * watermark, since the real indexer traces blocks behind the tip.
 */
import type { Chain } from "./chain.js"
import { arrayList, cursorPage, parsePagination, rangeList, type Pagination } from "./pagination.js"
import { evmReceiptsAt, internalTxsAt } from "./render.js"
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

/** The records at chain-wide sequence numbers `seqs` (1-based), each block rendered once. */
const atSeqs = <T>(
  seqs: ReadonlyArray<number>,
  heightOf: (seq: number) => number,
  seqBefore: (height: number) => number,
  blockAt: (height: number) => ReadonlyArray<T>
): Array<T> => {
  const byHeight = new Map<number, ReadonlyArray<T>>()
  return seqs.map((s) => {
    const h = heightOf(s)
    let block = byHeight.get(h)
    if (!block) byHeight.set(h, (block = blockAt(h)))
    return block[s - seqBefore(h) - 1]
  })
}

export const evmTxs = (c: Chain, scans: ScanCache, { rest, q, filtered }: EndpointRequest): DevnetResponse => {
  const renderSeqs = (page: { seqs: Array<number>; pagination: Pagination }) => {
    const txs = atSeqs(
      page.seqs,
      (s) => c.heightOfEvmSeq(s),
      (h) => c.evmSeqBefore(h),
      (h) => evmReceiptsAt(c, h)
    ).map((r) => r.receipt)
    return json({ txs, pagination: page.pagination })
  }
  if (rest.length === 0) {
    const p = parsePagination(q)
    return renderSeqs(cursorPage(rangeList(1, c.evmTotal()), p, "sequence", p.countTotal ? String(c.evmTotal()) : "0"))
  }
  if (rest[0] === "by_height" && rest.length === 2) {
    const h = parseHeight(rest[1])
    const p = parsePagination(q)
    const list = h <= c.tip ? rangeList(c.evmSeqBefore(h) + 1, c.evmSeqBefore(h + 1)) : rangeList(1, 0)
    return renderSeqs(cursorPage(list, p, "sequence", filtered(list.length)))
  }
  if (rest[0] === "by_account" && rest.length === 2) {
    const account = parseAccount(rest[1])
    const p = parsePagination(q)
    const isSigner = signerOnly(q)
    const list = evmScan(c, scans, `evm:${account}:${isSigner}`, (accounts) =>
      accounts.some((a, k) => a === account && (!isSigner || k === 0))
    )
    return renderSeqs(cursorPage(arrayList(list), p, "sequence", filtered(list.length)))
  }
  if (rest.length === 1) {
    const found = c.lookupTxHash(rest[0])
    if (!found || !rest[0].startsWith("0x")) throw new HttpError(404, "tx not found")
    const receipt = evmReceiptsAt(c, found.height).find((r) => r.receipt.transactionHash === rest[0].toLowerCase())
    if (!receipt) throw new HttpError(404, "tx not found")
    return json({ tx: receipt.receipt })
  }
  throw new HttpError(404, `Cannot GET /indexer/tx/v1/evm-txs/${rest.join("/")}`)
}

/** Sequences (ascending) of EVM txs whose accounts (signer first) match `pred`, cached and extended as the chain grows. */
const evmScan = (c: Chain, cache: ScanCache, key: string, pred: (accounts: Array<string>) => boolean): Array<number> => {
  let entry = cache.get(key)
  if (!entry) cache.set(key, (entry = { tip: 0, seqs: [] }))
  for (let h = entry.tip + 1; h <= c.tip; h++) for (const r of evmReceiptsAt(c, h)) if (pred(r.accounts)) entry.seqs.push(r.evmSeq)
  entry.tip = c.tip
  return entry.seqs
}

export const internalTxs = (c: Chain, { rest, q, filtered }: EndpointRequest): DevnetResponse => {
  const watermark = c.internalTxHeight
  const render = (page: { seqs: Array<number>; pagination: Pagination }) => {
    const rows = atSeqs(
      page.seqs,
      (s) => c.heightOfTraceSeq(s),
      (h) => c.traceSeqBefore(h),
      (h) => internalTxsAt(c, h)
    ).map((r) => r.row)
    return json({ internal_txs: rows, pagination: page.pagination })
  }
  if (rest.length === 0) {
    const p = parsePagination(q)
    const total = c.traceTotal(watermark)
    return render(cursorPage(rangeList(1, total), p, "sequence", p.countTotal ? String(total) : "0"))
  }
  if (rest[0] === "by_height" && rest.length === 2) {
    const h = parseHeight(rest[1])
    const p = parsePagination(q)
    const list = h <= watermark ? rangeList(c.traceSeqBefore(h) + 1, c.traceSeqBefore(h + 1)) : rangeList(1, 0)
    return render(cursorPage(list, p, "sequence", filtered(list.length)))
  }
  if (rest[0] === "by_account" && rest.length === 2) {
    const account = "0x" + parseAccount(rest[1])
    const p = parsePagination(q)
    const seqs: Array<number> = []
    for (let h = 1; h <= watermark; h++) for (const t of internalTxsAt(c, h)) if (t.from === account || t.to === account) seqs.push(t.seq)
    return render(cursorPage(arrayList(seqs), p, "sequence", filtered(seqs.length)))
  }
  if (rest.length === 1) {
    const hash = rest[0]
    const found = hash.startsWith("0x") ? c.lookupTxHash(hash) : undefined
    if (!found || found.height > watermark) throw new HttpError(404, "transaction not found")
    const p = parsePagination(q)
    const seqs = internalTxsAt(c, found.height)
      .filter((t) => (t.row.hash as string) === hash.toLowerCase())
      .map((t) => t.seq)
    if (seqs.length === 0) throw new HttpError(404, "transaction not found")
    return render(cursorPage(arrayList(seqs), p, "sequence", filtered(seqs.length)))
  }
  throw new HttpError(404, `Cannot GET /indexer/tx/v1/evm-internal-txs/${rest.join("/")}`)
}
