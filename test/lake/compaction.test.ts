/**
 * Compaction: the small files a lake gathers (one export per height range, snapshot lists added
 * run by run) are merged into one file per partition and swapped in by one commit; the lake's rows,
 * manifests and checksums stay exact, also when the compactor is killed or a writer commits at once.
 */
import { spawn } from "node:child_process"
import { cpSync, existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAnalytics } from "../../src/analytics/Analytics.js"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import { DENOMS, startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runExport, type ExportOptions } from "../../src/engine/export.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { compactLake, planCompaction } from "../../src/lake/compaction.js"
import type { Manifest } from "../../src/lake/manifest.js"
import { layerLake } from "../../src/lake/writer.js"
import { verifyLakeAt } from "../../src/verify/verify.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { BIN, runCli } from "../support/cli.js"
import { dumpLake, expectManifestsTrue, filesUnder, hashTree, queryLake } from "../support/lake.js"
import { describeCli } from "../support/mutation.js"
import { tempDirs } from "../support/tmp.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 100, timeoutMs: 1_500, maxRetries: 15 }
const { make: tmp, removeAll } = tempDirs("chain-lake-compact-")
const APPEND = ["blocks", "txs", "evm_txs", "evm_logs", "token_transfers_evm"]
const ALL = [...APPEND, "holders"]

const exportOk = async (devnet: Devnet, out: string, options: ExportOptions) => {
  const r = await Effect.runPromise(
    Effect.either(runExport(DATASETS, { pageSize: 100, concurrency: 4, ...options })).pipe(
      Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out, limits: { concurrency: 4, rps: 0 }, retry: FAST_RETRY }))
    )
  )
  if (Either.isLeft(r)) throw new Error(`export failed: ${JSON.stringify(r.left)}`)
  return r.right
}

/** The first row of `sql` over the lake's views, as `query` makes them (from the manifests). */
const readLake = (lake: string, sql: string) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makeAnalytics({ dataDir: lake }), (a) => a.query(sql)))).then((r) => r.rows[0])
/** What `chain-lake verify` checks, in this process. */
const verifyChecks = (lake: string) => Effect.runPromise(verifyLakeAt(lake))

const manifestOf = (out: string, dataset: string) => JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")) as Manifest
const parquetIn = (out: string, dataset: string) => filesUnder(join(out, dataset)).filter((f) => f.endsWith(".parquet"))
const retiredIn = (out: string, dataset: string) =>
  existsSync(join(out, ".chain-lake", "retired", dataset)) ? filesUnder(join(out, ".chain-lake", "retired", dataset)) : []

let devnet: Devnet
/** a lake of many small files: six exports of 50 heights each, holders one denom per run at one snapshot height */
let small: string
let before: Record<string, Array<string>>
beforeAll(async () => {
  devnet = await startDevnet({ seed: 31, blocks: 300 })
  small = tmp()
  for (let i = 1; i <= 6; i++) await exportOk(devnet, small, { datasets: APPEND, toHeight: i * 50 })
  for (const denom of DENOMS.slice(0, 3)) await exportOk(devnet, small, { datasets: ["holders"], params: { denoms: [denom.denom] } })
  before = await dumpLake(small, ALL)
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  removeAll()
})

describe("planCompaction", () => {
  const file = (path: string, bytes: number, range?: [number, number]) => ({
    path,
    rows: 1,
    bytes,
    sha256: "x",
    ...(range ? { range } : {}),
    min_height: null,
    max_height: null,
    committed_at: ""
  })
  const manifest = (unit: Manifest["unit"], files: Manifest["files"]): Manifest => ({
    dataset: "d",
    format_version: 1,
    unit,
    columns: [],
    files,
    committed: [],
    snapshots: []
  })
  const policy = { targetBytes: 100, minFiles: 2 }

  it("merges runs of adjacent ranges within a partition: a large file or a gap ends a run, and a merge never passes the target size", () => {
    const m = manifest("height", [
      file("height_bucket=0/a", 10, [1, 10]),
      file("height_bucket=0/b", 10, [10, 20]),
      file("height_bucket=0/c", 80, [20, 30]), // large: stays
      file("height_bucket=0/d", 10, [30, 40]),
      file("height_bucket=0/e", 10, [40, 50]),
      file("height_bucket=0/f", 10, [60, 70]), // a gap before it: alone
      file("height_bucket=100/g", 10, [90, 110]),
      file("height_bucket=100/h", 10, [90, 110]) // one shard's two parts share a range
    ])
    const groups = planCompaction(m, policy).map((g) => ({ files: g.files.map((f) => f.path.split("/")[1]), range: g.range }))
    expect(groups).toEqual([
      { files: ["a", "b"], range: [1, 20] },
      { files: ["d", "e"], range: [30, 50] },
      { files: ["g", "h"], range: [90, 110] }
    ])
    const big = manifest(
      "height",
      [1, 2, 3, 4, 5].map((i) => file(`height_bucket=0/p${i}`, 40, [i * 10, i * 10 + 10]))
    )
    expect(planCompaction(big, policy).map((g) => g.files.length)).toEqual([2, 2])
  })

  it("reads the files in range order whatever the manifest's order, counts rows and bytes, and treats positions as heights", () => {
    const files = [file("height_bucket=0/c", 30, [20, 30]), file("height_bucket=0/a", 10, [1, 10]), file("height_bucket=0/b", 20, [10, 20])]
    for (const unit of ["height", "position"] as const) {
      const [g] = planCompaction(manifest(unit, files), policy)
      expect({ files: g.files.map((f) => f.path), range: g.range, bytes: g.bytes, rows: g.rows }).toEqual({
        files: ["height_bucket=0/a", "height_bucket=0/b", "height_bucket=0/c"],
        range: [1, 30],
        bytes: 60,
        rows: 3
      })
    }
    // one shard's parts share a range: ordered by path among themselves
    const parts = planCompaction(
      manifest("height", [file("height_bucket=0/p-1", 10, [1, 10]), file("height_bucket=0/p-0", 10, [1, 10])]),
      policy
    )
    expect(parts[0].files.map((f) => f.path)).toEqual(["height_bucket=0/p-0", "height_bucket=0/p-1"])
  })

  it("sizes: a file of half the target is not small, and a merge may reach the target exactly but not pass it", () => {
    const half = manifest("height", [
      file("height_bucket=0/a", 50, [1, 10]),
      file("height_bucket=0/b", 49, [10, 20]),
      file("height_bucket=0/c", 49, [20, 30])
    ])
    expect(planCompaction(half, policy).map((g) => g.files.map((f) => f.path))).toEqual([["height_bucket=0/b", "height_bucket=0/c"]])
    const exact = manifest("height", [
      file("height_bucket=0/a", 40, [1, 10]),
      file("height_bucket=0/b", 40, [10, 20]),
      file("height_bucket=0/c", 20, [20, 30]),
      file("height_bucket=0/d", 20, [30, 40])
    ])
    expect(planCompaction(exact, policy).map((g) => g.files.length)).toEqual([3])
    // minFiles counts small files only: one small file beside a large one is no merge
    expect(
      planCompaction(manifest("height", [file("height_bucket=0/a", 10, [1, 10]), file("height_bucket=0/b", 90, [10, 20])]), policy)
    ).toEqual([])
    // a gap right after a run's first file ends the run
    expect(
      planCompaction(
        manifest("height", [
          file("height_bucket=0/a", 10, [1, 10]),
          file("height_bucket=0/b", 10, [11, 20]),
          file("height_bucket=0/c", 10, [20, 30])
        ]),
        policy
      ).map((g) => g.range)
    ).toEqual([[11, 30]])
  })

  it("never merges across snapshot heights or days, and waits for minFiles small files", () => {
    const m = manifest("snapshot", [
      file("snapshot_height=5/part-0.parquet", 10),
      file("snapshot_height=5/part-1.parquet", 10),
      file("snapshot_height=9/part-0.parquet", 10)
    ])
    expect(planCompaction(m, policy).map((g) => [g.partition, g.files.length, g.range])).toEqual([["snapshot_height=5", 2, undefined]])
    expect(planCompaction(m, { ...policy, minFiles: 3 })).toEqual([])
    // samples: every small file of a day, in path order, a large one left alone
    const days = manifest("sample", [
      file("date=2026-11-23/part-b.parquet", 10),
      file("date=2026-11-23/part-a.parquet", 10),
      file("date=2026-11-23/part-big.parquet", 90),
      file("date=2026-11-24/part-c.parquet", 10)
    ])
    expect(planCompaction(days, policy).map((g) => g.files.map((f) => f.path))).toEqual([
      ["date=2026-11-23/part-a.parquet", "date=2026-11-23/part-b.parquet"]
    ])
  })
})

describe("compactLake (the library call the CLI, follow and pipelines make)", () => {
  const compactIn = (lake: string, options: Parameters<typeof compactLake>[1] = {}) =>
    Effect.runPromise(
      Effect.either(
        compactLake(
          DATASETS.filter((d) => ALL.includes(d.name)),
          options
        )
      ).pipe(Effect.provide(layerLake(lake)))
    )

  it("reports what it merged, keeps heights and rows true, and a dry run changes nothing", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    const tree = hashTree(lake)
    const dry = await compactIn(lake, { dryRun: true })
    expect(Either.isRight(dry) && dry.right.find((r) => r.dataset === "txs")).toMatchObject({
      filesBefore: parquetIn(small, "txs").length,
      filesAfter: 1,
      deleted: 0
    })
    expect(hashTree(lake)).toEqual(tree)
    const merged: Array<string> = []
    const r = await compactIn(lake, { onMerged: (dataset) => merged.push(dataset) })
    if (Either.isLeft(r)) throw new Error(r.left.message)
    expect(merged.sort()).toEqual([...ALL].sort())
    const blocks = r.right.find((x) => x.dataset === "blocks")!
    expect(blocks).toMatchObject({ filesBefore: 6, filesAfter: 1, skipped: [], deleted: 0 })
    expect(blocks.merged).toEqual([
      {
        partition: "height_bucket=0",
        files: 6,
        bytesBefore: manifestOf(small, "blocks").files.reduce((s, f) => s + f.bytes, 0),
        bytesAfter: manifestOf(lake, "blocks").files[0].bytes,
        rows: 300
      }
    ])
    expect(manifestOf(lake, "blocks").files[0]).toMatchObject({ rows: 300, min_height: 1, max_height: 300, range: [1, 301] })
    expect(manifestOf(lake, "holders").files[0]).toMatchObject({
      rows: before.holders.length,
      min_height: manifestOf(small, "holders").files[0].min_height
    })
    expect(manifestOf(lake, "holders").files[0].range).toBeUndefined()
    await expectManifestsTrue(lake, ALL)
    // nothing left to merge; the retired files go once the grace period (here none) is over
    const again = await compactIn(lake, { graceMs: 0 })
    expect(Either.isRight(again) && again.right.map((x) => [x.dataset, x.merged.length, x.deleted])).toEqual(
      ALL.map((d) => [d, 0, manifestOf(small, d).files.length])
    )
  })

  it("a damaged input (its bytes no longer what the manifest says) stops the compaction with a clear error; nothing is merged or moved", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    const victim = manifestOf(lake, "blocks").files[2].path
    const { appendFileSync } = await import("node:fs")
    appendFileSync(join(lake, "blocks", victim), "x")
    const r = await compactIn(lake)
    expect(Either.isLeft(r) && r.left.message).toBe(
      `${join(lake, "blocks")}/${victim} does not hold what its manifest says (sha256 differs): the file is damaged; restore it from a copy (nothing was compacted)`
    )
    expect(parquetIn(lake, "blocks")).toHaveLength(6)
    expect(manifestOf(lake, "blocks")).toEqual(manifestOf(small, "blocks"))
  })

  it("a manifest whose row counts are wrong is not compacted: the merge must hold exactly the rows listed", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    const m = manifestOf(lake, "blocks")
    const { writeFileSync } = await import("node:fs")
    writeFileSync(
      join(lake, "blocks", "_manifest.json"),
      JSON.stringify({ ...m, files: m.files.map((f, i) => (i === 0 ? { ...f, rows: f.rows + 1 } : f)) })
    )
    const r = await compactIn(lake)
    expect(Either.isLeft(r) && r.left.message).toMatch(
      /^merging 6 files of .*blocks\/height_bucket=0 gave 300 rows, not the 301 the manifest lists: nothing was compacted; run verify$/
    )
    expect(parquetIn(lake, "blocks")).toHaveLength(6)
  })
})

describeCli("chain-lake compact", () => {
  it("--dry-run says what it would merge and writes nothing", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    const tree = hashTree(lake)
    const r = await runCli(["compact", "--data", lake, "--dry-run"])
    expect(r.code, r.stderr).toBe(0)
    const n = manifestOf(lake, "txs").files.length
    expect(n).toBeGreaterThanOrEqual(6)
    expect(r.stdout).toContain(`txs: would merge ${n} files`)
    expect(r.stdout).toMatch(new RegExp(`^txs: would merge ${n} files .* into 1 in 1 partition\\(s\\); ${n} → 1 files$`, "m"))
    expect(r.stdout).toMatch(/^holders: would merge 3 files/m)
    expect(hashTree(lake)).toEqual(tree)
  })

  it("merges each partition's small files into one; rows, manifests and checksums stay exact; replaced files leave the folder and go after the grace period", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    const filesBefore = Object.fromEntries(ALL.map((d) => [d, parquetIn(lake, d).length]))
    expect(filesBefore.txs).toBeGreaterThanOrEqual(6)
    const r = await runCli(["compact", "--data", lake])
    expect(r.code, r.stderr).toBe(0)
    for (const d of ALL) expect(parquetIn(lake, d), d).toHaveLength(1)
    // the rows are the same, found by a plain glob (the README's contract) and by the chain model
    expect(await dumpLake(lake, ALL)).toEqual(before)
    await expectLakeMatchesChain(lake, devnet, APPEND)
    await expectManifestsTrue(lake, ALL)
    const txs = manifestOf(lake, "txs")
    expect(manifestOf(lake, "blocks").committed).toEqual([[1, 301]])
    expect(txs.committed).toEqual(manifestOf(small, "txs").committed)
    expect(txs.retired).toHaveLength(filesBefore.txs)
    // the snapshot's record is untouched: same lists, rows and consistency
    expect(manifestOf(lake, "holders").snapshots).toEqual(manifestOf(small, "holders").snapshots)
    const v = await runCli(["verify", "--data", lake])
    expect(v.code, v.stdout).toBe(0)
    expect(v.stdout).toMatch(
      new RegExp(`^ok +txs: the folder holds exactly the committed files: 1 files, and ${filesBefore.txs} replaced by compaction kept`, "m")
    )
    // replaced files wait in the retired folder, then go
    expect(retiredIn(lake, "txs")).toHaveLength(filesBefore.txs)
    const again = await runCli(["compact", "--data", lake, "--grace", "0s"])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain(`txs: nothing to merge; 1 → 1 files; ${filesBefore.txs} retired file(s) deleted\n`)
    expect(retiredIn(lake, "txs")).toEqual([])
    expect(manifestOf(lake, "txs").retired).toEqual([])
    // a release of the compacted lake carries the right checksums
    const dest = tmp()
    const p = await runCli(["publish", "--data", lake, "--to", dest, "--name", "lake", "--version", "1.0.0"])
    expect(p.code, p.stderr).toBe(0)
    const val = await runCli(["validate", join(dest, "lake", "1.0.0")])
    expect(val.code, val.stdout + val.stderr).toBe(0)
    // an export after compaction knows the merged ranges are committed: it fetches nothing again
    const rerun = await exportOk(devnet, lake, { datasets: APPEND })
    expect(rerun.datasets.reduce((s, d) => s + d.rows, 0)).toBe(0)
    expect((await runCli(["verify", "--data", lake])).code).toBe(0)
  })

  it("a merged file is sorted by the dataset's sort key, ZSTD-compressed", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    expect((await runCli(["compact", "--data", lake, "--datasets", "evm_logs"])).code).toBe(0)
    expect(parquetIn(lake, "txs")).toHaveLength(parquetIn(small, "txs").length)
    const [only] = parquetIn(lake, "evm_logs")
    const path = join(lake, "evm_logs", only).replace(/'/g, "''")
    const [order] = await queryLake(
      `SELECT bool_and(ok) AS sorted FROM (SELECT (height, log_index) >= lag((height, log_index)) OVER () OR lag(height) OVER () IS NULL AS ok FROM read_parquet('${path}', hive_partitioning = false))`
    )
    expect(order.sorted).toBe(true)
    const codecs = await queryLake(`SELECT DISTINCT compression FROM parquet_metadata('${path}')`)
    expect(codecs.map((c) => c.compression)).toEqual(["ZSTD"])
  })

  it("killed at random points, leaves a lake whose manifests are true and whose rows read exactly once; the next compaction finishes it", async () => {
    let cutShort = 0
    for (const delayMs of [0, 10, 40, 120]) {
      const lake = tmp()
      cpSync(small, lake, { recursive: true })
      const child = spawn(process.execPath, [BIN, "compact", "--data", lake], { stdio: "ignore" })
      // kill once the first merge has committed (a manifest changed), then after a random further delay
      const first = statSync(join(lake, "blocks", "_manifest.json")).mtimeMs
      const exited = new Promise((resolve) => child.on("exit", resolve))
      let done = false
      void exited.then(() => (done = true))
      while (!done && statSync(join(lake, "blocks", "_manifest.json")).mtimeMs === first) await new Promise((r) => setTimeout(r, 5))
      await new Promise((r) => setTimeout(r, delayMs))
      child.kill("SIGKILL")
      await exited
      await expectManifestsTrue(lake, ALL)
      if (ALL.some((d) => parquetIn(lake, d).length > 1)) cutShort++
      // readers that go by the manifest (query, report, the catalog: the views query makes) see every row once
      const seen = await readLake(
        lake,
        "SELECT (SELECT count(*) FROM txs), (SELECT count(DISTINCT tx_hash) FROM txs), (SELECT count(*) FROM holders)"
      )
      expect(seen.map(Number), `killed ${delayMs} ms after the first commit`).toEqual([
        before.txs.length,
        before.txs.length,
        before.holders.length
      ])
      const finish = await runCli(["compact", "--data", lake])
      expect(finish.code, finish.stderr).toBe(0)
      expect(await dumpLake(lake, ALL)).toEqual(before)
      for (const d of ALL) expect(parquetIn(lake, d), d).toHaveLength(1)
      const failed = (await verifyChecks(lake)).filter((c) => !c.ok)
      expect(failed).toEqual([])
    }
    // the kills landed while the compaction was under way, not after it
    expect(cutShort).toBeGreaterThanOrEqual(3)
  }, 120_000)

  it("readers during a compaction (query's views, the catalog's) see every row exactly once at every moment", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    // long-lived readers, as a `query` or `report` session and a client of the catalog are: their views were made before the swap
    const sql = "SELECT (SELECT count(*) FROM txs) AS n, (SELECT count(DISTINCT tx_hash) FROM txs) AS d, (SELECT count(*) FROM blocks) AS b"
    const readers = await Promise.all(
      [false, true].map(async (live) => {
        const scope = Effect.runSync(Scope.make())
        const analytics = await Effect.runPromise(Scope.extend(makeAnalytics({ dataDir: lake, live }), scope))
        return {
          query: () => Effect.runPromise(analytics.query(sql)).then((r) => r.rows[0].map(String)),
          close: () => Effect.runPromise(Scope.close(scope, Exit.void))
        }
      })
    )
    const count = (live: boolean) => readers[live ? 1 : 0].query()
    const expected = [String(before.txs.length), String(before.txs.length), String(before.blocks.length)]
    const child = spawn(process.execPath, [BIN, "compact", "--data", lake], { stdio: "ignore" })
    let done = false
    const exited = new Promise((resolve) => child.on("exit", resolve)).then(() => (done = true))
    const seen: Array<Array<string>> = []
    let during = 0
    const files = () => ALL.map((d) => parquetIn(lake, d).length)
    const original = ALL.map((d) => parquetIn(small, d).length)
    while (!done) {
      const at = files()
      seen.push(await count(false), await count(true))
      // queries run back to back, so the swaps land while they run: a pair that began in the middle
      // of the compaction, or during which the files changed
      if ((at.some((n, i) => n < original[i]) && at.some((n) => n > 1)) || files().join() !== at.join()) during++
    }
    await exited
    for (const r of readers) await r.close()
    expect(during).toBeGreaterThan(0)
    for (const s of seen) expect(s).toEqual(expected)
    expect(parquetIn(lake, "txs")).toHaveLength(1)
  })

  it("a writer committing while the lake is compacted is never lost", async () => {
    const lake = tmp()
    cpSync(small, lake, { recursive: true })
    // the lake ends at 300; devnet blocks beyond are served by a longer chain of the same seed
    const longer = await startDevnet({ seed: 31, blocks: 600 })
    try {
      let exporting = true
      const exportMore = Effect.promise(async () => {
        for (let h = 350; h <= 600; h += 50) await exportOk(longer, lake, { datasets: APPEND, toHeight: h })
        exporting = false
      })
      const compactAgain = Effect.gen(function* () {
        let rounds = 0
        while (exporting || rounds === 0) {
          yield* compactLake(DATASETS, { graceMs: 0 }).pipe(Effect.provide(layerLake(lake)))
          rounds++
        }
        return rounds
      })
      const [, rounds] = await Effect.runPromise(Effect.all([exportMore, compactAgain], { concurrency: 2 }))
      expect(rounds).toBeGreaterThan(1)
      await expectLakeMatchesChain(lake, longer, APPEND)
      await expectManifestsTrue(lake, APPEND)
      expect(manifestOf(lake, "blocks").committed).toEqual([[1, 601]])
    } finally {
      await longer.stop()
    }
  }, 120_000)

  it("what a user gets wrong is one line and exit 2", async () => {
    for (const [args, message] of [
      [["--data", tmp()], /holds no lake/],
      [["--data", small, "--target-size", "big"], /--target-size must be a size/],
      [["--data", small, "--grace", "soon"], /--grace must look like/],
      [["--data", small, "--datasets", "nosuch"], /nosuch/]
    ] as const) {
      const r = await runCli(["compact", ...args])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr.trim().split("\n")).toHaveLength(1)
      expect(r.stderr).toMatch(message)
    }
  })
})
