/**
 * Killing `chain-lake export` (SIGKILL, no clean-up) after commits, at many points, and rerunning
 * gives exactly the chain: after every kill each committed file is on disk with the sha256 its
 * manifest records; after the resume every row of the chain model is in the lake once, every file
 * on disk is committed (and every committed file on disk), and `verify` passes.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../src/devnet/index.js"
import { expectLakeMatchesChain } from "./support/chain-model.js"
import { BIN, runCli } from "./support/cli.js"
import { committedFiles, dataFilesUnder, sha256Of } from "./support/lake.js"
import { tempDirs } from "./support/tmp.js"

const DATASETS = ["blocks", "txs", "evm_txs", "evm_logs", "evm_internal_txs", "nft_collections", "nft_tokens", "holders"]
const args = (url: string, out: string) => ["export", "--indexer-url", url, "--out", out, "--datasets", DATASETS.join(","), "--page-size", "40", "--concurrency", "4"]

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

/** Every committed file is on disk with the checksum its manifest records. */
const expectCommittedIntact = (out: string) => {
  for (const f of committedFiles(out)) {
    expect(existsSync(join(out, f.path)), `${f.path} is committed but missing`).toBe(true)
    expect(sha256Of(join(out, f.path)), `${f.path} changed after its commit`).toBe(f.sha256)
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
    expectCommittedIntact(out)
    // no leftovers: every Parquet file on disk is committed, and nothing temporary remains
    const onDisk = dataFilesUnder(out)
    expect(onDisk.sort()).toEqual(committedFiles(out).map((f) => f.path).sort())
    await expectLakeMatchesChain(out, devnet, DATASETS)
    const verify = await runCli(["verify", "--data", out])
    expect(verify.code, verify.stdout).toBe(0)
  })
})
