/**
 * Killing `chain-lake export` (SIGKILL, no clean-up) at random points and rerunning gives the
 * same rows as an uninterrupted run: no partial file is visible, no row is duplicated.
 */
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../src/devnet/index.js"
import { BIN, runCli } from "./support/cli.js"
import { dumpLake } from "./support/lake.js"
import { tempDirs } from "./support/tmp.js"

const DATASETS = ["blocks", "txs", "evm_txs", "evm_logs", "evm_internal_txs", "nft_collections", "nft_tokens"]
const args = (url: string, out: string) => ["export", "--indexer-url", url, "--out", out, "--datasets", DATASETS.join(","), "--page-size", "40", "--concurrency", "4"]

let devnet: Devnet
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-resume-")
beforeAll(async () => {
  devnet = await startDevnet({ seed: 13, blocks: 500, latencyMs: 8 })
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

const allFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((e) => (statSync(join(dir, e)).isDirectory() ? allFiles(join(dir, e)) : [join(dir, e)]))

describe("kill and resume", () => {
  it("gives the rows of an uninterrupted run after SIGKILLs at random points", async () => {
    const clean = tmp()
    const full = await runCli(args(devnet.indexerUrl, clean))
    expect(full.code, full.stderr).toBe(0)

    const out = tmp()
    const kills = [700, 1300, 400].map((ms) => ms + Math.floor(Math.random() * 300))
    let killedMidway = 0
    for (const ms of kills) {
      const child = spawn(process.execPath, [BIN, ...args(devnet.indexerUrl, out)], { stdio: "ignore" })
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      const timer = setTimeout(() => child.kill("SIGKILL"), ms)
      const code = await exited
      clearTimeout(timer)
      if (code === null) killedMidway++
    }
    expect(killedMidway).toBeGreaterThan(0)
    const resumed = await runCli(args(devnet.indexerUrl, out))
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(allFiles(out).filter((f) => f.endsWith(".tmp"))).toEqual([])
    const [a, b] = await Promise.all([dumpLake(clean, DATASETS), dumpLake(out, DATASETS)])
    for (const name of DATASETS) expect(b[name], name).toEqual(a[name])
  })
})
