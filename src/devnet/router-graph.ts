/**
 * The devnet router's world: a small graph of chains and assets joined by bridges and DEX pools,
 * covering every operation kind of the router API. Routes are the cheapest paths through it;
 * swap outputs come from constant-product pools, so price impact grows with the amount.
 */
export interface AssetDef {
  readonly chainId: string
  readonly denom: string
  readonly symbol: string
  readonly decimals: number
  /** USD per whole token; undefined = unpriced (the router then sends empty usd strings) */
  readonly usd?: number
  readonly originChainId: string
  readonly originDenom: string
  readonly isEvm: boolean
}

export type OpKind =
  | "transfer"
  | "swap"
  | "axelar_transfer"
  | "cctp_transfer"
  | "cctp_transfer_v2"
  | "hyperlane_transfer"
  | "op_init_transfer"
  | "go_fast_transfer"
  | "evm_swap"
  | "bank_send"
  | "stargate_transfer"
  | "layer_zero_transfer"
  | "eureka_transfer"

export interface Edge {
  readonly from: AssetDef
  readonly to: AssetDef
  readonly kind: OpKind
  readonly durationS: number
  /** bridge fee in bps of the amount, deducted */
  readonly feeBps: number
  readonly bridgeId: string
  /** for swaps: pool reserves of (from, to) in base units */
  readonly reserves?: readonly [bigint, bigint]
  readonly venue?: string
  readonly channel?: string
  /** only with go_fast */
  readonly goFastOnly?: boolean
  /** an L2 → L1 optimistic withdrawal */
  readonly opWithdraw?: boolean
}

export const ROLLUP = "lake-evm-1"
export const L1 = "interwoven-1"

const a = (
  chainId: string,
  denom: string,
  symbol: string,
  decimals: number,
  usd: number | undefined,
  origin?: [string, string]
): AssetDef => ({
  chainId,
  denom,
  symbol,
  decimals,
  usd,
  originChainId: origin ? origin[0] : chainId,
  originDenom: origin ? origin[1] : denom,
  isEvm: /^\d+$/.test(chainId) || chainId === ROLLUP
})

export const ASSETS = {
  l1Init: a(L1, "uinit", "INIT", 6, 0.5),
  l1Usdc: a(L1, "ibc/6490A7EAB61059BFC1CDDEB05917DD70BDF3A611654162A1A47DB930D40D8AF4", "USDC", 6, 1, ["noble-1", "uusdc"]),
  l1Osmo: a(L1, "ibc/14F9BC3E44B8A9C1BE1FB08980FAB87034C9905EF17CF2F5008FC085218811CC", "OSMO", 6, 0.4, ["osmosis-1", "uosmo"]),
  l1Atom: a(L1, "ibc/C4CFF46FD6DE35CA4CF4CE031E643C8FDC9BA4B99AE598E9B0ED98FE3A2319F9", "ATOM", 6, 5, ["cosmoshub-4", "uatom"]),
  l1Weth: a(L1, "ibc/EA1D43981D5C9A1C4AAEA9C23BB1D4FA126BA9BC7020A25E0AE4AA841EA25DC5", "WETH.axl", 18, 3000, [
    "1",
    "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
  ]),
  l2Init: a(ROLLUP, "uinit", "INIT", 6, 0.5, [L1, "uinit"]),
  l2Usdc: a(ROLLUP, "ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2", "USDC", 6, 1, ["noble-1", "uusdc"]),
  l2Lake: a(ROLLUP, "evm/0xAbCdEf0123456789aBcDeF0123456789AbCdEf01", "LAKE", 18, undefined),
  osmo: a("osmosis-1", "uosmo", "OSMO", 6, 0.4),
  osmoInit: a("osmosis-1", "ibc/DFF2CA3E1D7A4B5F1C2E3D4C5B6A7980F1E2D3C4B5A697887766554433221100", "INIT", 6, 0.5, [L1, "uinit"]),
  nobleUsdc: a("noble-1", "uusdc", "USDC", 6, 1),
  atom: a("cosmoshub-4", "uatom", "ATOM", 6, 5),
  ethUsdc: a("1", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "USDC", 6, 1, ["noble-1", "uusdc"]),
  ethWeth: a("1", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", "WETH", 18, 3000),
  ethAtom: a("1", "0xbf6Bc6782f7EB580312CC09B976e9329f3e027B3", "ATOM", 6, 5, ["cosmoshub-4", "uatom"]),
  arbUsdc: a("42161", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "USDC", 6, 1, ["noble-1", "uusdc"]),
  avaxUsdc: a("43114", "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", "USDC", 6, 1, ["noble-1", "uusdc"]),
  baseUsdc: a("8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USDC", 6, 1, ["noble-1", "uusdc"]),
  baseLake: a("8453", "0x1a4e0000000000000000000000000000000000aa", "LAKE", 18, undefined, [
    ROLLUP,
    "evm/0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"
  ]),
  isolated: a("isolated-1", "uiso", "ISO", 6, 1)
} as const

const bridge = (
  x: AssetDef,
  y: AssetDef,
  kind: OpKind,
  durationS: number,
  feeBps: number,
  bridgeId: string,
  extra: Partial<Edge> = {},
  back: Partial<Edge> = {}
): Array<Edge> => [
  { from: x, to: y, kind, durationS, feeBps, bridgeId, ...extra },
  { from: y, to: x, kind, durationS, feeBps, bridgeId, ...extra, ...back }
]
const pool = (x: AssetDef, y: AssetDef, kind: "swap" | "evm_swap", venue: string, rx: bigint, ry: bigint): Array<Edge> => [
  { from: x, to: y, kind, durationS: 0, feeBps: 30, bridgeId: "", reserves: [rx, ry], venue },
  { from: y, to: x, kind, durationS: 0, feeBps: 30, bridgeId: "", reserves: [ry, rx], venue }
]

const S = ASSETS
const E6 = 10n ** 6n
const E18 = 10n ** 18n
export const EDGES: ReadonlyArray<Edge> = [
  // OPinit: deposits are quick, withdrawals take the 7-day challenge period
  ...bridge(S.l1Init, S.l2Init, "op_init_transfer", 60, 0, "OPINIT", {}, { durationS: 604_800, opWithdraw: true }),
  { from: S.l2Init, to: S.l1Init, kind: "go_fast_transfer", durationS: 30, feeBps: 10, bridgeId: "GO_FAST", goFastOnly: true },
  ...bridge(S.l1Usdc, S.nobleUsdc, "transfer", 30, 0, "IBC", { channel: "channel-3" }),
  ...bridge(S.l1Usdc, S.l2Usdc, "transfer", 30, 0, "IBC", { channel: "channel-25" }),
  ...bridge(S.l1Osmo, S.osmo, "transfer", 30, 0, "IBC", { channel: "channel-1" }),
  ...bridge(S.l1Init, S.osmoInit, "transfer", 30, 0, "IBC", { channel: "channel-1" }),
  ...bridge(S.l1Atom, S.atom, "transfer", 30, 0, "IBC", { channel: "channel-2" }),
  ...bridge(S.nobleUsdc, S.ethUsdc, "cctp_transfer", 1_200, 5, "CCTP"),
  // CCTP V2 (@skip-go/client 1.6.1 BridgeType CCTP_V2): its fast transfer settles in seconds
  ...bridge(S.nobleUsdc, S.avaxUsdc, "cctp_transfer_v2", 30, 1, "CCTP_V2"),
  ...bridge(S.ethUsdc, S.arbUsdc, "stargate_transfer", 90, 6, "STARGATE"),
  ...bridge(S.ethWeth, S.l1Weth, "axelar_transfer", 1_800, 8, "AXELAR"),
  ...bridge(S.baseLake, S.l2Lake, "layer_zero_transfer", 180, 0, "LAYER_ZERO"),
  ...bridge(S.atom, S.ethAtom, "eureka_transfer", 900, 0, "EUREKA"),
  ...bridge(S.baseUsdc, S.l2Usdc, "hyperlane_transfer", 300, 4, "HYPERLANE"),
  ...pool(S.l1Init, S.l1Usdc, "swap", "initia-dex", 40_000_000n * E6, 20_000_000n * E6),
  ...pool(S.l1Init, S.l1Osmo, "swap", "initia-dex", 8_000_000n * E6, 10_000_000n * E6),
  ...pool(S.l1Init, S.l1Atom, "swap", "initia-dex", 5_000_000n * E6, 500_000n * E6),
  ...pool(S.l1Init, S.l1Weth, "swap", "initia-dex", 6_000_000n * E6, 1_000n * E18),
  ...pool(S.l2Lake, S.l2Init, "evm_swap", "lake-dex", 50_000_000n * E18, 2_000_000n * E6),
  ...pool(S.l2Usdc, S.l2Init, "evm_swap", "lake-dex", 1_000_000n * E6, 2_000_000n * E6)
]

export const ALL_ASSETS: ReadonlyArray<AssetDef> = Object.values(ASSETS)
export const CHAINS: ReadonlyArray<string> = [...new Set(ALL_ASSETS.map((x) => x.chainId))]

export const findAsset = (chainId: string, denom: string): AssetDef | undefined =>
  ALL_ASSETS.find((x) => x.chainId === chainId && x.denom.toLowerCase() === denom.toLowerCase())

export interface RouteOptions {
  readonly goFast?: boolean
  readonly isOpWithdraw?: boolean
}

/**
 * Cheapest path: fewest operations first, then shortest duration (Dijkstra over assets).
 * go_fast=false or is_op_withdraw=true disable Go Fast; is_op_withdraw forces the OPinit withdrawal.
 */
export const findPath = (src: AssetDef, dst: AssetDef, options: RouteOptions): Array<Edge> | undefined => {
  const key = (x: AssetDef) => `${x.chainId}|${x.denom}`
  const usable = EDGES.filter((e) => !(e.goFastOnly && (options.goFast === false || options.isOpWithdraw === true)))
  const dist = new Map<string, number>([[key(src), 0]])
  const prev = new Map<string, Edge>()
  const done = new Set<string>()
  for (;;) {
    let best: string | undefined
    for (const [k, d] of dist) if (!done.has(k) && (best === undefined || d < dist.get(best)!)) best = k
    if (best === undefined) return undefined
    if (best === key(dst)) break
    done.add(best)
    for (const e of usable) {
      if (key(e.from) !== best) continue
      const d = dist.get(best)! + 1_000_000_000 + e.durationS
      const k = key(e.to)
      if (!done.has(k) && d < (dist.get(k) ?? Infinity)) {
        dist.set(k, d)
        prev.set(k, e)
      }
    }
  }
  const path: Array<Edge> = []
  for (let k = key(dst); k !== key(src); ) {
    const e = prev.get(k)!
    path.unshift(e)
    k = key(e.from)
  }
  if (options.isOpWithdraw && !path.some((e) => e.opWithdraw)) return undefined
  return path
}
