/**
 * Killing `chain-lake export` (SIGKILL, no clean-up) after commits, at many points, and rerunning
 * gives exactly the chain: after every kill each committed file is on disk with the sha256 its
 * manifest records; after the resume every row of the chain model is in the lake once, every file
 * on disk is committed (and every committed file on disk), and `verify` passes.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { STAGING } from "../../src/lake/layout.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { BIN, runCli } from "../support/cli.js"
import { startProxy } from "../support/hostile.js"
import { committedFiles, dataFilesUnder, sha256Of } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const DATASETS = ["blocks", "txs", "evm_txs", "evm_logs", "evm_internal_txs", "nft_collections", "nft_tokens", "holders"]
const args = (url: string, out: string) => [
  "export",
  "--indexer-url",
  url,
  "--out",
  out,
  "--datasets",
  DATASETS.join(","),
  "--page-size",
  "40",
  "--concurrency",
  "4"
]

let devnet: Devnet
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-resume-")
beforeAll(async () => {
  // latency spreads the commits over a few seconds, so that kills land between them
  devnet = await startDevnet({ seed: 13, blocks: 500, latencyMs: 25 })
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

/**
 * Every committed file is on disk with the checksum its manifest records: in its place, or, when
 * the kill fell between a commit's manifest write and its renames, still in the killed writer's
 * staging folder, from where the next writer to open the dataset moves it (Manifests' recovery).
 * `settled` (after a run that finished) allows only the first.
 */
const expectCommittedIntact = (out: string, settled = false) => {
  const staging = join(out, ".chain-lake", "staging")
  for (const f of committedFiles(out)) {
    const staged =
      existsSync(staging) && !settled
        ? readdirSync(staging)
            .map((w) => join(staging, w, `${f.path}.pending`))
            .find((p) => existsSync(p))
        : undefined
    const where = existsSync(join(out, f.path)) ? join(out, f.path) : staged
    expect(where, `${f.path} is committed but missing`).toBeDefined()
    expect(sha256Of(where!), `${f.path} changed after its commit`).toBe(f.sha256)
  }
}

/**
 * Runs the export and SIGKILLs it once `more` files beyond those already committed are committed
 * (plus a few random milliseconds, so that kills also land inside a commit). Resolves with the
 * exit code: null when killed, 0 if the run finished first.
 */
const exportKilledAfter = (out: string, more: number) =>
  new Promise<number | null>((resolve) => {
    const before = committedFiles(out).length
    const child = spawn(process.execPath, [BIN, ...args(devnet.indexerUrl, out)], { stdio: "ignore" })
    const watch = setInterval(() => {
      if (committedFiles(out).length >= before + more) {
        clearInterval(watch)
        setTimeout(() => child.kill("SIGKILL"), Math.floor(Math.random() * 40))
      }
    }, 5)
    child.on("exit", (code) => {
      clearInterval(watch)
      resolve(code)
    })
  })

describe("kill and resume", () => {
  it("SIGKILLs after 1, 2, 3, 5 and 8 more commits lose and duplicate nothing; the resumed lake equals the chain", async () => {
    const out = tmp()
    let killed = 0
    const committedAtKill: Array<number> = []
    for (const more of [1, 2, 3, 5, 8]) {
      const code = await exportKilledAfter(out, more)
      if (code === 0) break // finished before the kill point: nothing left to interrupt
      expect(code, "the export failed on its own").toBeNull()
      killed++
      committedAtKill.push(committedFiles(out).length)
      expectCommittedIntact(out)
    }
    // the kills landed after commits, at distinct points of the run
    expect(killed).toBeGreaterThanOrEqual(3)
    expect(new Set(committedAtKill).size).toBe(committedAtKill.length)

    const resumed = await runCli(args(devnet.indexerUrl, out))
    expect(resumed.code, resumed.stderr).toBe(0)
    expectCommittedIntact(out, true)
    // no leftovers: every Parquet file on disk is committed, and nothing temporary remains
    const onDisk = dataFilesUnder(out)
    expect(onDisk.sort()).toEqual(
      committedFiles(out)
        .map((f) => f.path)
        .sort()
    )
    await expectLakeMatchesChain(out, devnet, DATASETS)
    const verify = await runCli(["verify", "--data", out])
    expect(verify.code, verify.stdout).toBe(0)
  })
})

/** The CLI with `cliArgs` in a child process: it, its exit code once it has exited, and what it printed on stderr so far. */
const startCli = (cliArgs: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) => {
  const child = spawn(process.execPath, [BIN, ...cliArgs], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, exited, stderr: () => stderr }
}

/** An export into `out` in a child process, once it has committed `files` files: its exit code and what it printed on stderr so far. */
const exportUntilCommitted = async (out: string, files: number, env: Readonly<Record<string, string>> = {}) => {
  const started = startCli(args(devnet.indexerUrl, out), env)
  await new Promise<void>((resolve) => {
    const watch = setInterval(() => {
      if (committedFiles(out).length >= files) {
        clearInterval(watch)
        resolve()
      }
    }, 5)
  })
  return started
}

/** The files of `dataset` a writer has staged (written, not yet committed) in the lake at `out`. */
const staged = (out: string, dataset: string) => {
  const staging = join(out, STAGING)
  if (!existsSync(staging)) return []
  return readdirSync(staging).flatMap((writer) => {
    const folder = join(staging, writer, dataset)
    return existsSync(folder) ? (readdirSync(folder, { recursive: true }) as Array<string>).filter((f) => f.endsWith(".pending")) : []
  })
}

/** Resolves once `ready()` holds (looked at every 5 ms). */
const until = (ready: () => boolean) =>
  new Promise<void>((resolve) => {
    const watch = setInterval(() => {
      if (!ready()) return
      clearInterval(watch)
      resolve()
    }, 5)
  })

/**
 * Takes the lake lock file `path` as a live holder of this host (the test's own process), as
 * another export suspended with Ctrl-Z does: created only where no writer holds it (O_EXCL), as
 * writers do, so that the run's own release cannot remove it.
 */
const takeLock = async (path: string) => {
  const me = { host: hostname(), pid: process.pid, writer: `${hostname()}-${process.pid}-holder`, at: new Date().toISOString() }
  for (;;) {
    try {
      writeFileSync(path, JSON.stringify(me), { flag: "wx" })
      return path
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
      await new Promise((r) => setTimeout(r, 2))
    }
  }
}

/**
 * An export into `out` (stopArgs) stopped by SIGINT once some pages of every shard are read, while
 * this process holds the lock of its txs manifest (takeLock): the stop has them to commit.
 */
const stoppedBesideLock = async (out: string) => {
  const before = devnet.stats().requests
  const { child, exited, stderr } = startCli(stopArgs(devnet.indexerUrl, out))
  await until(() => existsSync(join(out, "txs", "_manifest.json")))
  const lock = await takeLock(join(out, "txs", "_manifest.lock"))
  await until(() => devnet.stats().requests - before >= 30)
  child.kill("SIGINT")
  return { exited, stderr, lock }
}

/** An export of txs in six shards paging at once, each of a few seconds (ten records a page at 25 ms a request): far from their 60 s checkpoint. */
const stopArgs = (url: string, out: string, flags: ReadonlyArray<string> = []) => [
  ...["export", "--indexer-url", url, "--out", out, "--datasets", "txs"],
  ...["--page-size", "10", "--concurrency", "6", ...flags]
]

describe("Ctrl-C", () => {
  /*
   * Shards of a few seconds each (six, all paging at once, ten records a page at 25 ms a request),
   * far from their 60 s checkpoint: a stop that drops what they hold loses every record read.
   */
  it.each([
    ["in the run's thread", []],
    ["in shard workers", ["--workers", "2"]]
  ])(
    "a first Ctrl-C lets the shards (%s) commit what they read before the run ends (exit 130): a stop loses only the pages on their way; a rerun completes",
    async (_, flags) => {
      const out = tmp()
      const longShards = stopArgs(devnet.indexerUrl, out, flags)
      const before = devnet.stats().requests
      const { child, exited, stderr } = startCli(longShards)
      // some pages of every shard read, none of them near its end
      await until(() => devnet.stats().requests - before >= 30)
      const committedAtStop = committedFiles(out).length
      child.kill("SIGINT")
      expect(await exited, stderr()).toBe(130)
      expect(committedAtStop).toBe(0)
      // each of the six shards kept what it had read, a commit of its own
      const txs = JSON.parse(readFileSync(join(out, "txs", "_manifest.json"), "utf8")) as { files: Array<{ range: [number, number] }> }
      expect(new Set(txs.files.map((f) => f.range[0])).size).toBe(6)
      expect(stderr()).toMatch(/^committed by this run before it was stopped: .*\(report in _runs\/.*-interrupted\.json\)$/m)
      expectCommittedIntact(out, true)
      const resumed = await runCli(longShards)
      expect(resumed.code, resumed.stderr).toBe(0)
      await expectLakeMatchesChain(out, devnet, ["txs"])
    }
  )

  it.each([
    ["in the run's thread", []],
    ["in shard workers", ["--workers", "2"]]
  ])("a run whose commits fail after a first Ctrl-C (%s) exits 1 with its error, never 0", async (_, flags) => {
    const out = tmp()
    const args = stopArgs(devnet.indexerUrl, out, flags)
    const before = devnet.stats().requests
    const { child, exited, stderr } = startCli(args)
    await until(() => devnet.stats().requests - before >= 30)
    // the stop's commits cannot write the manifest
    rmSync(join(out, "txs", "_manifest.json"))
    mkdirSync(join(out, "txs", "_manifest.json", "x"), { recursive: true })
    child.kill("SIGINT")
    expect(await exited, stderr()).toBe(1)
    expect(stderr()).toMatch(/^chain-lake: error: cannot read the manifest of txs: /m)
  })

  it("a stop whose commits' checks wait on a server that no longer answers ends after its grace (exit 130), saying so; a rerun completes", async () => {
    let silent = false
    // answers as the devnet until `silent`, then never
    const proxy = await startProxy(devnet.indexerUrl, (_req, forward) => (silent ? new Promise<never>(() => {}) : forward()))
    try {
      const out = tmp()
      const args = stopArgs(proxy.url, out)
      const { child, exited, stderr } = startCli(args, { CHAIN_LAKE_TEST_STOP_GRACE_MS: "2000" })
      await until(() => proxy.requests.length >= 30)
      silent = true
      child.kill("SIGINT")
      expect(await exited, stderr()).toBe(130)
      expect(stderr()).toMatch(
        /^chain-lake: the shards' commits have not ended 2 s after the stop \(the indexer does not answer their checks, or another writer holds the lake's lock\?\): stopping without them$/m
      )
      expectCommittedIntact(out, true)
      const resumed = await runCli(["export", "--indexer-url", devnet.indexerUrl, ...args.slice(3)])
      expect(resumed.code, resumed.stderr).toBe(0)
      await expectLakeMatchesChain(out, devnet, ["txs"])
    } finally {
      await proxy.close()
    }
  })

  it("a stop whose commits wait for a lake lock another live process holds gives up the wait soon after: exit 1 naming the lock; a rerun once it is free completes", async () => {
    const out = tmp()
    const { exited, stderr, lock } = await stoppedBesideLock(out)
    expect(await exited, stderr()).toBe(1)
    expect(stderr()).toMatch(/^chain-lake: error: .*stopped while waiting for \S+_manifest\.lock, held by pid \d+ on /m)
    rmSync(lock)
    const resumed = await runCli(stopArgs(devnet.indexerUrl, out))
    expect(resumed.code, resumed.stderr).toBe(0)
    await expectLakeMatchesChain(out, devnet, ["txs"])
  })

  it("a stop whose commits wait for a lake lock another writer frees soon after (its own commit ending) commits what the shards read (exit 130)", async () => {
    const out = tmp()
    const { exited, stderr, lock } = await stoppedBesideLock(out)
    // every shard's files written, their commits waiting (the first for the lock, the rest behind it): held 0.5 s more
    await until(() => staged(out, "txs").length >= 6)
    await new Promise((r) => setTimeout(r, 500))
    rmSync(lock)
    expect(await exited, stderr()).toBe(130)
    expect(stderr()).not.toMatch(/stopped while waiting/)
    const txs = JSON.parse(readFileSync(join(out, "txs", "_manifest.json"), "utf8")) as { files: Array<{ range: [number, number] }> }
    expect(new Set(txs.files.map((f) => f.range[0])).size).toBe(6)
    expectCommittedIntact(out, true)
  })

  it("a second Ctrl-C stops the process at once (a cleanup stuck on the file system cannot hold it); what is committed stays whole and a rerun completes", async () => {
    const out = tmp()
    // the stop's clean-up is held for a minute (a test hook standing in for a file system that hangs): only the second signal ends it in time
    const { child, exited, stderr } = await exportUntilCommitted(out, 1, { CHAIN_LAKE_TEST_STOP_CLEANUP_MS: "60000" })
    child.kill("SIGINT")
    // the second signal once the first is taken (the process says so), not after a time: two signals pending at once are one
    await until(() => /^chain-lake: stopping \(Ctrl-C again stops at once\)$/m.test(stderr()))
    const sent = Date.now()
    child.kill("SIGINT")
    expect(await exited).toBe(130)
    expect(Date.now() - sent).toBeLessThan(30_000)
    expect(stderr()).toMatch(
      /^chain-lake: stopped at once \(second signal\): every file committed so far is kept; run the same command again to resume$/m
    )
    const resumed = await runCli(args(devnet.indexerUrl, out))
    expect(resumed.code, resumed.stderr).toBe(0)
    await expectLakeMatchesChain(out, devnet, DATASETS)
  })

  it("signals in the instant a run ends never kill the process by signal: it exits with the run's code (0, the run complete) or as stopped (130)", async () => {
    const codes: Array<number | null> = []
    for (let i = 0; i < 3; i++) {
      const out = tmp()
      const child = spawn(process.execPath, [BIN, "export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks"], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let printed = ""
      let signalling: NodeJS.Timeout | undefined
      // the run's last line printed: a SIGINT every millisecond from then on, until the process exits
      child.stdout.on("data", (d) => {
        printed += d
        if (signalling === undefined && / up to height \d+ in /.test(printed)) signalling = setInterval(() => child.kill("SIGINT"), 1)
      })
      const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])))
      clearInterval(signalling)
      expect(signalling, printed).toBeDefined()
      expect(signal).toBeNull()
      codes.push(code)
      if (code === 0) await expectLakeMatchesChain(out, devnet, ["blocks"])
    }
    for (const code of codes) expect([0, 130]).toContain(code)
  })

  it("a signal at any moment while the CLI loads and starts stops it with a line and 130, never a death by signal nor a signal dropped (exit 0); nothing is written", async () => {
    // 0 ms: the signal lands while the modules load; later ones as the CLI takes the signals over from bin/chain-lake.mjs
    for (const after of [0, 100, 200, 300, 450, 600]) {
      const out = tmp()
      const child = spawn(process.execPath, [BIN, ...stopArgs(devnet.indexerUrl, out)], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, CHAIN_LAKE_TEST_SAY_LOADING: "1" }
      })
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<[number | null, string | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])))
      while (!/^chain-lake: loading$/m.test(stderr)) await new Promise((r) => setTimeout(r, 1))
      await new Promise((r) => setTimeout(r, after))
      child.kill("SIGINT")
      const [code, signal] = await exited
      expect(signal, `${after} ms`).toBeNull()
      expect(code, `${after} ms: ${stderr}`).toBe(130)
      expect(stderr).toMatch(/^chain-lake: (stopped \(SIGINT\) while starting: nothing was done|stopping \(Ctrl-C again stops at once\))$/m)
      if (after === 0) expect(existsSync(join(out, "txs", "_manifest.json"))).toBe(false)
    }
  })

  it("an export stopped by SIGINT exits 130, says what it committed, writes an interrupted run report that matches the lake, and a rerun completes", async () => {
    const out = tmp()
    const { child, exited, stderr } = await exportUntilCommitted(out, 3)
    child.kill("SIGINT")
    expect(await exited).toBe(130)
    expect(stderr()).toMatch(
      /^committed by this run before it was stopped: .*\+\d+ rows? in \d+ files?.* \(report in _runs\/.*-interrupted\.json\)$/m
    )
    expect(stderr()).toMatch(/^chain-lake: interrupted: every file committed so far is kept; run the same command again to resume$/m)
    const reports = readdirSync(join(out, "_runs")).filter((f) => f.endsWith("-interrupted.json"))
    expect(reports.length).toBe(1)
    const report = JSON.parse(readFileSync(join(out, "_runs", reports[0]), "utf8")) as {
      interrupted: boolean
      committed: Array<{ dataset: string; rows: number; files: number }>
    }
    expect(report.interrupted).toBe(true)
    // the lake was empty: what the report says was committed is exactly what the manifests hold
    const byDataset = new Map<string, { rows: number; files: number }>()
    for (const f of committedFiles(out)) {
      const d = f.path.split("/")[0]
      const c = byDataset.get(d) ?? { rows: 0, files: 0 }
      byDataset.set(d, { rows: c.rows + f.rows, files: c.files + 1 })
    }
    expect(new Map(report.committed.map((c) => [c.dataset, { rows: c.rows, files: c.files }]))).toEqual(byDataset)
    const resumed = await runCli(args(devnet.indexerUrl, out))
    expect(resumed.code, resumed.stderr).toBe(0)
    await expectLakeMatchesChain(out, devnet, DATASETS)
  })
})
