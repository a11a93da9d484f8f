/**
 * The embedded devnet: a deterministic simulator of the indexer API and the router API on
 * 127.0.0.1. `startDevnet` is what tests, benchmarks and `chain-lake devnet` call.
 *
 * Written independently of the clients in src/indexer and src/router (it never imports them),
 * so a misreading of the wire format cannot hide on both sides of a test.
 */
import { randomUUID } from "node:crypto"
import { Chain } from "./chain.js"
import { FaultInjector, parseFaults, type FaultSpec } from "./faults.js"
import { type DevnetReply, serve } from "./http.js"
import { IndexerApi } from "./indexer-api.js"
import { responseCache } from "./responseCache.js"
import { RouterApi } from "./router-api.js"
import type { Vm } from "./universe.js"

export type { Vm } from "./universe.js"
export { parseFaults, PROFILES, FaultSpecError } from "./faults.js"
export { DENOMS } from "./universe.js"

export interface DevnetOptions {
  readonly seed?: number
  /** the chain starts with heights 1..blocks */
  readonly blocks?: number
  /** 0 picks a free port for the indexer; the router takes the next free one */
  readonly port?: number
  readonly routerPort?: number
  /** > 0: a new block every blockTimeMs while serving (default 0: a static chain) */
  readonly blockTimeMs?: number
  /** profile name (none, light, heavy) or spec string, or a parsed spec */
  readonly faults?: string | FaultSpec
  readonly latencyMs?: number
  readonly vm?: Vm
  readonly txsPerBlock?: number
  /** EVM receipts number logs per block (default, minievm since March 2026) or per tx (receipts indexed before) */
  readonly logIndex?: "per-block" | "per-tx"
  /** EVM chains: minievm's synthetic receipts of successful cosmos txs that emit EVM logs (default true) */
  readonly cosmosReceipts?: boolean
  /** EVM chains: heights whose trace failed hold no internal txs, ever (default true) */
  readonly failedTraces?: boolean
  /** router transfers take estimate × this (default 0.01) */
  readonly transferTimeScale?: number
  /** the rich list on every VM, as the real indexer today (default), or on EVM only, as before February 2026 */
  readonly richList?: "all-vms" | "evm-only"
  /** the denom that pays most fees, in place of uinit (an EVM rollup's own gas token): the rich list of uinit then answers 400 */
  readonly feeDenom?: string
  /** the clock (ms) tracked transfers advance by (default Date.now): a test's own makes their states follow its polls, not the machine's pace */
  readonly routerClock?: () => number
  /** a tracked tx is "not found" on /v2/tx/status this long after /v2/tx/track (default 500 ms), as on the real router */
  readonly trackIndexDelayMs?: number
  /**
   * the router serves /v2/fungible/assets and /v2/info/chains (default true: Initia's router does,
   * its wallet kit reads them, real-service-drift.md); false: only the documented route → msgs →
   * track → status flow, both answering 404
   */
  readonly routerMetadata?: boolean
  /** another history above a height (ChainOptions.fork): a devnet that forked from, or was rolled back and re-synced from, one with the same seed */
  readonly fork?: { readonly height: number; readonly seed: number }
  /**
   * µs each row skipped through pagination.offset adds to its answer, as on the real indexer,
   * whose OFFSET scans every row it skips (default 0: tests pay nothing; the rows are counted
   * either way, in stats())
   */
  readonly offsetRowUs?: number
  /**
   * Large records: each cosmos tx's memo carries a payload of about this many bytes (derived from
   * the seed; default 0: none), an Ethereum tx's call data (as hex) instead. Its txs pages are as
   * large as page size × this.
   */
  readonly txPayloadBytes?: number
  /** the indexer's answers kept by URL as the real one keeps them (responseCache.ts; default true) */
  readonly responseCache?: boolean
}

/** What the devnet's indexer has served so far. */
export interface DevnetStats {
  /** indexer requests answered (faults injected before the handler are not) */
  readonly requests: number
  /** rows skipped through offsets: rows the real indexer would scan and throw away */
  readonly offsetRowsSkipped: number
}

export interface Devnet {
  readonly indexerUrl: string
  readonly routerUrl: string
  /** the chain model (tests read expected values from it) */
  readonly chain: Chain
  /** current tip, growing with time when blockTimeMs > 0 */
  readonly tip: () => number
  /** the indexer's requests and the rows their offsets skipped, since it started */
  readonly stats: () => DevnetStats
  readonly stop: () => Promise<void>
}

export const startDevnet = async (options: DevnetOptions = {}): Promise<Devnet> => {
  const seed = options.seed ?? 1
  const blocks = options.blocks ?? 500
  if (!Number.isInteger(blocks) || blocks < 1) throw new Error(`--blocks must be a positive integer, got ${blocks}`)
  const chain = new Chain({
    seed,
    blocks,
    vm: options.vm ?? "evm",
    txsPerBlock: options.txsPerBlock,
    feeDenom: options.feeDenom,
    logIndex: options.logIndex,
    cosmosReceipts: options.cosmosReceipts,
    failedTraces: options.failedTraces,
    fork: options.fork,
    txPayloadBytes: options.txPayloadBytes
  })
  const spec = typeof options.faults === "object" ? options.faults : parseFaults(options.faults)
  const started = Date.now()
  const blockTimeMs = options.blockTimeMs ?? 0
  const tip = () => {
    if (blockTimeMs > 0) chain.extendTo(blocks + Math.floor((Date.now() - started) / blockTimeMs))
    return chain.tip
  }
  const offsetRowUs = options.offsetRowUs ?? 0
  if (!(offsetRowUs >= 0)) throw new Error(`offsetRowUs must be 0 or more, got ${offsetRowUs}`)
  const indexer = new IndexerApi(chain, { countTimeout: spec.countTimeout, richList: options.richList ?? "all-vms", offsetRowUs })
  const router = new RouterApi({
    seed,
    transferTimeScale: options.transferTimeScale ?? 0.01,
    indexDelayMs: options.trackIndexDelayMs ?? 500,
    ...(options.routerClock ? { now: options.routerClock } : {}),
    metadata: options.routerMetadata ?? true,
    instance: randomUUID()
  })
  const common = { seed, latencyMs: options.latencyMs ?? 0 }
  // as the real indexer: its answers kept a second (a list) or ten (one object) unless asked afresh
  const cache = options.responseCache === false ? (_: unknown, answer: () => DevnetReply) => answer() : responseCache()
  const indexerHttp = await serve({
    ...common,
    port: options.port ?? 0,
    faults: new FaultInjector(spec, seed),
    exempt: (url) => url.pathname === "/swagger/doc.json",
    handle: (req) =>
      cache(req, () => {
        tip()
        return indexer.handle(req.method, req.url)
      })
  })
  const routerHttp = await serve({
    ...common,
    port: options.routerPort ?? 0,
    faults: new FaultInjector(spec, seed + 1),
    handle: (req) => router.handle(req)
  })
  return {
    indexerUrl: indexerHttp.url,
    routerUrl: routerHttp.url,
    chain,
    tip,
    stats: () => indexer.stats(),
    stop: async () => {
      await Promise.all([indexerHttp.close(), routerHttp.close()])
    }
  }
}
