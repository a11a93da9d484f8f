/**
 * Routes of the devnet indexer: every endpoint of the real indexer (rollytics), with its wire
 * types, totals, watermarks and plain-text errors. Pure: (chain, request) → response, so faults
 * and the HTTP server wrap it without knowing any endpoint.
 *
 * This module holds the dispatch, /status and the block family; the other families live in
 * indexer-txs.ts (cosmos txs), indexer-evm.ts (EVM and internal txs), indexer-nft.ts and
 * indexer-richlist.ts, on the shared conventions of indexer-wire.ts.
 */
import type { Chain } from "./chain.js"
import { BadRequest, cursorPage, metered, parsePagination, rangeList, type OffsetMeter } from "./pagination.js"
import { blockJson } from "./render.js"
import { openApiDocument } from "./openapi.js"
import { evmTxs, internalTxs } from "./indexer-evm.js"
import { nft } from "./indexer-nft.js"
import { richList } from "./indexer-richlist.js"
import { txs } from "./indexer-txs.js"
import { HttpError, json, parseHeight, plainText, type DevnetResponse, type EndpointRequest, type ScanCache } from "./indexer-wire.js"

export { plainText, type DevnetResponse } from "./indexer-wire.js"

export interface IndexerOptions {
  /** Simulates the 5 s COUNT timeout: filtered totals become "-1". */
  readonly countTimeout: boolean
  /**
   * The real indexer serves the rich list on every VM since February 2026 (bech32 accounts off
   * EVM, `rich_list_height` in /status); "evm-only" keeps the older behaviour (404 elsewhere).
   */
  readonly richList: "all-vms" | "evm-only"
  /** µs each row skipped through pagination.offset adds to its answer (Postgres scans every row an OFFSET skips); 0: free */
  readonly offsetRowUs: number
}

/** What the indexer has served so far. */
export interface IndexerStats {
  /** requests answered (faults injected before the handler are not) */
  readonly requests: number
  /** rows skipped through offsets (pagination.offset or an offset key): rows a real server scans to throw away */
  readonly offsetRowsSkipped: number
}

const EVM_ONLY = "evm routes are not available on this chain"

export class IndexerApi {
  /** by_account and msgs scans are cached per key and extended as the chain grows: cosmos txs, then EVM txs */
  private readonly scans: ScanCache = new Map()
  private readonly evmScans: ScanCache = new Map()

  constructor(
    private readonly chain: Chain,
    private readonly options: IndexerOptions
  ) {}

  private get servesRichList() {
    return this.options.richList === "all-vms" || this.chain.isEvm
  }

  private requests = 0
  private skipped = 0

  stats(): IndexerStats {
    return { requests: this.requests, offsetRowsSkipped: this.skipped }
  }

  /** Answers one request, charging the rows its offset skipped: counted, and as time when offsetRowUs > 0. */
  handle(method: string, url: URL): DevnetResponse {
    const meter: OffsetMeter = { rows: 0 }
    const response = metered(meter, () => this.answer(method, url))
    this.requests++
    this.skipped += meter.rows
    return meter.rows > 0 && this.options.offsetRowUs > 0
      ? { ...response, workMs: (meter.rows * this.options.offsetRowUs) / 1000 }
      : response
  }

  private answer(method: string, url: URL): DevnetResponse {
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
    if (url.pathname === "/swagger/doc.json") return json(openApiDocument(c.isEvm, this.options.richList === "all-vms"))
    if (parts[0] !== "indexer" || parts[2] !== "v1") throw notFound()
    const [, family, , resource, ...rest] = parts
    const filtered = (n: number) => (!this.pageCountTotal(q) ? "0" : this.options.countTimeout ? "-1" : String(n))
    const req: EndpointRequest = { rest, q, filtered }

    if (family === "block") {
      if (resource === "avg_blocktime" && rest.length === 0) return json({ avg_block_time: this.avgBlockTime() })
      if (resource !== "blocks") throw notFound()
      if (rest.length === 0) {
        const p = parsePagination(q)
        const page = cursorPage(rangeList(1, c.tip), p, "height", String(c.tip))
        return json({ blocks: page.seqs.map((h) => blockJson(c, h)), pagination: page.pagination })
      }
      if (rest.length === 1) {
        const h = parseHeight(rest[0])
        if (h > c.tip) throw new HttpError(404, "[NOT_FOUND] block not found")
        return json({ block: blockJson(c, h) })
      }
      throw notFound()
    }

    if (family === "tx") {
      if (resource === "txs") return txs(c, this.scans, req)
      if (resource === "evm-txs" || resource === "evm-internal-txs") {
        if (!c.isEvm) throw new HttpError(404, EVM_ONLY)
        return resource === "evm-txs" ? evmTxs(c, this.evmScans, req) : internalTxs(c, req)
      }
      throw notFound()
    }

    if (family === "nft") return nft(c, resource, req, notFound)

    if (family === "richlist" && resource !== undefined && rest.length === 0) {
      if (!this.servesRichList) throw notFound()
      return richList(c, resource, q)
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
    if (this.servesRichList && c.richListHeight > 0) out.rich_list_height = c.richListHeight
    if (c.isEvm) out.evm_ret_cleanup_height = c.tip
    // the tx-account cleanup (TX_ACCOUNT_CLEANUP, on by default): its last cleaned sequence and counts
    const cleaned = c.txTotal()
    if (cleaned > 0) {
      out.tx_account_cleanup_sequence = cleaned
      out.tx_account_cleanup_deleted = Math.floor(cleaned / 7)
      out.tx_account_cleanup_inserted = cleaned * 2
    }
    return out
  }

  avgBlockTime(): number {
    const c = this.chain
    const n = Math.min(100, c.tip)
    if (n < 2) return 0
    return (c.headerTimeMs(c.tip) - c.headerTimeMs(c.tip - n + 1)) / 1000 / (n - 1)
  }
}
