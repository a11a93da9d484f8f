/**
 * The devnet chain: a deterministic function of (seed, height). Per-height counts and prefix sums
 * live in typed arrays (a few bytes per block); tx, receipt and trace contents are rebuilt on
 * demand from (seed, height, index). Only NFT ownership and balances are replayed, because they
 * depend on history; that state is bounded by the fixed cast of accounts and collections.
 */
import { keccak256Hex } from "../evm/keccak.js"
import { Rng, permute48, sha256Hex, unpermute48, hash32 } from "./rng.js"
import {
  ACCOUNT_COUNT,
  INTERNAL_TX_LAG,
  RICH_LIST_LAG,
  makeUniverse,
  type Account,
  type CollectionInfo,
  type Universe,
  type Vm
} from "./universe.js"

export type TxKind = "bank_send" | "ibc_transfer" | "evm_call" | "evm_create" | "nft_mint" | "nft_transfer" | "nft_burn"

const KIND_WEIGHTS: ReadonlyArray<readonly [TxKind, number]> = [
  ["bank_send", 34],
  ["ibc_transfer", 8],
  ["evm_call", 30],
  ["evm_create", 3],
  ["nft_mint", 12],
  ["nft_transfer", 10],
  ["nft_burn", 3]
]

/** The state-independent description of one tx: everything but NFT effects. */
export interface TxPlan {
  readonly height: number
  readonly index: number
  readonly kind: TxKind
  readonly signer: number
  readonly recipient: number
  readonly denom: number
  readonly amount: bigint
  readonly feeDenom: number
  readonly feeAmount: number
  readonly gasWanted: number
  readonly gasUsed: number
  readonly failed: boolean
  /** bank sends may carry two messages */
  readonly msgCount: number
  readonly contract: number
  readonly logCount: number
  /** internal call tree size (0 when the tx failed: traces with errors are skipped) */
  readonly traceSize: number
}

export interface NftEvent {
  readonly kind: "mint" | "transfer" | "burn"
  readonly collection: number
  readonly tokenId: string
  readonly from: number
  readonly to: number
}

export interface NftToken {
  readonly collection: number
  readonly tokenId: string
  owner: number
  height: number
  /** tx sequences that touched this token (the indexer's tx_nfts edges; kept after burn) */
  readonly txs: Array<number>
  burned: boolean
}

export interface ChainOptions {
  readonly seed: number
  readonly blocks: number
  readonly vm: Vm
  /** Mean txs per block (20% of blocks are empty). */
  readonly txsPerBlock?: number
  /** the denom that pays most fees (default uinit) */
  readonly feeDenom?: string
  /**
   * How receipts number their logs: from 0 per block, as minievm since its March 2026 fix
   * (default), or from 0 per tx, as before it (receipts indexed then keep it; minievm a1340f9,
   * `indexer/log_index_test.go`).
   */
  readonly logIndex?: "per-block" | "per-tx"
  /** EVM chains: a synthetic receipt for each successful cosmos tx that emits EVM logs, as minievm (default true) */
  readonly cosmosReceipts?: boolean
  /** EVM chains: some heights' traces fail and are skipped for good, as the indexer's tracing extension does (default true) */
  readonly failedTraces?: boolean
  /**
   * Another history above `height`: every block from height + 1 on (its txs, hashes, times) is
   * drawn from `seed` instead, as after a rollback and re-sync, or a reorg; heights up to
   * `height` are the same as without a fork.
   */
  readonly fork?: { readonly height: number; readonly seed: number }
  /**
   * Large records: each cosmos tx's memo carries a payload of this many bytes (printable ASCII,
   * derived from the seed, the height and the tx's index), as chains whose txs hold big messages
   * or blobs (default 0: no payload, the memo as without the option)
   */
  readonly txPayloadBytes?: number
}

const GENESIS_MS = Date.UTC(2026, 0, 1)
const FEISTEL_TX = 0x5a17
const FEISTEL_EVM = 0x3e11

/** A Float64Array that grows by doubling; index 0 is height 0 (the empty prefix). */
class Prefix {
  data = new Float64Array(1024)
  ensure(n: number) {
    if (n < this.data.length) return
    let size = this.data.length
    while (size <= n) size *= 2
    const next = new Float64Array(size)
    next.set(this.data)
    this.data = next
  }
}

const upperBound = (arr: Float64Array, hi: number, value: number): number => {
  // first h in [1, hi] with arr[h] >= value
  let lo = 1
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (arr[mid] >= value) hi = mid
    else lo = mid + 1
  }
  return lo
}

const EVM_KINDS: ReadonlySet<TxKind> = new Set(["evm_call", "evm_create", "nft_mint", "nft_transfer", "nft_burn"])

export class Chain {
  readonly u: Universe
  readonly seed: number
  readonly vm: Vm
  private readonly txsPerBlock: number
  readonly logIndex: "per-block" | "per-tx"
  private readonly cosmosReceipts: boolean
  private readonly failedTraces: boolean
  private readonly fork: ChainOptions["fork"]
  /** bytes of payload in each cosmos tx's memo, or an Ethereum tx's call data (ChainOptions.txPayloadBytes) */
  readonly txPayloadBytes: number
  /** highest height generated so far */
  tip = 0
  private readonly txEnd = new Prefix()
  private readonly evmEnd = new Prefix()
  private readonly traceEnd = new Prefix()
  private readonly headerMs = new Prefix()
  private readonly txCounts = new Prefix()
  // per-block sums, kept so that a blocks page costs no tx planning
  private readonly gasUsedSum = new Prefix()
  private readonly gasWantedSum = new Prefix()
  private readonly feeSums = [new Prefix(), new Prefix()]
  // NFT replay (at the tip, as the indexer updates tokens in the block's DB transaction)
  readonly nftEvents = new Map<number, NftEvent>()
  readonly tokens = new Map<string, NftToken>()
  private readonly liveTokens: Array<Array<string>>
  private readonly nextTokenNo: Array<number>
  // balances replay (at rich_list_height, which lags the tip)
  readonly balances: Array<Array<bigint>>
  private balanceHeight = 0

  constructor(options: ChainOptions) {
    this.seed = options.seed
    this.vm = options.vm
    this.txsPerBlock = options.txsPerBlock ?? 4
    this.logIndex = options.logIndex ?? "per-block"
    this.cosmosReceipts = options.cosmosReceipts ?? true
    this.failedTraces = options.failedTraces ?? true
    this.fork = options.fork
    this.txPayloadBytes = options.txPayloadBytes ?? 0
    if (!Number.isSafeInteger(this.txPayloadBytes) || this.txPayloadBytes < 0)
      throw new Error(`txPayloadBytes must be 0 or more, got ${options.txPayloadBytes}`)
    this.u = makeUniverse(options.seed, options.vm, options.feeDenom)
    this.liveTokens = this.u.collections.map(() => [])
    this.nextTokenNo = this.u.collections.map(() => 1)
    this.balances = this.u.genesisBalances.map((row) => [...row])
    this.extendTo(options.blocks)
  }

  /** The seed of the history `height` belongs to (ChainOptions.fork). */
  seedAt(height: number): number {
    return this.fork && height > this.fork.height ? this.fork.seed : this.seed
  }

  get isEvm() {
    return this.vm === "evm"
  }

  // ---------------------------------------------------------------- per-height structure

  txCount(height: number): number {
    const r = new Rng(this.seedAt(height), "n", height)
    if (r.chance(0.2)) return 0
    const hi = Math.max(1, Math.round((2 * this.txsPerBlock) / 0.8) - 1)
    return r.int(1, hi)
  }

  plan(height: number, index: number): TxPlan {
    const r = new Rng(this.seedAt(height), "tx", height, index)
    let kind = r.weighted(KIND_WEIGHTS)
    const signer = r.skewed(ACCOUNT_COUNT, 1.8)
    let recipient = r.int(0, ACCOUNT_COUNT - 1)
    if (recipient === signer) recipient = (recipient + 1) % ACCOUNT_COUNT
    const drawn = r.weighted([
      [0, 70],
      [1, 20],
      [2, 10]
    ])
    const drawnAmount = drawn === 2 ? BigInt(r.int(1, 1_000_000)) * 10n ** 15n + BigInt(r.int(0, 999_999)) : BigInt(r.int(1, 1_000_000))
    // an account spends only what it holds, as on a real chain (a send past its balance fails, a fee it cannot pay keeps the tx
    // out; balances never go below 0 on the rich list): one that held none of the drawn denom at genesis sends uinit, which
    // every account holds, and pays fees in it; an NFT's owner signs its transfer or burn, so that fee is in uinit too
    const denom = this.u.genesisBalances[drawn][signer] > 0n ? drawn : 0
    const amount = denom === drawn ? drawnAmount : (drawnAmount % 1_000_000n) + 1n
    const feeDenom = r.chance(0.9) || kind === "nft_transfer" || kind === "nft_burn" || this.u.genesisBalances[1][signer] === 0n ? 0 : 1
    const gasWanted = r.int(80, 400) * 1000
    const failed = r.chance(0.06)
    const gasUsed = failed && kind !== "evm_call" ? gasWanted + r.int(1, 5000) : Math.floor(gasWanted * (0.4 + r.next() * 0.5))
    const isEvmTx = this.isEvm && EVM_KINDS.has(kind)
    const logCount = isEvmTx && !failed ? (kind === "evm_call" ? r.int(0, 3) : kind === "evm_create" ? 0 : 1) : 0
    const traceSize = isEvmTx && !failed ? 1 + (r.chance(0.5) ? r.int(0, 6) : 0) : 0
    if (!this.isEvm && kind === "evm_create") kind = "evm_call"
    return {
      height,
      index,
      kind,
      signer,
      recipient,
      denom,
      amount,
      feeDenom,
      feeAmount: Math.ceil(gasWanted * 0.015) * (feeDenom === 0 ? 1 : 2),
      gasWanted,
      gasUsed,
      failed,
      msgCount: kind === "bank_send" && r.chance(0.15) ? 2 : 1,
      contract: r.int(0, this.u.contracts.length - 1),
      logCount,
      traceSize
    }
  }

  isEvmTx(p: TxPlan): boolean {
    return this.isEvm && EVM_KINDS.has(p.kind)
  }

  /**
   * A failed bank send failed in the ante handler (a stale account sequence): its state, the fee
   * included, is discarded and its result has no events, which the indexer stores as null.
   */
  failsInAnte(p: TxPlan): boolean {
    return p.failed && p.kind === "bank_send"
  }

  /**
   * EVM logs a cosmos (non-EVM) tx emits on an EVM chain: on minievm coins are ERC-20s, so each
   * coin a successful bank send moves logs a Transfer (x/evm/keeper/erc20.go `SendCoins` calls
   * the token contract; EVMCall emits its logs as "evm" events), and an IBC transfer one into
   * escrow. (The fee's own move is not modelled.) Failed txs emit none.
   */
  cosmosLogCount(p: TxPlan): number {
    if (!this.isEvm || !this.cosmosReceipts || this.isEvmTx(p) || p.failed) return 0
    return p.kind === "bank_send" ? p.msgCount : p.kind === "ibc_transfer" ? 1 : 0
  }
  /**
   * Whether minievm gives the tx a receipt: every Ethereum tx (whatever its status), and a
   * synthetic one for each successful cosmos tx that emitted EVM logs (minievm
   * `indexer/utils.go` `extractEthTxInfo`).
   */
  hasReceipt(p: TxPlan): boolean {
    return this.isEvmTx(p) || this.cosmosLogCount(p) > 0
  }
  /** Whether the tracing extension failed at `height` (its heights with traces only): no internal txs there, ever. */
  traceFailed(height: number): boolean {
    return this.isEvm && this.failedTraces && new Rng(this.seedAt(height), "tracefail", height).chance(0.08)
  }
  /** Internal calls the indexer holds for the tx: none for synthetic receipts, none at a height whose trace failed. */
  tracedSize(p: TxPlan): number {
    return this.isEvmTx(p) && !this.traceFailed(p.height) ? p.traceSize : 0
  }

  /** Generates heights up to `height` (idempotent; a growing chain calls it as time passes). */
  extendTo(height: number) {
    if (height <= this.tip) return
    for (const arr of [
      this.txEnd,
      this.evmEnd,
      this.traceEnd,
      this.headerMs,
      this.txCounts,
      this.gasUsedSum,
      this.gasWantedSum,
      ...this.feeSums
    ])
      arr.ensure(height)
    for (let h = this.tip + 1; h <= height; h++) {
      const n = this.txCount(h)
      let evm = 0
      let trace = 0
      let gasUsed = 0
      let gasWanted = 0
      const fees = [0, 0]
      for (let i = 0; i < n; i++) {
        const p = this.plan(h, i)
        gasUsed += p.gasUsed
        gasWanted += p.gasWanted
        fees[p.feeDenom] += p.feeAmount
        if (this.hasReceipt(p)) {
          evm++
          trace += this.tracedSize(p)
        }
        this.applyNft(p, this.txEnd.data[h - 1] + i + 1)
      }
      this.txCounts.data[h] = n
      this.gasUsedSum.data[h] = gasUsed
      this.gasWantedSum.data[h] = gasWanted
      this.feeSums[0].data[h] = fees[0]
      this.feeSums[1].data[h] = fees[1]
      this.txEnd.data[h] = this.txEnd.data[h - 1] + n
      this.evmEnd.data[h] = this.evmEnd.data[h - 1] + evm
      this.traceEnd.data[h] = this.traceEnd.data[h - 1] + trace
      const step = h === 1 ? 0 : new Rng(this.seedAt(h), "bt", h).int(380, 720)
      this.headerMs.data[h] = h === 1 ? GENESIS_MS + 123 : this.headerMs.data[h - 1] + step
    }
    this.tip = height
    this.advanceBalances(this.richListHeight)
  }

  // ---------------------------------------------------------------- watermarks

  /**
   * Rollytics `util/common-handler/status/status.go` `getInternalTxHeight`: the highest height
   * holding internal txs (the extension has traced up to tip - INTERNAL_TX_LAG; heights without
   * traces, or whose trace failed, hold none), or the tip when no block after it has txs.
   */
  get internalTxHeight(): number {
    if (!this.isEvm) return 0
    const traced = Math.max(0, this.tip - INTERNAL_TX_LAG)
    const rows = this.traceEnd.data[traced]
    const highest = rows > 0 ? upperBound(this.traceEnd.data, traced, rows) : 0
    for (let h = highest + 1; h <= this.tip; h++) if (this.txCounts.data[h] > 0) return highest
    return this.tip
  }

  get richListHeight(): number {
    return Math.max(0, this.tip - RICH_LIST_LAG)
  }

  // ---------------------------------------------------------------- counts and lookups

  txTotal(atHeight = this.tip): number {
    return this.txEnd.data[atHeight]
  }
  evmTotal(atHeight = this.tip): number {
    return this.evmEnd.data[atHeight]
  }
  traceTotal(atHeight = this.internalTxHeight): number {
    return this.traceEnd.data[atHeight]
  }
  blockTxCount(height: number): number {
    return this.txCounts.data[height]
  }
  /** gas used and wanted, and fees per fee denom (index 0 or 1), summed over the block's txs */
  blockSums(height: number): { gasUsed: number; gasWanted: number; fees: readonly [number, number] } {
    return {
      gasUsed: this.gasUsedSum.data[height],
      gasWanted: this.gasWantedSum.data[height],
      fees: [this.feeSums[0].data[height], this.feeSums[1].data[height]]
    }
  }
  /** Sequence of the first tx at `height` minus one. */
  txSeqBefore(height: number): number {
    return this.txEnd.data[height - 1]
  }
  evmSeqBefore(height: number): number {
    return this.evmEnd.data[height - 1]
  }
  traceSeqBefore(height: number): number {
    return this.traceEnd.data[height - 1]
  }
  headerTimeMs(height: number): number {
    return this.headerMs.data[height]
  }
  /** Nanoseconds within the header's millisecond, for RFC3339Nano tx timestamps. */
  headerExtraNanos(height: number): number {
    return hash32(this.seedAt(height), "ns", height) % 1_000_000
  }

  txAtSeq(seq: number): { height: number; index: number } {
    const height = upperBound(this.txEnd.data, this.tip, seq)
    return { height, index: seq - this.txEnd.data[height - 1] - 1 }
  }
  /** The plans of one block's txs that have EVM receipts (synthetic ones included), in block order, with their EVM sequence numbers. */
  evmTxsAt(height: number): Array<{ plan: TxPlan; evmSeq: number; traceSeqStart: number }> {
    const out: Array<{ plan: TxPlan; evmSeq: number; traceSeqStart: number }> = []
    let evmSeq = this.evmEnd.data[height - 1]
    let traceSeq = this.traceEnd.data[height - 1]
    const n = this.txCounts.data[height]
    for (let i = 0; i < n; i++) {
      const plan = this.plan(height, i)
      if (!this.hasReceipt(plan)) continue
      evmSeq++
      out.push({ plan, evmSeq, traceSeqStart: traceSeq + 1 })
      traceSeq += this.tracedSize(plan)
    }
    return out
  }
  heightOfEvmSeq(seq: number): number {
    return upperBound(this.evmEnd.data, this.tip, seq)
  }
  heightOfTraceSeq(seq: number): number {
    return upperBound(this.traceEnd.data, this.tip, seq)
  }

  // ---------------------------------------------------------------- hashes

  txHash(height: number, index: number): string {
    const head = permute48(height * 65536 + index, hash32(this.seed, FEISTEL_TX))
    return (head.toString(16).padStart(12, "0") + sha256Hex(this.seedAt(height), "txh", height, index).slice(0, 52)).toUpperCase()
  }
  evmTxHash(height: number, index: number): string {
    const head = permute48(height * 65536 + index, hash32(this.seed, FEISTEL_EVM))
    return "0x" + head.toString(16).padStart(12, "0") + sha256Hex(this.seedAt(height), "evmh", height, index).slice(0, 52)
  }
  /**
   * The hash minievm gives the synthetic tx of cosmos tx (height, index): keccak256 of the RLP of
   * the legacy tx [0, 0, 0, nil, 0, cosmos tx hash bytes, 0, 0, 0] (minievm `indexer/utils.go`
   * `extractEthTxInfo`; go-ethereum's legacy tx hash is the keccak of its RLP). Remembered, and
   * findable by hash, once computed.
   */
  syntheticTxHash(height: number, index: number): string {
    const key = height * 65536 + index
    let hash = this.synthetic.get(key)
    if (hash === undefined) {
      const rlp = Buffer.concat([
        Buffer.from("e98080808080a0", "hex"),
        Buffer.from(this.txHash(height, index), "hex"),
        Buffer.from("808080", "hex")
      ])
      hash = "0x" + keccak256Hex(rlp)
      this.synthetic.set(key, hash)
      this.syntheticByHash.set(hash, { height, index })
    }
    return hash
  }
  private readonly synthetic = new Map<number, string>()
  private readonly syntheticByHash = new Map<string, { height: number; index: number }>()
  private syntheticScanned = 0
  /** The cosmos tx whose synthetic EVM tx `hash` names (every synthetic hash up to the tip computed once), or undefined. */
  private lookupSynthetic(hash: string): { height: number; index: number } | undefined {
    for (; this.syntheticScanned < this.tip; this.syntheticScanned++) {
      const h = this.syntheticScanned + 1
      for (let i = 0; i < this.txCounts.data[h]; i++) if (this.cosmosLogCount(this.plan(h, i)) > 0) this.syntheticTxHash(h, i)
    }
    return this.syntheticByHash.get(hash.toLowerCase())
  }
  /** The EVM tx hash of a tx with a receipt: its own, or minievm's synthetic one for a cosmos tx. */
  receiptHash(p: TxPlan): string {
    return this.isEvmTx(p) ? this.evmTxHash(p.height, p.index) : this.syntheticTxHash(p.height, p.index)
  }

  /** Finds the tx a hash names (either form; a synthetic EVM tx hash names its cosmos tx), or undefined. */
  lookupTxHash(hash: string): { height: number; index: number } | undefined {
    const evm = hash.startsWith("0x")
    if (evm && /^0x[0-9a-fA-F]{64}$/.test(hash)) {
      const synthetic = this.lookupSynthetic(hash)
      if (synthetic) return synthetic
    }
    const body = evm ? hash.slice(2) : hash
    if (!/^[0-9a-fA-F]{64}$/.test(body)) return undefined
    const head = parseInt(body.slice(0, 12), 16)
    const value = unpermute48(head, hash32(this.seed, evm ? FEISTEL_EVM : FEISTEL_TX))
    const height = Math.floor(value / 65536)
    const index = value % 65536
    if (height < 1 || height > this.tip || index >= this.txCounts.data[height]) return undefined
    const expect = evm ? this.evmTxHash(height, index) : this.txHash(height, index)
    return expect.toLowerCase() === hash.toLowerCase() ? { height, index } : undefined
  }
  blockHash(height: number): string {
    return sha256Hex(this.seedAt(height), "block", height).toUpperCase()
  }

  // ---------------------------------------------------------------- NFT replay

  private applyNft(p: TxPlan, seq: number) {
    if (p.failed || !p.kind.startsWith("nft_")) return
    const r = new Rng(this.seedAt(p.height), "nft", p.height, p.index)
    const created = this.u.collections.filter((c) => c.createdAt <= p.height)
    let kind: NftEvent["kind"] = p.kind === "nft_mint" ? "mint" : p.kind === "nft_transfer" ? "transfer" : "burn"
    let collection = r.pick(created)
    if (kind !== "mint") {
      const withLive = created.filter((c) => this.liveTokens[c.index].length > 0)
      if (withLive.length === 0) kind = "mint"
      else collection = r.pick(withLive)
    }
    if (kind === "mint") {
      const tokenId = collection.tokenPrefix + String(this.nextTokenNo[collection.index]++)
      const key = tokenKey(collection.index, tokenId)
      this.tokens.set(key, { collection: collection.index, tokenId, owner: p.recipient, height: p.height, txs: [seq], burned: false })
      this.liveTokens[collection.index].push(key)
      this.nftEvents.set(seq, { kind, collection: collection.index, tokenId, from: p.signer, to: p.recipient })
      return
    }
    const live = this.liveTokens[collection.index]
    const at = r.int(0, live.length - 1)
    const token = this.tokens.get(live[at])!
    token.txs.push(seq)
    const from = token.owner
    if (kind === "burn") {
      token.burned = true
      live[at] = live[live.length - 1]
      live.pop()
      this.nftEvents.set(seq, { kind, collection: collection.index, tokenId: token.tokenId, from, to: from })
      return
    }
    const to = p.recipient === from ? (from + 1) % ACCOUNT_COUNT : p.recipient
    token.owner = to
    token.height = p.height
    this.nftEvents.set(seq, { kind, collection: collection.index, tokenId: token.tokenId, from, to })
    void to
  }

  /** The account that signs a tx: the NFT's owner for transfers and burns, else the planned signer. */
  signerOf(p: TxPlan, seq: number): number {
    const ev = this.nftEvents.get(seq)
    return ev && ev.kind !== "mint" ? ev.from : p.signer
  }

  liveTokensOf(collection: number): Array<NftToken> {
    return this.liveTokens[collection].map((k) => this.tokens.get(k)!)
  }
  collectionCreated(c: CollectionInfo): boolean {
    return c.createdAt <= this.tip
  }

  // ---------------------------------------------------------------- balances replay

  private advanceBalances(height: number) {
    for (let h = this.balanceHeight + 1; h <= height; h++) {
      const n = this.txCounts.data[h]
      for (let i = 0; i < n; i++) {
        const p = this.plan(h, i)
        const seq = this.txEnd.data[h - 1] + i + 1
        const signer = this.signerOf(p, seq)
        if (this.failsInAnte(p)) continue
        this.balances[p.feeDenom][signer] -= BigInt(p.feeAmount)
        if (p.failed) continue
        if (p.kind === "bank_send") {
          this.balances[p.denom][signer] -= p.amount * BigInt(p.msgCount)
          this.balances[p.denom][p.recipient] += p.amount * BigInt(p.msgCount)
        } else if (p.kind === "ibc_transfer") {
          this.balances[p.denom][signer] -= p.amount
        }
      }
    }
    this.balanceHeight = Math.max(this.balanceHeight, height)
  }

  /** Accounts holding `denomIndex` at rich_list_height: amount DESC, ties by address for determinism. */
  holders(denomIndex: number): Array<{ account: Account; amount: bigint }> {
    const row = this.balances[denomIndex]
    const out: Array<{ account: Account; amount: bigint }> = []
    for (let i = 0; i < row.length; i++) {
      if (this.u.genesisBalances[denomIndex][i] === 0n && row[i] === 0n) continue
      out.push({ account: this.u.accounts[i], amount: row[i] })
    }
    out.sort((a, b) => (a.amount === b.amount ? (a.account.hex < b.account.hex ? -1 : 1) : a.amount > b.amount ? -1 : 1))
    return out
  }

  denomIndex(denom: string): number {
    return this.u.denoms.findIndex((d) => d.denom.toLowerCase() === denom.toLowerCase())
  }

  accountOf(index: number): Account {
    return this.u.accounts[index]
  }
}

export const tokenKey = (collection: number, tokenId: string) => `${collection}\u0000${tokenId}`
