/**
 * The analytics views are right, not just runnable: each is recomputed here in TypeScript from
 * the devnet's own model and compared with what DuckDB answers over the exported Parquet.
 */
import { Effect, Either } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Analytics, layerAnalytics, type ParamValue } from "../../src/analytics/Analytics.js"
import { CHARTS } from "../../src/analytics/report.js"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import { DENOMS, startDevnet, type Devnet } from "../../src/devnet/index.js"
import { internalTxsAt, msgTypeOf } from "../../src/devnet/render.js"
import { runExport, type ExportOptions } from "../../src/engine/export.js"

let devnet: Devnet
let out: string
const exportFrom = (d: Devnet, options: ExportOptions = {}) =>
  Effect.runPromise(
    runExport(DATASETS, { pageSize: 200, ...options }).pipe(
      Effect.provide(exportLayer({ indexerUrl: d.indexerUrl, out, limits: { concurrency: 6, rps: 0 } }))
    )
  )

const query = (sql: string, params: Record<string, ParamValue> = {}, dataDir = out) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const a = yield* Analytics
      const r = yield* a.query(sql, params)
      return r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c.name, row[i]])))
    }).pipe(Effect.provide(layerAnalytics({ dataDir })), Effect.scoped)
  ) as Promise<Array<Record<string, any>>>

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), "chain-lake-analytics-"))
  // two devnets with the same seed share history: 400 blocks is the 300-block chain plus 100 more,
  // so exporting both gives two snapshots of the same chain
  const earlier = await startDevnet({ seed: 17, blocks: 300 })
  await exportFrom(earlier, { datasets: ["nft_tokens", "holders", "nft_collections"], params: { denoms: [DENOMS[0].denom] } })
  await earlier.stop()
  devnet = await startDevnet({ seed: 17, blocks: 400 })
  await exportFrom(devnet)
  await exportFrom(devnet, { datasets: ["holders"], params: { denoms: [DENOMS[0].denom] } })
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  rmSync(out, { recursive: true, force: true })
})

const allPlans = (d: Devnet) => {
  const c = d.chain
  const plans = []
  for (let h = 1; h <= c.tip; h++) for (let i = 0; i < c.blockTxCount(h); i++) plans.push(c.plan(h, i))
  return plans
}

describe("analytics views agree with the chain", () => {
  it("daily_activity: blocks, txs, failed txs, gas and fees", async () => {
    const plans = allPlans(devnet)
    const rows = await query("SELECT * FROM daily_activity")
    expect(rows.length).toBe(1) // 400 blocks at ~0.55 s all fall on 2026-01-01
    const fees = new Map<string, bigint>()
    for (const p of plans) fees.set(DENOMS[p.feeDenom].denom, (fees.get(DENOMS[p.feeDenom].denom) ?? 0n) + BigInt(p.feeAmount))
    expect(rows[0]).toMatchObject({
      blocks: "400",
      txs: String(plans.length),
      failed_txs: String(plans.filter((p) => p.failed).length),
      gas_used: String(plans.reduce((s, p) => s + p.gasUsed, 0))
    })
    expect(rows[0].fees).toEqual([...fees.entries()].sort().map(([denom, amount]) => ({ denom, amount: amount.toString() })))
  })

  it("daily_activity and the activity chart: failed txs NULL where a day's (a bucket's) txs were not all exported, never the count of part of it", async () => {
    const part = mkdtempSync(join(tmpdir(), "chain-lake-analytics-part-"))
    try {
      // blocks to 400, txs to 200 (a partial export; a rollback of txs leaves the same)
      await Effect.runPromise(
        Effect.forEach([{ datasets: ["blocks"] }, { datasets: ["txs"], toHeight: 200 }], (o) =>
          runExport(DATASETS, { pageSize: 200, ...o }).pipe(
            Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out: part, limits: { concurrency: 6, rps: 0 } }))
          )
        )
      )
      const [day] = await query("SELECT txs, failed_txs FROM daily_activity", {}, part)
      expect(day).toEqual({ txs: String(allPlans(devnet).length), failed_txs: null })
      const chart = CHARTS.find((c) => c.id === "activity-over-time")!
      const buckets = await query(`SELECT t, txs, failed_txs FROM (${chart.sql})`, {}, part)
      const byTime = (rows: Array<Record<string, any>>) => new Map(rows.map((r) => [String(r.t), r.failed_txs]))
      const whole = byTime(await query(`SELECT t, failed_txs FROM (${chart.sql})`))
      const split = buckets.filter((b) => b.failed_txs !== null)
      // buckets of heights txs hold whole keep their split, as the whole lake's; the rest have none, not 0
      expect(split.length).toBeGreaterThan(0)
      expect(split.length).toBeLessThan(buckets.length)
      for (const b of split) expect(b.failed_txs, String(b.t)).toBe(whole.get(String(b.t)))
    } finally {
      rmSync(part, { recursive: true, force: true })
    }
  }, 120_000)

  it("block_times: mean, median, p95 and the avg_blocktime endpoint's definition", async () => {
    const c = devnet.chain
    const times: Array<number> = []
    for (let h = 2; h <= c.tip; h++) {
      const ns = (x: number) => c.headerTimeMs(x) * 1e6 + c.headerExtraNanos(x)
      times.push(Math.floor((ns(h) - ns(h - 1)) / 1e6))
    }
    const sorted = [...times].sort((a, b) => a - b)
    const q = (p: number) => {
      const pos = (sorted.length - 1) * p
      const lo = Math.floor(pos)
      return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (pos - lo)
    }
    const [row] = await query("SELECT * FROM block_times")
    // every block of the day, the first too (its interval, 0, is none and left out of the means)
    expect(row.blocks).toBe(String(c.tip))
    expect(row.mean_ms).toBeCloseTo(times.reduce((a, b) => a + b, 0) / times.length, 6)
    expect(row.p50_ms).toBeCloseTo(q(0.5), 6)
    expect(row.p95_ms).toBeCloseTo(q(0.95), 6)
    const endpoint = (await (await fetch(devnet.indexerUrl + "/indexer/block/v1/avg_blocktime")).json()) as { avg_block_time: number }
    // from the blocks' intervals, each to the millisecond (the timestamps are sent to the second): within a millisecond of the mean
    expect(Math.abs(row.last100_mean_s - endpoint.avg_block_time)).toBeLessThan(1e-3)
  })

  it("msg_type_mix: messages, txs, and the failure rate and mean gas of the txs (once each, however many messages of the type they carry)", async () => {
    const plans = allPlans(devnet)
    const expected = new Map<string, { messages: number; txs: number; failed: number; gas: number }>()
    for (const p of plans) {
      const t = msgTypeOf(devnet.chain, p)
      const e = expected.get(t) ?? { messages: 0, txs: 0, failed: 0, gas: 0 }
      e.messages += p.msgCount
      e.txs += 1
      e.failed += p.failed ? 1 : 0
      e.gas += p.gasUsed
      expected.set(t, e)
    }
    // txs of two messages of one type: counted per message, the rates were the messages'
    expect(plans.some((p) => p.msgCount > 1 && p.failed)).toBe(true)
    const rows = await query("SELECT * FROM msg_type_mix")
    expect(rows.length).toBe(expected.size)
    for (const r of rows) {
      const e = expected.get(r.message_type)!
      expect([Number(r.messages), Number(r.txs)]).toEqual([e.messages, e.txs])
      expect(r.failure_rate).toBeCloseTo(e.failed / e.txs, 9)
      expect(r.mean_gas_used).toBeCloseTo(e.gas / e.txs, 6)
    }
  })

  it("holder_concentration: holders, top-10 share, Gini and HHI per denom and snapshot", async () => {
    const c = devnet.chain
    const rows = await query("SELECT * FROM holder_concentration WHERE snapshot_height = $h ORDER BY denom", {
      h: BigInt(c.richListHeight)
    })
    expect(rows.length).toBeGreaterThanOrEqual(2)
    for (const r of rows) {
      const amounts = c
        .holders(c.denomIndex(r.denom))
        .map((h) => Number(h.amount))
        .filter((a) => a > 0)
      const total = amounts.reduce((a, b) => a + b, 0)
      const asc = [...amounts].sort((a, b) => a - b)
      const n = asc.length
      const gini = (2 * asc.reduce((s, x, i) => s + (i + 1) * x, 0)) / (n * total) - (n + 1) / n
      const hhi = amounts.reduce((s, x) => s + (x / total) ** 2, 0)
      const top10 =
        [...amounts]
          .sort((a, b) => b - a)
          .slice(0, 10)
          .reduce((a, b) => a + b, 0) / total
      expect(Number(r.holders)).toBe(n)
      expect(r.gini).toBeCloseTo(gini, 9)
      expect(r.hhi).toBeCloseTo(hhi, 9)
      expect(r.top10_share).toBeCloseTo(top10, 9)
    }
  })

  it("nft_collection_stats and internal_call_depth", async () => {
    const c = devnet.chain
    const stats = await query("SELECT * FROM nft_collection_stats WHERE snapshot_height = 400")
    for (const col of c.u.collections.filter((x) => c.collectionCreated(x))) {
      const live = c.liveTokensOf(col.index)
      const row = stats.find((s) => s.collection_address === col.address.toLowerCase())
      if (live.length === 0) {
        expect(row).toBeUndefined()
        continue
      }
      const perOwner = new Map<number, number>()
      for (const t of live) perOwner.set(t.owner, (perOwner.get(t.owner) ?? 0) + 1)
      expect([Number(row!.tokens), Number(row!.owners)]).toEqual([live.length, perOwner.size])
      expect(row!.top_owner_share).toBeCloseTo(Math.max(...perOwner.values()) / live.length, 9)
    }
    const depthCount = new Map<number, number>()
    for (let h = 1; h <= c.internalTxHeight; h++) {
      const byTx = new Map<string, Array<{ index: number; parent: number }>>()
      for (const t of internalTxsAt(c, h)) {
        const row = t.row as { hash: string; index: number; parent_index: number } // the wire's names
        byTx.set(row.hash, [...(byTx.get(row.hash) ?? []), { index: row.index, parent: row.parent_index }])
      }
      for (const calls of byTx.values()) {
        const depth = new Map<number, number>()
        for (const call of calls) {
          const d = call.parent === -1 ? 0 : depth.get(call.parent)! + 1
          depth.set(call.index, d)
          depthCount.set(d, (depthCount.get(d) ?? 0) + 1)
        }
      }
    }
    const depths = await query("SELECT depth, calls FROM internal_call_depth ORDER BY depth")
    expect(depths.map((r) => [Number(r.depth), Number(r.calls)])).toEqual([...depthCount.entries()].sort((a, b) => a[0] - b[0]))
  })

  it("nft_ownership_changes and holder_changes between two snapshots", async () => {
    const earlier = await startDevnet({ seed: 17, blocks: 300 })
    try {
      const key = (c: Devnet["chain"]) =>
        new Map(
          c.u.collections.flatMap((col) =>
            c.liveTokensOf(col.index).map((t) => [`${col.address.toLowerCase()}|${t.tokenId}`, c.accountOf(t.owner).bech32] as const)
          )
        )
      const before = key(earlier.chain)
      const after = key(devnet.chain)
      const expected: Array<string> = []
      for (const [k, owner] of after)
        if (!before.has(k)) expected.push(`${k}|minted`)
        else if (before.get(k) !== owner) expected.push(`${k}|transferred`)
      for (const k of before.keys()) if (!after.has(k)) expected.push(`${k}|burned`)
      const rows = await query(
        "SELECT collection_address || '|' || token_id || '|' || change AS k FROM nft_ownership_changes WHERE from_snapshot = 300 AND to_snapshot = 400"
      )
      expect(expected.length).toBeGreaterThan(0)
      expect(rows.map((r) => r.k).sort()).toEqual(expected.sort())

      const uinit = DENOMS[0].denom
      const bal = (c: Devnet["chain"]) => new Map(c.holders(0).map((h) => [h.account.evm.toLowerCase(), h.amount]))
      const b0 = bal(earlier.chain)
      const b1 = bal(devnet.chain)
      const deltas = [...b1.keys()].filter((a) => b0.get(a) !== b1.get(a)).map((a) => `${a}|${b1.get(a)! - (b0.get(a) ?? 0n)}`)
      const changes = await query("SELECT account_address || '|' || delta AS k FROM holder_changes WHERE denom = $d", { d: uinit })
      expect(changes.map((r) => r.k).sort()).toEqual(deltas.sort())
      expect(deltas.length).toBeGreaterThan(0)
    } finally {
      await earlier.stop()
    }
  })

  it("a stream that shows its first rows reads no further, says the answer had more, and the connection answers the next query", async () => {
    const said = await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* Analytics
        const handed: Array<number> = []
        let more = 0
        const take = async (_c: unknown, rows: ReadonlyArray<unknown>) => void handed.push(rows.length)
        yield* a.stream("SELECT range AS n FROM range(1000000)", {}, take, { rows: 5000, onMore: () => more++ })
        const exact: Array<number> = []
        let exactMore = 0
        yield* a.stream("SELECT range AS n FROM range(4096)", {}, async (_c, rows) => void exact.push(rows.length), {
          rows: 4096,
          onMore: () => exactMore++
        })
        // an answer that ends inside the chunk that passes the rows shown has more too
        let insideMore = 0
        yield* a.stream("SELECT range AS n FROM range(4096)", {}, async () => {}, { rows: 4000, onMore: () => insideMore++ })
        const next = yield* a.query("SELECT count(*) AS n FROM blocks")
        return { handed, more, exact, exactMore, insideMore, next: next.rows[0][0] }
      }).pipe(Effect.provide(layerAnalytics({ dataDir: out })), Effect.scoped)
    )
    // DuckDB hands rows in chunks of 2,048: three of them hold the first 5,000
    expect(said).toEqual({
      handed: [2048, 2048, 2048],
      more: 1,
      exact: [2048, 2048],
      exactMore: 0,
      insideMore: 1,
      next: String(devnet.chain.tip)
    })
  })

  it("every view exists on an empty lake (typed, no rows), and a bad query is a SqlError with DuckDB's message", async () => {
    const empty = mkdtempSync(join(tmpdir(), "chain-lake-empty-"))
    try {
      for (const v of ["blocks", "txs", "holders", "daily_activity", "holder_concentration", "nft_ownership_changes"])
        expect(await query(`SELECT * FROM ${v}`, {}, empty)).toEqual([])
      const cols = await query("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM txs)", {}, empty)
      expect(cols.find((c) => c.column_name === "height")?.column_type).toBe("BIGINT")
      const bad = await Effect.runPromise(
        Effect.either(Effect.flatMap(Analytics, (a) => a.query("SELECT nope FROM blocks"))).pipe(
          Effect.provide(layerAnalytics({ dataDir: empty })),
          Effect.scoped
        )
      )
      expect(Either.isLeft(bad) && bad.left._tag).toBe("SqlError")
      expect(Either.isLeft(bad) && bad.left.message).toMatch(/Referenced column "nope" not found/)
      // a folder that is not there (a typo) or a file is no lake: not an empty one whose counts are all 0
      const file = join(empty, "a-file")
      writeFileSync(file, "x")
      for (const [dataDir, said] of [
        [join(empty, "no-such"), `dataDir ${join(empty, "no-such")} does not exist: give the folder an export wrote`],
        [file, `dataDir ${file} is a file, not the folder an export wrote`],
        ["", "dataDir is empty: give the folder an export wrote"],
        [null as unknown as string, "dataDir must be the path of the folder an export wrote, a string; got null"]
      ]) {
        const opened = await Effect.runPromise(
          Effect.either(
            Effect.flatMap(Analytics, (a) => a.query("SELECT count(*) FROM blocks")).pipe(
              Effect.provide(layerAnalytics({ dataDir })),
              Effect.scoped
            )
          )
        )
        expect(Either.isLeft(opened) && [opened.left._tag, opened.left.message]).toEqual(["AnalyticsError", said])
      }
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
