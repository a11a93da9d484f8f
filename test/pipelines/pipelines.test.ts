/** `chain-lake run`: a pipeline once, on a cron schedule, and never two runs on one folder at a time. */
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { startProxy, sleep, text } from "../support/hostile.js"
import { filesUnder } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"
import { expectConsistent } from "../support/verify.js"

let devnet: Devnet
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-run-")
beforeAll(async () => {
  devnet = await startDevnet({ seed: 61, blocks: 150 })
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

const urls = () => ["--indexer-url", devnet.indexerUrl, "--router-url", devnet.routerUrl]

/** A pipeline file `name` in a fresh folder outside the repository (no package.json, no node_modules), exporting `definePipeline(definition)` as a user writes it. */
const pipelineFile = (name: string, definition: string, dir = tmp()) => {
  const file = join(dir, name)
  writeFileSync(file, `import { definePipeline } from "chain-lake"\nexport default definePipeline(${definition})\n`)
  return file
}

describe("chain-lake run", () => {
  it("runs the demo pipeline once: every dataset, a round of route quotes, and a run report", async () => {
    const out = tmp()
    const r = await runCli(["run", "demo", "--once", "--out", out, ...urls()])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/demo: ok — blocks \+150, txs \+\d+, .*route_quotes \+80/)
    // the line ends with the lake it wrote: a pipeline's out is relative to where it was run
    expect(r.stdout.trim().split("\n").at(-1)!.endsWith(` → ${out}`)).toBe(true)
    // the export's plan and progress, as `export` prints them (a run was silent until its last line)
    expect(r.stderr).toMatch(/^blocks: +150 blocks to fetch · heights 1\.\.150 · \d+ shards?$/m)
    expect(r.stderr).toMatch(/^blocks +100% · blocks 150 of 150 · 150 rows · (\d+ files? · )?done$/m)
    const reports = readdirSync(join(out, "_runs")).filter((f) => f.includes("pipeline-demo"))
    expect(reports.length).toBe(1)
    const report = JSON.parse(readFileSync(join(out, "_runs", reports[0]), "utf8"))
    expect(report).toMatchObject({ pipeline: "demo", ok: true })
    expect(readdirSync(out)).not.toContain(".chain-lake.lock")
  })

  it("says and reports the requests it asked again, the indexer's and the router's in one tally", async () => {
    let pages = 0
    let routes = 0
    const indexer = await startProxy(devnet.indexerUrl, (r, forward) =>
      r.url.searchParams.has("pagination.limit") && pages++ < 2 ? text(503, "Service Unavailable") : forward()
    )
    const router = await startProxy(devnet.routerUrl, (r, forward) =>
      r.url.pathname.endsWith("/route") && routes++ < 3 ? text(429, "Too Many Requests", { "retry-after": "0" }) : forward()
    )
    try {
      const out = tmp()
      const r = await runCli(["run", "demo", "--once", "--out", out, "--indexer-url", indexer.url, "--router-url", router.url])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/demo: ok — .*, 5 requests asked again \(429 ×3, 503 ×2\) → /)
      const [report] = readdirSync(join(out, "_runs")).filter((f) => f.includes("pipeline-demo"))
      expect(JSON.parse(readFileSync(join(out, "_runs", report), "utf8")).retried).toEqual({ "429": 3, "503": 2 })
    } finally {
      await indexer.close()
      await router.close()
    }
  })

  it("refuses to overlap a live run, and takes over a stale lock", async () => {
    const out = tmp()
    // a lock held by a live process (this test's)
    writeFileSync(join(out, ".chain-lake.lock"), JSON.stringify({ pid: process.pid, pipeline: "other", started: "2026-01-01T00:00:00Z" }))
    const locked = await runCli(["run", "route-quotes", "--out", out, ...urls()])
    expect(locked.code).toBe(1)
    expect(locked.stderr.trim()).toMatch(
      new RegExp(`is being written by pipeline other \\(pid ${process.pid}, since 2026-01-01T00:00:00Z\\); runs never overlap`)
    )
    // a lock whose process is gone
    writeFileSync(join(out, ".chain-lake.lock"), JSON.stringify({ pid: 999_999, pipeline: "crashed", started: "2026-01-01T00:00:00Z" }))
    const stale = await runCli(["run", "route-quotes", "--out", out, ...urls()])
    expect(stale.code, stale.stderr).toBe(0)
    expect(stale.stdout).toMatch(/route-quotes: ok — route_quotes \+80/)
    // an empty lock file (its writer killed between create and write): taken over once it is not brand new
    const lock = join(out, ".chain-lake.lock")
    writeFileSync(lock, "")
    // "just written" as the run sees it (the CLI's start-up takes longer than the 2 s grace)
    const soon = new Date(Date.now() + 30_000)
    utimesSync(lock, soon, soon)
    const young = await runCli(["run", "route-quotes", "--out", out, ...urls()])
    expect(young.code).toBe(1)
    expect(young.stderr.trim()).toBe(
      `chain-lake: error: ${out} is being locked by another run right now; runs never overlap: wait for it or stop it`
    )
    writeFileSync(lock, "")
    const old = new Date(Date.now() - 10_000)
    utimesSync(lock, old, old)
    const empty = await runCli(["run", "route-quotes", "--out", out, ...urls()])
    expect(empty.code, empty.stderr).toBe(0)
  })

  it("--schedule runs on the pipeline's cron (here every second) and reports each run", async () => {
    const out = tmp()
    const file = pipelineFile(
      "every-second.mts",
      `{ name: "every-second", description: "test", datasets: ["blocks"], schedule: "* * * * * *" }`
    )
    const r = await runCli(["run", file, "--schedule", "--max-runs", "2", "--out", out, ...urls()])
    expect(r.code, r.stderr).toBe(0)
    // the first run at the next tick, said at the start
    const first = /running on "\* \* \* \* \* \*" until stopped \(at most 2 runs\); the first at (\S+)/.exec(r.stderr)
    expect(first, r.stderr).not.toBeNull()
    const [report] = readdirSync(join(out, "_runs"))
      .filter((f) => f.includes("every-second"))
      .sort()
    const { startedAt } = JSON.parse(readFileSync(join(out, "_runs", report), "utf8")) as { startedAt: string }
    expect(Date.parse(startedAt)).toBeGreaterThanOrEqual(Date.parse(first![1]))
    const lines = r.stdout.trim().split("\n")
    expect(lines.length).toBe(2)
    expect(lines[0]).toMatch(/every-second: ok — blocks \+150/)
    // the second run finds nothing new: exports are incremental
    expect(lines[1]).toMatch(/every-second: ok — blocks \+0/)
    expect(readdirSync(join(out, "_runs")).filter((f) => f.includes("every-second")).length).toBe(2)
  })

  it("--schedule: a run whose report cannot be written (a full disk, here _runs is a file) is reported as failed, the next tick runs, and the command exits 1", async () => {
    const out = tmp()
    writeFileSync(join(out, "_runs"), "not a folder")
    const file = pipelineFile(
      "every-second.mts",
      `{ name: "every-second", description: "test", datasets: ["blocks"], schedule: "* * * * * *" }`
    )
    const r = await runCli(["run", file, "--schedule", "--max-runs", "2", "--out", out, ...urls()])
    expect(r.code).toBe(1)
    const lines = r.stdout.trim().split("\n")
    expect(lines.length, r.stdout + r.stderr).toBe(2)
    for (const line of lines)
      expect(line).toMatch(/every-second: FAILED — its run report could not be written to .*_runs.*every-second\.json: /)
    expect(r.stderr.trim().split("\n").at(-1)).toBe(
      "chain-lake: error: 2 of 2 runs of every-second failed (see the lines above, and the reports in _runs/)"
    )
    expect(r.stderr).not.toMatch(/\n\s+at /)
    // the data itself was committed by the first run
    expect(JSON.parse(readFileSync(join(out, "blocks", "_manifest.json"), "utf8")).files.length).toBeGreaterThan(0)
  })

  it("a .ts pipeline file outside the package loads; one naming no URL is refused unless run with --devnet", async () => {
    // a folder with no package.json: Node alone would take the .ts file for CommonJS
    const file = pipelineFile("outside.ts", `{ name: "outside", description: "test", datasets: ["blocks"], schedule: "0 0 * * *" }`)
    const out = tmp()
    const withUrl = await runCli(["run", file, "--out", out, ...urls()])
    expect(withUrl.code, withUrl.stderr).toBe(0)
    expect(withUrl.stdout).toMatch(/outside: ok — blocks \+150/)
    // the lake holds what the pipeline exports, and no empty folder for every other dataset
    expect(readdirSync(out).sort()).toEqual([".chain-lake", "_lake.json", "_runs", "blocks"])

    // no URL anywhere: one line, exit 2, nothing written (no lock, no devnet data)
    const bare = tmp()
    const env = { CHAIN_LAKE_INDEXER_URL: "", CHAIN_LAKE_ROUTER_URL: "" }
    const refused = await runCli(["run", file, "--out", bare], { env })
    expect(refused.code).toBe(2)
    expect(refused.stderr.trim()).toMatch(/^chain-lake: error: pipeline outside names no indexer URL: pass --indexer-url URL .*--devnet/)
    expect(refused.stderr.trim().split("\n").length).toBe(1)
    expect(readdirSync(bare)).toEqual([])

    const onDevnet = await runCli(["run", file, "--out", bare, "--devnet"], { env })
    expect(onDevnet.code, onDevnet.stderr).toBe(0)
    expect(onDevnet.stderr).toMatch(/outside: on the embedded devnet \(a simulated chain/)
    expect(onDevnet.stdout).toMatch(/outside: ok — blocks \+1000/)
  })

  it("a path that is no pipeline file, or a file exporting no pipeline, is a one-line error", async () => {
    const missing = await runCli(["run", join(tmp(), "missing.ts"), "--out", tmp()])
    expect(missing.code).toBe(2)
    expect(missing.stderr.trim()).toMatch(/^chain-lake: error: no pipeline file .*missing\.ts/)
    const file = join(tmp(), "five.ts")
    writeFileSync(file, "export default 5\n")
    const bad = await runCli(["run", file, "--out", tmp()])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toMatch(/^chain-lake: error: .*five\.ts does not export a pipeline as default/)
  })

  it("an unknown pipeline is a one-line error naming the pipelines there are", async () => {
    const r = await runCli(["run", "nope", "--out", tmp()])
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe(
      `chain-lake: error: no pipeline "nope": give a file exporting definePipeline(...) as default, or a pipeline's name (daily-snapshot, demo, full-history, route-quotes)`
    )
  })
})

describe("pipeline files anywhere", () => {
  it('a file outside the repository imports definePipeline from "chain-lake", its own modules, and a route plan beside it', async () => {
    const dir = tmp()
    writeFileSync(join(dir, "names.ts"), `export const DATASET: string = "blocks"\n`)
    const plan = {
      pairs: [{ from: { chain_id: "noble-1", denom: "uusdc" }, to: { chain_id: "interwoven-1", denom: "uinit" }, amounts: ["1000000"] }],
      variants: [{ label: "default" }]
    }
    writeFileSync(join(dir, "plan.json"), JSON.stringify(plan))
    writeFileSync(
      join(dir, "mine.ts"),
      `import { definePipeline } from "chain-lake"\nimport { DATASET } from "./names.ts"\nexport default definePipeline({ name: "mine", description: "d", datasets: [DATASET], routePlan: "plan.json", schedule: "0 * * * *" })\n`
    )
    const out = tmp()
    // run from another folder: the plan is found beside the file, not in the working directory
    const r = await runCli(["run", join(dir, "mine.ts"), "--out", out, ...urls()], { cwd: tmp() })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(
      new RegExp(`mine: ok — blocks \\+150, route_quotes \\+1 → ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m")
    )
  })

  it("a definition is decoded strictly: an unknown key, a wrong type or a bad cron field is refused naming the field, exit 2, before anything runs", async () => {
    const base = `name: "strict", description: "d", datasets: ["blocks"]`
    const cases: Array<[string, RegExp]> = [
      [
        `{ ${base}, schedule: "0 * * * *", outt: "elsewhere" }`,
        /: outt: is not a pipeline field \(fields: name, description, datasets, .*\bout\b/
      ],
      [`{ ${base}, schedule: "0 * * * *", keepSnapshots: "3" }`, /: keepSnapshots: Expected number, actual "3"$/],
      [
        `{ ${base}, schedule: "0 * * * *", sources: { indexUrl: "http://x" } }`,
        /: sources\.indexUrl: is not a pipeline field \(fields: indexerUrl, routerUrl\)$/
      ],
      [`{ ${base}, schedule: "0 25 * * *" }`, /: pipeline strict: schedule: hour: 25 is not 0\.\.23$/],
      [`{ ${base}, schedule: "*/0 * * * *" }`, /: schedule: minute: "\*\/0": Expected step value to be greater than 0$/],
      [`{ ${base}, schedule: "0 * * *" }`, /: schedule: "0 \* \* \*" has 4 fields; a cron expression has 5 .* or 6/],
      [`{ ${base}, schedule: "0 * * * *", fromHeight: 9, toHeight: 3 }`, /: fromHeight: 9 is above toHeight 3$/]
    ]
    // a plain object, without definePipeline, is held to the same rules
    const plain = join(tmp(), "plain.ts")
    writeFileSync(plain, `export default { ${base}, schedule: "0 * * * *", outt: "x" }\n`)
    const files = [...cases.map(([definition], i) => pipelineFile(`strict-${i}.ts`, definition)), plain]
    const out = tmp()
    const results = await Promise.all(files.map((f) => runCli(["run", f, "--out", out, ...urls()])))
    for (const [i, r] of results.entries()) {
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1)
      expect(r.stderr.trim()).toMatch(i < cases.length ? cases[i][1] : /plain\.ts: outt: is not a pipeline field/)
      expect(r.stdout).toBe("")
    }
    expect(readdirSync(out)).toEqual([])
  })

  it("a dataset typo is a usage error in run as in export: exit 2, the same words", async () => {
    const file = pipelineFile("typo.ts", `{ name: "typo", description: "d", datasets: ["blocks", "blokcs"], schedule: "0 * * * *" }`)
    const [run, exported] = await Promise.all([
      runCli(["run", file, "--out", tmp(), ...urls()]),
      runCli(["export", "--datasets", "blocks,blokcs", "--out", tmp(), "--indexer-url", devnet.indexerUrl])
    ])
    expect([run.code, exported.code]).toEqual([2, 2])
    const words = "unknown dataset blokcs; known: blocks, txs, "
    expect(run.stderr).toContain(`typo.ts: pipeline typo: datasets: ${words}`)
    expect(exported.stderr).toContain(words)
  })
})

describe("snapshot retention", () => {
  it("keepSnapshots keeps the newest snapshot heights and deletes the rest, manifests first; each run ends by compacting the small files runs leave", async () => {
    const growing = await startDevnet({ seed: 67, blocks: 100, blockTimeMs: 50 })
    const out = tmp()
    const file = pipelineFile(
      "keep-two.mts",
      `{ name: "keep-two", description: "test", datasets: ["nft_collections", "blocks"], schedule: "0 0 * * *", keepSnapshots: 2 }`
    )
    try {
      const lines: Array<string> = []
      for (let i = 0; i < 3; i++) {
        const r = await runCli(["run", file, "--out", out, "--indexer-url", growing.indexerUrl, "--router-url", growing.routerUrl])
        expect(r.code, r.stderr).toBe(0)
        lines.push(r.stdout.trim())
        await new Promise((res) => setTimeout(res, 150))
      }
      // each run committed a new range of blocks, and the run's end merged them with the earlier ones
      expect(lines[2]).toMatch(/; compacted blocks \d+→1 files/)
      expect(filesUnder(join(out, "blocks")).filter((f) => f.endsWith(".parquet"))).toHaveLength(1)
      const blocks = JSON.parse(readFileSync(join(out, "blocks", "_manifest.json"), "utf8"))
      expect(blocks.committed).toHaveLength(1)
      expect(blocks.files[0].rows).toBe(blocks.committed[0][1] - 1)
      const manifest = JSON.parse(readFileSync(join(out, "nft_collections", "_manifest.json"), "utf8"))
      expect(manifest.snapshots.length).toBe(2)
      const onDisk = readdirSync(join(out, "nft_collections")).filter((f) => f.startsWith("snapshot_height="))
      expect(onDisk.sort()).toEqual(manifest.snapshots.map((s: any) => `snapshot_height=${s.snapshot_height}`).sort())
      const reports = readdirSync(join(out, "_runs"))
        .filter((f) => f.includes("keep-two"))
        .sort()
      const last = JSON.parse(readFileSync(join(out, "_runs", reports.at(-1)!), "utf8"))
      expect(last.pruned.nft_collections.length).toBe(1)
      expect((await runCli(["verify", "--data", out])).code).toBe(0)
    } finally {
      await growing.stop()
    }
  })
})

/** What each dataset's manifest in `out` holds: rows and files. */
const heldByManifests = (out: string) => {
  const held = new Map<string, { rows: number; files: number }>()
  for (const dataset of readdirSync(out)) {
    if (!existsSync(join(out, dataset, "_manifest.json"))) continue
    const files = JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")).files as Array<{ rows: number }>
    if (files.length > 0) held.set(dataset, { rows: files.reduce((n, f) => n + f.rows, 0), files: files.length })
  }
  return held
}

/** What a stopped run's report says it committed, as heldByManifests gives it. */
const committedIn = (report: { committed: Array<{ dataset: string; rows: number; files: number }> }) =>
  new Map(report.committed.map((c) => [c.dataset, { rows: c.rows, files: c.files }]))

describe("clean shutdown", () => {
  it("SIGINT in the middle of a run releases the lock and leaves committed state consistent; the next run completes", async () => {
    // slow enough that the run is still going when the first commit lands (the compiled CLI starts in well under a second)
    const slow = await startDevnet({ seed: 73, blocks: 400, latencyMs: 50 })
    const out = tmp()
    try {
      const { spawn } = await import("node:child_process")
      const { BIN } = await import("../support/cli.js")
      const child = spawn(
        process.execPath,
        [BIN, "run", "full-history", "--out", out, "--indexer-url", slow.indexerUrl, "--router-url", slow.routerUrl],
        { stdio: ["ignore", "ignore", "pipe"] }
      )
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)))
      // interrupt once the export has committed blocks and txs (the checks below read both; which commits first depends on the machine's load)
      const committed = (dataset: string) => {
        try {
          return JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")).files.length > 0
        } catch {
          return false
        }
      }
      for (let i = 0; i < 400 && !(committed("txs") && committed("blocks")); i++) await new Promise((res) => setTimeout(res, 50))
      child.kill("SIGINT")
      expect(await exited).toBe(130)
      expect(readdirSync(out)).not.toContain(".chain-lake.lock")
      // the stopped run is reported too
      const reports = readdirSync(join(out, "_runs")).filter((f) => f.endsWith("-pipeline-full-history.json"))
      expect(reports).toHaveLength(1)
      const report = JSON.parse(readFileSync(join(out, "_runs", reports[0]), "utf8"))
      expect(report).toMatchObject({ pipeline: "full-history", ok: false, interrupted: true })
      // with what it committed, said on stderr too: the lake was empty, so exactly what the manifests hold
      expect(committedIn(report)).toEqual(heldByManifests(out))
      expect(stderr).toMatch(
        /^committed by this run before it was stopped: .*txs \+\d+ rows? in \d+ files?.* \(report in _runs\/.*-pipeline-full-history\.json\)$/m
      )
      // consistent, though maybe incomplete (shards commit out of order): no duplicates, and the
      // files on disk are exactly what the manifests committed
      const v = await runCli(["verify", "--data", out])
      expectConsistent(v.stdout)
      const again = await runCli(["run", "full-history", "--out", out, "--indexer-url", slow.indexerUrl, "--router-url", slow.routerUrl])
      expect(again.code, again.stderr).toBe(0)
      const complete = await runCli(["verify", "--data", out])
      expect(complete.code, complete.stdout).toBe(0)
      const [b] = await import("../support/lake.js").then((m) =>
        m.queryLake(`SELECT count(*) n, count(DISTINCT height) d FROM ${m.scan(out, "blocks")}`)
      )
      expect([Number(b.n), Number(b.d)]).toEqual([400, 400])
    } finally {
      await slow.stop()
    }
  })

  it("a run stopped after its route sampling committed (while it reads the router's assets) reports the route quotes it committed, not only the export's", async () => {
    const devnet = await startDevnet({ seed: 74, blocks: 50 })
    // the router's assets answered after 20 s: the round's quotes are committed by then, its reference data not
    const router = await startProxy(devnet.routerUrl, async (request, forward) => {
      if (request.url.pathname.startsWith("/v2/fungible/assets")) await sleep(20_000)
      return forward()
    })
    const out = tmp()
    try {
      const { spawn } = await import("node:child_process")
      const { BIN } = await import("../support/cli.js")
      const child = spawn(process.execPath, [BIN, "run", "route-quotes", "--out", out, "--router-url", router.url], {
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)))
      for (let i = 0; i < 400 && !heldByManifests(out).has("route_quotes"); i++) await sleep(50)
      child.kill("SIGINT")
      expect(await exited, stderr).toBe(130)
      const reports = readdirSync(join(out, "_runs")).filter((f) => f.endsWith("-pipeline-route-quotes.json"))
      const report = JSON.parse(readFileSync(join(out, "_runs", reports[0]), "utf8"))
      expect(report).toMatchObject({ pipeline: "route-quotes", interrupted: true })
      const held = heldByManifests(out)
      expect(held.get("route_quotes")?.rows).toBeGreaterThan(0)
      expect(committedIn(report)).toEqual(held)
      expect(stderr).toMatch(
        new RegExp(
          `^committed by this run before it was stopped: route_quotes \\+${held.get("route_quotes")?.rows} rows in 1 file \\(report in _runs/`,
          "m"
        )
      )
    } finally {
      await router.close()
      await devnet.stop()
    }
  })
})
