/**
 * The export engine against the in-process devnet over real HTTP, real Parquet and real DuckDB:
 * every dataset's rows match the chain; faults do not change the output; a killed run resumes
 * with no duplicates; a malformed record fails clearly or is quarantined; a growing chain gives
 * no gaps; hostile names stay inside the output folder.
 */
import { Effect, Either } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import { DENOMS, startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runExport, type ExportOptions } from "../../src/engine/export.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { committedFiles, dataFilesUnder, dumpLake, hashTree, queryLake, scan } from "../support/lake.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 100, timeoutMs: 1_500, maxRetries: 15 }
const tmp = () => mkdtempSync(join(tmpdir(), "chain-lake-"))

const exportTo = (devnet: Devnet, out: string, options: ExportOptions = {}) =>
  Effect.runPromise(
    Effect.either(runExport(DATASETS, { pageSize: 100, concurrency: 6, ...options })).pipe(
      Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out, limits: { concurrency: 6, rps: 0 }, retry: FAST_RETRY }))
    )
  )
const exportOk = async (devnet: Devnet, out: string, options: ExportOptions = {}) => {
  const r = await exportTo(devnet, out, options)
  if (Either.isLeft(r)) throw new Error(`export failed: ${JSON.stringify(r.left)}`)
  return r.right
}

let devnet: Devnet
let cleanOut: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 8, blocks: 700 })
  cleanOut = tmp()
  await exportOk(devnet, cleanOut)
})
afterAll(async () => {
  await devnet.stop()
  rmSync(cleanOut, { recursive: true, force: true })
})

describe("export: content matches the chain", () => {
  it("blocks, txs, EVM receipts, logs and internal txs: counts, heights and sums", async () => {
    const c = devnet.chain
    const [blocks] = await queryLake(
      `SELECT count(*) n, count(DISTINCT height) d, min(height) lo, max(height) hi, sum(tx_count) txs, sum(gas_used) gas FROM ${scan(cleanOut, "blocks")}`
    )
    expect(blocks).toMatchObject({ n: 700n, d: 700n, lo: 1n, hi: 700n, txs: BigInt(c.txTotal()) })
    const [txs] = await queryLake(`SELECT count(*) n, count(DISTINCT tx_hash) d, sum(gas_used) gas FROM ${scan(cleanOut, "txs")}`)
    expect(txs).toMatchObject({ n: BigInt(c.txTotal()), d: BigInt(c.txTotal()), gas: blocks.gas })
    // txs per block equal tx_count
    const mismatched = await queryLake(
      `SELECT b.height FROM ${scan(cleanOut, "blocks")} b LEFT JOIN (SELECT height, count(*) n FROM ${scan(cleanOut, "txs")} GROUP BY height) t USING (height) WHERE coalesce(t.n, 0) <> b.tx_count`
    )
    expect(mismatched).toEqual([])
    const [evm] = await queryLake(`SELECT count(*) n, count(DISTINCT tx_hash) d, sum(log_count) logs FROM ${scan(cleanOut, "evm_txs")}`)
    expect(evm).toMatchObject({ n: BigInt(c.evmTotal()), d: BigInt(c.evmTotal()) })
    const [logs] = await queryLake(`SELECT count(*) n FROM ${scan(cleanOut, "evm_logs")}`)
    expect(logs.n).toBe(BigInt(evm.logs))
    const [itx] = await queryLake(
      `SELECT count(*) n, max(height) hi, count(*) FILTER (WHERE parent_call_index = -1) tops FROM ${scan(cleanOut, "evm_internal_txs")}`
    )
    expect(itx.n).toBe(BigInt(c.traceTotal(c.internalTxHeight)))
    expect(Number(itx.hi)).toBeLessThanOrEqual(c.internalTxHeight)
  })

  it("column types: BIGINT heights, UTC timestamps, exact amounts, JSON and list columns", async () => {
    const types = await queryLake(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${scan(cleanOut, "txs")})`)
    const t = Object.fromEntries(types.map((r) => [r.column_name, r.column_type]))
    expect(t).toMatchObject({
      height: "BIGINT",
      timestamp: "TIMESTAMP_NS",
      gas_used: "BIGINT",
      message_types: "VARCHAR[]",
      code: "INTEGER"
    })
    const [row] = await queryLake(
      `SELECT tx_hash, timestamp::VARCHAR ts, message_types, json_extract_string(tx, '$.body.messages[0]."@type"') first_type FROM ${scan(cleanOut, "txs")} WHERE height = 5 ORDER BY tx_hash LIMIT 1`
    )
    expect(row.first_type).toBe(row.message_types[0])
    expect(row.ts.startsWith("2026-01-01")).toBe(true)
    const [denoms] = await queryLake(`SELECT list(DISTINCT denom ORDER BY denom) d FROM ${scan(cleanOut, "holders")}`)
    // the default denoms are those in the blocks' total_fee
    expect(denoms.d).toEqual([DENOMS[1].denom, DENOMS[0].denom])
    // another denom joins the same snapshot later; its amounts go beyond 2^64 and stay exact
    await exportOk(devnet, cleanOut, { datasets: ["holders"], params: { denoms: [DENOMS[2].denom] } })
    const [big] = await queryLake(
      `SELECT max(amount)::VARCHAR m, count(DISTINCT snapshot_height) snaps FROM ${scan(cleanOut, "holders")} WHERE denom = '${DENOMS[2].denom}'`
    )
    expect(BigInt(big.m)).toBeGreaterThan(2n ** 64n)
    expect(big.snaps).toBe(1n)
    const again = await exportOk(devnet, cleanOut, { datasets: ["holders"], params: { denoms: [DENOMS[2].denom] } })
    expect(again.datasets[0].skipped).toMatch(/already committed/)
  })

  it("holders match the rich list at rich_list_height; NFT snapshots match live ownership", async () => {
    const c = devnet.chain
    for (const [i, d] of DENOMS.entries()) {
      if (i === 2) continue // not a fee denom, so not a default one
      const rows = await queryLake(
        `SELECT account_address AS account, amount_text AS amount FROM ${scan(cleanOut, "holders")} WHERE denom = '${d.denom}' ORDER BY account`
      )
      const expected = c
        .holders(i)
        .map((h) => ({ account: h.account.evm, amount: h.amount.toString() }))
        .sort((a, b) => (a.account < b.account ? -1 : 1))
      expect(rows).toEqual(expected)
    }
    const [snap] = await queryLake(`SELECT DISTINCT snapshot_height FROM ${scan(cleanOut, "holders")}`)
    expect(snap.snapshot_height).toBe(BigInt(c.richListHeight))
    const live = c.u.collections
      .flatMap((col) => c.liveTokensOf(col.index).map((t) => `${col.address}|${t.tokenId}|${c.accountOf(t.owner).bech32}`))
      .sort()
    const tokens = await queryLake(
      `SELECT collection_address || '|' || token_id || '|' || owner_bech32 k FROM ${scan(cleanOut, "nft_tokens")} ORDER BY k`
    )
    expect(tokens.map((r) => r.k)).toEqual(live)
    const manifest = JSON.parse(readFileSync(join(cleanOut, "holders", "_manifest.json"), "utf8"))
    expect(manifest.snapshots[0]).toMatchObject({ consistency: "exact", duplicates_dropped: 0 })
    expect(manifest.snapshots[0].lists.length).toBeGreaterThanOrEqual(2)
  })

  it("a rerun commits nothing new and changes no file; files are listed in manifests with their sha256", async () => {
    const before = hashTree(cleanOut)
    const report = await exportOk(devnet, cleanOut)
    expect(report.datasets.every((d) => d.rows === 0)).toBe(true)
    expect(hashTree(cleanOut)).toEqual(before)
    // every file on disk is committed, and every committed file is on disk
    expect(dataFilesUnder(cleanOut).sort()).toEqual(
      committedFiles(cleanOut)
        .map((f) => f.path)
        .sort()
    )
    const m = JSON.parse(readFileSync(join(cleanOut, "txs", "_manifest.json"), "utf8"))
    expect(m.committed).toEqual([[0, devnet.chain.txTotal()]])
    const { createHash } = await import("node:crypto")
    for (const f of m.files)
      expect(
        createHash("sha256")
          .update(readFileSync(join(cleanOut, "txs", f.path)))
          .digest("hex")
      ).toBe(f.sha256)
  })
})

describe("export: robustness", () => {
  it("with the heavy fault profile the output equals a clean run's", async () => {
    const faulty = await startDevnet({ seed: 8, blocks: 700, faults: "heavy,stall-ms=3000,retry-after=0" })
    const out = tmp()
    try {
      await exportOk(faulty, out)
      // the clean folder also holds the LAKE holders (added by an earlier test)
      await exportOk(faulty, out, { datasets: ["holders"], params: { denoms: [DENOMS[2].denom] } })
      const [a, b] = await Promise.all([dumpLake(cleanOut), dumpLake(out)])
      for (const name of Object.keys(a)) expect(b[name], name).toEqual(a[name])
      // and both equal the chain, not merely each other (holders here also hold the third denom)
      await expectLakeMatchesChain(out, faulty, [
        "blocks",
        "txs",
        "evm_txs",
        "evm_logs",
        "evm_internal_txs",
        "nft_collections",
        "nft_tokens"
      ])
    } finally {
      await faulty.stop()
      rmSync(out, { recursive: true, force: true })
    }
  })

  it("--from-height/--to-height bound a run, and a later run fills in the rest exactly", async () => {
    const out = tmp()
    try {
      await exportOk(devnet, out, { datasets: ["blocks", "txs", "evm_txs", "evm_logs"], fromHeight: 200, toHeight: 399 })
      const [part] = await queryLake(`SELECT min(height) lo, max(height) hi FROM ${scan(out, "txs")}`)
      expect(part).toEqual({ lo: expect.any(BigInt), hi: expect.any(BigInt) })
      expect(Number(part.lo)).toBeGreaterThanOrEqual(200)
      expect(Number(part.hi)).toBeLessThanOrEqual(399)
      await exportOk(devnet, out, { datasets: ["blocks", "txs", "evm_txs", "evm_logs"] })
      const [a, b] = await Promise.all([
        dumpLake(cleanOut, ["blocks", "txs", "evm_txs", "evm_logs"]),
        dumpLake(out, ["blocks", "txs", "evm_txs", "evm_logs"])
      ])
      for (const name of Object.keys(b)) expect(b[name], name).toEqual(a[name])
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it("a malformed record fails with endpoint, page key and field path, committing nothing more; quarantine skips it", async () => {
    const bad = await startDevnet({ seed: 8, blocks: 700, faults: "malformed=0.05" })
    const out = tmp()
    try {
      const failed = await exportTo(bad, out, { datasets: ["txs"] })
      expect(Either.isLeft(failed)).toBe(true)
      const err = Either.isLeft(failed) ? failed.left : undefined
      expect(err?._tag).toBe("IndexerDecodeError")
      expect(String(err)).toMatch(
        /^malformed response from txs \(page key (none|\S+)\) at txs\[\d+\]\.txhash: Expected string, actual 12345$/
      )
      const quarantined = await exportOk(bad, out, { datasets: ["txs"], onInvalid: "quarantine" })
      const q = readFileSync(join(out, "_quarantine", "txs.ndjson"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
      expect(q.length).toBeGreaterThan(0)
      expect(q[0]).toMatchObject({ endpoint: "txs", path: expect.stringMatching(/^txs\[\d+\]\.txhash$/) })
      const [n] = await queryLake(`SELECT count(*) n, count(DISTINCT tx_hash) d FROM ${scan(out, "txs")}`)
      expect(Number(n.n) + q.length).toBe(bad.chain.txTotal())
      expect(n.d).toBe(n.n)
      expect(quarantined.datasets[0].quarantined).toBe(q.length)
      // with blocks beside it, the txs a quarantine set aside are no disagreement with blocks' tx_count
      const both = await exportOk(bad, tmp(), { datasets: ["blocks", "txs"], onInvalid: "quarantine" })
      expect(both.datasets.find((d) => d.dataset === "txs")?.quarantined).toBeGreaterThan(0)
    } finally {
      await bad.stop()
      rmSync(out, { recursive: true, force: true })
    }
  })

  it("a chain growing during the export yields no gaps or duplicates, then catches up", async () => {
    const growing = await startDevnet({ seed: 8, blocks: 300, blockTimeMs: 15 })
    const out = tmp()
    try {
      await exportOk(growing, out, { datasets: ["blocks", "txs"] })
      await new Promise((r) => setTimeout(r, 200))
      await exportOk(growing, out, { datasets: ["blocks", "txs"] })
      const [b] = await queryLake(`SELECT count(*) n, count(DISTINCT height) d, min(height) lo, max(height) hi FROM ${scan(out, "blocks")}`)
      expect(b.n).toBe(b.d)
      expect(BigInt(b.hi) - BigInt(b.lo) + 1n).toBe(BigInt(b.n))
      expect(Number(b.hi)).toBeGreaterThan(300)
      const mismatched = await queryLake(
        `SELECT b.height FROM ${scan(out, "blocks")} b LEFT JOIN (SELECT height, count(*) n FROM ${scan(out, "txs")} GROUP BY height) t USING (height) WHERE coalesce(t.n, 0) <> b.tx_count`
      )
      expect(mismatched).toEqual([])
      const [t] = await queryLake(`SELECT count(*) n, count(DISTINCT tx_hash) d FROM ${scan(out, "txs")}`)
      expect(t.n).toBe(t.d)
    } finally {
      await growing.stop()
      rmSync(out, { recursive: true, force: true })
    }
  })

  it("hostile collection names and denoms never become paths: every file stays inside the output folder", async () => {
    const files: Array<string> = []
    const walk = (dir: string) => {
      for (const e of readdirSync(dir)) {
        const p = join(dir, e)
        if (statSync(p).isDirectory()) walk(p)
        else files.push(resolve(p))
      }
    }
    walk(cleanOut)
    expect(files.every((f) => f.startsWith(resolve(cleanOut) + "/"))).toBe(true)
    expect(files.some((f) => f.includes("etc") || f.includes("ibc"))).toBe(false)
    const names = await queryLake(`SELECT name FROM ${scan(cleanOut, "nft_collections")} ORDER BY name`)
    expect(names.map((r) => r.name)).toContain("../../etc")
  })

  it("on a Move chain the datasets whose endpoints answer 404 (EVM routes) are skipped with a notice", async () => {
    const move = await startDevnet({ seed: 8, blocks: 100, vm: "move" })
    const out = tmp()
    const notices: Array<string> = []
    try {
      const report = await exportOk(move, out, { observer: { notice: (m) => notices.push(m) } })
      const skipped = report.datasets
        .filter((d) => d.skipped)
        .map((d) => d.dataset)
        .sort()
      expect(skipped).toEqual(["evm_internal_txs", "evm_logs", "evm_txs", "nft_transfers", "token_transfers_evm"])
      expect(
        notices.some((n) => /^evm_txs: skipped, its endpoint evm-txs answered that this indexer does not serve it \(404\)$/.test(n))
      ).toBe(true)
      expect(report.datasets.find((d) => d.dataset === "txs")!.rows).toBe(move.chain.txTotal())
    } finally {
      await move.stop()
      rmSync(out, { recursive: true, force: true })
    }
  })
})
