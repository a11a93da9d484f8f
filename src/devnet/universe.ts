/**
 * The fixed cast of the devnet chain: accounts, denoms, validators, contracts and NFT collections.
 * All derived from the seed; small enough to hold in memory at any chain length.
 */
import { bech32Encode, hexToBytes } from "./encoding.js"
import { Rng, sha256Hex } from "./rng.js"

export type Vm = "evm" | "move" | "wasm"

export interface Account {
  readonly index: number
  /** 20 address bytes as lowercase hex, no 0x. */
  readonly hex: string
  readonly bech32: string
  /** How the rich list and EVM data print it: 0x + lowercase hex. */
  readonly evm: string
}

export interface DenomInfo {
  readonly denom: string
  /** Genesis balances are drawn around this many base units. */
  readonly scale: bigint
  /** Share of accounts that hold it at genesis. */
  readonly holderShare: number
}

export interface CollectionInfo {
  readonly index: number
  readonly address: string
  readonly name: string
  readonly originName: string
  readonly creator: Account
  readonly createdAt: number
  /** Token ids are `${prefix}${n}`; some collections use bare numbers so text order differs from numeric. */
  readonly tokenPrefix: string
  readonly uriBase: string
}

export const ACCOUNT_COUNT = 48
export const RICH_LIST_LAG = 5
/** The unfiltered collections list's total is Postgres' reltuples: the count as of the last ANALYZE, this many blocks ago. */
export const COLLECTIONS_ANALYZE_LAG = 50
export const INTERNAL_TX_LAG = 3

/**
 * Denoms seen in fees and held in the rich list. Hostile on purpose: an IBC hash denom with a
 * slash and uppercase hex, an EVM denom with mixed case, amounts beyond 2^64 for 18 decimals.
 */
export const DENOMS: ReadonlyArray<DenomInfo> = [
  { denom: "uinit", scale: 10n ** 15n, holderShare: 1 },
  {
    denom: "ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2",
    scale: 10n ** 14n,
    holderShare: 0.6
  },
  { denom: "evm/0xAbCdEf0123456789aBcDeF0123456789AbCdEf01", scale: 10n ** 24n, holderShare: 0.4 }
]

/** Collection names, hostile on purpose: path traversal, HTML, unicode, slashes. */
const COLLECTION_NAMES: ReadonlyArray<readonly [string, string]> = [
  ["Lake Frogs", ""],
  ["../../etc", ""],
  ["Café ☕ Club", ""],
  ["日本の風景", ""],
  ["<b>Bold</b> & Co", ""],
  ["Bridged Punks", "L1 Punks"],
  ["A/B Tests", ""],
  ["Lake Frogs II", ""]
]

export const makeAccount = (seed: number, label: string, index: number): Account => {
  const hex = sha256Hex(seed, label, index).slice(0, 40)
  return { index, hex, bech32: bech32Encode("init", hexToBytes(hex)), evm: "0x" + hex }
}

export interface Universe {
  readonly seed: number
  readonly vm: Vm
  readonly chainId: string
  readonly accounts: ReadonlyArray<Account>
  /** DENOMS, the first renamed where the chain's fee denom is another (EVM rollups pay fees in their own token) */
  readonly denoms: ReadonlyArray<DenomInfo>
  readonly proposers: ReadonlyArray<{ moniker: string; operator_address: string }>
  /** Generic EVM contracts called by evm_call txs. */
  readonly contracts: ReadonlyArray<string>
  readonly collections: ReadonlyArray<CollectionInfo>
  readonly genesisBalances: ReadonlyArray<ReadonlyArray<bigint>>
  readonly accountByHex: ReadonlyMap<string, Account>
}

export const makeUniverse = (seed: number, vm: Vm, feeDenom?: string): Universe => {
  const denoms = feeDenom === undefined ? DENOMS : [{ ...DENOMS[0], denom: feeDenom }, ...DENOMS.slice(1)]
  const accounts = Array.from({ length: ACCOUNT_COUNT }, (_, i) => makeAccount(seed, "acct", i))
  const proposers = [0, 1].map((i) => ({
    moniker: i === 0 ? "lake-operator" : "lake-operator-backup",
    operator_address: bech32Encode("initvaloper", hexToBytes(sha256Hex(seed, "val", i).slice(0, 40)))
  }))
  const contracts = Array.from({ length: 6 }, (_, i) => "0x" + sha256Hex(seed, "contract", i).slice(0, 40))
  const rng = new Rng(seed, "collections")
  const collections = COLLECTION_NAMES.map(
    ([name, originName], index): CollectionInfo => ({
      index,
      address: "0x" + sha256Hex(seed, "collection", index).slice(0, 40),
      name,
      originName,
      creator: accounts[rng.int(0, 7)],
      createdAt: index === 0 ? 1 : 1 + index * rng.int(5, 40),
      tokenPrefix: index % 3 === 1 ? "token-" : "",
      uriBase: `https://nft.devnet.invalid/${index}/`
    })
  )
  const genesisBalances = denoms.map((d, di) => {
    const r = new Rng(seed, "genesis", di)
    return accounts.map((_, ai) => {
      if (ai > 0 && !r.chance(d.holderShare)) return 0n
      // Skewed: the first accounts are whales, so concentration metrics have something to show.
      const weight = BigInt(Math.floor(1_000_000 / (1 + ai * ai * 0.3))) + BigInt(r.int(0, 999))
      return (d.scale * weight) / 1000n + BigInt(r.int(1, 1_000_000))
    })
  })
  return {
    seed,
    vm,
    chainId: vm === "evm" ? "lake-evm-1" : vm === "move" ? "lake-move-1" : "lake-wasm-1",
    accounts,
    denoms,
    proposers,
    contracts,
    collections,
    genesisBalances,
    accountByHex: new Map(accounts.map((a) => [a.hex, a]))
  }
}
