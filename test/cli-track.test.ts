/**
 * The whole bridging flow end to end: bridge (CLI) → broadcast (devnet only) → track (CLI) →
 * completed, with every state change in the transfers dataset; a rerun resumes without
 * registering again; a failed transfer ends with a one-line error and its state recorded.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../src/devnet/index.js"
import { ASSETS } from "../src/devnet/router-graph.js"
import { nextPollDelay, WALLET_POLLING } from "../src/sampling/tracker.js"
import { runCli } from "./support/cli.js"
import { postJson } from "./support/http.js"
import { queryLake, scan } from "./support/lake.js"
import { json, startProxy } from "./support/hostile.js"
import { addressFor } from "./support/router.js"

let devnet: Devnet
let out: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 43, blocks: 10, transferTimeScale: 0.01 })
  out = mkdtempSync(join(tmpdir(), "chain-lake-track-"))
})
afterAll(async () => {
  await devnet.stop()
  rmSync(out, { recursive: true, force: true })
})

const FAST_POLL = ["--poll-slow", "100ms", "--poll-near", "50ms", "--poll-overdue", "20ms", "--near-window", "200ms"]

const bridgeAndBroadcast = async (outcome: "success" | "error") => {
  const chains = ["noble-1", "interwoven-1", "lake-evm-1"]
  const b = await runCli([
    "bridge",
    "--router-url",
    devnet.routerUrl,
    "--from",
    `${ASSETS.nobleUsdc.chainId}:${ASSETS.nobleUsdc.denom}`,
    "--to",
    `${ASSETS.l2Usdc.chainId}:${ASSETS.l2Usdc.denom}`,
    "--amount",
    "3000000",
    ...chains.flatMap((c) => ["--address", `${c}=${addressFor(c)}`])
  ])
  if (b.code !== 0) throw new Error(b.stderr)
  const bridged = JSON.parse(b.stdout)
  // devnet only: a real router never broadcasts; the wallet would sign and submit txs[0]
  const sent = await postJson(devnet.routerUrl + "/devnet/broadcast", { chain_id: "noble-1", tx: bridged.txs[0], outcome })
  return { txHash: sent.json.tx_hash as string, estimated: bridged.route.estimated_route_duration_seconds as number }
}

describe("chain-lake track", () => {
  it("polls a bridged tx through the router's first 'tx not found' answers to completion, recording each state change; a rerun resumes without registering", async () => {
    const { txHash, estimated } = await bridgeAndBroadcast("success")
    // the devnet answers 404 "tx not found" for 500 ms after track, as the real router does until its tracking service indexed the tx
    let notFound = 0
    const counting = await startProxy(devnet.routerUrl, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname === "/v2/tx/status" && res.status === 404 && /tx not found/.test(res.body)) notFound++
      return res
    })
    const t = await runCli(["track", "--router-url", counting.url, "--tx-hash", txHash, "--chain-id", "noble-1", "--out", out, "--estimated-seconds", String(estimated), ...FAST_POLL]).finally(() => counting.close())
    expect(t.code, t.stderr).toBe(0)
    expect(notFound).toBeGreaterThan(1)
    const lines = t.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^\[\d+\.\d s\] STATE_SUBMITTED/)
    expect(lines.some((l) => /STATE_PENDING \(ibc_transfer TRANSFER_PENDING\)/.test(l))).toBe(true)
    expect(lines.at(-2)).toMatch(/STATE_COMPLETED_SUCCESS \(ibc_transfer TRANSFER_SUCCESS, ibc_transfer TRANSFER_SUCCESS\)/)
    const rows = await queryLake(`SELECT state, released, elapsed_s, estimated_duration_s FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' ORDER BY observed_at`)
    expect(rows[0].state).toBe("STATE_SUBMITTED")
    expect(rows.at(-1)).toMatchObject({ state: "STATE_COMPLETED_SUCCESS", released: true, estimated_duration_s: BigInt(estimated) })
    expect(new Set(rows.map((r) => r.state)).size).toBe(rows.length)
    // per-hop txs with their explorer links and on-chain times, as the router gave them
    const [final] = await queryLake(`SELECT CAST(hops AS VARCHAR) hops FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' AND state = 'STATE_COMPLETED_SUCCESS'`)
    const hops = JSON.parse(final.hops) as Array<{ kind: string; txs: Array<{ role: string; tx_hash: string; explorer_link: string; on_chain_at: string }> }>
    expect(hops.map((h) => h.kind)).toEqual(["ibc_transfer", "ibc_transfer"])
    for (const h of hops) {
      expect(h.txs.map((t) => t.role)).toEqual(expect.arrayContaining(["send_tx", "receive_tx"]))
      for (const t of h.txs) expect(t).toMatchObject({ tx_hash: expect.stringMatching(/^[0-9A-F]{64}$/), explorer_link: expect.stringMatching(/^https:\/\//), on_chain_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
    }
    // a second run: registered already, so it only polls (a second /v2/tx/track would be a 409)
    const again = await runCli(["track", "--router-url", devnet.routerUrl, "--tx-hash", txHash, "--chain-id", "noble-1", "--out", out, ...FAST_POLL])
    expect(again.code, again.stderr).toBe(0)
    const registry = JSON.parse(readFileSync(join(out, "transfers", "_tracked.json"), "utf8"))
    expect(registry[`noble-1/${txHash.toLowerCase()}`].lastState).toBe("STATE_COMPLETED_SUCCESS")
    // a damaged registry is not read as empty (every tx in it would be registered again)
    writeFileSync(join(out, "transfers", "_tracked.json"), "{")
    const damaged = await runCli(["track", "--router-url", devnet.routerUrl, "--tx-hash", txHash, "--chain-id", "noble-1", "--out", out, ...FAST_POLL])
    expect(damaged.code).toBe(1)
    expect(damaged.stderr.trim()).toMatch(/^chain-lake: error: \S+_tracked\.json cannot be read \(.*\): restore it, or remove it to register its txs with the router again$/)
    // (the lake is the next tests' too)
    writeFileSync(join(out, "transfers", "_tracked.json"), JSON.stringify(registry))
  })

  it("a tx the router never indexes: re-registered once, then a one-line error after --not-found-for, exit 1", async () => {
    const { txHash } = await bridgeAndBroadcast("success")
    const tracks: Array<string> = []
    const forgetful = await startProxy(devnet.routerUrl, async (req, forward) => {
      if (req.url.pathname === "/v2/tx/track") tracks.push(req.body ?? "")
      // every status is "tx not found", the reachability probe's too: a router answering so is still a router
      if (req.url.pathname === "/v2/tx/status") return json({ code: 5, message: "tx not found", details: [] }, 404)
      return forward()
    })
    const t = await runCli(["track", "--router-url", forgetful.url, "--tx-hash", txHash, "--chain-id", "noble-1", "--out", mkdtempSync(join(tmpdir(), "chain-lake-track-")), ...FAST_POLL, "--not-found-for", "1s"]).finally(() =>
      forgetful.close()
    )
    expect(t.code).toBe(1)
    expect(t.stderr.trim()).toMatch(new RegExp(`^chain-lake: error: the router still answers "tx not found" for ${txHash} on noble-1 after 1 s \\(re-registered once\\): check --tx-hash and --chain-id`))
    // registered, then once more (the Skip SDK's retry_track), never again
    expect(tracks.length).toBe(2)
    expect(tracks.every((b) => JSON.parse(b).tx_hash === txHash)).toBe(true)
  })

  it("a transfer that fails ends with a one-line error and its final state recorded", async () => {
    const { txHash } = await bridgeAndBroadcast("error")
    const t = await runCli(["track", "--router-url", devnet.routerUrl, "--tx-hash", txHash, "--chain-id", "noble-1", "--out", out, ...FAST_POLL])
    expect(t.code).toBe(1)
    expect(t.stderr.trim()).toBe("chain-lake: error: the transfer ended in STATE_COMPLETED_ERROR: packet acknowledgement error")
    const [last] = await queryLake(`SELECT state, error_type FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' ORDER BY observed_at DESC LIMIT 1`)
    expect(last).toEqual({ state: "STATE_COMPLETED_ERROR", error_type: "STATUS_ERROR_TRANSFER" })
  })

  it("polls like production wallets: 60 s far from the ETA, 5 s within 5 min, 1 s once overdue", () => {
    const eta = 1_000_000
    expect(Duration.toMillis(nextPollDelay(eta - 10 * 60_000, eta, WALLET_POLLING))).toBe(60_000)
    expect(Duration.toMillis(nextPollDelay(eta - 60_000, eta, WALLET_POLLING))).toBe(5_000)
    expect(Duration.toMillis(nextPollDelay(eta + 1, eta, WALLET_POLLING))).toBe(1_000)
    expect(Duration.toMillis(nextPollDelay(0, undefined, WALLET_POLLING))).toBe(5_000)
  })
})
