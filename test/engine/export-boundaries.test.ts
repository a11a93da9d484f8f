/**
 * The edges of an export's inputs, as a user meets them through the CLI (real processes, real
 * files, real DuckDB): files of the user's where export would write, a committed file damaged
 * after its commit, and height flags that match nothing or are not plain decimal integers.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { cpSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { parseInteger } from "../../src/cli/integers.js"
import { runCli } from "../support/cli.js"
import { tempDirs } from "../support/tmp.js"

const DATASETS = ["blocks", "txs"]
let devnet: Devnet
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-bounds-")
const exportTo = (out: string, ...more: Array<string>) =>
  runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", DATASETS.join(","), ...more])
const listed = (out: string, dataset: string): Array<{ path: string; bytes: number }> =>
  JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")).files

/** A lake exported to height 30, and the same lake after a run to the tip (60): the files that run added. */
let half = ""
let whole = ""
beforeAll(async () => {
  devnet = await startDevnet({ seed: 21, blocks: 60 })
  half = tmp()
  expect((await exportTo(half, "--to-height", "30")).code).toBe(0)
  whole = tmp()
  cpSync(half, whole, { recursive: true })
  const r = await exportTo(whole)
  expect(r.code, r.stderr).toBe(0)
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

describe("files export did not write", () => {
  it("a file of the user's where a commit would put one is never replaced: one line, exit 1, its bytes unchanged, nothing listed over it", async () => {
    const out = tmp()
    cpSync(half, out, { recursive: true })
    const before = new Set(listed(half, "blocks").map((f) => f.path))
    const next = listed(whole, "blocks").find((f) => !before.has(f.path))!.path
    const theirs = join(out, "blocks", next)
    writeFileSync(theirs, "my own notes, named like a part file")
    const r = await exportTo(out)
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toBe(
      `chain-lake: error: ${theirs} is already there and the lake did not write it (blocks/_manifest.json does not list it): nothing was committed over it; move it out of ${join(out, "blocks")}, or export into a new --out`
    )
    expect(readFileSync(theirs, "utf8")).toBe("my own notes, named like a part file")
    expect(listed(out, "blocks").map((f) => f.path)).not.toContain(next)
  })
})

describe("a folder of the user's as --out", () => {
  it("Parquet files of the user's where a dataset's would go (no manifest lists them) refuse the run before it writes anything: one line, exit 1, the folder as it was", async () => {
    const out = tmp()
    mkdirSync(join(out, "blocks"))
    mkdirSync(join(out, "txs"))
    writeFileSync(join(out, "blocks", "mine.csv"), "a,b\n")
    writeFileSync(join(out, "txs", "part-0.parquet"), "my own Parquet")
    const r = await exportTo(out)
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toBe(
      `chain-lake: error: ${join(out, "txs")} holds 1 Parquet file(s) but no _manifest.json, so nothing says which are committed: restore the manifest, move the folder away, or export into a new --out (nothing was deleted)`
    )
    // (blocks comes first: its manifest and the lake's identity were written before txs was refused)
    expect(readdirSync(out, { recursive: true }).sort()).toEqual([
      "blocks",
      join("blocks", "mine.csv"),
      "txs",
      join("txs", "part-0.parquet")
    ])
    expect(readFileSync(join(out, "txs", "part-0.parquet"), "utf8")).toBe("my own Parquet")
  })
})

describe("a committed file damaged after its commit", () => {
  it("a resumed export stops at once naming it; query and the catalog fail only that dataset's queries", async () => {
    const out = tmp()
    cpSync(whole, out, { recursive: true })
    const victim = listed(out, "blocks")[0]
    const path = join(out, "blocks", victim.path)
    truncateSync(path, 100)
    const resumed = await exportTo(out)
    expect(resumed.code).toBe(1)
    expect(resumed.stderr.trim().split("\n").at(-1)).toBe(
      `chain-lake: error: ${path} is 100 bytes, but blocks/_manifest.json lists it at ${victim.bytes}: the committed file was damaged (cut short or overwritten); restore it from a copy, or export into a new --out (chain-lake verify checks every file)`
    )
    const txs = await runCli(["query", "--data", out, "SELECT count(*) AS n FROM txs", "--format", "json"])
    expect(txs.code, txs.stderr).toBe(0)
    expect(Number(JSON.parse(txs.stdout)[0].n)).toBe(devnet.chain.txTotal())
    const blocks = await runCli(["query", "--data", out, "SELECT count(*) FROM blocks"])
    // a damaged lake, not a mistake in the query (which exits 2)
    expect(blocks.code).toBe(1)
    // named: the one file of blocks whose bytes are not its commit's
    const damage = `blocks/${victim.path} cannot be read`
    expect(blocks.stderr.startsWith(`chain-lake: error: ${damage} (`), blocks.stderr).toBe(true)
    expect(blocks.stderr).toMatch(/\): the file is damaged; restore it from a copy, or export blocks again into a new folder\n$/)

    const catalog = await runCli(["catalog", "--data", out])
    expect(catalog.code, catalog.stderr).toBe(0)
    expect(catalog.stderr).toMatch(
      /^chain-lake: warning: a view of this catalog fails every query until the lake is repaired and the catalog written again: blocks\/\S+\.parquet cannot be read/m
    )
    const instance = await DuckDBInstance.create(":memory:")
    const conn = await instance.connect()
    try {
      await conn.run(`ATTACH '${join(out, "chain-lake.duckdb")}' AS cat (READ_ONLY)`)
      await conn.run(`SET file_search_path = '${out}'`)
      const count = async (view: string) =>
        Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM cat.${view}`)).getRowObjectsJS()[0].n)
      expect(await count("txs")).toBe(devnet.chain.txTotal())
      await expect(count("blocks")).rejects.toThrow(damage)
    } finally {
      conn.closeSync()
      instance.closeSync()
    }
  })
})

describe("height and count flags", () => {
  it("read plain decimal integers only", () => {
    expect(parseInteger("16")).toBe(16)
    expect(parseInteger("-3")).toBe(-3)
    expect(parseInteger("007")).toBe(7)
    for (const text of ["1e15", "0x10", "+5", " 5", "5 ", "5.0", "1_000", "", "0b1", "Infinity"])
      expect(typeof parseInteger(text), text).toBe("string")
    expect(parseInteger("0x10")).toBe(
      "'0x10' is not an integer: only plain decimal digits are read (no exponent, hex, fraction, + or spaces)"
    )
    expect(parseInteger("many")).toBe("'many' is not an integer")
    expect(parseInteger("9007199254740993")).toBe("'9007199254740993' is too large (at most 9007199254740991)")
  })

  it("refuse other syntaxes and a height of 0 before anything starts, in every command", async () => {
    const out = join(tmp(), "lake")
    const cases: Array<[Array<string>, string]> = [
      [
        ["export", "--devnet", "--out", out, "--from-height", "1e15"],
        "chain-lake: error: --from-height: '1e15' is not an integer: only plain decimal digits are read (no exponent, hex, fraction, + or spaces) (chain-lake export --help lists the flags)"
      ],
      [
        ["export", "--devnet", "--out", out, "--to-height", "0"],
        "chain-lake: error: --to-height must be at least 1 (heights start at 1), got 0"
      ],
      [
        ["devnet", "--blocks", "0x10"],
        "chain-lake: error: --blocks: '0x10' is not an integer: only plain decimal digits are read (no exponent, hex, fraction, + or spaces) (chain-lake devnet --help lists the flags)"
      ]
    ]
    for (const [args, line] of cases) {
      const r = await runCli(args)
      expect([r.code, r.stderr.trim()], args.join(" ")).toEqual([2, line])
    }
  })

  it("a range the chain does not have exits 0 saying what was asked and that nothing matched", async () => {
    const out = tmp()
    cpSync(whole, out, { recursive: true })
    const r = await exportTo(out, "--from-height", "100", "--to-height", "120")
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/^blocks: nothing to export: heights 100\.\.120 were asked for, and the source has 1\.\.60 \(height\)$/m)
    expect(r.stderr).toMatch(/^txs: nothing to export: heights 100\.\.120 were asked for, and the source has 1\.\.60 \(height\)$/m)
    expect(r.stdout).toMatch(/ nothing at heights 100\.\.120 \(the tip is 60\) in /)
    expect(listed(out, "blocks")).toEqual(listed(whole, "blocks"))
  })
})
