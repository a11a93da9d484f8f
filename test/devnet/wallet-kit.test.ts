/**
 * The devnet against the Initia wallet kit's own requests (test/fixtures/interwovenkit-2.12.1.json,
 * recorded from its published code): each request built as the kit builds it (its query
 * parameters, its JSON bodies with undefined fields left out), each answer read as the kit reads
 * it, and its flows followed to their end: the activity feed, every page of NFTs, a collection's
 * creator, and a bridge from route to msgs (amino values) to track (retried) to status, polled
 * until the kit's own stopping rule (`status === "STATE_COMPLETED"`).
 */
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { ASSETS } from "../../src/devnet/router-graph.js"
import { addressFor } from "../support/router.js"

interface Recorded {
  readonly path: string
  readonly query?: Record<string, string>
  readonly json?: Array<string>
  readonly reads: Array<string>
}
const fixture = JSON.parse(readFileSync(new URL("../fixtures/interwovenkit-2.12.1.json", import.meta.url), "utf8")) as {
  indexer: Array<Recorded>
  router: Array<Recorded>
}
const request = (list: "indexer" | "router", path: string): Recorded => {
  const r = fixture[list].find((f) => f.path === path)
  if (!r) throw new Error(`no fixture for ${path}`)
  return r
}

let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 31, blocks: 300 })
})
afterAll(async () => {
  await devnet.stop()
})

/** As ky does it: prefixUrl + path, searchParams, JSON body (undefined fields dropped by JSON.stringify). */
const get = async (base: string, path: string, query: Record<string, string> = {}) => {
  const url = new URL(`${base}/${path}`)
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v)
  const res = await fetch(url)
  return { status: res.status, json: (await res.json()) as any }
}
const post = async (base: string, path: string, json: Record<string, unknown>) => {
  const res = await fetch(`${base}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(json)
  })
  return { status: res.status, json: (await res.json()) as any }
}
/** The body fields a fixture lists (`name?` may be left out), with the values given. */
const bodyOf = (fields: ReadonlyArray<string>, values: Record<string, unknown>) => {
  const body: Record<string, unknown> = {}
  for (const f of fields) {
    const name = f.replace(/\?$/, "")
    if (!(name in values) && !f.endsWith("?")) throw new Error(`the kit always sends ${name}`)
    if (name in values) body[name] = values[name]
  }
  for (const k of Object.keys(values)) if (!fields.some((f) => f.replace(/\?$/, "") === k)) throw new Error(`the kit never sends ${k}`)
  return body
}

describe("the wallet kit's indexer requests", () => {
  it("activity feed: the newest 10 txs of an account, each with a time the kit can order by", async () => {
    const r = request("indexer", "indexer/tx/v1/txs/by_account/{address}")
    const account = devnet.chain.u.accounts[1].bech32
    const { status, json } = await get(devnet.indexerUrl, r.path.replace("{address}", account), r.query)
    expect(status).toBe(200)
    expect(json.txs.length).toBe(10)
    const times = json.txs.map((t: any) => new Date(t.timestamp).getTime())
    for (const t of times) expect(Number.isNaN(t)).toBe(false)
    // pagination.reverse=true: newest first, as the kit shows them
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a))
    for (const t of json.txs) {
      expect(typeof t.txhash).toBe("string")
      expect(Array.isArray(t.tx.body.messages)).toBe(true)
    }
  })

  it("NFTs: every page by next_key until null, each token with the fields the kit spreads into its card", async () => {
    const r = request("indexer", "indexer/nft/v1/tokens/by_account/{address}")
    const c = devnet.chain
    // an owner of several tokens
    const owners = new Map<number, number>()
    for (const col of c.u.collections)
      for (const t of col.createdAt <= c.tip ? c.liveTokensOf(col.index) : []) owners.set(t.owner, (owners.get(t.owner) ?? 0) + 1)
    const [owner, count] = [...owners.entries()].sort((a, b) => b[1] - a[1])[0]
    const account = c.accountOf(owner).bech32
    // di(): the first page without a key, then pagination.key = the last page's next_key
    const tokens: Array<any> = []
    let key: string | null = null
    for (let pages = 0; pages < 1000; pages++) {
      const { status, json } = await get(devnet.indexerUrl, r.path.replace("{address}", account), key ? { "pagination.key": key } : {})
      expect(status).toBe(200)
      tokens.push(...(json.tokens ?? []))
      key = json.pagination.next_key
      if (!key) break
    }
    expect(tokens.length).toBe(count)
    for (const t of tokens) {
      expect(typeof t.nft.token_id).toBe("string")
      expect(typeof t.nft.uri).toBe("string")
      expect(typeof t.collection_addr).toBe("string")
    }
  })

  it("a collection's creator", async () => {
    const r = request("indexer", "indexer/nft/v1/collections/{collection}")
    const col = devnet.chain.u.collections.find((x) => x.createdAt <= devnet.chain.tip)!
    const { status, json } = await get(devnet.indexerUrl, r.path.replace("{collection}", col.address))
    expect(status).toBe(200)
    expect(json.collection.collection.creator).toBe(col.creator.bech32)
  })
})

describe("the wallet kit's bridge", () => {
  it("route → msgs (amino values) → track (retried) → status, polled until status is STATE_COMPLETED", async () => {
    const routeFixture = request("router", "v2/fungible/route")
    const [src, dst] = [ASSETS.nobleUsdc, ASSETS.l2Usdc]
    // is_op_withdraw: undefined (not an OP withdrawal): JSON.stringify leaves it out
    const route = await post(
      devnet.routerUrl,
      routeFixture.path,
      bodyOf(routeFixture.json!, {
        amount_in: "2500000",
        source_asset_chain_id: src.chainId,
        source_asset_denom: src.denom,
        dest_asset_chain_id: dst.chainId,
        dest_asset_denom: dst.denom,
        is_op_withdraw: undefined
      })
    )
    expect(route.status).toBe(200)
    expect(typeof route.json.amount_out).toBe("string")
    expect(route.json.operations.length).toBeGreaterThan(0)
    expect(typeof route.json.estimated_route_duration_seconds).toBe("number")
    expect(route.json.dest_asset_denom).toBe(dst.denom)

    const msgsFixture = request("router", "v2/fungible/msgs")
    const msgs = await post(
      devnet.routerUrl,
      msgsFixture.path,
      bodyOf(msgsFixture.json!, {
        address_list: route.json.required_chain_addresses.map(addressFor),
        amount_in: route.json.amount_in,
        amount_out: route.json.amount_out,
        source_asset_chain_id: route.json.source_asset_chain_id,
        source_asset_denom: route.json.source_asset_denom,
        dest_asset_chain_id: route.json.dest_asset_chain_id,
        dest_asset_denom: route.json.dest_asset_denom,
        slippage_tolerance_percent: "1",
        operations: route.json.operations,
        signed_op_hook: undefined
      })
    )
    expect(msgs.status).toBe(200)
    expect(msgs.json.txs.length).toBeGreaterThan(0)
    const tx = msgs.json.txs[0]
    expect("cosmos_tx" in tx).toBe(true)
    for (const m of tx.cosmos_tx.msgs) {
      expect(typeof m.msg_type_url).toBe("string")
      // fromAmino({ type, value: JSON.parse(msg) }): the value itself, not a {type, value} wrapper
      const value = JSON.parse(m.msg)
      expect(value).not.toHaveProperty("type")
      expect(value).not.toHaveProperty("value")
      expect(Object.keys(value).length).toBeGreaterThan(2)
    }

    // the wallet broadcasts (the devnet's stand-in for the chain), then the kit tracks it
    const sent = await post(devnet.routerUrl, "devnet/broadcast", { chain_id: src.chainId, tx, outcome: "success" })
    expect(sent.status).toBe(200)
    const trackFixture = request("router", "v2/tx/track")
    let tracked: { status: number; json: any } | undefined
    for (let attempt = 0; attempt <= 30; attempt++) {
      tracked = await post(
        devnet.routerUrl,
        trackFixture.path,
        bodyOf(trackFixture.json!, { tx_hash: sent.json.tx_hash, chain_id: src.chainId })
      )
      if (tracked.status === 200) break
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(tracked!.status).toBe(200)
    expect(tracked!.json.tx_hash).toBe(sent.json.tx_hash)

    // gh(): polled while status is not STATE_COMPLETED (a 404 "tx not found" first is retried by react-query)
    const statusFixture = request("router", "v2/tx/status")
    let last: any
    for (let polls = 0; polls < 400; polls++) {
      const s = await get(devnet.routerUrl, statusFixture.path, { tx_hash: sent.json.tx_hash, chain_id: src.chainId })
      if (s.status === 200) {
        last = s.json
        if (last.status === "STATE_COMPLETED") break
      }
      await new Promise((r) => setTimeout(r, 25))
    }
    expect(last?.status).toBe("STATE_COMPLETED")
    expect(last.state).toBe("STATE_COMPLETED_SUCCESS")
  })
})
