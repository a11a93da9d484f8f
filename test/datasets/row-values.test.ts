/**
 * Every indexer dataset's row builder, in this process: each record of the devnet's lists (read
 * over loopback HTTP with plain fetch, every page) through the dataset module's `toRows`, the
 * values put in the form DuckDB reads them back in, and compared column by column with the rows
 * test/support/chain-model.ts builds from the devnet's chain model. No engine, no Parquet: a
 * second, much cheaper guard of what export-values checks end to end, so that mutation testing
 * kills a row builder's mutant here in a second instead of in an export.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DATASETS } from "../../src/datasets/index.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { NO_CONTEXT, type AppendDataset, type SnapshotDataset, type SnapshotInput, type SnapshotList } from "../../src/engine/Dataset.js"
import type { ListRef } from "../../src/engine/Source.js"
import type { ColumnType, Value } from "../../src/lake/columns.js"
import { accountBech32 } from "../../src/datasets/addresses.js"
import { differences, expectedLake, type ExpectedDataset } from "../support/chain-model.js"

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

/** Every record of a list, page by page with the indexer's cursor (with the list's own query, and in descending order if asked). */
const readList = async (path: string, arrayKey: string, query: ListRef["query"] = {}, reverse = false): Promise<Array<unknown>> => {
  const records: Array<unknown> = []
  let key: string | null = null
  for (let pages = 0; pages < 1000; pages++) {
    const url = new URL(path, devnet.indexerUrl)
    for (const [name, value] of Object.entries(query))
      for (const v of [value].flat()) if (v !== undefined) url.searchParams.append(name, String(v))
    url.searchParams.set("pagination.limit", "100")
    if (reverse) url.searchParams.set("pagination.reverse", "true")
    if (key !== null) url.searchParams.set("pagination.key", key)
    const body = (await (await fetch(url)).json()) as Record<string, unknown> & { pagination: { next_key: string | null } }
    records.push(...(body[arrayKey] as Array<unknown>))
    key = body.pagination.next_key
    if (!key) return records
  }
  throw new Error(`${path}: more than 1000 pages`)
}

/** An RFC 3339 UTC time as DuckDB's strftime prints it with `digits` of fraction. */
const utcText = (v: string, digits: number) => {
  const m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(v)
  return m ? `${m[1]} ${m[2]}.${(m[3] ?? "").slice(0, digits).padEnd(digits, "0")}` : `not a UTC timestamp: ${v}`
}

/** A row value as DuckDB reads the Parquet column back (getRowObjectsJson; timestamps as '%Y-%m-%d %H:%M:%S.%f'). */
const asRead = (type: ColumnType, v: Value): unknown => {
  if (v === null) return null
  switch (type) {
    case "BIGINT":
      return String(v)
    case "VARCHAR[]":
      return JSON.parse(String(v))
    // RFC 3339 in UTC; DuckDB keeps microseconds (TIMESTAMP) or nanoseconds (TIMESTAMP_NS) and drops the rest
    case "TIMESTAMP":
      return utcText(String(v), 6)
    case "TIMESTAMP_NS":
      return utcText(String(v), 9)
    default:
      return v
  }
}

const APPEND = DATASETS.filter((d): d is AppendDataset => d.kind === "append")

describe("row builders against the chain model", () => {
  it("the append datasets: every column of every row, from every record of the devnet's lists", async () => {
    const blocks = (await readList("/indexer/block/v1/blocks", "blocks")) as Array<{ height: string | number; timestamp: string }>
    const blockTimes = new Map(blocks.map((b) => [Number(b.height), b.timestamp]))
    // the blocks' cosmos tx hashes, which receipts standing for cosmos txs link to
    const cosmosTxs = new Map<number, Array<string>>()
    for (const t of (await readList("/indexer/tx/v1/txs", "txs")) as Array<{ height: string; txhash: string }>)
      cosmosTxs.set(Number(t.height), [...(cosmosTxs.get(Number(t.height)) ?? []), t.txhash])
    const context = {
      cosmosTxHashes: (height: number) => cosmosTxs.get(height) ?? [],
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
      const source = d.list
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

const SNAPSHOT = DATASETS.filter((d): d is SnapshotDataset => d.kind === "snapshot")

/** A snapshot's lists, named as the engine would ask: readAll over plain fetch, committed blocks as the block list's fee denoms. */
const snapshotLists = async (d: SnapshotDataset, params: SnapshotInput["params"] = {}) => {
  const input: SnapshotInput = {
    params,
    readAll: (list, validate) =>
      Effect.promise(async () => {
        const items = await readList(list.path, list.arrayKey, list.query)
        for (const item of items) expect(validate(item), `${d.name}: ${list.endpoint} item refused`).toBeUndefined()
        return items
      }),
    // the one committed read a snapshot makes (holders' default denoms): its SQL run by DuckDB
    // over a table `committed` of the blocks list's total_fee, as the column is stored (JSON text)
    readCommitted: (dataset, select) =>
      Effect.promise(async () => {
        expect(dataset).toBe("blocks")
        const blocks = (await readList("/indexer/block/v1/blocks", "blocks")) as Array<{ total_fee: unknown }>
        const db = await DuckDBInstance.create(":memory:")
        const conn = await db.connect()
        try {
          await conn.run("CREATE TABLE committed (total_fee JSON)")
          const appender = await conn.createAppender("committed")
          for (const b of blocks) {
            appender.appendVarchar(JSON.stringify(b.total_fee))
            appender.endRow()
          }
          appender.closeSync()
          return (await conn.runAndReadAll(select)).getRowObjectsJson() as Array<Record<string, unknown>>
        } finally {
          conn.closeSync()
          db.closeSync()
        }
      })
  }
  return Effect.runPromise(d.lists(input))
}

describe("snapshot row builders against the chain model", () => {
  it("nft_collections, nft_tokens and holders: every column of every row, from every item of their lists", async () => {
    expect(SNAPSHOT.map((d) => d.name).sort()).toEqual(["holders", "nft_collections", "nft_tokens"])
    for (const d of SNAPSHOT) {
      const lists = await snapshotLists(d)
      if (!Array.isArray(lists)) throw new Error(`${d.name}: skipped (${JSON.stringify(lists)})`)
      const expected = model.get(d.name)!
      const snapshotHeight = expected.rows[0]?.snapshot_height
      // the item's columns: snapshot_time, last, is the engine's
      expect(d.columns.at(-1)?.name).toBe("snapshot_time")
      const columns = d.columns.slice(0, -1)
      const named = []
      for (const list of lists as ReadonlyArray<SnapshotList>) {
        for (const item of await readList(list.list.path, list.list.arrayKey, list.list.query, list.reverse)) {
          expect(list.validate(item), `${d.name}: ${list.label}: item refused`).toBeUndefined()
          for (const row of list.toRows(item)) {
            expect(row.length, `${d.name}: one value per column`).toBe(columns.length)
            named.push({ ...Object.fromEntries(columns.map((c, i) => [c.name, asRead(c.type, row[i])])), snapshot_height: snapshotHeight })
          }
        }
      }
      expect(differences(expected, named), `${d.name}: rows that differ from the chain model`).toEqual([])
      expect(named.length, `${d.name}: row count`).toBe(expected.rows.length)
      expect(named.length, `${d.name}: the devnet has rows of it`).toBeGreaterThan(0)
    }
  })

  it("the lists as named: labels, paths, query and order; the collections total is an estimate", async () => {
    const listsOf = new Map<string, ReadonlyArray<SnapshotList>>()
    for (const d of SNAPSHOT) listsOf.set(d.name, (await snapshotLists(d)) as ReadonlyArray<SnapshotList>)
    const described = (name: string) =>
      listsOf
        .get(name)!
        .map((l) => ({ label: l.label, ...l.list, reverse: l.reverse ?? false, totalIsEstimate: l.totalIsEstimate ?? false }))
    // offset keys: next_key only after a full page (a short page naming one was cut short)
    expect(described("nft_collections")).toEqual([
      {
        label: "collections",
        endpoint: "collections",
        path: "/indexer/nft/v1/collections",
        arrayKey: "collections",
        keys: "offset",
        reverse: false,
        totalIsEstimate: true
      }
    ])
    const tokenLists = described("nft_tokens")
    expect(tokenLists.length).toBe(devnet.chain.u.collections.filter((c) => c.createdAt <= devnet.chain.tip).length)
    for (const l of tokenLists) {
      const address = l.label.replace("tokens of ", "")
      expect(l).toEqual({
        label: `tokens of ${address}`,
        endpoint: "tokens/by_collection",
        path: `/indexer/nft/v1/tokens/by_collection/${address}`,
        arrayKey: "tokens",
        query: { order_by: "token_id" },
        keys: "offset",
        reverse: false,
        totalIsEstimate: false
      })
    }
    expect(described("holders").map((l) => [l.label, l.reverse, l.totalIsEstimate, l.keys])).toEqual(
      model
        .get("holders")!
        .rows.map((r) => r.denom)
        .filter((d, i, all) => all.indexOf(d) === i)
        .sort()
        .map((d) => [`holders of ${d}`, true, false, "offset"])
    )
  })

  it("holders: the denoms asked for, in the list paths, or a skip with its hint when there are none", async () => {
    const holders = SNAPSHOT.find((d) => d.name === "holders")!
    const named = (await snapshotLists(holders, { denoms: ["uinit", "a/b c"] })) as ReadonlyArray<SnapshotList>
    expect(named.map((l) => [l.label, l.list.path, l.list.arrayKey, l.list.endpoint, l.reverse])).toEqual([
      ["holders of uinit", "/indexer/richlist/v1/uinit", "holders", "richlist", true],
      ["holders of a/b c", "/indexer/richlist/v1/a%2Fb%20c", "holders", "richlist", true]
    ])
    const noDenoms: SnapshotInput = { params: {}, readAll: () => Effect.succeed([]), readCommitted: () => Effect.succeed([]) }
    expect(await Effect.runPromise(holders.lists(noDenoms))).toEqual({
      skip: "no denoms",
      hint: "pass --denoms, or export blocks first (their total_fee denoms are the default)"
    })
    // an empty --denoms list is no list: the committed blocks' denoms stand
    const fromBlocks: SnapshotInput = {
      params: { denoms: [] },
      readAll: () => Effect.succeed([]),
      readCommitted: () => Effect.succeed([{ denom: "uzz" }, { denom: "uaa" }, { denom: "uzz" }])
    }
    expect(((await Effect.runPromise(holders.lists(fromBlocks))) as ReadonlyArray<SnapshotList>).map((l) => l.label)).toEqual([
      "holders of uaa",
      "holders of uzz"
    ])
  })

  it("holders: an empty amount on the wire is NULL in both amount columns", async () => {
    const holders = SNAPSHOT.find((d) => d.name === "holders")!
    const [list] = (await snapshotLists(holders, { denoms: ["uinit"] })) as ReadonlyArray<SnapshotList>
    const account = "0x00000000000000000000000000000000000000AB"
    for (const amount of ["", undefined])
      expect(list.toRows({ account, ...(amount === undefined ? {} : { amount }) })).toEqual([
        ["uinit", "0x00000000000000000000000000000000000000ab", accountBech32("0x00000000000000000000000000000000000000ab"), null, null]
      ])
    expect(list.toRows({ account, amount: "12" })[0].slice(3)).toEqual(["12", "12"])
  })
})
