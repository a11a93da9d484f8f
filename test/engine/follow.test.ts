/** `chain-lake export --follow`: keeps a growing chain's datasets fresh, in committed increments, and stops cleanly. */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { Duration, Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import { followExport } from "../../src/engine/follow.js"
import { DENOMS, startDevnet, type Devnet } from "../../src/devnet/index.js"
import { internalTxRows } from "../support/chain-model.js"
import { BIN, runCli } from "../support/cli.js"
import { json, startProxy } from "../support/hostile.js"
import { filesUnder, queryLake, scan } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"
import { expectConsistent } from "../support/verify.js"

let devnet: Devnet
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-follow-")
beforeAll(async () => {
  devnet = await startDevnet({ seed: 59, blocks: 100, blockTimeMs: 40 })
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

/** The highest height the lake's blocks committed. */
const lakeTip = (out: string): number =>
  Math.max(
    ...(JSON.parse(readFileSync(join(out, "blocks", "_manifest.json"), "utf8")).committed as Array<[number, number]>).map(([, b]) => b - 1)
  )

/** `export --follow` of `datasets` into `out`, polling every `poll` (100 ms), until `target`, with `extra` flags. */
const followTo = (
  out: string,
  target: number,
  datasets: string,
  { poll = "100ms", extra = [], timeoutMs }: { poll?: string; extra?: ReadonlyArray<string>; timeoutMs?: number } = {}
) =>
  runCli(
    [
      ...["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--follow", "--poll", poll],
      ...["--until-height", String(target), "--datasets", datasets, ...extra]
    ],
    timeoutMs === undefined ? {} : { timeoutMs }
  )

describe("export --follow", () => {
  it("catches up, then exports new blocks as they come, until --until-height", async () => {
    const out = tmp()
    // ~4 s of new blocks: well past the CLI's start-up, so it has to follow
    const target = devnet.tip() + 100
    const r = await followTo(out, target, "blocks,txs,evm_internal_txs")
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim().split("\n").length).toBeGreaterThan(1)
    // each round names the height it exported to, never past --until-height; the end says it got there
    const heights = [...r.stdout.matchAll(/ height (\d+): /g)].map((m) => Number(m[1]))
    expect(heights.at(-1)).toBe(target)
    expect(Math.max(...heights)).toBe(target)
    expect(r.stderr.trim().split("\n").at(-1)).toBe(`followed up to --until-height ${target} → ${out}`)
    // internal_tx_height lags the tip: that is how a chain grows, not a --to-height the user overshot
    expect(r.stderr).not.toMatch(/is above/)
    const [b] = await queryLake(`SELECT count(*) n, count(DISTINCT height) d, min(height) lo, max(height) hi FROM ${scan(out, "blocks")}`)
    expect([Number(b.lo), Number(b.hi), Number(b.n), Number(b.d)]).toEqual([1, target, target, target])
    // the lagging dataset reached the height too before the run stopped (not internal_tx_height at the round the tip got there)
    const [i] = await queryLake(`SELECT count(*) n, max(height) hi FROM ${scan(out, "evm_internal_txs")}`)
    const expected = internalTxRows(devnet.chain, 1).filter((row) => Number(row.height) <= target)
    expect(Number(i.n)).toBe(expected.length)
    expect(Number(i.hi)).toBe(Math.max(...expected.map((row) => Number(row.height))))
    const v = await runCli(["verify", "--data", out])
    expect(v.code, v.stdout).toBe(0)
    // every round committed small files; rounds compacted them as they piled up, and the end compacted the rest
    expect(r.stdout).toMatch(/ compacted blocks: \d+ files/)
    for (const dataset of ["blocks", "txs"]) {
      const parts = filesUnder(join(out, dataset)).filter((f) => f.endsWith(".parquet"))
      const partitions = new Set(parts.map((f) => f.split("/")[0]))
      expect(parts.length, `${dataset}: ${parts.join(", ")}`).toBe(partitions.size)
    }
  })

  it("takes a plain export's flags as a plain export does (--denoms, --adopt-lake for the lake it found), and refuses those it cannot honour (--dry-run, --to-height) before anything is written", async () => {
    const out = tmp()
    for (const [flags, message] of [
      [["--dry-run"], "--dry-run plans one export and writes nothing, --follow writes every round: give one"],
      [["--to-height", "5"], "--to-height bounds a plain export: --follow stops at --until-height"]
    ] as const) {
      const r = await followTo(out, devnet.tip() + 1, "blocks", { extra: flags })
      expect([r.code, r.stderr.trim()]).toEqual([2, `chain-lake: error: ${message}`])
    }
    expect(existsSync(join(out, "blocks"))).toBe(false)
    // the holders of the denom asked, not of every fee denom the blocks paid in
    const denom = DENOMS[1].denom
    const held = await followTo(out, devnet.tip() + 1, "blocks,holders", { extra: ["--denoms", denom] })
    expect(held.code, held.stderr).toBe(0)
    const denoms = await queryLake(`SELECT DISTINCT denom FROM ${scan(out, "holders")}`)
    expect(denoms.map((r) => r.denom)).toEqual([denom])
    // a lake that lost its identity file is adopted on --adopt-lake, as a plain export adopts it
    rmSync(join(out, "_lake.json"))
    const refused = await followTo(out, devnet.tip() + 1, "blocks")
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining("--adopt-lake checks its newest block")])
    const adopted = await followTo(out, devnet.tip() + 1, "blocks", { extra: ["--adopt-lake"] })
    expect(adopted.code, adopted.stderr).toBe(0)
    expect(adopted.stderr).toContain(`${out}: adopted for chain`)
    // --until-height below what the lake holds: nothing to follow, and the end says the lake holds more
    const below = await followTo(out, 5, "blocks")
    expect(below.code, below.stderr).toBe(0)
    expect(below.stderr.trim().split("\n").at(-1)).toMatch(
      new RegExp(`^followed up to --until-height 5 \\(the lake holds up to \\d{2,}\\) → ${out}$`)
    )
  })

  it("followExport (the library's) refuses a dry run and a toHeight, before it asks or writes anything", async () => {
    const out = tmp()
    for (const [options, message] of [
      [{ dryRun: true }, "a dry run plans one export and writes nothing: a follow writes every round"],
      [{ toHeight: 5 }, "toHeight bounds one export: a follow stops at untilHeight"]
    ] as const) {
      const r = await Effect.runPromise(
        Effect.either(followExport(DATASETS, { datasets: ["blocks"], ...options }, { poll: Duration.millis(100) })).pipe(
          Effect.provide(exportLayer({ indexerUrl: "http://127.0.0.1:9", out, limits: { concurrency: 1, rps: 0 } }))
        )
      )
      expect(Either.isLeft(r) && r.left.message).toBe(message)
    }
    expect(existsSync(join(out, "blocks"))).toBe(false)
  })

  it("a round whose indexer answers from behind the lake's tip (a replica catching up) is tried again at the next poll, said, not the end of the follow", async () => {
    const out = tmp()
    const first = await followTo(out, devnet.tip(), "blocks")
    expect(first.code, first.stderr).toBe(0)
    // the next two /status answers come from a replica 5 blocks behind the lake's tip, then the rest from the one ahead
    let behind = 2
    const replicas = await startProxy(devnet.indexerUrl, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== "/status" || behind === 0) return res
      const status = JSON.parse(res.body)
      // (the preflight's /status too: the first round's is the one behind)
      if (req.headers["cache-control"] === "no-cache") behind--
      return json({ ...status, height: lakeTip(out) - 5 })
    })
    try {
      const target = devnet.tip() + 3
      const r = await runCli([
        ...["export", "--indexer-url", replicas.url, "--out", out, "--follow", "--poll", "100ms"],
        ...["--until-height", String(target), "--datasets", "blocks"]
      ])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(
        /but this indexer's tip is \d+, and the blocks both hold are the same: .* \(following: trying again at the next poll, \d+ s of 600 s behind\)/
      )
      const [b] = await queryLake(`SELECT count(*) n, count(DISTINCT height) d, max(height) hi FROM ${scan(out, "blocks")}`)
      expect([Number(b.n), Number(b.d), Number(b.hi)]).toEqual([target, target, target])
    } finally {
      await replicas.close()
    }
    // one that stays behind longer than behindForMs ends the follow, the lake untouched
    const stuck = await startProxy(devnet.indexerUrl, async (req, forward) => {
      const res = await forward()
      return req.url.pathname === "/status" ? json({ ...JSON.parse(res.body), height: lakeTip(out) - 5 }) : res
    })
    try {
      const before = lakeTip(out)
      const r = await Effect.runPromise(
        Effect.either(followExport(DATASETS, { datasets: ["blocks"] }, { poll: Duration.millis(50), behindForMs: 300 })).pipe(
          Effect.provide(exportLayer({ indexerUrl: stuck.url, out, limits: { concurrency: 1, rps: 0 } }))
        )
      )
      expect(Either.isLeft(r) && r.left.message).toMatch(/but this indexer's tip is \d+, and the blocks both hold are the same/)
      expect(lakeTip(out)).toBe(before)
    } finally {
      await stuck.close()
    }
  })

  it("says what it is doing: the catching-up round's plan, then, on a chain that stopped growing, that it waits", async () => {
    const still = await startDevnet({ seed: 61, blocks: 50 })
    const child = spawn(
      process.execPath,
      [BIN, "export", "--indexer-url", still.indexerUrl, "--out", tmp(), "--follow", "--poll", "200ms", "--datasets", "blocks"],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    try {
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      for (let i = 0; i < 200 && !/no new blocks since/.test(stderr); i++) await new Promise((resolve) => setTimeout(resolve, 50))
      expect(stderr).toMatch(/^blocks: +50 blocks to fetch · heights 1\.\.50 · 1 shard$/m)
      expect(stderr).toMatch(/^\S+ at height 50: no new blocks since \S+, polling every 200ms$/m)
    } finally {
      child.kill("SIGINT")
      await new Promise((resolve) => child.on("exit", resolve))
      await still.stop()
    }
  }, 30_000)

  it("says once, not every round, that another chain-lake writes the lake (a live process's staging folder there)", async () => {
    const out = tmp()
    // a process of this host, named as a writer of the lake
    const other = spawn("sleep", ["60"], { stdio: "ignore" })
    try {
      const host = (process.env.CHAIN_LAKE_WRITER_HOST || hostname()).replace(/[^0-9A-Za-z.-]/g, "_")
      mkdirSync(join(out, ".chain-lake", "staging", `${host}-${other.pid}-0123abcd`), { recursive: true })
      // ~4 s of new blocks: well past the CLI's start-up, so it follows for several rounds
      const target = devnet.tip() + 100
      const r = await followTo(out, target, "blocks")
      expect(r.code, r.stderr).toBe(0)
      // rounds ran, each beside that writer
      expect(r.stdout.trim().split("\n").length).toBeGreaterThan(1)
      const said = r.stderr.split("\n").filter((l) => l.includes(`another chain-lake (pid ${other.pid}) is writing ${out}`))
      expect(said).toHaveLength(1)
    } finally {
      other.kill()
    }
  })

  it("stops on SIGINT with committed state consistent", async () => {
    const out = tmp()
    const child = spawn(
      process.execPath,
      [BIN, "export", "--indexer-url", devnet.indexerUrl, "--out", out, "--follow", "--poll", "100ms", "--datasets", "blocks,txs"],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    child.stdout.on("data", (d) => (stdout += d))
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (stdout.split("\n").filter(Boolean).length >= 3) {
          clearInterval(check)
          resolve()
        }
      }, 50)
    })
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    child.kill("SIGINT")
    // an interrupted run says so, and never exits 0
    expect(await exited).toBe(130)
    expect(stderr).toMatch(/^chain-lake: interrupted: every file committed so far is kept; run the same command again to resume$/m)
    // consistent (no duplicates, files exactly as committed), though a round may be incomplete
    const v = await runCli(["verify", "--data", out])
    expectConsistent(v.stdout)
    const resumed = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks,txs"])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect((await runCli(["verify", "--data", out])).code).toBe(0)
  })

  it("runs on beside `chain-lake compact` of the same lake: one compaction waits for or skips the other, both finish, every row once, retired bytes bounded", async () => {
    const out = tmp()
    const target = devnet.tip() + 300
    const follow = followTo(out, target, "blocks,txs", { poll: "50ms", extra: ["--compact-after", "2"], timeoutMs: 90_000 })
    let done = false
    void follow.then(() => (done = true))
    const compactions: Array<Awaited<ReturnType<typeof runCli>>> = []
    // two compactions at a time, again and again, until the follow run ends
    const loop = async () => {
      while (!done) {
        if (existsSync(join(out, "blocks", "_manifest.json")))
          compactions.push(await runCli(["compact", "--data", out, "--datasets", "blocks,txs", "--grace", "1h"]))
        else await new Promise((r) => setTimeout(r, 50))
      }
    }
    await Promise.all([loop(), loop()])
    const r = await follow
    expect(r.code, r.stderr).toBe(0)
    expect(compactions.length).toBeGreaterThan(0)
    for (const c of compactions) expect(c.code, c.stderr).toBe(0)
    const [b] = await queryLake(`SELECT count(*) n, count(DISTINCT height) d FROM ${scan(out, "blocks")}`)
    expect([Number(b.n), Number(b.d)]).toEqual([target, target])
    const v = await runCli(["verify", "--data", out])
    expect(v.code, v.stdout).toBe(0)
    // the retired files kept for their grace (an hour) are bounded by bytes: no more than 4 times each dataset's committed bytes
    for (const dataset of ["blocks", "txs"]) {
      const m = JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")) as { files: Array<{ bytes: number }> }
      const committed = m.files.reduce((s, f) => s + f.bytes, 0)
      const kept = join(out, ".chain-lake", "retired", dataset)
      const retired = (existsSync(kept) ? filesUnder(kept) : []).reduce((s, f) => s + statSync(join(kept, f)).size, 0)
      expect(retired, dataset).toBeLessThanOrEqual(4 * committed)
    }
  }, 120_000)
})
