/**
 * router_chains — GET /v2/info/chains, sampled with the route quotes: one row per chain the router
 * knows (name, type, bech32 prefix, fee denoms), to label route_quotes' chain ids. Partitioned by
 * date of sampled_at; one file per sampling run (src/sampling/sampler.ts).
 */
import { columnsOf, defineSample } from "../engine/Dataset.js"
import { date } from "../lake/layout.js"
import type { ChainInfo } from "../router/schemas.js"

export interface ChainSample {
  readonly sampledAt: string
  readonly chain: ChainInfo
}

const col = columnsOf<ChainSample>()

export const routerChains = defineSample({
  name: "router_chains",
  writtenBy: "sample-routes",
  description: "The router's chains (name, type, bech32 prefix, fee denoms) as sampled with the route quotes.",
  columns: [
    col("sampled_at", "TIMESTAMP", "when the list was read (UTC)", (s) => s.sampledAt),
    col("chain_id", "VARCHAR", "chain id", (s) => s.chain.chain_id),
    col("chain_name", "VARCHAR", "registry name, or NULL", (s) => s.chain.chain_name ?? null),
    col("pretty_name", "VARCHAR", "display name, or NULL", (s) => s.chain.pretty_name ?? null),
    col("chain_type", "VARCHAR", "cosmos, evm, svm, … or NULL", (s) => s.chain.chain_type ?? null),
    col("bech32_prefix", "VARCHAR", "address prefix (NULL or empty off cosmos)", (s) => s.chain.bech32_prefix ?? null),
    col("is_testnet", "BOOLEAN", "a testnet", (s) => s.chain.is_testnet ?? null),
    col("fee_denoms", "VARCHAR[]", "denoms accepted for fees", (s) => JSON.stringify((s.chain.fee_assets ?? []).map((f) => f.denom)))
  ],
  key: ["sampled_at", "chain_id"],
  sortKey: ["sampled_at", "chain_id"],
  partition: date("sampled_at")
})
