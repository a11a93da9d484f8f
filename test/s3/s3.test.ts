/**
 * Object storage against a local S3-compatible server (s3rver, started here): an export to
 * s3://, resumed by a second run, and publish to s3:// + validate from s3://, tampering detected.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import S3rver from "s3rver"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { makeS3, upload } from "../../src/s3/s3.js"
import { checkpointLog, newWorkDir, pullManifests, remoteCommits, remoteManifest } from "../../src/s3/sync.js"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import { runExport } from "../../src/engine/export.js"
import { newWriterId } from "../../src/lake/lock.js"
import { filesUnder } from "../support/lake.js"
import { startProxy, type Reply } from "../support/hostile.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { BIN, runCli } from "../support/cli.js"
import { spawn } from "node:child_process"
import { mergeFragment } from "../../src/lake/commitLog.js"
import type { Manifest } from "../../src/lake/manifest.js"

let devnet: Devnet
let server: S3rver
let endpoint: string
let dir: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 71, blocks: 150 })
  // s3rver's credentials, given as a user would (the SDK's default chain reads them; the CLI children inherit them)
  process.env.AWS_ACCESS_KEY_ID = "S3RVER"
  process.env.AWS_SECRET_ACCESS_KEY = "S3RVER"
  dir = mkdtempSync(join(tmpdir(), "chain-lake-s3rver-"))
  server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory: dir, configureBuckets: [{ name: "lake", configs: [] }] })
  const { port } = (await server.run()) as { port: number }
  endpoint = `http://127.0.0.1:${port}`
}, 60_000)
afterAll(async () => {
  await server.close()
  await devnet.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** the test's own client, made as chain-lake makes its own */
const s3 = {
  send: async (command: GetObjectCommand | ListObjectsV2Command | PutObjectCommand): Promise<any> =>
    (await makeS3(endpoint).client()).send(command as GetObjectCommand)
}
const keys = async (prefix: string) =>
  ((await s3.send(new ListObjectsV2Command({ Bucket: "lake", Prefix: prefix }))).Contents ?? []).map(
    (c: { Key?: string }) => c.Key!
  ) as Array<string>

/** The lake under `prefix`, brought here file by file as its commit log lists them (from its newest checkpoint, the fragments after it merged in order), equals the chain. */
const expectRemoteLakeMatchesChain = async (prefix: string, datasets: ReadonlyArray<string>, chainOf: Devnet = devnet) => {
  const local = mkdtempSync(join(tmpdir(), "chain-lake-s3pull-"))
  try {
    for (const dataset of datasets) {
      let manifest: Manifest | undefined
      let covers = ""
      const checkpoint = (await keys(`${prefix}/${dataset}/_checkpoint/`)).sort().at(-1)
      if (checkpoint)
        ({ manifest, covers } = JSON.parse(
          await (await s3.send(new GetObjectCommand({ Bucket: "lake", Key: checkpoint }))).Body!.transformToString()
        ))
      for (const k of (await keys(`${prefix}/${dataset}/_log/`)).sort().filter((k) => k.split("/").at(-1)! > covers)) {
        const fragment = JSON.parse(await (await s3.send(new GetObjectCommand({ Bucket: "lake", Key: k }))).Body!.transformToString())
        manifest = mergeFragment(manifest, fragment) ?? manifest
      }
      expect(manifest, `${dataset} has a commit log`).toBeDefined()
      for (const f of manifest!.files) {
        const body = await (
          await s3.send(new GetObjectCommand({ Bucket: "lake", Key: `${prefix}/${dataset}/${f.path}` }))
        ).Body!.transformToByteArray()
        mkdirSync(dirname(join(local, dataset, f.path)), { recursive: true })
        writeFileSync(join(local, dataset, f.path), body)
      }
      writeFileSync(join(local, dataset, "_manifest.json"), JSON.stringify(manifest))
    }
    await expectLakeMatchesChain(local, chainOf, datasets)
  } finally {
    rmSync(local, { recursive: true, force: true })
  }
}

describe("s3:// output and publishing", () => {
  it("an export to s3:// keeps no committed file on local disk; a later run's holders read the fee denoms of blocks an earlier run committed, fetched back one file at a time", async () => {
    const url = "s3://lake/light"
    // the export as `chain-lake export --out s3://…` composes it, watched commit by commit
    const writer = newWriterId()
    const work = await Effect.runPromise(newWorkDir(writer))
    try {
      await Effect.runPromise(pullManifests(url, work, endpoint))
      const remote = remoteCommits(url, work, writer, endpoint)
      const kept: Array<string> = []
      let commits = 0
      const layer = exportLayer({
        indexerUrl: devnet.indexerUrl,
        out: work,
        limits: { concurrency: 4, rps: 0 },
        filesElsewhere: true,
        afterCommit: remote.afterCommit,
        fetchCommitted: remote.fetchCommitted
      })
      const observer = {
        committed: (dataset: string, file: { readonly path: string }) => {
          commits++
          if (existsSync(join(work, dataset, file.path))) kept.push(`${dataset}/${file.path}`)
        }
      }
      await Effect.runPromise(
        runExport(DATASETS, { datasets: ["blocks", "txs"], pageSize: 25, concurrency: 4, observer }).pipe(Effect.provide(layer))
      )
      await Effect.runPromise(remote.finish([]))
      expect(commits).toBeGreaterThan(4)
      expect(kept, "committed files still on local disk after their commit").toEqual([])
      expect(filesUnder(work).filter((f) => f.endsWith(".parquet") || f.endsWith(".pending"))).toEqual([])
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
    // holders only, no --denoms: the default denoms come from the blocks committed above, none of them local
    const holders = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      url,
      "--s3-endpoint",
      endpoint,
      "--datasets",
      "holders"
    ])
    expect(holders.code, holders.stderr).toBe(0)
    await expectRemoteLakeMatchesChain("light", ["blocks", "txs", "holders"])
  })

  it("txs exported after the blocks, from a deployment of another history: counted against the blocks an earlier run committed, fetched back, and refused in one line", async () => {
    // the same chain to height 100, another above it; the txs list answered from it, the rest from `devnet`
    const forked = await startDevnet({ seed: 71, blocks: 150, fork: { height: 100, seed: 2 } })
    const proxy = await startProxy(devnet.indexerUrl, async (req, forward): Promise<Reply> => {
      if (!req.path.startsWith("/indexer/tx/v1/txs")) return forward()
      const res = await fetch(forked.indexerUrl + req.path)
      return { status: res.status, headers: { "content-type": "application/json" }, body: await res.text() }
    })
    try {
      const url = "s3://lake/counted"
      const lake = ["--out", url, "--s3-endpoint", endpoint, "--page-size", "25"]
      const blocks = await runCli(["export", "--indexer-url", devnet.indexerUrl, ...lake, "--datasets", "blocks"])
      expect(blocks.code, blocks.stderr).toBe(0)
      const txs = await runCli(["export", "--indexer-url", proxy.url, ...lake, "--datasets", "txs"])
      expect(txs.code, txs.stderr).toBe(1)
      expect(txs.stderr.trim().split("\n").at(-1)).toMatch(
        /^chain-lake: error: txs at height \d+: \d+ rows, but blocks\.tx_count is \d+ there: the indexer answers the two lists from different histories/
      )
    } finally {
      await proxy.close()
      await forked.stop()
    }
  })

  it("exports to s3://, manifests and files uploaded; a second run uploads nothing new", async () => {
    const args = [
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      "s3://lake/chain",
      "--s3-endpoint",
      endpoint,
      "--datasets",
      "blocks,txs"
    ]
    const workFolders = () => readdirSync(tmpdir()).filter((f) => f.startsWith("chain-lake-s3-"))
    const before = workFolders()
    const first = await runCli(args)
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/uploaded \d+ files and their commit-log entries to s3:\/\/lake\/chain/)
    // the AWS SDK's eight-line notice on Node 20 is one line of ours, once (none on Node 22 and later, or where the user set the SDK's switch)
    expect(first.stderr).not.toMatch(/NodeVersionSupportWarning|a\.co\//)
    const quiet =
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED !== undefined || Number(process.versions.node.split(".")[0]) >= 22
    expect(first.stderr.split("\n").filter((l) => l.includes("AWS SDK releases after January 2027"))).toHaveLength(quiet ? 0 : 1)
    const stored = await keys("chain/")
    // the run report goes up too (the run's work folder does not outlive it)
    expect(stored.filter((k) => /^chain\/_runs\/.+\.json$/.test(k))).toHaveLength(1)
    // one commit-log fragment per commit, each file it lists uploaded
    const log = stored.filter((k) => k.startsWith("chain/txs/_log/"))
    expect(log.length).toBeGreaterThan(0)
    for (const k of log) {
      const fragment = JSON.parse(await (await s3.send(new GetObjectCommand({ Bucket: "lake", Key: k }))).Body!.transformToString())
      expect(fragment.files.length).toBeGreaterThan(0)
      for (const f of fragment.files) expect(stored).toContain(`chain/txs/${f.path}`)
    }
    const again = await runCli(args)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toMatch(/uploaded 0 files/)
    // the lake's chain travels with it: another history under the same chain id is refused
    const other = await startDevnet({ seed: 72, blocks: 150 })
    try {
      const refused = await runCli([
        "export",
        "--indexer-url",
        other.indexerUrl,
        "--out",
        "s3://lake/chain",
        "--s3-endpoint",
        endpoint,
        "--datasets",
        "blocks"
      ])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toMatch(/holds another history of chain lake-evm-1: block 150 is/)
    } finally {
      await other.stop()
    }
    // each run works in a folder of its own, removed when it ends
    expect(workFolders().filter((f) => !before.includes(f))).toEqual([])
  })

  it("compact s3://: each partition's small files merged into one, committed in the commit log; replaced files leave the folder and go after the grace period", async () => {
    const url = "s3://lake/small"
    for (const h of [50, 100, 150]) {
      const r = await runCli([
        "export",
        "--indexer-url",
        devnet.indexerUrl,
        "--out",
        url,
        "--s3-endpoint",
        endpoint,
        "--datasets",
        "blocks,txs",
        "--to-height",
        String(h)
      ])
      expect(r.code, r.stderr).toBe(0)
    }
    const parquet = async (dataset: string) => (await keys(`small/${dataset}/`)).filter((k) => k.endsWith(".parquet"))
    expect((await parquet("blocks")).length).toBe(3)
    const dry = await runCli(["compact", "--data", url, "--s3-endpoint", endpoint, "--dry-run"])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/^blocks: would merge 3 files/m)
    expect((await parquet("blocks")).length).toBe(3)
    const c = await runCli(["compact", "--data", url, "--s3-endpoint", endpoint])
    expect(c.code, c.stderr).toBe(0)
    expect(c.stdout).toMatch(/^blocks: 3 files .* into 1 /m)
    expect(await parquet("blocks")).toHaveLength(1)
    expect(await parquet("txs")).toHaveLength(1)
    // the commit log's manifest lists the merged files only, and they hold the chain's rows once
    await expectRemoteLakeMatchesChain("small", ["blocks", "txs"])
    expect((await keys("small/.chain-lake/retired/blocks/")).length).toBe(3)
    expect(await keys("small/.chain-lake/compacting/")).toEqual([])
    // an export resumes from the compacted lake: nothing to fetch
    const again = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      url,
      "--s3-endpoint",
      endpoint,
      "--datasets",
      "blocks,txs",
      "--to-height",
      "150"
    ])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toMatch(/uploaded 0 files/)
    const vacuum = await runCli(["compact", "--data", url, "--s3-endpoint", endpoint, "--grace", "0s"])
    expect(vacuum.code, vacuum.stderr).toBe(0)
    expect(vacuum.stdout).toMatch(/^blocks: nothing to merge; 1 → 1 files; 3 retired file\(s\) deleted$/m)
    expect(await keys("small/.chain-lake/retired/")).toEqual([])
  })

  it("compact s3:// killed at any point: the commit log still holds every row once; the next compaction finishes or undoes the swap, and removes the killed run's scratch folder", async () => {
    let cutShort = 0
    const killed: Array<number> = []
    /** the scratch folders in the OS temp folder of the killed compactions */
    const killedScratch = () =>
      readdirSync(tmpdir()).filter((n) => killed.some((pid) => new RegExp(`^chain-lake-compact-.*-${pid}-[0-9a-f]{8}$`).test(n)))
    // one lake of three exports' small files, copied object by object for each kill
    for (const h of [50, 100, 150])
      expect(
        (
          await runCli([
            "export",
            "--indexer-url",
            devnet.indexerUrl,
            "--out",
            "s3://lake/uncompacted",
            "--s3-endpoint",
            endpoint,
            "--datasets",
            "blocks,txs",
            "--to-height",
            String(h)
          ])
        ).code
      ).toBe(0)
    // each kill lands a little after the compaction put its intent (its swap has begun), not at a
    // fixed time from the start, which a loaded machine shifts before or after the swap
    for (const [i, delayMs] of [0, 60, 200].entries()) {
      const url = `s3://lake/killed${i}`
      for (const k of await keys("uncompacted/")) {
        const body = await (await s3.send(new GetObjectCommand({ Bucket: "lake", Key: k }))).Body!.transformToByteArray()
        await s3.send(new PutObjectCommand({ Bucket: "lake", Key: `killed${i}/${k.slice("uncompacted/".length)}`, Body: body }))
      }
      const child = spawn(process.execPath, [BIN, "compact", "--data", url, "--s3-endpoint", endpoint], { stdio: "ignore" })
      killed.push(child.pid!)
      const exited = new Promise((resolve) => child.on("exit", resolve))
      for (let waited = 0; waited < 20_000 && (await keys(`killed${i}/.chain-lake/compacting/`)).length === 0; waited += 10)
        await new Promise((r) => setTimeout(r, 10))
      await new Promise((r) => setTimeout(r, delayMs))
      child.kill("SIGKILL")
      await exited
      await expectRemoteLakeMatchesChain(`killed${i}`, ["blocks", "txs"])
      const parquetKeys = (await keys(`killed${i}/`)).filter((k) => /^killed\d\/(blocks|txs)\/.*\.parquet$/.test(k))
      if (parquetKeys.length !== 2) cutShort++
      const again = await runCli(["compact", "--data", url, "--s3-endpoint", endpoint])
      expect(again.code, again.stderr).toBe(0)
      await expectRemoteLakeMatchesChain(`killed${i}`, ["blocks", "txs"])
      // the folders hold the merged files only: what a killed run uploaded unlisted, or left in place, is gone
      for (const dataset of ["blocks", "txs"])
        expect(
          (await keys(`killed${i}/${dataset}/`)).filter((k) => k.endsWith(".parquet")),
          dataset
        ).toHaveLength(1)
      expect(await keys(`killed${i}/.chain-lake/compacting/`)).toEqual([])
      expect(killedScratch()).toEqual([])
    }
    // the kills landed while the compaction was under way
    expect(cutShort).toBeGreaterThanOrEqual(2)
  }, 180_000)

  it("three jobs export disjoint height ranges into one prefix at once: every row once; a fourth over the whole range fetches nothing new", async () => {
    const url = "s3://lake/jobs"
    const job = (extra: ReadonlyArray<string>) =>
      runCli([
        "export",
        "--indexer-url",
        devnet.indexerUrl,
        "--out",
        url,
        "--s3-endpoint",
        endpoint,
        "--datasets",
        "blocks,txs",
        "--page-size",
        "25",
        ...extra
      ])
    const jobs = await Promise.all([
      job(["--from-height", "1", "--to-height", "50"]),
      job(["--from-height", "51", "--to-height", "100"]),
      job(["--from-height", "101", "--to-height", "150"])
    ])
    for (const j of jobs) expect(j.code, j.stderr).toBe(0)
    const whole = await job(["--to-height", "150"])
    expect(whole.code, whole.stderr).toBe(0)
    expect(whole.stdout).toMatch(/uploaded 0 files/)
    await expectRemoteLakeMatchesChain("jobs", ["blocks", "txs"])
  })

  it("a run killed mid-export keeps every commit it uploaded; the rerun completes the lake exactly", async () => {
    const slow = await startDevnet({ seed: 71, blocks: 150, latencyMs: 20 })
    try {
      const args = [
        "export",
        "--indexer-url",
        slow.indexerUrl,
        "--out",
        "s3://lake/killed",
        "--s3-endpoint",
        endpoint,
        "--datasets",
        "blocks,txs",
        "--page-size",
        "10",
        "--concurrency",
        "2"
      ]
      const child = spawn(process.execPath, [BIN, ...args], { stdio: "ignore" })
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      // killed once two commits are up
      while ((await keys("killed/txs/_log/")).length + (await keys("killed/blocks/_log/")).length < 2)
        await new Promise((r) => setTimeout(r, 20))
      child.kill("SIGKILL")
      expect(await exited).toBeNull()
      const kept = (await keys("killed/blocks/_log/")).length + (await keys("killed/txs/_log/")).length
      expect(kept).toBeGreaterThanOrEqual(2)
      const rerun = await runCli(args)
      expect(rerun.code, rerun.stderr).toBe(0)
      // the killed run's work folder went with the rerun
      expect(readdirSync(tmpdir()).filter((f) => f.startsWith(`chain-lake-s3-`) && f.includes(`-${child.pid}-`))).toEqual([])
      // the rerun started from what the killed run uploaded
      expect(rerun.stderr).toMatch(/ · [1-9][\d,]* already committed/)
      await expectRemoteLakeMatchesChain("killed", ["blocks", "txs"], slow)
    } finally {
      await slow.stop()
    }
  })

  it("export --follow to s3:// that reaches --until-height reads its commit log back: a clean run ends ok, one whose commit another writer's entry preceded fails saying so", async () => {
    const follow = (url: string, indexerUrl = devnet.indexerUrl) => [
      "export",
      "--follow",
      "--until-height",
      "150",
      "--poll",
      "100ms",
      "--indexer-url",
      indexerUrl,
      "--out",
      url,
      "--s3-endpoint",
      endpoint,
      "--datasets",
      "blocks",
      "--page-size",
      "10",
      "--concurrency",
      "2"
    ]
    const clean = await runCli(follow("s3://lake/followed"))
    expect(clean.code, clean.stderr).toBe(0)
    expect(clean.stdout).toMatch(/uploaded \d+ files and their commit-log entries to s3:\/\/lake\/followed/)
    await expectRemoteLakeMatchesChain("followed", ["blocks"])
    // another writer's entry for the same heights, named to sort first, lands while the follow runs (after it read the log)
    const slow = await startDevnet({ seed: 71, blocks: 150, latencyMs: 20 })
    try {
      const child = spawn(process.execPath, [BIN, ...follow("s3://lake/raced", slow.indexerUrl)], {
        env: { ...process.env, NO_COLOR: "1" }
      })
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
      while ((await keys("raced/blocks/_log/")).length === 0) await new Promise((r) => setTimeout(r, 20))
      const theirs = {
        dataset: "blocks",
        format_version: 1,
        unit: "height",
        columns: [],
        files: [
          {
            path: "height_bucket=0/theirs.parquet",
            rows: 150,
            bytes: 1,
            sha256: "0".repeat(64),
            range: [1, 151],
            min_height: 1,
            max_height: 150,
            committed_at: new Date().toISOString()
          }
        ],
        committed: [[1, 151]],
        snapshots: []
      }
      await s3.send(
        new PutObjectCommand({ Bucket: "lake", Key: "raced/blocks/_log/000000000000000-another-000000.json", Body: JSON.stringify(theirs) })
      )
      expect(await exited, stderr).toBe(1)
      expect(stderr).toMatch(
        /another job committed part of the same blocks ranges to s3:\/\/lake\/raced first, so some of this run's commits were not taken: run the export again/
      )
    } finally {
      await slow.stop()
    }
  })

  it("a commit log is checkpointed: reads start at the newest checkpoint, covered fragments go once it has stood, and the lake reads the same throughout", async () => {
    const url = "s3://lake/logged"
    const run = (toHeight: number) =>
      runCli([
        "export",
        "--indexer-url",
        devnet.indexerUrl,
        "--out",
        url,
        "--s3-endpoint",
        endpoint,
        "--datasets",
        "blocks,txs",
        "--to-height",
        String(toHeight)
      ])
    for (const h of [50, 100]) expect((await run(h)).code).toBe(0)
    const s3c = makeS3(endpoint)
    const loc = { bucket: "lake", prefix: "logged" }
    const read = () => Effect.runPromise(remoteManifest(s3c, loc, "txs"))
    const whole = await read()
    expect(whole.covers).toBeUndefined()
    const logged = await keys("logged/txs/_log/")
    expect(logged.length).toBeGreaterThan(1)
    // a log shorter than the threshold is left alone
    expect(await Effect.runPromise(checkpointLog(s3c, loc, "txs", whole, { after: logged.length + 1 }))).toBe(false)
    expect(await keys("logged/txs/_checkpoint/")).toEqual([])
    // checkpointed: the fragments stay while it has not stood long enough
    expect(await Effect.runPromise(checkpointLog(s3c, loc, "txs", whole, { after: 1 }))).toBe(true)
    expect(await keys("logged/txs/_checkpoint/")).toEqual([`logged/txs/_checkpoint/${logged.at(-1)!.split("/").at(-1)}`])
    expect(await keys("logged/txs/_log/")).toEqual(logged)
    const fromCheckpoint = await read()
    expect(fromCheckpoint.covers).toBe(logged.at(-1)!.split("/").at(-1))
    expect(fromCheckpoint.fragments).toEqual([])
    expect(fromCheckpoint.manifest).toEqual(whole.manifest)
    // a later run starts from the checkpoint and adds fragments after it
    expect((await run(150)).code).toBe(0)
    const later = await read()
    expect(later.fragments.length).toBeGreaterThan(0)
    await expectRemoteLakeMatchesChain("logged", ["blocks", "txs"])
    // once a checkpoint has stood (here: at once), the fragments it covers and the older checkpoints go
    expect(await Effect.runPromise(checkpointLog(s3c, loc, "txs", later, { after: 1, settleMs: 0 }))).toBe(true)
    expect(await keys("logged/txs/_log/")).toEqual([])
    expect(await keys("logged/txs/_checkpoint/")).toHaveLength(1)
    expect((await read()).manifest).toEqual(later.manifest)
    await expectRemoteLakeMatchesChain("logged", ["blocks", "txs"])
    const again = await run(150)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toMatch(/uploaded 0 files/)
    // a damaged checkpoint is one clear line, not a guess
    await s3.send(new PutObjectCommand({ Bucket: "lake", Key: "logged/txs/_checkpoint/999999999999999-x-000000.json", Body: "{}" }))
    const damaged = await run(150)
    expect(damaged.code).toBe(1)
    expect(damaged.stderr).toMatch(/s3:\/\/lake\/logged\/txs\/_checkpoint\/999999999999999-x-000000\.json is damaged at/)
  })

  it("a file larger than one part goes up as a multipart upload and comes back byte for byte", async () => {
    const local = mkdtempSync(join(tmpdir(), "chain-lake-s3big-"))
    try {
      const big = randomBytes(20 * 1024 * 1024 + 123)
      mkdirSync(join(local, "txs"))
      writeFileSync(join(local, "txs", "big.parquet"), big)
      // the commands the upload sends, as the client sees them
      const uploader = makeS3(endpoint)
      const commands: Array<string> = []
      ;(await uploader.client()).middlewareStack.add(
        (next, context) => (args) => {
          commands.push(String(context.commandName))
          return next(args)
        },
        { step: "initialize" }
      )
      await Effect.runPromise(upload(uploader, local, { bucket: "lake", prefix: "big" }, ["txs/big.parquet"]))
      // 20 MB in 8 MB parts: three parts, never one PUT
      expect(commands.filter((c) => c === "UploadPartCommand")).toHaveLength(3)
      expect(commands).toContain("CompleteMultipartUploadCommand")
      expect(commands).not.toContain("PutObjectCommand")
      const back = Buffer.from(
        await (await s3.send(new GetObjectCommand({ Bucket: "lake", Key: "big/txs/big.parquet" }))).Body!.transformToByteArray()
      )
      expect(back.equals(big)).toBe(true)
    } finally {
      rmSync(local, { recursive: true, force: true })
    }
  })

  it("publishes to s3:// (manifest last), validates from s3://, and detects a tampered object", async () => {
    const data = mkdtempSync(join(tmpdir(), "chain-lake-s3data-"))
    try {
      const e = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", data, "--datasets", "blocks,holders,nft_collections"])
      expect(e.code, e.stderr).toBe(0)
      const p = await runCli([
        "publish",
        "--data",
        data,
        "--to",
        "s3://lake/releases",
        "--name",
        "lake",
        "--version",
        "1",
        "--s3-endpoint",
        endpoint
      ])
      expect(p.code, p.stderr).toBe(0)
      expect(p.stdout).toMatch(/to s3:\/\/lake\/releases\/lake\/1/)
      const v = await runCli(["validate", "s3://lake/releases/lake/1", "--s3-endpoint", endpoint])
      expect(v.code, v.stderr).toBe(0)
      const again = await runCli([
        "publish",
        "--data",
        data,
        "--to",
        "s3://lake/releases",
        "--name",
        "lake",
        "--version",
        "1",
        "--s3-endpoint",
        endpoint
      ])
      expect(again.stderr).toMatch(/never overwritten/)
      const blockFile = (await keys("releases/lake/1/blocks/")).find((k) => k.endsWith(".parquet"))!
      await s3.send(new PutObjectCommand({ Bucket: "lake", Key: blockFile, Body: Buffer.from("tampered") }))
      const bad = await runCli(["validate", "s3://lake/releases/lake/1", "--s3-endpoint", endpoint])
      expect(bad.code).toBe(1)
      expect(bad.stderr).toContain(`mismatch: ${blockFile.replace("releases/lake/1/", "")}:`)
    } finally {
      rmSync(data, { recursive: true, force: true })
    }
  })

  it("validate of a release whose manifest lists paths out of it refuses to download, and writes nothing outside its temp folder", async () => {
    const outside = `chain-lake-escape-${process.pid}.txt`
    // well-formed in every field (a malformed one is refused before its paths are looked at): only the path is hostile
    const manifest = {
      name: "evil",
      version: "1",
      license: null,
      created_at: "2026-01-01T00:00:00Z",
      datasets: [
        {
          name: "blocks",
          partition: "height_bucket",
          rows: 1,
          columns: [],
          files: [{ path: `../${outside}`, bytes: 5, sha256: "0".repeat(64), rows: 1, min_height: 1, max_height: 1 }]
        }
      ]
    }
    await s3.send(new PutObjectCommand({ Bucket: "lake", Key: "evil/1/manifest.json", Body: JSON.stringify(manifest) }))
    await s3.send(new PutObjectCommand({ Bucket: "lake", Key: `${outside}`, Body: Buffer.from("owned") }))
    const v = await runCli(["validate", "s3://lake/evil/1", "--s3-endpoint", endpoint])
    expect(v.code).toBe(1)
    // (the AWS SDK prints a Node-version warning first: issue 17)
    expect(v.stderr.trim().split("\n").at(-1)).toBe(
      `chain-lake: error: s3://lake/evil/1/manifest.json lists paths that leave the release (../${outside}): refusing to download it`
    )
    expect(existsSync(join(tmpdir(), outside))).toBe(false)
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith("chain-lake-release-"))).toEqual([])
  })
})
