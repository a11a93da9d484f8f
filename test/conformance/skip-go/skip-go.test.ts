/**
 * The official Skip Go SDK (@skip-go/client 1.6.1, this folder's own dependencies) driven against
 * the devnet router: every route the devnet answers is one the SDK reads, each kind of operation
 * included; and a transfer goes route → messages → (devnet broadcast) → trackTransaction →
 * transactionStatus to its final state, all through the SDK's own requests (camelCase in, the
 * snake_case bodies with its extra fields on the wire).
 *
 * Opt-in (its dependency tree is 194 packages, one declaring Node >= 22): `npm run test:conformance`
 * from the project root installs them here and runs this file.
 */
import { messages, route, setApiOptions, trackTransaction, transactionStatus } from "@skip-go/client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../../src/devnet/index.js"
import { ASSETS } from "../../../src/devnet/router-graph.js"
import { addressFor } from "../../support/router.js"

let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 5, blocks: 50 })
  setApiOptions({ apiUrl: devnet.routerUrl })
})
afterAll(async () => {
  await devnet.stop()
})

const assets = Object.values(ASSETS) as ReadonlyArray<{ readonly chainId: string; readonly denom: string }>
const operationKinds = (r: { operations: ReadonlyArray<Record<string, unknown>> }) =>
  r.operations.flatMap((op) => Object.keys(op).filter((k) => !["txIndex", "amountIn", "amountOut"].includes(k)))

describe("@skip-go/client against the devnet router", () => {
  it("reads every route the devnet answers, for every pair of its assets, each kind of operation among them", async () => {
    const kinds = new Set<string>()
    let answered = 0
    for (const src of assets)
      for (const dst of assets) {
        if (src === dst) continue
        const raw = await fetch(`${devnet.routerUrl}/v2/fungible/route`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            amount_in: "1000000",
            source_asset_chain_id: src.chainId,
            source_asset_denom: src.denom,
            dest_asset_chain_id: dst.chainId,
            dest_asset_denom: dst.denom,
            allow_unsafe: true
          })
        })
        if (raw.status !== 200) continue
        const body = (await raw.json()) as Record<string, unknown>
        if (!("operations" in body)) continue // the 200 "no routes found" quirk
        const r = await route({
          amountIn: "1000000",
          sourceAssetChainId: src.chainId,
          sourceAssetDenom: src.denom,
          destAssetChainId: dst.chainId,
          destAssetDenom: dst.denom,
          allowUnsafe: true
        })
        expect(r, `${src.chainId}/${src.denom} → ${dst.chainId}/${dst.denom}`).toBeDefined()
        expect(r!.amountOut).toBe(body.amount_out)
        for (const k of operationKinds(r as never)) kinds.add(k)
        answered++
      }
    expect(answered).toBeGreaterThan(10)
    expect([...kinds].sort()).toEqual(expect.arrayContaining(["transfer", "swap", "opInitTransfer", "goFastTransfer"]))
  }, 120_000)

  it("route → messages → broadcast → trackTransaction → transactionStatus to the final state", async () => {
    const [src, dst] = [ASSETS.nobleUsdc, ASSETS.l2Usdc]
    const r = (await route({
      amountIn: "2500000",
      sourceAssetChainId: src.chainId,
      sourceAssetDenom: src.denom,
      destAssetChainId: dst.chainId,
      destAssetDenom: dst.denom
    }))!
    const msgs = await messages({
      sourceAssetDenom: r.sourceAssetDenom,
      sourceAssetChainId: r.sourceAssetChainId,
      destAssetDenom: r.destAssetDenom,
      destAssetChainId: r.destAssetChainId,
      amountIn: r.amountIn,
      amountOut: r.amountOut,
      addressList: r.requiredChainAddresses.map(addressFor),
      operations: r.operations,
      slippageTolerancePercent: "1"
    })
    const tx = msgs!.txs![0] as { cosmosTx: { msgs: Array<{ msgTypeUrl: string; msg: string }> } }
    expect(tx.cosmosTx.msgs[0].msgTypeUrl).toBe("/ibc.applications.transfer.v1.MsgTransfer")
    expect(JSON.parse(tx.cosmosTx.msgs[0].msg)).toHaveProperty("source_channel")
    // the devnet's stand-in for a chain: it takes the signable tx as the router gave it
    const rawMsgs = (await (
      await fetch(`${devnet.routerUrl}/v2/fungible/msgs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          source_asset_denom: r.sourceAssetDenom,
          source_asset_chain_id: r.sourceAssetChainId,
          dest_asset_denom: r.destAssetDenom,
          dest_asset_chain_id: r.destAssetChainId,
          amount_in: r.amountIn,
          amount_out: r.amountOut,
          address_list: r.requiredChainAddresses.map(addressFor),
          operations: (
            (await (
              await fetch(`${devnet.routerUrl}/v2/fungible/route`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({
                  amount_in: "2500000",
                  source_asset_chain_id: src.chainId,
                  source_asset_denom: src.denom,
                  dest_asset_chain_id: dst.chainId,
                  dest_asset_denom: dst.denom
                })
              })
            ).json()) as { operations: unknown }
          ).operations,
          slippage_tolerance_percent: "1"
        })
      })
    ).json()) as { txs: Array<unknown> }
    const sent = (await (
      await fetch(`${devnet.routerUrl}/devnet/broadcast`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ chain_id: src.chainId, tx: rawMsgs.txs[0], outcome: "success" })
      })
    ).json()) as { tx_hash: string }
    const tracked = await trackTransaction({ txHash: sent.tx_hash, chainId: src.chainId })
    expect(tracked.txHash).toBe(sent.tx_hash)
    let state: string | undefined
    for (let i = 0; i < 400 && !(state ?? "").startsWith("STATE_COMPLETED"); i++) {
      try {
        const status = (await transactionStatus({ txHash: sent.tx_hash, chainId: src.chainId })) as {
          state?: string
          transfers?: Array<{ state?: string }>
        }
        state = status.state ?? status.transfers?.[0]?.state
      } catch (e) {
        // 404 "tx not found" until the tracking service has indexed it (documented)
        expect(String((e as Error).message)).toMatch(/tx not found/)
      }
      await new Promise((res) => setTimeout(res, 25))
    }
    expect(state).toBe("STATE_COMPLETED_SUCCESS")
  }, 60_000)
})
