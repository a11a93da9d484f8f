/**
 * IndexerClient against the devnet over real HTTP: typed reads of every endpoint family,
 * recovery from heavy transient faults, no retry on 4xx, and decode errors that name the
 * endpoint, page key and field path.
 */
import { Deferred, Effect, Either, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { layerRequestLimiter } from "../../src/http/RequestLimiter.js"
import { DEFAULT_RETRY, parseRetryAfter, retryDelayMs } from "../../src/http/retry.js"
import { layerHttpTransport } from "../../src/http/transport.js"
import { afterOfKey } from "../../src/indexer/cursors.js"
import { INDEXER } from "../../src/indexer/endpoints.js"
import { IndexerClient, layerIndexerClient } from "../../src/indexer/IndexerClient.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 50, timeoutMs: 1_000, maxRetries: 12 }

const run = <A, E>(url: string, program: Effect.Effect<A, E, IndexerClient>, retry = FAST_RETRY) =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(
        layerIndexerClient({ baseUrl: url, retry }).pipe(
          Layer.provide(Layer.mergeAll(layerHttpTransport(), layerRequestLimiter({ concurrency: 8, rps: 0 })))
        )
      )
    )
  )

let clean: Devnet
beforeAll(async () => {
  clean = await startDevnet({ seed: 21, blocks: 150 })
})
afterAll(() => clean.stop())

describe("IndexerClient", () => {
  it("sends names and token ids as the real indexer matches them: undecoded, letters and digits only for the name search; one it could never match is refused unsent", async () => {
    const names = (r: { collections: ReadonlyArray<{ collection: { name: string } }> }) =>
      r.collections.map((c) => c.collection.name).sort()
    const created = clean.chain.u.collections.filter((c) => clean.chain.collectionCreated(c)).map((c) => c.name)
    const out = await run(
      clean.indexerUrl,
      Effect.gen(function* () {
        const c = yield* IndexerClient
        const frogs = yield* c.collectionsByName("Lake Frogs")
        const bold = yield* c.collectionsByName("<b>Bold</b> & Co")
        const cafe = yield* Effect.either(c.collectionsByName("Café ☕ Club"))
        const spaced = yield* Effect.either(c.nftTxs(clean.chain.u.collections[0].address, "a b"))
        return { frogs: names(frogs), bold: names(bold), cafe, spaced }
      })
    )
    expect(out.frogs).toEqual(created.filter((n) => n.startsWith("Lake Frogs")).sort())
    expect(out.frogs.length).toBeGreaterThan(0)
    expect(out.bold).toEqual(created.filter((n) => n === "<b>Bold</b> & Co"))
    expect(Either.isLeft(out.cafe) && out.cafe.left._tag).toBe("IndexerRequestError")
    expect(Either.isLeft(out.cafe) && out.cafe.left.message).toMatch(
      /"CaféClub" cannot be asked of the indexer: it reads path parameters undecoded/
    )
    expect(Either.isLeft(out.spaced) && out.spaced.left.message).toMatch(/^token id "a b" cannot be asked/)
    // the devnet, as the real server, matches the percent-escaped needle as its characters: nothing
    const escaped = (await (await fetch(`${clean.indexerUrl}/indexer/nft/v1/collections/by_name/Lake%20Frogs`)).json()) as {
      collections: ReadonlyArray<unknown>
    }
    expect(escaped.collections).toEqual([])
  })

  it("reads every endpoint family with typed results", async () => {
    const out = await run(
      clean.indexerUrl,
      Effect.gen(function* () {
        const c = yield* IndexerClient
        const status = yield* c.status
        const blocks = yield* c.blocks({ limit: 3, reverse: false })
        const block = yield* c.block(2)
        const txs = yield* c.txs({ limit: 5 }, { msgs: ["cosmos.bank.v1beta1.MsgSend"] })
        const tx = yield* c.tx(txs.txs[0].txhash)
        const evm = yield* c.evmTxs({ limit: 2 })
        const evmTx = yield* c.evmTx(evm.txs[0].transactionHash)
        const itx = yield* c.internalTxs({ limit: 2 })
        const colls = yield* c.collections({ limit: 10 })
        const biggest = [...colls.collections].sort((a, b) => b.collection.nfts.length - a.collection.nfts.length)[0]
        const tokens = yield* c.tokensByCollection(biggest.object_addr, { limit: 5 }, { orderBy: "height" })
        const holders = yield* c.richList("ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2", { limit: 3 })
        const byName = yield* c.collectionsByName("../../etc")
        return { status, blocks, block, txs, tx, evm, evmTx, itx, colls, tokens, holders, byName }
      })
    )
    expect(out.status.height).toBe(150)
    expect(out.blocks.blocks.map((b) => b.height)).toEqual(["1", "2", "3"])
    expect(out.block.block.height).toBe("2")
    expect(out.txs.txs.every((t) => (t.tx.body.messages as Array<any>).some((m) => m["@type"] === "/cosmos.bank.v1beta1.MsgSend"))).toBe(
      true
    )
    expect(out.tx.tx.txhash).toBe(out.txs.txs[0].txhash)
    expect(out.evmTx.tx).toEqual(out.evm.txs[0])
    expect(out.itx.internal_txs.length).toBe(2)
    expect(out.tokens.tokens.length).toBe(Math.min(5, Math.max(...out.colls.collections.map((c) => c.collection.nfts.length))))
    expect(out.tokens.tokens.map((t) => t.height)).toEqual([...out.tokens.tokens.map((t) => t.height)].sort((a, b) => b - a))
    expect(out.holders.holders.length).toBe(3)
    // the name match strips non-alphanumerics, so "../../etc" finds the collection of that name
    expect(out.byName.collections.map((c) => c.collection.name)).toContain("../../etc")
  })

  it("the endpoint catalogue names each endpoint once, and every list's records key and key style are those of the devnet's answers", async () => {
    const names = Object.values(INDEXER).map((e) => e.name)
    expect(new Set(names).size).toBe(names.length)
    const get = async (path: string, query = "") => {
      const res = await fetch(`${clean.indexerUrl}${path}?pagination.limit=2&pagination.reverse=false${query}`)
      expect(res.status, path).toBe(200)
      return (await res.json()) as Record<string, unknown> & { pagination: { next_key: string | null } }
    }
    const firstTx = ((await get(INDEXER.txs.path())).txs as Array<{ txhash: string; height: string }>)[0]
    const firstEvm = ((await get(INDEXER.evmTxs.path())).txs as Array<{ transactionHash: string; from: string }>)[0]
    const account = clean.chain.u.accounts[0]
    const collection = clean.chain.u.collections.find((c) => clean.chain.collectionCreated(c))!
    const params: { readonly [K in keyof typeof INDEXER]?: ReadonlyArray<string | number> } = {
      txsByAccount: [account.bech32],
      txsByHeight: [Number(firstTx.height)],
      evmTxsByAccount: [firstEvm.from],
      evmTxsByHeight: [Number(firstTx.height)],
      internalTxsByAccount: [firstEvm.from],
      internalTxsByHeight: [Number(firstTx.height)],
      internalTxsByHash: [firstEvm.transactionHash],
      collectionsByAccount: [account.evm],
      collectionsByName: ["LakeFrogs"],
      tokensByAccount: [account.evm],
      tokensByCollection: [collection.address],
      nftTxs: [collection.address, "1"],
      richList: ["uinit"]
    }
    const seen: Array<string> = []
    for (const [name, e] of Object.entries(INDEXER)) {
      if (e.kind !== "list") continue
      const answer = await get(
        (e.path as (...p: ReadonlyArray<string | number>) => string)(...(params[name as keyof typeof INDEXER] ?? []))
      )
      const records = answer[e.records]
      expect(Array.isArray(records), `${e.name} answers its records under "${e.records}"`).toBe(true)
      const key = answer.pagination.next_key
      if ((records as Array<unknown>).length === 0 || key === null) continue
      seen.push(e.name)
      // a keyset list's next_key names its last row's height or sequence; an offset list's is no cursor
      if (e.keys === "offset") expect(afterOfKey("sequence", key) ?? afterOfKey("height", key), e.name).toBeUndefined()
      else expect(afterOfKey(e.keys, key), `${e.name}'s next_key ${key} is a ${e.keys} cursor`).toBeGreaterThan(0)
    }
    // the lists the export pages, at least, were checked with a next page
    expect(seen).toEqual(expect.arrayContaining(["blocks", "txs", "evm-txs", "evm-internal-txs", "collections", "richlist"]))
  })

  it("recovers from the heavy fault profile: the same pages as a clean devnet", async () => {
    const faulty = await startDevnet({ seed: 21, blocks: 150, faults: "heavy,stall-ms=3000,retry-after=0" })
    try {
      const walk = (url: string) =>
        run(
          url,
          Effect.gen(function* () {
            const c = yield* IndexerClient
            const pages: Array<unknown> = []
            let key: string | null = null
            do {
              const page: any = yield* c.txs({ key, limit: 50, reverse: false })
              pages.push(page.txs)
              key = page.pagination.next_key
            } while (key !== null)
            return pages
          })
        )
      const [a, b] = await Promise.all([walk(clean.indexerUrl), walk(faulty.indexerUrl)])
      expect(b).toEqual(a)
    } finally {
      await faulty.stop()
    }
  })

  it("gives the request's permit back before the decode: at --concurrency 1, a page whose decode waits for the next page's answer does not keep that page from being asked", async () => {
    const ran = Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* IndexerClient
        const second = yield* Deferred.make<void>()
        const first = c.getWith("blocks", "/indexer/block/v1/blocks", { "pagination.limit": "1" }, () => Deferred.await(second))
        const next = c.getWith("blocks", "/indexer/block/v1/blocks", { "pagination.limit": "2" }, () => Deferred.succeed(second, undefined))
        yield* Effect.all([first, next], { concurrency: 2 }).pipe(
          Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "deadlock" })
        )
        return "both decoded"
      }).pipe(
        Effect.provide(
          layerIndexerClient({ baseUrl: clean.indexerUrl, retry: FAST_RETRY }).pipe(
            Layer.provide(Layer.mergeAll(layerHttpTransport(), layerRequestLimiter({ concurrency: 1, rps: 0 })))
          )
        ),
        Effect.either
      )
    )
    expect(await ran).toEqual(Either.right("both decoded"))
  })

  it("does not retry a 4xx and keeps its plain-text body", async () => {
    const err = await run(
      clean.indexerUrl,
      Effect.gen(function* () {
        const c = yield* IndexerClient
        return yield* Effect.either(c.block(99_999))
      })
    )
    expect(Either.isLeft(err)).toBe(true)
    if (Either.isLeft(err)) {
      expect(err.left._tag).toBe("IndexerHttpError")
      expect(err.left).toMatchObject({ status: 404, body: "[NOT_FOUND] block not found" })
    }
  })

  it("names endpoint, page key and field path on a malformed record, and does not retry it", async () => {
    const bad = await startDevnet({ seed: 21, blocks: 150, faults: "malformed=1" })
    try {
      const key = Buffer.from('{"height":10}').toString("base64")
      const err = await run(
        bad.indexerUrl,
        Effect.gen(function* () {
          const c = yield* IndexerClient
          return yield* Effect.flip(c.blocks({ key, limit: 5, reverse: false }))
        })
      )
      expect(err._tag).toBe("IndexerDecodeError")
      expect(String(err)).toMatch(
        new RegExp(
          `^malformed response from blocks \\(page key ${key.replace(/[+/=]/g, "\\$&")}\\) at blocks\\[\\d\\]\\.chain_id: Expected string, actual 12345$`
        )
      )
    } finally {
      await bad.stop()
    }
  })

  it("gives up on an unreachable server with a network error", async () => {
    const err = await run("http://127.0.0.1:1", Effect.flip(Effect.flatMap(IndexerClient, (c) => c.status)), {
      ...FAST_RETRY,
      maxRetries: 1
    })
    expect(err._tag).toBe("IndexerNetworkError")
  })

  it("retry delays: full jitter under a growing cap; Retry-After in seconds or as an HTTP-date", () => {
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 }
    expect(retryDelayMs({ retryable: true }, 0, policy, () => 0.999)).toBeLessThan(100)
    expect(retryDelayMs({ retryable: true }, 3, policy, () => 0.999)).toBeCloseTo(799.2)
    expect(retryDelayMs({ retryable: true }, 10, policy, () => 0.999)).toBeLessThanOrEqual(1000)
    expect(retryDelayMs({ retryable: true, retryAfterMs: 2000 }, 0, policy, () => 0.5)).toBe(2000)
    expect(parseRetryAfter("3")).toBe(3000)
    const now = Date.parse("2026-11-22T10:00:00Z")
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:00:05 GMT", now)).toBe(5000)
    expect(parseRetryAfter("soon")).toBeUndefined()
  })
})
