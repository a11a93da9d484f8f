/** Route requests and placeholder addresses for router tests. */
export interface AssetRef {
  readonly chainId: string
  readonly denom: string
}

export const routeRequest = (src: AssetRef, dst: AssetRef, amount: string, extra: Record<string, boolean> = {}) => ({
  amount_in: amount,
  source_asset_chain_id: src.chainId,
  source_asset_denom: src.denom,
  dest_asset_chain_id: dst.chainId,
  dest_asset_denom: dst.denom,
  ...extra
})

/** An address of the right shape for a chain of the devnet's router graph (0x on EVM chains, bech32 prefixes elsewhere). */
export const addressFor = (chain: string) =>
  /^\d+$/.test(chain)
    ? "0x" + "ab".repeat(20)
    : `${chain === "osmosis-1" ? "osmo" : chain === "noble-1" ? "noble" : chain === "cosmoshub-4" ? "cosmos" : "init"}1qyqszqgpqyqszqgpqyqszqgpqyqszqgp2q8dz8`
