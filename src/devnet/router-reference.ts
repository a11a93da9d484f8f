/**
 * The devnet router's metadata endpoints, which wallets read for symbols and decimals:
 * GET /v2/fungible/assets (`chain_to_assets_map`) and GET /v2/info/chains (`chains`), each
 * limited by repeated `chain_ids` when given, in the shapes of the router's OpenAPI document.
 */
import type { DevnetReply } from "./http.js"
import { assetJson } from "./router-operations.js"
import { ALL_ASSETS, CHAINS, ROLLUP } from "./router-graph.js"
import { ok } from "./router-wire.js"

/** `chain_ids` as sent (repeated, or one comma-separated value); undefined = all chains. */
const chainIdsOf = (q: URLSearchParams): ReadonlySet<string> | undefined => {
  const ids = q
    .getAll("chain_ids")
    .flatMap((v) => v.split(","))
    .filter(Boolean)
  return ids.length > 0 ? new Set(ids) : undefined
}

export const assets = (q: URLSearchParams): DevnetReply => {
  const only = chainIdsOf(q)
  const map: Record<string, { assets: Array<unknown> }> = {}
  for (const x of ALL_ASSETS) {
    if (only && !only.has(x.chainId)) continue
    ;(map[x.chainId] ??= { assets: [] }).assets.push({ ...assetJson(x), coingecko_id: null, recommended_symbol: x.symbol })
  }
  return ok({ chain_to_assets_map: map })
}

const PRETTY: Readonly<Record<string, readonly [name: string, pretty: string, prefix: string]>> = {
  "interwoven-1": ["initia", "Initia", "init"],
  [ROLLUP]: ["lakeevm", "Lake EVM", "init"],
  "osmosis-1": ["osmosis", "Osmosis", "osmo"],
  "noble-1": ["noble", "Noble", "noble"],
  "cosmoshub-4": ["cosmoshub", "Cosmos Hub", "cosmos"],
  "isolated-1": ["isolated", "Isolated", "iso"],
  "1": ["ethereum", "Ethereum", ""],
  "42161": ["arbitrum", "Arbitrum", ""],
  "8453": ["base", "Base", ""],
  "43114": ["avalanche", "Avalanche", ""]
}

export const chains = (q: URLSearchParams): DevnetReply => {
  const only = chainIdsOf(q)
  const list = CHAINS.filter((c) => !only || only.has(c)).map((chainId) => {
    const evm = /^\d+$/.test(chainId)
    const [name, pretty, prefix] = PRETTY[chainId] ?? [chainId, chainId, ""]
    return {
      chain_name: name,
      chain_id: chainId,
      pfm_enabled: !evm,
      cosmos_module_support: { authz: !evm, feegrant: !evm },
      supports_memo: !evm,
      logo_uri: null,
      bech32_prefix: prefix,
      fee_assets: ALL_ASSETS.filter((x) => x.chainId === chainId && x.originChainId === chainId).map((x) => ({
        denom: x.denom,
        gas_price: evm ? null : { low: "0.01", average: "0.025", high: "0.04" }
      })),
      chain_type: evm ? "evm" : "cosmos",
      ibc_capabilities: { cosmos_pfm: !evm, cosmos_ibc_hooks: !evm, cosmos_memo: !evm, cosmos_autopilot: false },
      is_testnet: false,
      pretty_name: pretty
    }
  })
  return ok({ chains: list })
}
