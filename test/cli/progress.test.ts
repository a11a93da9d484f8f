/**
 * The export's progress lines (issue 35): counts named with their units (a plan counts its
 * source's records, a dataset's rows are something else), 100% and "done" once done, ETA as a
 * clock or not at all, lines that fit the width with names padded to the longest, the plan on a
 * terminal too, and a total line. The real CLI's lines are checked in cli-export.test.ts.
 */
import { Writable } from "node:stream"
import { describe, expect, it } from "vitest"
import type { DatasetPlan, DatasetResult } from "../../src/engine/export.js"
import {
  barOf,
  barSize,
  clock,
  count,
  cut,
  datasetLine,
  displayWidth,
  etaOf,
  fitLine,
  makeProgress,
  percentOf,
  planLine,
  totalLine,
  unitNoun,
  type Tally
} from "../../src/cli/progress.js"
import { roundProgress } from "../../src/cli/roundProgress.js"
import { retriesIn } from "../../src/http/Retries.js"

const plan = (dataset: string, todo: number, over: Partial<DatasetPlan> = {}): DatasetPlan => ({
  dataset,
  kind: "append",
  unit: "position",
  heights: [1, 50000],
  todo,
  done: 0,
  shards: 12,
  estimatedRequests: 232,
  watermark: 50000,
  ...over
})
const result = (dataset: string, rows: number, files = 12): DatasetResult => ({ dataset, rows, files, bytes: 1, quarantined: 0 })
const NOW = 1_000_000
const tally = (p: DatasetPlan, fetched: number, rows: number, r?: DatasetResult, secondsAgo = 10): Tally => ({
  name: p.dataset,
  plan: p,
  noun: unitNoun(p),
  since: NOW - secondsAgo * 1000,
  fetched,
  rows,
  ...(r ? { result: r } : {})
})
const layout = { nameWidth: "token_transfers_cosmos".length, width: 80 }

describe("progress formatting", () => {
  it("ETA and elapsed time as mm:ss, h:mm:ss past an hour; an unknown ETA is none (not NULL, INF or bare seconds)", () => {
    expect([0, 9.4, 61, 3599, 3600, 3725, 36_000 * 3].map(clock)).toEqual([
      "00:00",
      "00:09",
      "01:01",
      "59:59",
      "1:00:00",
      "1:02:05",
      "30:00:00"
    ])
    expect([NaN, Infinity, -1].map(clock)).toEqual([undefined, undefined, undefined])
    expect([etaOf(45_092, 5163), etaOf(1000, 5), etaOf(36_000 * 3, 12), etaOf(10, 0), etaOf(10, NaN), etaOf(10, Infinity)]).toEqual([
      "00:09",
      "03:20",
      "2:30:00",
      undefined,
      undefined,
      "00:00"
    ])
  })

  it("counts with thousands separators; each plan's unit named from its source", () => {
    expect([0, 999, 1000, 131_617, 1_234_567].map(count)).toEqual(["0", "999", "1,000", "131,617", "1,234,567"])
    expect(
      ["blocks", "txs", "evm_logs", "token_transfers_cosmos", "evm_internal_txs"].map((d) =>
        unitNoun(plan(d, 1, d === "blocks" ? { unit: "height" } : {}))
      )
    ).toEqual(["blocks", "txs", "evm txs", "txs", "evm internal txs"])
    expect(unitNoun(plan("not_a_dataset", 1))).toBe("records")
  })

  it("a line counts the source's records and the dataset's rows apart: one receipt gives many logs, and done is 100%", () => {
    // the run: 115,848 receipts gave 131,617 logs; 174,643 txs gave 68,876 cosmos transfers
    const logs = plan("evm_logs", 115_848)
    expect(datasetLine(tally(logs, 115_848, 131_617, result("evm_logs", 131_617)), layout, NOW)).toBe(
      "evm_logs               100% · evm txs 115,848 of 115,848 · 131,617 rows · done"
    )
    // a line too long for the width keeps "done" and drops what was read first (the longest name, the longest counts)
    const calls = plan("evm_internal_txs", 5_224)
    expect(datasetLine(tally(calls, 5_224, 5_224, result("evm_internal_txs", 5_224, 8)), { ...layout, width: 60 }, NOW)).toBe(
      "evm_internal_txs       100% · 5,224 rows · done"
    )
    const transfers = plan("token_transfers_cosmos", 174_643)
    expect(datasetLine(tally(transfers, 174_643, 68_876, result("token_transfers_cosmos", 68_876)), layout, NOW)).toBe(
      "token_transfers_cosmos 100% · txs 174,643 of 174,643 · 68,876 rows · done"
    )
    // under way: the percentage of records, with rows/s and the ETA from the records' rate, where the width allows
    const running = tally(logs, 52_134, 59_211)
    expect(percentOf(running)).toBe(45)
    expect(datasetLine(running, { ...layout, width: 120 }, NOW)).toBe(
      "evm_logs                45% · evm txs 52,134 of 115,848 · 59,211 rows · 5,921 rows/s · ETA 00:13"
    )
    // all read is not yet done (written and committed): 99% and "writing"
    expect(datasetLine(tally(transfers, 174_643, 68_876), layout, NOW)).toBe(
      "token_transfers_cosmos  99% · txs 174,643 of 174,643 · 68,876 rows · writing"
    )
    // nothing read yet: no rate, no ETA
    expect(datasetLine(tally(logs, 0, 0), layout, NOW)).toBe("evm_logs                 0% · evm txs 0 of 115,848 · 0 rows · 0 rows/s")
    const snapshot = plan("holders", 1, { kind: "snapshot", unit: "snapshot", heights: [95, 95], watermark: 95 })
    expect(datasetLine(tally(snapshot, 0, 0), layout, NOW)).toBe("holders                  0% · snapshot at 95")
    expect(datasetLine(tally(snapshot, 0, 1, { ...result("holders", 1, 1), snapshotHeight: 95 }), layout, NOW)).toBe(
      "holders                100% · snapshot at 95 · 1 row · 1 file · done"
    )
    expect(datasetLine(tally(snapshot, 0, 0, { ...result("holders", 0, 0), skipped: "no denoms" }), layout, NOW)).toBe(
      "holders                skipped (no denoms)"
    )
  })

  it("fits the width: the least needed parts go first, the bar before the counts, and what must stay is cut with …", () => {
    const parts = [
      { text: "must", drop: 0 },
      { text: "second", drop: 1 },
      { text: "first", drop: 4 }
    ]
    expect(fitLine("name", parts, 80)).toBe("name must · second · first")
    expect(fitLine("name", parts, 20)).toBe("name must · second")
    expect(fitLine("name", parts, 10)).toBe("name must")
    expect(fitLine("name", parts, 30, "[##  ]")).toBe("name [##  ] must · second")
    expect(fitLine("name", parts, 12, "[##  ]")).toBe("name must")
    expect(fitLine("a-long-name", parts, 8)).toBe("a-long-…")
    expect(cut("日本の風景", 6)).toBe("日本…")
    // every line of a run fits every width, down to a narrow terminal
    const lines = (width: number) => {
      const l = { ...layout, width }
      const logs = plan("evm_logs", 115_848)
      return [tally(logs, 52_134, 59_211), tally(logs, 115_848, 131_617, result("evm_logs", 131_617))]
        .flatMap((t) => [datasetLine(t, l, NOW, true), planLine(t, l)])
        .concat(totalLine([tally(logs, 1, 1)], l, 3725, true))
    }
    for (const width of [20, 40, 60, 80, 100, 132, 200])
      for (const line of lines(width)) expect(displayWidth(line), `${width}: ${line}`).toBeLessThanOrEqual(width)
  })

  it("bars are one width on every line, so that the columns after them align; none where the terminal is too narrow", () => {
    expect(barOf(0.5, 10)).toBe("[█████░░░░░]")
    expect([
      barSize({ nameWidth: 22, width: 80 }),
      barSize({ nameWidth: 22, width: 100 }),
      barSize({ nameWidth: 6, width: 100 }),
      barSize({ nameWidth: 22, width: 200 })
    ]).toEqual([0, 12, 28, 30])
    const wide = { ...layout, width: 120 }
    const lines = [
      tally(plan("blocks", 50_000, { unit: "height" }), 100, 100),
      tally(plan("token_transfers_cosmos", 174_643), 174_643, 68_876, result("token_transfers_cosmos", 68_876))
    ].map((t) => datasetLine(t, wide, NOW, true))
    expect(lines.map((l) => l.indexOf("%"))).toEqual([lines[0].indexOf("%"), lines[0].indexOf("%")])
    expect(lines[1]).toMatch(/^token_transfers_cosmos \[█{30}\] 100% · /)
  })

  it("the plan names its unit; the total line says datasets done, rows, rows/s and the time", () => {
    const blocks = tally(plan("blocks", 50_000, { unit: "height", done: 120, shards: 1 }), 0, 0)
    expect(planLine(blocks, { ...layout, width: 120 })).toBe(
      "blocks:                 50,000 blocks to fetch · heights 1..50000 · 120 already committed · 1 shard"
    )
    // at 80 columns: what a resumed run has committed goes after the shards and the heights
    expect(planLine(tally(plan("evm_internal_txs", 152_000), 0, 0), layout)).toBe(
      "evm_internal_txs:       152,000 evm internal txs to fetch · heights 1..50000"
    )
    expect(planLine(tally(plan("txs", 152_000, { done: 3_000 }), 0, 0), layout)).toBe(
      "txs:                    152,000 txs to fetch · 3,000 already committed"
    )
    const two = [tally(plan("evm_logs", 10), 10, 30, result("evm_logs", 30)), tally(plan("txs", 10), 5, 5)]
    expect(totalLine(two, layout, 12, false)).toBe("total                  1 of 2 datasets done · 35 rows · 3 rows/s · 00:12 elapsed")
    expect(totalLine(two, layout, 3725, true)).toBe("total                  1 of 2 datasets done · 35 rows · 0 rows/s · in 1:02:05")
  })
})

describe("progress renderers", () => {
  const events = (observer: ReturnType<typeof makeProgress>["observer"]) => {
    observer.planned?.("evm_logs", plan("evm_logs", 225))
    observer.planned?.("token_transfers_cosmos", plan("token_transfers_cosmos", 234))
    observer.fetched?.("evm_logs", 225)
    observer.rows?.("evm_logs", 256)
    observer.done?.("evm_logs", result("evm_logs", 256, 1))
    observer.fetched?.("token_transfers_cosmos", 234)
    observer.rows?.("token_transfers_cosmos", 88)
    observer.done?.("token_transfers_cosmos", result("token_transfers_cosmos", 88, 1))
  }

  it("log lines (not a terminal): the plan, the datasets under way with the total, each dataset's last line, the total at the end", () => {
    const lines: Array<string> = []
    const progress = makeProgress({
      tty: false,
      log: (l) => lines.push(l),
      names: ["evm_logs", "token_transfers_cosmos"],
      columns: () => 120,
      every: 0
    })
    events(progress.observer)
    progress.stop()
    expect(lines.map((l) => l.replace(/\d\d:\d\d/, "mm:ss").replace(/[\d,]+ rows\/s/, "n rows/s"))).toEqual([
      "evm_logs:               225 evm txs to fetch · heights 1..50000 · 12 shards",
      "token_transfers_cosmos: 234 txs to fetch · heights 1..50000 · 12 shards",
      "evm_logs                99% · evm txs 225 of 225 · 0 rows · n rows/s · writing",
      "total                  0 of 2 datasets done · 0 rows · n rows/s · mm:ss elapsed",
      "evm_logs                99% · evm txs 225 of 225 · 256 rows · n rows/s · writing",
      "total                  0 of 2 datasets done · 256 rows · n rows/s · mm:ss elapsed",
      "evm_logs               100% · evm txs 225 of 225 · 256 rows · 1 file · done",
      "token_transfers_cosmos  99% · txs 234 of 234 · 0 rows · n rows/s · writing",
      "total                  1 of 2 datasets done · 256 rows · n rows/s · mm:ss elapsed",
      "token_transfers_cosmos  99% · txs 234 of 234 · 88 rows · n rows/s · writing",
      "total                  1 of 2 datasets done · 344 rows · n rows/s · mm:ss elapsed",
      "token_transfers_cosmos 100% · txs 234 of 234 · 88 rows · 1 file · done",
      "total                  2 of 2 datasets done · 344 rows · n rows/s · in mm:ss"
    ])
    // a dry run plans only: no total line at the end
    const dry: Array<string> = []
    const planned = makeProgress({ tty: false, log: (l) => dry.push(l), every: 0 })
    planned.observer.planned?.("txs", plan("txs", 10))
    planned.stop()
    expect(dry).toHaveLength(1)
  })

  it("on a terminal: notices before the plan at once, the plan printed above the bars, the bars' last state and the total when stopped", () => {
    let drawn = ""
    const stream = Object.assign(new Writable({ write: (chunk, _e, done) => ((drawn += String(chunk)), done()) }), {
      isTTY: true,
      columns: 120
    })
    const logged: Array<string> = []
    const progress = makeProgress({
      tty: true,
      log: (l) => logged.push(l),
      names: ["evm_logs", "token_transfers_cosmos"],
      columns: () => 120,
      stream
    })
    progress.observer.notice?.("blocks: skipped, not served")
    events(progress.observer)
    progress.stop()
    expect(logged).toEqual(["blocks: skipped, not served"])
    // eslint-disable-next-line no-control-regex
    const screen = drawn.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    expect(screen).toContain("evm_logs:               225 evm txs to fetch · heights 1..50000 · 12 shards\n")
    expect(screen).toContain("token_transfers_cosmos: 234 txs to fetch · heights 1..50000 · 12 shards\n")
    expect(screen).toMatch(/evm_logs {15}\[█{30}\] 100% · evm txs 225 of 225 · 256 rows · 1 file · done/)
    expect(screen).toMatch(/token_transfers_cosmos \[█{30}\] 100% · txs 234 of 234 · 88 rows · 1 file · done/)
    expect(screen).toMatch(/total {18}2 of 2 datasets done · 344 rows · [\d,]+ rows\/s · in 00:00/)
  })
})

describe("sample-routes' round under way", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  it("in a log: a line every so often while a round lasts, with its quotes back, those failed and the requests it asked again; none between rounds", async () => {
    const written: Array<string> = []
    const retries = retriesIn()
    retries.retried({ _tag: "RouterTimeout" }) // before the round: not the round's
    const progress = roundProgress({ tty: false, write: (t) => written.push(t), retries, every: 40 })
    await sleep(120)
    expect(written).toEqual([])
    progress.watcher.started?.("R1", 1200)
    await sleep(120)
    expect(written.at(-1)).toBe("round R1 under way: 0 of 1,200 quotes back after 00:00\n")
    progress.watcher.quoted?.(true, true)
    progress.watcher.quoted?.(false, true)
    progress.watcher.quoted?.(false, false)
    retries.retried({ _tag: "RouterTimeout" })
    await sleep(120)
    expect(written.at(-1)).toBe("round R1 under way: 3 of 1,200 quotes back (1 failed) after 00:00, 1 request asked again (timeout ×1)\n")
    expect(progress.retriedInRound()).toEqual({ timeout: 1 })
    progress.roundOver()
    const said = written.length
    await sleep(120)
    progress.stop()
    expect(written).toHaveLength(said)
    expect(written.every((t) => !t.includes("\r"))).toBe(true)
  })

  it("on a terminal: one line redrawn in place, cut to the width, and taken off before the round's own line", async () => {
    let screen = ""
    const progress = roundProgress({ tty: true, write: (t) => (screen += t), retries: retriesIn(), every: 40, columns: () => 30 })
    progress.watcher.started?.("20261129-004512345Z", 12)
    await sleep(120)
    const draws = screen.split("\r\x1b[K").filter((d) => d !== "")
    expect(draws.length).toBeGreaterThan(0)
    // the round's id is left out: the counts come first
    for (const d of draws) expect(d).toBe("round under way: 0 of 12 quo…")
    progress.roundOver()
    expect(screen.endsWith("\r\x1b[K")).toBe(true)
    progress.stop()
  })
})
