/**
 * route_quotes — POST /v2/fungible/route, sampled by a plan (pipelines/route-quotes.json): one row
 * per quote asked, successful or not (a failed quote is data: its error kind and message).
 * Partitioned by date=YYYY-MM-DD of sampled_at; one file per sampling round.
 */
import type { Column, Row } from "../engine/Dataset.js"
import type { RouterError } from "../router/errors.js"
import { operationKind, type RouteResponse } from "../router/schemas.js"

export const ROUTE_QUOTES = "route_quotes"

export const routeQuoteColumns: ReadonlyArray<Column> = [
  { name: "sampled_at", type: "TIMESTAMP", description: "when the quote was asked (UTC)" },
  { name: "round_id", type: "VARCHAR", description: "the sampling round (one file per round)" },
  { name: "pair", type: "VARCHAR", description: "source chain/denom → dest chain/denom" },
  { name: "source_chain_id", type: "VARCHAR", description: "source_asset_chain_id" },
  { name: "source_denom", type: "VARCHAR", description: "source_asset_denom" },
  { name: "dest_chain_id", type: "VARCHAR", description: "dest_asset_chain_id" },
  { name: "dest_denom", type: "VARCHAR", description: "dest_asset_denom" },
  { name: "variant", type: "VARCHAR", description: "the plan's option variant label" },
  { name: "go_fast", type: "BOOLEAN", description: "go_fast sent (NULL = unset)" },
  { name: "allow_unsafe", type: "BOOLEAN", description: "allow_unsafe sent (NULL = unset, router default)" },
  { name: "is_op_withdraw", type: "BOOLEAN", description: "is_op_withdraw sent (NULL = unset)" },
  { name: "amount_in", type: "DECIMAL(38,0)", description: "amount asked, base units" },
  { name: "amount_out", type: "DECIMAL(38,0)", description: "expected output, base units" },
  { name: "estimated_amount_out", type: "DECIMAL(38,0)", description: "output before fees" },
  { name: "effective_rate", type: "DOUBLE", description: "amount_out / amount_in (base units)" },
  { name: "usd_amount_in", type: "DOUBLE", description: "USD value in (NULL when unpriced)" },
  { name: "usd_amount_out", type: "DOUBLE", description: "USD value out (NULL when unpriced)" },
  { name: "fees_usd", type: "DOUBLE", description: "sum of estimated_fees[].usd_amount" },
  { name: "fees", type: "JSON", description: "estimated fees per bridge: [{bridge_id, fee_type, amount, usd_amount, denom}]" },
  { name: "price_impact_percent", type: "DOUBLE", description: "swap_price_impact_percent (NULL without a swap)" },
  { name: "warning_type", type: "VARCHAR", description: "warning.type (BAD_PRICE_WARNING, LOW_INFO_WARNING) or NULL" },
  { name: "extra_warnings", type: "VARCHAR[]", description: "extra_warnings" },
  { name: "estimated_duration_s", type: "BIGINT", description: "estimated_route_duration_seconds" },
  { name: "txs_required", type: "INTEGER", description: "txs to sign" },
  { name: "chain_path", type: "VARCHAR[]", description: "chain_ids in order" },
  { name: "operation_kinds", type: "VARCHAR[]", description: "each operation's wrapper key" },
  { name: "does_swap", type: "BOOLEAN", description: "does_swap" },
  { name: "required_op_hook", type: "BOOLEAN", description: "required_op_hook" },
  { name: "ok", type: "BOOLEAN", description: "a route came back" },
  { name: "error_kind", type: "VARCHAR", description: "NoRouteError, BadPriceError, LowInfoError, RouterHttpError, RouterTimeout, … or NULL" },
  { name: "error_message", type: "VARCHAR", description: "the router's message, or NULL" }
]

export const routeQuoteSortKey = ["sampled_at", "pair", "variant", "amount_in"]

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

const num = (s: string | null | undefined) => (s === undefined || s === null || s === "" ? null : Number(s))

export const routeQuoteRow = (q: QuoteAsked, outcome: { readonly route: RouteResponse } | { readonly error: RouterError }): Row => {
  const head: Row = [
    q.sampledAt,
    q.roundId,
    `${q.source.chain_id}/${q.source.denom} → ${q.dest.chain_id}/${q.dest.denom}`,
    q.source.chain_id,
    q.source.denom,
    q.dest.chain_id,
    q.dest.denom,
    q.variant,
    q.goFast ?? null,
    q.allowUnsafe ?? null,
    q.isOpWithdraw ?? null,
    q.amountIn
  ]
  if ("error" in outcome) {
    const e = outcome.error
    const message = e._tag === "RouterDecodeError" ? e.toString() : e.message
    return [...head, ...Array<null>(16).fill(null), false, e._tag, message]
  }
  const r = outcome.route
  const fees = r.estimated_fees ?? []
  const feesUsd = fees.reduce((s, f) => s + (num(f.usd_amount) ?? 0), 0)
  return [
    ...head,
    r.amount_out,
    r.estimated_amount_out ?? null,
    Number(r.amount_out) / Number(r.amount_in),
    num(r.usd_amount_in),
    num(r.usd_amount_out),
    feesUsd,
    JSON.stringify(fees.map((f) => ({ bridge_id: f.bridge_id, fee_type: f.fee_type, amount: f.amount, usd_amount: f.usd_amount ?? null, denom: f.origin_asset.denom }))),
    num(r.swap_price_impact_percent ?? null),
    r.warning?.type ?? null,
    JSON.stringify(r.extra_warnings ?? []),
    r.estimated_route_duration_seconds,
    r.txs_required,
    JSON.stringify(r.chain_ids),
    JSON.stringify(r.operations.map(operationKind)),
    r.does_swap ?? null,
    r.required_op_hook ?? null,
    true,
    null,
    null
  ]
}
