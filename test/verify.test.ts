/** `chain-lake verify`: passes on a clean export, and names what is wrong on a damaged one or against another chain. */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../src/devnet/index.js"
import { runCli } from "./support/cli.js"

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
    expect(r.stdout).toMatch(/^ok +blocks match the API \(10 sampled\)/m)
    expect(r.stdout).toMatch(/^all \d+ checks passed$/m)
  })

  it("fails against another chain, naming the block that differs", async () => {
    const r = await runCli(["verify", "--data", data, "--indexer-url", other.indexerUrl])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^FAIL +blocks match the API \(10 sampled\): height \d+: lake /m)
  })

  it("finds duplicates and manifest drift when a file is copied into the lake by hand", async () => {
    const dir = join(data, "txs", "height_bucket=0")
    const file = readdirSync(dir).find((f) => f.endsWith(".parquet"))!
    copyFileSync(join(dir, file), join(dir, "copy-" + file))
    const r = await runCli(["verify", "--data", data])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^FAIL +txs: no duplicate txhash/m)
    expect(r.stdout).toMatch(/^FAIL +txs per block equal tx_count/m)
    expect(r.stdout).toMatch(/^FAIL +txs: rows equal the manifest's/m)
    expect(r.stderr.trim()).toMatch(/^chain-lake: error: 3 of \d+ checks failed$/)
  })
})
