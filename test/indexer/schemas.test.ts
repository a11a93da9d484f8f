/**
 * The hot-path validator compiled from the Effect Schemas agrees with Effect's own decoding:
 * same verdict and same field path, on real devnet records and on corrupted copies of them.
 */
import { Either, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { compileValidator } from "../../src/schema/fastValidate.js"
import * as S from "../../src/indexer/schemas.js"
import { decodeWithPath } from "../../src/schema/decode.js"
import * as R from "../../src/router/schemas.js"

let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 31, blocks: 80 })
})
afterAll(() => devnet.stop())

const get = async (path: string) => (await (await fetch(devnet.indexerUrl + path)).json()) as Record<string, Array<unknown>>

/** Deterministic corruptions: each replaces one leaf with a value of the wrong type, or deletes it. */
const corruptions = (record: unknown): Array<unknown> => {
  const out: Array<unknown> = []
  const leaves: Array<Array<string | number>> = []
  const walk = (v: unknown, path: Array<string | number>) => {
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, [...path, i])
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, [...path, k])
    else leaves.push(path)
  }
  walk(record, [])
  for (const [n, path] of leaves.entries()) {
    if (n % 3 !== 0) continue
    const copy = structuredClone(record) as any
    let parent = copy
    for (const k of path.slice(0, -1)) parent = parent[k]
    const last = path[path.length - 1]
    const value = parent[last]
    if (n % 2 === 0) delete parent[last]
    else parent[last] = typeof value === "string" ? 7 : typeof value === "number" ? "7" : typeof value === "boolean" ? "true" : 0
    out.push(copy)
  }
  return out
}

/** A record of `key` from `path`, corrupted by `corrupt`: the field path and message both validators must give. */
type Refusal = [
  what: string,
  path: string,
  key: string,
  schema: Schema.Schema<any, any>,
  corrupt: (record: any) => void,
  field: string,
  message: string | undefined
]
const REFUSALS: Array<Refusal> = [
  [
    "a block height sent as a number",
    "/indexer/block/v1/blocks?pagination.limit=1",
    "blocks",
    S.Block,
    (r: any) => (r.height = 7),
    "height",
    "Expected string, actual 7"
  ],
  [
    "a block with -1 txs",
    "/indexer/block/v1/blocks?pagination.limit=1",
    "blocks",
    S.Block,
    (r: any) => (r.tx_count = "-1"),
    "tx_count",
    undefined
  ],
  [
    "a tx with negative gas used",
    "/indexer/tx/v1/txs?pagination.limit=1",
    "txs",
    S.Tx,
    (r: any) => (r.gas_used = "-5"),
    "gas_used",
    undefined
  ],
  [
    "an internal tx at a negative height",
    "/indexer/tx/v1/evm-internal-txs?pagination.limit=1",
    "internal_txs",
    S.EvmInternalTx,
    (r: any) => (r.height = -2),
    "height",
    undefined
  ],
  [
    "a block without its hash",
    "/indexer/block/v1/blocks?pagination.limit=1",
    "blocks",
    S.Block,
    (r: any) => delete r.hash,
    "hash",
    "is missing"
  ],
  [
    "a tx code sent as a string",
    "/indexer/tx/v1/txs?pagination.limit=1",
    "txs",
    S.Tx,
    (r: any) => (r.code = "0"),
    "code",
    'Expected number, actual "0"'
  ],
  [
    "an EVM receipt with a numeric log index",
    "/indexer/tx/v1/evm-txs?pagination.limit=20",
    "txs",
    S.EvmTx,
    (r: any) => (r.logs = [{ ...r.logs[0], logIndex: 3 }]),
    "logs[0].logIndex",
    "Expected string, actual 3"
  ],
  [
    "an internal tx height sent as a string",
    "/indexer/tx/v1/evm-internal-txs?pagination.limit=1",
    "internal_txs",
    S.EvmInternalTx,
    (r: any) => (r.height = "5"),
    "height",
    'Expected number, actual "5"'
  ],
  [
    "a holder amount that is not a number",
    "/indexer/richlist/v1/uinit",
    "holders",
    S.TokenHolder,
    (r: any) => (r.amount = "12x"),
    "amount",
    undefined
  ]
]

describe("compiled validator", () => {
  it.each([
    ["blocks", "/indexer/block/v1/blocks?pagination.limit=20", S.Block],
    ["txs", "/indexer/tx/v1/txs?pagination.limit=10", S.Tx],
    ["txs", "/indexer/tx/v1/evm-txs?pagination.limit=10", S.EvmTx],
    ["internal_txs", "/indexer/tx/v1/evm-internal-txs?pagination.limit=20", S.EvmInternalTx],
    ["collections", "/indexer/nft/v1/collections", S.NftCollection],
    ["holders", "/indexer/richlist/v1/uinit", S.TokenHolder]
  ] as const)("%s (%s) agrees with Schema decoding on valid and corrupted records", async (key, path, schema) => {
    const fast = compileValidator(schema as Schema.Schema<any, any>)
    const records = (await get(path))[key]
    expect(records.length).toBeGreaterThan(0)
    let checked = 0
    let rejected = 0
    for (const record of records) {
      expect(fast(record)).toBeUndefined()
      for (const bad of corruptions(record)) {
        const slow = decodeWithPath(schema as Schema.Schema<any, any>, bad)
        const quick = fast(bad)
        expect(quick === undefined, JSON.stringify(quick)).toBe(Either.isRight(slow))
        if (Either.isLeft(slow)) {
          expect(quick?.path).toBe(slow.left.path)
          rejected++
        }
        checked++
      }
    }
    expect(checked).toBeGreaterThan(10)
    // agreement alone would pass two validators that accept everything: most corruptions must be refused
    expect(rejected / checked).toBeGreaterThan(0.5)
  })

  it.each(REFUSALS)("refuses %s, naming the field", async (_, path, key, schema, corrupt, field, message) => {
    const record = (await get(path))[key].find((r: any) => key !== "txs" || !path.includes("evm") || r.logs.length > 0)
    expect(record).toBeDefined()
    const bad = structuredClone(record) as any
    corrupt(bad)
    const issue = compileValidator(schema as Schema.Schema<any, any>)(bad)
    expect(issue?.path).toBe(field)
    if (message) expect(issue?.message).toBe(message)
    const slow = decodeWithPath(schema as Schema.Schema<any, any>, bad)
    expect(Either.isLeft(slow) && slow.left.path).toBe(field)
  })

  it("an empty-string amount decodes as absent", () => {
    expect(Schema.decodeUnknownSync(S.TokenHolder)({ account: "0xab", amount: "" })).toEqual({ account: "0xab", amount: undefined })
    expect(Schema.decodeUnknownSync(S.Coin)({ denom: "uinit", amount: "12" })).toEqual({ denom: "uinit", amount: "12" })
    expect(() => Schema.decodeUnknownSync(S.Coin)({ denom: "uinit", amount: "12x" })).toThrow()
  })
})

describe("router schemas", () => {
  it("say in a word what a value that is not the object or list expected was (the whole type spelled out made a 550-character line)", () => {
    expect(decodeWithPath(R.RouteResponse, null)).toEqual(Either.left({ path: "", message: "expected an object, got null" }))
    expect(decodeWithPath(R.RouteResponse, [])).toEqual(Either.left({ path: "", message: "expected an object, got array" }))
    expect(decodeWithPath(R.AssetsResponse, { chain_to_assets_map: { "noble-1": { assets: null } } })).toEqual(
      Either.left({ path: "chain_to_assets_map.noble-1.assets", message: "expected a list, got null" })
    )
    // a short message stays as it was
    expect(decodeWithPath(R.ChainsResponse, { chains: [{ chain_id: 5 }] })).toEqual(
      Either.left({ path: "chains[0].chain_id", message: "Expected string, actual 5" })
    )
  })

  it("keep an operation kind this client does not know, and read empty USD strings as absent", async () => {
    const route = {
      amount_in: "10",
      amount_out: "9",
      source_asset_denom: "uinit",
      source_asset_chain_id: "interwoven-1",
      dest_asset_denom: "uinit",
      dest_asset_chain_id: "lake-evm-1",
      operations: [
        { lz_transfer: { from_chain_id: "interwoven-1", to_chain_id: "lake-evm-1" }, tx_index: 0, amount_in: "10", amount_out: "9" }
      ],
      chain_ids: ["interwoven-1", "lake-evm-1"],
      required_chain_addresses: ["interwoven-1", "lake-evm-1"],
      txs_required: 1,
      usd_amount_in: "",
      estimated_route_duration_seconds: null
    }
    const decoded = Schema.decodeUnknownSync(R.RouteResponse)(route)
    expect(R.operationKind(decoded.operations[0])).toBe("lz_transfer")
    expect((decoded.operations[0] as Record<string, unknown>).lz_transfer).toEqual({
      from_chain_id: "interwoven-1",
      to_chain_id: "lake-evm-1"
    })
    expect(decoded.usd_amount_in).toBeUndefined()
    // a known kind with a broken field still fails, naming the path
    const broken = { ...route, operations: [{ transfer: { port: "transfer" }, tx_index: 0, amount_in: "1", amount_out: "1" }] }
    const r = decodeWithPath(R.RouteResponse, broken)
    expect(Either.isLeft(r) && r.left.path).toBe("operations[0].transfer.from_chain_id")
  })
})
