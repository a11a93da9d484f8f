/**
 * publish + validate: a release holds exactly the committed files with their checksums, a
 * Frictionless datapackage and a dataset card; validate finds a tampered file, a missing one and
 * an unlisted one; a version is never overwritten.
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { queryLake } from "../support/lake.js"

let devnet: Devnet
let data: string
let dest: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 47, blocks: 120 })
  data = mkdtempSync(join(tmpdir(), "chain-lake-pub-"))
  dest = mkdtempSync(join(tmpdir(), "chain-lake-rel-"))
  const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", data])
  if (r.code !== 0) throw new Error(r.stderr)
  // a leftover that no manifest lists must not be published
  writeFileSync(join(data, "blocks", "height_bucket=0", "stray.parquet"), "not parquet")
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  rmSync(data, { recursive: true, force: true })
  rmSync(dest, { recursive: true, force: true })
})

/** Publishes the lake as version `version` of "lake": the release folder and its manifest, read back. */
const published = async (version: string) => {
  const p = await runCli(["publish", "--data", data, "--to", dest, "--name", "lake", "--version", version])
  expect(p.code, p.stderr).toBe(0)
  const release = join(dest, "lake", version)
  const manifestPath = join(release, "manifest.json")
  return { release, manifestPath, manifest: JSON.parse(readFileSync(manifestPath, "utf8")) }
}

describe("publish and validate", () => {
  it("publishes committed files with manifest, datapackage and dataset card; validate passes; versions are immutable", async () => {
    const p = await runCli(["publish", "--data", data, "--to", dest, "--name", "lake", "--version", "1.0.0", "--license", "CC-BY-4.0"])
    expect(p.code, p.stderr).toBe(0)
    const release = join(dest, "lake", "1.0.0")
    const manifest = JSON.parse(readFileSync(join(release, "manifest.json"), "utf8"))
    const blocks = manifest.datasets.find((d: any) => d.name === "blocks")
    expect(blocks.rows).toBe(120)
    expect(
      blocks.files.every((f: any) => /^blocks\/height_bucket=0\/part-h\d+-\d+-\d+\.parquet$/.test(f.path) && f.sha256.length === 64)
    ).toBe(true)
    expect(manifest.datasets.find((d: any) => d.name === "holders").files[0].snapshot_height).toBe(115)
    const pkg = JSON.parse(readFileSync(join(release, "datapackage.json"), "utf8"))
    expect(pkg.licenses).toEqual([{ name: "CC-BY-4.0" }])
    const txs = pkg.resources.find((r: any) => r.name === "txs")
    expect(txs.schema.fields.find((f: any) => f.name === "height")).toMatchObject({ type: "integer", "x-parquet-type": "BIGINT" })
    expect(txs.schema.fields.find((f: any) => f.name === "fee")).toMatchObject({ "x-parquet-type": "JSON" })
    // the analyst datasets are published with their columns
    for (const [name, column] of [
      ["token_transfers_evm", "amount"],
      ["token_transfers_cosmos", "from_address"],
      ["nft_transfers", "token_id"]
    ]) {
      const resource = pkg.resources.find((r: any) => r.name === name)
      expect(resource, name).toBeDefined()
      expect(
        resource.schema.fields.map((f: any) => f.name),
        name
      ).toContain(column)
    }
    const card = readFileSync(join(release, "README.md"), "utf8")
    for (const d of manifest.datasets) for (const c of d.columns) expect(card).toContain(`| \`${c.name}\` |`)
    // what of the chain each dataset holds: the whole of it here
    expect(blocks.coverage).toEqual({ unit: "height", committed: [[1, 121]], missing_heights: [], snapshots: [], quarantined: 0 })
    expect(card).toContain("Heights 1-120 committed, without a gap.")
    expect(manifest.datasets.find((d: any) => d.name === "holders").coverage.snapshots).toEqual([
      { snapshot_height: 115, consistency: "exact" }
    ])
    expect(card).toContain("Snapshot at height 115: exact.")
    expect(p.stderr).not.toContain("does not hold heights")
    const v = await runCli(["validate", release])
    expect(v.code, v.stderr).toBe(0)
    expect(v.stdout).toMatch(/checksums, row counts and schemas all match/)
    const again = await runCli(["publish", "--data", data, "--to", dest, "--name", "lake", "--version", "1.0.0"])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/a published version is never overwritten/)
  })

  it("a release of part of a chain says so: the heights a dataset does not hold (an export from a later height) in its manifest.json, its README and a notice", async () => {
    const lake = mkdtempSync(join(tmpdir(), "chain-lake-pub-gap-"))
    try {
      for (const range of [
        ["--to-height", "40"],
        ["--from-height", "81"]
      ]) {
        const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", lake, "--datasets", "blocks,txs", ...range])
        expect(r.code, r.stderr).toBe(0)
      }
      const p = await runCli(["publish", "--data", lake, "--to", dest, "--name", "gap", "--version", "1"])
      expect(p.code, p.stderr).toBe(0)
      const release = join(dest, "gap", "1")
      const manifest = JSON.parse(readFileSync(join(release, "manifest.json"), "utf8"))
      const coverage = (name: string) => manifest.datasets.find((d: any) => d.name === name).coverage
      expect(coverage("blocks")).toEqual({
        unit: "height",
        committed: [
          [1, 41],
          [81, 121]
        ],
        missing_heights: [[41, 81]],
        snapshots: [],
        quarantined: 0
      })
      // txs by list position: the heights between its two spans, those at either side held in part
      expect(coverage("txs").unit).toBe("position")
      expect(coverage("txs").missing_heights).toHaveLength(1)
      const [[from, to]] = coverage("txs").missing_heights
      expect([from <= 41, to >= 81]).toEqual([true, true])
      const card = readFileSync(join(release, "README.md"), "utf8")
      expect(card).toContain("Heights 1-40, 81-120 committed; **not held: heights 41-80** (not exported when this was published).")
      expect(p.stderr).toContain("chain-lake: notice: blocks does not hold heights 41-80 (not exported yet)")
      expect(p.stderr).toContain("chain-lake: notice: txs does not hold heights")
      const v = await runCli(["validate", release])
      expect(v.code, v.stderr).toBe(0)
    } finally {
      rmSync(lake, { recursive: true, force: true })
    }
  })

  it("a release of a lake with quarantined records says that rows are left out (manifest.json, README, a notice), never 'without a gap'", async () => {
    const faulty = await startDevnet({ seed: 47, blocks: 120, faults: "malformed=0.5" })
    const lake = mkdtempSync(join(tmpdir(), "chain-lake-pub-quarantine-"))
    try {
      const r = await runCli([
        "export",
        "--indexer-url",
        faulty.indexerUrl,
        "--out",
        lake,
        "--datasets",
        "blocks",
        "--page-size",
        "10",
        "--on-invalid",
        "quarantine"
      ])
      expect(r.code, r.stderr).toBe(0)
      const records = readFileSync(join(lake, "_quarantine", "blocks.ndjson"), "utf8")
        .trim()
        .split("\n").length
      expect(records).toBeGreaterThan(0)
      const p = await runCli(["publish", "--data", lake, "--to", dest, "--name", "quarantined", "--version", "1"])
      expect(p.code, p.stderr).toBe(0)
      const release = join(dest, "quarantined", "1")
      const [blocks] = JSON.parse(readFileSync(join(release, "manifest.json"), "utf8")).datasets
      expect([blocks.rows, blocks.coverage.quarantined]).toEqual([120 - records, records])
      const card = readFileSync(join(release, "README.md"), "utf8")
      expect(card).toContain(`Heights 1-120 committed; **${records} records left out**: they broke the schema and were quarantined`)
      expect(card).not.toContain("without a gap")
      expect(p.stderr).toContain(`chain-lake: notice: blocks lacks the rows of ${records} records: they broke the schema`)
      expect((await runCli(["validate", release])).code).toBe(0)
    } finally {
      await faulty.stop()
      rmSync(lake, { recursive: true, force: true })
    }
  })

  it("a release validate would reject is not published: a manifest whose rows were edited by hand (the checksums still match) is refused in one line, nothing left in --to", async () => {
    const lake = mkdtempSync(join(tmpdir(), "chain-lake-pub-rows-"))
    const to = mkdtempSync(join(tmpdir(), "chain-lake-rel-rows-"))
    try {
      const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", lake, "--datasets", "blocks", "--to-height", "50"])
      expect(r.code, r.stderr).toBe(0)
      const path = join(lake, "blocks", "_manifest.json")
      const manifest = JSON.parse(readFileSync(path, "utf8"))
      manifest.files[0].rows += 10
      writeFileSync(path, JSON.stringify(manifest))
      const p = await runCli(["publish", "--data", lake, "--to", to, "--name", "edited", "--version", "1"])
      expect(p.code).toBe(1)
      expect(p.stderr.trim().split("\n")).toHaveLength(1)
      expect(p.stderr.trim()).toMatch(
        /^chain-lake: error: the release would not validate: blocks\/\S+: \d+ rows, the manifest says \d+.*; nothing was published$/
      )
      expect(readdirSync(join(to, "edited"))).toEqual([])
    } finally {
      rmSync(lake, { recursive: true, force: true })
      rmSync(to, { recursive: true, force: true })
    }
  })

  it("--version is the release's wherever it stands, also as --version=V and --release-version V (first, chain-lake's own --version won: it printed 0.1.0, exit 0)", async () => {
    for (const [args, version] of [
      [["--version", "first"], "first"],
      [["--version=eq"], "eq"],
      [["--release-version", "alias"], "alias"]
    ] as const) {
      const p = await runCli(["publish", ...args, "--data", data, "--to", dest, "--name", "flags"])
      expect(p.code, `${args.join(" ")}: ${p.stderr}`).toBe(0)
      expect(p.stdout.trim()).toMatch(
        new RegExp(`^published \\d+ datasets \\(\\d+ files\\) to ${join(dest, "flags", version).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`)
      )
    }
  })

  it("validate names each mismatch: a tampered file, a missing file and an unlisted file", async () => {
    const p = await runCli(["publish", "--data", data, "--to", dest, "--name", "lake", "--version", "2"])
    expect(p.code, p.stderr).toBe(0)
    const release = join(dest, "lake", "2")
    const manifest = JSON.parse(readFileSync(join(release, "manifest.json"), "utf8"))
    const files = manifest.datasets.flatMap((d: any) => d.files.map((f: any) => f.path))
    appendFileSync(join(release, files[0]), "x")
    unlinkSync(join(release, files[1]))
    copyFileSync(join(release, files[2]), join(release, files[2].replace(/\.parquet$/, "-copy.parquet")))
    const v = await runCli(["validate", release])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(`mismatch: ${files[0]}: sha256`)
    expect(v.stderr).toContain(`mismatch: ${files[1]}: missing`)
    expect(v.stderr).toContain(`mismatch: ${files[2].replace(/\.parquet$/, "-copy.parquet")}: not in the manifest`)
    expect(v.stderr.trim().split("\n").at(-1)).toMatch(/^chain-lake: error: \d+ mismatches in lake 2$/)
  })

  it("validate refuses a manifest that lists a file or a dataset twice, a dataset total its files do not add up to, and a datapackage that points elsewhere", async () => {
    const { release, manifestPath, manifest } = await published("twice")
    const [first, second] = manifest.datasets
    writeFileSync(
      manifestPath,
      JSON.stringify({
        ...manifest,
        datasets: [
          { ...first, files: [...first.files, first.files[0]], rows: first.rows + first.files[0].rows },
          { ...second, rows: second.rows + 1 },
          ...manifest.datasets.slice(1)
        ]
      })
    )
    const packagePath = join(release, "datapackage.json")
    const pkg = JSON.parse(readFileSync(packagePath, "utf8"))
    pkg.resources[0].path = ["../../etc/passwd"]
    writeFileSync(packagePath, JSON.stringify(pkg))
    const v = await runCli(["validate", release])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(`mismatch: ${first.files[0].path}: listed twice in manifest.json`)
    expect(v.stderr).toContain(`mismatch: ${second.name}: ${second.rows + 1} rows in manifest.json, but its files list ${second.rows}`)
    expect(v.stderr).toContain(`mismatch: ${second.name}: listed twice in manifest.json`)
    expect(v.stderr).toContain(`mismatch: datapackage.json: ${pkg.resources[0].name} lists "../../etc/passwd", outside the release folder`)
  })

  it("a file that predates a column validates (it lacks the column, in order); a file with a column the schema lacks does not", async () => {
    const p = await runCli(["publish", "--data", data, "--to", dest, "--name", "lake", "--version", "older-columns"])
    expect(p.code, p.stderr).toBe(0)
    const release = join(dest, "lake", "older-columns")
    const manifestPath = join(release, "manifest.json")
    const rewrite = async (select: string) => {
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8"))
      const txs = manifest.datasets.find((d: any) => d.name === "txs")
      const entry = txs.files[0]
      const path = join(release, entry.path)
      await queryLake(`COPY (SELECT ${select} FROM read_parquet('${path}', hive_partitioning = false)) TO '${path}.new' (FORMAT PARQUET)`)
      renameSync(`${path}.new`, path)
      entry.bytes = statSync(path).size
      entry.sha256 = createHash("sha256").update(readFileSync(path)).digest("hex")
      writeFileSync(manifestPath, JSON.stringify(manifest))
      return entry.path as string
    }
    await rewrite("* EXCLUDE (sender_address)")
    const older = await runCli(["validate", release])
    expect(older.code, older.stderr).toBe(0)
    const renamed = await rewrite("* RENAME (sender_bech32 AS signer)")
    const v = await runCli(["validate", release])
    expect(v.code).toBe(1)
    expect(v.stderr).toContain(`mismatch: ${renamed}: columns `)
  })

  it("a release manifest of the wrong shape is one line naming the field, exit 1, nothing read", async () => {
    const { release, manifestPath, manifest } = await published("shape-check")
    for (const [broken, field] of [
      [
        { ...manifest, datasets: [{ ...manifest.datasets[0], files: [{ ...manifest.datasets[0].files[0], bytes: "12" }] }] },
        "datasets[0].files[0].bytes"
      ],
      [{ ...manifest, datasets: [{ ...manifest.datasets[0], files: "all" }] }, "datasets[0].files"],
      [
        { ...manifest, datasets: [{ ...manifest.datasets[0], files: [{ ...manifest.datasets[0].files[0], sha256: "../../x" }] }] },
        "datasets[0].files[0].sha256"
      ]
    ] as const) {
      writeFileSync(manifestPath, JSON.stringify(broken))
      const v = await runCli(["validate", release])
      expect(v.code, v.stderr).toBe(1)
      expect(v.stderr.trim().split("\n")).toHaveLength(1)
      expect(v.stderr).toContain(`is not a release manifest: at ${field}:`)
    }
    writeFileSync(manifestPath, "{not json")
    const v = await runCli(["validate", release])
    expect(v.stderr.trim()).toMatch(/manifest\.json is not JSON/)
  })

  it("paths that leave their folder: a lake manifest entry is refused by publish, a release's by validate; nothing outside is read or written", async () => {
    const lake = mkdtempSync(join(tmpdir(), "chain-lake-pub-hostile-"))
    try {
      const e = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", lake, "--datasets", "blocks"])
      expect(e.code, e.stderr).toBe(0)
      writeFileSync(join(lake, "planted.txt"), "a file outside the dataset folder")
      const manifestPath = join(lake, "blocks", "_manifest.json")
      const m = JSON.parse(readFileSync(manifestPath, "utf8"))
      writeFileSync(manifestPath, JSON.stringify({ ...m, files: [...m.files, { ...m.files[0], path: "../planted.txt" }] }))
      const p = await runCli(["publish", "--data", lake, "--to", dest, "--name", "hostile", "--version", "1"])
      expect(p.code).toBe(1)
      expect(p.stderr.trim()).toBe(
        `chain-lake: error: cannot read the manifest of blocks: ${manifestPath} is damaged at files[${m.files.length}].path: a path inside the dataset folder (relative, forward slashes, no . or .. parts)`
      )
      expect(existsSync(join(dest, "hostile"))).toBe(false)
      // a release whose manifest lists a path out of it: reported, never read
      // a killed publish of version 3 left its staging folder: the next publish clears it
      const gone = spawnSync(process.execPath, ["-e", "0"]).pid
      mkdirSync(join(dest, "lake", `3.tmp-${gone}`, "blocks"), { recursive: true })
      const ok = await runCli(["publish", "--data", data, "--to", dest, "--name", "lake", "--version", "3"])
      expect(ok.code, ok.stderr).toBe(0)
      const release = join(dest, "lake", "3")
      const rm = JSON.parse(readFileSync(join(release, "manifest.json"), "utf8"))
      rm.datasets[0].files.push({ ...rm.datasets[0].files[0], path: "../../../etc/passwd" })
      writeFileSync(join(release, "manifest.json"), JSON.stringify(rm))
      expect(readdirSync(join(dest, "lake")).filter((f) => f.includes(".tmp-"))).toEqual([])
      const v = await runCli(["validate", release])
      expect(v.code).toBe(1)
      expect(v.stderr).toContain("mismatch: ../../../etc/passwd: leaves the release folder (an untrusted manifest?); not read")
    } finally {
      rmSync(lake, { recursive: true, force: true })
    }
  })
})
