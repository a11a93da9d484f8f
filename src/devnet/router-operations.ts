/**
 * The operations of a devnet route on the wire: one JSON object per hop with exactly one key
 * naming its kind (transfer, swap, op_init_transfer, …) and that bridge's or venue's fields, plus
 * what the later routes read back from the operations a client sends them.
 */
import { sha256Hex } from "./rng.js"
import type { AssetDef, Edge } from "./router-graph.js"

/** Circle's CCTP domain of each devnet chain (Ethereum 0, Avalanche 1, Noble 4, as Circle numbers them). */
const CCTP_DOMAINS: Readonly<Record<string, number>> = { "1": 0, "43114": 1, "noble-1": 4 }

/** An asset as the router lists it (fee assets, fee origins). */
export const assetJson = (x: AssetDef) => ({
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

/** A USD value to the cent; "" for an unpriced asset, as the router sends it. */
export const usd = (x: AssetDef, amount: bigint): string =>
  x.usd === undefined ? "" : ((Number(amount) / 10 ** x.decimals) * x.usd).toFixed(2)

/** An op-hook is needed when an OPinit withdrawal is followed by more operations (the hook runs them on L1). */
export const needsOpHook = (kinds: ReadonlyArray<{ kind: string; withdraw: boolean }>) =>
  kinds.some((k, i) => k.kind === "op_init_transfer" && k.withdraw && i < kinds.length - 1)

/** One hop of a route as an operation: its amounts in and out, its fee, and the tx it runs in. */
export const operationJson = (e: Edge, amountIn: bigint, amountOut: bigint, txIndex: number, feeAmount: bigint) => {
  const common = {
    from_chain_id: e.from.chainId,
    to_chain_id: e.to.chainId,
    denom_in: e.from.denom,
    denom_out: e.to.denom,
    bridge_id: e.bridgeId,
    smart_relay: false
  }
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
    case "cctp_transfer_v2":
      // @skip-go/client 1.6.1 CCTPTransferV2: Circle's domain numbers; finality 1000 is V2's fast transfer
      inner = {
        ...common,
        burn_token: e.from.denom,
        destination_domain: CCTP_DOMAINS[e.to.chainId] ?? 0,
        finality_threshold: 1000,
        max_fee: feeAmount.toString()
      }
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
        destination_endpoint_id: 30_000 + (Number(e.to.chainId) % 1000),
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

/** The kind of an operation: its one key besides tx_index, amount_in and amount_out. */
export const operationKind = (op: object): string | undefined =>
  Object.keys(op).find((k) => k !== "tx_index" && k !== "amount_in" && k !== "amount_out")
