/**
 * `chain-lake track` runs at once on one --out (real CLI processes against the devnet router):
 * every registry entry is kept, a tx is registered once, every state is recorded once per
 * transfer, and a rerun (even one that lost the registry) adds no row.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { BIN, runCli } from "../support/cli.js"
import { queryLake, scan } from "../support/lake.js"
import { json, startProxy } from "../support/hostile.js"
import { bridgeAndBroadcast as bridged, FAST_POLL, stuckRouter } from "../support/router.js"

let devnet: Devnet
const dirs: Array<string> = []
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-lake-track-concurrent-"))
  dirs.push(dir)
  return dir
}
beforeAll(async () => {
  // transfers last a few seconds, so that runs started together overlap from registration to completion
  devnet = await startDevnet({ seed: 47, blocks: 10, transferTimeScale: 0.04 })
})
afterAll(async () => {
  await devnet.stop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const bridgeAndBroadcast = async () => (await bridged(devnet.routerUrl)).txHash
const track = (routerUrl: string, txHash: string, dir: string) =>
  runCli(["track", "--router-url", routerUrl, "--tx-hash", txHash, "--chain-id", "noble-1", "--out", dir, ...FAST_POLL], {
    timeoutMs: 120_000
  })

/** Every (tx, state) row of the lake, with how many times it is recorded. */
const recorded = (dir: string) =>
  queryLake(`SELECT tx_hash, state, count(*)::INTEGER n FROM ${scan(dir, "transfers")} GROUP BY tx_hash, state ORDER BY tx_hash, state`)
const rowCount = async (dir: string) => Number((await queryLake(`SELECT count(*) n FROM ${scan(dir, "transfers")}`))[0].n)
const registry = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "transfers", "_tracked.json"), "utf8")) as Record<string, { lastState?: string }>

/** Counts the registrations (POST /v2/tx/track) that reach the router, per tx. */
const countingRouter = async () => {
  const tracks = new Map<string, number>()
  const proxy = await startProxy(devnet.routerUrl, (req, forward) => {
    if (req.url.pathname === "/v2/tx/track") {
      const h = String(JSON.parse(req.body ?? "{}").tx_hash).toLowerCase()
      tracks.set(h, (tracks.get(h) ?? 0) + 1)
    }
    return forward()
  })
  return { url: proxy.url, tracks, close: () => proxy.close() }
}

describe("chain-lake track, several runs on one --out", () => {
  it("three runs for three txs at once: every registry entry is kept, each state recorded once; rerunning all three adds no row", async () => {
    const hashes = [await bridgeAndBroadcast(), await bridgeAndBroadcast(), await bridgeAndBroadcast()]
    const dir = newDir()
    const router = await countingRouter()
    const runs = await Promise.all(hashes.map((h) => track(router.url, h, dir))).finally(() => router.close())
    for (const r of runs) expect(r.code, r.stderr).toBe(0)
    // each tx registered once, and remembered
    expect([...router.tracks.values()]).toEqual([1, 1, 1])
    const kept = registry(dir)
    expect(Object.keys(kept).sort()).toEqual(hashes.map((h) => `noble-1/${h.toLowerCase()}`).sort())
    for (const entry of Object.values(kept)) expect(entry.lastState).toBe("STATE_COMPLETED_SUCCESS")
    const rows = await recorded(dir)
    expect(rows.filter((r) => r.n !== 1)).toEqual([])
    for (const h of hashes) expect(rows.filter((r) => r.tx_hash === h && r.state === "STATE_COMPLETED_SUCCESS")).toHaveLength(1)
    const before = await rowCount(dir)
    // rerun, all at once again: registered already (no second registration), nothing new to record
    const again = await countingRouter()
    const reruns = await Promise.all(hashes.map((h) => track(again.url, h, dir))).finally(() => again.close())
    for (const r of reruns) expect(r.code, r.stderr).toBe(0)
    expect(again.tracks.size).toBe(0)
    expect(await rowCount(dir)).toBe(before)
    expect((await recorded(dir)).filter((r) => r.n !== 1)).toEqual([])
  })

  it("three runs for one tx at once: registered once, each state recorded once; a rerun that lost the registry adds no row", async () => {
    const txHash = await bridgeAndBroadcast()
    const dir = newDir()
    const router = await countingRouter()
    const runs = await Promise.all([1, 2, 3].map(() => track(router.url, txHash, dir))).finally(() => router.close())
    for (const r of runs) expect(r.code, r.stderr).toBe(0)
    expect(router.tracks.get(txHash.toLowerCase())).toBe(1)
    const rows = await recorded(dir)
    expect(rows.filter((r) => r.n !== 1)).toEqual([])
    expect(rows.map((r) => r.state)).toEqual(expect.arrayContaining(["STATE_PENDING", "STATE_COMPLETED_SUCCESS"]))
    expect(registry(dir)[`noble-1/${txHash.toLowerCase()}`].lastState).toBe("STATE_COMPLETED_SUCCESS")
    const before = await rowCount(dir)
    // the registry removed (as its error message allows): registered again, but the states the lake holds are not recorded again
    rmSync(join(dir, "transfers", "_tracked.json"))
    const again = await track(devnet.routerUrl, txHash, dir)
    expect(again.code, again.stderr).toBe(0)
    expect(await rowCount(dir)).toBe(before)
    // two reruns at once, the same
    const twice = await Promise.all([track(devnet.routerUrl, txHash, dir), track(devnet.routerUrl, txHash, dir)])
    for (const r of twice) expect(r.code, r.stderr).toBe(0)
    expect(await rowCount(dir)).toBe(before)
  })

  it("a state the router answers again after another (a flap) is recorded once, the first time it was seen", async () => {
    const txHash = await bridgeAndBroadcast()
    const dir = newDir()
    // the first answers go SUBMITTED → PENDING → SUBMITTED → PENDING, then the router's own
    const flaps = ["STATE_SUBMITTED", "STATE_PENDING", "STATE_SUBMITTED", "STATE_PENDING"]
    let answered = 0
    const flapping = await startProxy(devnet.routerUrl, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== "/v2/tx/status" || res.status !== 200) return res
      const state = flaps[answered++]
      return state ? json({ ...JSON.parse(res.body), state }) : res
    })
    const t = await track(flapping.url, txHash, dir).finally(() => flapping.close())
    expect(t.code, t.stderr).toBe(0)
    // every change is printed, each state recorded once
    expect(t.stdout.split("\n").filter((l) => / STATE_SUBMITTED/.test(l)).length).toBeGreaterThanOrEqual(2)
    const rows = await queryLake(`SELECT state FROM ${scan(dir, "transfers")} ORDER BY observed_at`)
    expect(rows.map((r) => r.state)).toEqual(["STATE_SUBMITTED", "STATE_PENDING", "STATE_COMPLETED_SUCCESS"])
  })

  it("a registry damaged while a run polls: the states seen are committed, then one line says what to do, exit 1", async () => {
    const txHash = await bridgeAndBroadcast()
    const dir = newDir()
    // a router whose transfer never moves on from STATE_PENDING, so the run is still polling when the registry is damaged
    const stuck = await stuckRouter(devnet.routerUrl)
    const child = spawn(
      process.execPath,
      [
        BIN,
        "track",
        "--router-url",
        stuck.url,
        "--tx-hash",
        txHash,
        "--chain-id",
        "noble-1",
        "--out",
        dir,
        ...FAST_POLL,
        "--timeout",
        "4s"
      ],
      {
        env: { ...process.env, NO_COLOR: "1" }
      }
    )
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const code = await new Promise<number | null>((resolve) => {
      child.stdout.on("data", (d) => {
        stdout += d
        // registered (the first state is printed after it): now damage the registry
        if (/STATE_SUBMITTED/.test(stdout)) writeFileSync(join(dir, "transfers", "_tracked.json"), "{")
      })
      child.on("close", resolve)
    }).finally(() => stuck.close())
    expect(code).toBe(1)
    expect(stderr.trim().split("\n")).toHaveLength(1)
    expect(stderr.trim()).toMatch(
      /^chain-lake: error: \S+_tracked\.json cannot be read \(.*\): restore it, or remove it to register its txs with the router again$/
    )
    const rows = await queryLake(`SELECT state FROM ${scan(dir, "transfers")} ORDER BY observed_at`)
    expect(rows.map((r) => r.state)).toEqual(["STATE_SUBMITTED", "STATE_PENDING"])
  })
})
