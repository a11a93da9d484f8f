/**
 * verify on lakes that are consistent but not whole (a run stopped, a stretch not exported yet, one
 * dataset ahead of another): the datasets are compared only where both hold every row, so such a
 * lake passes, naming what it lacks; a row lost or added inside what the manifests say is committed
 * still fails. Real CLI processes over a loopback devnet, real Parquet rewritten with DuckDB.
 */
import { cpSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { queryLake, sha256Of } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"
import { verifyChecks } from "../support/verify.js"

const { make: tmp, removeAll } = tempDirs("chain-lake-verify-")
const DATASETS = "blocks,txs,evm_txs,evm_logs"
let devnet: Devnet
/** blocks, txs, evm_txs and evm_logs of heights 1-40 and 71-110 (41-70 not exported), evm_txs also of 111-150 */
let lake: string

const exportInto = async (out: string, ...args: Array<string>) => {
  const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, ...args])
  expect(r.code, r.stderr).toBe(0)
}

beforeAll(async () => {
  devnet = await startDevnet({ seed: 3, blocks: 160 })
  lake = tmp()
  await exportInto(lake, "--datasets", DATASETS, "--to-height", "40")
  await exportInto(lake, "--datasets", DATASETS, "--from-height", "71", "--to-height", "110")
  await exportInto(lake, "--datasets", "evm_txs", "--to-height", "150")
})
afterAll(async () => {
  await devnet?.stop()
  removeAll()
})

const copyOfLake = () => {
  const out = tmp()
  cpSync(lake, out, { recursive: true })
  return out
}
const check = (stdout: string, name: string) => verifyChecks(stdout, new RegExp(name.replace(/[()]/g, "\\$&"))).get(name)
const detail = (stdout: string, name: string) =>
  stdout
    .split("\n")
    .find((l) => l.includes(`${name}: `))
    ?.split(`${name}: `)[1]

/**
 * Rewrites the committed file of `dataset` holding the row `where` picks, without that row, and
 * its manifest entry to match (rows, bytes, sha256): a writer that lost a row, as verify sees it.
 */
const dropRow = async (out: string, dataset: string, where: string) => {
  const manifestPath = join(out, dataset, "_manifest.json")
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"))
  for (const f of manifest.files) {
    const path = join(out, dataset, f.path)
    const [{ n }] = await queryLake(`SELECT count(*) n FROM read_parquet('${path}') WHERE ${where}`)
    if (Number(n) === 0) continue
    await queryLake(`COPY (SELECT * FROM read_parquet('${path}') WHERE NOT (${where})) TO '${path}.new' (FORMAT parquet)`)
    cpSync(`${path}.new`, path)
    f.rows -= Number(n)
    f.sha256 = sha256Of(path)
    f.bytes = readFileSync(path).length
    writeFileSync(manifestPath, JSON.stringify(manifest))
    return
  }
  throw new Error(`no ${dataset} row where ${where}`)
}

/** verify of a copy of the lake without the rows of `dataset` of one tx: the greatest hash `where` picks in `pickFrom`. */
const verifyWithout = async (dataset: string, pickFrom: string, where: string) => {
  const [{ tx }] = await queryLake(`SELECT max(tx_hash) tx FROM read_parquet('${lake}/${pickFrom}/**/*.parquet') WHERE ${where}`)
  const out = copyOfLake()
  await dropRow(out, dataset, `tx_hash = '${tx}'`)
  return { tx: String(tx), verify: await runCli(["verify", "--data", out]) }
}

describe("chain-lake verify on a lake that is not whole", () => {
  it("passes, naming the heights not exported yet, and compares txs with blocks and logs with receipts only where both hold every row", async () => {
    const v = await runCli(["verify", "--data", lake])
    expect(v.code, v.stdout + v.stderr).toBe(0)
    expect(detail(v.stdout, "blocks: heights not exported yet")).toMatch(/^41-70: between what its manifest lists as committed/)
    const [{ below, above, top }] = await queryLake(
      `SELECT max(height) FILTER (WHERE height <= 40) below, min(height) FILTER (WHERE height >= 71) above, max(height) top FROM read_parquet('${lake}/txs/**/*.parquet')`
    )
    expect(detail(v.stdout, "txs: heights not exported yet")).toMatch(
      new RegExp(`^${below}-${above} \\(the first and last of each in part\\)`)
    )
    expect(check(v.stdout, "blocks: every committed height, no other")).toBe(true)
    // heights 1-39 and 72-109 whole (40 and 71 at the ends of what txs committed in two runs; 110 the last)
    expect(detail(v.stdout, "txs per block equal tx_count")).toMatch(
      new RegExp(
        `^\\d+ heights equal; at ${below}, ${above}, ${top}, where what txs committed starts or ends \\(maybe inside the height\\), no more than tx_count$`
      )
    )
    expect(detail(v.stdout, "evm_logs: one row per receipt log")).toMatch(
      /^\d+ receipts, \d+ logs at heights \d+-\d+, \d+-\d+ \(those both hold whole\)$/
    )
    for (const d of ["txs", "evm_txs"]) expect(check(v.stdout, `${d}: a row for each list position committed`)).toBe(true)
  })

  it("fails where a row is lost inside what the manifests say is committed: a tx at a height both hold whole, a block, a log of a receipt both hold", async () => {
    const [{ tx }] = await queryLake(`SELECT min(tx_hash) tx FROM read_parquet('${lake}/txs/**/*.parquet') WHERE height BETWEEN 80 AND 100`)
    const txLost = copyOfLake()
    await dropRow(txLost, "txs", `tx_hash = '${tx}'`)
    const v = await runCli(["verify", "--data", txLost])
    expect(v.code).toBe(1)
    expect(check(v.stdout, "txs per block equal tx_count")).toBe(false)
    const blockLost = copyOfLake()
    await dropRow(blockLost, "blocks", "height = 20")
    const b = await runCli(["verify", "--data", blockLost])
    expect(b.code).toBe(1)
    expect(detail(b.stdout, "blocks: every committed height, no other")).toBe("heights 1-40, 71-110: 80 committed, 79 held")
    const { tx: h, verify: w } = await verifyWithout("evm_logs", "evm_logs", "height BETWEEN 5 AND 35")
    expect(w.code).toBe(1)
    expect(check(w.stdout, "evm_logs: one row per receipt log")).toBe(false)
    expect(detail(w.stdout, "evm_logs: one row per receipt log")).toMatch(
      new RegExp(`^1 receipt\\(s\\) whose log rows differ, e.g. ${h}: log_count \\d+, 0 rows$`)
    )
  })

  it("fails where a receipt both committed is gone from evm_txs while its logs stay", async () => {
    const { verify: v } = await verifyWithout("evm_txs", "evm_logs", "height BETWEEN 75 AND 105")
    expect(v.code).toBe(1)
    expect(detail(v.stdout, "evm_logs: one row per receipt log")).toMatch(/^\d+ log row\(s\) whose receipt evm_txs does not hold$/)
  })

  it("fails where a tx is lost at the top of a whole lake, where no block's tx_count is compared exactly: each position committed holds a row", async () => {
    const out = tmp()
    await exportInto(out, "--datasets", "blocks,txs,evm_txs", "--to-height", "60")
    const [{ tx }] = await queryLake(
      `SELECT max(tx_hash) tx FROM read_parquet('${out}/txs/**/*.parquet') WHERE height = (SELECT max(height) FROM read_parquet('${out}/txs/**/*.parquet'))`
    )
    await dropRow(out, "txs", `tx_hash = '${tx}'`)
    const v = await runCli(["verify", "--data", out])
    expect(v.code).toBe(1)
    expect(check(v.stdout, "txs per block equal tx_count")).toBe(true)
    expect(detail(v.stdout, "txs: a row for each list position committed")).toMatch(/^1 of \d+ positions without a row$/)
  })

  it("after a compaction (a file of receipts reaching past the logs committed), receipts are still compared with logs, and a lost log fails", async () => {
    const out = copyOfLake()
    const compacted = await runCli(["compact", "--data", out])
    expect(compacted.code, compacted.stderr).toBe(0)
    const [{ h }] = await queryLake(`SELECT max(tx_hash) h FROM read_parquet('${out}/evm_logs/**/*.parquet') WHERE height BETWEEN 5 AND 35`)
    await dropRow(out, "evm_logs", `tx_hash = '${h}'`)
    const v = await runCli(["verify", "--data", out])
    expect(v.code).toBe(1)
    expect(detail(v.stdout, "evm_logs: one row per receipt log")).toMatch(
      new RegExp(`^1 receipt\\(s\\) whose log rows differ, e.g. ${h}: log_count \\d+, 0 rows$`)
    )
  })

  it("a whole lake: every height compared, no note", async () => {
    const out = tmp()
    await exportInto(out, "--datasets", DATASETS, "--to-height", "120")
    const v = await runCli(["verify", "--data", out])
    expect(v.code, v.stdout).toBe(0)
    expect(v.stdout).not.toContain("not exported yet")
    expect(v.stdout).not.toContain("ahead of the other")
    const [{ low, top }] = await queryLake(`SELECT min(height) low, max(height) top FROM read_parquet('${out}/txs/**/*.parquet')`)
    expect(detail(v.stdout, "txs per block equal tx_count")).toBe(
      `${top - low} heights equal; at ${top}, where what txs committed starts or ends (maybe inside the height), no more than tx_count`
    )
  })
})
