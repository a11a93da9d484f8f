/**
 * Effect Schemas of the router API (Skip Go API shapes plus the Initia additions: is_op_withdraw,
 * required_op_hook, extra_warnings, /op-hook). Amounts and USD values are strings; an empty
 * string amount means "absent". Operations carry exactly one wrapper key; unknown kinds are kept.
 *
 * Written from the API contract and the reference notes, independently of src/devnet.
 */
import { Schema } from "effect"

/** A string amount where "" means absent (unpriced tokens arrive with empty USD values). */
const OptionalAmount = Schema.transform(Schema.String, Schema.UndefinedOr(Schema.String), {
  strict: true,
  decode: (s) => (s === "" ? undefined : s),
  encode: (s) => s ?? ""
})
/** An amount in base units: digits only (a sign, a fraction or "lots" is not an amount; they were stored as quotes). */
const BaseUnits = Schema.transform(Schema.String.pipe(Schema.pattern(/^[0-9]+$/)), Schema.String, {
  strict: true,
  // read as the number it is: "0001994000" is 1994000, in the lake's exact text columns too
  decode: (s) => BigInt(s).toString(),
  encode: (s) => s
})
/** A count or index the lake stores as INTEGER: 0..2^31-1 (a router's 2^40 or -1 is no count; it failed the whole round at the write) */
const Count = Schema.Int.pipe(Schema.between(0, 2_147_483_647))
/** Seconds, stored as BIGINT: a whole number, not negative, exact in a double */
const Seconds = Schema.Int.pipe(Schema.between(0, Number.MAX_SAFE_INTEGER))
/** An asset's decimals: whole tokens = base units / 10^decimals (6.5 or 1e12 is none) */
const Decimals = Schema.Int.pipe(Schema.between(0, 255))
/** BaseUnits where "" means absent. */
const OptionalBaseUnits = Schema.transform(Schema.String.pipe(Schema.pattern(/^([0-9]+)?$/)), Schema.UndefinedOr(Schema.String), {
  strict: true,
  decode: (s) => (s === "" ? undefined : s),
  encode: (s) => s ?? ""
})
const Open = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const opt = Schema.optional

export const RouteRequest = Schema.Struct({
  amount_in: BaseUnits,
  source_asset_chain_id: Schema.String,
  source_asset_denom: Schema.String,
  dest_asset_chain_id: Schema.String,
  dest_asset_denom: Schema.String,
  allow_unsafe: opt(Schema.Boolean),
  go_fast: opt(Schema.Boolean),
  is_op_withdraw: opt(Schema.Boolean)
})
export type RouteRequest = typeof RouteRequest.Type

const Asset = Schema.Struct(
  {
    denom: Schema.String,
    chain_id: Schema.String,
    origin_denom: Schema.String,
    origin_chain_id: Schema.String,
    symbol: opt(Schema.NullOr(Schema.String)),
    name: opt(Schema.NullOr(Schema.String)),
    decimals: opt(Schema.NullOr(Decimals)),
    is_evm: opt(Schema.NullOr(Schema.Boolean)),
    coingecko_id: opt(Schema.NullOr(Schema.String))
  },
  Open
)

const SwapVenue = Schema.Struct({ name: Schema.String, chain_id: Schema.String, logo_uri: opt(Schema.NullOr(Schema.String)) })

const Hop = { from_chain_id: Schema.String, to_chain_id: Schema.String, denom_in: Schema.String, denom_out: Schema.String }
const withOpen = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct(fields, Open)

/** The inner object of each known operation kind (main fields; the rest kept as is). */
const OperationKinds = {
  transfer: withOpen({ ...Hop, port: Schema.String, channel: Schema.String }),
  swap: withOpen({ chain_id: Schema.String, denom_in: Schema.String, denom_out: Schema.String }),
  axelar_transfer: withOpen({ ...Hop }),
  cctp_transfer: withOpen({ ...Hop }),
  // CCTP V2 (@skip-go/client 1.6.1 CCTPTransferV2): V1's hop plus its domain, finality threshold and max fee
  cctp_transfer_v2: withOpen({
    ...Hop,
    destination_domain: opt(Schema.Int),
    finality_threshold: opt(Schema.Int),
    max_fee: opt(OptionalBaseUnits)
  }),
  hyperlane_transfer: withOpen({ ...Hop }),
  op_init_transfer: withOpen({ ...Hop, op_init_bridge_id: Schema.String }),
  go_fast_transfer: withOpen({ ...Hop, fee: Open }),
  evm_swap: withOpen({
    from_chain_id: Schema.String,
    denom_in: Schema.String,
    denom_out: Schema.String,
    amount_in: BaseUnits,
    amount_out: BaseUnits
  }),
  bank_send: withOpen({ chain_id: Schema.String, denom: Schema.String }),
  stargate_transfer: withOpen({ ...Hop }),
  layer_zero_transfer: withOpen({ ...Hop }),
  eureka_transfer: withOpen({ ...Hop })
} as const
type OperationKind = keyof typeof OperationKinds
export const OPERATION_KINDS = Object.keys(OperationKinds) as ReadonlyArray<OperationKind>

const COMMON_OPERATION_FIELDS = new Set(["tx_index", "amount_in", "amount_out"])

/** One operation: known wrapper keys are validated; an unknown kind is kept as an open object. */
export const Operation = Schema.Struct(
  {
    tx_index: Count,
    amount_in: BaseUnits,
    amount_out: BaseUnits,
    ...(Object.fromEntries(Object.entries(OperationKinds).map(([k, s]) => [k, opt(s)])) as {
      [K in OperationKind]: Schema.optional<(typeof OperationKinds)[K]>
    })
  },
  Open
)
export type Operation = typeof Operation.Type

/** The operation's kind: its one wrapper key (which may be a kind this client does not know). */
export const operationKind = (op: Operation | Record<string, unknown>): string =>
  Object.keys(op).find((k) => !COMMON_OPERATION_FIELDS.has(k)) ?? "unknown"

const Fee = Schema.Struct({
  fee_type: Schema.String,
  bridge_id: Schema.String,
  amount: BaseUnits,
  usd_amount: opt(OptionalAmount),
  origin_asset: Asset,
  chain_id: Schema.String,
  tx_index: Count,
  operation_index: opt(Schema.NullOr(Count)),
  fee_behavior: opt(Schema.String)
})

const RouteWarning = Schema.Struct({ type: Schema.String, message: Schema.String })

export const RouteResponse = Schema.Struct({
  amount_in: BaseUnits,
  amount_out: BaseUnits,
  source_asset_denom: Schema.String,
  source_asset_chain_id: Schema.String,
  dest_asset_denom: Schema.String,
  dest_asset_chain_id: Schema.String,
  operations: Schema.Array(Operation),
  chain_ids: Schema.Array(Schema.String),
  required_chain_addresses: Schema.Array(Schema.String),
  does_swap: opt(Schema.Boolean),
  estimated_amount_out: opt(OptionalBaseUnits),
  swap_venues: opt(Schema.NullOr(Schema.Array(SwapVenue))),
  swap_venue: opt(Schema.NullOr(SwapVenue)),
  txs_required: Count,
  usd_amount_in: opt(OptionalAmount),
  usd_amount_out: opt(OptionalAmount),
  swap_price_impact_percent: opt(Schema.NullOr(OptionalAmount)),
  estimated_fees: opt(Schema.NullOr(Schema.Array(Fee))),
  estimated_route_duration_seconds: Schema.NullOr(Seconds),
  warning: opt(Schema.NullOr(RouteWarning)),
  extra_warnings: opt(Schema.NullOr(Schema.Array(Schema.String))),
  extra_infos: opt(Schema.NullOr(Schema.Array(Schema.String))),
  required_op_hook: opt(Schema.Boolean)
})
export type RouteResponse = typeof RouteResponse.Type

/** GET /v2/fungible/assets: the assets of each chain, with symbol and decimals (to read amounts in whole tokens). */
export const AssetsResponse = Schema.Struct({
  chain_to_assets_map: Schema.Record({ key: Schema.String, value: Schema.Struct({ assets: Schema.Array(Asset) }, Open) })
})
export type AssetsResponse = typeof AssetsResponse.Type
export type RouterAsset = AssetsResponse["chain_to_assets_map"][string]["assets"][number]

/** GET /v2/info/chains: what each chain is (name, type, bech32 prefix, fee assets). */
export const ChainInfo = Schema.Struct(
  {
    chain_id: Schema.String,
    chain_name: opt(Schema.NullOr(Schema.String)),
    pretty_name: opt(Schema.NullOr(Schema.String)),
    chain_type: opt(Schema.NullOr(Schema.String)),
    bech32_prefix: opt(Schema.NullOr(Schema.String)),
    is_testnet: opt(Schema.NullOr(Schema.Boolean)),
    pfm_enabled: opt(Schema.NullOr(Schema.Boolean)),
    supports_memo: opt(Schema.NullOr(Schema.Boolean)),
    fee_assets: opt(Schema.NullOr(Schema.Array(Schema.Struct({ denom: Schema.String }, Open))))
  },
  Open
)
export type ChainInfo = typeof ChainInfo.Type
export const ChainsResponse = Schema.Struct({ chains: Schema.Array(ChainInfo) })

/** gRPC-gateway style error body. */
export const RouterErrorBody = Schema.Struct({
  code: Schema.Int,
  message: Schema.String,
  details: opt(Schema.Array(Schema.Struct({ reason: opt(Schema.String) }, Open))),
  info: opt(Schema.String)
})
export type RouterErrorBody = typeof RouterErrorBody.Type

export const OpHookRequest = Schema.Struct({
  source_address: Schema.String,
  source_asset_chain_id: Schema.String,
  source_asset_denom: Schema.String,
  dest_address: Schema.String,
  dest_asset_chain_id: Schema.String,
  dest_asset_denom: Schema.String
})
export const OpHookResponse = Schema.Struct({
  chain_id: Schema.String,
  hook: Schema.Array(Schema.Struct({ msg_type_url: Schema.String, msg: Schema.String }))
})
export type OpHookResponse = typeof OpHookResponse.Type
export const SignedOpHook = Schema.Struct({ signer: Schema.String, hook: Schema.String })

const CosmosMsg = Schema.Struct({ msg: Schema.String, msg_type_url: Schema.String })
export const MsgsTx = Schema.Struct(
  {
    cosmos_tx: opt(
      Schema.Struct({
        chain_id: Schema.String,
        path: Schema.Array(Schema.String),
        signer_address: Schema.String,
        msgs: Schema.Array(CosmosMsg)
      })
    ),
    evm_tx: opt(
      Schema.Struct({
        chain_id: Schema.String,
        to: Schema.String,
        value: Schema.String,
        data: Schema.String,
        signer_address: Schema.String,
        required_erc20_approvals: opt(
          Schema.Array(Schema.Struct({ amount: Schema.String, spender: Schema.String, token_contract: Schema.String }))
        )
      })
    ),
    svm_tx: opt(Schema.Struct({ chain_id: Schema.String, signer_address: Schema.String, tx: Schema.String })),
    operations_indices: opt(Schema.Array(Schema.Int))
  },
  Open
)
export type MsgsTx = typeof MsgsTx.Type
export const MsgsResponse = Schema.Struct({
  txs: Schema.Array(MsgsTx),
  msgs: opt(Schema.Array(Open)),
  min_amount_out: opt(OptionalBaseUnits),
  estimated_fees: opt(Schema.NullOr(Schema.Array(Fee)))
})
export type MsgsResponse = typeof MsgsResponse.Type

export const TrackResponse = Schema.Struct({ tx_hash: Schema.String, explorer_link: Schema.String })

/** One TransferEvent: exactly one wrapper key (ibc_transfer, op_init_transfer, …), each with its own state enum. */
export const TransferEvent = Open
const StatusError = Schema.Struct({ type: Schema.String, message: Schema.String }, Open)
const TransferAssetRelease = Schema.Struct({
  chain_id: Schema.String,
  denom: Schema.String,
  amount: opt(Schema.NullOr(OptionalBaseUnits)),
  released: Schema.Boolean
})
const TransferStatus = Schema.Struct({
  state: Schema.String,
  transfer_sequence: Schema.Array(TransferEvent),
  next_blocking_transfer: opt(Schema.NullOr(Schema.Struct({ transfer_sequence_index: Count }))),
  transfer_asset_release: opt(Schema.NullOr(TransferAssetRelease)),
  error: opt(Schema.NullOr(StatusError))
})
export const TxStatusResponse = Schema.Struct({
  state: Schema.String,
  transfers: opt(Schema.Array(TransferStatus)),
  // deprecated in the router's OpenAPI document in favour of `transfers`: a router may leave it out
  transfer_sequence: opt(Schema.Array(TransferEvent)),
  next_blocking_transfer: opt(Schema.NullOr(Schema.Struct({ transfer_sequence_index: Count }))),
  transfer_asset_release: opt(Schema.NullOr(TransferAssetRelease)),
  error: opt(Schema.NullOr(StatusError)),
  status: opt(Schema.String)
})
export type TxStatusResponse = typeof TxStatusResponse.Type

/** How a final state ended; undefined while the transfer is in flight. */
export type Outcome = "success" | "error" | "abandoned"

/**
 * The outcome of a state: success, error and abandonment as the production clients read them, and
 * STATE_UNKNOWN as an error (the Skip Go API's error-code docs: "treat as error"), never polled on.
 */
export const outcomeOf = (state: string): Outcome | undefined =>
  state === "STATE_COMPLETED_SUCCESS"
    ? "success"
    : state === "STATE_COMPLETED_ERROR" || state === "STATE_UNKNOWN"
      ? "error"
      : state === "STATE_ABANDONED"
        ? "abandoned"
        : undefined

export const isFinalState = (state: string) => outcomeOf(state) !== undefined

/**
 * The transfer events of a status: every transfer's (a tx may start several: "all transfers
 * initiated by the transaction"), in order, else the deprecated flat list; undefined when the
 * router sent neither.
 */
export const transferEventsOf = (s: TxStatusResponse) =>
  s.transfers && s.transfers.length > 0 ? s.transfers.flatMap((t) => t.transfer_sequence) : s.transfer_sequence
