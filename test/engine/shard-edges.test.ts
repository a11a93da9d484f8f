/**
 * A shard's edges (src/engine/shard.ts), in process against a small devnet, behind a recording
 * proxy: a shard spanning several height buckets puts each bucket's rows in that bucket's files;
 * a shard that starts past the first row asks its first page for no more rows than it holds; a
 * listing that serves an earlier page again (not the page just before, which the record check
 * sees) fails before any of it is committed; datasets that carry no block time ask the block list
 * nothing; over the staging budget a shard finishes its largest file early; and a shard whose range
 * another writer committed meanwhile drops its own rows and exports only what is still missing.
 */
import { Effect, Either } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import type { Devnet } from "../../src/devnet/index.js"
import type { Manifest } from "../../src/lake/Manifests.js"
import { PROCESS_BASE_BYTES } from "../../src/lake/writer.js"
import { runExport, type ExportOptions, type ExportReport } from "../../src/engine/export.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { expectDatasetMatches, expectedLake } from "../support/chain-model.js"
import { json, proxiedDevnet, type HostileServer } from "../support/hostile.js"
import { tempDirs } from "../support/tmp.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 50, timeoutMs: 2_000, maxRetries: 4 }
const TXS_PATH = "/indexer/tx/v1/txs"
const BLOCKS_PATH = "/indexer/block/v1/blocks"

const dirs = tempDirs("chain-lake-shard-")
let devnet: Devnet
const { proxy } = proxiedDevnet({ seed: 23, blocks: 60 }, (d) => (devnet = d))
afterAll(() => dirs.removeAll())

const exportVia = (url: string, out: string, options: ExportOptions, memoryLimitBytes?: number) =>
  Effect.runPromise(
    Effect.either(runExport(DATASETS, options)).pipe(
      Effect.provide(
        exportLayer({
          indexerUrl: url,
          out,
          limits: { concurrency: 4, rps: 0 },
          retry: FAST_RETRY,
          ...(memoryLimitBytes === undefined ? {} : { memoryLimitBytes })
        })
      )
    )
  )
const exportOk = async (url: string, out: string, options: ExportOptions, memoryLimitBytes?: number): Promise<ExportReport> => {
  const r = await exportVia(url, out, options, memoryLimitBytes)
  if (Either.isLeft(r)) throw new Error(`export failed: ${String(r.left)}`)
  return r.right
}
const manifestOf = (out: string, dataset: string): Manifest => JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8"))
const recorder = () => proxy((_, forward) => forward())
const requestsTo = (server: HostileServer, path: string) =>
  server.requests.map((r) => new URL(r.path, "http://x")).filter((u) => u.pathname === path)
const model = (name: string, bucketWidth: number) => expectedLake(devnet.chain, bucketWidth).find((d) => d.name === name)!

describe("a shard's edges", () => {
  it("a shard spanning several height buckets writes each bucket's rows into that bucket's files, several parts where files fill", async () => {
    const out = dirs.make()
    // one shard of every height (concurrency 1), buckets of 10 heights, files finished at ~4 kB
    await exportOk(devnet.indexerUrl, out, { datasets: ["blocks", "txs"], pageSize: 7, concurrency: 1, bucketWidth: 10, flushBytes: 4_000 })
    for (const name of ["blocks", "txs"]) {
      const files = manifestOf(out, name).files
      for (const f of files) {
        const bucket = Number(/^height_bucket=(\d+)\//.exec(f.path)![1])
        expect(
          [f.min_height! >= bucket, f.max_height! < bucket + 10],
          `${name}/${f.path} holds heights ${f.min_height}..${f.max_height}`
        ).toEqual([true, true])
      }
      expect(new Set(files.map((f) => f.path.split("/")[0])).size, `${name}: buckets`).toBeGreaterThanOrEqual(6)
      await expectDatasetMatches(out, model(name, 10))
    }
    // txs files filled past 4 kB: some bucket has more than one part
    const parts = manifestOf(out, "txs").files.map((f) => f.path.split("/")[0])
    expect(parts.length).toBeGreaterThan(new Set(parts).size)
  })

  it("a shard that starts past the first row asks its first page for at most the rows it holds", async () => {
    // two shards per source, the second shorter than a page: its first page is all of it
    const tip = devnet.chain.tip
    const blocks = await recorder()
    await exportOk(blocks.url, dirs.make(), { datasets: ["blocks"], pageSize: Math.floor(tip * 0.7), concurrency: 2 })
    const keyed = (server: HostileServer, path: string) =>
      requestsTo(server, path).filter((u) => u.searchParams.has("pagination.key") && u.searchParams.get("pagination.limit") !== "1")
    const cursorOf = (u: URL, field: string) =>
      JSON.parse(Buffer.from(u.searchParams.get("pagination.key")!, "base64").toString("utf8"))[field] as number
    expect(keyed(blocks, BLOCKS_PATH).some((u) => cursorOf(u, "height") > 0)).toBe(true)
    for (const u of keyed(blocks, BLOCKS_PATH))
      expect(cursorOf(u, "height") + Number(u.searchParams.get("pagination.limit")), u.search).toBeLessThanOrEqual(tip)

    // the tx families: every page after a sequence cursor, the second shard's first one constructed
    const txTotal = devnet.chain.txTotal()
    const txs = await recorder()
    await exportOk(txs.url, dirs.make(), { datasets: ["txs"], pageSize: Math.floor(txTotal * 0.7), concurrency: 2 })
    expect(requestsTo(txs, TXS_PATH).filter((u) => u.searchParams.has("pagination.offset"))).toEqual([])
    expect(keyed(txs, TXS_PATH).some((u) => cursorOf(u, "sequence") > 0)).toBe(true)
    for (const u of keyed(txs, TXS_PATH))
      expect(cursorOf(u, "sequence") + Number(u.searchParams.get("pagination.limit")), u.search).toBeLessThanOrEqual(txTotal)
  })

  it("a txs listing that serves an earlier page again (two pages back, new to the record check) fails naming the height, and commits nothing of it", async () => {
    const out = dirs.make()
    const pages: Array<unknown> = []
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== TXS_PATH || req.url.searchParams.get("pagination.limit") !== "5") return res
      const page = JSON.parse(res.body)
      pages.push(page.txs)
      // the third page of the walk holds the first page's records again, under its own next key
      if (pages.length === 3) return json({ ...page, txs: pages[0] })
      return res
    })
    const r = await exportVia(server.url, out, { datasets: ["txs"], pageSize: 5, concurrency: 1 })
    expect(Either.isLeft(r)).toBe(true)
    const err = (r as Either.Left<{ _tag: string; message: string }, unknown>).left
    expect(err._tag).toBe("IndexerPagingError")
    expect(err.message).toMatch(/^height \d+ came after height \d+: the pages overlap or went back$/)
    const m = JSON.parse(readFileSync(join(out, "txs", "_manifest.json"), "utf8")) as Manifest
    expect(m.files).toEqual([])
  })

  it("a txs page whose records name a height above the heights its positions were found for (the tip the plan read) fails naming it, and commits none of them", async () => {
    const out = dirs.make()
    const tip = devnet.chain.tip
    expect(devnet.chain.blockTxCount(tip)).toBeGreaterThan(0)
    // the pages a shard reads (the plan's probes ask one row) move the tip's txs a block up
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== TXS_PATH || req.url.searchParams.get("pagination.limit") !== "5") return res
      const page = JSON.parse(res.body) as { txs: Array<{ height: string }> }
      return json({ ...page, txs: page.txs.map((tx) => (Number(tx.height) === tip ? { ...tx, height: String(tip + 1) } : tx)) })
    })
    const r = await exportVia(server.url, out, { datasets: ["txs"], pageSize: 5, concurrency: 2 })
    expect(Either.isLeft(r)).toBe(true)
    const err = (r as Either.Left<{ _tag: string; message: string }, unknown>).left
    expect(err._tag).toBe("IndexerPagingError")
    expect(err.message).toMatch(
      new RegExp(
        `^a record at height ${tip + 1} came among positions \\d+\\.\\.\\d+, which were found to hold heights 1\\.\\.${tip}: the indexer's answers disagree`
      )
    )
    const files = manifestOf(out, "txs").files
    expect(files.filter((f) => f.max_height! > tip)).toEqual([])
  })

  it("datasets without block times ask the block list nothing beyond their own pages; EVM datasets ask it for times", async () => {
    const server = await recorder()
    await exportOk(server.url, dirs.make(), { datasets: ["txs"], pageSize: 20, concurrency: 2 })
    expect(requestsTo(server, BLOCKS_PATH).filter((u) => u.searchParams.get("pagination.limit") !== "1")).toEqual([])
    const timed = await recorder()
    await exportOk(timed.url, dirs.make(), { datasets: ["evm_txs"], pageSize: 20, concurrency: 2 })
    expect(requestsTo(timed, BLOCKS_PATH).length).toBeGreaterThan(0)
  })

  it("over the staging budget a shard finishes its largest file first, and only as many as it must", async () => {
    const out = dirs.make()
    // 1,000,000 bytes past the process base stage ~130 kB in all: txs' JSON passes it every few pages, its
    // small token_transfers_cosmos rows never do on their own
    await exportOk(
      devnet.indexerUrl,
      out,
      { datasets: ["txs", "token_transfers_cosmos"], pageSize: 10, concurrency: 1, bucketWidth: 1_000 },
      PROCESS_BASE_BYTES + 1_000_000
    )
    const txsFiles = manifestOf(out, "txs").files.length
    const transferFiles = manifestOf(out, "token_transfers_cosmos").files.length
    expect(txsFiles, "txs files finished early").toBeGreaterThan(2)
    expect(transferFiles, "token_transfers_cosmos files").toBeLessThan(txsFiles)
    await expectDatasetMatches(out, model("txs", 1_000))
    await expectDatasetMatches(out, model("token_transfers_cosmos", 1_000))
  })

  it("a shard whose range another writer committed meanwhile drops its rows and exports only the rest again", async () => {
    const out = dirs.make()
    const tip = devnet.chain.tip
    const half = Math.floor(tip / 2)
    // the slow writer plans every height before the fast one commits the first half
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    // its first shard page arrives once it has planned: held until the fast writer has committed
    let planned!: () => void
    const shardStarted = new Promise<void>((resolve) => (planned = resolve))
    const slow = await proxy(async (req, forward) => {
      if (req.url.pathname === BLOCKS_PATH && req.url.searchParams.get("pagination.limit") !== "1") {
        planned()
        await released
      }
      return forward()
    })
    const notices: Array<string> = []
    const rows = { slow: 0, fetched: 0 }
    const slowRun = exportOk(slow.url, out, {
      datasets: ["blocks"],
      pageSize: 10,
      concurrency: 1,
      observer: { notice: (m) => notices.push(m), rows: (_, n) => (rows.slow += n), fetched: (_, n) => (rows.fetched += n) }
    })
    await shardStarted
    const fast = await exportOk(devnet.indexerUrl, out, { datasets: ["blocks"], pageSize: 10, concurrency: 1, toHeight: half })
    release()
    const slowReport = await slowRun
    const fastRows = fast.datasets.find((d) => d.dataset === "blocks")!.rows
    const slowRows = slowReport.datasets.find((d) => d.dataset === "blocks")!.rows
    expect(fastRows).toBe(half)
    expect(
      notices.some((n) => n.startsWith("blocks: ") && n.endsWith("; exporting the rest of it again")),
      notices.join("\n")
    ).toBe(true)
    // the slow writer's own count is what it committed: the rest of the heights, once
    expect([slowRows, rows.slow]).toEqual([tip - half, tip - half])
    // and so is what it says it read (the progress lines' count): the dropped range read again counts once
    expect(rows.fetched).toBe(tip - half)
    await expectDatasetMatches(out, model("blocks", 10_000))
  })
})

describe("commits within a long shard", () => {
  it("every checkpointMs a shard commits what it read so far: a run that fails mid-shard keeps those commits (exact ranges, no row twice), and a rerun completes the lake exactly", async () => {
    const out = dirs.make()
    let txPages = 0
    // the txs listing breaks for good after 6 pages: one shard (concurrency 1) that has committed page by page
    const failing = await proxy((req, forward) =>
      new URL(req.path, "http://x").pathname === TXS_PATH && ++txPages > 6 ? { status: 400, body: "[BAD_REQUEST] broken" } : forward()
    )
    try {
      const r = await exportVia(failing.url, out, { datasets: ["txs"], pageSize: 10, concurrency: 1, checkpointMs: 0 })
      expect(Either.isLeft(r)).toBe(true)
    } finally {
      await failing.close()
    }
    const m = manifestOf(out, "txs")
    // the pages read before the failure are committed, each file with the range it completes
    expect(m.committed).toHaveLength(1)
    const [[start, end]] = m.committed
    expect(start).toBe(0)
    expect(end).toBeGreaterThanOrEqual(40)
    expect(m.files.reduce((n, f) => n + f.rows, 0)).toBe(end)
    const ranges = m.files.map((f) => f.range!).sort((x, y) => x[0] - y[0])
    for (let i = 1; i < ranges.length; i++) expect(ranges[i][0], "file ranges tile the committed range").toBe(ranges[i - 1][1])
    await exportOk(devnet.indexerUrl, out, { datasets: ["txs"], pageSize: 10, concurrency: 1, checkpointMs: 0 })
    await expectDatasetMatches(out, model("txs", 10_000))
  })
})
