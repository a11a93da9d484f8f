/**
 * ParquetSink writes rows sorted by the sort key, ties in append order, whether the rows came in
 * order (COPY skips its sort) or not (COPY sorts): real DuckDB, real Parquet files read back.
 */
import { Effect } from "effect"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import type { Column, Value } from "../../src/lake/columns.js"
import { copyMemory, ParquetSink, layerParquetSink } from "../../src/lake/ParquetSink.js"
import {
  layerLake,
  MIN_MEMORY_LIMIT_BYTES,
  NODE_FLOOR_BYTES,
  nodeShareBytes,
  parseMemorySize,
  PROCESS_BASE_BYTES,
  runMemory,
  sinkMemory
} from "../../src/lake/writer.js"
import { underMutation } from "../support/mutation.js"
import { tempDirs } from "../support/tmp.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

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
    const writer = yield* sink.openFile(columns, sortKey)
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
      const writer = yield* sink.openFile(typed, [])
      writer.append([
        "1",
        2,
        true,
        0.5,
        "x",
        '{"a":[1,2]}',
        "2026-01-01T00:00:01.123456789Z",
        "12345678901234567890123456789012345678",
        '["p","q"]'
      ])
      writer.append([
        9007199254740993n,
        -1,
        false,
        -2.25,
        "ünï",
        "[]",
        "2026-01-02T03:04:05Z",
        "123456789012345678901234567890123456789",
        "[]"
      ])
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
      {
        b: "1",
        i: 2,
        ok: true,
        f: 0.5,
        s: "x",
        j: '{"a":[1,2]}',
        t: "2026-01-01 00:00:01.123456",
        d: "12345678901234567890123456789012345678",
        l: ["p", "q"],
        jt: "JSON",
        dt: "DECIMAL(38,0)",
        lt: "VARCHAR[]",
        tt: "TIMESTAMP"
      },
      // beyond 38 digits DECIMAL(38,0) holds no value (the exact text stays in a VARCHAR column)
      {
        b: "9007199254740993",
        i: -1,
        ok: false,
        f: -2.25,
        s: "ünï",
        j: "[]",
        t: "2026-01-02 03:04:05.000000",
        d: null,
        l: [],
        jt: "JSON",
        dt: "DECIMAL(38,0)",
        lt: "VARCHAR[]",
        tt: "TIMESTAMP"
      },
      {
        b: null,
        i: null,
        ok: null,
        f: null,
        s: null,
        j: null,
        t: null,
        d: null,
        l: null,
        jt: "JSON",
        dt: "DECIMAL(38,0)",
        lt: "VARCHAR[]",
        tt: "TIMESTAMP"
      }
    ])
    expect(result.second.rows).toBe(1)
    expect(result.kept.map((r) => r.s)).toEqual(["kept"])
    expect(result.failed).toMatchObject({ _tag: "SinkError", path: join(dir, "second.parquet", "inside-a-file.parquet") })
    expect(readdirSync(dir).sort()).toEqual(["second.parquet", "typed.parquet"])
  })
})

describe("rows unique by key", () => {
  it("finish with uniqueBy keeps the first row staged of each key, counts the repeats, and writes them sorted", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openFile(columns, ["height", "idx"])
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

describe("edges", () => {
  /** Runs `f` with a sink of `config`, its scope closed after. */
  const withSink = <A>(
    f: (sink: typeof ParquetSink.Service) => Effect.Effect<A, unknown>,
    config: Parameters<typeof layerParquetSink>[0] = {}
  ) => Effect.runPromise(Effect.flatMap(ParquetSink, f).pipe(Effect.provide(layerParquetSink(config)), Effect.scoped) as Effect.Effect<A>)

  it("column names and paths that need quoting: a reserved word, a double quote, a folder with an apostrophe, a sort key 'col desc'", async () => {
    const odd: ReadonlyArray<Column> = [
      { name: "order", type: "BIGINT", description: "" },
      { name: 'we"ird', type: "VARCHAR", description: "" },
      { name: "amount", type: "INTEGER", description: "" }
    ]
    const path = join(temp.make(), "O'Brien's lake", "part.parquet")
    const back = await withSink((sink) =>
      Effect.gen(function* () {
        const writer = yield* sink.openFile(odd, ["order", "amount desc"])
        for (const row of [
          [2, "b", 1],
          [1, "a", 1],
          [2, "c", 5],
          [1, "a", 1]
        ] as Array<Array<Value>>)
          writer.append(row)
        expect(yield* writer.repeats(['we"ird'])).toBe(1)
        const file = yield* writer.finish(path, { uniqueBy: ['we"ird'] })
        expect(file).toMatchObject({ path, rows: 3, sorted: true })
        return yield* sink.query(`SELECT "order", "we""ird" AS w, amount FROM read_parquet('${path.replace(/'/g, "''")}')`)
      })
    )
    expect(back.map((r) => [Number(r.order), r.w, r.amount])).toEqual([
      [1, "a", 1],
      [2, "c", 5],
      [2, "b", 1]
    ])
  })

  it("rows unique by key are sorted even when they came in order (the window may reorder them); an empty key list is no uniqueness", async () => {
    const files = await withSink((sink) =>
      Effect.gen(function* () {
        const writer = yield* sink.openFile(columns, ["height"])
        const dir = temp.make()
        for (let i = 0; i < 3000; i++) writer.append([i, 0, `r${i}`])
        const unique = yield* writer.finish(join(dir, "unique.parquet"), { uniqueBy: ["height"] })
        for (let i = 0; i < 3; i++) writer.append([1, 0, `same key ${i}`])
        const none = yield* writer.finish(join(dir, "none.parquet"), { uniqueBy: [] })
        const [order] = yield* sink.query(
          `SELECT bool_and(height = rn - 1) AS ordered FROM (SELECT height, row_number() OVER () AS rn FROM read_parquet('${join(dir, "unique.parquet")}'))`
        )
        yield* writer.close()
        return { unique, none, ordered: order.ordered }
      })
    )
    expect([files.unique.rows, files.unique.sorted, files.ordered]).toEqual([3000, true, true])
    expect([files.none.rows, files.none.sorted]).toEqual([3, false])
  })

  it("a value COPY cannot convert fails the file with its path and DuckDB's reason, and leaves no temp file; the writer goes on", async () => {
    const dir = temp.make()
    const typed: ReadonlyArray<Column> = [{ name: "t", type: "TIMESTAMP", description: "" }]
    const result = await withSink((sink) =>
      Effect.gen(function* () {
        const writer = yield* sink.openFile(typed, [])
        writer.append(["not a time"])
        const failed = yield* Effect.flip(writer.finish(join(dir, "bad.parquet")))
        yield* writer.discard()
        writer.append(["2026-01-01T00:00:00Z"])
        const good = yield* writer.finish(join(dir, "good.parquet"))
        return { failed, good }
      })
    )
    expect(result.failed).toMatchObject({ _tag: "SinkError", path: join(dir, "bad.parquet") })
    expect(result.failed.message).toMatch(/timestamp|convert|cast/i)
    expect(result.good.rows).toBe(1)
    expect(readdirSync(dir)).toEqual(["good.parquet"])
  })

  it("a TIMESTAMP is the UTC instant its text names: an offset applied, a time of year 1 (Go's zero time, past TIMESTAMP_NS's years) kept", async () => {
    const dir = temp.make()
    const typed: ReadonlyArray<Column> = [{ name: "t", type: "TIMESTAMP", description: "" }]
    const back = await withSink((sink) =>
      Effect.gen(function* () {
        const writer = yield* sink.openFile(typed, [])
        for (const t of ["2025-11-18T17:00:01+09:00", "2025-11-18T02:30:01.25-05:30", "0001-01-01T00:00:00Z", "2025-11-18T08:00:01Z"])
          writer.append([t])
        yield* writer.finish(join(dir, "t.parquet"))
        yield* writer.close()
        return yield* sink.query(`SELECT strftime(t, '%Y-%m-%dT%H:%M:%S.%g') AS t FROM read_parquet('${join(dir, "t.parquet")}')`)
      })
    )
    expect(back.map((r) => r.t)).toEqual([
      "2025-11-18T08:00:01.000",
      "2025-11-18T08:00:01.250",
      "0001-01-01T00:00:00.000",
      "2025-11-18T08:00:01.000"
    ])
  })

  it("a file that cannot be put in place (its name is a folder) is not committed: the error names it, the temp file is gone", async () => {
    const dir = temp.make()
    mkdirSync(join(dir, "taken.parquet"))
    writeFileSync(join(dir, "taken.parquet", "keep"), "user data")
    const failed = await withSink((sink) =>
      Effect.gen(function* () {
        const writer = yield* sink.openFile(columns, ["height"])
        writer.append([1, 0, "a"])
        return yield* Effect.flip(writer.finish(join(dir, "taken.parquet")))
      })
    )
    expect(failed).toMatchObject({ _tag: "SinkError", path: join(dir, "taken.parquet") })
    expect(failed.message).toMatch(new RegExp(`^could not commit ${join(dir, "taken.parquet").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `))
    expect(readdirSync(dir)).toEqual(["taken.parquet"])
    expect(readdirSync(join(dir, "taken.parquet"))).toEqual(["keep"])
  })

  it("a lone surrogate in a JSON or list column (a string cut mid-pair, sent escaped) is stored as U+FFFD, as in a VARCHAR; whole pairs and an escaped backslash before 'u' stay as they are", async () => {
    const cols: ReadonlyArray<Column> = [
      { name: "s", type: "VARCHAR", description: "" },
      { name: "j", type: "JSON", description: "" },
      { name: "l", type: "VARCHAR[]", description: "" }
    ]
    const lone = "cut \ud83d here, \ude80 there"
    const literal = "text \\ud800 and 🚀"
    const back = await Effect.gen(function* () {
      const sink = yield* ParquetSink
      const writer = yield* sink.openFile(cols, [])
      const path = join(temp.make(), "surrogates.parquet")
      writer.append([lone, JSON.stringify({ memo: lone, n: [1] }), JSON.stringify([lone])])
      writer.append([literal, JSON.stringify({ memo: literal }), JSON.stringify([literal])])
      yield* writer.finish(path)
      yield* writer.close()
      return yield* sink.query(`SELECT s, j::VARCHAR AS j, l FROM read_parquet('${path}')`)
    }).pipe(Effect.provide(layerParquetSink()), Effect.runPromise)
    const mended = "cut \ufffd here, \ufffd there"
    expect(back).toEqual([
      { s: mended, j: JSON.stringify({ memo: mended, n: [1] }), l: [mended] },
      { s: literal, j: JSON.stringify({ memo: literal }), l: [literal] }
    ])
  })

  it("exactly at the staging budget is not over it", async () => {
    const seen = await withSink(
      (sink) =>
        Effect.gen(function* () {
          const writer = yield* sink.openFile(columns, ["height"])
          writer.append([1, 0, "x".repeat(10)])
          const at = sink.overBudget()
          writer.append([2, 0, "y"])
          const over = sink.overBudget()
          // a closed writer stages nothing
          yield* writer.close()
          return [at, over, sink.overBudget()]
        }),
      { stagingBudget: 10 }
    )
    expect(seen).toEqual([false, true, false])
  })

  it("a file's row groups hold ~8 MB of strings: several groups for a large file, none cut at the 2048-row floor", async () => {
    const path = join(temp.make(), "groups.parquet")
    const groups = await withSink((sink) =>
      Effect.gen(function* () {
        const writer = yield* sink.openFile(columns, ["height"])
        for (let i = 0; i < 10_000; i++) writer.append([i, 0, String(i).padEnd(2000, "x")])
        yield* writer.finish(path)
        return (yield* sink.query(
          `SELECT row_group_id, any_value(row_group_num_rows)::INTEGER AS n FROM parquet_metadata('${path}') GROUP BY 1 ORDER BY 1`
        )).map((r) => r.n as number)
      })
    )
    // 20 MB of strings in groups of ~4,200 rows (DuckDB rounds up to its 2,048-row chunks)
    expect(groups.length, groups.join(", ")).toBeGreaterThan(1)
    expect(groups.length, groups.join(", ")).toBeLessThan(5)
    expect(groups.reduce((a, b) => a + b, 0)).toBe(10_000)
  })

  it("rewrite merges files into one: sorted by the key, then by input and row order; ~2 MB compressed per row group; a missing input fails with the path", async () => {
    const dir = temp.make()
    const out = join(dir, "merged", "all.parquet")
    const result = await withSink((sink) =>
      Effect.gen(function* () {
        const inputs = [0, 1, 2].map((k) => join(dir, `in-${k}.parquet`))
        // heights 0..2 in every file, labels naming file and row; 20 md5s a row: hardly compressible
        for (const [k, p] of inputs.entries())
          yield* sink.query(
            `COPY (SELECT (r % 3)::BIGINT AS height, 0 AS idx, '${k}:' || r || ':' || concat_ws('', ${Array.from({ length: 20 }, (_, j) => `md5(r::VARCHAR || '${k}${j}')`).join(", ")}) AS label FROM range(4000) t(r) ORDER BY r) TO '${p}' (FORMAT PARQUET)`
          )
        const merged = yield* sink.rewrite(inputs, out, ["height"])
        const firsts = yield* sink.query(
          `SELECT height, split_part(label, ':', 1) || ':' || split_part(label, ':', 2) AS at FROM read_parquet('${out}') LIMIT 4`
        )
        const [ordered] = yield* sink.query(
          `SELECT bool_and(ok) AS ok FROM (SELECT (height, split_part(label, ':', 1)::INT, split_part(label, ':', 2)::INT) >= lag((height, split_part(label, ':', 1)::INT, split_part(label, ':', 2)::INT)) OVER () AS ok FROM read_parquet('${out}')) WHERE ok IS NOT NULL`
        )
        const groups = (yield* sink.query(
          `SELECT row_group_id, any_value(row_group_num_rows)::INTEGER AS n FROM parquet_metadata('${out}') GROUP BY 1 ORDER BY 1`
        )).map((r) => r.n as number)
        const missing = yield* Effect.flip(sink.rewrite([inputs[0], join(dir, "gone.parquet")], join(dir, "x.parquet"), ["height"]))
        writeFileSync(join(dir, "not-parquet.txt"), "user's notes")
        const notParquet = yield* Effect.flip(sink.rewrite([inputs[0], join(dir, "not-parquet.txt")], join(dir, "y.parquet"), ["height"]))
        return { merged, firsts, ordered: ordered.ok, groups, missing, notParquet }
      })
    )
    expect(result.merged).toMatchObject({ path: out, rows: 12_000, sorted: true })
    expect(result.firsts).toEqual([
      { height: 0n, at: "0:0" },
      { height: 0n, at: "0:3" },
      { height: 0n, at: "0:6" },
      { height: 0n, at: "0:9" }
    ])
    expect(result.ordered).toBe(true)
    expect(result.groups.length, result.groups.join(", ")).toBeGreaterThan(1)
    expect(Math.max(...result.groups), result.groups.join(", ")).toBeGreaterThan(2048)
    expect(result.missing).toMatchObject({ _tag: "SinkError", path: join(dir, "x.parquet") })
    expect(result.notParquet).toMatchObject({ _tag: "SinkError", path: join(dir, "y.parquet") })
    expect(readdirSync(dir).sort()).toEqual(["in-0.parquet", "in-1.parquet", "in-2.parquet", "merged", "not-parquet.txt"])
  })

  it("a scratch folder that cannot be made is a SinkError when the first writer opens, not before", async () => {
    const file = join(temp.make(), "a-file")
    writeFileSync(file, "")
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const [one] = yield* sink.query("SELECT 1 AS one")
        const failed = yield* Effect.flip(sink.openFile(columns, ["height"]))
        return { one: one.one, failed }
      }).pipe(Effect.provide(layerParquetSink({ tempDirectory: join(file, "tmp", "writer-1") })), Effect.scoped)
    )
    expect(result.one).toBe(1)
    expect(result.failed).toMatchObject({ _tag: "SinkError", message: expect.stringMatching(/^cannot make DuckDB's scratch folder: /) })
  })

  // (a child process sees no mutant: support/mutation.ts)
  it.skipIf(underMutation)(
    "DuckDB starts when first asked for: a sink that writes and queries nothing never loads it (a process's loaded libraries, read in a child)",
    () => {
      const loaded = (use: string) => {
        const script = [
          `import { Effect } from "effect"`,
          `import { ParquetSink, layerParquetSink } from ${JSON.stringify(join(ROOT, "src", "lake", "ParquetSink.ts"))}`,
          `await Effect.runPromise(Effect.flatMap(ParquetSink, (s) => ${use}).pipe(Effect.provide(layerParquetSink({})), Effect.scoped))`,
          `console.log(process.report.getReport().sharedObjects.some((o) => /duckdb/.test(o)))`
        ].join("\n")
        const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" })
        expect(r.status, r.stderr).toBe(0)
        return r.stdout.trim()
      }
      expect(loaded("Effect.void")).toBe("false")
      expect(loaded(`s.query("SELECT 1")`)).toBe("true")
    }
  )

  it("DuckDB that cannot start, and SQL it refuses, are SinkErrors with DuckDB's reason", async () => {
    const notStarted = await Effect.runPromise(
      Effect.flip(
        Effect.flatMap(ParquetSink, (s) => s.query("SELECT 1")).pipe(
          Effect.provide(layerParquetSink({ memoryLimit: "lots" })),
          Effect.scoped
        )
      )
    )
    expect(notStarted).toMatchObject({ _tag: "SinkError" })
    expect((notStarted as { message: string }).message).toMatch(/^could not start DuckDB: \S/)
    const refused = await withSink((sink) => Effect.flip(sink.query("SELEC 1")))
    expect(refused).toMatchObject({ _tag: "SinkError", message: expect.stringMatching(/syntax error/i) })
  })
})

// the slowest (DuckDB past its memory limit): last, so that a mutant an earlier test kills never waits for them
describe("memory", () => {
  it("DuckDB past its memory limit spills into a scratch folder whose parents do not exist yet (it used to fail the run), and writers go on", async () => {
    const scratch = join(temp.make(), "lake", ".chain-lake", "tmp", "writer-1")
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openFile(columns, ["height"])
        // a sort of ~5M rows in a sink of 64 MB: DuckDB must spill to answer
        const [sorted] = yield* sink.query(
          "SELECT count(*) AS n FROM (SELECT x FROM range(5000000) t(x) ORDER BY md5(x::varchar) LIMIT 4999999)"
        )
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
    // the sink's scratch folder goes with the sink
    expect(existsSync(scratch)).toBe(false)
  }, 120_000)

  it("a writer that finishes file after file holds the memory of one file's rows, not of every file it wrote (DuckDB keeps a table's deleted rows)", async () => {
    const used = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openFile(columns, ["height"])
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
        const a = yield* sink.openFile(columns, ["height"])
        const b = yield* sink.openFile(columns, ["height"])
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

describe("large rows", () => {
  const big = (i: number, size: number): ReadonlyArray<Value> => [i, 0, `${i}:`.padEnd(size, "z")]

  it("a writer of large rows is full once a COPY of its rows would need more than the sink gives one; one of ordinary rows never is", async () => {
    const MB = 2 ** 20
    // a COPY holds ~3.4× one chunk (2,048 rows, or all of them when fewer) and ~8 MB more
    expect(copyMemory(0, 0)).toBe(0)
    expect(copyMemory(24 * MB, 8192)).toBeCloseTo(8 * MB + 3.4 * 6 * MB, -3)
    expect(copyMemory(24 * MB, 600)).toBeCloseTo(8 * MB + 3.4 * 24 * MB, -3)
    const [largeAt, ordinaryFull] = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const large = yield* sink.openFile(columns, ["height"])
        let i = 0
        while (!large.full()) large.append(big(i++, 40_000))
        const ordinary = yield* sink.openFile(columns, ["height"])
        // 12 MB of 1 kB rows: a chunk of 2 MB, whatever the file
        for (let j = 0; j < 12_000; j++) ordinary.append(big(j, 1000))
        const result = [large.stagedBytes(), ordinary.full()] as const
        yield* large.close()
        yield* ordinary.close()
        return result
      }).pipe(Effect.provide(layerParquetSink({ copyBytes: 20 * MB })), Effect.scoped)
    )
    // (20 - 8) / 3.4 MB, give or take a row
    expect(largeAt / MB).toBeGreaterThan(3.4)
    expect(largeAt / MB).toBeLessThan(3.6)
    expect(ordinaryFull).toBe(false)
  })

  it("rows of 40 kB written when full COPY within DuckDB's floor of 96 MiB, file after file; the same rows staged to 40 MB do not", async () => {
    const MB = 2 ** 20
    const outcome = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openFile(columns, ["height"])
        const dir = temp.make()
        let files = 0
        for (let i = 0; i < 1000; i++) {
          writer.append(big(i, 40_000))
          if (writer.full()) yield* writer.finish(join(dir, `part-${files++}.parquet`))
        }
        yield* writer.finish(join(dir, `part-${files++}.parquet`))
        const [back] = yield* sink.query(`SELECT count(*) AS n, count(DISTINCT height) AS k FROM read_parquet('${dir}/*.parquet')`)
        // the same rows in one file of 40 MB: past what DuckDB's 96 MiB holds beside them
        for (let i = 0; i < 1000; i++) writer.append(big(i, 40_000))
        const whole = yield* Effect.either(writer.finish(join(dir, "whole.parquet")))
        yield* writer.close()
        return { files, back, whole: whole._tag === "Left" ? whole.left.message.split("\n")[0] : "written" }
      }).pipe(Effect.provide(layerParquetSink({ memoryLimit: "96MiB", copyBytes: 56 * MB })), Effect.scoped)
    )
    expect(outcome.files).toBeGreaterThan(2)
    expect(outcome.back).toEqual({ n: 1000n, k: 1000n })
    expect(outcome.whole).toMatch(/Out of Memory/)
  }, 60_000)

  it("an appender hands rows of large records to its table every 8 MB (its chunk of 2,048 rows lives outside DuckDB's memory limit)", async () => {
    const used = await Effect.runPromise(
      Effect.gen(function* () {
        const sink = yield* ParquetSink
        const writer = yield* sink.openFile(columns, ["height"])
        // 20 MB in 500 rows: within one chunk of 2,048
        for (let i = 0; i < 500; i++) writer.append(big(i, 40_000))
        const [m] = yield* sink.query("SELECT sum(memory_usage_bytes)::BIGINT AS used FROM duckdb_memory()")
        yield* writer.close()
        return Number(m.used) / 2 ** 20
      }).pipe(Effect.provide(layerParquetSink({ memoryLimit: "512MB" })), Effect.scoped)
    )
    // two hand-overs of ~8 MB: in DuckDB's count (the rows left in the chunk are not)
    expect(used).toBeGreaterThan(14)
  })
})

describe("a run's --memory-limit, shared out", () => {
  it("past the process base, DuckDB gets 40% (96 MB at least), writers stage a third of that in all (at most half of what a COPY leaves), and files are written as many at a time as a COPY's share fits", async () => {
    const MB = 2 ** 20
    expect(parseMemorySize("400MB")).toBe(400 * MB)
    expect(parseMemorySize("1.5GB")).toBe(1536 * MB)
    expect(parseMemorySize("lots")).toBeUndefined()
    expect(PROCESS_BASE_BYTES).toBe(100 * MB)
    // 120 MB for DuckDB: a third is 40 MB, but a COPY's 56 MB leaves 64, half of it 32
    expect(sinkMemory(400 * MB)).toEqual({ memoryLimit: "120MiB", stagingBudget: 32 * MB, copies: 1, copyBytes: 56 * MB })
    // as many COPYs at once as 56 MB each fit beside what is staged: (369 - 123) / 56
    expect(sinkMemory(1024 * MB)).toEqual({
      memoryLimit: "369MiB",
      stagingBudget: Math.floor((924 * MB * 0.4) / 3),
      copies: 4,
      copyBytes: 56 * MB
    })
    // a small limit: DuckDB keeps its floor, and what is staged shrinks with what is left
    expect(sinkMemory(250 * MB)).toEqual({ memoryLimit: "96MiB", stagingBudget: 20 * MB, copies: 1, copyBytes: 56 * MB })
    expect(sinkMemory(128 * MB)).toEqual({
      memoryLimit: "96MiB",
      stagingBudget: Math.floor((28 * MB * 0.4) / 3),
      copies: 1,
      copyBytes: 56 * MB
    })
    expect(sinkMemory(50 * MB).stagingBudget).toBe(0)
    // Node gets the rest, and the bodies of pages in flight 6% of it: 15 MB at 512MB, 33 MB at 1GB
    expect(nodeShareBytes(512 * MB)).toBe((512 - 100 - 164) * MB)
    expect(runMemory(512 * MB)).toEqual({ limitBytes: 512 * MB, pageBytes: Math.floor(248 * MB * 0.06) })
    expect(runMemory(1024 * MB).pageBytes).toBe(Math.floor((1024 - 100 - 369) * MB * 0.06))
    // the smallest limit an export stays within: Node's floor of 160 MB past the base and DuckDB's share, in steps of 16 MB
    expect(MIN_MEMORY_LIMIT_BYTES).toBe(368 * MB)
    expect(nodeShareBytes(MIN_MEMORY_LIMIT_BYTES)).toBeGreaterThanOrEqual(NODE_FLOOR_BYTES)
    expect(nodeShareBytes(MIN_MEMORY_LIMIT_BYTES - 16 * MB)).toBeLessThan(NODE_FLOOR_BYTES)
    // what the lake's writer hands DuckDB is that share, and the sink says how many files it writes at once
    const [setting, writesAtOnce] = await Effect.runPromise(
      Effect.flatMap(ParquetSink, (s) =>
        Effect.map(s.query("SELECT current_setting('memory_limit') AS m"), ([r]) => [r.m, s.writesAtOnce] as const)
      ).pipe(Effect.provide(layerLake(temp.make(), { memoryLimitBytes: 1024 * MB })), Effect.scoped)
    )
    // in MiB: DuckDB reads "MB" as 10^6 bytes (369MB would be 351.9 MiB)
    expect(String(setting)).toBe("369.0 MiB")
    expect(writesAtOnce).toBe(4)
  })
})
