/**
 * runExport against a hostile proxy in front of a small devnet, over real HTTP, Parquet and
 * DuckDB. Proves that listings that cannot be trusted fail the export with the right error and
 * commit nothing of the shard they hit: a txs listing that ends short, a cursor that repeats, a
 * blocks page outside its shard (IndexerPagingError), a 4xx in the middle of a run
 * (IndexerHttpError, asked for once); and that a snapshot read while the watermark keeps moving
 * is read three times and committed as best-effort, with a note, where a still chain gives exact.
 */
import { Effect, Either } from "effect"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib"
import { afterAll, describe, expect, it } from "vitest"
import { makeAnalytics } from "../../src/analytics/Analytics.js"
import { describeExportFailure } from "../../src/cli/export.js"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import type { Devnet } from "../../src/devnet/index.js"
import type { Manifest } from "../../src/lake/Manifests.js"
import { runExport, type ExportOptions, type ExportReport } from "../../src/engine/export.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { runCli } from "../support/cli.js"
import { json, proxiedDevnet, sleep, text, type HostileServer } from "../support/hostile.js"
import { tempDirs } from "../support/tmp.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 50, timeoutMs: 2_000, maxRetries: 4 }
// two shards per source, 50 rows a page: each shard is walked by cursor from a constructed first one ({"sequence": a} or {"height": a - 1})
const SHARDING: ExportOptions = { pageSize: 50, concurrency: 2 }
const TXS_PATH = "/indexer/tx/v1/txs"
const BLOCKS_PATH = "/indexer/block/v1/blocks"
const COLLECTIONS_PATH = "/indexer/nft/v1/collections"

const dirs = tempDirs("chain-lake-hostile-")
let devnet: Devnet
const { proxy } = proxiedDevnet({ seed: 17, blocks: 120 }, (d) => (devnet = d))
afterAll(() => dirs.removeAll())

const exportVia = (server: HostileServer, out: string, options: ExportOptions) =>
  Effect.runPromise(
    Effect.either(runExport(DATASETS, { ...SHARDING, ...options })).pipe(
      Effect.provide(exportLayer({ indexerUrl: server.url, out, limits: { concurrency: 4, rps: 0 }, retry: FAST_RETRY }))
    )
  )
const failureOf = <E>(result: Either.Either<ExportReport, E>): E => {
  if (Either.isRight(result)) throw new Error(`expected the export to fail, it committed ${JSON.stringify(result.right.datasets)}`)
  return result.left
}

/** The cursor a request pages from, decoded ({"sequence": n} or {"height": n}), or null for an offset page. */
const cursorOf = (url: URL): Record<string, number> | null => {
  const key = url.searchParams.get("pagination.key")
  return key ? JSON.parse(Buffer.from(key, "base64").toString("utf8")) : null
}
const cursorKey = (cursor: Record<string, number>) => Buffer.from(JSON.stringify(cursor)).toString("base64")
/** The path and query of `url` with its query edited by `edit` (what a proxy forwards instead). */
const rewritten = (url: URL, edit: (query: URLSearchParams) => void) => {
  const copy = new URL(url)
  edit(copy.searchParams)
  return copy.pathname + copy.search
}
const requestsTo = (server: HostileServer, path: string) => server.requests.filter((r) => r.path === path)

const manifestOf = (out: string, dataset: string): Manifest | undefined => {
  const file = join(out, dataset, "_manifest.json")
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined
}
const parquetFilesIn = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir).flatMap((e) => {
        const p = join(dir, e)
        return statSync(p).isDirectory() ? parquetFilesIn(p) : p.endsWith(".parquet") ? [p] : []
      })
    : []

/**
 * Nothing of units [a, b) (heights or positions) is committed: no committed range and no listed
 * file overlaps it, and every .parquet file on disk is one the manifest lists (a reader globs
 * them all, listed or not).
 */
const expectNothingCommittedIn = (out: string, dataset: string, [a, b]: readonly [number, number]) => {
  const manifest = manifestOf(out, dataset)
  const listed = new Set((manifest?.files ?? []).map((f) => f.path))
  const unlisted = parquetFilesIn(join(out, dataset))
    .map((p) => relative(join(out, dataset), p).split("\\").join("/"))
    .filter((p) => !listed.has(p))
  expect(unlisted, "parquet files the manifest does not list").toEqual([])
  const overlaps = ([x, y]: readonly [number, number]) => x < b && a < y
  expect((manifest?.committed ?? []).filter(overlaps), `committed ranges overlapping ${a}..${b - 1}`).toEqual([])
  expect(
    (manifest?.files ?? []).filter((f) => f.range && overlaps(f.range)),
    `files covering ${a}..${b - 1}`
  ).toEqual([])
}

/** The failing shard was the first (position 100 is in it): what is committed is one range, up to the end. */
const expectOnlyTheLastShardCommitted = (out: string, dataset: string, total: number) => {
  const committed = manifestOf(out, dataset)!.committed
  expect(committed.length).toBe(1)
  expect(committed[0][0]).toBeGreaterThan(100)
  expect(committed[0][1]).toBe(total)
}

/**
 * Waits until some shard of `dataset` has committed (10 s at most). The proxy holds its hostile
 * answer until then, so that the other shard is committed before the failing one fails, and the
 * checks see a manifest with files in it, not an empty folder.
 */
const untilAnotherShardCommits = async (out: string, dataset: string) => {
  for (let i = 0; i < 1000 && !manifestOf(out, dataset)?.committed.length; i++) await sleep(10)
}

describe("export: listings that cannot be trusted fail the shard, and commit nothing of it", () => {
  it("a txs listing that ends short (empty pages from a position on, totals promising more) → IndexerPagingError", async () => {
    const total = devnet.chain.txTotal()
    const cut = 300
    expect(total).toBeGreaterThan(cut + 2 * SHARDING.pageSize!)
    // /status and the planner's probes are left alone: only cursor pages from position `cut` on
    // come back empty (a cursor {"sequence": s} pages from position s)
    const emptied: Array<number> = []
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      const cursor = req.url.pathname === TXS_PATH ? cursorOf(req.url) : null
      if (cursor === null || cursor.sequence < cut) return forward()
      emptied.push(cursor.sequence)
      await untilAnotherShardCommits(out, "txs")
      return json({ txs: [], pagination: { previous_key: null, next_key: null, total: String(total) } })
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["txs"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err).toMatchObject({ endpoint: "txs" })
    expect(String(err)).toMatch(/^pagination of txs cannot be trusted/)
    const shortListing = /^expected (\d+) rows for positions (\d+)\.\.(\d+), the listing ended after (\d+)$/.exec(err.message)
    expect(shortListing, err.message).not.toBeNull()
    const [, expected, first, last, seen] = shortListing!
    expect(Number(expected)).toBe(Number(last) - Number(first) + 1)
    expect(Number(seen)).toBeLessThan(Number(expected))
    // the failing shard is the one whose cursor was emptied
    expect(emptied.length).toBeGreaterThan(0)
    expect(Number(first)).toBeLessThanOrEqual(emptied[0])
    expect(emptied[0]).toBeLessThanOrEqual(Number(last))
    expectNothingCommittedIn(out, "txs", [Number(first), Number(last) + 1])
    // the other shard, before the failing one, is committed whole
    expect(manifestOf(out, "txs")!.committed).toEqual([[0, Number(first)]])
  })

  it("a pagination.total lower than the data (a stale count) → IndexerPagingError before anything of txs is exported", async () => {
    const total = devnet.chain.txTotal()
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== TXS_PATH) return res
      const page = JSON.parse(res.body)
      page.pagination.total = String(total - 50)
      return json(page)
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["txs"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err.message).toMatch(
      new RegExp(
        `^pagination\\.total says ${total - 50} rows, but position ${total - 50} holds a row at height \\d+ \\(at most \\d+ asked for\\): the total is lower than the data$`
      )
    )
    expect(manifestOf(out, "txs")?.files ?? []).toEqual([])
  })

  it("a total that stops short of the txs of the last height asked for is stale too (the row past it is at that height)", async () => {
    const c = devnet.chain
    // every tx below the tip's block: the row at position `stale` is the tip's first tx
    const stale = c.txSeqBefore(c.tip)
    expect(c.txTotal()).toBeGreaterThan(stale)
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== TXS_PATH) return res
      const page = JSON.parse(res.body)
      page.pagination.total = String(stale)
      return json(page)
    })
    const err = failureOf(await exportVia(server, dirs.make(), { datasets: ["txs"], toHeight: c.tip }))
    expect(err.message).toBe(
      `pagination.total says ${stale} rows, but position ${stale} holds a row at height ${c.tip} (at most ${c.tip} asked for): the total is lower than the data`
    )
    // the same total with the heights below the tip asked for: the row past it may be one the chain added since, so the export goes on
    const out = dirs.make()
    const below = await exportVia(server, out, { datasets: ["txs"], toHeight: c.tip - 1 })
    expect(Either.isRight(below), String(Either.isLeft(below) && below.left)).toBe(true)
    expect(manifestOf(out, "txs")!.files.reduce((sum, f) => sum + f.rows, 0)).toBe(stale)
  })

  it("a cursor that repeats (a page answers with the key it was asked with) → IndexerPagingError", async () => {
    // the first shard starts at position 0 and pages 50 at a time, so it follows {"sequence": 100}
    const repeated = cursorKey({ sequence: 100 })
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== TXS_PATH || req.url.searchParams.get("pagination.key") !== repeated) return res
      const page = JSON.parse(res.body)
      page.pagination.next_key = repeated
      await untilAnotherShardCommits(out, "txs")
      return json(page)
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["txs"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err).toMatchObject({ endpoint: "txs", key: repeated })
    expect(err.message).toBe(`next_key ${repeated} was already followed: the server restarted the listing`)
    expectNothingCommittedIn(out, "txs", [100, 101])
    expectOnlyTheLastShardCommitted(out, "txs", devnet.chain.txTotal())
  })

  it("txs pages that overlap (each cursor page repeats the last row of the page before) → IndexerPagingError naming the record", async () => {
    // a server that reads the cursor as "from" rather than "after": same count, one row repeated
    // per page and the shard's last rows missing, so counting rows alone would not notice
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      const cursor = req.url.pathname === TXS_PATH ? cursorOf(req.url) : null
      if (cursor === null || cursor.sequence >= 150) return forward()
      await untilAnotherShardCommits(out, "txs")
      return forward(rewritten(req.url, (q) => q.set("pagination.key", cursorKey({ sequence: cursor.sequence - 1 }))))
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["txs"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err).toMatchObject({ endpoint: "txs" })
    expect(err.message).toMatch(/^the record [0-9A-F]{64} at height \d+ came twice: the pages overlap or cycle$/)
    expectNothingCommittedIn(out, "txs", [0, 100])
    expectOnlyTheLastShardCommitted(out, "txs", devnet.chain.txTotal())
  })

  it("a txs cursor cycling back 1, 2 or many pages inside one block (page size 1, a fresh key each time) → IndexerPagingError, nothing of the shard committed; the CLI exits 1 in one line", async () => {
    const c = devnet.chain
    // the block with the most txs: one shard (concurrency 1) of its positions [first, first + n)
    let height = 1
    const txsAt = (h: number) => c.txSeqBefore(h + 1) - c.txSeqBefore(h)
    for (let h = 1; h < c.tip; h++) if (txsAt(h) > txsAt(height)) height = h
    const first = c.txSeqBefore(height)
    const n = txsAt(height)
    expect(n).toBeGreaterThanOrEqual(6)
    const keyOf = (key: string) => JSON.parse(Buffer.from(key, "base64").toString("utf8")) as Record<string, number>
    for (const back of [1, 2, n - 2]) {
      // a cursor {"sequence": s} pages from position s: the page at `loopAt` serves the one `back` pages earlier again, forever
      // (only under a key the proxy handed out, with its nonce: the planner's probes and the shard's first page are constructed, and answered as asked)
      const loopAt = first + back + 1
      let nonce = 0
      const server = await proxy(async (req, forward) => {
        const cursor = req.url.pathname === TXS_PATH ? cursorOf(req.url) : null
        if (cursor === null) return forward()
        const loops = cursor.nonce !== undefined && cursor.sequence === loopAt
        const res = await forward(
          rewritten(req.url, (q) => q.set("pagination.key", cursorKey({ sequence: loops ? loopAt - back : cursor.sequence })))
        )
        const page = JSON.parse(res.body)
        // every key handed out is new (a nonce, dropped again above): only the records show the cycle
        if (page.pagination.next_key) page.pagination.next_key = cursorKey({ ...keyOf(page.pagination.next_key), nonce: ++nonce })
        return json(page)
      })
      const out = dirs.make()
      const err = failureOf(
        await exportVia(server, out, { datasets: ["txs"], fromHeight: height, toHeight: height, pageSize: 1, concurrency: 1 })
      )
      expect(err._tag, `back ${back}`).toBe("IndexerPagingError")
      expect(err.message).toMatch(new RegExp(`^the record [0-9A-F]{64} at height ${height} came twice: the pages overlap or cycle$`))
      expectNothingCommittedIn(out, "txs", [first, first + n])
      if (back !== 2) continue
      const cli = dirs.make()
      const run = await runCli([
        "export",
        "--indexer-url",
        server.url,
        "--out",
        cli,
        "--datasets",
        "txs",
        "--from-height",
        String(height),
        "--to-height",
        String(height),
        "--page-size",
        "1",
        "--concurrency",
        "1"
      ])
      expect(run.code, run.stdout + run.stderr).toBe(1)
      // (the plan's progress line comes first) one error line, no stack
      expect(run.stderr.trim().split("\n").at(-1)).toMatch(
        /^chain-lake: error: pagination of txs cannot be trusted .*came twice: the pages overlap or cycle\. /
      )
      expect(run.stderr).not.toMatch(/\n\s+at /)
      expectNothingCommittedIn(cli, "txs", [first, first + n])
    }
  })

  it("a blocks page holding blocks outside the requested shard → IndexerPagingError", async () => {
    // a key the server does not understand restarts the listing at the first block: the shard
    // that begins after height 60 is answered with blocks from height 1
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      const cursor = req.url.pathname === BLOCKS_PATH ? cursorOf(req.url) : null
      if (cursor === null || cursor.height < 60) return forward()
      await untilAnotherShardCommits(out, "blocks")
      return forward(rewritten(req.url, (q) => q.delete("pagination.key")))
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["blocks"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err).toMatchObject({ endpoint: "blocks" })
    const outside = /^height (\d+) is outside the shard (\d+)\.\.(\d+)$/.exec(err.message)
    expect(outside, err.message).not.toBeNull()
    const [, height, first, last] = outside!
    expect(Number(height)).toBe(1)
    expect(Number(first)).toBe(61)
    expectNothingCommittedIn(out, "blocks", [Number(first), Number(last) + 1])
    expect(manifestOf(out, "blocks")!.committed).toEqual([[1, 61]])
  })

  it("a blocks listing one block off (a shard's pages start one late and end on the next shard's first block) → IndexerPagingError", async () => {
    // the server reads the cursor as "from this height" instead of "after it": the first shard
    // gets 2..(its end + 1), as many rows as it asked for, the last one the next shard's
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      const cursor = req.url.pathname === BLOCKS_PATH ? cursorOf(req.url) : null
      if (cursor === null || cursor.height !== 0) return forward()
      return forward(rewritten(req.url, (q) => q.set("pagination.key", cursorKey({ height: 1 }))))
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["blocks"] }))
    expect(err._tag).toBe("IndexerPagingError")
    const outside = /^height (\d+) is outside the shard (\d+)\.\.(\d+)$/.exec(err.message)
    expect(outside, err.message).not.toBeNull()
    const [, height, first, last] = outside!.map(Number)
    expect(first).toBe(1)
    // exactly the block after the shard's last: the end is exclusive
    expect(height).toBe(last + 1)
    expectNothingCommittedIn(out, "blocks", [first, last + 1])
  })

  it("txs pages that ignore a constructed cursor (honoured only on single-row probes and keys handed out) → IndexerPagingError; no shard past the first is committed", async () => {
    const out = dirs.make()
    const handedOut = new Set<string>()
    const server = await proxy(async (req, forward) => {
      const key = req.url.searchParams.get("pagination.key")
      const constructed = key !== null && !handedOut.has(key) && cursorOf(req.url)!.sequence > 0
      if (req.url.pathname !== TXS_PATH || req.url.searchParams.get("pagination.limit") === "1" || !constructed) {
        const res = await forward()
        if (req.url.pathname === TXS_PATH) handedOut.add(JSON.parse(res.body).pagination.next_key)
        return res
      }
      await untilAnotherShardCommits(out, "txs")
      // the listing's first rows, and their own next_key
      return forward(rewritten(req.url, (q) => q.delete("pagination.key")))
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["txs"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err.message).toMatch(
      /^the page after sequence (\d+) holds (\d+) rows, so it ends at sequence \d+, but its next_key names \2: the indexer did not honour the cursor, or its sequences are not contiguous$/
    )
    // only the shard that starts at position 0 (whose first rows are the listing's first) stands
    const committed = manifestOf(out, "txs")!.committed
    expect(committed.length).toBe(1)
    expect(committed[0][0]).toBe(0)
    expect(committed[0][1]).toBeLessThan(devnet.chain.txTotal())
  })

  it("a txs page missing a row (a gap in sequences), or naming a next_key that is no sequence cursor → IndexerPagingError, nothing of the shard committed", async () => {
    // without the check, the shard would read one row past its end: the next shard's first, committed twice
    const gap = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== TXS_PATH || cursorOf(req.url)?.sequence !== 50) return res
      const page = JSON.parse(res.body)
      return json({ ...page, txs: page.txs.slice(1) })
    })
    const gapOut = dirs.make()
    const missing = failureOf(await exportVia(gap, gapOut, { datasets: ["txs"] }))
    expect(missing).toMatchObject({ _tag: "IndexerPagingError", key: cursorKey({ sequence: 50 }) })
    expect(missing.message).toBe(
      "the page after sequence 50 holds 49 rows, so it ends at sequence 99, but its next_key names 100: the indexer did not honour the cursor, or its sequences are not contiguous"
    )
    expectNothingCommittedIn(gapOut, "txs", [0, 100])
    // an offset key where a cursor belongs (single-row probes answered as they are)
    const offsetKeys = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== TXS_PATH || req.url.searchParams.get("pagination.limit") === "1") return res
      const page = JSON.parse(res.body)
      return json({ ...page, pagination: { ...page.pagination, next_key: Buffer.from("50").toString("base64") } })
    })
    const keyed = failureOf(await exportVia(offsetKeys, dirs.make(), { datasets: ["txs"] }))
    expect(keyed.message).toMatch(/^the page after sequence \d+ names next_key NTA=, which is no sequence cursor$/)
  })

  it("a snapshot list (offset keys) whose page is cut short but names a next page (rows between lost) → IndexerPagingError, no snapshot committed", async () => {
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      const limit = req.url.searchParams.get("pagination.limit")
      if (req.url.pathname !== COLLECTIONS_PATH || limit === "1" || req.url.searchParams.has("pagination.key")) return res
      const page = JSON.parse(res.body) as { collections: Array<unknown>; pagination: { next_key: string | null } }
      expect(page.pagination.next_key).not.toBeNull()
      return json({ ...page, collections: page.collections.slice(1) })
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["nft_collections"], pageSize: 2 }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err.message).toBe(
      "the page held 1 of the 2 records asked for, yet named a next page (an offset key follows only a full page): the server cut it short, and rows may be lost"
    )
    expect(manifestOf(out, "nft_collections")?.snapshots ?? []).toEqual([])
  })

  it("values their columns cannot hold (tx_count past 2^31, gas past 2^63) and a tx nested 100,000 deep are invalid records: named and failing by default, quarantined on request with the rest exported", async () => {
    const tenth = await (
      await fetch(`${devnet.indexerUrl}${TXS_PATH}?pagination.offset=10&pagination.limit=1&pagination.reverse=false`)
    ).json()
    const deepHash = (tenth as { txs: Array<{ txhash: string }> }).txs[0].txhash
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname === BLOCKS_PATH) {
        const page = JSON.parse(res.body) as { blocks: Array<{ height: string; tx_count: string; gas_used: string }> }
        for (const b of page.blocks) if (b.height === "7") b.tx_count = "2147483648"
        for (const b of page.blocks) if (b.height === "9") b.gas_used = "9223372036854775808"
        return json(page)
      }
      if (req.url.pathname === TXS_PATH) {
        const page = JSON.parse(res.body) as { txs: Array<{ txhash: string; tx: Record<string, unknown> }> }
        const first = page.txs.find((t) => t.txhash === deepHash)
        if (!first) return res
        // as text: the proxy's own JSON.stringify cannot write it either
        first.tx.deep = "DEEP"
        return text(200, JSON.stringify(page).replace('"DEEP"', "[".repeat(100_000) + "]".repeat(100_000)), {
          "content-type": "application/json"
        })
      }
      return res
    })
    const failed = failureOf(await exportVia(server, dirs.make(), { datasets: ["blocks"] }))
    expect(failed).toMatchObject({ _tag: "IndexerDecodeError", endpoint: "blocks" })
    expect(failed.message).toMatch(
      /^blocks: (2147483648 does not fit column tx_count \(a 32-bit integer\)|9223372036854775808 does not fit column gas_used \(a 64-bit integer\))$/
    )
    const out = dirs.make()
    const result = await exportVia(server, out, { datasets: ["blocks", "txs"], onInvalid: "quarantine" })
    if (Either.isLeft(result)) throw new Error(`export failed: ${String(result.left)}`)
    const quarantined = (source: string) =>
      readFileSync(join(out, "_quarantine", `${source}.ndjson`), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { message: string; record: unknown; record_omitted?: string })
    expect(
      quarantined("blocks")
        .map((q) => q.message)
        .sort()
    ).toEqual([
      "blocks: 2147483648 does not fit column tx_count (a 32-bit integer)",
      "blocks: 9223372036854775808 does not fit column gas_used (a 64-bit integer)"
    ])
    const [deepTx] = quarantined("txs")
    expect(deepTx).toMatchObject({
      message: "cannot be written: Maximum call stack size exceeded (JSON nested too deeply?)",
      record: { txhash: deepHash },
      record_omitted: "its nested values: too deep to store"
    })
    expect(result.right.datasets.map((d) => [d.dataset, d.rows, d.quarantined])).toEqual([
      ["blocks", devnet.chain.tip - 2, 2],
      ["txs", devnet.chain.txTotal() - 1, 1]
    ])
  })

  it("a gateway that compresses every answer unasked (gzip, br, deflate) is read as if it had not; a body that does not decompress fails, saying so", async () => {
    const compress = [gzipSync, brotliCompressSync, deflateSync] as const
    const names = ["gzip", "br", "deflate"] as const
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      const k = req.index % 3
      return {
        status: res.status,
        headers: { ...res.headers, "content-encoding": names[k] },
        bytes: compress[k](Buffer.from(res.body ?? ""))
      }
    })
    const out = dirs.make()
    const result = await exportVia(server, out, { datasets: ["blocks", "txs"] })
    if (Either.isLeft(result)) throw new Error(`export failed: ${String(result.left)}`)
    expect(result.right.datasets.map((d) => [d.dataset, d.rows])).toEqual([
      ["blocks", devnet.chain.tip],
      ["txs", devnet.chain.txTotal()]
    ])
    const broken = await proxy(async (_req, forward) => {
      const res = await forward()
      return { status: res.status, headers: { ...res.headers, "content-encoding": "gzip" }, body: res.body }
    })
    const err = failureOf(await exportVia(broken, dirs.make(), { datasets: ["blocks"] }))
    expect(err.message).toMatch(/its gzip body could not be decompressed: incorrect header check/)
    // an encoding it cannot read is named; an empty body with an encoding is empty
    const zstd = await proxy(async (req, forward) => {
      const res = await forward()
      return req.url.pathname === "/status" ? { ...res, headers: { ...res.headers, "content-encoding": "zstd" } } : res
    })
    expect(failureOf(await exportVia(zstd, dirs.make(), { datasets: ["blocks"] })).message).toMatch(
      /its body came with content-encoding zstd, which chain-lake cannot read/
    )
  })

  it("a blocks page with a block of another chain than /status names (a proxy mixing two networks) → IndexerPagingError, the shard not committed", async () => {
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      if (req.url.pathname !== BLOCKS_PATH) return forward()
      const res = await forward()
      const page = JSON.parse(res.body) as { blocks: Array<{ height: string; chain_id: string }> }
      for (const b of page.blocks) if (b.height === "90") b.chain_id = "evil-chain-9"
      return json(page)
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["blocks"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err.message).toBe(`the record at height 90 is of chain "evil-chain-9", not ${devnet.chain.u.chainId} (the chain /status names)`)
    expectNothingCommittedIn(out, "blocks", [61, 121])
  })

  it("a /status claiming height 1e15 fails the blocks export as untrustworthy paging, after planning a bounded number of shards; where it serves no block there either, the run fails before it plans (nothing anchors it)", async () => {
    const claiming = (blockThere: boolean) =>
      proxy(async (req, forward) => {
        // (block 1e15 served as the tip's, renamed: the run anchors it and plans up to it)
        if (blockThere && req.url.pathname === "/indexer/block/v1/blocks/1000000000000000") {
          const { block } = JSON.parse((await forward(`/indexer/block/v1/blocks/${devnet.chain.tip}`)).body)
          return json({ block: { ...block, height: "1000000000000000" } })
        }
        const res = await forward()
        if (req.url.pathname !== "/status") return res
        return json({ ...JSON.parse(res.body), height: 1e15 })
      })
    const unanchored = failureOf(await exportVia(await claiming(false), dirs.make(), { datasets: ["blocks"] }))
    expect(unanchored.message).toMatch(/^the indexer serves none of blocks 999999999999997\.\.1000000000000000 /)
    const out = dirs.make()
    const server = await claiming(true)
    const err = failureOf(await exportVia(server, out, { datasets: ["blocks"] }))
    expect(err._tag).toBe("IndexerPagingError")
    expect(err).toMatchObject({ endpoint: "blocks" })
    // the shards beyond the chain's real tip find no blocks; nothing of them is committed
    expect((manifestOf(out, "blocks")?.committed ?? []).every(([, b]) => b <= devnet.chain.tip + 1)).toBe(true)
  })

  it("an answer larger than maxPageMb fails the run at once (not retried) with IndexerAnswerTooLarge saying what to do", async () => {
    const out = dirs.make()
    const huge = JSON.stringify({ txs: [], pagination: { next_key: null, total: "0" }, padding: "x".repeat(2 * 1024 * 1024) })
    const server = await proxy((req, forward) => (req.url.pathname === TXS_PATH ? json(JSON.parse(huge)) : forward()))
    const result = await Effect.runPromise(
      Effect.either(runExport(DATASETS, { ...SHARDING, datasets: ["txs"] })).pipe(
        Effect.provide(exportLayer({ indexerUrl: server.url, out, limits: { concurrency: 4, rps: 0 }, retry: FAST_RETRY, maxPageMb: 1 }))
      )
    )
    const err = failureOf(result)
    expect(err._tag).toBe("IndexerAnswerTooLarge")
    expect(describeExportFailure(err)).toMatch(
      /^the answer of http:\/\/127\.0\.0\.1:\d+\/indexer\/tx\/v1\/txs\?\S+ is larger than 1 MB: lower --page-size, or raise --max-page-mb/
    )
    // each URL asked for once: a size limit is not a transient failure
    const asked = server.requests.filter((r) => r.path.startsWith(TXS_PATH)).map((r) => r.path)
    expect(asked.length).toBeGreaterThan(0)
    expect(asked.length).toBe(new Set(asked).size)
  })

  it("a redirect is not followed (credentials would go with it): IndexerHttpError says so, with no empty body after a colon", async () => {
    const server = await proxy((req, forward) =>
      req.url.pathname === BLOCKS_PATH ? text(302, "", { location: "http://elsewhere.invalid/" }) : forward()
    )
    const err = failureOf(await exportVia(server, dirs.make(), { datasets: ["blocks"] }))
    expect(err._tag).toBe("IndexerHttpError")
    expect(err.message).toMatch(
      /^indexer answered 302 for \S+ \(a redirect, which chain-lake does not follow: give --indexer-url the address it points to\)$/
    )
  })

  it("a 4xx in the middle of an export is asked for once and fails it with IndexerHttpError", async () => {
    const refusedKey = cursorKey({ sequence: 100 })
    const out = dirs.make()
    const server = await proxy(async (req, forward) => {
      if (req.url.pathname !== TXS_PATH || req.url.searchParams.get("pagination.key") !== refusedKey) return forward()
      await untilAnotherShardCommits(out, "txs")
      return text(403, "access to this page is restricted")
    })
    const err = failureOf(await exportVia(server, out, { datasets: ["txs"] }))
    expect(err).toMatchObject({ _tag: "IndexerHttpError", status: 403, body: "access to this page is restricted" })
    const refused = server.requests.filter((r) => new URL(r.path, server.url).searchParams.get("pagination.key") === refusedKey)
    expect(refused.length).toBe(1)
    expect(requestsTo(server, refused[0].path).length).toBe(1)
    expectNothingCommittedIn(out, "txs", [100, 101])
    expectOnlyTheLastShardCommitted(out, "txs", devnet.chain.txTotal())
  })
})

/**
 * A txs list numbered as an indexer numbers it whose sequence `s` is the devnet's `s + shift` (a
 * positive shift: one re-synced from a later height, which never indexed the devnet's first txs;
 * negative: one holding that many more before), for the requests `renumbers` picks.
 */
const renumbered =
  (shift: number, renumbers: (cursor: Record<string, number> | null, url: URL) => boolean = () => true) =>
  async (req: { readonly url: URL; readonly path: string }, forward: (path?: string) => Promise<{ status: number; body: string }>) => {
    const cursor = cursorOf(req.url)
    if (req.url.pathname !== TXS_PATH || !renumbers(cursor, req.url)) return forward()
    const newestFirst = req.url.searchParams.get("pagination.reverse") === "true"
    const start = cursor ? cursor.sequence + shift : newestFirst ? undefined : shift
    const answer = await forward(
      start === undefined ? req.path : rewritten(req.url, (q) => q.set("pagination.key", cursorKey({ sequence: start })))
    )
    if (answer.status !== 200) return answer
    const page = JSON.parse(answer.body)
    const next = page.pagination.next_key ? JSON.parse(Buffer.from(page.pagination.next_key, "base64").toString("utf8")) : null
    const pagination = {
      ...page.pagination,
      next_key: next ? cursorKey({ sequence: next.sequence - shift }) : null,
      total: String(Number(page.pagination.total) - shift)
    }
    return json({ ...page, pagination })
  }

describe("export: a source that numbers its records otherwise than the lake's, or than itself", () => {
  it("a rerun against an indexer re-synced from a later height (its sequence 1 is another tx) is refused before it writes, naming the record at the lake's edge", async () => {
    const out = dirs.make()
    const plain = await proxy((_req, forward) => forward())
    expect(Either.isRight(await exportVia(plain, out, { datasets: ["blocks", "txs"], toHeight: 60 }))).toBe(true)
    const before = readFileSync(join(out, "txs", "_manifest.json"), "utf8")
    const resynced = await proxy(renumbered(devnet.chain.txSeqBefore(11)))
    const err = failureOf(await exportVia(resynced, out, { datasets: ["blocks", "txs"] }))
    expect(err.message).toMatch(
      /^txs: the lake's committed rows end with the record at position \d+ of the txs list, at height 60; this indexer has height \d+ there: it numbers its records otherwise than the indexer the lake was exported from .*nothing was written/
    )
    expect(readFileSync(join(out, "txs", "_manifest.json"), "utf8")).toBe(before)
    // the same lake, against the indexer it came from: read on as before
    expect(Either.isRight(await exportVia(plain, out, { datasets: ["blocks", "txs"] }))).toBe(true)
    expect(manifestOf(out, "txs")!.committed).toEqual([[0, devnet.chain.txTotal()]])
  })

  it("one run whose later shard is answered by a deployment numbered otherwise (whole pages, in order) is refused at the commit that breaks position order; the next export, against an indexer that agrees with what the lake holds, reads on and is exact", async () => {
    const out = dirs.make()
    const total = devnet.chain.txTotal()
    // the second of two shards ([ceil(total / 2), total)) read from a deployment holding 40 more txs before: its rows sit lower
    const half = Math.ceil(total / 2)
    const secondShard = (cursor: Record<string, number> | null, url: URL) =>
      cursor !== null && cursor.sequence >= half && url.searchParams.get("pagination.limit") !== "1"
    const otherwise = renumbered(-40, secondShard)
    // (held until the first shard has committed: its rows are the lake's when the second's commit is checked)
    const mixed = await proxy(async (req, forward) => {
      if (req.url.pathname === TXS_PATH && secondShard(cursorOf(req.url), req.url)) await untilAnotherShardCommits(out, "txs")
      return otherwise(req, forward)
    })
    const err = failureOf(await exportVia(mixed, out, { datasets: ["blocks", "txs"] }))
    expect(err.message).toMatch(
      new RegExp(
        `^txs: the indexer numbered its records otherwise in two answers: positions 0\\.\\.${half - 1} came at heights 1-\\d+, and the later positions ${half}\\.\\.${total - 1} at heights \\d+-\\d+ .*not committed`
      )
    )
    expect(manifestOf(out, "txs")!.committed).toEqual([[0, half]])
    const plain = await proxy((_req, forward) => forward())
    expect(Either.isRight(await exportVia(plain, out, { datasets: ["blocks", "txs"] }))).toBe(true)
    expect(manifestOf(out, "txs")!.committed).toEqual([[0, total]])
    await expectLakeMatchesChain(out, devnet, ["blocks", "txs"])
  })
})

describe("export: snapshots before shards", () => {
  /** nft_collections and blocks through a proxy that answers the collections' pages after `delayMs`: what the proxy saw, in order */
  const exportWithSlowCollections = async (delayMs: number) => {
    const seen: Array<string> = []
    const server = await proxy(async (req, forward) => {
      const page = req.url.searchParams.get("pagination.limit") !== "1"
      if (req.url.pathname === BLOCKS_PATH && page) seen.push("blocks page asked")
      if (req.url.pathname !== COLLECTIONS_PATH || !page) return forward()
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      seen.push("collections answered")
      return forward()
    })
    // (a request may wait longer than the other tests' 2 s)
    const result = await Effect.runPromise(
      Effect.either(runExport(DATASETS, { ...SHARDING, datasets: ["blocks", "nft_collections"] })).pipe(
        Effect.provide(
          exportLayer({
            indexerUrl: server.url,
            out: dirs.make(),
            limits: { concurrency: 4, rps: 0 },
            retry: { ...FAST_RETRY, timeoutMs: 20_000 }
          })
        )
      )
    )
    if (Either.isLeft(result)) throw new Error(`export failed: ${String(result.left)}`)
    return seen
  }

  it("a snapshot is read before any shard pages (alone, its read is over before the chain moves), but one that reads long holds them back 3 s at most", async () => {
    const fast = await exportWithSlowCollections(0)
    expect(fast.indexOf("collections answered")).toBeLessThan(fast.indexOf("blocks page asked"))
    const slow = await exportWithSlowCollections(6_000)
    expect(slow.indexOf("blocks page asked")).toBeLessThan(slow.indexOf("collections answered"))
  }, 30_000)
})

describe("export: a snapshot under a moving watermark", () => {
  /**
   * A block above the devnet's tip, as a chain that grew to `grown` would serve it (the tip's,
   * renamed), where `req` asks for one; one above `grown` is not served yet (404).
   */
  const blockAboveTip = async (
    req: { readonly url: URL },
    forward: (path?: string) => Promise<{ readonly body: string }>,
    grown: number
  ) => {
    const above = /^\/indexer\/block\/v1\/blocks\/(\d+)$/.exec(req.url.pathname)
    if (!above || Number(above[1]) <= tip()) return undefined
    if (Number(above[1]) > grown) return json({ code: 5, message: "not found" }, 404)
    const { block } = JSON.parse((await forward(`/indexer/block/v1/blocks/${tip()}`)).body)
    return json({
      block: { ...block, height: above[1], hash: `${block.hash.slice(0, -8)}${Number(above[1]).toString(16).padStart(8, "0")}` }
    })
  }
  /** A proxy whose /status height (and rich_list_height) is one higher on every call; its block route serves those heights too. */
  const movingWatermark = async () => {
    let calls = 0
    const server = await proxy(async (req, forward) => {
      const above = await blockAboveTip(req, forward, tip() + calls)
      if (above) return above
      const res = await forward()
      if (req.url.pathname !== "/status") return res
      const status = JSON.parse(res.body)
      calls++
      return json({ ...status, height: status.height + calls, rich_list_height: status.rich_list_height + calls })
    })
    return { server, calls: () => calls }
  }
  const collectionsSnapshot = async (server: HostileServer) => {
    const out = dirs.make()
    const notices: Array<string> = []
    const result = await exportVia(server, out, { datasets: ["nft_collections"], observer: { notice: (m) => notices.push(m) } })
    if (Either.isLeft(result)) throw new Error(`export failed: ${String(result.left)}`)
    const manifest = manifestOf(out, "nft_collections")!
    return { report: result.right, manifest, notices, out }
  }
  const tip = () => devnet.chain.tip
  const collections = () => devnet.chain.u.collections.filter((c) => devnet.chain.collectionCreated(c)).length

  it("is read three times and committed as best-effort, with reads: 3 and a note", async () => {
    const { server, calls } = await movingWatermark()
    const { report, manifest, notices, out } = await collectionsSnapshot(server)
    expect(report.datasets[0]).toMatchObject({ dataset: "nft_collections", consistency: "best-effort", rows: collections() })
    // an analyst filters on it: the snapshots view says which snapshot is exact, and the heights it spans
    const described = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(makeAnalytics({ dataDir: out }), (a) =>
          a.query("SELECT dataset, snapshot_height, exact, watermark_before, watermark_after, reads FROM snapshots")
        )
      )
    )
    expect(described.rows).toEqual([
      ["nft_collections", String(tip() + calls() - 1), false, String(tip() + calls() - 1), String(tip() + calls()), 3]
    ])
    expect(manifest.snapshots.length).toBe(1)
    expect(manifest.snapshots[0]).toMatchObject({
      consistency: "best-effort",
      reads: 3,
      rows: collections(),
      duplicates_dropped: 0,
      // labelled with the height its last read began at (the next to last /status call); the last call saw the last height
      snapshot_height: tip() + calls() - 1,
      watermark_before: tip() + calls() - 1,
      watermark_after: tip() + calls(),
      note: expect.stringMatching(/changed while it was read/)
    })
    // one page per read (fewer collections than a page), and only the last read's rows are kept;
    // the one-row request before them asks whether the list is served at all
    const firstPages = server.requests.filter((r) => {
      const url = new URL(r.path, server.url)
      return (
        url.pathname === COLLECTIONS_PATH && !url.searchParams.has("pagination.key") && url.searchParams.get("pagination.limit") !== "1"
      )
    })
    expect(collections()).toBeLessThan(SHARDING.pageSize!)
    expect(firstPages.length).toBe(3)
    expect(manifest.files.map((f) => f.rows)).toEqual([collections()])
    expect(notices.filter((n) => /moved .* reading again/.test(n)).length).toBe(2)
    // the run anchored the tip its first /status named; the snapshot, planned anew two blocks above
    // it, anchors its own height, so that a later fork below it is seen (HistoryGuard.vouch)
    const anchors: Array<{ height: number; hash: string }> = JSON.parse(readFileSync(join(out, "_lake.json"), "utf8")).anchors
    expect(anchors.map((a) => a.height).sort((x, y) => x - y)).toEqual([tip() + 1, tip() + calls() - 1])
  })

  /** A proxy whose /status names the tip for its first `still` calls, and a tip one higher from then on (a chain that grew one block). */
  const grownOnce = (still: number) => {
    let calls = 0
    return proxy(async (req, forward) => {
      const above = await blockAboveTip(req, forward, tip() + (calls > still ? 1 : 0))
      if (above) return above
      const res = await forward()
      if (req.url.pathname !== "/status") return res
      const status = JSON.parse(res.body)
      const moved = ++calls > still ? 1 : 0
      return json({ ...status, height: status.height + moved, rich_list_height: status.rich_list_height + moved })
    })
  }

  it("a watermark that moved once, during the first read, is judged again from where it stood before the second: exact, read twice, and filed at that height (it was filed at the height planned, under which it was no snapshot)", async () => {
    // the plan's /status and the one just before the first read see the tip; the one after it a tip one higher
    const { report, manifest, notices } = await collectionsSnapshot(await grownOnce(2))
    expect(report.datasets[0]).toMatchObject({ dataset: "nft_collections", consistency: "exact", rows: collections() })
    expect(manifest.snapshots[0]).toMatchObject({
      consistency: "exact",
      reads: 2,
      snapshot_height: tip() + 1,
      watermark_before: tip() + 1,
      watermark_after: tip() + 1,
      rows: collections()
    })
    expect(notices.filter((n) => /moved .* reading again/.test(n))).toEqual([
      `nft_collections: the height moved (${tip()} → ${tip() + 1}) during the read; reading again`
    ])
  })

  it("a watermark that moved between the run's plan and the snapshot's first read is read at the height it moved to: exact, read once (the first read was judged against the plan's, and read again)", async () => {
    const { report, manifest, notices } = await collectionsSnapshot(await grownOnce(1))
    expect(report.datasets[0]).toMatchObject({ dataset: "nft_collections", consistency: "exact", rows: collections() })
    expect(manifest.snapshots[0]).toMatchObject({ consistency: "exact", reads: 1, snapshot_height: tip() + 1, watermark_after: tip() + 1 })
    expect(notices.filter((n) => /reading again/.test(n))).toEqual([])
  })

  it("a /status that lags the lists (collections created after the height it names; blocks above it served) gives best-effort, read three times, with the rows counted and the block served in the notice", async () => {
    const created = devnet.chain.u.collections.filter((c) => devnet.chain.collectionCreated(c)).map((c) => c.createdAt)
    const lagging = Math.max(...created) - 1
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== "/status") return res
      return json({ ...JSON.parse(res.body), height: lagging })
    })
    const { report, manifest, notices } = await collectionsSnapshot(server)
    expect(report.datasets[0]).toMatchObject({ dataset: "nft_collections", consistency: "best-effort" })
    expect(manifest.snapshots[0]).toMatchObject({
      consistency: "best-effort",
      reads: 3,
      snapshot_height: lagging,
      note: `the source served block ${lagging + 1}, past the tip its /status named after the last read (3 reads in all): its /status is behind its lists (a cached or lagging replica behind one address?), so the rows may hold state from after height ${lagging}, which labels them`
    })
    const later = created.filter((h) => h > lagging).length
    expect(notices.filter((n) => /reading again/.test(n))).toEqual(
      Array(2).fill(
        `nft_collections: ${later} ${later === 1 ? "row holds" : "rows hold"} state from after height ${lagging}, the source served block ${lagging + 1}, past the tip its /status names during the read; reading again`
      )
    )
  })

  it("a /status behind the lists whose rows carry no height (the rich list: a replica behind, or a cached /status) gives best-effort, not exact, by the block served above its tip", async () => {
    const behind = tip() - 5
    const server = await proxy(async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== "/status") return res
      return json({ ...JSON.parse(res.body), height: behind, rich_list_height: behind })
    })
    const out = dirs.make()
    const result = await exportVia(server, out, { datasets: ["holders"], params: { denoms: ["uinit"] } })
    if (Either.isLeft(result)) throw new Error(`export failed: ${String(result.left)}`)
    expect(result.right.datasets[0]).toMatchObject({ dataset: "holders", consistency: "best-effort", snapshotHeight: behind })
    const manifest = JSON.parse(readFileSync(join(out, "holders", "_manifest.json"), "utf8"))
    expect(manifest.snapshots[0].note).toMatch(new RegExp(`^the source served block ${behind + 1}, past the tip its /status named`))
  })

  it("a block made between the /status after a read and the ask for the block past its tip (the chain grew, the rich list's watermark held) is growth, not a /status behind: exact, read once", async () => {
    let grown = 0
    const server = await proxy(async (req, forward) => {
      // the chain grows a block the moment the block past its tip is asked for
      if (req.url.pathname === `/indexer/block/v1/blocks/${tip() + 1}`) grown = 1
      const above = await blockAboveTip(req, forward, tip() + grown)
      if (above) return above
      const res = await forward()
      if (req.url.pathname !== "/status") return res
      return json({ ...JSON.parse(res.body), height: tip() + grown })
    })
    const out = dirs.make()
    const result = await exportVia(server, out, { datasets: ["holders"], params: { denoms: ["uinit"] } })
    if (Either.isLeft(result)) throw new Error(`export failed: ${String(result.left)}`)
    expect(result.right.datasets[0]).toMatchObject({ dataset: "holders", consistency: "exact" })
    const manifest = JSON.parse(readFileSync(join(out, "holders", "_manifest.json"), "utf8"))
    expect(manifest.snapshots[0]).toMatchObject({ consistency: "exact", reads: 1 })
    expect(grown).toBe(1)
  })

  it("an unmodified devnet behind the same proxy gives exact, read once, with no note", async () => {
    const server = await proxy((_, forward) => forward())
    const { report, manifest } = await collectionsSnapshot(server)
    expect(report.datasets[0]).toMatchObject({ consistency: "exact", rows: collections() })
    expect(manifest.snapshots[0]).toMatchObject({
      consistency: "exact",
      reads: 1,
      snapshot_height: tip(),
      watermark_before: tip(),
      watermark_after: tip(),
      rows: collections()
    })
    expect(manifest.snapshots[0].note).toBeUndefined()
  })
})

describe("a gateway's web page in place of a list page (200, text/html) after the status answered", () => {
  it("fails the run in one line that ends its question once (no '?.'), naming the page's URL", async () => {
    const server = await proxy((req, forward) =>
      req.path.startsWith(`${BLOCKS_PATH}?`)
        ? text(200, "<html><body>maintenance</body></html>", { "content-type": "text/html" })
        : forward()
    )
    const r = await runCli(["export", "--indexer-url", server.url, "--out", dirs.make(), "--datasets", "blocks"])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      /^chain-lake: error: malformed response from blocks .*answered 200 with an HTML page, not JSON: is this the indexer's URL \(or is a login or gateway page in front of it\)\? Committed files are untouched\.?.*$/
    )
    expect(r.stderr).not.toMatch(/\?\./)
  })
})
