/** Route requests, placeholder addresses and a bridged transfer for router tests. */
import { ASSETS } from "../../src/devnet/router-graph.js"
import { runCli } from "./cli.js"
import { postJson } from "./http.js"
import { json, startProxy } from "./hostile.js"
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

/** track's polling, made fast for tests */
export const FAST_POLL = ["--poll-slow", "100ms", "--poll-near", "50ms", "--poll-overdue", "20ms", "--near-window", "200ms"]

/** `chain-lake track`'s command line for `txHash` on noble-1 through `routerUrl` into `out`, polling fast, then `flags` */
export const trackArgs = (routerUrl: string, txHash: string, out: string, ...flags: Array<string>) => [
  "track",
  "--router-url",
  routerUrl,
  "--tx-hash",
  txHash,
  "--chain-id",
  "noble-1",
  "--out",
  out,
  ...FAST_POLL,
  ...flags
]

/**
 * Bridges 3 USDC from Noble (`chain-lake bridge`) and broadcasts its first tx through the devnet
 * router (devnet only: a real router never broadcasts; the wallet signs and submits txs[0]), which
 * ends the transfer with `outcome`: the tx hash to track, the route's estimate and operation kinds.
 */
export const bridgeAndBroadcast = async (
  routerUrl: string,
  outcome: "success" | "error" | "unknown" = "success",
  to: AssetRef = ASSETS.l2Usdc,
  chains = ["noble-1", "interwoven-1", "lake-evm-1"]
) => {
  const b = await runCli([
    "bridge",
    "--router-url",
    routerUrl,
    "--from",
    `${ASSETS.nobleUsdc.chainId}:${ASSETS.nobleUsdc.denom}`,
    "--to",
    `${to.chainId}:${to.denom}`,
    "--amount",
    "3000000",
    ...chains.flatMap((c) => ["--address", `${c}=${addressFor(c)}`])
  ])
  if (b.code !== 0) throw new Error(b.stderr)
  const bridged = JSON.parse(b.stdout)
  const sent = await postJson(routerUrl + "/devnet/broadcast", { chain_id: "noble-1", tx: bridged.txs[0], outcome })
  return {
    txHash: sent.json.tx_hash as string,
    estimated: bridged.route.estimated_route_duration_seconds as number,
    kinds: bridged.route.operation_kinds as Array<string>
  }
}

/** A proxy of the router at `routerUrl` whose transfers never move on from STATE_PENDING (a run tracking one is still polling). */
export const stuckRouter = (routerUrl: string) =>
  startProxy(routerUrl, async (req, forward) => {
    const res = await forward()
    if (req.url.pathname !== "/v2/tx/status" || res.status !== 200) return res
    const body = JSON.parse(res.body)
    return json({
      ...body,
      state: body.state === "STATE_SUBMITTED" ? body.state : "STATE_PENDING",
      transfers: [],
      transfer_asset_release: null
    })
  })
