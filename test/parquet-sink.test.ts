/**
 * ParquetSink writes rows sorted by the sort key, ties in append order, whether the rows came in
 * order (COPY skips its sort) or not (COPY sorts): real DuckDB, real Parquet files read back.
 */
import { Effect } from "effect"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import type { Column, Value } from "../src/engine/Dataset.js"
import { ParquetSink, layerParquetSink } from "../src/engine/ParquetSink.js"
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
    for (let round = 0; round < 2; round++) {
      for (const row of rows) writer.append(row)
      yield* writer.finish(path)
      const back = yield* sink.query(`SELECT label FROM read_parquet('${path}')`)
      labels.push(back.map((r) => String(r.label)))
    }
    yield* writer.close()
    expect(labels[1]).toEqual(labels[0])
    return labels[0]
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
    expect(await roundTrip(rows, ["height"])).toEqual(["a", "b", "c", "d", "e"])
    expect(await roundTrip(rows, ["height", "idx"])).toEqual(["a", "b", "c", "d", "e"])
  })

  it("sorts rows that did not come in order (numbers, not text; ties in append order)", async () => {
    const rows: Array<Array<Value>> = [
      ["10", 0, "d"],
      ["9", 1, "b"],
      ["9", 0, "a"],
      ["10", 0, "e"],
      ["9", 1, "c"]
    ]
    expect(await roundTrip(rows, ["height"])).toEqual(["b", "a", "c", "d", "e"])
    expect(await roundTrip(rows, ["height", "idx"])).toEqual(["a", "b", "c", "d", "e"])
  })

  it("sorts by keys it cannot track (text, DESC, nulls) whatever the append order", async () => {
    const rows: Array<Array<Value>> = [
      ["1", 0, "b"],
      ["2", 0, "a"],
      ["3", 0, "c"]
    ]
    expect(await roundTrip(rows, ["label"])).toEqual(["a", "b", "c"])
    expect(await roundTrip(rows, ["height DESC"])).toEqual(["c", "a", "b"])
    const withNull: Array<Array<Value>> = [
      [null, 0, "z"],
      ["1", 0, "a"]
    ]
    expect(await roundTrip(withNull, ["height"])).toEqual(["a", "z"])
  })
})
