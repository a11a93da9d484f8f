/**
 * The devnet's router API over real HTTP: route shapes decode against the project's schemas and
 * cover every operation kind; price impact grows with amount; errors are JSON {code, message,
 * details}; the three flow rules are enforced; a broadcast tx is tracked once and completes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { ASSETS } from "../../src/devnet/router-graph.js"
import * as R from "../../src/router/schemas.js"
import { decodeOrThrow, getText, postJson } from "../support/http.js"
import { addressFor, routeRequest as routeReq, type AssetRef as A } from "../support/router.js"

let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 3, blocks: 20, transferTimeScale: 0.002 })
})
afterAll(() => devnet.stop())

const route = (body: unknown) => postJson(devnet.routerUrl + "/v2/fungible/route", body)

/**
 * The amino JSON value of each message type, as wallets amino-decode it (cosmjs' AminoMsgTransfer,
 * initia.js' OPinit messages, wasmd's and minievm's amino types): field names and JSON types,
 * written here independently of the devnet.
 */
const AMINO_FIELDS: Record<string, Record<string, "string" | "object" | "array">> = {
  "/ibc.applications.transfer.v1.MsgTransfer": {
    source_port: "string",
    source_channel: "string",
    token: "object",
    sender: "string",
    receiver: "string",
    timeout_height: "object",
    timeout_timestamp: "string",
    memo: "string"
  },
  "/opinit.ophost.v1.MsgInitiateTokenDeposit": { sender: "string", bridge_id: "string", to: "string", amount: "object", data: "string" },
  "/opinit.opchild.v1.MsgInitiateTokenWithdrawal": { sender: "string", to: "string", amount: "object" },
  "/cosmwasm.wasm.v1.MsgExecuteContract": { sender: "string", contract: "string", msg: "object", funds: "array" },
  "/minievm.evm.v1.MsgCall": { sender: "string", contract_addr: "string", input: "string", value: "string", access_list: "array" }
}
const expectAminoValue = (typeUrl: string, text: string) => {
  const fields = AMINO_FIELDS[typeUrl]
  expect(fields, `a known message type: ${typeUrl}`).toBeDefined()
  const value = JSON.parse(text) as Record<string, unknown>
  expect(Object.keys(value).sort(), typeUrl).toEqual(Object.keys(fields).sort())
  for (const [k, t] of Object.entries(fields))
    expect(t === "array" ? Array.isArray(value[k]) : typeof value[k] === t && !Array.isArray(value[k]), `${typeUrl} ${k}`).toBe(true)
  for (const coin of [value.token, value.amount, ...((value.funds as Array<unknown> | undefined) ?? [])].filter((c) => c !== undefined))
    expect(coin).toEqual({ denom: expect.any(String), amount: expect.stringMatching(/^\d+$/) })
}

describe("route", () => {
  it("decodes every route shape and covers every known operation kind, cctp_transfer_v2 included", async () => {
    const S = ASSETS
    const pairs: Array<[A, A, Record<string, boolean>?]> = [
      [S.l1Init, S.l1Init],
      [S.l1Init, S.l2Init],
      [S.l2Init, S.l1Init, { go_fast: false }],
      [S.l2Init, S.l1Init],
      [S.l2Init, S.osmoInit, { go_fast: false }],
      [S.nobleUsdc, S.l2Usdc],
      [S.nobleUsdc, S.arbUsdc],
      [S.nobleUsdc, S.avaxUsdc],
      [S.ethWeth, S.l1Init],
      [S.baseLake, S.l2Init],
      [S.atom, S.ethAtom],
      [S.baseUsdc, S.l2Usdc],
      [S.l1Init, S.osmo]
    ]
    const kinds = new Set<string>()
    for (const [src, dst, extra] of pairs) {
      const r = await route(routeReq(src, dst, "1000000", extra))
      expect(r.status, r.body).toBe(200)
      const decoded = decodeOrThrow(R.RouteResponse, r.json, `${src.chainId}/${src.denom} → ${dst.chainId}/${dst.denom}`)
      expect(decoded.operations.length).toBeGreaterThan(0)
      expect(decoded.required_chain_addresses[0]).toBe(src.chainId)
      expect(decoded.required_chain_addresses.at(-1)).toBe(dst.chainId)
      for (const op of decoded.operations) {
        const keys = Object.keys(op).filter((k) => !["tx_index", "amount_in", "amount_out"].includes(k))
        expect(keys.length, JSON.stringify(op)).toBe(1)
        kinds.add(R.operationKind(op))
      }
      // the last operation's output is the route's output
      expect(decoded.operations.at(-1)!.amount_out).toBe(decoded.amount_out)
    }
    expect([...kinds].sort()).toEqual([...R.OPERATION_KINDS].sort())
    expect(kinds.has("cctp_transfer_v2")).toBe(true)
  })

  it("a CCTP V2 route carries @skip-go/client's CCTPTransferV2 fields (Circle's domain, finality threshold, max fee)", async () => {
    const r = decodeOrThrow(R.RouteResponse, (await route(routeReq(ASSETS.nobleUsdc, ASSETS.avaxUsdc, "5000000"))).json, "cctp v2")
    expect(r.operations.map(R.operationKind)).toEqual(["cctp_transfer_v2"])
    // Avalanche is Circle's domain 1; 1000 is V2's fast-transfer finality
    expect(r.operations[0].cctp_transfer_v2).toMatchObject({
      from_chain_id: "noble-1",
      to_chain_id: "43114",
      bridge_id: "CCTP_V2",
      destination_domain: 1,
      finality_threshold: 1000,
      max_fee: r.estimated_fees![0].amount
    })
  })

  it("the OPinit withdrawal: 7-day estimate with a notice; go_fast picks the fast bridge; is_op_withdraw forces OPinit", async () => {
    const slow = decodeOrThrow(
      R.RouteResponse,
      (await route(routeReq(ASSETS.l2Init, ASSETS.l1Init, "5000000", { is_op_withdraw: true }))).json,
      "withdraw"
    )
    expect(R.operationKind(slow.operations[0])).toBe("op_init_transfer")
    expect(slow.estimated_route_duration_seconds).toBe(604_800)
    expect(slow.extra_warnings?.[0]).toMatch(/7 days/)
    expect(slow.required_op_hook).toBe(false)
    const fast = decodeOrThrow(
      R.RouteResponse,
      (await route(routeReq(ASSETS.l2Init, ASSETS.l1Init, "5000000", { go_fast: true }))).json,
      "fast"
    )
    expect(R.operationKind(fast.operations[0])).toBe("go_fast_transfer")
    // SMART_RELAY is the one fee type the real API sends; tx_index is the fee's operation's tx
    expect(fast.estimated_fees?.[0]).toMatchObject({
      fee_type: "SMART_RELAY",
      bridge_id: "GO_FAST",
      amount: "5000",
      tx_index: fast.operations[0].tx_index
    })
    const twoTxs = decodeOrThrow(R.RouteResponse, (await route(routeReq(ASSETS.nobleUsdc, ASSETS.arbUsdc, "5000000"))).json, "two txs")
    expect(twoTxs.txs_required).toBe(2)
    expect(twoTxs.estimated_fees?.some((f) => f.tx_index === 1)).toBe(true)
    for (const r of [slow, fast, twoTxs])
      for (const f of r.estimated_fees ?? []) expect(f.tx_index).toBe(r.operations[f.operation_index!].tx_index)
    const hooked = decodeOrThrow(
      R.RouteResponse,
      (await route(routeReq(ASSETS.l2Init, ASSETS.osmoInit, "5000000", { go_fast: false }))).json,
      "hooked"
    )
    expect(hooked.required_op_hook).toBe(true)
  })

  it("price impact grows with the amount, and a warning appears above 5%", async () => {
    const impacts: Array<number> = []
    for (const amount of ["1000000", "1000000000", "1000000000000", "10000000000000"]) {
      const r = decodeOrThrow(R.RouteResponse, (await route(routeReq(ASSETS.l1Init, ASSETS.l1Usdc, amount))).json, amount)
      expect(r.does_swap).toBe(true)
      const impact = Number(r.swap_price_impact_percent)
      impacts.push(impact)
      if (impact > 5) expect(r.warning?.type).toBe("BAD_PRICE_WARNING")
      else expect(r.warning ?? null).toBeNull()
    }
    expect(impacts).toEqual([...impacts].sort((a, b) => a - b))
    expect(impacts[0]).toBeLessThan(1)
    expect(impacts.at(-1)!).toBeGreaterThan(5)
  })

  it("unpriced assets arrive with empty USD strings, decoded as absent", async () => {
    const r = await route(routeReq(ASSETS.baseLake, ASSETS.l2Lake, "1000000000000000000"))
    expect(r.json.usd_amount_in).toBe("")
    const decoded = decodeOrThrow(R.RouteResponse, r.json, "lake")
    expect(decoded.usd_amount_in).toBeUndefined()
    expect(decoded.warning?.type).toBe("LOW_INFO_WARNING")
  })

  it("errors: JSON bodies with gRPC codes; unsafe routes refused when allow_unsafe is false; no route is a 200 without operations", async () => {
    const bad = await route(routeReq(ASSETS.l1Init, ASSETS.l1Usdc, "-5"))
    expect([bad.status, bad.json]).toEqual([400, { code: 3, message: "invalid amount_in", details: [] }])
    const missing = await route({ amount_in: "1" })
    expect(missing.status).toBe(400)
    expect(missing.json.message).toMatch(/source_asset_chain_id is required/)
    const unknownChain = await route(routeReq({ chainId: "nope-1", denom: "x" }, ASSETS.l1Init, "1"))
    expect([unknownChain.status, unknownChain.json.code]).toEqual([404, 5])
    const unsafe = await route(routeReq(ASSETS.l1Init, ASSETS.l1Usdc, "10000000000000", { allow_unsafe: false }))
    expect(unsafe.status).toBe(400)
    expect(decodeOrThrow(R.RouterErrorBody, unsafe.json, "unsafe").details?.[0].reason).toBe("BAD_PRICE_ERROR")
    const lowInfo = await route(routeReq(ASSETS.baseLake, ASSETS.l2Lake, "1", { allow_unsafe: false }))
    expect(lowInfo.json.details[0].reason).toBe("LOW_INFO_ERROR")
    // no route: Initia's HTTP 400 (code 3, no reason); the 200 quirk Skip clients meet is served for go_fast asks
    const none = await route(routeReq(ASSETS.isolated, ASSETS.l1Init, "1000"))
    expect([none.status, none.json]).toEqual([400, { code: 3, message: "no routes found", details: [] }])
    const quirk = await route(routeReq(ASSETS.isolated, ASSETS.l1Init, "1000", { go_fast: true }))
    expect([quirk.status, quirk.json]).toEqual([200, { message: "no routes found" }])
    const notJson = await postJson(devnet.routerUrl + "/v2/fungible/route", "nope")
    expect(notJson.status).toBe(400)
  })
})

describe("the bridging flow and its rules", () => {
  const msgsReq = (r: any, addresses: Array<string>, extra: Record<string, unknown> = {}) => ({
    source_asset_denom: r.source_asset_denom,
    source_asset_chain_id: r.source_asset_chain_id,
    dest_asset_denom: r.dest_asset_denom,
    dest_asset_chain_id: r.dest_asset_chain_id,
    amount_in: r.amount_in,
    amount_out: r.amount_out,
    operations: r.operations,
    address_list: addresses,
    slippage_tolerance_percent: "1",
    ...extra
  })

  it("rule 3: address_list must match required_chain_addresses", async () => {
    const r = (await route(routeReq(ASSETS.nobleUsdc, ASSETS.l2Usdc, "2000000"))).json
    const short = await postJson(devnet.routerUrl + "/v2/fungible/msgs", msgsReq(r, [addressFor("noble-1")]))
    expect(short.status).toBe(400)
    expect(short.json.message).toMatch(/address_list must have 3 addresses/)
    const wrongChain = await postJson(
      devnet.routerUrl + "/v2/fungible/msgs",
      msgsReq(
        r,
        r.required_chain_addresses.map(() => addressFor("1"))
      )
    )
    expect(wrongChain.status).toBe(400)
    const ok = await postJson(devnet.routerUrl + "/v2/fungible/msgs", msgsReq(r, r.required_chain_addresses.map(addressFor)))
    expect(ok.status, ok.body).toBe(200)
    const msgs = decodeOrThrow(R.MsgsResponse, ok.json, "msgs")
    expect(msgs.txs[0].cosmos_tx?.msgs[0].msg_type_url).toBe("/ibc.applications.transfer.v1.MsgTransfer")
    expect(BigInt(msgs.min_amount_out!)).toBeLessThan(BigInt(r.amount_out))
  })

  it("rule 1: a route with required_op_hook needs the signed hook before msgs", async () => {
    const r = (await route(routeReq(ASSETS.l2Init, ASSETS.osmoInit, "3000000", { go_fast: false }))).json
    expect(r.required_op_hook).toBe(true)
    const addresses = r.required_chain_addresses.map(addressFor)
    const without = await postJson(devnet.routerUrl + "/v2/fungible/msgs", msgsReq(r, addresses))
    expect(without.status).toBe(400)
    expect(without.json.message).toMatch(/signed_op_hook is required/)
    const hook = await postJson(devnet.routerUrl + "/op-hook", {
      source_address: addresses[0],
      source_asset_chain_id: r.source_asset_chain_id,
      source_asset_denom: r.source_asset_denom,
      dest_address: addresses.at(-1),
      dest_asset_chain_id: r.dest_asset_chain_id,
      dest_asset_denom: r.dest_asset_denom
    })
    expect(hook.status, hook.body).toBe(200)
    decodeOrThrow(R.OpHookResponse, hook.json, "op-hook")
    const signed = { signer: addresses[0], hook: Buffer.from("signed:" + hook.json.hook[0].msg).toString("base64") }
    const withHook = await postJson(devnet.routerUrl + "/v2/fungible/msgs", msgsReq(r, addresses, { signed_op_hook: signed }))
    expect(withHook.status, withHook.body).toBe(200)
    expect(withHook.json.txs[0].cosmos_tx.msgs[0].msg_type_url).toBe("/opinit.opchild.v1.MsgInitiateTokenWithdrawal")
    // the hook's message is the amino value the wallet signs
    expectAminoValue(hook.json.hook[0].msg_type_url, hook.json.hook[0].msg)
    const missingField = await postJson(devnet.routerUrl + "/op-hook", { source_address: addresses[0] })
    expect(missingField.status).toBe(400)
  })

  it("signable messages are amino JSON values with each type's amino field names (never {type, value}), for every message kind", async () => {
    const cases: Array<[A, A, Record<string, boolean>, string]> = [
      [ASSETS.l1Init, ASSETS.osmoInit, {}, "/ibc.applications.transfer.v1.MsgTransfer"],
      [ASSETS.l1Init, ASSETS.l2Init, {}, "/opinit.ophost.v1.MsgInitiateTokenDeposit"],
      [ASSETS.l2Init, ASSETS.l1Init, { is_op_withdraw: true }, "/opinit.opchild.v1.MsgInitiateTokenWithdrawal"],
      [ASSETS.l1Init, ASSETS.l1Usdc, {}, "/cosmwasm.wasm.v1.MsgExecuteContract"],
      [ASSETS.l2Init, ASSETS.l1Usdc, {}, "/minievm.evm.v1.MsgCall"]
    ]
    for (const [from, to, extra, typeUrl] of cases) {
      const r = (await route(routeReq(from, to, "1000000", extra))).json
      const res = await postJson(devnet.routerUrl + "/v2/fungible/msgs", msgsReq(r, r.required_chain_addresses.map(addressFor)))
      expect(res.status, res.body).toBe(200)
      const m = res.json.txs[0].cosmos_tx.msgs[0]
      expect(m.msg_type_url).toBe(typeUrl)
      expectAminoValue(m.msg_type_url, m.msg)
    }
  })

  it("track, then status: 'tx not found' until the tracking service indexed the tx, then the transfer to completion; a second track changes nothing", async () => {
    const r = (await route(routeReq(ASSETS.nobleUsdc, ASSETS.l2Usdc, "2000000"))).json
    const msgs = (await postJson(devnet.routerUrl + "/v2/fungible/msgs", msgsReq(r, r.required_chain_addresses.map(addressFor)))).json
    const sent = await postJson(devnet.routerUrl + "/devnet/broadcast", { chain_id: "noble-1", tx: msgs.txs[0], outcome: "success" })
    expect(sent.status, sent.body).toBe(200)
    const txHash = sent.json.tx_hash
    const before = await getText(`${devnet.routerUrl}/v2/tx/status?tx_hash=${txHash}&chain_id=noble-1`)
    expect(before.status).toBe(404)
    const track = await postJson(devnet.routerUrl + "/v2/tx/track", { tx_hash: txHash, chain_id: "noble-1" })
    expect(track.status).toBe(200)
    decodeOrThrow(R.TrackResponse, track.json, "track")
    // what the Skip SDK's retry_track sends when status keeps saying "tx not found": accepted
    const again = await postJson(devnet.routerUrl + "/v2/tx/track", { tx_hash: txHash, chain_id: "noble-1" })
    expect(again.status).toBe(200)
    const states: Array<string> = []
    let notFound = 0
    for (let i = 0; i < 200; i++) {
      const s = await getText(`${devnet.routerUrl}/v2/tx/status?tx_hash=${txHash}&chain_id=noble-1`)
      if (s.status === 404 && states.length === 0) {
        expect(JSON.parse(s.body)).toEqual({ code: 5, message: "tx not found", details: [] })
        notFound++
        await new Promise((res) => setTimeout(res, 25))
        continue
      }
      const status = decodeOrThrow(R.TxStatusResponse, JSON.parse(s.body), "status")
      if (states.at(-1) !== status.state) states.push(status.state)
      if (R.isFinalState(status.state)) {
        expect(status.transfer_sequence!.length).toBe(2)
        expect(Object.keys(status.transfer_sequence![0])).toEqual(["ibc_transfer"])
        expect(status.transfer_asset_release).toMatchObject({ chain_id: "lake-evm-1", released: true })
        break
      }
      await new Promise((res) => setTimeout(res, 25))
    }
    expect(notFound).toBeGreaterThan(0)
    expect(states[0]).toBe("STATE_SUBMITTED")
    expect(states).toContain("STATE_PENDING")
    expect(states.at(-1)).toBe("STATE_COMPLETED_SUCCESS")
  })

  it("transfers can end in error, abandonment or STATE_UNKNOWN; track refuses unknown txs and chains", async () => {
    const r = (await route(routeReq(ASSETS.l1Init, ASSETS.osmoInit, "1000"))).json
    const msgs = (await postJson(devnet.routerUrl + "/v2/fungible/msgs", msgsReq(r, r.required_chain_addresses.map(addressFor)))).json
    const ends = { error: "STATE_COMPLETED_ERROR", abandoned: "STATE_ABANDONED", unknown: "STATE_UNKNOWN" } as const
    for (const outcome of ["error", "abandoned", "unknown"] as const) {
      const sent = (await postJson(devnet.routerUrl + "/devnet/broadcast", { chain_id: "interwoven-1", tx: msgs.txs[0], outcome })).json
      await postJson(devnet.routerUrl + "/v2/tx/track", { tx_hash: sent.tx_hash, chain_id: "interwoven-1" })
      let last: Record<string, unknown> = { state: "" }
      const states: Array<string> = []
      for (let i = 0; i < 100 && states.at(-1) !== ends[outcome]; i++) {
        await new Promise((res) => setTimeout(res, 25))
        last = JSON.parse((await getText(`${devnet.routerUrl}/v2/tx/status?tx_hash=${sent.tx_hash}&chain_id=interwoven-1`)).body)
        if (typeof last.state === "string" && states.at(-1) !== last.state) states.push(last.state)
      }
      expect(states.at(-1)).toBe(ends[outcome])
      // the API's error-code docs: STATE_UNKNOWN is an error; nothing was released
      if (outcome === "unknown") expect(last).toMatchObject({ error: { type: "STATUS_ERROR_UNKNOWN" }, transfer_asset_release: null })
    }
    const unknown = await postJson(devnet.routerUrl + "/v2/tx/track", { tx_hash: "AB".repeat(32), chain_id: "interwoven-1" })
    expect([unknown.status, unknown.json.message]).toEqual([400, "tx is invalid on chain"])
    const badChain = await postJson(devnet.routerUrl + "/v2/tx/track", { tx_hash: "AB".repeat(32), chain_id: "nope" })
    expect([badChain.status, badChain.json]).toEqual([404, { code: 5, message: "chain ID not supported", details: [] }])
    const forged = await postJson(devnet.routerUrl + "/devnet/broadcast", { chain_id: "interwoven-1", tx: { cosmos_tx: {} } })
    expect(forged.status).toBe(400)
  })
})
