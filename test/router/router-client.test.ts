/**
 * RouterClient against the devnet router over real HTTP: route shapes decode, router errors
 * become tagged errors (a 200 without operations is a NoRouteError), the three flow rules are
 * enforced by the client, and a whole bridge → broadcast (devnet) → track → status flow completes,
 * also through a faulty router.
 */
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { routerLayer } from "../../src/cli/layers.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { ASSETS } from "../../src/devnet/router-graph.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { RouterClient } from "../../src/router/RouterClient.js"
import { isFinalState, operationKind } from "../../src/router/schemas.js"
import { json, startProxy } from "../support/hostile.js"
import { addressFor as addressOf, routeRequest as req } from "../support/router.js"

const FAST = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 50, timeoutMs: 1500, maxRetries: 15 }
let devnet: Devnet
beforeAll(async () => {
  // status answers at once after track here: the client's calls are under test; the tracker's polling through "tx not found" is cli-track's
  devnet = await startDevnet({ seed: 29, blocks: 10, transferTimeScale: 0.002, trackIndexDelayMs: 0 })
})
afterAll(() => devnet.stop())

const run = <A, E>(program: Effect.Effect<A, E, RouterClient>, url = devnet.routerUrl) =>
  Effect.runPromise(program.pipe(Effect.provide(routerLayer(url, { concurrency: 8, rps: 0 }, FAST))))

describe("RouterClient", () => {
  it("decodes routes; no route, bad price, low info and bad requests are tagged errors", async () => {
    const out = await run(
      Effect.gen(function* () {
        const r = yield* RouterClient
        const ok = yield* r.route(req(ASSETS.nobleUsdc, ASSETS.arbUsdc, "5000000"))
        const none = yield* Effect.flip(r.route(req(ASSETS.isolated, ASSETS.l1Init, "1000")))
        const noneQuirk = yield* Effect.flip(r.route(req(ASSETS.isolated, ASSETS.l1Init, "1000", { go_fast: true })))
        const unsafe = yield* Effect.flip(r.route(req(ASSETS.l1Init, ASSETS.l1Usdc, "10000000000000", { allow_unsafe: false })))
        const lowInfo = yield* Effect.flip(r.route(req(ASSETS.baseLake, ASSETS.l2Lake, "1", { allow_unsafe: false })))
        const bad = yield* Effect.flip(r.route(req(ASSETS.l1Init, ASSETS.l1Usdc, "0")))
        return { ok, none, noneQuirk, unsafe, lowInfo, bad }
      })
    )
    expect(out.ok.operations.map(operationKind)).toEqual(["cctp_transfer", "stargate_transfer"])
    // Initia's answer (HTTP 400, code 3, no reason) and the 200 quirk Skip clients meet are both "no route"
    expect(out.none).toMatchObject({ _tag: "NoRouteError", status: 400, message: "no routes found" })
    expect(out.noneQuirk).toMatchObject({ _tag: "NoRouteError", status: 200, message: "no routes found" })
    expect(out.unsafe).toMatchObject({ _tag: "BadPriceError", reason: "BAD_PRICE_ERROR" })
    expect(out.lowInfo._tag).toBe("LowInfoError")
    expect(out.bad).toMatchObject({ _tag: "RouterHttpError", status: 400, code: 3, body: "invalid amount_in" })
  })

  it("refuses a route that is not an answer to the question asked, or whose amounts are not amounts (they were signed for, and stored as quotes)", async () => {
    // each ask's dest denom says how the proxy spoils the answer
    const spoil: Record<string, (route: Record<string, unknown>) => void> = {
      negative: (r) => (r.amount_out = `-${r.amount_out}`),
      fraction: (r) => (r.amount_out = `${r.amount_out}.75`),
      words: (r) => (r.amount_out = "lots"),
      otherAsset: (r) => (r.dest_asset_denom = "uevil"),
      otherChain: (r) => (r.dest_asset_chain_id = "evil-1"),
      otherSource: (r) => (r.source_asset_denom = "uother"),
      lessIn: (r) => (r.amount_in = "1"),
      opAmount: (r) => ((r.operations as Array<Record<string, unknown>>)[0].amount_out = "-5"),
      // the top-level fields as asked, the path another pair's
      otherPath: (r) => (r.chain_ids = ["osmosis-1", "cosmoshub-4"]),
      otherStart: (r) => ((r.operations as Array<Record<string, unknown>>)[0].amount_in = "1"),
      // counts past what the lake's INTEGER holds, or below 0 (one such quote failed the round at the write)
      hugeCount: (r) => (r.txs_required = 2 ** 40),
      negativeTime: (r) => (r.estimated_route_duration_seconds = -5),
      negativeTx: (r) => ((r.operations as Array<Record<string, unknown>>)[0].tx_index = -1)
    }
    let mode = ""
    const proxy = await startProxy(devnet.routerUrl, async (request, forward) => {
      const answer = await forward()
      if (!request.url.pathname.endsWith("/route") || !mode) return answer
      const route = JSON.parse(answer.body) as Record<string, unknown>
      spoil[mode](route)
      return json(route)
    })
    try {
      const seen: Record<string, unknown> = {}
      for (const m of Object.keys(spoil)) {
        mode = m
        const e = await run(
          Effect.flip(Effect.flatMap(RouterClient, (r) => r.route(req(ASSETS.nobleUsdc, ASSETS.arbUsdc, "5000000")))),
          proxy.url
        )
        seen[m] = { tag: e._tag, path: (e as { path?: string }).path }
      }
      expect(seen).toEqual({
        negative: { tag: "RouterDecodeError", path: "amount_out" },
        fraction: { tag: "RouterDecodeError", path: "amount_out" },
        words: { tag: "RouterDecodeError", path: "amount_out" },
        otherAsset: { tag: "RouterDecodeError", path: "dest_asset_denom" },
        otherChain: { tag: "RouterDecodeError", path: "dest_asset_chain_id" },
        otherSource: { tag: "RouterDecodeError", path: "source_asset_denom" },
        lessIn: { tag: "RouterDecodeError", path: "amount_in" },
        opAmount: { tag: "RouterDecodeError", path: "operations[0].amount_out" },
        otherPath: { tag: "RouterDecodeError", path: "chain_ids" },
        otherStart: { tag: "RouterDecodeError", path: "operations[0].amount_in" },
        hugeCount: { tag: "RouterDecodeError", path: "txs_required" },
        negativeTime: { tag: "RouterDecodeError", path: "estimated_route_duration_seconds" },
        negativeTx: { tag: "RouterDecodeError", path: "operations[0].tx_index" }
      })
      // the same answer unspoiled passes, denoms compared without case and amounts as numbers
      mode = ""
      const asked = req(ASSETS.nobleUsdc, ASSETS.arbUsdc, "05000000")
      const ok = await run(
        Effect.flatMap(RouterClient, (r) => r.route({ ...asked, dest_asset_denom: asked.dest_asset_denom.toUpperCase() })),
        proxy.url
      )
      expect(ok.amount_in).toBe("5000000")
      // an amount with leading zeros is read as the number it is (amount_out_text stored them)
      const padded = await startProxy(devnet.routerUrl, async (request, forward) => {
        const answer = await forward()
        if (!request.url.pathname.endsWith("/route")) return answer
        const route = JSON.parse(answer.body) as { amount_out: string }
        return json({ ...route, amount_out: `000${route.amount_out}` })
      })
      try {
        const read = await run(
          Effect.flatMap(RouterClient, (r) => r.route(req(ASSETS.nobleUsdc, ASSETS.arbUsdc, "5000000"))),
          padded.url
        )
        expect(read.amount_out).toMatch(/^[1-9]\d*$/)
      } finally {
        await padded.close()
      }
    } finally {
      await proxy.close()
    }
  })

  it("a 200 that is an HTML page (a wrong URL, a login page) is asked once and said so; one that is not JSON without saying it is HTML is asked again, and called what it looks like", async () => {
    const page = "<!DOCTYPE html><html><body>Sign in</body></html>"
    let type = "text/html; charset=utf-8"
    let asked = 0
    const proxy = await startProxy(devnet.routerUrl, (request, forward) => {
      if (!request.url.pathname.endsWith("/route")) return forward()
      asked++
      return { status: 200, headers: { "content-type": type }, body: page }
    })
    try {
      const ask = Effect.flip(Effect.flatMap(RouterClient, (r) => r.route(req(ASSETS.nobleUsdc, ASSETS.arbUsdc, "5000000"))))
      const labelled = await run(ask, proxy.url)
      expect(asked).toBe(1)
      expect(labelled.message).toMatch(
        /answered 200 with an HTML page, not JSON: is this the router's URL \(or is a login or gateway page in front of it\)\?$/
      )
      type = "text/plain"
      asked = 0
      const unlabelled = await run(ask, proxy.url)
      expect(asked).toBe(1 + FAST.maxRetries)
      expect(unlabelled.message).toContain(`an HTML page, not JSON (${page.length} bytes; a proxy or gateway answering?)`)
    } finally {
      await proxy.close()
    }
  })

  it("takes for 'no route' only the router's own answers of it: a 200 body with operations missing and no message, an array, or a gateway's HTML 400 is no such answer", async () => {
    const bodies: Record<string, { status: number; body: string; type: string }> = {
      empty: { status: 200, body: "{}", type: "application/json" },
      array: { status: 200, body: "[]", type: "application/json" },
      gateway: { status: 200, body: '{"error":"upstream connect error"}', type: "application/json" },
      html400: { status: 400, body: "<html><body>400 Bad Request</body></html>", type: "text/html" },
      quirk: { status: 200, body: '{"message":"no routes found"}', type: "application/json" },
      initia: { status: 400, body: '{"code":3,"message":"no routes found","details":[]}', type: "application/json" }
    }
    let mode = "empty"
    const proxy = await startProxy(devnet.routerUrl, (request, forward) =>
      request.url.pathname.endsWith("/route")
        ? { status: bodies[mode].status, headers: { "content-type": bodies[mode].type }, body: bodies[mode].body }
        : forward()
    )
    try {
      const seen: Record<string, string> = {}
      for (const m of Object.keys(bodies)) {
        mode = m
        const e = await run(
          Effect.flip(Effect.flatMap(RouterClient, (r) => r.route(req(ASSETS.nobleUsdc, ASSETS.arbUsdc, "5000000")))),
          proxy.url
        )
        seen[m] = e._tag
      }
      expect(seen).toEqual({
        empty: "RouterDecodeError",
        array: "RouterDecodeError",
        gateway: "RouterDecodeError",
        html400: "RouterHttpError",
        quirk: "NoRouteError",
        initia: "NoRouteError"
      })
    } finally {
      await proxy.close()
    }
  })

  it("refuses msgs that contradict their route or the addresses given (they would be signed as printed): no tx, another signer, a chain off the route, another amount or no readable coin, a minimum above the route's", async () => {
    type Tx = { cosmos_tx?: { chain_id: string; signer_address: string; msgs: Array<{ msg: string; msg_type_url: string }> } }
    type Msgs = { txs: Array<Tx>; min_amount_out?: string }
    const spoil: Record<string, (m: Msgs) => void> = {
      none: (m) => (m.txs = []),
      signer: (m) => (m.txs[0].cosmos_tx!.signer_address = "noble1attackerattackerattackerattackerxyz"),
      offRoute: (m) => (m.txs[0].cosmos_tx!.chain_id = "osmosis-1"),
      amount: (m) => {
        const msg = m.txs[0].cosmos_tx!.msgs[0]
        const body = JSON.parse(msg.msg) as { token: { amount: string } }
        body.token.amount = "1"
        msg.msg = JSON.stringify(body)
      },
      unreadable: (m) => (m.txs[0].cosmos_tx!.msgs[0].msg = "{not json"),
      minimum: (m) => (m.min_amount_out = "999999999999")
    }
    let mode = ""
    const proxy = await startProxy(devnet.routerUrl, async (request, forward) => {
      const answer = await forward()
      if (!request.url.pathname.endsWith("/msgs") || !mode) return answer
      const msgs = JSON.parse(answer.body) as Msgs
      spoil[mode](msgs)
      return json(msgs)
    })
    try {
      const ask = Effect.gen(function* () {
        const r = yield* RouterClient
        const route = yield* r.route(req(ASSETS.nobleUsdc, ASSETS.l2Usdc, "2500000"))
        const addresses = Object.fromEntries(route.required_chain_addresses.map((c) => [c, addressOf(c)]))
        return yield* r.msgs(route, { addresses, slippageTolerancePercent: "0.5" })
      })
      const unspoiled = await run(ask, proxy.url)
      expect(unspoiled.txs[0].cosmos_tx?.msgs[0].msg_type_url).toBe("/ibc.applications.transfer.v1.MsgTransfer")
      const seen: Record<string, unknown> = {}
      for (const m of Object.keys(spoil)) {
        mode = m
        const e = await run(Effect.flip(ask), proxy.url)
        seen[m] = { tag: e._tag, path: (e as { path?: string }).path }
      }
      expect(seen).toEqual({
        none: { tag: "RouterDecodeError", path: "txs" },
        signer: { tag: "RouterDecodeError", path: "txs[0].cosmos_tx.signer_address" },
        offRoute: { tag: "RouterDecodeError", path: "txs[0].cosmos_tx.chain_id" },
        amount: { tag: "RouterDecodeError", path: "txs[0].cosmos_tx.msgs[0].msg" },
        unreadable: { tag: "RouterDecodeError", path: "txs[0].cosmos_tx.msgs[0].msg" },
        minimum: { tag: "RouterDecodeError", path: "min_amount_out" }
      })
    } finally {
      await proxy.close()
    }
  })

  it("enforces the flow rules: addresses for every required chain, a signed op-hook when required, track once", async () => {
    const out = await run(
      Effect.gen(function* () {
        const r = yield* RouterClient
        const hooked = yield* r.route(req(ASSETS.l2Init, ASSETS.osmoInit, "4000000", { go_fast: false }))
        const addresses = Object.fromEntries(hooked.required_chain_addresses.map((c) => [c, addressOf(c)]))
        const noAddress = yield* Effect.flip(
          r.msgs(hooked, {
            addresses: { [hooked.source_asset_chain_id]: addressOf(hooked.source_asset_chain_id) },
            slippageTolerancePercent: "1"
          })
        )
        const noHook = yield* Effect.flip(r.msgs(hooked, { addresses, slippageTolerancePercent: "1" }))
        const hook = yield* r.opHook({
          source_address: addresses[hooked.source_asset_chain_id],
          source_asset_chain_id: hooked.source_asset_chain_id,
          source_asset_denom: hooked.source_asset_denom,
          dest_address: addresses[hooked.dest_asset_chain_id],
          dest_asset_chain_id: hooked.dest_asset_chain_id,
          dest_asset_denom: hooked.dest_asset_denom
        })
        const signed = {
          signer: addresses[hooked.source_asset_chain_id],
          hook: Buffer.from("signed:" + hook.hook[0].msg).toString("base64")
        }
        const msgs = yield* r.msgs(hooked, { addresses, slippageTolerancePercent: "1", signedOpHook: signed })
        return { hooked, noAddress, noHook, msgs }
      })
    )
    expect(out.hooked.required_op_hook).toBe(true)
    expect(out.noAddress).toMatchObject({ _tag: "RouterFlowError", rule: "address_list" })
    expect(out.noHook).toMatchObject({ _tag: "RouterFlowError", rule: "op_hook" })
    expect(out.msgs.txs[0].cosmos_tx?.msgs[0].msg_type_url).toBe("/opinit.opchild.v1.MsgInitiateTokenWithdrawal")
  })

  it.each(["none", "heavy,stall-ms=2500,retry-after=0"])(
    "runs route → msgs → broadcast (devnet) → track → status to completion (faults: %s)",
    async (faults) => {
      const d =
        faults === "none" ? devnet : await startDevnet({ seed: 29, blocks: 10, transferTimeScale: 0.002, trackIndexDelayMs: 0, faults })
      try {
        const result = await run(
          Effect.gen(function* () {
            const r = yield* RouterClient
            const route = yield* r.route(req(ASSETS.nobleUsdc, ASSETS.l2Usdc, "2500000"))
            const addresses = Object.fromEntries(route.required_chain_addresses.map((c) => [c, addressOf(c)]))
            const msgs = yield* r.msgs(route, { addresses, slippageTolerancePercent: "0.5" })
            const sent = yield* r.devnetBroadcast(route.source_asset_chain_id, msgs.txs[0], "success")
            yield* r.track(sent.tx_hash, sent.chain_id)
            const again = yield* Effect.either(r.track(sent.tx_hash, sent.chain_id))
            const states: Array<string> = []
            for (let i = 0; i < 200; i++) {
              const s = yield* r.status(sent.tx_hash, sent.chain_id)
              if (states.at(-1) !== s.state) states.push(s.state)
              if (isFinalState(s.state)) break
              yield* Effect.sleep(20)
            }
            return { again, states }
          }),
          d.routerUrl
        )
        expect(Either.isLeft(result.again) && result.again.left).toMatchObject({ _tag: "RouterFlowError", rule: "track_once" })
        expect(result.states.at(-1)).toBe("STATE_COMPLETED_SUCCESS")
      } finally {
        if (d !== devnet) await d.stop()
      }
    }
  )
})
