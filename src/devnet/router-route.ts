/**
 * The devnet router's quoting routes: /v2/fungible/route (the cheapest path through the graph,
 * its amounts, fees, price impact, warnings and the unsafe-route refusals) and /op-hook (the
 * payload a client signs when an OPinit withdrawal is followed by more operations).
 */
import type { DevnetReply } from "./http.js"
import { assetJson, needsOpHook, operationJson, usd } from "./router-operations.js"
import { CHAINS, findAsset, findPath, L1, type Edge } from "./router-graph.js"
import { addressOk, invalid, isAmount, ok, optionalBool, requireString, RouterError } from "./router-wire.js"
import { MSG_TRANSFER, transferValue } from "./router-amino.js"

interface Quote {
  readonly path: Array<Edge>
  readonly amounts: Array<bigint>
  readonly fees: Array<{ edge: Edge; index: number; amount: bigint }>
  readonly priceImpact?: number
}

/** Amounts hop by hop: pools by constant product (hence the price impact), bridges less their fee. */
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

/** The chains a route passes through, in order: its chain_ids and required_chain_addresses. */
const chainPath = (path: ReadonlyArray<Edge>): Array<string> => {
  const out = [path[0].from.chainId]
  for (const e of path) if (out[out.length - 1] !== e.to.chainId) out.push(e.to.chainId)
  return out
}

export const route = (body: Record<string, unknown>): DevnetReply => {
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
  // No route: HTTP 400 with code 3 is what Initia's router answers (its wallet kit reads any route
  // 400 as "no route"). The quirk Skip clients also meet, a 200 carrying only a message, is served
  // for go_fast asks, so that both are exercised deterministically.
  if (!path) {
    if (goFast) return ok({ message: "no routes found" })
    throw invalid("no routes found")
  }

  const q = quote(path, amountIn)
  const amountOut = q.amounts[q.amounts.length - 1]
  const impact = q.priceImpact
  const unpriced = src.usd === undefined || dst.usd === undefined
  if (!allowUnsafe && unpriced) throw invalid("unable to determine route safety", "LOW_INFO_ERROR")
  if (!allowUnsafe && impact !== undefined && impact > 10)
    throw invalid(
      `swap execution price in route deviates too far from market price. expected price impact: ${impact.toFixed(2)}%`,
      "BAD_PRICE_ERROR"
    )

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
      // the only fee type the real API sends (Go Fast's fee included)
      fee_type: "SMART_RELAY",
      bridge_id: f.edge.bridgeId,
      amount: f.amount.toString(),
      usd_amount: usd(f.edge.from, f.amount),
      origin_asset: assetJson(f.edge.from),
      chain_id: f.edge.from.chainId,
      // the tx of the operation the fee belongs to
      tx_index: operations[f.index].tx_index as number,
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

export const opHook = (body: Record<string, unknown>): DevnetReply => {
  const fields = [
    "source_address",
    "source_asset_chain_id",
    "source_asset_denom",
    "dest_address",
    "dest_asset_chain_id",
    "dest_asset_denom"
  ] as const
  const v = Object.fromEntries(fields.map((f) => [f, requireString(body, f)])) as Record<(typeof fields)[number], string>
  if (!addressOk(v.source_asset_chain_id, v.source_address)) throw invalid(`invalid source_address for chain ${v.source_asset_chain_id}`)
  if (!addressOk(v.dest_asset_chain_id, v.dest_address)) throw invalid(`invalid dest_address for chain ${v.dest_asset_chain_id}`)
  // the amino value the wallet signs, not {type, value} (router-amino.ts)
  const msg = transferValue({
    sender: v.source_address,
    receiver: v.dest_address,
    token: { denom: "uinit", amount: "0" },
    channel: "channel-1",
    memo: JSON.stringify({ dest_denom: v.dest_asset_denom, dest_chain_id: v.dest_asset_chain_id })
  })
  return ok({ chain_id: L1, hook: [{ msg_type_url: MSG_TRANSFER, msg: JSON.stringify(msg) }] })
}
