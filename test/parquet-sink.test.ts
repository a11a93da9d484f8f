/**
 * ParquetSink writes rows sorted by the sort key, ties in append order, whether the rows came in
 * order (COPY skips its sort) or not (COPY sorts): real DuckDB, real Parquet files read back.
 */
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import type { Column, Value } from "../src/lake/columns.js"
import { ParquetSink, layerParquetSink } from "../src/lake/ParquetSink.js"
import { tempDirs } from "./support/tmp.js"

const temp = tempDirs("chain-lake-sink-")
afterAll(() => temp.removeAll())

const columns: ReadonlyArray<Column> = [
  { name: "height", type: "BIGINT", description: "" },
  { name: "idx", type: "INTEGER", description: "" },
  { name: "label", type: "VARCHAR", description: "" }
]

/** Writes `rows` with `sortKey` to one file and reads the labels back in file order. */
const roundTrip = (rows: ReadonlyArray<ReadonlyArray<Value>>, sortKey: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sink = yield* ParquetSink
    const writer = yield* sink.openWriter(columns, sortKey)
    const path = join(temp.make(), "part.parquet")
    // two files from one writer: the order tracking starts afresh after each
    const labels: Array<Array<string>> = []
    const sorted: Array<boolean> = []
    for (let round = 0; round < 2; round++) {
      for (const row of rows) writer.append(row)
      const written = yield* writer.finish(path)
      expect(written.rows).toBe(rows.length)
      sorted.push(written.sorted)
      const back = yield* sink.query(`SELECT label FROM read_parquet('${path}')`)
      labels.push(back.map((r) => String(r.label)))
    }
    yield* writer.close()
    expect(labels[1]).toEqual(labels[0])
    expect(sorted[1]).toBe(sorted[0])
    return { labels: labels[0], sorted: sorted[0] }
  }).pipe(Effect.provide(layerParquetSink()), Effect.runPromise)

describe("ParquetSink", () => {
  it("keeps rows that came in sort-key order as they are, ties in append order", async () => {
    const rows: Array<Array<Value>> = [
      ["1", 0, "a"],
      ["1", 0, "b"],
      ["2", 5, "c"],
      ["10", 1, "d"],
      ["10", 1, "e"]
    ]
    // in order: COPY skips its sort
    expect(await roundTrip(rows, ["height"])).toEqual({ labels: ["a", "b", "c", "d", "e"], sorted: false })
    expect(await roundTrip(rows, ["height", "idx"])).toEqual({ labels: ["a", "b", "c", "d", "e"], sorted: false })
  })

  it("sorts rows that did not come in order (numbers, not text; ties in append order)", async () => {
    const rows: Array<Array<Value>> = [
      ["10", 0, "d"],
      ["9", 1, "b"],
      ["9", 0, "a"],
      ["10", 0, "e"],
      ["9", 1, "c"]
    ]
    expect(await roundTrip(rows, ["height"])).toEqual({ labels: ["b", "a", "c", "d", "e"], sorted: true })
    expect(await roundTrip(rows, ["height", "idx"])).toEqual({ labels: ["a", "b", "c", "d", "e"], sorted: true })
    // in order by the first key, not by the second
    const secondOut: Array<Array<Value>> = [
      ["1", 5, "b"],
      ["1", 2, "a"],
      ["2", 0, "c"]
    ]
    expect(await roundTrip(secondOut, ["height", "idx"])).toEqual({ labels: ["a", "b", "c"], sorted: true })
    expect(await roundTrip(secondOut, ["height"])).toEqual({ labels: ["b", "a", "c"], sorted: false })
    // a later key may go down once an earlier one went up
    const reset: Array<Array<Value>> = [
      ["1", 5, "a"],
      ["2", 0, "b"],
      ["2", 1, "c"]
    ]
    expect(await roundTrip(reset, ["height", "idx"])).toEqual({ labels: ["a", "b", "c"], sorted: false })
  })

  it("sorts by keys it cannot track (text, DESC, nulls) whatever the append order", async () => {
    const rows: Array<Array<Value>> = [
      ["1", 0, "b"],
      ["2", 0, "a"],
      ["3", 0, "c"]
    ]
    expect(await roundTrip(rows, ["label"])).toEqual({ labels: ["a", "b", "c"], sorted: true })
    expect(await roundTrip(rows, ["height DESC"])).toEqual({ labels: ["c", "a", "b"], sorted: true })
    const withNull: Array<Array<Value>> = [
      [null, 0, "z"],
      ["1", 0, "a"]
    ]
    expect(await roundTrip(withNull, ["height"])).toEqual({ labels: ["a", "z"], sorted: true })
    // an integer beyond 2^53 cannot be compared as a number
    const huge: Array<Array<Value>> = [
      ["1", 0, "a"],
      ["9007199254740993", 0, "b"]
    ]
    expect(await roundTrip(huge, ["height"])).toEqual({ labels: ["a", "b"], sorted: true })
  })

  it("writes every column type exactly, discards on request, and fails a file it cannot write with its path, leaving no temp file", async () => {
    const typed: ReadonlyArray<Column> = [
      { name: "b", type: "BIGINT", description: "" },
      { name: "i", type: "INTEGER", description: "" },
      { name: "ok", type: "BOOLEAN", description: "" },
      { name: "f", type: "DOUBLE", description: "" },
      { name: "s", type: "VARCHAR", description: "" },
      { name: "j", type: "JSON", description: "" },
      { name: "t", type: "TIMESTAMP", description: "" },
      { name: "d", type: "DECIMAL(38,0)", description: "" },
      { name: "l", type: "VARCHAR[]", description: "" }
    ]
    const dir = temp.make()
    const result = await Effect.gen(function* () {
      const sink = yield* ParquetSink
      const writer = yield* sink.openWriter(typed, [])
      writer.append(["1", 2, true, 0.5, "x", '{"a":[1,2]}', "2026-01-01T00:00:01.123456789Z", "12345678901234567890123456789012345678", '["p","q"]'])
      writer.append([9007199254740993n, -1, false, -2.25, "ünï", "[]", "2026-01-02T03:04:05Z", "123456789012345678901234567890123456789", "[]"])
      writer.append([null, null, null, null, null, null, null, null, null])
      expect(writer.rows()).toBe(3)
      expect(writer.stagedBytes()).toBeGreaterThan(0)
      const written = yield* writer.finish(join(dir, "typed.parquet"))
      expect([writer.rows(), writer.stagedBytes()]).toEqual([0, 0])
      // staged and dropped: the next file starts empty
      writer.append(["5", 5, true, 5, "gone", "{}", "2026-01-01T00:00:00Z", "5", "[]"])
      yield* writer.discard()
      writer.append(["6", 6, false, 6, "kept", "{}", "2026-01-01T00:00:00Z", "6", "[]"])
      const second = yield* writer.finish(join(dir, "second.parquet"))
      const failed = yield* Effect.flip(writer.finish(join(dir, "second.parquet", "inside-a-file.parquet")))
      yield* writer.close()
      const rows = yield* sink.query(
        `SELECT b::VARCHAR b, i, ok, f, s, j::VARCHAR j, strftime(t, '%Y-%m-%d %H:%M:%S.%f') t, d::VARCHAR d, l, typeof(j) jt, typeof(d) dt, typeof(l) lt, typeof(t) tt FROM read_parquet('${join(dir, "typed.parquet")}')`
      )
      const kept = yield* sink.query(`SELECT s FROM read_parquet('${join(dir, "second.parquet")}')`)
      return { written, second, failed, rows, kept }
    }).pipe(Effect.provide(layerParquetSink()), Effect.runPromise)
    expect(result.written).toMatchObject({ rows: 3, sorted: false })
    expect(result.written.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(result.rows).toEqual([
      { b: "1", i: 2, ok: true, f: 0.5, s: "x", j: '{"a":[1,2]}', t: "2026-01-01 00:00:01.123456", d: "12345678901234567890123456789012345678", l: ["p", "q"], jt: "JSON", dt: "DECIMAL(38,0)", lt: "VARCHAR[]", tt: "TIMESTAMP" },
      // beyond 38 digits DECIMAL(38,0) holds no value (the exact text stays in a VARCHAR column)
      { b: "9007199254740993", i: -1, ok: false, f: -2.25, s: "ünï", j: "[]", t: "2026-01-02 03:04:05.000000", d: null, l: [], jt: "JSON", dt: "DECIMAL(38,0)", lt: "VARCHAR[]", tt: "TIMESTAMP" },
      { b: null, i: null, ok: null, f: null, s: null, j: null, t: null, d: null, l: null, jt: "JSON", dt: "DECIMAL(38,0)", lt: "VARCHAR[]", tt: "TIMESTAMP" }
    ])
    expect(result.second.rows).toBe(1)
    expect(result.kept.map((r) => r.s)).toEqual(["kept"])
    expect(result.failed).toMatchObject({ _tag: "SinkError", path: join(dir, "second.parquet", "inside-a-file.parquet") })
    const { readdirSync } = await import("node:fs")
    expect(readdirSync(dir).sort()).toEqual(["second.parquet", "typed.parquet"])
  })
})

describe("memory", () => {
  it("DuckDB past its memory limit spills into a scratch folder whose parents do not exist yet (it used to fail the run), and writers go on", async () => {
    const scratch = join(temp.make(), "lake", ".chain-lake", "tmp", "writer-1")
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openWriter(columns, ["height"])
        // a sort of ~5M rows in a sink of 64 MB: DuckDB must spill to answer
        const [sorted] = yield* sink.query("SELECT count(*) AS n FROM (SELECT x FROM range(5000000) t(x) ORDER BY md5(x::varchar) LIMIT 4999999)")
        const spilled = existsSync(scratch)
        for (let i = 0; i < 1000; i++) writer.append([i, 0, `row ${i}`])
        const path = join(temp.make(), "after.parquet")
        const file = yield* writer.finish(path)
        const [back] = yield* sink.query(`SELECT count(*) AS n, max(height) AS top FROM read_parquet('${path}')`)
        yield* writer.close()
        return { sorted: sorted.n, spilled, rows: file.rows, back }
      }).pipe(Effect.provide(layerParquetSink({ memoryLimit: "64MB", tempDirectory: scratch })), Effect.scoped)
    )
    expect(result).toEqual({ sorted: 4_999_999n, spilled: true, rows: 1000, back: { n: 1000n, top: 999n } })
  }, 120_000)

  it("a writer that finishes file after file holds the memory of one file's rows, not of every file it wrote (DuckDB keeps a table's deleted rows)", async () => {
    const used = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openWriter(columns, ["height"])
        const dir = temp.make()
        const seen: Array<number> = []
        for (let file = 0; file < 12; file++) {
          // ~4 MB of strings a file
          for (let i = 0; i < 2000; i++) writer.append([file * 2000 + i, i, `${file}:${i}:`.padEnd(2000, "x")])
          yield* writer.finish(join(dir, `part-${file}.parquet`))
          const [m] = yield* sink.query("SELECT sum(memory_usage_bytes)::BIGINT AS used FROM duckdb_memory()")
          seen.push(Number(m.used))
        }
        yield* writer.close()
        return seen
      }).pipe(Effect.provide(layerParquetSink({ memoryLimit: "512MB" })), Effect.scoped)
    )
    // flat: the last file's writer holds no more than the first one's did (with DELETE it grew by ~4 MB a file)
    expect(used.at(-1)!, used.map((n) => Math.round(n / 2 ** 20)).join(" MB, ") + " MB").toBeLessThanOrEqual(used[0] + 2 * 2 ** 20)
  })

  it("the writers of one sink past its staging budget say so; each alone stays under it", async () => {
    const over = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const a = yield* sink.openWriter(columns, ["height"])
        const b = yield* sink.openWriter(columns, ["height"])
        const seen: Array<boolean> = []
        for (let i = 0; i < 600; i++) a.append([i, 0, "y".repeat(1000)])
        seen.push(sink.overBudget())
        for (let i = 0; i < 600; i++) b.append([i, 0, "y".repeat(1000)])
        seen.push(sink.overBudget())
        yield* b.discard()
        seen.push(sink.overBudget())
        yield* a.close()
        yield* b.close()
        return seen
      }).pipe(Effect.provide(layerParquetSink({ stagingBudget: 1_000_000 })), Effect.scoped)
    )
    expect(over).toEqual([false, true, false])
  })
})

describe("rows unique by key", () => {
  it("finish with uniqueBy keeps the first row staged of each key, counts the repeats, and writes them sorted", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openWriter(columns, ["height", "idx"])
        // keys (height, idx): (2,0) three times, (1,1) twice; labels say which came first
        const rows: Array<Array<Value>> = [
          [2, 0, "first 2/0"],
          [1, 1, "first 1/1"],
          [2, 0, "second 2/0"],
          [3, 0, "only 3/0"],
          [1, 1, "second 1/1"],
          [2, 0, "third 2/0"]
        ]
        for (const r of rows) writer.append(r)
        const repeats = yield* writer.repeats(["height", "idx"])
        const path = join(temp.make(), "unique.parquet")
        const file = yield* writer.finish(path, { uniqueBy: ["height", "idx"] })
        const back = yield* sink.query(`SELECT height, idx, label FROM read_parquet('${path}')`)
        yield* writer.close()
        return { repeats, rows: file.rows, back: back.map((r) => [Number(r.height), Number(r.idx), r.label]) }
      }).pipe(Effect.provide(layerParquetSink()), Effect.scoped)
    )
    expect(result).toEqual({
      repeats: 3,
      rows: 3,
      back: [
        [1, 1, "first 1/1"],
        [2, 0, "first 2/0"],
        [3, 0, "only 3/0"]
      ]
    })
  })
})
