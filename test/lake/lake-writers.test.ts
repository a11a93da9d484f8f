/**
 * Several writers of one lake, as real processes: two `chain-lake export` runs started at once
 * into one folder (a cron run and a manual one) both finish, and the lake holds every row of the
 * chain exactly once, every file on disk committed; a run whose ranges another committed first
 * says so. Then disjoint height ranges from three jobs at once, and a fourth run over the whole
 * range that finds nothing left to fetch.
 */
import { spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { BIN, runCli } from "../support/cli.js"
import { committedFiles, dataFilesUnder, hashTree } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"
import { sleep, startProxy } from "../support/hostile.js"

const DATASETS = ["blocks", "txs", "evm_txs", "evm_logs"]
const args = (url: string, out: string, extra: ReadonlyArray<string> = [], tuning = { pageSize: 50, concurrency: 4 }) => [
  "export",
  "--indexer-url",
  url,
  "--out",
  out,
  "--datasets",
  DATASETS.join(","),
  "--page-size",
  String(tuning.pageSize),
  "--concurrency",
  String(tuning.concurrency),
  ...extra
]

let devnet: Devnet
const { make: tmp, removeAll } = tempDirs("chain-lake-writers-")
beforeAll(async () => {
  devnet = await startDevnet({ seed: 29, blocks: 600, latencyMs: 15 })
})
afterAll(async () => {
  await devnet.stop()
  removeAll()
})

/** Every Parquet file on disk is committed, and nothing staged remains. */
const expectOnlyCommitted = (out: string) => {
  const onDisk = dataFilesUnder(out)
  expect(onDisk.sort()).toEqual(
    committedFiles(out)
      .map((f) => f.path)
      .sort()
  )
}

describe("writers of one lake", () => {
  it("two exports at once into one folder, planning different shards: both exit 0, and the lake holds each row once", async () => {
    const out = tmp()
    // started together with different concurrency, they plan different shards (2 against 6), which
    // overlap: whichever commits second gives way and exports again only what is left
    const [a, b] = await Promise.all([
      runCli(args(devnet.indexerUrl, out, [], { pageSize: 20, concurrency: 2 })),
      runCli(args(devnet.indexerUrl, out, [], { pageSize: 20, concurrency: 6 }))
    ])
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expectOnlyCommitted(out)
    await expectLakeMatchesChain(out, devnet, DATASETS)
    const verify = await runCli(["verify", "--data", out])
    expect(verify.code, verify.stdout).toBe(0)
    // the overlap happened, and the run that gave way said so
    expect(a.stderr + b.stderr).toMatch(/another writer committed part of \d+\.\.\d+ first; exporting the rest of it again/)
  })

  it("a run started while another writes the lake says so, naming its pid, though that one has staged nothing yet (its pages held at the server); one started after it ends does not", async () => {
    const out = tmp()
    // its first pages answered 1.5 s late: the first run has asked a page, and staged nothing, when the second starts
    let held = 0
    const slow = await startProxy(devnet.indexerUrl, async (request, forward) => {
      if (request.url.searchParams.has("pagination.key") && held++ < 4) await sleep(1_500)
      return forward()
    })
    try {
      const first = spawn(process.execPath, [BIN, ...args(slow.url, out, [], { pageSize: 100, concurrency: 2 })], { stdio: "ignore" })
      const ended = new Promise<number | null>((resolve) => first.on("exit", resolve))
      for (let i = 0; i < 400 && !slow.requests.some((r) => r.path.includes("pagination.key")); i++) await sleep(25)
      const second = await runCli(args(devnet.indexerUrl, out))
      expect(second.code, second.stderr).toBe(0)
      expect(await ended).toBe(0)
      expect(second.stderr).toContain(`another chain-lake (pid ${first.pid}) is writing ${out}`)
      const third = await runCli(args(devnet.indexerUrl, out))
      expect(third.code, third.stderr).toBe(0)
      expect(third.stderr).not.toContain("another chain-lake")
      await expectLakeMatchesChain(out, devnet, DATASETS)
    } finally {
      await slow.close()
    }
  })

  it("three jobs on disjoint height ranges commit into one folder at once; a fourth over the whole range fetches nothing", async () => {
    const out = tmp()
    const jobs = await Promise.all(
      [
        [1, 200],
        [201, 400],
        [401, 600]
      ].map(([from, to]) => runCli(args(devnet.indexerUrl, out, ["--from-height", String(from), "--to-height", String(to)])))
    )
    for (const j of jobs) expect(j.code, j.stderr).toBe(0)
    const before = committedFiles(out).length
    const whole = await runCli(args(devnet.indexerUrl, out, ["--to-height", "600"]))
    expect(whole.code, whole.stderr).toBe(0)
    expect(committedFiles(out).length).toBe(before)
    expectOnlyCommitted(out)
    await expectLakeMatchesChain(out, devnet, DATASETS)
  })
})

describe("a writer stopped while it holds a lock (SIGSTOP, a frozen VM)", () => {
  it("stopped past its lease after its last check, it cannot drop the commit of the writer that took its lock over: that one exits 0, the stopped one resumes and commits again from disk, each row once", async () => {
    const out = tmp()
    const ds = ["blocks", "txs"]
    const small = (extra: ReadonlyArray<string>) => [
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      out,
      "--datasets",
      ds.join(","),
      "--page-size",
      "50",
      "--concurrency",
      "2",
      ...extra
    ]
    // the manifests exist first, so that the stopped writer's first manifest write is a commit's
    const first = await runCli(small(["--to-height", "100"]))
    expect(first.code, first.stderr).toBe(0)
    // two hosts (CHAIN_LAKE_WRITER_HOST) sharing the folder, with a lease of 1.5 s; writer A waits
    // 3 s between each manifest write's last check and its rename (a test-only pause), where it is stopped
    const lease = { CHAIN_LAKE_LOCK_LEASE_MS: "1500" }
    const a = spawn(process.execPath, [BIN, ...small(["--to-height", "300"])], {
      env: { ...process.env, NO_COLOR: "1", ...lease, CHAIN_LAKE_WRITER_HOST: "host-a", CHAIN_LAKE_TEST_PAUSE_BEFORE_MANIFEST_MS: "3000" }
    })
    let aErr = ""
    a.stderr.on("data", (d) => (aErr += d))
    const aExit = new Promise<number | null>((resolve) => a.on("close", resolve))
    const pending = () =>
      ds.find(
        (d) =>
          existsSync(join(out, d)) && readdirSync(join(out, d)).some((n) => n.startsWith("_manifest.json.host-a-") && n.endsWith(".tmp"))
      )
    const started = Date.now()
    while (!pending()) {
      expect(Date.now() - started, `writer A never reached a manifest write: ${aErr}`).toBeLessThan(30_000)
      await new Promise((r) => setTimeout(r, 5))
    }
    const dataset = pending()!
    a.kill("SIGSTOP")
    try {
      // A holds the lock, checked and about to rename its manifest
      expect(JSON.parse(readFileSync(join(out, dataset, "_manifest.lock"), "utf8"))).toMatchObject({ host: "host-a", pid: a.pid })
      // B, on another host, exports heights A does not (so nothing A does later commits them
      // again): it sees the lock unchanged for a lease, takes it over and commits
      const b = await runCli(small(["--from-height", "301", "--to-height", "600"]), { env: { ...lease, CHAIN_LAKE_WRITER_HOST: "host-b" } })
      expect(b.code, b.stderr).toBe(0)
    } finally {
      a.kill("SIGCONT")
    }
    const byB = committedFiles(out)
    // A resumes: its rename finds its manifest write fenced; it commits again from the manifest on disk, B's commits in it
    const code = await aExit
    expect(code, aErr).toBe(0)
    expect(committedFiles(out)).toEqual(expect.arrayContaining(byB))
    expectOnlyCommitted(out)
    await expectLakeMatchesChain(out, devnet, ds)
    const verify = await runCli(["verify", "--data", out])
    expect(verify.code, verify.stdout).toBe(0)
  }, 90_000)
})

describe("the chain a lake holds", () => {
  it("an export from another chain, or from another history under the same chain id, is refused and leaves the lake as it was", async () => {
    const out = tmp()
    const blocksOnly = (url: string) => ["export", "--indexer-url", url, "--out", out, "--datasets", "blocks", "--page-size", "100"]
    const first = await runCli(blocksOnly(devnet.indexerUrl))
    expect(first.code, first.stderr).toBe(0)
    const identity = JSON.parse(readFileSync(join(out, "_lake.json"), "utf8"))
    expect(identity).toEqual({
      format_version: 1,
      chain_id: devnet.chain.u.chainId,
      anchors: [{ height: devnet.tip(), hash: expect.stringMatching(/^[0-9A-F]{64}$/) }]
    })
    const before = hashTree(out)
    const reset = await startDevnet({ seed: 30, blocks: 600 })
    const move = await startDevnet({ seed: 29, blocks: 600, vm: "move" })
    try {
      const otherHistory = await runCli(blocksOnly(reset.indexerUrl))
      expect(otherHistory.code).toBe(1)
      expect(otherHistory.stderr.trim()).toMatch(
        new RegExp(
          `^chain-lake: error: ${out} holds another history of chain ${devnet.chain.u.chainId}: block 600 is [0-9A-F]{64} there and [0-9A-F]{64} on this indexer \\(a reset chain, or another network under the same id\\): export it into another --out$`
        )
      )
      const otherChain = await runCli(blocksOnly(move.indexerUrl))
      expect(otherChain.code).toBe(1)
      expect(otherChain.stderr.trim()).toBe(
        `chain-lake: error: ${out} holds chain ${devnet.chain.u.chainId}, but this indexer serves chain ${move.chain.u.chainId}: export it into another --out`
      )
      expect(hashTree(out)).toEqual(before)
    } finally {
      await reset.stop()
      await move.stop()
    }
    // the same chain again: accepted
    const again = await runCli(blocksOnly(devnet.indexerUrl))
    expect(again.code, again.stderr).toBe(0)
  })
})
