/**
 * The whole bridging flow end to end: bridge (CLI) → broadcast (devnet only) → track (CLI) →
 * completed, with every state change in the transfers dataset; a rerun resumes without
 * registering again; a failed transfer ends with a one-line error and its state recorded.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Duration } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { ASSETS } from "../../src/devnet/router-graph.js"
import { nextPollDelay, WALLET_POLLING } from "../../src/sampling/tracker.js"
import { runCli, startCli } from "../support/cli.js"
import { queryLake, scan } from "../support/lake.js"
import { json, startProxy, type HostileServer } from "../support/hostile.js"
import { bridgeAndBroadcast as bridged, FAST_POLL, stuckRouter, trackArgs } from "../support/router.js"

let devnet: Devnet
/** a devnet whose transfers advance 100 ms per status poll (through `pollClock`), whatever the machine's pace: the tests that assert each state is seen */
let polled: Devnet
let pollClock: HostileServer
let out: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 43, blocks: 10, transferTimeScale: 0.01 })
  let virtualMs = 0
  polled = await startDevnet({ seed: 43, blocks: 10, transferTimeScale: 0.01, routerClock: () => virtualMs })
  pollClock = await startProxy(polled.routerUrl, (req, forward) => {
    if (req.url.pathname === "/v2/tx/status") virtualMs += 100
    return forward()
  })
  out = mkdtempSync(join(tmpdir(), "chain-lake-track-"))
})
afterAll(async () => {
  await pollClock.close()
  await Promise.all([devnet.stop(), polled.stop()])
  rmSync(out, { recursive: true, force: true })
})

const bridgeAndBroadcast = (outcome: "success" | "error" | "unknown", to?: { chainId: string; denom: string }, chains?: Array<string>) =>
  bridged(devnet.routerUrl, outcome, to, chains)
const track = (routerUrl: string, txHash: string, dir: string, ...flags: Array<string>) =>
  runCli(trackArgs(routerUrl, txHash, dir, ...flags))

describe("chain-lake track", () => {
  it("polls a bridged tx through the router's first 'tx not found' answers to completion, recording each state change; a rerun resumes without registering", async () => {
    const { txHash, estimated } = await bridged(polled.routerUrl, "success")
    // the devnet answers 404 "tx not found" for 500 ms after track, as the real router does until its tracking service indexed the tx
    let notFound = 0
    const counting = await startProxy(pollClock.url, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname === "/v2/tx/status" && res.status === 404 && /tx not found/.test(res.body)) notFound++
      return res
    })
    const t = await track(counting.url, txHash, out, "--estimated-seconds", String(estimated)).finally(() => counting.close())
    expect(t.code, t.stderr).toBe(0)
    expect(notFound).toBeGreaterThan(1)
    const lines = t.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^\[\d+\.\d s\] STATE_SUBMITTED/)
    // (which hop is pending when the state is first seen depends on the poll's pace)
    expect(
      lines.some((l) => /STATE_PENDING \((ibc_transfer TRANSFER_\w+, )*ibc_transfer TRANSFER_PENDING/.test(l)),
      lines.join("\n")
    ).toBe(true)
    expect(lines.at(-2)).toMatch(/STATE_COMPLETED_SUCCESS \(ibc_transfer TRANSFER_SUCCESS, ibc_transfer TRANSFER_SUCCESS\)/)
    const rows = await queryLake(
      `SELECT state, released, elapsed_s, estimated_duration_s FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' ORDER BY observed_at`
    )
    expect(rows[0].state).toBe("STATE_SUBMITTED")
    expect(rows.at(-1)).toMatchObject({ state: "STATE_COMPLETED_SUCCESS", released: true, estimated_duration_s: BigInt(estimated) })
    expect(new Set(rows.map((r) => r.state)).size).toBe(rows.length)
    // per-hop txs with their explorer links and on-chain times, as the router gave them
    const [final] = await queryLake(
      `SELECT CAST(hops AS VARCHAR) hops FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' AND state = 'STATE_COMPLETED_SUCCESS'`
    )
    const hops = JSON.parse(final.hops) as Array<{
      kind: string
      txs: Array<{ role: string; tx_hash: string; explorer_link: string; on_chain_at: string }>
    }>
    expect(hops.map((h) => h.kind)).toEqual(["ibc_transfer", "ibc_transfer"])
    for (const h of hops) {
      expect(h.txs.map((t) => t.role)).toEqual(expect.arrayContaining(["send_tx", "receive_tx"]))
      for (const t of h.txs)
        expect(t).toMatchObject({
          tx_hash: expect.stringMatching(/^[0-9A-F]{64}$/),
          explorer_link: expect.stringMatching(/^https:\/\//),
          on_chain_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
        })
    }
    // a second run: registered already, so it only polls (a second /v2/tx/track would be a 409)
    const again = await track(pollClock.url, txHash, out)
    expect(again.code, again.stderr).toBe(0)
    const registry = JSON.parse(readFileSync(join(out, "transfers", "_tracked.json"), "utf8"))
    expect(registry[`noble-1/${txHash.toLowerCase()}`].lastState).toBe("STATE_COMPLETED_SUCCESS")
    // a router that answers another state for a tx that ended (back to pending): refused, nothing recorded beside the outcome
    const rowsOf = async () =>
      (await queryLake(`SELECT state FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' ORDER BY 1`)).map((r) => r.state)
    const recorded = await rowsOf()
    const relapsed = await startProxy(pollClock.url, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== "/v2/tx/status" || res.status !== 200) return res
      return json({ ...(JSON.parse(res.body) as object), state: "STATE_PENDING" })
    })
    try {
      const back = await track(relapsed.url, txHash, out)
      expect(back.code).toBe(1)
      expect(back.stderr.trim()).toBe(
        `chain-lake: error: ${txHash} on noble-1 reached STATE_COMPLETED_SUCCESS (recorded in the lake), but the router now answers STATE_PENDING: a final state does not change; nothing recorded`
      )
      expect(await rowsOf()).toEqual(recorded)
    } finally {
      await relapsed.close()
    }
    // a damaged registry is not read as empty (every tx in it would be registered again)
    writeFileSync(join(out, "transfers", "_tracked.json"), "{")
    const damaged = await track(pollClock.url, txHash, out)
    expect(damaged.code).toBe(1)
    expect(damaged.stderr.trim()).toMatch(
      /^chain-lake: error: \S+_tracked\.json cannot be read \(.*\): restore it, or remove it to register its txs with the router again$/
    )
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
    const t = await track(forgetful.url, txHash, mkdtempSync(join(tmpdir(), "chain-lake-track-")), "--not-found-for", "1s").finally(() =>
      forgetful.close()
    )
    expect(t.code).toBe(1)
    expect(t.stderr.trim()).toMatch(
      new RegExp(
        `^chain-lake: error: the router still answers "tx not found" for ${txHash} on noble-1 after 1 s \\(re-registered once\\): check --tx-hash and --chain-id`
      )
    )
    // registered, then once more (the Skip SDK's retry_track), never again
    expect(tracks.length).toBe(2)
    expect(tracks.every((b) => JSON.parse(b).tx_hash === txHash)).toBe(true)
  })

  it("a transfer that fails ends with a one-line error and its final state recorded", async () => {
    const { txHash } = await bridgeAndBroadcast("error")
    const t = await track(devnet.routerUrl, txHash, out)
    expect(t.code).toBe(1)
    expect(t.stderr.trim()).toBe("chain-lake: error: the transfer ended in STATE_COMPLETED_ERROR: packet acknowledgement error")
    const [last] = await queryLake(
      `SELECT state, error_type FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' ORDER BY observed_at DESC LIMIT 1`
    )
    expect(last).toEqual({ state: "STATE_COMPLETED_ERROR", error_type: "STATUS_ERROR_TRANSFER" })
  })

  it("says at the end how many requests it asked again, and why (a router failing now and then slows the polls)", async () => {
    const { txHash } = await bridgeAndBroadcast("success")
    let failed = 0
    const flaky = await startProxy(devnet.routerUrl, (req, forward) =>
      req.url.pathname === "/v2/tx/status" && req.url.searchParams.has("tx_hash") && failed++ < 2
        ? { status: 503, headers: { "content-type": "text/plain" }, body: "Service Unavailable" }
        : forward()
    )
    const dir = mkdtempSync(join(tmpdir(), "chain-lake-track-retried-"))
    try {
      const t = await track(flaky.url, txHash, join(dir, "flaky"))
      expect(t.code, t.stderr).toBe(0)
      expect(t.stderr).toContain("2 requests were asked again after a transient failure (503 ×2)\n")
      const clean = await track(devnet.routerUrl, txHash, join(dir, "clean"))
      expect(clean.code, clean.stderr).toBe(0)
      expect(clean.stderr).not.toContain("asked again")
    } finally {
      await flaky.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("STATE_UNKNOWN is final, an error (the API's docs: treat as error): one line, exit 1, recorded with outcome 'error', never polled on", async () => {
    const { txHash } = await bridgeAndBroadcast("unknown")
    let polls = 0
    let unknownSeen = 0
    const counting = await startProxy(devnet.routerUrl, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname === "/v2/tx/status" && res.status === 200) {
        polls++
        if (JSON.parse(res.body).state === "STATE_UNKNOWN") unknownSeen++
      }
      return res
    })
    const t = await track(counting.url, txHash, out, "--timeout", "20s").finally(() => counting.close())
    expect(t.code).toBe(1)
    expect(t.stderr.trim()).toBe(
      "chain-lake: error: the transfer ended in STATE_UNKNOWN (the router lost track of it: an error, as its docs say): the transfer's state could not be determined"
    )
    // the first STATE_UNKNOWN ended the polling
    expect(unknownSeen).toBe(1)
    expect(polls).toBeGreaterThan(1)
    const rows = await queryLake(
      `SELECT state, outcome, error_type FROM ${scan(out, "transfers")} WHERE tx_hash = '${txHash}' ORDER BY observed_at`
    )
    expect(rows.at(-1)).toEqual({ state: "STATE_UNKNOWN", outcome: "error", error_type: "STATUS_ERROR_UNKNOWN" })
    expect(rows.slice(0, -1).every((r) => r.outcome === null)).toBe(true)
  })

  it("--timeout: gives up with one line naming the tx still pending, exit 1, the changes seen kept; a rerun goes on", async () => {
    const { txHash } = await bridgeAndBroadcast("success")
    const dir = mkdtempSync(join(tmpdir(), "chain-lake-track-"))
    // a router whose transfer never moves on from STATE_PENDING
    const stuck = await stuckRouter(devnet.routerUrl)
    const started = Date.now()
    // (long enough for the start, the registration and two committed states on a loaded machine)
    const t = await track(stuck.url, txHash, dir, "--timeout", "4s").finally(() => stuck.close())
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(t.code).toBe(1)
    const lines = t.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe(
      `chain-lake: error: gave up after 4 s (--timeout): ${txHash} on noble-1 still STATE_PENDING; the state changes seen are kept, run the same command again to go on tracking`
    )
    const rows = await queryLake(`SELECT state, outcome FROM ${scan(dir, "transfers")} ORDER BY observed_at`)
    expect(rows.map((r) => r.state)).toEqual(["STATE_SUBMITTED", "STATE_PENDING"])
    expect(rows.every((r) => r.outcome === null)).toBe(true)
    // the rerun, against the router itself, resumes and completes
    const again = await track(devnet.routerUrl, txHash, dir)
    expect(again.code, again.stderr).toBe(0)
    const [last] = await queryLake(`SELECT state, outcome FROM ${scan(dir, "transfers")} ORDER BY observed_at DESC LIMIT 1`)
    expect(last).toEqual({ state: "STATE_COMPLETED_SUCCESS", outcome: "success" })
  })

  it("each state change is committed as it is printed: a track killed with SIGKILL keeps every state it showed (the router tells only the current one), and a rerun goes on without repeating one", async () => {
    const { txHash } = await bridged(polled.routerUrl, "success")
    const dir = mkdtempSync(join(tmpdir(), "chain-lake-track-"))
    const stuck = await stuckRouter(pollClock.url)
    try {
      const { child } = await startCli(trackArgs(stuck.url, txHash, dir), /STATE_PENDING/)
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGKILL")
      await exited
    } finally {
      await stuck.close()
    }
    const rows = await queryLake(`SELECT state FROM ${scan(dir, "transfers")} ORDER BY observed_at`)
    expect(rows.map((r) => r.state)).toEqual(["STATE_SUBMITTED", "STATE_PENDING"])
    const again = await track(pollClock.url, txHash, dir)
    expect(again.code, again.stderr).toBe(0)
    const states = (await queryLake(`SELECT state FROM ${scan(dir, "transfers")} ORDER BY observed_at`)).map((r) => r.state)
    expect(states.slice(0, 2)).toEqual(["STATE_SUBMITTED", "STATE_PENDING"])
    expect(states.at(-1)).toBe("STATE_COMPLETED_SUCCESS")
    expect(new Set(states).size).toBe(states.length)
  })

  it("--timeout must be a duration above 0: one line, exit 2", async () => {
    const t = await track(devnet.routerUrl, "AB".repeat(32), mkdtempSync(join(tmpdir(), "chain-lake-track-")), "--timeout", "5")
    expect(t.code).toBe(2)
    expect(t.stderr.trim()).toBe('chain-lake: error: --timeout must look like 500ms, 5s, 1m, got "5"')
    const zero = await track(devnet.routerUrl, "AB".repeat(32), mkdtempSync(join(tmpdir(), "chain-lake-track-")), "--timeout", "0s")
    expect(zero.code).toBe(2)
    expect(zero.stderr.trim()).toBe('chain-lake: error: --timeout must be more than 0, got "0s"')
  })

  it("--tx-hash must be a tx's hash (64 hex digits, 0x first on an EVM chain, or a Solana signature): one line, exit 2, nothing asked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chain-lake-track-"))
    for (const wrong of ["ABC", `${"AB".repeat(32)} x`, `${"AB".repeat(32)}/../x`, "0x" + "g".repeat(64)]) {
      const t = await track("http://127.0.0.1:9", wrong, dir)
      expect(t.code, wrong).toBe(2)
      expect(t.stderr.trim()).toBe(
        `chain-lake: error: --tx-hash must be a tx's hash (64 hex digits, 0x first on an EVM chain, or a Solana signature), got "${wrong}"`
      )
    }
    expect(readdirSync(dir)).toEqual([])
  })

  it("takes the router's URL from CHAIN_LAKE_ROUTER_URL, as the other router commands do; with neither it and the flag: one line, exit 2", async () => {
    const { txHash } = await bridgeAndBroadcast("success")
    const args = [
      "track",
      "--tx-hash",
      txHash,
      "--chain-id",
      "noble-1",
      "--out",
      mkdtempSync(join(tmpdir(), "chain-lake-track-")),
      ...FAST_POLL
    ]
    const fromEnv = await runCli(args, { env: { CHAIN_LAKE_ROUTER_URL: devnet.routerUrl } })
    expect(fromEnv.code, fromEnv.stderr).toBe(0)
    expect(fromEnv.stdout).toMatch(/STATE_COMPLETED_SUCCESS/)
    const none = await runCli(args, { env: { CHAIN_LAKE_ROUTER_URL: "" } })
    expect([none.code, none.stderr.trim()]).toEqual([
      2,
      "chain-lake: error: no --router-url: give the router's URL (or set CHAIN_LAKE_ROUTER_URL)"
    ])
  })

  it("a status without a top-level transfer_sequence (deprecated in the API) is accepted: events NULL where the router sent none", async () => {
    const { txHash } = await bridgeAndBroadcast("success")
    const dir = mkdtempSync(join(tmpdir(), "chain-lake-track-"))
    const terse = await startProxy(devnet.routerUrl, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== "/v2/tx/status" || res.status !== 200) return res
      const { transfer_sequence: _dropped, transfers, ...rest } = JSON.parse(res.body)
      // completed transfers keep their per-transfer events; the others come with none at all
      return json(rest.state === "STATE_COMPLETED_SUCCESS" ? { ...rest, transfers } : rest)
    })
    const t = await track(terse.url, txHash, dir).finally(() => terse.close())
    expect(t.code, t.stderr).toBe(0)
    const rows = await queryLake(
      `SELECT state, transfer_states, CAST(hops AS VARCHAR) hops FROM ${scan(dir, "transfers")} ORDER BY observed_at`
    )
    expect(rows[0]).toEqual({ state: "STATE_SUBMITTED", transfer_states: null, hops: null })
    expect(rows.at(-1)).toMatchObject({
      state: "STATE_COMPLETED_SUCCESS",
      transfer_states: ["ibc_transfer:TRANSFER_SUCCESS", "ibc_transfer:TRANSFER_SUCCESS"]
    })
  })

  it("a CCTP V2 transfer: bridge lists cctp_transfer_v2, and its status events are recorded by kind", async () => {
    const { txHash, kinds } = await bridgeAndBroadcast("success", ASSETS.avaxUsdc, ["noble-1", "43114"])
    expect(kinds).toEqual(["cctp_transfer_v2"])
    const dir = mkdtempSync(join(tmpdir(), "chain-lake-track-"))
    const t = await track(devnet.routerUrl, txHash, dir)
    expect(t.code, t.stderr).toBe(0)
    const [final] = await queryLake(
      `SELECT transfer_states, CAST(hops AS VARCHAR) hops FROM ${scan(dir, "transfers")} WHERE state = 'STATE_COMPLETED_SUCCESS'`
    )
    expect(final.transfer_states).toEqual(["cctp_transfer_v2:CCTP_TRANSFER_RECEIVED"])
    expect(JSON.parse(final.hops)[0]).toMatchObject({ kind: "cctp_transfer_v2", from_chain_id: "noble-1", to_chain_id: "43114" })
  })

  it("polls like production wallets: 60 s far from the ETA, 5 s within 5 min, 1 s once overdue", () => {
    const eta = 1_000_000
    expect(Duration.toMillis(nextPollDelay(eta - 10 * 60_000, eta, WALLET_POLLING))).toBe(60_000)
    expect(Duration.toMillis(nextPollDelay(eta - 60_000, eta, WALLET_POLLING))).toBe(5_000)
    expect(Duration.toMillis(nextPollDelay(eta + 1, eta, WALLET_POLLING))).toBe(1_000)
    expect(Duration.toMillis(nextPollDelay(0, undefined, WALLET_POLLING))).toBe(5_000)
  })
})
