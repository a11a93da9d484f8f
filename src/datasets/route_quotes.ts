/**
 * route_quotes — POST /v2/fungible/route, sampled by a plan (pipelines/route-quotes.json): one row
 * per quote asked, successful or not (a failed quote is data: its error kind and message).
 * Partitioned by date of sampled_at; one file per sampling round (src/sampling/sampler.ts).
 */
import { columnsOf, defineSample } from "../engine/Dataset.js"
import { date } from "../lake/layout.js"
import type { RouterError } from "../router/errors.js"
import { operationKind, type RouteResponse } from "../router/schemas.js"

export interface QuoteAsked {
  readonly sampledAt: string
  readonly roundId: string
  readonly source: { readonly chain_id: string; readonly denom: string }
  readonly dest: { readonly chain_id: string; readonly denom: string }
  readonly variant: string
  readonly goFast?: boolean
  readonly allowUnsafe?: boolean
  readonly isOpWithdraw?: boolean
  readonly amountIn: string
}

/** One quote: what was asked, and the route or the error that came back. */
export interface Quote {
  readonly asked: QuoteAsked
  readonly route?: RouteResponse
  readonly error?: RouterError
}

/** A router's decimal text as a number: NULL where it is none ("", "N/A", "$0.99") or past a double ("1e400"), not NaN or Infinity */
const num = (s: string | null | undefined) => {
  const n = s === undefined || s === null || s === "" ? Number.NaN : Number(s)
  return Number.isFinite(n) ? n : null
}
/** A router's USD text as a worth: NULL where `num` has none, or below 0 (no worth is; a price impact may be) */
const usd = (s: string | null | undefined) => {
  const n = num(s)
  return n === null || n < 0 ? null : n
}
const fees = (r: RouteResponse) => r.estimated_fees ?? []
/** The USD of `some` fees: 0 for none, NULL where one of them has no USD price (its worth is unknown, not 0). */
const usdOf = (some: ReturnType<typeof fees>) => {
  const worths = some.map((f) => usd(f.usd_amount))
  return worths.some((u) => u === null) ? null : worths.reduce((s: number, u) => s + u!, 0)
}
/** USD of the fees of `behavior` (deducted from the amount, or paid on top of it); a fee that names none is deducted, the router's default (its FeeBehavior) */
const feesUsd = (r: RouteResponse, behavior: string) =>
  usdOf(fees(r).filter((f) => (f.fee_behavior ?? "FEE_BEHAVIOR_DEDUCTED") === behavior))
/** each operation's kind, tx, amounts, chains, bridge and the fees charged on it (one per fee: denoms differ) */
const operationsOf = (r: RouteResponse) =>
  r.operations.map((op, i) => {
    const kind = operationKind(op)
    const inner = ((op as Record<string, unknown>)[kind] ?? {}) as Record<string, unknown>
    const text = (v: unknown) => (typeof v === "string" ? v : null)
    return {
      kind,
      tx_index: op.tx_index,
      amount_in: op.amount_in,
      amount_out: op.amount_out,
      from_chain_id: text(inner.from_chain_id) ?? text(inner.chain_id),
      to_chain_id: text(inner.to_chain_id) ?? text(inner.chain_id),
      bridge_id: text(inner.bridge_id) ?? text(inner.op_init_bridge_id),
      fees: fees(r)
        .filter((f) => f.operation_index === i)
        .map((f) => ({ amount: f.amount, denom: f.origin_asset.denom }))
    }
  })
/** whether base units (decimal digits) fit DECIMAL(38,0) */
const fitsDecimal38 = (units: string) => units.replace(/^0+(?=\d)/, "").length <= 38

/** a value of the route, or NULL when the quote failed */
const ofRoute =
  <A>(f: (r: RouteResponse) => A) =>
  (q: Quote): A | null =>
    q.route ? f(q.route) : null

const col = columnsOf<Quote>()

export const routeQuotes = defineSample({
  name: "route_quotes",
  writtenBy: "sample-routes",
  description: "One row per route quote asked by a sampling plan, failed quotes included.",
  columns: [
    col("sampled_at", "TIMESTAMP", "when the quote was asked (UTC)", (q) => q.asked.sampledAt),
    col("round_id", "VARCHAR", "the sampling round (one file per round)", (q) => q.asked.roundId),
    col(
      "pair",
      "VARCHAR",
      "source chain/denom → dest chain/denom",
      (q) => `${q.asked.source.chain_id}/${q.asked.source.denom} → ${q.asked.dest.chain_id}/${q.asked.dest.denom}`
    ),
    col("source_chain_id", "VARCHAR", "source_asset_chain_id", (q) => q.asked.source.chain_id),
    col("source_denom", "VARCHAR", "source_asset_denom", (q) => q.asked.source.denom),
    col("dest_chain_id", "VARCHAR", "dest_asset_chain_id", (q) => q.asked.dest.chain_id),
    col("dest_denom", "VARCHAR", "dest_asset_denom", (q) => q.asked.dest.denom),
    col("variant", "VARCHAR", "the plan's option variant label", (q) => q.asked.variant),
    col("go_fast", "BOOLEAN", "go_fast sent (NULL = unset)", (q) => q.asked.goFast ?? null),
    col("allow_unsafe", "BOOLEAN", "allow_unsafe sent (NULL = unset, router default)", (q) => q.asked.allowUnsafe ?? null),
    col("is_op_withdraw", "BOOLEAN", "is_op_withdraw sent (NULL = unset)", (q) => q.asked.isOpWithdraw ?? null),
    col("amount_in", "DECIMAL(38,0)", "amount asked, base units", (q) => q.asked.amountIn),
    col(
      "amount_out",
      "DECIMAL(38,0)",
      "expected output, base units; NULL beyond 38 digits (amount_out_text is exact)",
      ofRoute((r) => (fitsDecimal38(r.amount_out) ? r.amount_out : null))
    ),
    // a router's amounts are unbounded decimal text (uint256 on EVM chains)
    col(
      "amount_out_text",
      "VARCHAR",
      "expected output as exact decimal text",
      ofRoute((r) => r.amount_out)
    ),
    col(
      "estimated_amount_out",
      "DECIMAL(38,0)",
      "output before fees; NULL beyond 38 digits (estimated_amount_out_text is exact)",
      ofRoute((r) => (r.estimated_amount_out != null && fitsDecimal38(r.estimated_amount_out) ? r.estimated_amount_out : null))
    ),
    col(
      "estimated_amount_out_text",
      "VARCHAR",
      "output before fees as exact decimal text",
      ofRoute((r) => r.estimated_amount_out ?? null)
    ),
    col(
      "effective_rate",
      "DOUBLE",
      "amount_out / amount_in (base units)",
      ofRoute((r) => Number(r.amount_out) / Number(r.amount_in))
    ),
    col(
      "usd_amount_in",
      "DOUBLE",
      "USD value in (NULL when unpriced)",
      ofRoute((r) => usd(r.usd_amount_in))
    ),
    col(
      "usd_amount_out",
      "DOUBLE",
      "USD value out (NULL when unpriced)",
      ofRoute((r) => usd(r.usd_amount_out))
    ),
    col(
      "fees_usd",
      "DOUBLE",
      "sum of estimated_fees[].usd_amount, deducted and additional together; NULL where a fee has no USD price",
      ofRoute((r) => usdOf(fees(r)))
    ),
    col(
      "fees_deducted_usd",
      "DOUBLE",
      "USD of the fees taken out of the amount (fee_behavior FEE_BEHAVIOR_DEDUCTED, the default where a fee names none); NULL where one has no USD price",
      ofRoute((r) => feesUsd(r, "FEE_BEHAVIOR_DEDUCTED"))
    ),
    col(
      "fees_additional_usd",
      "DOUBLE",
      "USD of the fees paid on top of the amount (FEE_BEHAVIOR_ADDITIONAL); NULL where one has no USD price",
      ofRoute((r) => feesUsd(r, "FEE_BEHAVIOR_ADDITIONAL"))
    ),
    col(
      "fees",
      "JSON",
      "estimated fees: [{bridge_id, fee_type, fee_behavior, amount, usd_amount, denom, chain_id, tx_index, operation_index}]",
      ofRoute((r) =>
        JSON.stringify(
          fees(r).map((f) => ({
            bridge_id: f.bridge_id,
            fee_type: f.fee_type,
            fee_behavior: f.fee_behavior ?? null,
            amount: f.amount,
            usd_amount: f.usd_amount ?? null,
            denom: f.origin_asset.denom,
            chain_id: f.chain_id,
            tx_index: f.tx_index,
            operation_index: f.operation_index ?? null
          }))
        )
      )
    ),
    col(
      "operations",
      "JSON",
      "per operation: [{kind, tx_index, amount_in, amount_out, from_chain_id, to_chain_id, bridge_id, fees: [{amount, denom}]}]",
      ofRoute((r) => JSON.stringify(operationsOf(r)))
    ),
    col(
      "swap_venues",
      "VARCHAR[]",
      "swap venue names (swap_venues[].name)",
      ofRoute((r) => JSON.stringify((r.swap_venues ?? (r.swap_venue ? [r.swap_venue] : [])).map((v) => v.name)))
    ),
    col(
      "price_impact_percent",
      "DOUBLE",
      "swap_price_impact_percent (NULL without a swap)",
      ofRoute((r) => num(r.swap_price_impact_percent ?? null))
    ),
    col(
      "warning_type",
      "VARCHAR",
      "warning.type (BAD_PRICE_WARNING, LOW_INFO_WARNING) or NULL",
      ofRoute((r) => r.warning?.type ?? null)
    ),
    col(
      "warning_message",
      "VARCHAR",
      "warning.message, as a wallet shows it, or NULL",
      ofRoute((r) => r.warning?.message ?? null)
    ),
    col(
      "extra_warnings",
      "VARCHAR[]",
      "extra_warnings",
      ofRoute((r) => JSON.stringify(r.extra_warnings ?? []))
    ),
    col(
      "extra_infos",
      "VARCHAR[]",
      "extra_infos",
      ofRoute((r) => JSON.stringify(r.extra_infos ?? []))
    ),
    col(
      "estimated_duration_s",
      "BIGINT",
      "estimated_route_duration_seconds",
      ofRoute((r) => r.estimated_route_duration_seconds)
    ),
    col(
      "txs_required",
      "INTEGER",
      "txs to sign",
      ofRoute((r) => r.txs_required)
    ),
    col(
      "chain_path",
      "VARCHAR[]",
      "chain_ids in order",
      ofRoute((r) => JSON.stringify(r.chain_ids))
    ),
    col(
      "operation_kinds",
      "VARCHAR[]",
      "each operation's wrapper key",
      ofRoute((r) => JSON.stringify(r.operations.map(operationKind)))
    ),
    col(
      "does_swap",
      "BOOLEAN",
      "does_swap",
      ofRoute((r) => r.does_swap ?? null)
    ),
    col(
      "required_op_hook",
      "BOOLEAN",
      "required_op_hook",
      ofRoute((r) => r.required_op_hook ?? null)
    ),
    col("ok", "BOOLEAN", "a route came back", (q) => q.route !== undefined),
    col(
      "error_kind",
      "VARCHAR",
      "NoRouteError, BadPriceError, LowInfoError, RouterHttpError, RouterTimeout, … or NULL",
      (q) => q.error?._tag ?? null
    ),
    col("error_message", "VARCHAR", "the router's message, or NULL", (q) =>
      q.error ? (q.error._tag === "RouterDecodeError" ? q.error.toString() : q.error.message) : null
    )
  ],
  key: ["round_id", "pair", "variant", "amount_in"],
  sortKey: ["sampled_at", "pair", "variant", "amount_in"],
  partition: date("sampled_at")
})
