/**
 * Issue 34's boundaries, as a user (or an adversary) runs the CLI: `query` reads the lake and
 * nothing else, within a memory limit and a timeout; no output flag writes into a lake's own
 * files, however the path is spelled; an empty output path is refused. Real lake (a devnet
 * export), real DuckDB, real processes; the lake is hashed before and after each refusal.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { committedFiles, hashTree, queryLake } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

let devnet: Devnet
let data: string
const { make: tmp, removeAll } = tempDirs("chain-lake-bounds-")
beforeAll(async () => {
  devnet = await startDevnet({ seed: 34, blocks: 60 })
  data = tmp()
  const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", data, "--datasets", "blocks,txs"])
  if (r.code !== 0) throw new Error(r.stderr)
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  removeAll()
})

/** Every file with its hash, and every folder (a refused write must not leave an empty folder either). */
const tree = (dir: string) => ({
  files: hashTree(dir),
  dirs: (readdirSync(dir, { recursive: true, withFileTypes: true }) as Array<{ isDirectory(): boolean; parentPath: string; name: string }>)
    .filter((e) => e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort()
})

/** One line on stderr, no stack trace. */
const oneLine = (stderr: string) => {
  const lines = stderr.trim().split("\n")
  expect(lines, stderr).toHaveLength(1)
  expect(stderr).not.toMatch(/\n\s+at /)
  return lines[0]
}

describe("query reads only the lake", () => {
  it("answers over the views, also through a symlinked --data, and refuses files outside the lake", async () => {
    const [{ n }] = await queryLake(`SELECT count(*) AS n FROM read_parquet('${data}/txs/**/*.parquet')`)
    const outside = tmp()
    symlinkSync(data, join(outside, "lake"))
    for (const d of [data, join(outside, "lake")]) {
      const r = await runCli(["query", "--data", d, "SELECT count(*) AS n FROM txs", "--format", "csv"])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout.trim()).toBe(`n\n${n}`)
    }
    // a secret beside the lake, and the usual targets
    const secret = join(outside, "secret.txt")
    writeFileSync(secret, "TOP-SECRET-34\n")
    for (const sql of [
      "SELECT * FROM read_text('/etc/passwd')",
      "SELECT * FROM read_text('/proc/self/environ')",
      "SELECT * FROM glob('/root/*')",
      `SELECT * FROM read_text('${secret}')`,
      `SELECT * FROM read_text('${data}/../${relative(join(data, ".."), secret)}')`,
      `SELECT * FROM read_csv('${secret}')`
    ]) {
      const r = await runCli(["query", "--data", data, sql, "--format", "csv"])
      expect(r.code, `${sql}\n${r.stdout}`).toBe(2)
      expect(oneLine(r.stderr), sql).toMatch(/query reads only the lake/)
      expect(r.stdout + r.stderr).not.toMatch(/root:|TOP-SECRET|PATH=/)
    }
  }, 60_000)

  it("the sandbox cannot be switched off from SQL", async () => {
    for (const sql of [
      "SET enable_external_access = true",
      "SET lock_configuration = false",
      "SELECT * FROM (SELECT 1) WHERE (SELECT 1 FROM read_text('/etc/passwd')) IS NULL"
    ]) {
      const r = await runCli(["query", "--data", data, sql])
      expect(r.code, sql).toBe(2)
      expect(r.stdout + r.stderr).not.toMatch(/root:/)
    }
  }, 30_000)

  it("stops at --timeout with one line and a non-zero exit", async () => {
    const started = Date.now()
    const r = await runCli(
      ["query", "--data", data, "--timeout", "2s", "SELECT count(*) FROM range(10000000000000) t(i) WHERE i % 7 = 3"],
      { timeoutMs: 40_000 }
    )
    expect(r.code).toBe(1)
    expect(oneLine(r.stderr)).toMatch(/ran past --timeout 2s/)
    expect(Date.now() - started).toBeLessThan(30_000)
  }, 45_000)

  it("stops at --memory-limit with one line naming it", async () => {
    const r = await runCli(
      ["query", "--data", data, "--memory-limit", "128MB", "SELECT length(string_agg(md5(i::varchar), ',')) FROM range(100000000) t(i)"],
      { timeoutMs: 60_000 }
    )
    expect(r.code).toBe(1)
    expect(oneLine(r.stderr)).toMatch(/more memory than --memory-limit 128MB/)
  }, 70_000)

  it("refuses a --timeout or --memory-limit it cannot read", async () => {
    for (const args of [
      ["--timeout", "5"],
      ["--timeout", "soon"],
      ["--memory-limit", "lots"]
    ]) {
      const r = await runCli(["query", "--data", data, ...args, "SELECT 1"])
      expect(r.code, args.join(" ")).toBe(2)
      oneLine(r.stderr)
    }
  }, 30_000)
})

describe("no output flag writes into a lake's own files", () => {
  it("query --output, query --format parquet --output, report --out and catalog --db refuse every path inside the lake, however spelled", async () => {
    const file = committedFiles(data).find((f) => f.path.startsWith("txs/"))!
    const parquet = join(data, file.path)
    const side = tmp()
    symlinkSync(join(data, "txs"), join(side, "txs-link"))
    // a link to where a dataset file would be: writing through it creates the target
    symlinkSync(join(data, "blocks", "new.parquet"), join(side, "dangling.csv"))
    const targets = [
      parquet,
      join(data, "txs", "_manifest.json"),
      join(data, "_lake.json"),
      join(data, ".chain-lake", "staging", "x"),
      join(data, "blocks", "fresh", "x.csv"),
      `${data}/blocks/../txs/_manifest.json`,
      join(side, "txs-link", file.path.replace(/^txs\//, "")),
      // `..` after a link is taken from the link's target, as the kernel does: this is DATA/_lake.json
      `${side}/txs-link/../_lake.json`,
      join(side, "dangling.csv"),
      // the only copy of what a run skipped (verify reads it), and a pipeline's lock (its runs overlapped once it was overwritten)
      join(data, "_quarantine", "txs.ndjson"),
      join(data, ".chain-lake.lock")
    ]
    const before = tree(data)
    for (const target of targets) {
      for (const args of [
        ["query", "--data", data, "SELECT 1 AS x", "--output", target],
        ["query", "--data", data, "SELECT 1 AS x", "--format", "parquet", "--output", target],
        ["report", "--data", data, "--out", target],
        ["catalog", "--data", data, "--db", target]
      ]) {
        const r = await runCli(args)
        expect(r.code, `${args.join(" ")}\n${r.stderr}`).toBe(2)
        expect(oneLine(r.stderr)).toMatch(/is inside the lake at .*: a command never writes over the lake's own files/)
      }
    }
    expect(tree(data)).toEqual(before)
  }, 180_000)

  it("publish never writes its release among the lake's own files: --to the lake with a dataset's name, or through a link to a dataset folder", async () => {
    const side = tmp()
    symlinkSync(join(data, "txs"), join(side, "m"))
    const before = tree(data)
    for (const [to, name] of [
      [data, "txs"],
      [side, "m"]
    ]) {
      const r = await runCli(["publish", "--data", data, "--to", to, "--name", name, "--version", "1"])
      expect(r.code, r.stderr).toBe(2)
      expect(oneLine(r.stderr)).toMatch(
        /^chain-lake: error: the release folder \(--to\/--name\/--version\) \S+ is inside the lake at .* \(txs\), among its own files/
      )
    }
    expect(tree(data)).toEqual(before)
    // beside the lake, or in its top folder under a name of its own, a release is written
    const r = await runCli(["publish", "--data", data, "--to", side, "--name", "chain", "--version", "1"])
    expect(r.code, r.stderr).toBe(0)
  }, 60_000)

  it("a dataset or partition folder that is a link out of the lake: every command says so in one line, and compact and rollback touch nothing behind it", async () => {
    const lake = tmp()
    const side = tmp()
    cpSync(data, lake, { recursive: true })
    const partition = readdirSync(join(lake, "txs")).find((f) => f.startsWith("height_bucket="))!
    renameSync(join(lake, "txs", partition), join(side, "txs-part"))
    symlinkSync(join(side, "txs-part"), join(lake, "txs", partition))
    renameSync(join(lake, "blocks"), join(side, "blocks"))
    symlinkSync(join(side, "blocks"), join(lake, "blocks"))
    const outside = tree(side)
    for (const args of [
      ["query", "--data", lake, "SELECT count(*) FROM txs"],
      ["verify", "--data", lake],
      ["compact", "--data", lake, "--grace", "0s"],
      ["rollback", "--data", lake, "--to-height", "30"]
    ]) {
      const r = await runCli(args)
      expect(r.code, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(1)
      expect(r.stdout + r.stderr, args[0]).toMatch(/(txs\/height_bucket=\d+|blocks) is a link to .*: a lake's folders are its own/)
      expect(r.stderr, args[0]).not.toMatch(/\n\s+at /)
    }
    expect(tree(side)).toEqual(outside)
  }, 120_000)

  it("a statement that writes is refused before DuckDB prepares it: EXPORT DATABASE into a dataset folder leaves no folder behind", async () => {
    const before = tree(data)
    for (const sql of [
      `EXPORT DATABASE '${data}/txs/_manifest.lock'`,
      `COPY (SELECT 1 AS height) TO '${data}/blocks/over.parquet' (FORMAT PARQUET)`,
      // a PRAGMA that is no read, by its name (it reached DuckDB: "INTERNAL Error: Failed to cast statement")
      `PRAGMA import_database('${data}')`
    ]) {
      const r = await runCli(["query", "--data", data, sql])
      expect(r.code, sql).toBe(2)
      expect(oneLine(r.stderr)).toMatch(/only statements that read are run here .*, not (EXPORT|COPY|PRAGMA import_database)/)
    }
    const info = await runCli(["query", "--data", data, "PRAGMA table_info('blocks')"])
    expect(info.code, info.stderr).toBe(0)
    expect(tree(data)).toEqual(before)
  }, 30_000)

  it("outputs beside the lake, and its defaults in the lake's top folder, are still written", async () => {
    const side = tmp()
    const r1 = await runCli(["query", "--data", data, "SELECT 7 AS x", "--format", "parquet", "--output", join(side, "x.parquet")])
    expect(r1.code, r1.stderr).toBe(0)
    const [{ x }] = await queryLake(`SELECT x FROM '${join(side, "x.parquet")}'`)
    expect(x).toBe(7)
    const r2 = await runCli(["catalog", "--data", data])
    expect(r2.code, r2.stderr).toBe(0)
    const r3 = await runCli(["report", "--data", data])
    expect(r3.code, r3.stderr).toBe(0)
    expect(readFileSync(join(data, "report.html"), "utf8")).toMatch(/<html/i)
  }, 60_000)

  it("an empty or blank output path is refused by every command that writes one, and nothing is written in the working directory", async () => {
    const cwd = tmp()
    const pipelineDir = tmp()
    mkdirSync(join(pipelineDir, "x"))
    for (const blank of ["", "  "]) {
      for (const args of [
        ["query", "--data", data, "SELECT 1", "--output", blank],
        ["report", "--data", data, "--out", blank],
        ["catalog", "--data", data, "--db", blank],
        ["export", "--indexer-url", devnet.indexerUrl, "--out", blank],
        ["run", "demo", "--devnet", "--out", blank]
      ]) {
        const r = await runCli(args, { cwd })
        expect(r.code, `${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(2)
        expect(oneLine(r.stderr)).toMatch(/is empty/)
      }
    }
    expect(readdirSync(cwd)).toEqual([])
  }, 120_000)
})
