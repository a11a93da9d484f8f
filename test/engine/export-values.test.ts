/**
 * Every value of every exported dataset is the chain's: one in-process export of a small devnet
 * (real HTTP, real Parquet, small pages, narrow height buckets and small files, so page, shard,
 * bucket and file boundaries all fall inside the data), read back with DuckDB, and compared column
 * by column, row by row, with the rows test/support/chain-model.ts builds from the devnet's chain
 * model, never from the exporter's own mappings. A status inverted, two columns swapped, a record
 * dropped at a page edge, an amount rounded or a time off by its sub-second part each fail here,
 * naming the dataset, row key, column, expected and actual value.
 */
import { Effect, Either } from "effect"
import { readdirSync } from "node:fs"
import { join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS as REGISTRY, EXPORTED_DATASETS } from "../../src/datasets/index.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { txJson } from "../../src/devnet/render.js"
import { runExport } from "../../src/engine/export.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { expectDatasetMatches, expectedLake, withDuckDB, type ExpectedDataset } from "../support/chain-model.js"
import { scan } from "../support/lake.js"
import { expectManifestsTrue } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const SEED = 11
const BLOCKS = 150
const PAGE_SIZE = 20
const BUCKET_WIDTH = 50
// bytes of strings a writer stages before it starts a new file: a few pages of txs, so the tx
// families' shards write several files per bucket (part 1, 2, …) while blocks shards write one
const FLUSH_BYTES = 24_000
const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 100, timeoutMs: 1_500, maxRetries: 15 }
/** every dataset export writes, from the registry */
const DATASETS = EXPORTED_DATASETS.map((d) => d.name)

const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-values-")

let devnet: Devnet
let lake: Map<string, ExpectedDataset>

beforeAll(async () => {
  devnet = await startDevnet({ seed: SEED, blocks: BLOCKS })
  lake = new Map(expectedLake(devnet.chain, BUCKET_WIDTH).map((d) => [d.name, d]))
})

/*
 * The export runs inside the test, not in a hook: mutation testing (stryker.config.mjs) attributes
 * the code a test runs to that test, and runs only those tests against a mutant of that code;
 * code run by a hook would count as covered by no test.
 */
const exportAll = async (options: { readonly memoryLimitBytes?: number } = {}): Promise<string> => {
  const out = tmp()
  const result = await Effect.runPromise(
    Effect.either(runExport(REGISTRY, { pageSize: PAGE_SIZE, concurrency: 4, bucketWidth: BUCKET_WIDTH, flushBytes: FLUSH_BYTES })).pipe(
      Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out, limits: { concurrency: 4, rps: 0 }, retry: FAST_RETRY, ...options }))
    )
  )
  if (Either.isLeft(result)) throw new Error(`export failed: ${JSON.stringify(result.left)}`)
  return out
}

afterAll(async () => {
  await devnet?.stop()
  removeTmpDirs()
})

/** Relative paths of every Parquet file under the output folder. */
const parquetFiles = (out: string, dir = out): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? parquetFiles(out, join(dir, e.name)) : e.name.endsWith(".parquet") ? [relative(out, join(dir, e.name))] : []
  )

// ---------------------------------------------------------------- the tests

describe("export values", () => {
  it("every column of every row of every dataset equals the chain model, across page, shard, bucket and file boundaries", async () => {
    const out = await exportAll()
    for (const name of DATASETS) await expectDatasetMatches(out, lake.get(name)!)
    // and the manifests say the truth about every file
    await expectManifestsTrue(out, DATASETS)
    // snapshot_time: one read time per snapshot
    await withDuckDB(async (conn) => {
      for (const name of EXPORTED_DATASETS.filter((d) => d.kind === "snapshot").map((d) => d.name)) {
        const [r] = (await conn.runAndReadAll(`SELECT count(DISTINCT snapshot_time) AS times FROM ${scan(out, name)}`)).getRowObjectsJson()
        expect(r.times, name).toBe("1")
      }
    })
    // the run crossed the boundaries the comparisons are meant to guard: several height buckets,
    // and a shard that wrote more than one file for a bucket
    for (const name of ["blocks", "txs"]) {
      const buckets = readdirSync(join(out, name)).filter((e) => e.startsWith("height_bucket="))
      expect(buckets.length, `${name}: height_bucket folders`).toBeGreaterThan(1)
    }
    const files = parquetFiles(out)
    // part numbers restart at 0 per shard and bucket: a part 1 means a second file for one bucket
    expect(files.filter((f) => /\/part-[hp]\d{12}-\d{12}-[1-9]\d*\.parquet$/.test(f)).length, files.join("\n")).toBeGreaterThan(0)
    // more rows than one page everywhere but the small NFT collection list, so page edges fall inside the data
    for (const name of ["blocks", "txs", "evm_txs", "evm_logs", "evm_internal_txs", "nft_tokens", "holders"])
      expect(lake.get(name)!.rows.length, name).toBeGreaterThan(PAGE_SIZE)
  })

  it("under a run-wide staging budget smaller than a page, files are finished early and every value is still the chain's", async () => {
    // a memory limit below the process base stages nothing (less than a page of txs): every shard finishes files early
    const out = await exportAll({ memoryLimitBytes: 20_000 })
    for (const name of DATASETS) await expectDatasetMatches(out, lake.get(name)!)
    await expectManifestsTrue(out, DATASETS)
    // more files than a run without the budget (where txs already flush every page or two, the
    // datasets of small rows did not): rows past the budget went to files of their own
    const plain = await exportAll()
    for (const name of ["blocks", "evm_logs", "token_transfers_cosmos"]) {
      const files = (dir: string) => parquetFiles(dir).filter((f) => f.startsWith(`${name}/`)).length
      expect(files(out), name).toBeGreaterThan(files(plain))
    }
  })

  it("the seed yields the cases the comparisons tell apart", () => {
    const rows = (name: string) => lake.get(name)!.rows
    const evmTxs = rows("evm_txs")
    // failed and successful EVM txs (an inverted status), blocks with several EVM txs (gas_used ≠ cumulative)
    expect(evmTxs.some((r) => r.status === 0) && evmTxs.some((r) => r.status === 1)).toBe(true)
    expect(evmTxs.some((r) => r.gas_used !== r.cumulative_gas_used)).toBe(true)
    expect(evmTxs.some((r) => r.contract_address !== null)).toBe(true)
    expect(evmTxs.some((r) => r.effective_gas_price !== "0")).toBe(true)
    const txs = rows("txs")
    // multi-message txs, memos, failures
    expect(txs.some((r) => (r.message_types as ReadonlyArray<string>).length > 1)).toBe(true)
    expect(txs.some((r) => r.memo !== "")).toBe(true)
    expect(txs.some((r) => r.code !== 0)).toBe(true)
    // txs whose events the indexer serves as null (failed in the ante handler), stored as []
    const c0 = devnet.chain
    const nullEvents = Array.from({ length: c0.tip }, (_, k) => k + 1)
      .flatMap((h) => Array.from({ length: c0.blockTxCount(h) }, (_, i) => txJson(c0, h, i)))
      .filter((t) => t.events === null)
    expect(nullEvents.length).toBeGreaterThan(0)
    // balances beyond 2^53 (a Number() rounds them) and a second fee denom
    const holders = rows("holders")
    expect(holders.some((r) => BigInt(String(r.amount)) > BigInt(Number.MAX_SAFE_INTEGER))).toBe(true)
    expect(new Set(holders.map((r) => r.denom)).size).toBeGreaterThan(1)
    // internal calls with and without a value
    const internal = rows("evm_internal_txs")
    expect(internal.some((r) => r.value === null) && internal.some((r) => r.value !== null && r.value !== "0")).toBe(true)
    // tx times whose nanoseconds past the microsecond are ≥ 500: rounding and truncation differ there
    const c = devnet.chain
    const heights = Array.from({ length: c.tip }, (_, k) => k + 1).filter((h) => c.blockTxCount(h) > 0)
    expect(heights.some((h) => c.headerExtraNanos(h) % 1000 >= 500)).toBe(true)
  })
})
