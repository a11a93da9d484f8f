/**
 * The indexer driver (src/drivers/indexer.ts) on its own, over real HTTP to a devnet behind a
 * recording proxy: block times read as runs of the block list from a height cursor (one request
 * per run of up to 100 heights, asked in any order, remembered for the run), a server that caps
 * its pages, a block list that goes back, lacks a height or sends a block without a time; which
 * answers mean "not served"; a body that never parses; a record's field path.
 */
import { Effect, Either, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { indexerLayer } from "../../src/cli/layers.js"
import { Source, type ListRef, type SourceService } from "../../src/engine/Source.js"
import type { Devnet } from "../../src/devnet/index.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { layerIndexerSource } from "../../src/drivers/indexer.js"
import { json, proxiedDevnet, text, type Handler, type HostileServer } from "../support/hostile.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 20, timeoutMs: 2_000, maxRetries: 2 }
const BLOCKS_PATH = "/indexer/block/v1/blocks"
const txsList: ListRef = { endpoint: "txs", path: "/indexer/tx/v1/txs", arrayKey: "txs" }

let devnet: Devnet
const { proxy } = proxiedDevnet({ seed: 29, blocks: 260 }, (d) => (devnet = d))

/** Runs `f` with the driver over `server` (one driver: its block-time memory lasts the call). */
const withSource = <A, E>(server: HostileServer, f: (source: SourceService) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.either(Effect.flatMap(Source, f)).pipe(
      Effect.provide(layerIndexerSource.pipe(Layer.provide(indexerLayer(server.url, { concurrency: 4, rps: 0 }, FAST_RETRY))))
    )
  )
const blockRequests = (server: HostileServer) =>
  server.requests
    .map((r) => new URL(r.path, "http://x"))
    .filter((u) => u.pathname === BLOCKS_PATH)
    .map((u) => ({
      from: JSON.parse(Buffer.from(u.searchParams.get("pagination.key")!, "base64").toString("utf8")).height + 1,
      limit: Number(u.searchParams.get("pagination.limit"))
    }))
/** The devnet's own block times, read straight from its block list. */
const devnetTimes = async (): Promise<Map<number, string>> => {
  const body = (await (await fetch(`${devnet.indexerUrl}${BLOCKS_PATH}?pagination.limit=1000`)).json()) as {
    blocks: Array<{ height: string; timestamp: string }>
  }
  return new Map(body.blocks.map((b) => [Number(b.height), b.timestamp]))
}
/** A proxy rewriting the block list's pages with `rewrite`. */
const blockPagesVia = (rewrite: (blocks: Array<Record<string, unknown>>, page: Record<string, any>) => void): Promise<HostileServer> =>
  proxy((async (req, forward) => {
    const res = await forward()
    if (req.url.pathname !== BLOCKS_PATH) return res
    const page = JSON.parse(res.body)
    rewrite(page.blocks, page)
    return json(page)
  }) satisfies Handler)

describe("block times", () => {
  it("are read as runs of at most 100 heights from a height cursor, whatever order they are asked in, and remembered", async () => {
    const server = await proxy((_, forward) => forward())
    const asked = [250, 3, 5, 104, 102, 103, 240, 5]
    const r = await withSource(server, (source) =>
      Effect.gen(function* () {
        const first = yield* source.blockTimes(asked)
        const again = yield* source.blockTimes([3, 250, 104])
        return { first, again }
      })
    )
    if (Either.isLeft(r)) throw new Error(String(r.left))
    const truth = await devnetTimes()
    expect([...r.right.first.entries()].sort(([a], [b]) => a - b)).toEqual([3, 5, 102, 103, 104, 240, 250].map((h) => [h, truth.get(h)]))
    expect([...r.right.again.entries()]).toEqual([3, 250, 104].map((h) => [h, truth.get(h)]))
    // 3..102 is one run (under 3 + 100), 103..104 the next, 240..250 the last; nothing asked again
    expect(blockRequests(server)).toEqual([
      { from: 3, limit: 100 },
      { from: 103, limit: 2 },
      { from: 240, limit: 11 }
    ])
  })

  it("a server that caps its pages below what was asked is walked on from the last height it gave", async () => {
    const server = await blockPagesVia((blocks, page) => {
      blocks.splice(4)
      page.pagination.next_key = "ignored"
    })
    const heights = Array.from({ length: 21 }, (_, i) => 10 + i)
    const r = await withSource(server, (source) => source.blockTimes(heights))
    if (Either.isLeft(r)) throw new Error(String(r.left))
    const truth = await devnetTimes()
    expect([...r.right.entries()]).toEqual(heights.map((h) => [h, truth.get(h)]))
    expect(blockRequests(server).map((q) => q.from)).toEqual([10, 14, 18, 22, 26, 30])
  })

  it("a block list that goes back, lacks a height, or sends a block without a string height and time fails, naming what", async () => {
    const back = await blockPagesVia((blocks) => blocks.reverse())
    const wentBack = await withSource(back, (source) => source.blockTimes([20, 21, 22]))
    expect(Either.isLeft(wentBack) && wentBack.left).toMatchObject({
      _tag: "IndexerPagingError",
      endpoint: "blocks",
      message: "height 21 came after height 22: the block list went back"
    })

    const pruned = await blockPagesVia((blocks) => blocks.splice(1, 1))
    const lacking = await withSource(pruned, (source) => source.blockTimes([30, 31, 32]))
    expect(Either.isLeft(lacking) && lacking.left).toMatchObject({
      _tag: "IndexerPagingError",
      endpoint: "blocks",
      message: "block 31 is not in the block list (pruned, or not indexed yet), so the rows at that height have no block time",
      // the cursor that would ask for it
      key: Buffer.from(JSON.stringify({ height: 30 })).toString("base64")
    })

    // a block list with nothing from a height on (pruned, or not indexed yet): its empty page ends the walk
    const emptied = await blockPagesVia((blocks) => blocks.splice(0))
    const none = await withSource(emptied, (source) => source.blockTimes([70, 71]))
    expect(Either.isLeft(none) && none.left).toMatchObject({
      _tag: "IndexerPagingError",
      message: "block 70 is not in the block list (pruned, or not indexed yet), so the rows at that height have no block time"
    })

    // the same height twice is no order either
    const repeated = await blockPagesVia((blocks) => blocks.splice(1, 0, blocks[0]))
    const twice = await withSource(repeated, (source) => source.blockTimes([60, 61]))
    expect(Either.isLeft(twice) && twice.left).toMatchObject({
      _tag: "IndexerPagingError",
      endpoint: "blocks",
      message: "height 60 came after height 60: the block list went back"
    })

    const untimed = await blockPagesVia((blocks) => delete blocks[1].timestamp)
    const noTime = await withSource(untimed, (source) => source.blockTimes([40, 41]))
    expect(Either.isLeft(noTime) && noTime.left).toMatchObject({
      _tag: "IndexerDecodeError",
      endpoint: "blocks",
      path: "blocks[1].timestamp",
      message: "expected a block with a string height and timestamp"
    })

    const numeric = await blockPagesVia((blocks) => (blocks[0].height = Number(blocks[0].height)))
    const badHeight = await withSource(numeric, (source) => source.blockTimes([50]))
    expect(Either.isLeft(badHeight) && badHeight.left).toMatchObject({ _tag: "IndexerDecodeError", path: "blocks[0].height" })
  })
})

describe("the driver's answers", () => {
  it("a list is not served only when its endpoint answers 404; a 400 (a parameter refused: the route is there) is served; another error fails the probe", async () => {
    const server = await proxy((req, forward) =>
      req.url.pathname === txsList.path
        ? text(req.url.searchParams.has("x") ? 404 : req.url.searchParams.has("y") ? 400 : 403, "no")
        : forward()
    )
    const r = await withSource(server, (source) =>
      Effect.all([
        source.served({ ...txsList, query: { x: "1" } }),
        source.served({ ...txsList, query: { y: "1" } }),
        Effect.either(source.served(txsList)),
        source.served({ endpoint: "blocks", path: BLOCKS_PATH, arrayKey: "blocks" })
      ])
    )
    if (Either.isLeft(r)) throw new Error(String(r.left))
    const [notServed, parameterRefused, refused, blocks] = r.right
    expect(notServed).toBe(false)
    expect(parameterRefused).toBe(true)
    expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "IndexerHttpError", status: 403 })
    expect(blocks).toBe(true)
  })

  it("a body that never parses is a truncated body, fetched again before it fails", async () => {
    const server = await proxy((req, forward) =>
      req.url.pathname === txsList.path ? text(200, '{"txs": [{"txhash": "AB', { "content-type": "application/json" }) : forward()
    )
    const r = await withSource(server, (source) => source.page(txsList, { limit: 5, reverse: false }))
    expect(Either.isLeft(r) && r.left).toMatchObject({
      _tag: "IndexerTruncatedBody",
      url: expect.stringContaining(txsList.path),
      what: `not valid JSON (${'{"txs": [{"txhash": "AB'.length} bytes; cut short?)`
    })
    expect(server.requests.filter((q) => q.path.startsWith(txsList.path)).length).toBe(1 + FAST_RETRY.maxRetries)
  })

  it("names a record's field by its place in the page", async () => {
    const server = await proxy((_, forward) => forward())
    const r = await withSource(server, (source) =>
      Effect.succeed(["", "height", "[2].key", "tx.body"].map((path) => source.invalidRecord(txsList, "k", 3, { path, message: "m" }).path))
    )
    expect(Either.isRight(r) && r.right).toEqual(["txs[3]", "txs[3].height", "txs[3][2].key", "txs[3].tx.body"])
  })
})
