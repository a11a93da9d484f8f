/**
 * Every indexer dataset's row builder, in this process: each record of the devnet's lists (read
 * over loopback HTTP with plain fetch, every page) through the dataset module's `toRows`, the
 * values put in the form DuckDB reads them back in, and compared column by column with the rows
 * test/support/chain-model.ts builds from the devnet's chain model. No engine, no Parquet: a
 * second, much cheaper guard of what export-values checks end to end, so that mutation testing
 * kills a row builder's mutant here in a second instead of in an export.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DATASETS } from "../src/datasets/index.js"
import { startDevnet, type Devnet } from "../src/devnet/index.js"
import { NO_CONTEXT, type AppendDataset } from "../src/engine/Dataset.js"
import type { ColumnType, Value } from "../src/lake/columns.js"
import { differences, expectedLake, type ExpectedDataset } from "./support/chain-model.js"

const SEED = 11
const BLOCKS = 60
const BUCKET_WIDTH = 50

let devnet: Devnet
let model: Map<string, ExpectedDataset>
beforeAll(async () => {
  devnet = await startDevnet({ seed: SEED, blocks: BLOCKS })
  model = new Map(expectedLake(devnet.chain, BUCKET_WIDTH).map((d) => [d.name, d]))
})
afterAll(() => devnet?.stop())

/** Every record of a list, page by page with the indexer's cursor. */
const readList = async (path: string, arrayKey: string): Promise<Array<unknown>> => {
  const records: Array<unknown> = []
  let key: string | null = null
  for (let pages = 0; pages < 1000; pages++) {
    const url = new URL(path, devnet.indexerUrl)
    url.searchParams.set("pagination.limit", "100")
    if (key !== null) url.searchParams.set("pagination.key", key)
    const body = (await (await fetch(url)).json()) as Record<string, unknown> & { pagination: { next_key: string | null } }
    records.push(...(body[arrayKey] as Array<unknown>))
    key = body.pagination.next_key
    if (!key) return records
  }
  throw new Error(`${path}: more than 1000 pages`)
}

/** A row value as DuckDB reads the Parquet column back (getRowObjectsJson; timestamps as '%Y-%m-%d %H:%M:%S.%f'). */
const asRead = (type: ColumnType, v: Value): unknown => {
  if (v === null) return null
  switch (type) {
    case "BIGINT":
      return String(v)
    case "VARCHAR[]":
      return JSON.parse(String(v))
    case "TIMESTAMP": {
      // RFC 3339 in UTC; DuckDB keeps microseconds and drops the rest
      const m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(String(v))
      if (!m) return `not a UTC timestamp: ${String(v)}`
      return `${m[1]} ${m[2]}.${(m[3] ?? "").slice(0, 6).padEnd(6, "0")}`
    }
    default:
      return v
  }
}

const APPEND = DATASETS.filter((d): d is AppendDataset => d.kind === "append")

describe("row builders against the chain model", () => {
  it("the append datasets: every column of every row, from every record of the devnet's lists", async () => {
    const blocks = (await readList("/indexer/block/v1/blocks", "blocks")) as Array<{ height: string | number; timestamp: string }>
    const blockTimes = new Map(blocks.map((b) => [Number(b.height), b.timestamp]))
    const context = {
      blockTime: (height: number) => {
        const t = blockTimes.get(height)
        if (t === undefined) throw new Error(`no block ${height}`)
        return t
      }
    }
    const lists = new Map<string, Array<unknown>>()
    expect(APPEND.map((d) => d.name).sort()).toEqual(
      ["blocks", "evm_internal_txs", "evm_logs", "evm_txs", "nft_transfers", "token_transfers_cosmos", "token_transfers_evm", "txs"].sort()
    )
    for (const d of APPEND) {
      const source = d.source
      if (!lists.has(source.path)) lists.set(source.path, await readList(source.path, source.arrayKey))
      const records = lists.get(source.path)!
      const rows = records.flatMap((record) => {
        expect(source.validate(record), `${d.name}: a devnet record the source's check refuses`).toBeUndefined()
        return d.toRows(record, d.blockTime ? context : NO_CONTEXT)
      })
      const named = rows.map((row) => {
        expect(row.length, `${d.name}: one value per column`).toBe(d.columns.length)
        const height = Number(row[d.heightColumn])
        return {
          ...Object.fromEntries(d.columns.map((c, i) => [c.name, asRead(c.type, row[i])])),
          height_bucket: String(Math.floor(height / BUCKET_WIDTH) * BUCKET_WIDTH)
        }
      })
      const expected = model.get(d.name)!
      expect(differences(expected, named), `${d.name}: rows that differ from the chain model`).toEqual([])
      expect(named.length, `${d.name}: row count`).toBe(expected.rows.length)
      expect(named.length, `${d.name}: the devnet has rows of it`).toBeGreaterThan(0)
    }
  })
})
