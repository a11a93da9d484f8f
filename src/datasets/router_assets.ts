/**
 * router_assets — GET /v2/fungible/assets, sampled with the route quotes: one row per (chain,
 * denom) the router knows, with its symbol and decimals, so route_quotes' base-unit amounts can be
 * read in whole tokens (`amount_in / 10^decimals`). Partitioned by date of sampled_at; one file
 * per sampling run (src/sampling/sampler.ts).
 */
import { columnsOf, defineSample } from "../engine/Dataset.js"
import { date } from "../lake/layout.js"
import type { RouterAsset } from "../router/schemas.js"

export interface AssetSample {
  readonly sampledAt: string
  readonly asset: RouterAsset
}

const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : null)
const col = columnsOf<AssetSample>()

export const routerAssets = defineSample({
  name: "router_assets",
  writtenBy: "sample-routes",
  description: "The router's assets (symbol, decimals, origin) as sampled with the route quotes.",
  columns: [
    col("sampled_at", "TIMESTAMP", "when the list was read (UTC)", (s) => s.sampledAt),
    col("chain_id", "VARCHAR", "chain of the asset", (s) => s.asset.chain_id),
    col("denom", "VARCHAR", "denom on that chain (ibc/…, evm/…, 0x…)", (s) => s.asset.denom),
    col("symbol", "VARCHAR", "symbol, or NULL", (s) => s.asset.symbol ?? null),
    col("name", "VARCHAR", "name, or NULL", (s) => text(s.asset.name)),
    col("decimals", "INTEGER", "decimals: whole tokens = base units / 10^decimals (NULL when unknown)", (s) => s.asset.decimals ?? null),
    col("origin_chain_id", "VARCHAR", "where the asset comes from", (s) => s.asset.origin_chain_id),
    col("origin_denom", "VARCHAR", "its denom there", (s) => s.asset.origin_denom),
    col("is_evm", "BOOLEAN", "an EVM token", (s) => s.asset.is_evm ?? null),
    col("coingecko_id", "VARCHAR", "CoinGecko id, or NULL", (s) => text(s.asset.coingecko_id))
  ],
  key: ["sampled_at", "chain_id", "denom"],
  sortKey: ["sampled_at", "chain_id", "denom"],
  partition: date("sampled_at")
})
