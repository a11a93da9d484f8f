/**
 * The devnet's indexer API over real HTTP: every endpoint decodes against the project's Effect
 * Schemas and validates against the project's OpenAPI document; cursors walk every row once;
 * errors have the real statuses and plain-text bodies; the same seed gives the same bytes.
 */
import { Ajv } from "ajv"
import addFormatsModule from "ajv-formats"
import type { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import * as S from "../../src/indexer/schemas.js"
import { bech32Of } from "../../src/datasets/addresses.js"
import { b64, decodeOrThrow, getText } from "../support/http.js"

// ajv-formats is CommonJS with a default export
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

const USDC = "ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2"
const LAKE = "evm/0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"

let devnet: Devnet
let base: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 42, blocks: 400 })
  base = devnet.indexerUrl
})
afterAll(() => devnet.stop())

const getJson = async (path: string): Promise<any> => {
  const r = await getText(base + path)
  if (r.status !== 200) throw new Error(`${path} → ${r.status} ${r.body}`)
  expect(r.contentType).toContain("application/json")
  return JSON.parse(r.body)
}

/** Pages through a list endpoint with next_key until the server says stop; returns all rows. */
const walk = async (path: string, arrayKey: string, extra = "", limit = 100) => {
  const rows: Array<any> = []
  const keys = new Set<string>()
  let key: string | null = null
  let pages = 0
  for (;;) {
    const sep = path.includes("?") ? "&" : "?"
    const q: string = `${sep}pagination.limit=${limit}${extra}${key ? `&pagination.key=${encodeURIComponent(key)}` : ""}`
    const page: any = await getJson(path + q)
    pages++
    rows.push(...page[arrayKey])
    key = page.pagination.next_key
    if (key === null) break
    expect(keys.has(key), `repeated key ${key}`).toBe(false)
    keys.add(key)
    if (pages > 10_000) throw new Error("runaway pagination")
  }
  return { rows, pages }
}

describe("every endpoint decodes and matches the OpenAPI document", () => {
  it("validates each endpoint's 200 body against Effect Schemas and the served OpenAPI schema", async () => {
    const c = devnet.chain
    const doc = await getJson("/swagger/doc.json")
    const ajv = new Ajv({ strict: false, allErrors: true })
    addFormats(ajv)
    ajv.addSchema({ components: doc.components }, "doc")
    const someTx = (await getJson("/indexer/tx/v1/txs?pagination.limit=1&pagination.reverse=false")).txs[0]
    const someEvm = (await getJson("/indexer/tx/v1/evm-txs?pagination.limit=1&pagination.offset=5")).txs[0]
    const someItx = (await getJson("/indexer/tx/v1/evm-internal-txs?pagination.limit=1")).internal_txs[0]
    const coll = (await getJson("/indexer/nft/v1/collections?pagination.limit=1&pagination.reverse=false")).collections[0]
    const token = (await getJson(`/indexer/nft/v1/tokens/by_collection/${coll.object_addr}?pagination.limit=1`)).tokens[0]
    const account = c.u.accounts[0].bech32
    const cases: Array<[string, string, Schema.Schema<any, any>]> = [
      ["/status", "/status", S.Status],
      ["/indexer/block/v1/avg_blocktime", "/indexer/block/v1/avg_blocktime", S.AvgBlockTime],
      ["/indexer/block/v1/blocks", "/indexer/block/v1/blocks?pagination.limit=5", S.BlocksResponse],
      ["/indexer/block/v1/blocks/{height}", "/indexer/block/v1/blocks/7", S.BlockResponse],
      ["/indexer/tx/v1/txs", "/indexer/tx/v1/txs?pagination.limit=20", S.TxsResponse],
      ["/indexer/tx/v1/txs/by_account/{account}", `/indexer/tx/v1/txs/by_account/${account}?pagination.limit=5`, S.TxsResponse],
      ["/indexer/tx/v1/txs/by_height/{height}", `/indexer/tx/v1/txs/by_height/${someTx.height}`, S.TxsResponse],
      ["/indexer/tx/v1/txs/{tx_hash}", `/indexer/tx/v1/txs/${someTx.txhash}`, S.TxResponse],
      ["/indexer/tx/v1/evm-txs", "/indexer/tx/v1/evm-txs?pagination.limit=20", S.EvmTxsResponse],
      [
        "/indexer/tx/v1/evm-txs/by_account/{account}",
        `/indexer/tx/v1/evm-txs/by_account/${someEvm.from}?pagination.limit=5`,
        S.EvmTxsResponse
      ],
      [
        "/indexer/tx/v1/evm-txs/by_height/{height}",
        `/indexer/tx/v1/evm-txs/by_height/${parseInt(someEvm.blockNumber, 16)}`,
        S.EvmTxsResponse
      ],
      ["/indexer/tx/v1/evm-txs/{tx_hash}", `/indexer/tx/v1/evm-txs/${someEvm.transactionHash}`, S.EvmTxResponse],
      ["/indexer/tx/v1/evm-internal-txs", "/indexer/tx/v1/evm-internal-txs?pagination.limit=20", S.EvmInternalTxsResponse],
      [
        "/indexer/tx/v1/evm-internal-txs/by_account/{account}",
        `/indexer/tx/v1/evm-internal-txs/by_account/${someItx.from}`,
        S.EvmInternalTxsResponse
      ],
      [
        "/indexer/tx/v1/evm-internal-txs/by_height/{height}",
        `/indexer/tx/v1/evm-internal-txs/by_height/${someItx.height}`,
        S.EvmInternalTxsResponse
      ],
      ["/indexer/tx/v1/evm-internal-txs/{tx_hash}", `/indexer/tx/v1/evm-internal-txs/${someItx.hash}`, S.EvmInternalTxsResponse],
      ["/indexer/nft/v1/collections", "/indexer/nft/v1/collections", S.CollectionsResponse],
      ["/indexer/nft/v1/collections/by_account/{account}", `/indexer/nft/v1/collections/by_account/${token.owner}`, S.CollectionsResponse],
      ["/indexer/nft/v1/collections/by_name/{name}", "/indexer/nft/v1/collections/by_name/frogs", S.CollectionsResponse],
      ["/indexer/nft/v1/collections/{collection_addr}", `/indexer/nft/v1/collections/${coll.object_addr}`, S.CollectionResponse],
      ["/indexer/nft/v1/tokens/by_account/{account}", `/indexer/nft/v1/tokens/by_account/${token.owner}`, S.NftsResponse],
      [
        "/indexer/nft/v1/tokens/by_collection/{collection_addr}",
        `/indexer/nft/v1/tokens/by_collection/${coll.object_addr}`,
        S.NftsResponse
      ],
      [
        "/indexer/nft/v1/txs/{collection_addr}/{token_id}",
        `/indexer/nft/v1/txs/${coll.object_addr}/${encodeURIComponent(token.nft.token_id)}`,
        S.TxsResponse
      ],
      ["/indexer/richlist/v1/{denom}", `/indexer/richlist/v1/${encodeURIComponent(LAKE)}`, S.TokenHoldersResponse]
    ]
    expect(Object.keys(doc.paths).sort()).toEqual(cases.map(([p]) => p).sort())
    for (const [docPath, url, schema] of cases) {
      const body = await getJson(url)
      decodeOrThrow(schema, body, url)
      const responseSchema = doc.paths[docPath].get.responses["200"].content["application/json"].schema
      const validate = ajv.compile({ $ref: `doc${responseSchema.$ref}` })
      expect(validate(body), `${url}: ${ajv.errorsText(validate.errors)}`).toBe(true)
      // lists are non-empty, so the test exercises row schemas too
      for (const v of Object.values(body)) if (Array.isArray(v)) expect(v.length, url).toBeGreaterThan(0)
    }
  })

  it("rejects a wire-type violation: a height sent as a number fails the Effect Schema with its path", async () => {
    const body = await getJson("/indexer/block/v1/blocks?pagination.limit=2")
    body.blocks[1].height = 12
    expect(() => decodeOrThrow(S.BlocksResponse, body, "blocks")).toThrow(/blocks: blocks\[1\]\.height: Expected string, actual 12/)
  })
})

describe("cursor pagination walks every row exactly once", () => {
  it("blocks, ascending and descending, end on an empty page", async () => {
    const tip = devnet.chain.tip
    for (const reverse of ["false", "true"]) {
      const { rows } = await walk("/indexer/block/v1/blocks", "blocks", `&pagination.reverse=${reverse}`, 37)
      const heights = rows.map((b) => Number(b.height))
      expect(heights.length).toBe(tip)
      expect(new Set(heights).size).toBe(tip)
      const sorted = [...heights].sort((a, b) => a - b)
      expect(heights).toEqual(reverse === "false" ? sorted : sorted.reverse())
    }
    // next_key on the last non-empty page; the page after it is empty with next_key null
    const last = await getJson(`/indexer/block/v1/blocks?pagination.reverse=false&pagination.key=${b64(`{"height":${tip - 1}}`)}`)
    expect(last.blocks.map((b: any) => b.height)).toEqual([String(tip)])
    expect(last.pagination.next_key).toBe(b64(`{"height":${tip}}`))
    const empty = await getJson(
      `/indexer/block/v1/blocks?pagination.reverse=false&pagination.key=${encodeURIComponent(last.pagination.next_key)}`
    )
    expect(empty).toEqual({ blocks: [], pagination: { previous_key: null, next_key: null, total: String(tip) } })
  })

  it("txs: every tx once, per-height counts equal the blocks' tx_count, total is MAX(sequence)", async () => {
    const blocks = (await walk("/indexer/block/v1/blocks", "blocks", "&pagination.reverse=false", 1000)).rows
    const { rows } = await walk("/indexer/tx/v1/txs", "txs", "&pagination.reverse=false", 250)
    const expected = blocks.reduce((s, b) => s + Number(b.tx_count), 0)
    expect(rows.length).toBe(expected)
    expect(new Set(rows.map((t) => t.txhash)).size).toBe(expected)
    const perHeight = new Map<string, number>()
    for (const t of rows) perHeight.set(t.height, (perHeight.get(t.height) ?? 0) + 1)
    for (const b of blocks) expect(perHeight.get(b.height) ?? 0, `height ${b.height}`).toBe(Number(b.tx_count))
    const first = await getJson("/indexer/tx/v1/txs?pagination.limit=1")
    expect(first.pagination.total).toBe(String(expected))
    // gas of a block is the sum of its txs' gas
    const h = blocks.find((b) => Number(b.tx_count) > 2)
    const ofH = rows.filter((t) => t.height === h.height)
    expect(ofH.reduce((s, t) => s + Number(t.gas_used), 0)).toBe(Number(h.gas_used))
  })

  it("EVM receipts and internal txs walk once; internal txs stop at internal_tx_height", async () => {
    const status = await getJson("/status")
    const evm = (await walk("/indexer/tx/v1/evm-txs", "txs", "&pagination.reverse=false", 300)).rows
    expect(new Set(evm.map((t) => t.transactionHash)).size).toBe(evm.length)
    expect((await getJson("/indexer/tx/v1/evm-txs?pagination.limit=1")).pagination.total).toBe(String(evm.length))
    const itx = (await walk("/indexer/tx/v1/evm-internal-txs", "internal_txs", "", 300)).rows
    expect(itx.every((t) => t.height <= status.internal_tx_height)).toBe(true)
    expect(status.internal_tx_height).toBeLessThanOrEqual(status.height)
    // DFS pre-order: index 0 is the top call (parent -1); every parent comes before its child
    const byTx = new Map<string, Array<any>>()
    for (const t of itx) byTx.set(t.hash, [...(byTx.get(t.hash) ?? []), t])
    for (const calls of byTx.values()) {
      const ordered = calls.sort((a, b) => a.index - b.index)
      expect(ordered[0]).toMatchObject({ index: 0, parent_index: -1, output: "0x" })
      for (const c of ordered.slice(1)) expect(c.parent_index).toBeLessThan(c.index)
    }
    // every traced tx is a successful EVM tx
    const ok = new Set(evm.filter((t) => t.status === "0x1").map((t) => t.transactionHash))
    for (const hash of byTx.keys()) expect(ok.has(hash)).toBe(true)
  })

  it("offset lists: collections, tokens and the rich list page by offset keys, next_key only on full pages", async () => {
    const colls = await walk("/indexer/nft/v1/collections", "collections", "", 3)
    expect(colls.rows.length).toBe(devnet.chain.u.collections.filter((c) => c.createdAt <= devnet.chain.tip).length)
    const first = await getJson("/indexer/nft/v1/collections?pagination.limit=3&pagination.offset=3")
    expect(first.pagination.previous_key).toBe(b64("0"))
    expect(first.pagination.next_key).toBe(b64("6"))
    for (const c of colls.rows) {
      const tokens = await walk(`/indexer/nft/v1/tokens/by_collection/${c.object_addr}`, "tokens", "", 7)
      expect(tokens.rows.length).toBe(c.collection.nfts.length)
      expect(new Set(tokens.rows.map((t) => t.nft.token_id)).size).toBe(tokens.rows.length)
    }
    const holders = await walk(`/indexer/richlist/v1/${encodeURIComponent(USDC)}`, "holders", "", 10)
    const amounts = holders.rows.map((h) => BigInt(h.amount))
    expect(amounts).toEqual([...amounts].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)))
    expect(new Set(holders.rows.map((h) => h.account)).size).toBe(holders.rows.length)
  })

  it("a cursor of the wrong type falls back to pagination.offset, as on the real server (Rollytics ApplyToBlock)", async () => {
    const firstPage = await getText(base + "/indexer/block/v1/blocks?pagination.limit=5")
    const wrong = await getText(base + `/indexer/block/v1/blocks?pagination.limit=5&pagination.key=${b64('{"sequence":50}')}`)
    expect(wrong.body).toBe(firstPage.body)
    const wrongWithOffset = await getJson(
      `/indexer/block/v1/blocks?pagination.limit=2&pagination.offset=7&pagination.reverse=false&pagination.key=${b64('{"sequence":50}')}`
    )
    expect(wrongWithOffset.blocks.map((b: any) => b.height)).toEqual(["8", "9"])
    const txsWrong = await getJson(
      `/indexer/tx/v1/txs?pagination.limit=2&pagination.offset=3&pagination.reverse=false&pagination.key=${b64('{"height":50}')}`
    )
    const txsOffset = await getJson(`/indexer/tx/v1/txs?pagination.limit=2&pagination.offset=3&pagination.reverse=false`)
    expect(txsWrong.txs.map((t: any) => t.txhash)).toEqual(txsOffset.txs.map((t: any) => t.txhash))
    // a legacy integer key works as an offset on a cursor endpoint
    const legacy = await getJson(`/indexer/block/v1/blocks?pagination.limit=2&pagination.key=${b64("10")}&pagination.reverse=false`)
    expect(legacy.blocks.map((b: any) => b.height)).toEqual(["11", "12"])
    // offset is honoured on the first page only
    const withOffset = await getJson(`/indexer/block/v1/blocks?pagination.limit=2&pagination.offset=10&pagination.reverse=false`)
    expect(withOffset.blocks.map((b: any) => b.height)).toEqual(["11", "12"])
    const cursorAndOffset = await getJson(
      `/indexer/block/v1/blocks?pagination.limit=2&pagination.offset=10&pagination.reverse=false&pagination.key=${b64('{"height":3}')}`
    )
    expect(cursorAndOffset.blocks.map((b: any) => b.height)).toEqual(["4", "5"])
  })

  it("a sequence cursor reads the rows after it (before it, reversed), and next_key names the page's last row, short page or full (Rollytics ApplySequence, ToResponseWithLastRecord)", async () => {
    const total = devnet.chain.txTotal()
    const hashes = (await walk("/indexer/tx/v1/txs", "txs", "&pagination.reverse=false", 1000)).rows.map((t) => t.txhash)
    const pageAfter = (s: number, extra = "") =>
      getJson(`/indexer/tx/v1/txs?pagination.limit=3&pagination.key=${b64(JSON.stringify({ sequence: s }))}${extra}`)
    const keyOf = (page: any) => JSON.parse(Buffer.from(page.pagination.next_key, "base64").toString())
    // ascending: sequence > 10, i.e. positions 10..12; the key names sequence 13; pagination.offset is ignored under a cursor
    const up = await pageAfter(10, "&pagination.reverse=false&pagination.offset=100")
    expect(up.txs.map((t: any) => t.txhash)).toEqual(hashes.slice(10, 13))
    expect([keyOf(up), up.pagination.previous_key]).toEqual([{ sequence: 13 }, null])
    // reversed (the default): sequence < 10, newest first
    const down = await pageAfter(10)
    expect(down.txs.map((t: any) => t.txhash)).toEqual(hashes.slice(6, 9).reverse())
    expect(keyOf(down)).toEqual({ sequence: 7 })
    // the last page is short and still names its last row; past the end, an empty page names none
    const last = await pageAfter(total - 1, "&pagination.reverse=false")
    expect([last.txs.length, keyOf(last)]).toEqual([1, { sequence: total }])
    const past = await pageAfter(total, "&pagination.reverse=false")
    expect([past.txs.length, past.pagination.next_key]).toEqual([0, null])
    // extra fields in a cursor are ignored
    const extra = await getJson(
      `/indexer/tx/v1/txs?pagination.limit=3&pagination.reverse=false&pagination.key=${b64('{"sequence":10,"nonce":7}')}`
    )
    expect(extra.txs).toEqual(up.txs)
  })

  it("a cursor whose value is no integer falls back to pagination.offset (safeGetInt64 fails); a JSON key with no cursor field pages by offset, with offset keys", async () => {
    const byOffset = await getJson(`/indexer/tx/v1/txs?pagination.limit=2&pagination.offset=3&pagination.reverse=false`)
    for (const key of ['{"sequence":"5"}', '{"sequence":5.5}', '{"sequence":null}']) {
      const r = await getJson(
        `/indexer/tx/v1/txs?pagination.limit=2&pagination.offset=3&pagination.reverse=false&pagination.key=${b64(key)}`
      )
      expect(
        r.txs.map((t: any) => t.txhash),
        key
      ).toEqual(byOffset.txs.map((t: any) => t.txhash))
      expect(r.pagination.next_key, key).toBe(byOffset.pagination.next_key)
    }
    const noField = await getJson(
      `/indexer/tx/v1/txs?pagination.limit=2&pagination.offset=4&pagination.reverse=false&pagination.key=${b64('{"page":1}')}`
    )
    expect(noField.pagination).toMatchObject({ next_key: b64("6"), previous_key: b64("2") })
  })

  it("rows skipped through offsets are counted (SQL OFFSET scans them), and with offsetRowUs charged as time; cursor pages skip none", async () => {
    const charged = await startDevnet({ seed: 42, blocks: 60, offsetRowUs: 2_000 })
    try {
      const get = async (query: string) => {
        const t0 = performance.now()
        const r = await getText(`${charged.indexerUrl}/indexer/tx/v1/txs?pagination.limit=5&pagination.reverse=false&${query}`)
        expect(r.status).toBe(200)
        return performance.now() - t0
      }
      const before = charged.stats()
      await get(`pagination.key=${b64('{"sequence":100}')}`)
      expect(charged.stats()).toEqual({ requests: before.requests + 1, offsetRowsSkipped: before.offsetRowsSkipped })
      // 100 rows skipped at 2 ms each: at least 200 ms
      expect(await get("pagination.offset=100")).toBeGreaterThanOrEqual(195)
      // an offset key, and an offset past the end (which scans the whole list, no more)
      await get(`pagination.key=${b64("7")}`)
      await get("pagination.offset=1000000000")
      expect(charged.stats().offsetRowsSkipped - before.offsetRowsSkipped).toBe(100 + 7 + charged.chain.txTotal())
    } finally {
      await charged.stop()
    }
  })
})

describe("filters and totals", () => {
  it("by_account with is_signer, msgs as repeated params, unknown msgs dropped", async () => {
    const all = (await walk("/indexer/tx/v1/txs", "txs", "&pagination.reverse=false", 1000)).rows
    const account = devnet.chain.u.accounts[1].bech32
    const mine = (await walk(`/indexer/tx/v1/txs/by_account/${account}`, "txs", "&pagination.reverse=false", 50)).rows
    const signed = (await walk(`/indexer/tx/v1/txs/by_account/${account}`, "txs", "&pagination.reverse=false&is_signer=true", 50)).rows
    expect(signed.length).toBeGreaterThan(0)
    expect(signed.length).toBeLessThan(mine.length)
    // the fee payer, from the events; a tx without events (null: failed in the ante handler) is a bank send, signed by its sender
    const payer = (t: any): string =>
      t.events === null
        ? t.tx.body.messages[0].from_address
        : t.events.flatMap((e: any) => (e.type === "tx" ? e.attributes : [])).find((a: any) => a.key === "fee_payer")?.value
    expect(all.some((t) => t.events === null)).toBe(true)
    const expectSigned = all.filter((t) => payer(t) === account)
    expect(signed.map((t) => t.txhash)).toEqual(expectSigned.map((t) => t.txhash))

    const types = (t: any) => t.tx.body.messages.map((m: any) => m["@type"])
    const sends = (await walk("/indexer/tx/v1/txs", "txs", "&msgs=cosmos.bank.v1beta1.MsgSend", 200)).rows
    expect(sends.length).toBe(all.filter((t) => types(t).includes("/cosmos.bank.v1beta1.MsgSend")).length)
    const both = (await walk("/indexer/tx/v1/txs", "txs", "&msgs=cosmos.bank.v1beta1.MsgSend&msgs=minievm.evm.v1.MsgCall", 200)).rows
    expect(both.length).toBe(
      all.filter((t) => types(t).some((x: string) => x === "/cosmos.bank.v1beta1.MsgSend" || x === "/minievm.evm.v1.MsgCall")).length
    )
    // a comma-separated value is one (unknown) type, so the filter is dropped entirely
    const comma = await getJson("/indexer/tx/v1/txs?pagination.limit=1&msgs=cosmos.bank.v1beta1.MsgSend,minievm.evm.v1.MsgCall")
    expect(comma.pagination.total).toBe(String(all.length))
  })

  it('totals: blocks give the tip, count_total=false gives "0", rich list counts holders', async () => {
    const tip = devnet.chain.tip
    expect((await getJson("/indexer/block/v1/blocks?pagination.limit=1&pagination.count_total=false")).pagination.total).toBe(String(tip))
    expect((await getJson("/indexer/tx/v1/txs?pagination.limit=1&pagination.count_total=false")).pagination.total).toBe("0")
    const holders = (await walk(`/indexer/richlist/v1/${encodeURIComponent(LAKE)}`, "holders", "", 1000)).rows
    expect((await getJson(`/indexer/richlist/v1/${encodeURIComponent(LAKE)}?pagination.limit=1`)).pagination.total).toBe(
      String(holders.length)
    )
  })

  it('a COUNT timeout makes filtered totals "-1" while unfiltered totals stay exact', async () => {
    const slow = await startDevnet({ seed: 42, blocks: 50, faults: "count-timeout" })
    try {
      const account = slow.chain.u.accounts[0].bech32
      const r = JSON.parse((await getText(`${slow.indexerUrl}/indexer/tx/v1/txs/by_account/${account}?pagination.limit=1`)).body)
      expect(r.pagination.total).toBe("-1")
      const all = JSON.parse((await getText(`${slow.indexerUrl}/indexer/tx/v1/txs?pagination.limit=1`)).body)
      expect(Number(all.pagination.total)).toBe(slow.chain.txTotal())
    } finally {
      await slow.stop()
    }
  })
})

describe("errors: real statuses and plain-text bodies", () => {
  it.each([
    ["/indexer/block/v1/blocks/abc", 400, "[INVALID_VALUE] invalid value for height: abc (must be a valid integer)"],
    ["/indexer/block/v1/blocks/0", 400, "[INVALID_VALUE] invalid value for height: 0 (must be a positive integer)"],
    ["/indexer/block/v1/blocks/999999999", 404, "[NOT_FOUND] block not found"],
    ["/indexer/tx/v1/txs/zz", 400, "invalid hash format"],
    [`/indexer/tx/v1/txs/${"AB".repeat(32)}`, 404, "[NOT_FOUND] transaction not found"],
    [`/indexer/tx/v1/evm-txs/0x${"ab".repeat(32)}`, 404, "tx not found"],
    [`/indexer/tx/v1/evm-internal-txs/0x${"ab".repeat(32)}`, 404, "transaction not found"],
    [`/indexer/nft/v1/collections/0x${"12".repeat(20)}`, 404, "nft collection not found"],
    ["/indexer/tx/v1/txs/by_account/xyz", 400, "[INVALID_VALUE] invalid value for account: xyz (invalid address format)"],
    ["/indexer/nft/v1/tokens/by_collection/xyz", 400, "encoding/hex: invalid byte: U+0078 'x'"],
    // addresses are read as Rollytics' AccAddressFromString does: hex after one "0x", lowercased, padded to 20 or 32 bytes
    ["/indexer/nft/v1/collections/0x0x12", 400, "encoding/hex: invalid byte: U+0078 'x'"],
    ["/indexer/nft/v1/collections/0XAB", 400, "encoding/hex: invalid byte: U+0078 'x'"],
    [
      `/indexer/nft/v1/collections/0x${"1".repeat(65)}`,
      400,
      `[INVALID_VALUE] invalid value for address: 0x${"1".repeat(65)} (invalid address format)`
    ],
    ["/indexer/nft/v1/txs/caf%C3%A9/1", 400, "encoding/hex: invalid byte: U+0025 '%'"],
    ["/indexer/nft/v1/tokens/by_account/0x12?collection_addr=zz", 400, "encoding/hex: invalid byte: U+007A 'z'"],
    [
      `/indexer/tx/v1/txs/by_account/0x${"1".repeat(65)}`,
      400,
      `[INVALID_VALUE] invalid value for account: 0x${"1".repeat(65)} (invalid address format)`
    ],
    // a valid bech32 address of another chain's prefix is not an account here: it is read as hex and fails
    [
      "/indexer/tx/v1/txs/by_account/cosmos1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du",
      400,
      "[INVALID_VALUE] invalid value for account: cosmos1qyqszqgpqyqszqgpqyqszqgpqyqszqgpjnp7du (invalid address format)"
    ],
    ["/indexer/tx/v1/txs?pagination.limit=1001", 400, "pagination.limit must be between 1 and 1000"],
    ["/indexer/tx/v1/txs?pagination.limit=0", 400, "pagination.limit must be between 1 and 1000"],
    ["/indexer/tx/v1/txs?pagination.offset=-1", 400, "pagination.offset cannot be negative"],
    ["/indexer/tx/v1/txs?pagination.key=%21%21%21", 400, "pagination.key must be a valid base64 encoded string"],
    ["/indexer/tx/v1/txs?pagination.key=YWJj", 400, "pagination.key must decode to a nonnegative integer"],
    ["/indexer/tx/v1/txs?pagination.key=e2JhZA%3D%3D", 400, "invalid pagination.key format"],
    [
      `/indexer/nft/v1/tokens/by_collection/0x${"12".repeat(20)}?order_by=x`,
      400,
      "invalid order_by value 'x', must be one of: token_id, height"
    ],
    ["/no/such/route", 404, "Cannot GET /no/such/route"]
  ])("%s → %i %s", async (path, status, body) => {
    const r = await getText(base + path)
    expect(r.status).toBe(status)
    expect(r.body).toBe(body)
    expect(r.contentType).toMatch(/^text\/plain/)
  })

  it("lenient inputs the real indexer accepts: a 0x-prefixed cosmos tx hash; order_by in any case, padded, or empty", async () => {
    const tx = (await getJson("/indexer/tx/v1/txs?pagination.limit=1&pagination.reverse=false")).txs[0]
    expect((await getJson(`/indexer/tx/v1/txs/0x${tx.txhash}`)).tx.txhash).toBe(tx.txhash)
    const collection = (await getJson("/indexer/nft/v1/collections?pagination.limit=1")).collections[0].object_addr
    const path = `/indexer/nft/v1/tokens/by_collection/${collection}?pagination.limit=5`
    const byId = await getJson(path + "&order_by=token_id")
    expect(await getJson(path + "&order_by=")).toEqual(byId)
    expect(await getJson(path + "&order_by=%20TOKEN_ID%20")).toEqual(byId)
    expect(await getJson(path + "&order_by=HEIGHT")).toEqual(await getJson(path + "&order_by=height"))
  })

  it("lenient addresses the real indexer accepts: short, odd-length, padded, upper-case and bech32 collection addresses; short hex accounts", async () => {
    const collections = (await getJson("/indexer/nft/v1/collections?pagination.limit=50")).collections
    const address: string = collections[0].object_addr
    const hex = address.slice(2)
    const bech32 = bech32Of("init", Buffer.from(hex, "hex"))
    for (const form of [hex, hex.toUpperCase(), "0x" + hex.toUpperCase(), "0x000" + hex, bech32])
      expect((await getJson(`/indexer/nft/v1/collections/${form}`)).collection.object_addr, form).toBe(address)
    // its leading zero digit dropped, an address is odd-length (and short): padded back to 20 bytes
    const zeroLed: string = collections.map((c: { object_addr: string }) => c.object_addr).find((a: string) => a.startsWith("0x0"))
    expect(zeroLed).toBeDefined()
    expect((await getJson(`/indexer/nft/v1/collections/0x${zeroLed.slice(2).replace(/^0+/, "")}`)).collection.object_addr).toBe(zeroLed)
    const tokens = await getJson(`/indexer/nft/v1/tokens/by_collection/${address}?pagination.limit=5`)
    expect(tokens.tokens.length).toBeGreaterThan(0)
    expect(await getJson(`/indexer/nft/v1/tokens/by_collection/${bech32}?pagination.limit=5`)).toEqual(tokens)
    const token = tokens.tokens[0]
    expect(await getJson(`/indexer/nft/v1/txs/${hex.toUpperCase()}/${token.token_id}?pagination.limit=5`)).toEqual(
      await getJson(`/indexer/nft/v1/txs/${address}/${token.token_id}?pagination.limit=5`)
    )
    const owned = await getJson(`/indexer/nft/v1/tokens/by_account/${token.owner}?collection_addr=${address}`)
    expect(owned.tokens.length).toBeGreaterThan(0)
    expect(await getJson(`/indexer/nft/v1/tokens/by_account/${token.owner}?collection_addr=${bech32}`)).toEqual(owned)
    // a short hex account is a valid (padded) address that owns nothing: an empty list, not a 400
    expect((await getJson("/indexer/tx/v1/txs/by_account/0x12")).txs).toEqual([])
  })

  it("a non-integer limit is ignored (default 100); height above the tip on by_height is an empty list", async () => {
    const r = await getJson("/indexer/tx/v1/txs?pagination.limit=abc")
    expect(r.txs.length).toBe(Math.min(100, devnet.chain.txTotal()))
    const empty = await getJson("/indexer/tx/v1/txs/by_height/999999")
    expect(empty.txs).toEqual([])
  })
})

describe("determinism and hostile data", () => {
  it("the same seed gives byte-identical responses; another seed does not", async () => {
    const twin = await startDevnet({ seed: 42, blocks: 400 })
    const other = await startDevnet({ seed: 43, blocks: 400 })
    try {
      const paths = [
        "/indexer/block/v1/blocks?pagination.limit=50",
        "/indexer/tx/v1/txs?pagination.limit=50&pagination.offset=7",
        "/indexer/tx/v1/evm-txs?pagination.limit=20",
        "/indexer/tx/v1/evm-internal-txs?pagination.limit=20",
        "/indexer/nft/v1/collections",
        `/indexer/richlist/v1/uinit?pagination.limit=50`
      ]
      for (const p of paths) {
        const [a, b, c] = await Promise.all([getText(base + p), getText(twin.indexerUrl + p), getText(other.indexerUrl + p)])
        expect(b.body, p).toBe(a.body)
        expect(c.body, p).not.toBe(a.body)
      }
    } finally {
      await Promise.all([twin.stop(), other.stop()])
    }
  })

  it("serves hostile names and amounts: traversal and HTML collection names (Go-escaped), amounts beyond 2^64", async () => {
    const raw = await getText(base + "/indexer/nft/v1/collections?pagination.limit=100")
    expect(raw.body).toContain('"name":"../../etc"')
    expect(raw.body).toContain("\\u003cb\\u003eBold\\u003c/b\\u003e \\u0026 Co")
    expect(JSON.parse(raw.body).collections.some((c: any) => c.collection.name === "Café ☕ Club")).toBe(true)
    const holders = await getJson(`/indexer/richlist/v1/${encodeURIComponent(LAKE)}?pagination.limit=1`)
    expect(BigInt(holders.holders[0].amount)).toBeGreaterThan(2n ** 64n)
    // the denom is matched case-insensitively after %2F decoding, as the real server lower-cases it
    const lower = await getJson(`/indexer/richlist/v1/${encodeURIComponent(LAKE.toLowerCase())}?pagination.limit=1`)
    expect(lower).toEqual(holders)
    expect((await getText(base + "/indexer/richlist/v1/nosuchdenom")).status).toBe(400)
  })
})

describe("other VMs and a growing chain", () => {
  it("on a Move chain, EVM routes answer 404; the rich list is served with bech32 accounts (as the real indexer since 2026-02), or not at all on an evm-only devnet", async () => {
    const move = await startDevnet({ seed: 5, blocks: 60, vm: "move" })
    const older = await startDevnet({ seed: 5, blocks: 60, vm: "move", richList: "evm-only" })
    try {
      for (const p of ["/indexer/tx/v1/evm-txs", "/indexer/tx/v1/evm-internal-txs", "/indexer/tx/v1/evm-txs/by_height/3"]) {
        const r = await getText(move.indexerUrl + p)
        expect([r.status, r.body]).toEqual([404, "evm routes are not available on this chain"])
      }
      const rich = await getText(move.indexerUrl + "/indexer/richlist/v1/uinit?pagination.limit=5")
      expect(rich.status).toBe(200)
      const holders = JSON.parse(rich.body).holders as Array<{ account: string; amount: string }>
      expect(holders.length).toBeGreaterThan(0)
      for (const h of holders) expect(h.account).toMatch(/^init1[02-9ac-hj-np-z]{38}$/)
      // no contract lookup off EVM: an unknown denom has no holders
      expect(JSON.parse((await getText(move.indexerUrl + "/indexer/richlist/v1/nosuchdenom")).body).holders).toEqual([])
      const status = JSON.parse((await getText(move.indexerUrl + "/status")).body)
      expect(status.internal_tx_height).toBeUndefined()
      expect(status.rich_list_height).toBeGreaterThan(0)
      // the tx-account cleanup's fields, on by default on the real indexer
      expect(status).toMatchObject({ tx_account_cleanup_sequence: move.chain.txTotal() })
      expect(Object.keys(status)).toEqual(expect.arrayContaining(["tx_account_cleanup_deleted", "tx_account_cleanup_inserted"]))
      expect((await getText(older.indexerUrl + "/indexer/richlist/v1/uinit")).status).toBe(404)
      expect(JSON.parse((await getText(older.indexerUrl + "/status")).body).rich_list_height).toBeUndefined()
      const txs = JSON.parse((await getText(move.indexerUrl + "/indexer/tx/v1/txs?pagination.limit=200")).body).txs
      const kinds = new Set(txs.flatMap((t: any) => t.tx.body.messages.map((m: any) => m["@type"])))
      expect(kinds.has("/initia.move.v1.MsgExecute")).toBe(true)
      expect(kinds.has("/minievm.evm.v1.MsgCall")).toBe(false)
    } finally {
      await move.stop()
      await older.stop()
    }
  })

  it("with a block time, the chain grows while it serves and watermarks lag the tip", async () => {
    const growing = await startDevnet({ seed: 9, blocks: 20, blockTimeMs: 40 })
    const fresh = async (path: string): Promise<any> =>
      (await fetch(growing.indexerUrl + path, { headers: { "cache-control": "no-cache" } })).json()
    try {
      const s1 = await fresh("/status")
      await new Promise((r) => setTimeout(r, 250))
      const s2 = await fresh("/status")
      expect(s2.height).toBeGreaterThan(s1.height)
      expect(s2.rich_list_height).toBe(s2.height - 5)
      const blocks = await fresh("/indexer/block/v1/blocks?pagination.limit=1")
      expect(Number(blocks.blocks[0].height)).toBeGreaterThanOrEqual(s2.height)
    } finally {
      await growing.stop()
    }
  })

  it("keeps its answers as the real indexer's cache does: by method, path and raw query, a second for /status and lists, ten for one object; no-cache asks afresh, no-store passes by; errors are not kept", async () => {
    const growing = await startDevnet({ seed: 9, blocks: 20, blockTimeMs: 40 })
    const get = async (path: string, cacheControl?: string) => {
      const r = await fetch(growing.indexerUrl + path, cacheControl ? { headers: { "cache-control": cacheControl } } : {})
      return { status: r.status, cache: r.headers.get("x-cache"), body: await r.text() }
    }
    try {
      const first = await get("/status")
      await new Promise((r) => setTimeout(r, 200))
      const again = await get("/status")
      expect([first.cache, again.cache, again.body]).toEqual(["miss", "hit", first.body])
      const afresh = await get("/status", "no-cache")
      expect(afresh.cache).toBe("miss")
      expect(JSON.parse(afresh.body).height).toBeGreaterThan(JSON.parse(first.body).height)
      // the fresh answer is kept; no-store neither reads nor keeps
      expect((await get("/status")).body).toBe(afresh.body)
      expect((await get("/status", "no-store")).cache).toBeNull()
      // another raw query is another entry, even with the same parameters
      const list = "/indexer/tx/v1/txs?pagination.limit=1&pagination.reverse=true"
      expect((await get(list)).cache).toBe("miss")
      expect((await get(list)).cache).toBe("hit")
      expect((await get("/indexer/tx/v1/txs?pagination.reverse=true&pagination.limit=1")).cache).toBe("miss")
      // a list is kept a second, one block ten
      await get("/indexer/block/v1/blocks/3")
      await new Promise((r) => setTimeout(r, 1_100))
      expect((await get(list)).cache).toBe("miss")
      expect((await get("/indexer/block/v1/blocks/3")).cache).toBe("hit")
      const missing = await get("/indexer/block/v1/blocks/999999")
      expect([missing.status, (await get("/indexer/block/v1/blocks/999999")).cache]).toEqual([404, "miss"])
    } finally {
      await growing.stop()
    }
  })
})
