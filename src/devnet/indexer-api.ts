/**
 * Routes of the devnet indexer: every endpoint of the real indexer (rollytics), with its wire
 * types, totals, watermarks and plain-text errors. Pure: (chain, request) → response, so faults
 * and the HTTP server wrap it without knowing any endpoint.
 */
import type { Chain } from "./chain.js"
import { tokenKey } from "./chain.js"
import { bech32Decode, goJson } from "./encoding.js"
import {
  arrayList,
  BadRequest,
  cursorPage,
  offsetPage,
  parsePagination,
  rangeList,
  type PageParams,
  type Pagination,
  type SeqList
} from "./pagination.js"
import {
  blockJson,
  collectionJson,
  evmReceiptsAt,
  internalTxsAt,
  knownMsgTypes,
  msgTypeOf,
  tokenJson,
  txAccounts,
  txJson
} from "./render.js"
import { openApiDocument } from "./openapi.js"

export interface DevnetResponse {
  readonly status: number
  readonly body: string
  readonly contentType: string
}

export interface IndexerOptions {
  /** Simulates the 5 s COUNT timeout: filtered totals become "-1". */
  readonly countTimeout: boolean
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
}

const json = (body: unknown): DevnetResponse => ({ status: 200, body: goJson(body), contentType: "application/json" })
export const plainText = (status: number, body: string): DevnetResponse => ({
  status,
  body: status >= 500 ? "Internal Server Error" : body,
  contentType: "text/plain; charset=utf-8"
})

const EVM_ONLY = "evm routes are not available on this chain"

/** Path parameter as Fiber hands it over: raw, with %2F kept (handlers decode what they need). */
const decodeParam = (s: string) => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

const parseHeight = (raw: string): number => {
  if (!/^[+-]?\d+$/.test(raw)) throw new HttpError(400, `[INVALID_VALUE] invalid value for height: ${raw} (must be a valid integer)`)
  const h = Number(raw)
  if (h < 1) throw new HttpError(400, `[INVALID_VALUE] invalid value for height: ${raw} (must be a positive integer)`)
  return h
}

/** Account as bech32 (init1…) or 0x-hex; returns the 20 address bytes as lowercase hex. */
const parseAccount = (raw: string): string => {
  if (/^0x[0-9a-fA-F]{40}$/.test(raw)) return raw.slice(2).toLowerCase()
  const decoded = bech32Decode(raw)
  if (decoded && decoded.bytes.length === 20) return Buffer.from(decoded.bytes).toString("hex")
  throw new HttpError(400, `[INVALID_VALUE] invalid value for account: ${raw} (invalid address format)`)
}

/** Collection address: 0x-hex; a bad one fails with Go's raw hex error, as the real server does. */
const parseCollectionAddr = (raw: string): string => {
  const body = raw.startsWith("0x") ? raw.slice(2) : raw
  for (let i = 0; i < body.length; i++) {
    if (!/[0-9a-fA-F]/.test(body[i])) {
      const cp = body.codePointAt(i)!
      throw new HttpError(400, `encoding/hex: invalid byte: U+${cp.toString(16).toUpperCase().padStart(4, "0")} '${String.fromCodePoint(cp)}'`)
    }
  }
  if (body.length % 2 !== 0) throw new HttpError(400, "encoding/hex: odd length hex string")
  return "0x" + body.toLowerCase()
}

export class IndexerApi {
  /** by_account and msgs scans are cached per key and extended as the chain grows */
  private readonly scanCache = new Map<string, { tip: number; seqs: Array<number> }>()

  constructor(
    private readonly chain: Chain,
    private readonly options: IndexerOptions
  ) {}

  handle(method: string, url: URL): DevnetResponse {
    try {
      if (method !== "GET") throw new HttpError(405, "Method Not Allowed")
      return this.route(url)
    } catch (e) {
      if (e instanceof HttpError) return plainText(e.status, e.message)
      if (e instanceof BadRequest) return plainText(400, e.message)
      return plainText(500, "Internal Server Error")
    }
  }

  private route(url: URL): DevnetResponse {
    const parts = url.pathname.split("/").slice(1)
    const q = url.searchParams
    const c = this.chain
    const notFound = () => new HttpError(404, `Cannot GET ${url.pathname}`)
    if (url.pathname === "/status") return json(this.status())
    if (url.pathname === "/swagger/doc.json") return json(openApiDocument(c.isEvm))
    if (parts[0] !== "indexer" || parts[2] !== "v1") throw notFound()
    const [, family, , resource, ...rest] = parts
    const filtered = (n: number) => (!this.pageCountTotal(q) ? "0" : this.options.countTimeout ? "-1" : String(n))

    if (family === "block") {
      if (resource === "avg_blocktime" && rest.length === 0) return json({ avg_block_time: this.avgBlockTime() })
      if (resource !== "blocks") throw notFound()
      if (rest.length === 0) {
        const p = parsePagination(q)
        const page = cursorPage(rangeList(1, c.tip), p, "height", String(c.tip))
        return json({ blocks: page.seqs.map((h) => blockJson(c, h)), pagination: page.pagination })
      }
      if (rest.length === 1) {
        const h = parseHeight(decodeParam(rest[0]))
        if (h > c.tip) throw new HttpError(404, "[NOT_FOUND] block not found")
        return json({ block: blockJson(c, h) })
      }
      throw notFound()
    }

    if (family === "tx") {
      if (resource === "txs") return this.txs(rest, q, filtered)
      if (resource === "evm-txs" || resource === "evm-internal-txs") {
        if (!c.isEvm) throw new HttpError(404, EVM_ONLY)
        return resource === "evm-txs" ? this.evmTxs(rest, q, filtered) : this.internalTxs(rest, q, filtered)
      }
      throw notFound()
    }

    if (family === "nft") return this.nft(resource, rest, q, filtered, notFound)

    if (family === "richlist" && resource !== undefined && rest.length === 0) {
      if (!c.isEvm) throw notFound()
      return this.richList(resource, q)
    }
    throw notFound()
  }

  private pageCountTotal(q: URLSearchParams) {
    const v = q.get("pagination.count_total")
    return !(v !== null && ["0", "f", "F", "FALSE", "false", "False"].includes(v))
  }

  status() {
    const c = this.chain
    if (c.tip < 1) throw new HttpError(500, "")
    const out: Record<string, unknown> = {
      version: "v1.0.55-devnet",
      commit_hash: "devnet0000000000000000000000000000000000",
      chain_id: c.u.chainId,
      height: c.tip
    }
    // omitempty: zero values are absent
    if (c.internalTxHeight > 0) out.internal_tx_height = c.internalTxHeight
    if (c.isEvm && c.richListHeight > 0) out.rich_list_height = c.richListHeight
    if (c.isEvm) out.evm_ret_cleanup_height = c.tip
    return out
  }

  avgBlockTime(): number {
    const c = this.chain
    const n = Math.min(100, c.tip)
    if (n < 2) return 0
    return (c.headerTimeMs(c.tip) - c.headerTimeMs(c.tip - n + 1)) / 1000 / (n - 1)
  }

  // ------------------------------------------------------------------ cosmos txs

  private txs(rest: Array<string>, q: URLSearchParams, filtered: (n: number) => string): DevnetResponse {
    const c = this.chain
    const msgs = this.msgFilter(q)
    const render = (page: { seqs: Array<number>; pagination: Pagination }) =>
      json({
        txs: page.seqs.map((s) => {
          const { height, index } = c.txAtSeq(s)
          return txJson(c, height, index)
        }),
        pagination: page.pagination
      })
    if (rest.length === 0) {
      const p = parsePagination(q)
      if (!msgs) return render(cursorPage(rangeList(1, c.txTotal()), p, "sequence", p.countTotal ? String(c.txTotal()) : "0"))
      const list = this.scan(`msgs:${[...msgs].sort().join(",")}`, (h, i) => msgs.has(msgTypeOf(c, c.plan(h, i)).slice(1)))
      return render(cursorPage(arrayList(list), p, "sequence", filtered(list.length)))
    }
    if (rest[0] === "by_height" && rest.length === 2) {
      const h = parseHeight(decodeParam(rest[1]))
      const p = parsePagination(q)
      const seqs: Array<number> = []
      if (h <= c.tip) {
        for (let i = 0; i < c.blockTxCount(h); i++) {
          if (!msgs || msgs.has(msgTypeOf(c, c.plan(h, i)).slice(1))) seqs.push(c.txSeqBefore(h) + i + 1)
        }
      }
      return render(cursorPage(arrayList(seqs), p, "sequence", filtered(seqs.length)))
    }
    if (rest[0] === "by_account" && rest.length === 2) {
      const account = parseAccount(decodeParam(rest[1]))
      const p = parsePagination(q)
      const isSigner = q.get("is_signer") === "true" || q.get("is_signer") === "1"
      const list = this.scan(`acct:${account}:${isSigner}:${msgs ? [...msgs].sort().join(",") : ""}`, (h, i) =>
        txAccounts(c, h, i).some((a) => a.hex === account && (!isSigner || a.signer)) && (!msgs || msgs.has(msgTypeOf(c, c.plan(h, i)).slice(1)))
      )
      return render(cursorPage(arrayList(list), p, "sequence", filtered(list.length)))
    }
    if (rest.length === 1) {
      const hash = decodeParam(rest[0])
      if (!/^[0-9a-fA-F]+$/.test(hash)) throw new HttpError(400, "invalid hash format")
      const found = c.lookupTxHash(hash.toUpperCase())
      if (!found) throw new HttpError(404, "[NOT_FOUND] transaction not found")
      return json({ tx: txJson(c, found.height, found.index) })
    }
    throw new HttpError(404, `Cannot GET /indexer/tx/v1/txs/${rest.join("/")}`)
  }

  /** `msgs` filter: repeated params, no leading slash; unknown types dropped; none known = no filter. */
  private msgFilter(q: URLSearchParams): Set<string> | undefined {
    const known = knownMsgTypes(this.chain)
    const asked = q.getAll("msgs").filter((m) => known.has(m))
    return asked.length > 0 ? new Set(asked) : undefined
  }

  /** Sequences (ascending) of cosmos txs matching `pred`, cached and extended as the chain grows. */
  private scan(key: string, pred: (height: number, index: number) => boolean): Array<number> {
    const c = this.chain
    let entry = this.scanCache.get(key)
    if (!entry) {
      entry = { tip: 0, seqs: [] }
      if (this.scanCache.size > 256) this.scanCache.clear()
      this.scanCache.set(key, entry)
    }
    for (let h = entry.tip + 1; h <= c.tip; h++) {
      for (let i = 0; i < c.blockTxCount(h); i++) if (pred(h, i)) entry.seqs.push(c.txSeqBefore(h) + i + 1)
    }
    entry.tip = c.tip
    return entry.seqs
  }

  // ------------------------------------------------------------------ EVM txs

  private evmTxs(rest: Array<string>, q: URLSearchParams, filtered: (n: number) => string): DevnetResponse {
    const c = this.chain
    const renderSeqs = (page: { seqs: Array<number>; pagination: Pagination }) => {
      const byHeight = new Map<number, ReturnType<typeof evmReceiptsAt>>()
      const txs = page.seqs.map((s) => {
        const h = c.heightOfEvmSeq(s)
        let block = byHeight.get(h)
        if (!block) byHeight.set(h, (block = evmReceiptsAt(c, h)))
        return block[s - c.evmSeqBefore(h) - 1].receipt
      })
      return json({ txs, pagination: page.pagination })
    }
    if (rest.length === 0) {
      const p = parsePagination(q)
      return renderSeqs(cursorPage(rangeList(1, c.evmTotal()), p, "sequence", p.countTotal ? String(c.evmTotal()) : "0"))
    }
    if (rest[0] === "by_height" && rest.length === 2) {
      const h = parseHeight(decodeParam(rest[1]))
      const p = parsePagination(q)
      const list = h <= c.tip ? rangeList(c.evmSeqBefore(h) + 1, c.evmSeqBefore(h + 1)) : rangeList(1, 0)
      return renderSeqs(cursorPage(list, p, "sequence", filtered(list.length)))
    }
    if (rest[0] === "by_account" && rest.length === 2) {
      const account = parseAccount(decodeParam(rest[1]))
      const p = parsePagination(q)
      const isSigner = q.get("is_signer") === "true" || q.get("is_signer") === "1"
      const list = this.evmScan(`evm:${account}:${isSigner}`, (accounts) => accounts.some((a, k) => a === account && (!isSigner || k === 0)))
      return renderSeqs(cursorPage(arrayList(list), p, "sequence", filtered(list.length)))
    }
    if (rest.length === 1) {
      const found = c.lookupTxHash(decodeParam(rest[0]))
      if (!found || !decodeParam(rest[0]).startsWith("0x")) throw new HttpError(404, "tx not found")
      const receipt = evmReceiptsAt(c, found.height).find((r) => r.plan.index === found.index)
      if (!receipt) throw new HttpError(404, "tx not found")
      return json({ tx: receipt.receipt })
    }
    throw new HttpError(404, `Cannot GET /indexer/tx/v1/evm-txs/${rest.join("/")}`)
  }

  private readonly evmScanCache = new Map<string, { tip: number; seqs: Array<number> }>()
  private evmScan(key: string, pred: (accounts: Array<string>) => boolean): Array<number> {
    const c = this.chain
    let entry = this.evmScanCache.get(key)
    if (!entry) this.evmScanCache.set(key, (entry = { tip: 0, seqs: [] }))
    for (let h = entry.tip + 1; h <= c.tip; h++) for (const r of evmReceiptsAt(c, h)) if (pred(r.accounts)) entry.seqs.push(r.evmSeq)
    entry.tip = c.tip
    return entry.seqs
  }

  // ------------------------------------------------------------------ internal txs

  private internalTxs(rest: Array<string>, q: URLSearchParams, filtered: (n: number) => string): DevnetResponse {
    const c = this.chain
    const watermark = c.internalTxHeight
    const render = (page: { seqs: Array<number>; pagination: Pagination }) => {
      const byHeight = new Map<number, ReturnType<typeof internalTxsAt>>()
      const rows = page.seqs.map((s) => {
        const h = c.heightOfTraceSeq(s)
        let block = byHeight.get(h)
        if (!block) byHeight.set(h, (block = internalTxsAt(c, h)))
        return block[s - c.traceSeqBefore(h) - 1].row
      })
      return json({ internal_txs: rows, pagination: page.pagination })
    }
    if (rest.length === 0) {
      const p = parsePagination(q)
      const total = c.traceTotal(watermark)
      return render(cursorPage(rangeList(1, total), p, "sequence", p.countTotal ? String(total) : "0"))
    }
    if (rest[0] === "by_height" && rest.length === 2) {
      const h = parseHeight(decodeParam(rest[1]))
      const p = parsePagination(q)
      const list = h <= watermark ? rangeList(c.traceSeqBefore(h) + 1, c.traceSeqBefore(h + 1)) : rangeList(1, 0)
      return render(cursorPage(list, p, "sequence", filtered(list.length)))
    }
    if (rest[0] === "by_account" && rest.length === 2) {
      const account = "0x" + parseAccount(decodeParam(rest[1]))
      const p = parsePagination(q)
      const seqs: Array<number> = []
      for (let h = 1; h <= watermark; h++) for (const t of internalTxsAt(c, h)) if (t.from === account || t.to === account) seqs.push(t.seq)
      return render(cursorPage(arrayList(seqs), p, "sequence", filtered(seqs.length)))
    }
    if (rest.length === 1) {
      const hash = decodeParam(rest[0])
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

  // ------------------------------------------------------------------ NFTs

  private nft(resource: string | undefined, rest: Array<string>, q: URLSearchParams, filtered: (n: number) => string, notFound: () => Error): DevnetResponse {
    const c = this.chain
    const created = c.u.collections.filter((col) => c.collectionCreated(col))
    const collectionsPage = (indices: Array<number>, p: PageParams, total: string) => {
      // ORDER BY height only (no tie-breaker in the real server; ties by address here for determinism)
      let sorted = [...indices].sort((a, b) => {
        const d = c.u.collections[a].createdAt - c.u.collections[b].createdAt
        const byAddr = c.u.collections[a].address < c.u.collections[b].address ? -1 : 1
        return (d !== 0 ? d : byAddr) * (p.reverse ? -1 : 1)
      })
      let params = p
      if (p.key.type === "height") {
        const h = p.key.value
        sorted = sorted.filter((i) => (p.reverse ? c.u.collections[i].createdAt < h : c.u.collections[i].createdAt > h))
        params = { ...p, key: { type: "none" }, offset: 0 }
      }
      const page = offsetPage(sorted, params, total)
      return json({ collections: page.rows.map((i) => collectionJson(c, i)), pagination: page.pagination })
    }
    if (resource === "collections") {
      if (rest.length === 0) {
        const p = parsePagination(q)
        // reltuples estimate: the devnet's estimate happens to be exact
        return collectionsPage(created.map((x) => x.index), p, p.countTotal ? String(created.length) : "0")
      }
      if (rest[0] === "by_account" && rest.length === 2) {
        const account = parseAccount(decodeParam(rest[1]))
        const p = parsePagination(q)
        const owned = created.filter((col) => c.liveTokensOf(col.index).some((t) => c.accountOf(t.owner).hex === account)).map((x) => x.index)
        return collectionsPage(owned, p, filtered(owned.length))
      }
      if (rest[0] === "by_name" && rest.length === 2) {
        const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "")
        const needle = norm(decodeParam(rest[1]))
        const p = parsePagination(q)
        const matches = created.filter((col) => norm(col.name).includes(needle) || (col.originName !== "" && norm(col.originName).includes(needle))).map((x) => x.index)
        return collectionsPage(matches, p, String(matches.length))
      }
      if (rest.length === 1) {
        const addr = parseCollectionAddr(decodeParam(rest[0]))
        const col = created.find((x) => x.address === addr)
        if (!col) throw new HttpError(404, "nft collection not found")
        return json({ collection: collectionJson(c, col.index) })
      }
      throw notFound()
    }
    if (resource === "tokens" && rest.length === 2 && (rest[0] === "by_account" || rest[0] === "by_collection")) {
      let tokens
      if (rest[0] === "by_account") {
        const account = parseAccount(decodeParam(rest[1]))
        const collFilter = q.get("collection_addr")
        tokens = created
          .filter((col) => !collFilter || col.address === collFilter.toLowerCase())
          .flatMap((col) => c.liveTokensOf(col.index))
          .filter((t) => c.accountOf(t.owner).hex === account)
      } else {
        const addr = parseCollectionAddr(decodeParam(rest[1]))
        const col = created.find((x) => x.address === addr)
        tokens = col ? c.liveTokensOf(col.index) : []
      }
      const orderBy = q.get("order_by") ?? "token_id"
      if (orderBy !== "token_id" && orderBy !== "height") throw new HttpError(400, `invalid order_by value '${orderBy}', must be one of: token_id, height`)
      const p = parsePagination(q)
      const tokenId = q.get("token_id")
      if (tokenId !== null && tokenId !== "") tokens = tokens.filter((t) => t.tokenId === tokenId)
      const dir = p.reverse ? -1 : 1
      const cmpText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
      tokens.sort((a, b) => {
        const byId = cmpText(a.tokenId, b.tokenId)
        const byHeight = a.height - b.height
        const primary = orderBy === "token_id" ? byId : byHeight
        const secondary = orderBy === "token_id" ? byHeight : byId
        return (primary !== 0 ? primary : secondary !== 0 ? secondary : a.collection - b.collection) * dir
      })
      let params = p
      if (p.key.type === "height_token") {
        const key = p.key
        tokens = tokens.filter((t) => {
          const cmp = t.height !== key.height ? t.height - key.height : cmpText(t.tokenId, key.tokenId)
          return p.reverse ? cmp < 0 : cmp > 0
        })
        params = { ...p, key: { type: "none" }, offset: 0 }
      }
      const page = offsetPage(tokens, params, filtered(tokens.length))
      return json({ tokens: page.rows.map((t) => tokenJson(c, t)), pagination: page.pagination })
    }
    if (resource === "txs" && rest.length === 2) {
      const addr = parseCollectionAddr(decodeParam(rest[0]))
      const tokenId = decodeParam(rest[1])
      const col = c.u.collections.find((x) => x.address === addr)
      const token = col ? c.tokens.get(tokenKey(col.index, tokenId)) : undefined
      const p = parsePagination(q)
      const list: SeqList = arrayList(token ? token.txs : [])
      const page = cursorPage(list, p, "sequence", filtered(list.length))
      return json({
        txs: page.seqs.map((s) => {
          const { height, index } = c.txAtSeq(s)
          return txJson(c, height, index)
        }),
        pagination: page.pagination
      })
    }
    throw notFound()
  }

  // ------------------------------------------------------------------ rich list

  private richList(rawDenom: string, q: URLSearchParams): DevnetResponse {
    const c = this.chain
    // lower-cased and %2F turned into "/", then resolved to an ERC-20 through minievm
    const denom = decodeParam(rawDenom).toLowerCase()
    const index = c.denomIndex(denom)
    if (index < 0) throw new HttpError(400, `failed to get contract address by denom: ${denom}: not found`)
    const p = parsePagination(q)
    const holders = c.holders(index)
    if (!p.reverse) holders.reverse()
    const page = offsetPage(holders, p, p.countTotal ? String(holders.length) : "0")
    return json({ holders: page.rows.map((h) => ({ account: h.account.evm, amount: h.amount.toString() })), pagination: page.pagination })
  }
}
