/**
 * Readers after a kill between a commit's manifest write and the renames of its files (the files
 * are listed, and wait in the writer's staging folder): query, report, the catalog (when written,
 * and its views in another DuckDB client), verify and publish fail with one line naming the
 * dataset and how many listed files are not in place, never answering with fewer rows; a rerun of
 * the export finishes the commit, and every reader answers whole. Real devnet, real CLI processes.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { hostname } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { makeAnalytics } from "../../src/analytics/Analytics.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { tempDirs } from "../support/tmp.js"

let devnet: Devnet
let lake: string
const { make: tmp, removeAll } = tempDirs("chain-lake-unfinished-")
const EXPORT = (out: string) => ["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks,txs"]
beforeAll(async () => {
  devnet = await startDevnet({ seed: 23, blocks: 80 })
  lake = tmp()
  // four runs, so each dataset has several committed files
  for (const upTo of [["--to-height", "20"], ["--to-height", "40"], ["--to-height", "60"], []]) {
    const r = await runCli([...EXPORT(lake), ...upTo])
    if (r.code !== 0) throw new Error(r.stderr)
  }
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  removeAll()
})

const HOST = hostname().replace(/[^0-9A-Za-z.-]/g, "_")
/** A writer id of this host whose process is gone (no pid is this high). */
const GONE_WRITER = `${HOST}-2147483646-0badc0de`
const listedOf = (out: string, dataset: string) =>
  (JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")) as { files: Array<{ path: string; rows: number }> }).files

/** Moves the first `k` listed files of `dataset` back to `writer`'s staging folder: the lake as a kill between manifest write and renames leaves it. */
const unrename = (out: string, dataset: string, k: number, writer = GONE_WRITER) => {
  const files = listedOf(out, dataset).slice(0, k)
  for (const f of files) {
    const staged = join(out, ".chain-lake", "staging", writer, dataset, f.path) + ".pending"
    mkdirSync(dirname(staged), { recursive: true })
    renameSync(join(out, dataset, f.path), staged)
  }
  return files.map((f) => join(out, ".chain-lake", "staging", writer, dataset, f.path) + ".pending")
}

/** Runs SQL against a catalog file from another DuckDB client, with the lake as its working directory. */
const catalogClient = (dir: string, sql: string) => {
  const script = `
    const { DuckDBInstance } = await import(${JSON.stringify(join(process.cwd(), "node_modules/@duckdb/node-api/lib/index.js"))});
    const i = await DuckDBInstance.create("chain-lake.duckdb", { access_mode: "READ_ONLY" });
    const c = await i.connect();
    try { console.log(JSON.stringify((await c.runAndReadAll(${JSON.stringify(sql)})).getRowsJson())) } catch (e) { console.log(JSON.stringify({ error: e.message })) }`
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, encoding: "utf8" })) as
    | Array<Array<string>>
    | { error: string }
}

const count = async (out: string, dataset: string) => {
  const r = await runCli(["query", "--data", out, `SELECT count(*) AS n FROM ${dataset}`, "--format", "csv"])
  return { ...r, n: r.code === 0 ? Number(r.stdout.trim().split("\n")[1]) : NaN }
}

describe("readers after a kill between a commit's manifest write and its renames", () => {
  it("query, report, catalog, verify and publish fail in one line naming the dataset and the files not in place; a rerun of the export finishes the commit and all answer whole", async () => {
    const out = tmp()
    cpSync(lake, out, { recursive: true })
    const listed = listedOf(out, "txs")
    expect(listed.length).toBeGreaterThanOrEqual(3)
    // the catalog written while the lake was whole: its views read the manifest at each query
    expect((await runCli(["catalog", "--data", out])).code).toBe(0)
    const whole = devnet.chain.txTotal()
    expect(catalogClient(out, "SELECT count(*) FROM txs")).toEqual([[String(whole)]])

    unrename(out, "txs", 2)
    const line = `txs: 2 of the ${listed.length} files its _manifest.json lists are not in place (an export was stopped between writing the manifest and moving its files in): run the export again to finish that commit`
    const oneLine = (r: { code: number | null; stdout: string; stderr: string }, expected: string) => {
      expect(r.code, r.stdout + r.stderr).not.toBe(0)
      expect(r.stderr).toBe(`chain-lake: error: ${expected}\n`)
    }
    const q = await count(out, "txs")
    oneLine(q, line)
    // a lake to repair, not a query to mend (exit 2)
    expect(q.code).toBe(1)
    // through an analytics view too
    oneLine(await runCli(["query", "--data", out, "SELECT sum(txs) FROM daily_activity"]), line)
    // a dataset whose commit is whole still answers
    expect((await count(out, "blocks")).n).toBe(devnet.chain.tip)
    oneLine(await runCli(["report", "--data", out, "--out", join(tmp(), "r.html")]), line)
    oneLine(await runCli(["verify", "--data", out]), line)
    const dest = tmp()
    oneLine(await runCli(["publish", "--data", out, "--to", dest, "--name", "lake", "--version", "1"]), `${line} (nothing was published)`)
    expect(existsSync(join(dest, "lake", "1"))).toBe(false)
    // the catalog written before the kill: its view of txs fails in any client, rather than counting short
    const stale = catalogClient(out, "SELECT count(*) FROM txs")
    expect(stale).toEqual({
      error: expect.stringContaining(`txs: 2 of the ${listed.length} files its _manifest.json lists are not in place`)
    })
    expect(catalogClient(out, "SELECT count(*) FROM blocks")).toEqual([[String(devnet.chain.tip)]])
    // writing the catalog again is refused, and the one there is kept
    oneLine(await runCli(["catalog", "--data", out]), line)
    expect(existsSync(join(out, "chain-lake.duckdb"))).toBe(true)

    // the next export finishes the commit from the staged files
    const rerun = await runCli(EXPORT(out))
    expect(rerun.code, rerun.stderr).toBe(0)
    expect(existsSync(join(out, ".chain-lake", "staging", GONE_WRITER, "txs"))).toBe(false)
    expect((await count(out, "txs")).n).toBe(whole)
    const report = await runCli(["report", "--data", out, "--out", join(tmp(), "r.html")])
    expect(report.code, report.stderr).toBe(0)
    const verify = await runCli(["verify", "--data", out])
    expect(verify.code, verify.stdout + verify.stderr).toBe(0)
    expect(verify.stdout).toContain(`txs: rows equal the manifest's: manifest ${whole}, files ${whole}`)
    const published = await runCli(["publish", "--data", out, "--to", dest, "--name", "lake", "--version", "1"])
    expect(published.code, published.stderr).toBe(0)
    const release = JSON.parse(readFileSync(join(dest, "lake", "1", "manifest.json"), "utf8")) as {
      datasets: Array<{ name: string; rows: number }>
    }
    expect(release.datasets.find((d) => d.name === "txs")?.rows).toBe(whole)
    expect(catalogClient(out, "SELECT count(*) FROM txs")).toEqual([[String(whole)]])
    expect((await runCli(["catalog", "--data", out])).code).toBe(0)
    expect(catalogClient(out, "SELECT count(*), count(DISTINCT tx_hash) FROM txs")).toEqual([[String(whole), String(whole)]])
  }, 240_000)

  it("a listed file that no export staged is a lost file: readers say so, and what to do, in one line", async () => {
    const out = tmp()
    cpSync(lake, out, { recursive: true })
    const listed = listedOf(out, "blocks")
    rmSync(join(out, "blocks", listed[0].path))
    const line = `blocks: 1 of the ${listed.length} files its _manifest.json lists is missing and no export staged it: the lake lost committed files; restore them from a copy, or export into a new --out`
    for (const args of [
      ["query", "--data", out, "SELECT count(*) FROM blocks"],
      ["verify", "--data", out],
      ["catalog", "--data", out]
    ]) {
      const r = await runCli(args)
      expect(r.code, args[0]).not.toBe(0)
      expect(r.stderr, args[0]).toBe(`chain-lake: error: ${line}\n`)
    }
  })

  it("a reader while a live writer is between its manifest write and its renames waits for them, and answers whole", async () => {
    const out = tmp()
    cpSync(lake, out, { recursive: true })
    // staged by this test's process, which is alive: a commit under way
    const staged = unrename(out, "txs", 1, `${HOST}-${process.pid}-00c0ffee`)
    const target = join(out, "txs", listedOf(out, "txs")[0].path)
    const started = Date.now()
    setTimeout(() => renameSync(staged[0], target), 500)
    const rows = await Effect.runPromise(
      Effect.scoped(Effect.flatMap(makeAnalytics({ dataDir: out }), (a) => a.query("SELECT count(*) FROM txs")))
    )
    expect(Date.now() - started).toBeGreaterThanOrEqual(500)
    expect(rows.rows).toEqual([[String(devnet.chain.txTotal())]])
  })
})
