/**
 * Routes of the devnet router: route, op-hook, msgs, track and status with the shapes of the
 * router API (Skip Go API plus the Initia additions), JSON errors {code, message, details}, and
 * the three flow rules enforced. POST /devnet/broadcast is devnet-only: it turns a msgs tx into
 * a tx hash that track and status then follow.
 */
import { goJson } from "./encoding.js"
import { Rng, sha256Hex } from "./rng.js"
import type { DevnetReply, DevnetRequest } from "./http.js"
import { CHAINS, EDGES, findAsset, findPath, L1, ROLLUP, type AssetDef, type Edge } from "./router-graph.js"

export interface RouterOptions {
  readonly seed: number
  /** transfer durations are the route's estimates times this factor (a 30 s hop takes 0.3 s at 0.01) */
  readonly transferTimeScale: number
  readonly now?: () => number
  /** distinguishes devnet runs, so a tx broadcast to one is not mistaken for one of another */
  readonly instance?: string
}

class RouterError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly reason?: string
  ) {
    super(message)
  }
}
const invalid = (message: string, reason?: string) => new RouterError(400, 3, message, reason)

const ok = (body: unknown, corruptible = true): DevnetReply => ({ status: 200, body: goJson(body), contentType: "application/json", corruptible })
const errorReply = (e: RouterError): DevnetReply => ({
  status: e.status,
  contentType: "application/json",
  body: goJson({
    code: e.code,
    message: e.message,
    details: e.reason ? [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: e.reason, domain: "skip.build", metadata: {} }] : []
  })
})

const isAmount = (v: unknown): v is string => typeof v === "string" && /^[0-9]+$/.test(v) && BigInt(v) > 0n
const parseBody = (body: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(body)
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>
  } catch {
    /* fall through */
  }
  throw invalid("request body must be a JSON object")
}
const requireString = (o: Record<string, unknown>, field: string): string => {
  const v = o[field]
  if (typeof v !== "string" || v === "") throw invalid(`${field} is required`)
  return v
}
const optionalBool = (o: Record<string, unknown>, field: string): boolean | undefined => {
  const v = o[field]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "boolean") throw invalid(`${field} must be a boolean`)
  return v
}

const assetJson = (x: AssetDef) => ({
  denom: x.denom,
  chain_id: x.chainId,
  origin_denom: x.originDenom,
  origin_chain_id: x.originChainId,
  trace: x.originChainId === x.chainId ? "" : `transfer/channel-0`,
  is_cw20: false,
  is_evm: x.isEvm,
  is_svm: false,
  symbol: x.symbol,
  name: x.symbol,
  logo_uri: null,
  decimals: x.decimals,
  token_contract: x.denom.startsWith("0x") ? x.denom : null,
  description: null,
  coingecko_id: null,
  recommended_symbol: x.symbol
})

const usd = (x: AssetDef, amount: bigint): string =>
  x.usd === undefined ? "" : ((Number(amount) / 10 ** x.decimals) * x.usd).toFixed(2)

/** Address formats per chain, for address_list validation. */
const addressOk = (chainId: string, address: string): boolean => {
  if (/^\d+$/.test(chainId)) return /^0x[0-9a-fA-F]{40}$/.test(address)
  const prefix = chainId === "osmosis-1" ? "osmo1" : chainId === "noble-1" ? "noble1" : chainId === "cosmoshub-4" ? "cosmos1" : chainId === "isolated-1" ? "iso1" : "init1"
  return address.startsWith(prefix) && address.length >= prefix.length + 20 || (chainId === ROLLUP && /^0x[0-9a-fA-F]{40}$/.test(address))
}

interface Quote {
  readonly path: Array<Edge>
  readonly amounts: Array<bigint>
  readonly fees: Array<{ edge: Edge; index: number; amount: bigint }>
  readonly priceImpact?: number
}

const quote = (path: Array<Edge>, amountIn: bigint): Quote => {
  const amounts = [amountIn]
  const fees: Quote["fees"] = []
  let impact: number | undefined
  path.forEach((e, index) => {
    const x = amounts[amounts.length - 1]
    if (e.reserves) {
      const [rin, rout] = e.reserves
      const xin = (x * BigInt(10_000 - e.feeBps)) / 10_000n
      const out = (rout * xin) / (rin + xin)
      const spot = Number(rout) / Number(rin)
      const exec = Number(out) / Number(x)
      impact = Math.max(impact ?? 0, (1 - exec / spot) * 100)
      amounts.push(out)
    } else {
      const fee = (x * BigInt(e.feeBps)) / 10_000n
      if (fee > 0n) fees.push({ edge: e, index, amount: fee })
      amounts.push(x - fee)
    }
  })
  return { path, amounts, fees, priceImpact: impact }
}

const chainPath = (path: ReadonlyArray<Edge>): Array<string> => {
  const out = [path[0].from.chainId]
  for (const e of path) if (out[out.length - 1] !== e.to.chainId) out.push(e.to.chainId)
  return out
}

/** An op-hook is needed when an OPinit withdrawal is followed by more operations (the hook runs them on L1). */
const needsOpHook = (kinds: ReadonlyArray<{ kind: string; withdraw: boolean }>) =>
  kinds.some((k, i) => k.kind === "op_init_transfer" && k.withdraw && i < kinds.length - 1)

const operationJson = (e: Edge, amountIn: bigint, amountOut: bigint, txIndex: number, feeAmount: bigint) => {
  const common = { from_chain_id: e.from.chainId, to_chain_id: e.to.chainId, denom_in: e.from.denom, denom_out: e.to.denom, bridge_id: e.bridgeId, smart_relay: false }
  const fee = { fee_amount: feeAmount.toString(), usd_fee_amount: usd(e.from, feeAmount), fee_asset: assetJson(e.from) }
  let inner: Record<string, unknown>
  switch (e.kind) {
    case "transfer":
      inner = { port: "transfer", channel: e.channel, ...common, pfm_enabled: true, supports_memo: true, dest_denom: e.to.denom }
      break
    case "swap":
      inner = {
        swap_in: {
          swap_venue: { name: e.venue, chain_id: e.from.chainId, logo_uri: null },
          swap_operations: [{ pool: `${e.venue}/${e.from.symbol}-${e.to.symbol}`, denom_in: e.from.denom, denom_out: e.to.denom }],
          swap_amount_in: amountIn.toString(),
          estimated_amount_out: amountOut.toString()
        },
        estimated_affiliate_fee: `0${e.to.denom}`,
        from_chain_id: e.from.chainId,
        chain_id: e.from.chainId,
        denom_in: e.from.denom,
        denom_out: e.to.denom,
        swap_venues: [{ name: e.venue, chain_id: e.from.chainId, logo_uri: null }]
      }
      break
    case "evm_swap":
      inner = {
        input_token: e.from.denom.replace(/^evm\//, ""),
        amount_in: amountIn.toString(),
        swap_calldata: "0x" + sha256Hex("calldata", e.from.denom, e.to.denom, amountIn.toString()),
        amount_out: amountOut.toString(),
        from_chain_id: e.from.chainId,
        denom_in: e.from.denom,
        denom_out: e.to.denom,
        swap_venues: [{ name: e.venue, chain_id: e.from.chainId, logo_uri: null }]
      }
      break
    case "op_init_transfer":
      inner = { ...common, op_init_bridge_id: "14" }
      break
    case "go_fast_transfer":
      inner = {
        from_chain_id: e.from.chainId,
        to_chain_id: e.to.chainId,
        fee: {
          fee_asset: assetJson(e.from),
          bps_fee: String(e.feeBps),
          bps_fee_amount: feeAmount.toString(),
          bps_fee_usd: usd(e.from, feeAmount),
          source_chain_fee_amount: "0",
          source_chain_fee_usd: "0.00",
          destination_chain_fee_amount: "0",
          destination_chain_fee_usd: "0.00"
        },
        bridge_id: e.bridgeId,
        denom_in: e.from.denom,
        denom_out: e.to.denom,
        source_domain: "0x" + sha256Hex("domain", e.from.chainId).slice(0, 8),
        destination_domain: "0x" + sha256Hex("domain", e.to.chainId).slice(0, 8)
      }
      break
    case "cctp_transfer":
      inner = { ...common, burn_token: e.from.denom }
      break
    case "axelar_transfer":
      inner = { ...common, asset: e.from.symbol, should_unwrap: false, ...fee, is_testnet: false }
      break
    case "hyperlane_transfer":
      inner = { ...common, hyperlane_contract_address: "0x" + sha256Hex("hyperlane", e.from.chainId).slice(0, 40), ...fee }
      break
    case "stargate_transfer":
      inner = {
        ...common,
        pool_address: "0x" + sha256Hex("stargate", e.from.chainId).slice(0, 40),
        destination_endpoint_id: 30_000 + Number(e.to.chainId) % 1000,
        oft_fee_asset: assetJson(e.from),
        oft_fee_amount: feeAmount.toString(),
        oft_fee_amount_usd: usd(e.from, feeAmount),
        messaging_fee_asset: assetJson(e.from),
        messaging_fee_amount: "0",
        messaging_fee_amount_usd: "0.00"
      }
      break
    case "layer_zero_transfer":
      inner = {
        ...common,
        source_oft_contract_address: "0x" + sha256Hex("oft", e.from.chainId).slice(0, 40),
        destination_endpoint_id: 30_184,
        messaging_fee_asset: assetJson(e.from),
        messaging_fee_amount: "25000000000000",
        messaging_fee_amount_usd: ""
      }
      break
    case "eureka_transfer":
      inner = {
        destination_port: "transfer",
        source_client: "08-wasm-1369",
        ...common,
        pfm_enabled: false,
        supports_memo: true,
        entry_contract_address: "0x" + sha256Hex("eureka", e.from.chainId).slice(0, 40)
      }
      break
    case "bank_send":
      inner = { chain_id: e.from.chainId, denom: e.from.denom }
      break
  }
  return { [e.kind]: inner, tx_index: txIndex, amount_in: amountIn.toString(), amount_out: amountOut.toString() }
}

interface Broadcast {
  readonly chainId: string
  readonly ops: ReadonlyArray<Record<string, unknown>>
  readonly outcome: "success" | "error" | "abandoned"
  tracked?: number
  readonly estimatedSeconds: number
}

export class RouterApi {
  /** operations of each msgs tx issued, keyed by the tx's JSON, so broadcast can find them */
  private readonly issued = new Map<string, { ops: ReadonlyArray<Record<string, unknown>>; estimatedSeconds: number }>()
  private readonly broadcasts = new Map<string, Broadcast>()
  private broadcastCount = 0
  private readonly now: () => number

  constructor(private readonly options: RouterOptions) {
    this.now = options.now ?? Date.now
  }

  handle(req: DevnetRequest): DevnetReply {
    try {
      const p = req.url.pathname
      if (req.method === "POST" && p === "/v2/fungible/route") return this.route(parseBody(req.body))
      if (req.method === "POST" && p === "/op-hook") return this.opHook(parseBody(req.body))
      if (req.method === "POST" && p === "/v2/fungible/msgs") return this.msgs(parseBody(req.body))
      if (req.method === "POST" && p === "/v2/tx/track") return this.track(parseBody(req.body))
      if (req.method === "GET" && p === "/v2/tx/status") return this.status(req.url.searchParams)
      if (req.method === "POST" && p === "/devnet/broadcast") return this.broadcast(parseBody(req.body))
      throw new RouterError(404, 5, `Not Found: ${req.method} ${p}`)
    } catch (e) {
      if (e instanceof RouterError) return errorReply(e)
      return errorReply(new RouterError(500, 2, "internal server error"))
    }
  }

  // ------------------------------------------------------------------ route

  private route(body: Record<string, unknown>): DevnetReply {
    const srcChain = requireString(body, "source_asset_chain_id")
    const srcDenom = requireString(body, "source_asset_denom")
    const dstChain = requireString(body, "dest_asset_chain_id")
    const dstDenom = requireString(body, "dest_asset_denom")
    if (!isAmount(body.amount_in)) throw invalid("invalid amount_in")
    const amountIn = BigInt(body.amount_in as string)
    const allowUnsafe = optionalBool(body, "allow_unsafe") ?? true
    const goFast = optionalBool(body, "go_fast")
    const isOpWithdraw = optionalBool(body, "is_op_withdraw")
    const src = findAsset(srcChain, srcDenom)
    const dst = findAsset(dstChain, dstDenom)
    if (!CHAINS.includes(srcChain) || !CHAINS.includes(dstChain)) throw new RouterError(404, 5, "chain ID not supported")
    if (!src || !dst) throw new RouterError(404, 5, `asset not found: ${!src ? `${srcChain}/${srcDenom}` : `${dstChain}/${dstDenom}`}`)

    let path: Array<Edge> | undefined
    if (src === dst) path = [{ from: src, to: dst, kind: "bank_send", durationS: 0, feeBps: 0, bridgeId: "" }]
    else path = findPath(src, dst, { goFast, isOpWithdraw })
    // the quirk real clients meet: a 200 that carries no route
    if (!path) return ok({ message: "no routes found" })

    const q = quote(path, amountIn)
    const amountOut = q.amounts[q.amounts.length - 1]
    const impact = q.priceImpact
    const unpriced = src.usd === undefined || dst.usd === undefined
    if (!allowUnsafe && unpriced) throw invalid("unable to determine route safety", "LOW_INFO_ERROR")
    if (!allowUnsafe && impact !== undefined && impact > 10)
      throw invalid(`swap execution price in route deviates too far from market price. expected price impact: ${impact.toFixed(2)}%`, "BAD_PRICE_ERROR")

    let txIndex = 0
    const operations = path.map((e, i) => {
      const fee = q.fees.find((f) => f.index === i)?.amount ?? 0n
      const op = operationJson(e, q.amounts[i], q.amounts[i + 1], txIndex, fee)
      // leaving onto an EVM chain mid-route needs a new tx there (no smart relay on the devnet)
      if (e.to.isEvm && e.to.chainId !== e.from.chainId && i < path!.length - 1 && /^\d+$/.test(e.to.chainId)) txIndex++
      return op
    })
    const chains = chainPath(path)
    const duration = path.reduce((s, e) => s + e.durationS, 0)
    const feesTotal = q.fees.reduce((s, f) => s + f.amount, 0n)
    const kinds = path.map((e) => ({ kind: e.kind, withdraw: e.opWithdraw === true }))
    const warning =
      impact !== undefined && impact > 5
        ? { type: "BAD_PRICE_WARNING", message: `Price impact is high: ${impact.toFixed(2)}%` }
        : unpriced
          ? { type: "LOW_INFO_WARNING", message: "USD value of the input or output is unknown" }
          : null
    const extraWarnings = path.some((e) => e.opWithdraw) ? ["Withdrawals through the OP bridge take about 7 days to finalize."] : []
    const doesSwap = path.some((e) => e.reserves !== undefined)
    const venues = path.filter((e) => e.venue).map((e) => ({ name: e.venue!, chain_id: e.from.chainId, logo_uri: null }))
    const response: Record<string, unknown> = {
      amount_in: amountIn.toString(),
      amount_out: amountOut.toString(),
      source_asset_denom: src.denom,
      source_asset_chain_id: src.chainId,
      dest_asset_denom: dst.denom,
      dest_asset_chain_id: dst.chainId,
      operations,
      chain_ids: chains,
      required_chain_addresses: chains,
      does_swap: doesSwap,
      estimated_amount_out: (amountOut + feesTotal).toString(),
      swap_venues: venues,
      txs_required: txIndex + 1,
      usd_amount_in: usd(src, amountIn),
      usd_amount_out: usd(dst, amountOut),
      estimated_fees: q.fees.map((f) => ({
        fee_type: f.edge.kind === "go_fast_transfer" ? "GO_FAST" : "SMART_RELAY",
        bridge_id: f.edge.bridgeId,
        amount: f.amount.toString(),
        usd_amount: usd(f.edge.from, f.amount),
        origin_asset: assetJson(f.edge.from),
        chain_id: f.edge.from.chainId,
        tx_index: 0,
        operation_index: f.index,
        fee_behavior: "FEE_BEHAVIOR_DEDUCTED"
      })),
      estimated_route_duration_seconds: duration,
      warning,
      extra_warnings: extraWarnings,
      required_op_hook: needsOpHook(kinds)
    }
    if (doesSwap) {
      response.swap_venue = venues[0]
      response.swap_price_impact_percent = (impact ?? 0).toFixed(2)
    }
    return ok(response)
  }

  // ------------------------------------------------------------------ op-hook

  private opHook(body: Record<string, unknown>): DevnetReply {
    const fields = ["source_address", "source_asset_chain_id", "source_asset_denom", "dest_address", "dest_asset_chain_id", "dest_asset_denom"] as const
    const v = Object.fromEntries(fields.map((f) => [f, requireString(body, f)])) as Record<(typeof fields)[number], string>
    if (!addressOk(v.source_asset_chain_id, v.source_address)) throw invalid(`invalid source_address for chain ${v.source_asset_chain_id}`)
    if (!addressOk(v.dest_asset_chain_id, v.dest_address)) throw invalid(`invalid dest_address for chain ${v.dest_asset_chain_id}`)
    const msg = {
      type: "cosmos-sdk/MsgTransfer",
      value: {
        source_port: "transfer",
        source_channel: "channel-1",
        token: { denom: "uinit", amount: "0" },
        sender: v.source_address,
        receiver: v.dest_address,
        timeout_timestamp: "0",
        memo: JSON.stringify({ dest_denom: v.dest_asset_denom, dest_chain_id: v.dest_asset_chain_id })
      }
    }
    return ok({ chain_id: L1, hook: [{ msg_type_url: "/ibc.applications.transfer.v1.MsgTransfer", msg: JSON.stringify(msg) }] })
  }

  // ------------------------------------------------------------------ msgs

  private msgs(body: Record<string, unknown>): DevnetReply {
    for (const f of ["source_asset_denom", "source_asset_chain_id", "dest_asset_denom", "dest_asset_chain_id"]) requireString(body, f)
    if (!isAmount(body.amount_in)) throw invalid("invalid amount_in")
    if (!isAmount(body.amount_out)) throw invalid("invalid amount_out")
    const slippage = body.slippage_tolerance_percent
    if (typeof slippage !== "string" || !/^\d+(\.\d+)?$/.test(slippage) || Number(slippage) > 100) throw invalid("invalid slippage_tolerance_percent")
    const ops = body.operations
    if (!Array.isArray(ops) || ops.length === 0) throw invalid("operations is required")
    const parsed = ops.map((op, i) => {
      if (typeof op !== "object" || op === null) throw invalid(`operations[${i}] must be an object`)
      const kind = Object.keys(op).find((k) => k !== "tx_index" && k !== "amount_in" && k !== "amount_out")
      const inner = kind ? ((op as Record<string, unknown>)[kind] as Record<string, unknown>) : undefined
      if (!kind || typeof inner !== "object" || inner === null) throw invalid(`operations[${i}] has no operation`)
      const from = String(inner.from_chain_id ?? inner.chain_id ?? "")
      const to = String(inner.to_chain_id ?? inner.chain_id ?? from)
      return { kind, from, to, withdraw: kind === "op_init_transfer" && from === ROLLUP && to === L1 }
    })
    // Rule 3: address_list is required_chain_addresses, one address per chain, in order
    const required: Array<string> = [parsed[0].from]
    for (const p of parsed) if (required[required.length - 1] !== p.to) required.push(p.to)
    const addresses = body.address_list
    if (!Array.isArray(addresses) || addresses.some((x) => typeof x !== "string"))
      throw invalid("address_list is required: one address per chain of required_chain_addresses")
    if (addresses.length !== required.length)
      throw invalid(`address_list must have ${required.length} addresses (one per required chain: ${required.join(", ")}), got ${addresses.length}`)
    addresses.forEach((addr, i) => {
      if (!addressOk(required[i], addr as string)) throw invalid(`address_list[${i}] is not an address on ${required[i]}: ${addr}`)
    })
    // Rule 1: a route that needs an op-hook needs its signed hook before msgs
    if (needsOpHook(parsed)) {
      const hook = body.signed_op_hook as Record<string, unknown> | undefined
      if (!hook || typeof hook !== "object" || typeof hook.signer !== "string" || typeof hook.hook !== "string" || hook.hook === "")
        throw invalid("signed_op_hook is required for this route (required_op_hook is true): sign the /op-hook payload and send {signer, hook}")
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(hook.hook)) throw invalid("signed_op_hook.hook must be base64 encoded")
    }
    const amountOut = BigInt(body.amount_out as string)
    const minOut = (amountOut * BigInt(Math.round((100 - Number(slippage)) * 1000))) / 100_000n
    const first = parsed[0]
    const sender = addresses[0] as string
    const srcChain = body.source_asset_chain_id as string
    let tx: Record<string, unknown>
    if (/^\d+$/.test(srcChain)) {
      tx = {
        evm_tx: {
          chain_id: srcChain,
          to: "0x" + sha256Hex("entry", srcChain).slice(0, 40),
          value: "0",
          data: sha256Hex("calldata", body.amount_in as string, sender),
          signer_address: sender,
          required_erc20_approvals: [{ amount: body.amount_in, spender: "0x" + sha256Hex("entry", srcChain).slice(0, 40), token_contract: body.source_asset_denom }]
        },
        operations_indices: parsed.map((_, i) => i)
      }
    } else {
      const typeUrl =
        first.kind === "op_init_transfer"
          ? first.withdraw
            ? "/opinit.opchild.v1.MsgInitiateTokenWithdrawal"
            : "/opinit.ophost.v1.MsgInitiateTokenDeposit"
          : first.kind === "transfer"
            ? "/ibc.applications.transfer.v1.MsgTransfer"
            : first.kind === "evm_swap"
              ? "/minievm.evm.v1.MsgCall"
              : "/cosmwasm.wasm.v1.MsgExecuteContract"
      const msg = { sender, receiver: addresses[addresses.length - 1], amount: { denom: body.source_asset_denom, amount: body.amount_in }, memo: parsed.length > 1 ? JSON.stringify({ forward: required.slice(1) }) : "" }
      tx = {
        cosmos_tx: { chain_id: srcChain, path: required, signer_address: sender, msgs: [{ msg: JSON.stringify(msg), msg_type_url: typeUrl }] },
        operations_indices: parsed.map((_, i) => i)
      }
    }
    // the same estimate the route gave: each hop's bridge duration
    const estimatedSeconds = parsed.reduce(
      (s, p) => s + (EDGES.find((e) => e.kind === p.kind && e.from.chainId === p.from && e.to.chainId === p.to)?.durationS ?? 0),
      0
    )
    this.issued.set(goJson(tx), { ops: ops as Array<Record<string, unknown>>, estimatedSeconds })
    const legacy = "evm_tx" in tx ? { evm_tx: tx.evm_tx } : { multi_chain_msg: { chain_id: srcChain, path: required, msg: (tx.cosmos_tx as { msgs: Array<{ msg: string }> }).msgs[0].msg, msg_type_url: (tx.cosmos_tx as { msgs: Array<{ msg_type_url: string }> }).msgs[0].msg_type_url } }
    return ok({ txs: [tx], msgs: [legacy], min_amount_out: minOut.toString(), estimated_fees: [] })
  }

  // ------------------------------------------------------------------ broadcast (devnet only)

  private broadcast(body: Record<string, unknown>): DevnetReply {
    const chainId = requireString(body, "chain_id")
    const tx = body.tx
    const issued = tx && typeof tx === "object" ? this.issued.get(goJson(tx)) : undefined
    if (!issued) throw invalid("tx is invalid on chain: not a tx issued by /v2/fungible/msgs on this devnet")
    const isEvm = /^\d+$/.test(chainId)
    const n = ++this.broadcastCount
    const raw = sha256Hex(this.options.seed, "broadcast", this.options.instance ?? "", n, goJson(tx))
    const txHash = isEvm ? "0x" + raw : raw.toUpperCase()
    const asked = body.outcome
    const outcome =
      asked === "success" || asked === "error" || asked === "abandoned"
        ? asked
        : new Rng(this.options.seed, "outcome", txHash).weighted<Broadcast["outcome"]>([
            ["success", 85],
            ["error", 10],
            ["abandoned", 5]
          ])
    this.broadcasts.set(txHash.toLowerCase(), { chainId, ops: issued.ops, outcome, estimatedSeconds: issued.estimatedSeconds })
    return ok({ tx_hash: txHash, chain_id: chainId }, false)
  }

  // ------------------------------------------------------------------ track and status

  private track(body: Record<string, unknown>): DevnetReply {
    const txHash = requireString(body, "tx_hash")
    const chainId = requireString(body, "chain_id")
    if (!CHAINS.includes(chainId)) throw new RouterError(404, 5, "chain ID not supported")
    if (!/^(0x)?[0-9a-fA-F]{64}$/.test(txHash)) throw invalid("invalid tx hex encoding")
    const b = this.broadcasts.get(txHash.toLowerCase())
    if (!b || b.chainId !== chainId) throw invalid("tx is invalid on chain")
    // Registration is once per tx
    if (b.tracked !== undefined) throw new RouterError(409, 6, "tx is already being tracked")
    b.tracked = this.now()
    return ok({ tx_hash: txHash, explorer_link: `https://explorer.devnet.invalid/${chainId}/txs/${txHash}` }, false)
  }

  private status(q: URLSearchParams): DevnetReply {
    const txHash = q.get("tx_hash")
    const chainId = q.get("chain_id")
    if (!txHash) throw invalid("tx_hash is required")
    if (!chainId) throw invalid("chain_id is required")
    const b = this.broadcasts.get(txHash.toLowerCase())
    if (!b || b.tracked === undefined || b.chainId !== chainId) throw new RouterError(404, 5, "tx not found")
    return ok(this.transferStatus(txHash, b))
  }

  private transferStatus(txHash: string, b: Broadcast) {
    const elapsed = (this.now() - b.tracked!) / 1000
    const scale = this.options.transferTimeScale
    const hops = b.ops
      .map((op) => {
        const kind = Object.keys(op).find((k) => k !== "tx_index" && k !== "amount_in" && k !== "amount_out")!
        return { kind, inner: op[kind] as Record<string, unknown> }
      })
      .filter((h) => h.kind !== "swap" && h.kind !== "evm_swap" && h.kind !== "bank_send")
    const submitted = 0.2
    const hopSeconds = Math.max(0.2, (b.estimatedSeconds * scale) / Math.max(1, hops.length))
    const link = (chain: string, tag: string) => {
      const h = sha256Hex(this.options.seed, tag, txHash)
      return { chain_id: chain, tx_hash: h.toUpperCase(), explorer_link: `https://explorer.devnet.invalid/${chain}/txs/${h}`, on_chain_at: new Date(b.tracked! + 1000).toISOString() }
    }
    const abandonAt = submitted + hopSeconds * hops.length * 0.5
    const failAt = hops.length - 1
    const events: Array<Record<string, unknown>> = []
    let state = elapsed < submitted ? "STATE_SUBMITTED" : "STATE_PENDING"
    let error: Record<string, unknown> | null = null
    let released = false
    let blockingIndex: number | null = elapsed < submitted ? 0 : null
    if (elapsed >= submitted) {
      for (let i = 0; i < hops.length; i++) {
        const doneAt = submitted + hopSeconds * (i + 1)
        const started = elapsed >= submitted + hopSeconds * i
        if (!started) break
        const finished = elapsed >= doneAt
        const failed = finished && b.outcome === "error" && i === failAt
        const h = hops[i]
        const from = String(h.inner.from_chain_id ?? h.inner.chain_id)
        const to = String(h.inner.to_chain_id ?? h.inner.chain_id)
        events.push(transferEvent(h.kind, from, to, finished, failed, link))
        if (!finished) {
          blockingIndex = i
          break
        }
        if (failed) {
          state = "STATE_COMPLETED_ERROR"
          error = { type: "STATUS_ERROR_TRANSFER", message: "packet acknowledgement error", details: { code: 5, message: "insufficient funds on the destination relayer" } }
          break
        }
      }
      if (b.outcome === "abandoned" && elapsed >= abandonAt) state = "STATE_ABANDONED"
      else if (state === "STATE_PENDING" && elapsed >= submitted + hopSeconds * hops.length) {
        state = "STATE_COMPLETED_SUCCESS"
        released = true
      }
    }
    const last = b.ops[b.ops.length - 1]
    const lastKind = Object.keys(last).find((k) => k !== "tx_index" && k !== "amount_in" && k !== "amount_out")!
    const lastInner = last[lastKind] as Record<string, unknown>
    const release = state.startsWith("STATE_COMPLETED")
      ? { chain_id: String(lastInner.to_chain_id ?? lastInner.chain_id), denom: String(lastInner.denom_out ?? lastInner.denom), amount: String(last.amount_out ?? ""), released }
      : null
    const transfer = {
      state,
      transfer_sequence: events,
      next_blocking_transfer: blockingIndex === null ? null : { transfer_sequence_index: blockingIndex },
      transfer_asset_release: release,
      error
    }
    return {
      transfers: [transfer],
      state,
      transfer_sequence: events,
      next_blocking_transfer: transfer.next_blocking_transfer,
      transfer_asset_release: release,
      error,
      status: state.startsWith("STATE_COMPLETED") || state === "STATE_ABANDONED" ? "STATE_COMPLETED" : "STATE_PENDING"
    }
  }
}

type Link = (chain: string, tag: string) => Record<string, unknown>

/** One TransferEvent: exactly one wrapper key, with that bridge's state enum. */
const transferEvent = (kind: string, from: string, to: string, finished: boolean, failed: boolean, link: Link): Record<string, unknown> => {
  const base = { from_chain_id: from, to_chain_id: to, src_chain_id: from, dst_chain_id: to }
  const send = link(from, `send-${kind}-${from}`)
  const recv = finished && !failed ? link(to, `recv-${kind}-${to}`) : null
  switch (kind) {
    case "transfer":
    case "eureka_transfer":
      return {
        [kind === "transfer" ? "ibc_transfer" : kind]: {
          ...base,
          state: failed ? "TRANSFER_FAILURE" : finished ? "TRANSFER_SUCCESS" : "TRANSFER_PENDING",
          packet_txs: {
            send_tx: send,
            receive_tx: recv,
            acknowledge_tx: finished ? link(from, `ack-${from}`) : null,
            timeout_tx: null,
            error: failed ? { type: "PACKET_ERROR_ACKNOWLEDGEMENT", message: "acknowledgement error" } : null
          }
        }
      }
    case "op_init_transfer":
      return { op_init_transfer: { ...base, state: finished && !failed ? "OPINIT_TRANSFER_RECEIVED" : failed ? "OPINIT_TRANSFER_UNKNOWN" : "OPINIT_TRANSFER_SENT", txs: { send_tx: send, receive_tx: recv } } }
    case "go_fast_transfer":
      return {
        go_fast_transfer: {
          ...base,
          state: failed ? "GO_FAST_TRANSFER_REFUNDED" : finished ? "GO_FAST_TRANSFER_FILLED" : "GO_FAST_TRANSFER_SENT",
          txs: { order_submitted_tx: send, order_filled_tx: recv, order_refunded_tx: failed ? link(from, "refund") : null, order_timeout_tx: null }
        }
      }
    case "cctp_transfer":
      return { cctp_transfer: { ...base, state: failed ? "CCTP_TRANSFER_UNKNOWN" : finished ? "CCTP_TRANSFER_RECEIVED" : "CCTP_TRANSFER_PENDING_CONFIRMATION", txs: { send_tx: send, receive_tx: recv } } }
    case "hyperlane_transfer":
      return { hyperlane_transfer: { ...base, state: failed ? "HYPERLANE_TRANSFER_FAILED" : finished ? "HYPERLANE_TRANSFER_RECEIVED" : "HYPERLANE_TRANSFER_SENT", txs: { send_tx: send, receive_tx: recv } } }
    case "stargate_transfer":
      return { stargate_transfer: { ...base, state: failed ? "STARGATE_TRANSFER_FAILED" : finished ? "STARGATE_TRANSFER_RECEIVED" : "STARGATE_TRANSFER_SENT", txs: { send_tx: send, receive_tx: recv, error_tx: null } } }
    case "layer_zero_transfer":
      return { layer_zero_transfer: { ...base, state: failed ? "LAYER_ZERO_TRANSFER_FAILED" : finished ? "LAYER_ZERO_TRANSFER_RECEIVED" : "LAYER_ZERO_TRANSFER_SENT", txs: { send_tx: send, receive_tx: recv, compose_tx: null, error_tx: null } } }
    default:
      return {
        axelar_transfer: {
          ...base,
          type: "AXELAR_TRANSFER_SEND_TOKEN",
          state: failed ? "AXELAR_TRANSFER_FAILURE" : finished ? "AXELAR_TRANSFER_SUCCESS" : "AXELAR_TRANSFER_PENDING_CONFIRMATION",
          txs: { send_tx: send, confirm_tx: null, execute_tx: recv, error: null },
          axelar_scan_link: `https://axelarscan.devnet.invalid/${send.tx_hash}`
        }
      }
  }
}
