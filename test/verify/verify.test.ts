/** `chain-lake verify`: passes on a clean export, and names what is wrong on a damaged one or against another chain. */
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Layer } from "effect"
import { layerAnalytics } from "../../src/analytics/Analytics.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { layerManifests } from "../../src/lake/Manifests.js"
import { pinManifests, verifyLake, verifyLakeAt } from "../../src/verify/verify.js"
import { runCli } from "../support/cli.js"
import { queryLake } from "../support/lake.js"

let devnet: Devnet
let other: Devnet
let data: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 53, blocks: 150 })
  other = await startDevnet({ seed: 54, blocks: 150 })
  data = mkdtempSync(join(tmpdir(), "chain-lake-verify-"))
  const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", data, "--datasets", "blocks,txs,evm_txs,evm_logs"])
  if (r.code !== 0) throw new Error(r.stderr)
}, 120_000)
afterAll(async () => {
  await Promise.all([devnet.stop(), other.stop()])
  rmSync(data, { recursive: true, force: true })
})

describe("chain-lake verify", () => {
  it("passes on a clean export, against its own indexer", async () => {
    const r = await runCli(["verify", "--data", data, "--indexer-url", devnet.indexerUrl])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^ok +blocks match the API \(the newest and \d+ sampled\)/m)
    expect(r.stdout).toMatch(/^ok +the blocks the lake anchored are the API's: \d+ hashes agree$/m)
    expect(r.stdout).toMatch(/^all \d+ checks passed$/m)
  })

  it("against an indexer behind the lake (rolled back, lagging): every check printed, the lake-ahead check failed, no error about blocks it lacks", async () => {
    const behind = await startDevnet({ seed: 53, blocks: 40 })
    try {
      const r = await runCli(["verify", "--data", data, "--indexer-url", behind.indexerUrl])
      expect(r.code).toBe(1)
      expect(r.stdout).toMatch(/^FAIL +the lake is not ahead of the indexer: lake 150, indexer 40$/m)
      expect(r.stdout).toMatch(/^ok +blocks match the API \(the newest and \d+ sampled\)/m)
      expect(r.stdout).toMatch(/^ok +blocks: rows equal the manifest's/m)
      expect(r.stderr.trim()).toMatch(/^chain-lake: error: 1 of \d+ checks failed$/)
    } finally {
      await behind.stop()
    }
  })

  it("fails against another chain, naming the block that differs", async () => {
    const r = await runCli(["verify", "--data", data, "--indexer-url", other.indexerUrl])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^FAIL +blocks match the API \(the newest and \d+ sampled\): height \d+: lake /m)
  })

  it("fails against an indexer whose history parted from the lake's a few blocks below its top (a sample rarely looks there): the newest block and the anchors differ", async () => {
    const forked = await startDevnet({ seed: 53, blocks: 160, fork: { height: 147, seed: 99 } })
    try {
      const r = await runCli(["verify", "--data", data, "--indexer-url", forked.indexerUrl])
      expect(r.code).toBe(1)
      expect(r.stdout).toMatch(/^FAIL +blocks match the API \(the newest and \d+ sampled\): height 150: lake /m)
      expect(r.stdout).toMatch(/^FAIL +the blocks the lake anchored are the API's: \d+ of \d+ differ, e.g. height 150: lake /m)
    } finally {
      await forked.stop()
    }
  })

  it("fails against an indexer of another chain id, even where its blocks' hashes are the lake's (a devnet of the same seed)", async () => {
    const move = await startDevnet({ seed: 53, blocks: 150, vm: "move" })
    try {
      const r = await runCli(["verify", "--data", data, "--indexer-url", move.indexerUrl])
      expect(r.code).toBe(1)
      expect(r.stdout).toMatch(/^FAIL +the lake's chain is the indexer's: lake lake-evm-1, indexer lake-move-1$/m)
    } finally {
      await move.stop()
    }
  })

  it("names blocks of another chain than the lake's (a proxy that mixed networks into an older export)", async () => {
    const mixed = mkdtempSync(join(tmpdir(), "chain-lake-verify-mixed-"))
    try {
      cpSync(data, mixed, { recursive: true })
      const dir = join(mixed, "blocks", "height_bucket=0")
      const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".parquet"))!)
      const lit = (p: string) => `'${p.replace(/'/g, "''")}'`
      await queryLake(
        `COPY (SELECT * REPLACE (CASE WHEN height = 7 THEN 'evil-chain-9' ELSE chain_id END AS chain_id) FROM read_parquet(${lit(file)})) TO ${lit(file + ".x")} (FORMAT PARQUET)`
      )
      renameSync(file + ".x", file)
      const r = await runCli(["verify", "--data", mixed])
      expect(r.code).toBe(1)
      expect(r.stdout).toMatch(/^FAIL +blocks: all of the lake's chain: 1 block\(s\) of evil-chain-9, the lake's chain is \S+$/m)
      // the file was rewritten in place (a query's COPY could do that): its checksum says so
      expect(r.stdout).toMatch(
        /^FAIL +blocks: every file as committed \(sha256\): 1 file\(s\) changed since their commit, e\.g\. height_bucket=0\/\S+\.parquet$/m
      )
      expect(r.stderr.trim()).toMatch(/^chain-lake: error: 2 of \d+ checks failed$/)
    } finally {
      rmSync(mixed, { recursive: true, force: true })
    }
  })

  it("names a file damaged inside, its footer intact (the views are made, its rows fail at read): verify by its checksum, the rows' checks as one failure; query exits 1 with one line naming it (by its sha256 where DuckDB does not), not 2 as for a mistake in the SQL", async () => {
    const damaged = mkdtempSync(join(tmpdir(), "chain-lake-verify-damaged-"))
    try {
      cpSync(data, damaged, { recursive: true })
      const dir = join(damaged, "txs", "height_bucket=0")
      const file = readdirSync(dir).find((f) => f.endsWith(".parquet"))!
      // the first column chunk's page header and bytes overwritten, the footer (the last bytes) left as it was
      const bytes = readFileSync(join(dir, file))
      bytes.fill(0x41, 4, Math.min(404, bytes.length - 1024))
      writeFileSync(join(dir, file), bytes)
      const r = await runCli(["verify", "--data", damaged])
      expect(r.code, r.stderr).toBe(1)
      expect(r.stdout, r.stderr).toContain(
        `FAIL  txs: every file as committed (sha256): 1 file(s) changed since their commit, e.g. height_bucket=0/${file}`
      )
      expect(r.stdout).toMatch(/^FAIL +the lake's rows can be read: .*cannot be read \(.+\): .*restore it from a copy/m)
      expect(r.stderr.trim()).toMatch(/^chain-lake: error: 2 of \d+ checks failed$/)
      // damage elsewhere in the file reads as other errors of DuckDB's (a page, a length, a decompression): each the same one line
      for (const at of [4, Math.floor(bytes.length / 2), bytes.length - 2048]) {
        const again = readFileSync(join(data, "txs", "height_bucket=0", file))
        again.fill(0x41, at, at + 400)
        writeFileSync(join(dir, file), again)
        const q = await runCli([
          "query",
          "--data",
          damaged,
          "SELECT count(DISTINCT tx_hash), max(length(CAST(tx AS VARCHAR))), max(length(events::VARCHAR)) FROM txs"
        ])
        expect(q.code, `damaged at ${at}: ${q.stderr}`).toBe(1)
        expect(q.stdout).toBe("")
        // named where DuckDB does not name it too: the first file whose bytes are not its commit's
        expect(q.stderr.startsWith(`chain-lake: error: txs/height_bucket=0/${file} cannot be read (`), q.stderr).toBe(true)
        expect(q.stderr).toMatch(/\): the file is damaged; restore it from a copy, or export txs again into a new folder\n$/)
        expect(q.stderr).not.toMatch(/Error: /)
      }
    } finally {
      rmSync(damaged, { recursive: true, force: true })
    }
  })

  it("fails, and publish refuses, a lake whose _lake.json is damaged, lost, or records a rollback under way (exports refuse it: verify passed it, publish published it)", async () => {
    const lake = mkdtempSync(join(tmpdir(), "chain-lake-verify-identity-"))
    const dest = mkdtempSync(join(tmpdir(), "chain-lake-verify-rel-"))
    try {
      cpSync(data, lake, { recursive: true })
      const identity = readFileSync(join(lake, "_lake.json"), "utf8")
      const rollback = { to_height: 100, started_at: new Date().toISOString(), by: "command", datasets: ["blocks"] }
      const cases: Array<[string, () => void, RegExp]> = [
        ["damaged", () => writeFileSync(join(lake, "_lake.json"), "{bad"), /_lake\.json.*damaged|not JSON/],
        ["lost", () => rmSync(join(lake, "_lake.json")), /holds data but no _lake\.json naming its chain/],
        [
          "rollback",
          () => writeFileSync(join(lake, "_lake.json"), JSON.stringify({ ...JSON.parse(identity), rollback })),
          /a rollback of .* to height 100 is under way or was cut short/
        ]
      ]
      for (const [name, damage, says] of cases) {
        damage()
        const v = await runCli(["verify", "--data", lake])
        expect(v.code, `${name}: ${v.stdout}`).toBe(1)
        // (a rollback under way stops the readers first: one line saying so)
        expect(v.stdout + v.stderr, name).toMatch(says)
        if (name !== "rollback")
          expect(v.stdout, name).toMatch(/^FAIL +the lake's identity \(_lake\.json\): its chain, no rollback under way/m)
        const p = await runCli(["publish", "--data", lake, "--to", dest, "--name", name, "--version", "1"])
        expect(p.code, name).toBe(1)
        expect(p.stderr.trim().split("\n"), name).toHaveLength(1)
        expect(p.stderr, name).toMatch(says)
        expect(readdirSync(dest), name).toEqual([])
        writeFileSync(join(lake, "_lake.json"), identity)
      }
      expect((await runCli(["verify", "--data", lake])).code).toBe(0)
    } finally {
      rmSync(lake, { recursive: true, force: true })
      rmSync(dest, { recursive: true, force: true })
    }
  })

  it("names internal txs of another chain's txs (a dataset folder copied in from another lake, its manifest with it): each call's tx must be an EVM tx the lake holds at its height", async () => {
    const [mine, theirs] = [mkdtempSync(join(tmpdir(), "chain-lake-verify-itx-")), mkdtempSync(join(tmpdir(), "chain-lake-verify-itx-"))]
    try {
      const datasets = ["--datasets", "evm_txs,evm_internal_txs", "--to-height", "100"]
      for (const [lake, d] of [
        [mine, devnet],
        [theirs, other]
      ] as const) {
        const r = await runCli(["export", "--indexer-url", d.indexerUrl, "--out", lake, ...datasets])
        expect(r.code, r.stderr).toBe(0)
      }
      const clean = await runCli(["verify", "--data", mine])
      expect(clean.code, clean.stdout).toBe(0)
      expect(clean.stdout).toMatch(
        /^ok +evm_internal_txs: the calls are of txs evm_txs holds at their height: \d+ calls at heights \d+-\d+$/m
      )
      rmSync(join(mine, "evm_internal_txs"), { recursive: true })
      cpSync(join(theirs, "evm_internal_txs"), join(mine, "evm_internal_txs"), { recursive: true })
      const mixed = await runCli(["verify", "--data", mine])
      expect(mixed.code).toBe(1)
      expect(mixed.stdout).toMatch(
        /^FAIL +evm_internal_txs: the calls are of txs evm_txs holds at their height: none of \d+ call rows is of a tx evm_txs holds/m
      )
    } finally {
      rmSync(mine, { recursive: true, force: true })
      rmSync(theirs, { recursive: true, force: true })
    }
  }, 120_000)

  it("names a file copied into the lake by hand (not data: the views leave it out), and a committed file that went missing", async () => {
    const dir = join(data, "txs", "height_bucket=0")
    const file = readdirSync(dir).find((f) => f.endsWith(".parquet"))!
    copyFileSync(join(dir, file), join(dir, "copy-" + file))
    const r = await runCli(["verify", "--data", data])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(
      `FAIL  txs: the folder holds exactly the committed files: 1 Parquet file(s) no manifest lists (not data: an outside copy, or a run that did not commit), e.g. height_bucket=0/copy-${file}`
    )
    expect(r.stdout).toMatch(/^ok +txs: no duplicate tx_hash/m)
    expect(r.stderr.trim()).toMatch(/^chain-lake: error: 1 of \d+ checks failed$/)
    rmSync(join(dir, "copy-" + file))
    rmSync(join(dir, file))
    // a committed file gone: verify checks no rows of a lake that is not whole, and says so in one line
    const listed = (JSON.parse(readFileSync(join(data, "txs", "_manifest.json"), "utf8")) as { files: Array<unknown> }).files.length
    const gone = await runCli(["verify", "--data", data])
    expect(gone.code).toBe(1)
    expect(gone.stdout).toBe("")
    expect(gone.stderr).toBe(
      `chain-lake: error: txs: 1 of the ${listed} file${listed === 1 ? "" : "s"} its _manifest.json lists is missing and no export staged it: the lake lost committed files; restore them from a copy, or export into a new --out\n`
    )
  })
})

describe("verify beside a writer", () => {
  it("checks the views against the manifests that listed their files, pinned once: a commit landing after the pin (another export) changes nothing it compares, and its new files are no strangers", async () => {
    const lake = mkdtempSync(join(tmpdir(), "chain-lake-verify-pin-"))
    try {
      const exportTo = async (height: number, datasets: string) => {
        const args = ["--out", lake, "--datasets", datasets, "--to-height", String(height)]
        const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, ...args])
        expect(r.code, r.stderr).toBe(0)
      }
      await exportTo(50, "blocks")
      const pinned = await pinManifests(lake)
      // a writer commits heights 51..100 between the pin and the checks, and txs for the first time
      await exportTo(100, "blocks,txs")
      const checks = await Effect.runPromise(
        verifyLake(pinned).pipe(Effect.provide(Layer.mergeAll(layerAnalytics({ dataDir: lake, pinned }), layerManifests(lake))))
      )
      expect(checks.filter((c) => !c.ok)).toEqual([])
      // txs, which the pin found none of: its files are the manifest's as it stands, and no rows are set against an empty view
      expect(checks.find((c) => c.name === "txs: the folder holds exactly the committed files")?.ok).toBe(true)
      expect(checks.find((c) => c.name === "txs: rows equal the manifest's")).toBeUndefined()
      expect(checks.find((c) => c.name === "blocks: rows equal the manifest's")?.detail).toBe("manifest 50, files 50")
      expect(checks.find((c) => c.name === "blocks: every committed height, no other")?.detail).toBe("heights 1-50: 50 committed, 50 held")
      // read as it stands now, the lake holds both commits
      const now = await Effect.runPromise(verifyLakeAt(lake))
      expect(now.find((c) => c.name === "blocks: rows equal the manifest's")?.detail).toBe("manifest 100, files 100")
    } finally {
      rmSync(lake, { recursive: true, force: true })
    }
  })
})
