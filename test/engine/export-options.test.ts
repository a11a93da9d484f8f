/**
 * runExport's options and outcomes, in process, each test running its own small export (so that
 * mutation testing attributes the engine code to the test that checks it): height bounds and the
 * run that fills in the rest, plans and reports that add up, the dry run, quarantine, datasets
 * the chain cannot serve, explicit denoms and snapshots already committed, and the option errors.
 */
import { Effect, Either, Layer } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportLayer } from "../../src/cli/layers.js"
import { ParquetSink } from "../../src/lake/ParquetSink.js"
import { DATASETS, EXPORTED_DATASETS } from "../../src/datasets/index.js"
import { DENOMS, startDevnet, type Devnet } from "../../src/devnet/index.js"
import type { Dataset } from "../../src/engine/Dataset.js"
import type { Manifest } from "../../src/lake/Manifests.js"
import { runExport, type DatasetPlan, type DatasetResult, type ExportOptions, type ExportReport } from "../../src/engine/export.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { expectDatasetMatches, expectedLake, type ExpectedDataset } from "../support/chain-model.js"
import { json, startProxy } from "../support/hostile.js"
import { expectManifestsTrue, hashTree, queryLake, scan } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 50, timeoutMs: 2_000, maxRetries: 6 }
const APPEND = ["blocks", "txs", "evm_txs", "evm_logs", "evm_internal_txs"]
const BUCKET_WIDTH = 40

const dirs = tempDirs("chain-lake-options-")
let devnet: Devnet
let lake: Map<string, ExpectedDataset>
beforeAll(async () => {
  devnet = await startDevnet({ seed: 19, blocks: 80 })
  lake = new Map(expectedLake(devnet.chain, BUCKET_WIDTH).map((d) => [d.name, d]))
})
afterAll(async () => {
  await devnet.stop()
  dirs.removeAll()
})

const exportFrom = (indexerUrl: string, out: string, options: ExportOptions = {}, retry = FAST_RETRY) =>
  Effect.runPromise(
    Effect.either(runExport(DATASETS, { pageSize: 20, concurrency: 3, bucketWidth: BUCKET_WIDTH, ...options })).pipe(
      Effect.provide(exportLayer({ indexerUrl, out, limits: { concurrency: 3, rps: 0 }, retry }))
    )
  )
/**
 * An export that must succeed; what its observer heard must add up to its report: the plans, each
 * dataset it exported done once, its rows summed to the report's (a shard re-exported after another
 * writer took its range counts its dropped rows back out).
 */
const exportOk = async (
  out: string,
  options: ExportOptions = {},
  indexerUrl = devnet.indexerUrl,
  retry = FAST_RETRY
): Promise<ExportReport> => {
  const heard = { rows: new Map<string, number>(), done: new Map<string, number>(), planned: [] as Array<DatasetPlan> }
  const given = options.observer ?? {}
  const observer = {
    ...given,
    rows: (d: string, n: number) => {
      heard.rows.set(d, (heard.rows.get(d) ?? 0) + n)
      given.rows?.(d, n)
    },
    done: (d: string, result: DatasetResult) => {
      heard.done.set(d, (heard.done.get(d) ?? 0) + 1)
      given.done?.(d, result)
    },
    planned: (d: string, plan: DatasetPlan) => {
      heard.planned.push(plan)
      given.planned?.(d, plan)
    }
  }
  const r = await exportFrom(indexerUrl, out, { ...options, observer }, retry)
  if (Either.isLeft(r)) throw new Error(`export failed: ${String(r.left)}`)
  // the plans heard are the report's: one for each dataset not skipped before planning
  expect(r.right.plans).toEqual(heard.planned)
  if (!options.dryRun)
    for (const d of r.right.datasets.filter((d) => d.skipped === undefined)) {
      expect(heard.done.get(d.dataset), `${d.dataset}: done`).toBe(1)
      expect(heard.rows.get(d.dataset) ?? 0, `${d.dataset}: rows heard`).toBe(d.rows)
    }
  return r.right
}
/** The devnet behind a proxy whose /status answer is `rewrite`'s. */
const statusVia = (rewrite: (status: Record<string, unknown>) => Record<string, unknown>) =>
  startProxy(devnet.indexerUrl, async (req, forward) =>
    req.url.pathname === "/status" ? json(rewrite(JSON.parse((await forward()).body))) : forward()
  )
const manifest = (out: string, dataset: string): Manifest => JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8"))
const heightOf = (_name: string, row: Readonly<Record<string, unknown>>) => Number(row.height)
/** The model's rows of `name` with heights in [from, to]. */
const between = (name: string, from: number, to: number): ExpectedDataset => {
  const d = lake.get(name)!
  return { ...d, rows: d.rows.filter((r) => heightOf(name, r) >= from && heightOf(name, r) <= to) }
}
/** What a report says of each dataset, and what the manifests hold, agree. */
const expectReportMatchesManifests = (
  report: ExportReport,
  out: string,
  before: Record<string, { rows: number; files: number; bytes: number }> = {}
) => {
  for (const r of report.datasets.filter((d) => !d.skipped)) {
    const m = manifest(out, r.dataset)
    const was = before[r.dataset] ?? { rows: 0, files: 0, bytes: 0 }
    expect({ rows: r.rows, files: r.files, bytes: r.bytes }, r.dataset).toEqual({
      rows: m.files.reduce((s, f) => s + f.rows, 0) - was.rows,
      files: m.files.length - was.files,
      bytes: m.files.reduce((s, f) => s + f.bytes, 0) - was.bytes
    })
  }
}
const totalsOf = (out: string, names: ReadonlyArray<string>) =>
  Object.fromEntries(
    names.map((n) => {
      const m = manifest(out, n)
      return [n, { rows: m.files.reduce((s, f) => s + f.rows, 0), files: m.files.length, bytes: m.files.reduce((s, f) => s + f.bytes, 0) }]
    })
  )

describe("height bounds", () => {
  it("--from-height/--to-height export exactly those heights, plan and report add up, and a later run fills in the rest", async () => {
    const out = dirs.make()
    const c = devnet.chain
    const plans: Array<DatasetPlan> = []
    const committed: Array<string> = []
    const report = await exportOk(out, {
      datasets: APPEND,
      fromHeight: 21,
      toHeight: 60,
      observer: { planned: (_, p) => plans.push(p), committed: (d, f) => committed.push(`${d}/${f.path}`) }
    })
    expect(report).toMatchObject({ chainId: c.u.chainId, tip: c.tip, dryRun: false })
    expect(Date.parse(report.finishedAt)).toBeGreaterThanOrEqual(Date.parse(report.startedAt))
    for (const name of APPEND)
      await expectDatasetMatches(out, between(name, 21, Math.min(60, name === "evm_internal_txs" ? c.internalTxHeight : 60)))
    expectReportMatchesManifests(report, out)
    expect(committed.sort()).toEqual(APPEND.flatMap((n) => manifest(out, n).files.map((f) => `${n}/${f.path}`)).sort())
    // blocks count heights, the tx families row positions: the txs of heights 21..60 are positions txSeqBefore(21)..txSeqBefore(61)
    const blocksPlan = plans.find((p) => p.dataset === "blocks")!
    expect(blocksPlan).toMatchObject({ kind: "append", unit: "height", heights: [21, 60], todo: 40, done: 0 })
    expect(blocksPlan.estimatedRequests).toBe(plans.find((p) => p.dataset === "blocks")!.shards * Math.ceil(40 / 20 / blocksPlan.shards))
    expect(manifest(out, "blocks").committed).toEqual([[21, 61]])
    expect(plans.find((p) => p.dataset === "txs")).toMatchObject({
      unit: "position",
      heights: [21, 60],
      todo: c.txSeqBefore(61) - c.txSeqBefore(21),
      done: 0
    })
    expect(manifest(out, "txs").committed).toEqual([[c.txSeqBefore(21), c.txSeqBefore(61)]])
    expect(manifest(out, "evm_txs").committed).toEqual([[c.evmSeqBefore(21), c.evmSeqBefore(61)]])
    // evm_txs and evm_logs share one source: planned alike
    expect(plans.find((p) => p.dataset === "evm_logs")).toMatchObject({ todo: plans.find((p) => p.dataset === "evm_txs")!.todo })

    const before = totalsOf(out, APPEND)
    const rest: Array<DatasetPlan> = []
    const second = await exportOk(out, { datasets: APPEND, observer: { planned: (_, p) => rest.push(p) } })
    for (const name of APPEND) await expectDatasetMatches(out, lake.get(name)!)
    expectReportMatchesManifests(second, out, before)
    expect(rest.find((p) => p.dataset === "blocks")).toMatchObject({ heights: [1, c.tip], todo: c.tip - 40, done: 40 })
    expect(rest.find((p) => p.dataset === "txs")).toMatchObject({
      todo: c.txTotal() - (c.txSeqBefore(61) - c.txSeqBefore(21)),
      done: c.txSeqBefore(61) - c.txSeqBefore(21)
    })
    expect(manifest(out, "blocks").committed).toEqual([[1, c.tip + 1]])
    // and a third run has nothing to do
    const third = await exportOk(out, { datasets: APPEND })
    expect(third.datasets.map((d) => d.rows)).toEqual(APPEND.map(() => 0))
  })

  it("a --to-height above a watermark stops at the watermark, with a notice; a range past the tip exports nothing and says so", async () => {
    const out = dirs.make()
    const notices: Array<string> = []
    const c = devnet.chain
    const report = await exportOk(out, {
      datasets: ["evm_internal_txs"],
      fromHeight: c.internalTxHeight - 5,
      toHeight: c.tip,
      observer: { notice: (m) => notices.push(m) }
    })
    expect(notices.filter((n) => n.includes("were asked for, above"))).toEqual([
      `evm_internal_txs: heights to ${c.tip} were asked for, above internal_tx_height ${c.internalTxHeight}; exporting to ${c.internalTxHeight}`
    ])
    // a goal ahead of the chain (a follow round) is clipped without a word; heights within reach are not clipped at all
    const quiet: Array<string> = []
    await exportOk(dirs.make(), {
      datasets: ["evm_internal_txs"],
      fromHeight: c.internalTxHeight - 2,
      toHeight: c.tip,
      toHeightAhead: true,
      observer: { notice: (m) => quiet.push(m) }
    })
    await exportOk(dirs.make(), {
      datasets: ["blocks", "evm_internal_txs"],
      fromHeight: c.internalTxHeight - 2,
      toHeight: c.internalTxHeight,
      observer: { notice: (m) => quiet.push(m) }
    })
    expect(quiet.filter((n) => n.includes("were asked for, above"))).toEqual([])
    await expectDatasetMatches(out, between("evm_internal_txs", c.internalTxHeight - 5, c.internalTxHeight))
    expect(report.datasets[0].rows).toBe(between("evm_internal_txs", c.internalTxHeight - 5, c.internalTxHeight).rows.length)
    // heights past every row of the source: a range that is empty, by height or by position; no heights planned
    const past: Array<string> = []
    const empty = await exportOk(dirs.make(), {
      datasets: ["blocks", "txs", "token_transfers_cosmos"],
      fromHeight: c.tip + 3,
      toHeight: c.tip + 5,
      observer: { notice: (m) => past.push(m) }
    })
    expect(empty.datasets.map((d) => [d.dataset, d.rows, d.files])).toEqual([
      ["blocks", 0, 0],
      ["txs", 0, 0],
      ["token_transfers_cosmos", 0, 0]
    ])
    expect(empty.plans.map((p) => [p.dataset, p.heights, p.todo, p.done, p.shards])).toEqual([
      ["blocks", null, 0, 0, 0],
      ["txs", null, 0, 0, 0],
      ["token_transfers_cosmos", null, 0, 0, 0]
    ])
    // said as what it is: nothing matched (not "exporting to the tip", which exported nothing)
    expect(past).toEqual([
      `blocks: nothing to export: heights ${c.tip + 3}..${c.tip + 5} were asked for, and the source has 1..${c.tip} (height)`,
      `txs, token_transfers_cosmos: nothing to export: heights ${c.tip + 3}..${c.tip + 5} were asked for, and the source has 1..${c.tip} (height)`
    ])
  })
})

describe("the plan's round trips", () => {
  it("the tip block a run anchors is asked beside the lists' probes, not once they have answered (a round trip less before the first page); a run up to a height below the tip asks no tip block", async () => {
    const tipBlock = `/indexer/block/v1/blocks/${devnet.chain.tip}`
    let tipAsked = false
    let wake: () => void = () => undefined
    const asked = new Promise<void>((resolve) => {
      wake = resolve
    })
    let holding = true
    /** for each list probe (one row, no key): whether the tip block had been asked when its answer was let go */
    const probes: Array<boolean> = []
    const proxy = await startProxy(devnet.indexerUrl, async (request, forward) => {
      if (request.url.pathname === tipBlock) {
        tipAsked = true
        wake()
      }
      const isProbe = request.url.searchParams.get("pagination.limit") === "1" && !request.url.searchParams.has("pagination.key")
      // held until the tip block is asked, 1.5 s at most (a run that asks it after the probes' answers waits that long)
      if (isProbe && holding) await Promise.race([asked, new Promise((resolve) => setTimeout(resolve, 1_500))])
      if (isProbe) probes.push(tipAsked)
      return forward()
    })
    try {
      await exportOk(dirs.make(), { datasets: ["blocks", "txs"] }, proxy.url)
      expect(probes.length).toBeGreaterThanOrEqual(2)
      expect(probes.every((b) => b)).toBe(true)
      holding = false
      const before = proxy.requests.length
      await exportOk(dirs.make(), { datasets: ["blocks", "txs"], toHeight: 40 }, proxy.url)
      expect(proxy.requests.slice(before).filter((r) => r.path === tipBlock)).toEqual([])
    } finally {
      await proxy.close()
    }
  })
})

describe("dry run", () => {
  it("plans every dataset the run would export and writes nothing", async () => {
    const out = dirs.make()
    await exportOk(out, { datasets: ["blocks"], toHeight: 30 })
    const before = hashTree(out)
    const plans: Array<DatasetPlan> = []
    const report = await exportOk(out, {
      dryRun: true,
      params: { denoms: [DENOMS[0].denom] },
      observer: { planned: (_, p) => plans.push(p) }
    })
    expect(hashTree(out)).toEqual(before)
    expect(report.dryRun).toBe(true)
    expect(report.plans).toEqual(plans)
    expect(plans.map((p) => p.dataset)).toEqual(EXPORTED_DATASETS.map((d) => d.name))
    expect(plans.find((p) => p.dataset === "blocks")).toMatchObject({ todo: devnet.chain.tip - 30, done: 30 })
    expect(plans.find((p) => p.dataset === "holders")).toMatchObject({
      kind: "snapshot",
      unit: "snapshot",
      heights: [devnet.chain.richListHeight, devnet.chain.richListHeight],
      watermark: devnet.chain.richListHeight
    })
    // datasets that read block times ask about one block-list request per page besides their own; one page per shard here
    const big: Array<DatasetPlan> = []
    await exportOk(dirs.make(), {
      dryRun: true,
      datasets: ["txs", "evm_txs"],
      fromHeight: 5,
      toHeight: 20,
      pageSize: 1_000,
      observer: { planned: (_, p) => big.push(p) }
    })
    expect(big.map((p) => [p.dataset, p.heights, p.estimatedRequests])).toEqual([
      ["txs", [5, 20], big[0].shards],
      ["evm_txs", [5, 20], 2 * big[1].shards]
    ])
    expect(big.every((p) => p.shards >= 1)).toBe(true)
    // a source read by a dataset that needs block times and one that does not: their pages are the same requests, so both plans count the block lists
    const txs = DATASETS.find((d) => d.name === "txs")!
    const mixed = await Effect.runPromise(
      runExport([...DATASETS, { ...txs, name: "txs_timed", blockTime: true } as Dataset], {
        dryRun: true,
        datasets: ["txs", "txs_timed"],
        fromHeight: 5,
        toHeight: 20,
        pageSize: 1_000,
        concurrency: 3
      }).pipe(
        Effect.provide(
          exportLayer({ indexerUrl: devnet.indexerUrl, out: dirs.make(), limits: { concurrency: 3, rps: 0 }, retry: FAST_RETRY })
        )
      )
    )
    expect(mixed.plans.map((p) => [p.dataset, p.estimatedRequests])).toEqual([
      ["txs", 2 * mixed.plans[0].shards],
      ["txs_timed", 2 * mixed.plans[0].shards]
    ])
    // one height is a range too
    const one: Array<DatasetPlan> = []
    await exportOk(dirs.make(), {
      dryRun: true,
      datasets: ["blocks"],
      fromHeight: 7,
      toHeight: 7,
      observer: { planned: (_, p) => one.push(p) }
    })
    expect(one).toMatchObject([{ dataset: "blocks", heights: [7, 7], todo: 1 }])
    expect(report.datasets.every((d) => d.rows === 0 && d.files === 0)).toBe(true)
    // into a folder that holds no lake yet: not even the lake's identity is written
    const fresh = dirs.make()
    await exportOk(fresh, { dryRun: true, datasets: ["blocks", "txs"] })
    expect(hashTree(fresh)).toEqual({})
  })
})

describe("invalid records", () => {
  it("fail the run by default, committing nothing of the shard; with quarantine they are set aside and the rest is exported", async () => {
    const bad = await startDevnet({ seed: 19, blocks: 80, faults: "malformed=0.6" })
    try {
      const out = dirs.make()
      const failed = await exportFrom(bad.indexerUrl, out, { datasets: ["blocks"] })
      expect(Either.isLeft(failed) && failed.left._tag).toBe("IndexerDecodeError")
      expect(manifest(out, "blocks").files).toEqual([])
      const report = await exportOk(out, { datasets: ["blocks"], onInvalid: "quarantine" }, bad.indexerUrl)
      const quarantined = readFileSync(join(out, "_quarantine", "blocks.ndjson"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
      expect(quarantined.length).toBeGreaterThan(0)
      expect(report.datasets[0]).toMatchObject({ quarantined: quarantined.length, rows: devnet.chain.tip - quarantined.length })
      for (const q of quarantined) {
        expect(q).toMatchObject({
          endpoint: "blocks",
          path: expect.stringMatching(/^blocks\[\d+\]\.(height|chain_id)$/),
          message: expect.stringMatching(/^Expected /)
        })
        expect(q.record).toBeTypeOf("object")
        expect(typeof q.key === "string" || q.key === null).toBe(true)
      }
      // the rows kept are the chain's, the quarantined ones absent
      const kept = new Set(quarantined.map((q) => String(q.record.height)))
      await expectDatasetMatches(out, { ...lake.get("blocks")!, rows: lake.get("blocks")!.rows.filter((r) => !kept.has(String(r.height))) })
    } finally {
      await bad.stop()
    }
  })
})

describe("what the chain cannot serve", () => {
  it("on a Move chain the datasets whose endpoints answer 404 are skipped with a reason, the rest exported (holders too, with bech32 accounts); naming one fails the run", async () => {
    const move = await startDevnet({ seed: 19, blocks: 40, vm: "move" })
    const older = await startDevnet({ seed: 19, blocks: 40, vm: "move", richList: "evm-only" })
    const notices: Array<string> = []
    try {
      const out = dirs.make()
      const report = await exportOk(out, { observer: { notice: (m) => notices.push(m) } }, move.indexerUrl)
      const skipped = Object.fromEntries(report.datasets.filter((d) => d.skipped).map((d) => [d.dataset, d.skipped]))
      expect(skipped).toEqual({
        evm_txs: "not served",
        evm_logs: "not served",
        evm_internal_txs: "not served",
        token_transfers_evm: "not served",
        nft_transfers: "not served"
      })
      // the cosmos side of token transfers comes from the txs every VM serves, accounts canonical
      const moves = await queryLake(
        `SELECT count(*) n, count(*) FILTER (WHERE regexp_full_match(from_address, '0x[0-9a-f]{40}') AND from_bech32 LIKE 'init1%') canonical FROM ${scan(out, "token_transfers_cosmos")}`
      )
      expect(Number(moves[0].n)).toBeGreaterThan(0)
      expect(moves[0].canonical).toBe(moves[0].n)
      expect(notices).toContain("evm_txs: skipped, its endpoint evm-txs answered that this indexer does not serve it (404)")
      // the rich list is served on every VM (the real indexer since 2026-02): holders exported, accounts bech32
      const holders = await queryLake(
        `SELECT count(*) n, count(*) FILTER (WHERE account_bech32 LIKE 'init1%' AND regexp_full_match(account_address, '0x[0-9a-f]{40}')) bech32 FROM ${scan(out, "holders")}`
      )
      expect(Number(holders[0].n)).toBeGreaterThan(0)
      expect(holders[0].bech32).toBe(holders[0].n)
      // an indexer from before that answers 404 for the rich list: holders skipped, with the reason
      const olderNotices: Array<string> = []
      const olderReport = await exportOk(dirs.make(), { observer: { notice: (m) => olderNotices.push(m) } }, older.indexerUrl)
      expect(olderReport.datasets.find((d) => d.dataset === "holders")!.skipped).toBe("not served")
      expect(olderNotices).toContain("holders: skipped, its endpoint richlist answered that this indexer does not serve it (404)")
      expect(report.datasets.find((d) => d.dataset === "txs")!.rows).toBe(move.chain.txTotal())
      expect(report.datasets.find((d) => d.dataset === "blocks")!.rows).toBe(40)
      // asked for by name, a dataset the source does not serve is an error, before anything is written
      const named = dirs.make()
      const r = await exportFrom(move.indexerUrl, named, { datasets: ["blocks", "evm_txs"] })
      expect(Either.isLeft(r) && r.left).toMatchObject({
        _tag: "ExportError",
        message: "evm_txs cannot be exported from this source (not served)"
      })
      expect(hashTree(named)).toEqual({})
    } finally {
      await move.stop()
      await older.stop()
    }
  })

  it("a dataset whose watermark the source does not report is skipped with a notice, or fails the run when named", async () => {
    const proxy = await statusVia(({ rich_list_height, internal_tx_height, ...status }) => status)
    try {
      const notices: Array<string> = []
      const report = await exportOk(
        dirs.make(),
        { params: { denoms: [DENOMS[0].denom] }, observer: { notice: (m) => notices.push(m) } },
        proxy.url
      )
      expect(report.datasets.filter((d) => d.skipped).map((d) => [d.dataset, d.skipped])).toEqual([
        ["evm_internal_txs", "no internal_tx_height"],
        ["holders", "no rich_list_height"]
      ])
      expect(notices.filter((n) => n.includes("skipped"))).toEqual([
        "evm_internal_txs: skipped, the source reports no internal_tx_height",
        "holders: skipped, the source reports no rich_list_height"
      ])
      const named = await exportFrom(proxy.url, dirs.make(), {
        datasets: ["evm_internal_txs", "holders"],
        params: { denoms: [DENOMS[0].denom] }
      })
      expect(Either.isLeft(named) && named.left).toMatchObject({
        _tag: "ExportError",
        message:
          "evm_internal_txs cannot be exported from this source (no internal_tx_height); holders cannot be exported from this source (no rich_list_height)"
      })
    } finally {
      await proxy.close()
    }
  })

  it("a lake whose files predate a column says so when an export adds to it (append and snapshot datasets)", async () => {
    const out = dirs.make()
    await exportOk(out, { datasets: ["blocks", "holders"], toHeight: 20, params: { denoms: [DENOMS[0].denom] } })
    // as a chain-lake before these columns would have written the manifests
    for (const [name, column] of [
      ["blocks", "proposer_address"],
      ["holders", "account_bech32"]
    ]) {
      const path = join(out, name, "_manifest.json")
      const m = JSON.parse(readFileSync(path, "utf8"))
      m.columns = m.columns.filter((c: { name: string }) => c.name !== column)
      writeFileSync(path, JSON.stringify(m))
    }
    const notices: Array<string> = []
    await exportOk(out, {
      datasets: ["blocks", "holders"],
      params: { denoms: [DENOMS[1].denom] },
      observer: { notice: (m) => notices.push(m) }
    })
    expect(notices.filter((n) => n.includes("lack"))).toEqual([
      "blocks: files committed earlier lack proposer_address (added by a newer chain-lake); those rows read NULL there: export into a new folder to have it everywhere",
      "holders: files committed earlier lack account_bech32 (added by a newer chain-lake); those rows read NULL there: export into a new folder to have it everywhere"
    ])
    // a column the files have that this version renamed or dropped: refused, nothing written
    const path = join(out, "blocks", "_manifest.json")
    const m = JSON.parse(readFileSync(path, "utf8"))
    writeFileSync(path, JSON.stringify({ ...m, columns: [...m.columns, { name: "total_fee_denom", type: "VARCHAR" }] }))
    const before = hashTree(out)
    const retired = await exportFrom(devnet.indexerUrl, out, { datasets: ["blocks"] })
    expect(Either.isLeft(retired) && retired.left.message).toBe(
      "blocks was written by an older chain-lake, with columns since renamed or dropped (total_fee_denom; see docs/schema.md): export it again into a new folder (the old one stays readable by the chain-lake that wrote it)"
    )
    expect(hashTree(out)).toEqual(before)
  })

  it("a watermark of 0 is none (nothing indexed yet); a watermark of 1 is a height", async () => {
    const at = (richListHeight: number) => statusVia((status) => ({ ...status, rich_list_height: richListHeight }))
    const zero = await at(0)
    const one = await at(1)
    try {
      const none = await exportFrom(zero.url, dirs.make(), { datasets: ["holders"], params: { denoms: [DENOMS[0].denom] } })
      expect(Either.isLeft(none) && none.left).toMatchObject({
        _tag: "ExportError",
        message: "holders cannot be exported from this source (no rich_list_height)"
      })
      const first = await exportOk(dirs.make(), { datasets: ["holders"], params: { denoms: [DENOMS[0].denom] } }, one.url)
      expect(first.datasets[0]).toMatchObject({ dataset: "holders", snapshotHeight: 1 })
    } finally {
      await zero.close()
      await one.close()
    }
  })
})

describe("snapshots", () => {
  it("explicit denoms; a snapshot already committed is not read again; a later denom joins the same snapshot", async () => {
    const out = dirs.make()
    const c = devnet.chain
    const notices: Array<string> = []
    // no denoms and no blocks to take them from: named, that fails the run, saying what to do
    const none = await exportFrom(devnet.indexerUrl, out, { datasets: ["holders"], observer: { notice: (m) => notices.push(m) } })
    expect(Either.isLeft(none) && none.left).toMatchObject({ _tag: "ExportError", message: "holders cannot be exported: no denoms" })
    expect(notices[0]).toBe("holders: skipped, no denoms: pass --denoms, or export blocks first (their total_fee denoms are the default)")
    const first = await exportOk(out, { datasets: ["holders", "nft_collections"], params: { denoms: [DENOMS[1].denom] } })
    const holdersOf = (i: number) => c.holders(i).length
    expect(first.datasets.find((d) => d.dataset === "holders")).toMatchObject({
      rows: holdersOf(1),
      files: 1,
      snapshotHeight: c.richListHeight,
      consistency: "exact"
    })
    expect(first.datasets.find((d) => d.dataset === "nft_collections")).toMatchObject({ snapshotHeight: c.tip, consistency: "exact" })
    expectReportMatchesManifests(first, out)
    const againNotices: Array<string> = []
    const againRows: Array<[string, number]> = []
    const again = await exportOk(out, {
      datasets: ["holders", "nft_collections"],
      params: { denoms: [DENOMS[1].denom] },
      observer: { notice: (m) => againNotices.push(m), rows: (d, n) => againRows.push([d, n]) }
    })
    // nothing read, nothing to hear, all counts zero
    expect(againRows).toEqual([])
    expect(again.datasets.map((d) => [d.rows, d.files, d.bytes])).toEqual([
      [0, 0, 0],
      [0, 0, 0]
    ])
    expect(againNotices.sort()).toEqual([
      `holders: snapshot at height ${c.richListHeight} is already committed`,
      `nft_collections: snapshot at height ${c.tip} is already committed`
    ])
    // reported in the catalog's order, whatever the order asked in
    expect(again.datasets.map((d) => [d.dataset, d.skipped])).toEqual([
      ["nft_collections", `snapshot ${c.tip} already committed`],
      ["holders", `snapshot ${c.richListHeight} already committed`]
    ])
    const more = await exportOk(out, { datasets: ["holders"], params: { denoms: [DENOMS[1].denom, DENOMS[0].denom] } })
    expect(more.datasets[0]).toMatchObject({ rows: holdersOf(0), files: 1 })
    const m = manifest(out, "holders")
    expect(m.snapshots).toHaveLength(1)
    expect(m.snapshots[0]).toMatchObject({
      snapshot_height: c.richListHeight,
      rows: holdersOf(0) + holdersOf(1),
      lists: [`holders of ${DENOMS[1].denom}`, `holders of ${DENOMS[0].denom}`],
      reads: 1
    })
    expect(m.files.map((f) => f.path)).toEqual([
      `snapshot_height=${c.richListHeight}/part-0.parquet`,
      `snapshot_height=${c.richListHeight}/part-1.parquet`
    ])
    expect(m.files.every((f) => f.min_height === c.richListHeight && f.max_height === c.richListHeight)).toBe(true)
    await expectDatasetMatches(out, lake.get("holders")!)
  })
})

describe("denoms from the lake", () => {
  it("holders takes its denoms from the blocks committed; blocks files it cannot read fail the run naming the error", async () => {
    const out = dirs.make()
    await exportOk(out, { datasets: ["blocks"], toHeight: 20 })
    const fromBlocks = await exportOk(dirs.make(), { datasets: ["blocks", "holders"], toHeight: 20 })
    expect(fromBlocks.datasets.find((d) => d.dataset === "holders")).toMatchObject({ consistency: "exact" })
    const file = join(out, "blocks", manifest(out, "blocks").files[0].path)
    writeFileSync(file, "not parquet")
    const broken = await exportFrom(devnet.indexerUrl, out, { datasets: ["holders"] })
    expect(Either.isLeft(broken) && broken.left).toMatchObject({
      _tag: "SinkError",
      message: expect.stringContaining(`File '${file}' too small to be a Parquet file`)
    })
  })
})

describe("snapshots at a later height", () => {
  it("a rich list at a new height is a new snapshot, read in full beside the earlier one", async () => {
    const c = devnet.chain
    const earlier = await statusVia((status) => ({ ...status, rich_list_height: c.richListHeight - 1 }))
    try {
      const out = dirs.make()
      const params = { denoms: [DENOMS[0].denom] }
      await exportOk(out, { datasets: ["holders"], params }, earlier.url)
      const later = await exportOk(out, { datasets: ["holders"], params })
      expect(later.datasets[0]).toMatchObject({ rows: c.holders(0).length, snapshotHeight: c.richListHeight, consistency: "exact" })
      expect(manifest(out, "holders").snapshots.map((s) => [s.snapshot_height, s.rows])).toEqual([
        [c.richListHeight - 1, c.holders(0).length],
        [c.richListHeight, c.holders(0).length]
      ])
    } finally {
      await earlier.close()
    }
  })
})

describe("two writers of one snapshot", () => {
  it("the one that commits second keeps the other's rows and reads what is left: here nothing", async () => {
    const c = devnet.chain
    let arrived!: () => void
    let release!: () => void
    const reading = new Promise<void>((r) => (arrived = r))
    const released = new Promise<void>((r) => (release = r))
    const held = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (req.url.pathname.startsWith("/indexer/richlist/v1/") && req.url.searchParams.get("pagination.limit") !== "1") {
        arrived()
        await released
      }
      return forward()
    })
    let second: Promise<ExportReport> | undefined
    try {
      const out = dirs.make()
      const params = { denoms: [DENOMS[0].denom] }
      const notices: Array<string> = []
      // its held request waits for the first writer, however slow the machine: no request timeout
      second = exportOk(out, { datasets: ["holders"], params, observer: { notice: (m) => notices.push(m) } }, held.url, {
        ...FAST_RETRY,
        timeoutMs: 120_000
      })
      // (a second writer that fails before its read ends the wait too)
      await Promise.race([reading, second])
      const first = await exportOk(out, { datasets: ["holders"], params })
      release()
      const late = await second
      expect(first.datasets[0]).toMatchObject({ rows: c.holders(0).length, files: 1, consistency: "exact" })
      expect(late.datasets[0]).toMatchObject({ rows: 0, files: 0, skipped: `snapshot ${c.richListHeight} already committed` })
      expect(notices.filter((n) => n.includes("reading what is left"))).toHaveLength(1)
      expect(manifest(out, "holders").snapshots).toHaveLength(1)
      expect(manifest(out, "holders").files).toHaveLength(1)
      await expectDatasetMatches(out, {
        ...lake.get("holders")!,
        rows: lake.get("holders")!.rows.filter((r) => r.denom === DENOMS[0].denom)
      })
    } finally {
      release()
      await second?.catch(() => undefined)
      await held.close()
    }
  })
})

describe("scheduling", () => {
  it("a snapshot that reads nothing the run commits starts among the first tasks; one declared after blocks waits for them", async () => {
    const order: Array<string> = []
    const reversed = new Map<string, Set<string | null>>()
    const proxy = await startProxy(devnet.indexerUrl, (req, forward) => {
      // the probes (one record each) come before any work: only the reads are recorded
      if (req.url.searchParams.get("pagination.limit") !== "1") {
        order.push(req.url.pathname)
        reversed.set(req.url.pathname, (reversed.get(req.url.pathname) ?? new Set()).add(req.url.searchParams.get("pagination.reverse")))
      }
      return forward()
    })
    try {
      await exportOk(
        dirs.make(),
        { datasets: ["blocks", "nft_collections", "nft_tokens", "holders"], pageSize: 5, params: { denoms: [DENOMS[0].denom] } },
        proxy.url
      )
      // each list read in the order its dataset declares: the rich list largest first, the rest oldest first (the collections twice: their snapshot, and nft_tokens' list of them)
      expect(
        Object.fromEntries(
          [...reversed]
            .filter(([p]) => !p.startsWith("/indexer/nft/v1/tokens") && !p.startsWith("/indexer/block/v1/blocks/") && p !== "/status")
            .map(([p, r]) => [p, [...r]])
        )
      ).toEqual({
        "/indexer/block/v1/blocks": ["false"],
        "/indexer/nft/v1/collections": ["false"],
        [`/indexer/richlist/v1/${encodeURIComponent(DENOMS[0].denom)}`]: ["true"]
      })
      const blockReads = order.flatMap((p, i) => (p === "/indexer/block/v1/blocks" ? [i] : []))
      const collectionReads = order.flatMap((p, i) => (p === "/indexer/nft/v1/collections" ? [i] : []))
      const holderReads = order.flatMap((p, i) => (p.startsWith("/indexer/richlist/v1/") ? [i] : []))
      expect(blockReads.length).toBeGreaterThan(3 * 3)
      expect(collectionReads.length).toBeGreaterThan(0)
      expect(holderReads.length).toBeGreaterThan(0)
      expect(collectionReads[0]).toBeLessThan(blockReads[blockReads.length - 1])
      expect(holderReads[0]).toBeGreaterThan(blockReads[blockReads.length - 1])
      // without blocks in the run, holders has nothing to wait for
      order.length = 0
      await exportOk(dirs.make(), { datasets: ["txs", "holders"], pageSize: 5, params: { denoms: [DENOMS[0].denom] } }, proxy.url)
      const txReads = order.flatMap((p, i) => (p === "/indexer/tx/v1/txs" ? [i] : []))
      const holderFirst = order.findIndex((p) => p.startsWith("/indexer/richlist/v1/"))
      expect(txReads.length).toBeGreaterThan(3 * 3)
      expect(holderFirst).toBeGreaterThanOrEqual(0)
      expect(holderFirst).toBeLessThan(txReads[txReads.length - 1])
    } finally {
      await proxy.close()
    }
  })
})

describe("shards that are writing", () => {
  it("hold no paging slot: at concurrency 1 the next shard pages while the one before writes and commits its file", async () => {
    // one paging slot, and four shards of one page and one file each
    let pages = 0
    const proxy = await startProxy(devnet.indexerUrl, (req, forward) => {
      if (req.url.pathname === "/indexer/block/v1/blocks" && req.url.searchParams.get("pagination.limit") !== "1") pages++
      return forward()
    })
    // the sink as the CLI builds it, but each file's write first waits (up to 2 s: room for a
    // loaded CI machine) for another page to be asked for: a shard that held its slot while
    // writing would see none come
    const sawAPage: Array<boolean> = []
    const gated = Layer.effect(
      ParquetSink,
      Effect.map(ParquetSink, (sink) => ({
        ...sink,
        openFile: (columns, sortKey) =>
          Effect.map(sink.openFile(columns, sortKey), (writer) => ({
            ...writer,
            finish: (path, options) =>
              Effect.gen(function* () {
                const before = pages
                for (let waited = 0; waited < 2_000 && pages === before; waited += 10) yield* Effect.sleep(10)
                sawAPage.push(pages > before)
                return yield* writer.finish(path, options)
              })
          }))
      }))
    )
    try {
      const out = dirs.make()
      const base = exportLayer({ indexerUrl: proxy.url, out, limits: { concurrency: 1, rps: 0 }, retry: FAST_RETRY })
      // (of two layers merged, the later one's ParquetSink is the one provided; `base` is built once)
      const layer = Layer.merge(base, gated.pipe(Layer.provide(base)))
      const report = await Effect.runPromise(
        runExport(DATASETS, { datasets: ["blocks"], pageSize: 20, concurrency: 1, maxShardUnits: 20, bucketWidth: 100 }).pipe(
          Effect.provide(layer)
        )
      )
      expect(report.datasets[0]).toMatchObject({ rows: 80, files: 4 })
      expect(pages).toBe(4)
      // the first three shards' writes each saw the next shard's page come; the last had none to see
      expect(sawAPage).toEqual([true, true, true, false])
      await expectDatasetMatches(out, expectedLake(devnet.chain, 100).find((d) => d.name === "blocks")!)
    } finally {
      await proxy.close()
    }
  })
})

describe("option errors", () => {
  it.each([
    [
      { datasets: ["blocks", "nope", "txz"] },
      "unknown dataset nope, txz; known: blocks, txs, evm_txs, evm_logs, evm_internal_txs, token_transfers_evm, token_transfers_cosmos, nft_transfers, nft_collections, nft_tokens, holders"
    ],
    [{ pageSize: 0 }, "pageSize must be 1..1000 (the source's largest page), got 0"],
    [{ pageSize: 1001 }, "pageSize must be 1..1000 (the source's largest page), got 1001"],
    [{ pageSize: 2.5 }, "pageSize must be 1..1000 (the source's largest page), got 2.5"],
    [{ datasets: ["blocks"], fromHeight: 50, toHeight: 10 }, "fromHeight 50 is above toHeight 10"]
  ] as Array<[ExportOptions, string]>)("%j fails before writing anything", async (options, message) => {
    const out = dirs.make()
    const r = await exportFrom(devnet.indexerUrl, out, options)
    expect(Either.isLeft(r) && r.left).toMatchObject({ _tag: "ExportError", message })
    expect(hashTree(out)).toEqual({})
  })
})

describe("what each source serves", () => {
  it("an indexer pruned below height 11 is exported from its first block; an EVM route that fails (not 404) fails the run", async () => {
    const pruned = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (req.url.pathname !== "/indexer/block/v1/blocks" || req.url.searchParams.get("pagination.key")) return forward()
      // the first page of an ascending walk starts at the lowest block this indexer keeps
      return forward(`${req.path}&pagination.key=${encodeURIComponent(Buffer.from('{"height":10}').toString("base64"))}`)
    })
    const failing = await startProxy(devnet.indexerUrl, (req, forward) =>
      req.url.pathname === "/indexer/tx/v1/evm-txs" ? { status: 403, body: "forbidden" } : forward()
    )
    try {
      const out = dirs.make()
      const plans: Array<DatasetPlan> = []
      await exportOk(out, { datasets: ["blocks"], observer: { planned: (_, p) => plans.push(p) } }, pruned.url)
      expect(plans[0]).toMatchObject({ heights: [11, devnet.chain.tip], todo: devnet.chain.tip - 10 })
      await expectDatasetMatches(out, between("blocks", 11, devnet.chain.tip))
      // a 403 is not "this chain has no EVM routes": the run fails, it does not skip
      const r = await exportFrom(failing.url, dirs.make(), { datasets: ["txs", "evm_txs"] })
      expect(Either.isLeft(r) && r.left).toMatchObject({ _tag: "IndexerHttpError", status: 403 })
    } finally {
      await Promise.all([pruned.close(), failing.close()])
    }
  })

  it("a position source whose total cannot be trusted stops the run before anything is written", async () => {
    const lying = (total: string) =>
      startProxy(devnet.indexerUrl, async (req, forward) => {
        if (req.url.pathname !== "/indexer/tx/v1/txs") return forward()
        const page = JSON.parse((await forward()).body)
        page.pagination.total = total
        return json(page)
      })
    const unknown = await lying("-1")
    const tooHigh = await lying(String(devnet.chain.txTotal() + 50))
    const empty = await lying("0")
    try {
      const a = await exportFrom(unknown.url, dirs.make(), { datasets: ["txs"] })
      expect(Either.isLeft(a) && a.left).toMatchObject({
        _tag: "ExportError",
        message: "txs reports total -1; cannot plan position shards"
      })
      const b = await exportFrom(tooHigh.url, dirs.make(), { datasets: ["txs"] })
      const last = devnet.chain.txTotal() + 49
      expect(Either.isLeft(b) && b.left).toMatchObject({
        _tag: "ExportError",
        message: `txs: total ${last + 1} but no row at position ${last}: sequences are not contiguous`
      })
      // no rows at all: nothing to do, and that is not an error
      const c = await exportOk(dirs.make(), { datasets: ["txs"] }, empty.url)
      expect(c.datasets[0]).toMatchObject({ rows: 0, files: 0 })
    } finally {
      await Promise.all([unknown.close(), tooHigh.close(), empty.close()])
    }
  })

  it("datasets of one source committed to different heights are each completed, none duplicated", async () => {
    const out = dirs.make()
    await exportOk(out, { datasets: ["evm_txs"], fromHeight: 21, toHeight: 50 })
    await exportOk(out, { datasets: ["evm_logs"], fromHeight: 41, toHeight: 70 })
    const report = await exportOk(out, { datasets: ["evm_txs", "evm_logs"] })
    await expectDatasetMatches(out, lake.get("evm_txs")!)
    await expectDatasetMatches(out, lake.get("evm_logs")!)
    expect(report.datasets.find((d) => d.dataset === "evm_txs")!.rows).toBe(
      lake.get("evm_txs")!.rows.length - between("evm_txs", 21, 50).rows.length
    )
    await expectManifestsTrue(out, ["evm_txs", "evm_logs"])
  })
})

describe("snapshot reads that cannot be trusted", () => {
  const collections = "/indexer/nft/v1/collections"

  it("a snapshot list's record that breaks its schema fails the read, naming the list, the page and the field", async () => {
    const broken = await startProxy(devnet.indexerUrl, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== collections || req.url.searchParams.get("pagination.limit") === "1") return res
      const page = JSON.parse(res.body)
      page.collections[1] = { ...page.collections[1], object_addr: 7 }
      return json(page)
    })
    try {
      const r = await exportFrom(broken.url, dirs.make(), { datasets: ["nft_collections"] })
      expect(Either.isLeft(r) && r.left).toMatchObject({
        _tag: "IndexerDecodeError",
        endpoint: "collections",
        path: "collections[1].object_addr"
      })
    } finally {
      await broken.close()
    }
  })

  it("a counted list read to its end may pass its total by two pages at most: one row more fails, exactly two pages is read (best-effort, short of nothing)", async () => {
    const denom = DENOMS[0].denom
    const path = `/indexer/richlist/v1/${encodeURIComponent(denom)}`
    const all = (await (await fetch(`${devnet.indexerUrl}${path}?pagination.limit=1000`)).json()) as { holders: Array<unknown> }
    const rows = all.holders.length
    const pageSize = 3
    expect(rows, "the rich list is longer than three pages").toBeGreaterThan(3 * pageSize)
    const withTotal = (total: number) =>
      startProxy(devnet.indexerUrl, async (req, forward) => {
        const res = await forward()
        if (req.url.pathname !== path) return res
        const page = JSON.parse(res.body)
        page.pagination.total = String(total)
        return json(page)
      })
    const holdersWith = async (total: number, size = pageSize) => {
      const server = await withTotal(total)
      try {
        return await exportFrom(server.url, dirs.make(), { datasets: ["holders"], params: { denoms: [denom] }, pageSize: size })
      } finally {
        await server.close()
      }
    }
    const atTheBound = await holdersWith(rows - 2 * pageSize)
    expect(Either.isRight(atTheBound) && atTheBound.right.datasets[0], String(Either.isLeft(atTheBound) && atTheBound.left)).toMatchObject({
      dataset: "holders",
      rows,
      consistency: "best-effort"
    })
    const pastIt = await holdersWith(rows - 2 * pageSize - 1)
    expect(Either.isLeft(pastIt) && pastIt.left).toMatchObject({
      _tag: "IndexerPagingError",
      message: `${rows} records read, but pagination.total says ${rows - 2 * pageSize - 1}: the listing does not end`
    })
    // a total of 0 bounds the read too: it stops at the first page past two
    const zero = await holdersWith(0)
    expect(Either.isLeft(zero) && zero.left).toMatchObject({
      _tag: "IndexerPagingError",
      message: `${3 * pageSize} records read, but pagination.total says 0: the listing does not end`
    })
    // within two pages of it, a total of 0 is a count the rows contradict: best-effort, read three times
    const zeroInOnePage = await holdersWith(0, 1_000)
    expect(Either.isRight(zeroInOnePage) && zeroInOnePage.right.datasets[0]).toMatchObject({ rows, consistency: "best-effort" })
    // no count at all (-1) promises nothing and bounds nothing: the read of many pages is exact
    const uncounted = await holdersWith(-1)
    expect(Either.isRight(uncounted) && uncounted.right.datasets[0], String(Either.isLeft(uncounted) && uncounted.left)).toMatchObject({
      rows,
      consistency: "exact"
    })
  })
  it("a row repeated across pages is kept once and read again at the largest page, exact; an exact total the rows never reach is best-effort, saying so", async () => {
    const repeating = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (req.url.pathname !== collections) return forward()
      const page = JSON.parse((await forward()).body)
      // every later page starts with the previous page's last row again (offset paging under inserts)
      if (req.url.searchParams.get("pagination.key")) {
        const prev = JSON.parse(
          (
            await forward(
              req.path.replace(
                /pagination\.key=[^&]*/,
                `pagination.key=${Buffer.from(String(Number(Buffer.from(req.url.searchParams.get("pagination.key")!, "base64").toString()) - 1)).toString("base64")}`
              )
            )
          ).body
        )
        page.collections = [prev.collections[0], ...page.collections]
      }
      return json(page)
    })
    // tokens of a collection are counted exactly (COUNT, or -1 past 5 s): a total above the rows read is believed
    const short = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (!req.url.pathname.startsWith("/indexer/nft/v1/tokens/by_collection/")) return forward()
      const page = JSON.parse((await forward()).body)
      page.pagination.total = String(Number(page.pagination.total) + 3)
      return json(page)
    })
    try {
      for (const [server, dataset, consistency, reads, why] of [
        [repeating, "nft_collections", "exact", 2, /^pages overlapped \(\d+ duplicates\)$/],
        [short, "nft_tokens", "best-effort", 3, /^\d+ of the \d+ rows its pagination\.total counts not served yet$/]
      ] as const) {
        const out = dirs.make()
        const notices: Array<string> = []
        const report = await exportOk(out, { datasets: [dataset], pageSize: 3, observer: { notice: (m) => notices.push(m) } }, server.url)
        expect(report.datasets[0]).toMatchObject({ consistency, rows: lake.get(dataset)!.rows.length })
        const snap = manifest(out, dataset).snapshots[0]
        expect(snap).toMatchObject({ consistency, reads })
        if (consistency === "best-effort")
          expect(snap.note).toMatch(
            /^\d+ of the rows the source counts were not served at height \d+ \(3 reads in all; offset pages over equal sort values/
          )
        // the notice says what happened (not that the height moved: it did not)
        const again = notices.filter((n) => n.endsWith(" during the read; reading again"))
        expect(again.length).toBe(reads - 1)
        for (const n of again) expect(n.slice(`${dataset}: `.length, -" during the read; reading again".length), n).toMatch(why)
        await expectDatasetMatches(out, lake.get(dataset)!)
      }
    } finally {
      await Promise.all([repeating.close(), short.close()])
    }
  })

  it("a snapshot completed at a watermark that moved during its read is planned anew there: every list named read at the new height, none split across two (a denom committed at the old one)", async () => {
    const denoms = [DENOMS[0].denom, DENOMS[1].denom]
    const out = dirs.make()
    await exportOk(out, { datasets: ["holders"], params: { denoms: [denoms[0]] } })
    const first = manifest(out, "holders").snapshots[0].snapshot_height
    // the rich list's height one higher from the second /status on (it moved during the first read)
    let calls = 0
    const moving = await startProxy(devnet.indexerUrl, async (req, forward) => {
      const reply = await forward()
      if (req.url.pathname !== "/status") return reply
      const status = JSON.parse(reply.body)
      return json({ ...status, rich_list_height: status.rich_list_height + (++calls > 1 ? 1 : 0) })
    })
    try {
      const report = await exportOk(out, { datasets: ["holders"], params: { denoms } }, moving.url)
      expect(report.datasets[0]).toMatchObject({ consistency: "exact", snapshotHeight: first + 1 })
      const snapshots = manifest(out, "holders").snapshots
      expect(snapshots.map((x) => [x.snapshot_height, [...x.lists].sort(), x.consistency])).toEqual([
        [first, [`holders of ${denoms[0]}`], "exact"],
        [first + 1, denoms.map((d) => `holders of ${d}`).sort(), "exact"]
      ])
    } finally {
      await moving.close()
    }
  })

  it("holders of equal amounts whose order the rich list does not keep from one page to the next (a row skipped, another served twice): the reads at an unmoved height add up to every holder, exact", async () => {
    const richList = "/indexer/richlist/v1/"
    // a page past the first serves the row before it in place of its own first (the two swapped
    // places between the queries); a first page of 1000 rows, its second row in place of its third:
    // no read serves every holder, two read together do
    const shuffling = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (!req.url.pathname.startsWith(richList)) return forward()
      const page = JSON.parse((await forward()).body)
      // (the next page's key is its offset, as the real indexer names it)
      const key = req.url.searchParams.get("pagination.key")
      if (!key) {
        if (req.url.searchParams.get("pagination.limit") === "1000")
          page.holders = [page.holders[0], page.holders[1], page.holders[1], ...page.holders.slice(3)]
        return json(page)
      }
      const offset = Number(Buffer.from(key, "base64").toString())
      const previous = Buffer.from(String(offset - 1)).toString("base64")
      const before = JSON.parse(
        (await forward(req.path.replace(/pagination\.key=[^&]*/, `pagination.key=${encodeURIComponent(previous)}`))).body
      )
      page.holders = [before.holders[0], ...page.holders.slice(1)]
      return json(page)
    })
    try {
      const out = dirs.make()
      const notices: Array<string> = []
      const params = { denoms: [DENOMS[0].denom] }
      const report = await exportOk(
        out,
        { datasets: ["holders"], pageSize: 3, params, observer: { notice: (m) => notices.push(m) } },
        shuffling.url
      )
      const expected = { ...lake.get("holders")!, rows: lake.get("holders")!.rows.filter((r) => r.denom === DENOMS[0].denom) }
      expect(expected.rows.length).toBeGreaterThan(6)
      expect(report.datasets[0]).toMatchObject({ consistency: "exact", rows: expected.rows.length })
      expect(manifest(out, "holders").snapshots[0]).toMatchObject({ consistency: "exact", reads: 2 })
      expect(
        notices.filter((n) => / of the \d+ rows its pagination\.total counts not served yet during the read; reading again$/.test(n))
      ).toHaveLength(1)
      await expectDatasetMatches(out, expected)
    } finally {
      await shuffling.close()
    }
  })

  it("the collections total is an estimate on the real indexer (reltuples: stale, or -1): a complete cursor walk is exact, read once", async () => {
    // at page size 1 a stale "2" is passed by more than two pages, which would end a counted list (nft_tokens reads the collections too)
    for (const [estimate, pageSize] of [
      ["-1", 3],
      ["2", 1],
      [String(lake.get("nft_collections")!.rows.length + 7), 3]
    ] as const) {
      const estimating = await startProxy(devnet.indexerUrl, async (req, forward) => {
        if (req.url.pathname !== collections) return forward()
        const page = JSON.parse((await forward()).body)
        page.pagination.total = estimate
        return json(page)
      })
      try {
        const out = dirs.make()
        const report = await exportOk(out, { datasets: ["nft_collections", "nft_tokens"], pageSize }, estimating.url)
        for (const d of ["nft_collections", "nft_tokens"]) {
          expect(
            report.datasets.find((r) => r.dataset === d),
            `${d} with total ${estimate}`
          ).toMatchObject({ consistency: "exact" })
          expect(manifest(out, d).snapshots[0]).toMatchObject({ consistency: "exact", reads: 1 })
          await expectDatasetMatches(out, lake.get(d)!)
        }
      } finally {
        await estimating.close()
      }
    }
  })

  it("a snapshot list whose next_key repeats fails with IndexerPagingError", async () => {
    const cycling = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (req.url.pathname !== collections) return forward()
      const page = JSON.parse((await forward()).body)
      // always point back at the second page
      page.pagination.next_key = Buffer.from("1").toString("base64")
      return json(page)
    })
    try {
      expect(lake.get("nft_collections")!.rows.length).toBeGreaterThan(2)
      const r = await exportFrom(cycling.url, dirs.make(), { datasets: ["nft_collections"], pageSize: 1 })
      expect(Either.isLeft(r) && r.left).toMatchObject({
        _tag: "IndexerPagingError",
        endpoint: "collections",
        message: "next_key MQ== was already followed: the server restarted the listing"
      })
    } finally {
      await cycling.close()
    }
  })

  it.each([
    // ten times the estimate is below 200 pages: the pages decide
    { estimate: 3, pageSize: 2, failsAt: 402 },
    // ten times the estimate is past 200 pages: the estimate decides
    { estimate: 30, pageSize: 1, failsAt: 301 }
  ])(
    "a list with an estimated total that never ends (the collections list inventing collections) fails too, far past the estimate: $estimate, $pageSize a page",
    async ({ estimate, pageSize, failsAt }) => {
      let served = 0
      const endless = await startProxy(devnet.indexerUrl, async (req, forward) => {
        if (req.url.pathname !== collections) return forward()
        const first = new URL(req.url)
        first.searchParams.delete("pagination.key")
        first.searchParams.delete("pagination.offset")
        const page = JSON.parse((await forward(first.pathname + first.search)).body)
        served++
        page.collections = page.collections.map((c: Record<string, unknown>, i: number) => ({
          ...c,
          object_addr: `0x${served.toString(16).padStart(8, "0")}${i.toString(16).padStart(32, "0")}`
        }))
        page.pagination.next_key = Buffer.from(String(served * page.collections.length)).toString("base64")
        // reltuples: an estimate, never the count
        page.pagination.total = String(estimate)
        return json(page)
      })
      try {
        const r = await exportFrom(endless.url, dirs.make(), { datasets: ["nft_collections"], pageSize })
        expect(Either.isLeft(r) && r.left).toMatchObject({
          _tag: "IndexerPagingError",
          endpoint: "collections",
          message: `${failsAt} records read, ten times what pagination.total estimates (${estimate}) and past 200 pages: the listing does not end`
        })
        // its pages, and the probe that asked whether the list is served
        expect(served).toBe(failsAt / pageSize + 1)
      } finally {
        await endless.close()
      }
    }
  )

  it("a snapshot list that never ends (fresh records and keys, past its counted total) fails with IndexerPagingError instead of reading on", async () => {
    let served = 0
    const endless = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (!req.url.pathname.startsWith("/indexer/nft/v1/tokens/by_collection/")) return forward()
      const first = new URL(req.url)
      first.searchParams.delete("pagination.key")
      const page = JSON.parse((await forward(first.pathname + first.search)).body)
      if (page.tokens.length === 0) return json(page)
      // the same tokens under new ids, a new key every time: nothing ever repeats
      served++
      page.tokens = page.tokens.map((t: Record<string, unknown>, i: number) => ({ ...t, token_id: `${t.token_id}-${served}-${i}` }))
      page.pagination.next_key = Buffer.from(`page-${served}`).toString("base64")
      return json(page)
    })
    try {
      const r = await exportFrom(endless.url, dirs.make(), { datasets: ["nft_tokens"], pageSize: 2 })
      expect(Either.isLeft(r) && r.left).toMatchObject({
        _tag: "IndexerPagingError",
        endpoint: "tokens/by_collection",
        message: expect.stringMatching(/^\d+ records read, but pagination\.total says \d+: the listing does not end$/)
      })
      // it stops at the first page past total + 2 pages (2 rows a page), not before
      const [read, total] = (
        /^(\d+) records read, but pagination\.total says (\d+)/.exec((r as Either.Left<{ message: string }, unknown>).left.message) ?? []
      )
        .slice(1)
        .map(Number)
      expect(read, `${read} read, total ${total}`).toBeGreaterThan(total + 2 * 2)
      expect(read).toBeLessThanOrEqual(total + 2 * 2 + 2)
      // stopped a few pages past the total, not after reading on and on
      expect(served).toBeLessThan(200)
    } finally {
      await endless.close()
    }
  })

  it("a snapshot list that cycles under fresh keys (the same page again and again, a new next_key each time) fails with IndexerPagingError", async () => {
    let secondPage: string | undefined
    let fresh = 0
    const cycling = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (req.url.pathname !== collections) return forward()
      const key = req.url.searchParams.get("pagination.key")
      const asked = new URL(req.url)
      if (key !== null && secondPage !== undefined) asked.searchParams.set("pagination.key", secondPage)
      const page = JSON.parse((await forward(asked.pathname + asked.search)).body)
      if (key === null) secondPage = page.pagination.next_key
      else page.pagination.next_key = Buffer.from(`fresh-${++fresh}`).toString("base64")
      return json(page)
    })
    try {
      const r = await exportFrom(cycling.url, dirs.make(), { datasets: ["nft_collections"], pageSize: 1 })
      expect(Either.isLeft(r) && r.left).toMatchObject({
        _tag: "IndexerPagingError",
        endpoint: "collections",
        message: "a page starts with a record an earlier page started with: the listing cycles"
      })
      // found on the first repeat, not after reading on and on
      expect(fresh).toBeLessThanOrEqual(2)
    } finally {
      await cycling.close()
    }
  })

  it("a snapshot page holding an escaped \\u00e9 beside raw UTF-8 (decoded as UTF-8 up front) keeps both as sent", async () => {
    const proxy = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (req.url.pathname !== "/indexer/nft/v1/collections") return forward()
      const page = JSON.parse((await forward()).body)
      page.collections = page.collections.map((c: { collection: { name: string } }) => ({
        ...c,
        collection: { ...c.collection, name: `${c.collection.name} caf\u00e9 ü` }
      }))
      // the escape as the indexer may write it: \u00e9 in the JSON text, ü as its UTF-8 bytes
      return { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(page).replaceAll("\u00e9", "\\u00e9") }
    })
    try {
      const out = dirs.make()
      await exportOk(out, { datasets: ["nft_collections"] }, proxy.url)
      const names = (await queryLake(`SELECT name FROM ${scan(out, "nft_collections")}`)).map((r) => String(r.name))
      expect(names.length).toBeGreaterThan(0)
      expect(names.every((n) => n.endsWith(" caf\u00e9 ü"))).toBe(true)
    } finally {
      await proxy.close()
    }
  })

  it("a snapshot of several pages per list reads them all, at every page size", async () => {
    for (const pageSize of [2, 7]) {
      const out = dirs.make()
      await exportOk(out, { datasets: ["nft_collections", "nft_tokens"], pageSize })
      await expectDatasetMatches(out, lake.get("nft_collections")!)
      await expectDatasetMatches(out, lake.get("nft_tokens")!)
      expect(manifest(out, "nft_tokens").snapshots[0]).toMatchObject({ consistency: "exact", reads: 1, duplicates_dropped: 0 })
    }
  })
})

describe("the chain a lake holds", () => {
  it("is recorded at the tip; another history or another chain id is refused before anything is written; the newest anchor still served decides", async () => {
    const out = dirs.make()
    await exportOk(out, { datasets: ["blocks"] })
    const identityFile = join(out, "_lake.json")
    const identity = JSON.parse(readFileSync(identityFile, "utf8"))
    const tipHash = devnet.chain.blockHash(80)
    expect(identity).toEqual({ format_version: 1, chain_id: "lake-evm-1", anchors: [{ height: 80, hash: tipHash }] })
    const before = hashTree(out)
    const reset = await startDevnet({ seed: 20, blocks: 80 })
    const move = await startDevnet({ seed: 19, blocks: 80, vm: "move" })
    try {
      const otherHistory = await exportFrom(reset.indexerUrl, out, { datasets: ["blocks"] })
      expect(Either.isLeft(otherHistory) && otherHistory.left._tag).toBe("LakeIdentityError")
      expect(Either.isLeft(otherHistory) && otherHistory.left.message).toBe(
        `${out} holds another history of chain lake-evm-1: block 80 is ${tipHash} there and ${reset.chain.blockHash(80)} on this indexer (a reset chain, or another network under the same id): export it into another --out`
      )
      const otherChain = await exportFrom(move.indexerUrl, out, { datasets: ["blocks"] })
      expect(Either.isLeft(otherChain) && otherChain.left.message).toBe(
        `${out} holds chain lake-evm-1, but this indexer serves chain lake-move-1: export it into another --out`
      )
      expect(hashTree(out)).toEqual(before)
    } finally {
      await reset.stop()
      await move.stop()
    }
    // the newest anchor the indexer still serves decides: 80 (wrong here) is not served, 10 is right
    writeFileSync(
      identityFile,
      JSON.stringify({
        ...identity,
        anchors: [
          { height: 10, hash: devnet.chain.blockHash(10) },
          { height: 80, hash: "WRONG" }
        ]
      })
    )
    const pruned = await startProxy(devnet.indexerUrl, (req, forward) =>
      req.url.pathname === "/indexer/block/v1/blocks/80" ? { status: 404, body: "[NOT_FOUND] block not found" } : forward()
    )
    try {
      const notices: Array<string> = []
      await exportOk(out, { datasets: ["blocks"], observer: { notice: (m) => notices.push(m) } }, pruned.url)
      expect(notices.filter((n) => n.includes("could not check"))).toEqual([])
      // served, 80 is wrong: refused
      const wrong = await exportFrom(devnet.indexerUrl, out, { datasets: ["blocks"] })
      expect(Either.isLeft(wrong) && wrong.left.message).toMatch(/block 80 is WRONG there/)
      // none served: a notice, and the run goes on
      writeFileSync(identityFile, JSON.stringify({ ...identity, anchors: [{ height: 80, hash: "WRONG" }] }))
      await exportOk(out, { datasets: ["blocks"], observer: { notice: (m) => notices.push(m) } }, pruned.url)
      expect(notices).toContain(
        `could not check that ${out} holds this chain's history: the indexer serves none of the heights it anchored`
      )
      // a damaged identity file is an error naming it
      writeFileSync(identityFile, JSON.stringify({ chain_id: 7 }))
      const damaged = await exportFrom(devnet.indexerUrl, out, { datasets: ["blocks"] })
      expect(Either.isLeft(damaged) && damaged.left.message).toMatch(
        new RegExp(`^cannot read ${identityFile.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: damaged at `)
      )
    } finally {
      await pruned.close()
    }
  })

  it("a rerun at an anchored top (the tip, or --to-height below it) asks for its block only to check it (once, and before each commit) and writes no anchor; an anchor above the tip refuses the run; a new top is anchored by a run's first commit; where the tip block is not served, the newest block below it is", async () => {
    const asked: Array<number> = []
    const counting = await startProxy(devnet.indexerUrl, (req, forward) => {
      const block = /^\/indexer\/block\/v1\/blocks\/(\d+)$/.exec(req.url.pathname)
      if (block) asked.push(Number(block[1]))
      return forward()
    })
    const noTip = await startProxy(devnet.indexerUrl, (req, forward) =>
      req.url.pathname === "/indexer/block/v1/blocks/80" ? { status: 404, body: "[NOT_FOUND] block not found" } : forward()
    )
    try {
      const out = dirs.make()
      const identityFile = join(out, "_lake.json")
      await exportOk(out, { datasets: ["blocks"], toHeight: 10 }, counting.url)
      // the anchor (the run reads up to 10: a fork above it changes nothing it writes), then its check before the run's one commit (the history guard)
      expect(asked).toEqual([10, 10])
      const anchored = readFileSync(identityFile, "utf8")
      await exportOk(out, { datasets: ["blocks"], toHeight: 10 }, counting.url)
      // the identity check only: nothing left to commit
      expect(asked).toEqual([10, 10, 10])
      expect(readFileSync(identityFile, "utf8")).toBe(anchored)
      // an anchor above this indexer's tip (the lake came from one ahead of it: rolled back, or lagging): refused, nothing asked or written
      const ahead = {
        format_version: 1,
        chain_id: "lake-evm-1",
        anchors: [
          { height: 10, hash: devnet.chain.blockHash(10) },
          { height: 80, hash: devnet.chain.blockHash(80) },
          { height: 95, hash: "AHEAD" }
        ]
      }
      writeFileSync(identityFile, JSON.stringify(ahead))
      asked.length = 0
      const behind = await exportFrom(counting.url, out, { datasets: ["blocks"], toHeight: 10 })
      expect(Either.isLeft(behind) && behind.left.message).toBe(
        `${out} holds chain lake-evm-1 to height 95, but this indexer's tip is 80, and the blocks both hold are the same: an indexer still catching up (rerun once its tip passes 95), or one rolled back to 80 (chain-lake rollback --to-height 80 drops the lake's rows above it); nothing was written`
      )
      // the newest height both hold, compared
      expect(asked).toEqual([80])
      asked.length = 0
      expect(JSON.parse(readFileSync(identityFile, "utf8"))).toEqual(ahead)
      // several anchors at or below the tip: the newest is checked
      const several = { ...ahead, anchors: ahead.anchors.slice(0, 2) }
      writeFileSync(identityFile, JSON.stringify(several))
      await exportOk(out, { datasets: ["blocks"], toHeight: 10 }, counting.url)
      expect(asked).toEqual([80])
      expect(JSON.parse(readFileSync(identityFile, "utf8"))).toEqual(several)
      // anchored only below this tip (an earlier run's): a run that commits nothing anchors nothing;
      // one that commits anchors this tip too, beside it (with its first commit)
      const heights = () =>
        JSON.parse(readFileSync(identityFile, "utf8"))
          .anchors.map((a: { height: number }) => a.height)
          .sort((x: number, y: number) => x - y)
      writeFileSync(identityFile, JSON.stringify({ ...several, anchors: [several.anchors[0]] }))
      await exportOk(out, { datasets: ["blocks"], toHeight: 10 }, counting.url)
      expect(heights()).toEqual([10])
      await exportOk(out, { datasets: ["blocks"], toHeight: 20 }, counting.url)
      expect(heights()).toEqual([10, 20])
      await exportOk(out, { datasets: ["blocks"] }, counting.url)
      expect(heights()).toEqual([10, 20, 80])
      // an indexer that does not serve its own tip block (yet): the newest block it serves below it is anchored
      const fresh = dirs.make()
      await exportOk(fresh, { datasets: ["blocks"] }, noTip.url)
      expect(JSON.parse(readFileSync(join(fresh, "_lake.json"), "utf8")).anchors).toEqual([
        { height: 79, hash: devnet.chain.blockHash(79) }
      ])
    } finally {
      await counting.close()
      await noTip.close()
    }
  })
})
