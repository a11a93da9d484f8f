/**
 * The dataset registry: every dataset of the lake is in it once, each declaration is whole (key,
 * sort and partition columns exist, descriptions say something, snapshot datasets end with
 * snapshot_time), and a declaration that names a column it lacks is refused where it is made.
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { DATASETS, EXPORTED_DATASETS } from "../../src/datasets/index.js"
import { blocksList } from "../../src/datasets/lists.js"
import { columnsOf, defineAppend, NO_CONTEXT, partitionOf, SNAPSHOT_TIME } from "../../src/engine/Dataset.js"
import { heightBucket } from "../../src/lake/layout.js"

describe("the registry", () => {
  it("holds every dataset of the lake once; export takes the indexer's, the samplers write the router's", () => {
    expect(DATASETS.map((d) => d.name)).toEqual([
      "blocks",
      "txs",
      "evm_txs",
      "evm_logs",
      "evm_internal_txs",
      "token_transfers_evm",
      "token_transfers_cosmos",
      "nft_transfers",
      "nft_collections",
      "nft_tokens",
      "holders",
      "route_quotes",
      "router_assets",
      "router_chains",
      "transfers"
    ])
    expect(EXPORTED_DATASETS.map((d) => d.name)).toEqual(DATASETS.filter((d) => d.kind !== "sample").map((d) => d.name))
    expect(DATASETS.filter((d) => d.kind === "sample").map((d) => d.name)).toEqual([
      "route_quotes",
      "router_assets",
      "router_chains",
      "transfers"
    ])
  })

  it("the README's dataset table lists every exported dataset, and its query section every dataset view", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
    for (const d of EXPORTED_DATASETS) expect(readme, d.name).toMatch(new RegExp(`^\\| \`${d.name}\` \\|`, "m"))
    const querySection = readme.slice(readme.indexOf("### `chain-lake query`"))
    for (const d of EXPORTED_DATASETS) expect(querySection.slice(0, 1200), d.name).toContain(`\`${d.name}\``)
    // and its view table every view of src/analytics/sql
    for (const file of readdirSync(new URL("../../src/analytics/sql", import.meta.url)).filter((f) => f.endsWith(".sql"))) {
      const view = file.replace(/\.sql$/, "")
      expect(querySection, view).toMatch(new RegExp(`^\\| \`${view}\` \\|`, "m"))
    }
  })

  it.each(DATASETS.map((d) => [d.name, d] as const))("%s is declared whole", (_, d) => {
    const names = d.columns.map((c) => c.name)
    expect(new Set(names).size).toBe(names.length)
    expect(d.description.length).toBeGreaterThan(10)
    for (const c of d.columns) expect(c.description.length, c.name).toBeGreaterThan(0)
    for (const k of d.key) expect(names).toContain(k)
    for (const k of d.sortKey) expect(names).toContain(k.replace(/ (ASC|DESC)$/i, ""))
    const partition = partitionOf(d)
    if (d.kind === "append") {
      expect(partition).toEqual({ name: "height_bucket", type: "BIGINT" })
      expect(d.columns[d.heightColumn].type).toBe("BIGINT")
    } else if (d.kind === "snapshot") {
      expect(partition).toEqual({ name: "snapshot_height", type: "BIGINT" })
      expect(d.columns.at(-1)).toEqual(SNAPSHOT_TIME)
    } else {
      expect(partition).toEqual({ name: "date", type: "DATE" })
      expect(d.columns.find((c) => c.name === (d.partition.kind === "date" ? d.partition.column : ""))?.type).toBe("TIMESTAMP")
    }
    // the partition column never shadows a column of the files
    expect(names).not.toContain(partition.name)
  })

  it("a declaration naming a column it does not have is refused where it is made", () => {
    const col = columnsOf<{ height: string }>()
    const declare = (key: Array<string>, sortKey: Array<string>, partitionColumn: string) => () =>
      defineAppend({
        name: "x",
        description: "a test dataset",
        list: blocksList as never,
        columns: [col("height", "BIGINT", "h", (r) => r.height)],
        key,
        sortKey,
        partition: heightBucket(partitionColumn)
      })
    expect(declare(["height"], ["height"], "height")).not.toThrow()
    expect(declare(["hash"], ["height"], "height")).toThrow("x: key column hash is not a column")
    expect(declare(["height"], ["time DESC"], "height")).toThrow("x: sort column time is not a column")
    expect(declare(["height"], ["height"], "block_number")).toThrow("x: partition column block_number is not a column")
    expect(declare(["height"], ["height DESC", "height asc"], "height")).not.toThrow()
    const twice = () =>
      defineAppend({
        name: "y",
        description: "a test dataset",
        list: blocksList as never,
        columns: [col("height", "BIGINT", "h", (r) => r.height), col("height", "VARCHAR", "again", (r) => r.height)],
        key: ["height"],
        sortKey: [],
        partition: heightBucket("height")
      })
    expect(twice).toThrow("y: a column is declared twice")
  })

  it("an append dataset's rows: one per item, values in column order; the block time only where declared", () => {
    const col = columnsOf<{ height: number; note: string }>()
    const columns = [
      col("height", "BIGINT", "h", (r) => r.height),
      col("note", "VARCHAR", "n", (r) => r.note),
      col("at", "TIMESTAMP", "t", (r, context) => context.blockTime(r.height))
    ]
    const base = {
      description: "a test dataset",
      list: blocksList as never,
      columns,
      key: ["height"],
      sortKey: ["height"],
      partition: heightBucket("height")
    }
    const context = { ...NO_CONTEXT, blockTime: (h: number) => `time of ${h}` }
    const perRecord = defineAppend({ ...base, name: "one", blockTime: true })
    expect([perRecord.kind, perRecord.blockTime, perRecord.heightColumn]).toEqual(["append", true, 0])
    expect(perRecord.toRows({ height: 7, note: "a" }, context)).toEqual([[7, "a", "time of 7"]])
    const perItem = defineAppend({
      ...base,
      name: "many",
      items: (r: { heights: Array<number> }) => r.heights.map((height) => ({ height, note: "n" })),
      blockTime: true
    })
    expect(perItem.toRows({ heights: [1, 2] }, context)).toEqual([
      [1, "n", "time of 1"],
      [2, "n", "time of 2"]
    ])
    expect(perItem.toRows({ heights: [] }, context)).toEqual([])
    // undeclared, the block time is not there to read: said, not guessed
    const undeclared = defineAppend({ ...base, name: "nope" })
    expect(undeclared.blockTime).toBe(false)
    expect(() => undeclared.toRows({ height: 1, note: "x" }, NO_CONTEXT)).toThrow(
      "a column reads the block time, but its dataset does not declare blockTime: true"
    )
  })
})
