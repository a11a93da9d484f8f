/** `chain-lake schema`: every dataset and view with its columns, from the registry and DuckDB in memory, with no lake and no server. */
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { analyticsViews } from "../../src/analytics/Analytics.js"
import { lakeSchema, type SchemaEntry } from "../../src/analytics/schema.js"
import { DATASETS } from "../../src/datasets/index.js"
import { partitionOf } from "../../src/engine/Dataset.js"
import { runCli } from "../support/cli.js"
import { tempDirs } from "../support/tmp.js"

const { make: tmp, removeAll } = tempDirs("chain-lake-schema-")
afterAll(removeAll)

describe("chain-lake schema", () => {
  it("--format json: every dataset as the registry declares it (plus its partition column), then every view described by DuckDB; the same as lakeSchema() from TypeScript; run where no lake is", async () => {
    const r = await runCli(["schema", "--format", "json"], { cwd: tmp() })
    expect([r.code, r.stderr]).toEqual([0, ""])
    const entries = JSON.parse(r.stdout) as Array<SchemaEntry>
    expect(entries).toEqual(await Effect.runPromise(lakeSchema()))
    expect(entries.map((e) => e.name)).toEqual([...DATASETS.map((d) => d.name), "snapshots", ...analyticsViews().map((v) => v.name)])
    for (const d of DATASETS) {
      const e = entries.find((x) => x.name === d.name)!
      expect([e.kind, e.description, e.key, e.sortKey, e.partition]).toEqual([
        "dataset",
        d.description,
        d.key,
        d.sortKey,
        partitionOf(d).name
      ])
      expect(e.columns.slice(0, -1)).toEqual(d.columns.map((c) => ({ name: c.name, type: c.type, description: c.description })))
      expect(e.columns.at(-1)).toMatchObject({
        name: partitionOf(d).name,
        type: partitionOf(d).type,
        description: expect.stringMatching(/^partition: /)
      })
    }
    for (const v of analyticsViews()) {
      const e = entries.find((x) => x.name === v.name)!
      expect([e.kind, e.description, e.key, e.sortKey, e.partition], v.name).toEqual(["view", v.description, [], [], null])
      expect(e.description.startsWith(v.question), v.name).toBe(true)
      expect(e.columns.length, v.name).toBeGreaterThan(0)
      for (const c of e.columns) expect(Object.keys(c), v.name).toEqual(["name", "type", "description"])
    }
    const columnsOf = (name: string) => Object.fromEntries(entries.find((e) => e.name === name)!.columns.map((c) => [c.name, c.type]))
    expect(columnsOf("daily_activity")).toMatchObject({ day: "DATE", blocks: "BIGINT", failed_txs: "BIGINT" })
    expect(columnsOf("snapshots")).toMatchObject({ dataset: "VARCHAR", snapshot_height: "BIGINT", exact: "BOOLEAN" })
    expect(columnsOf("holders")).toMatchObject({
      amount: "DECIMAL(38,0)",
      amount_text: "VARCHAR",
      snapshot_time: "TIMESTAMP",
      snapshot_height: "BIGINT"
    })
  })

  it("text: one entry per dataset or view with its key and a table of its columns; --dataset shows one", async () => {
    const r = await runCli(["schema", "--dataset", "blocks"])
    expect([r.code, r.stderr]).toEqual([0, ""])
    const lines = r.stdout.trim().split("\n")
    expect(lines.slice(0, 2)).toEqual([
      `blocks (dataset): ${DATASETS[0].description}`,
      "key: height; sorted by: height; partitioned by: height_bucket"
    ])
    expect(lines[3]).toMatch(/^column +type +description$/)
    for (const c of DATASETS[0].columns)
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(`^${c.name} +${c.type.replace(/[()[\]]/g, "\\$&")} +${c.description.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`)
        )
      )
    const view = await runCli(["schema", "--dataset", "daily_activity"])
    expect(view.code, view.stderr).toBe(0)
    expect(view.stdout).toMatch(/^daily_activity \(view\): How busy is the chain each day\?/)
    expect(view.stdout).toMatch(/\ncolumn +type\n-+ +-+\nday +DATE\n/)
  })

  it("a name that is no dataset or view, or a format it does not write, is a usage error in one line", async () => {
    const [name, format] = await Promise.all([runCli(["schema", "--dataset", "nope"]), runCli(["schema", "--format", "yaml"])])
    expect([name.code, name.stdout]).toEqual([2, ""])
    expect(name.stderr).toMatch(
      /^chain-lake: error: --dataset: no dataset or view named "nope"; known: blocks, txs, .*, snapshots, .*tx_fees\n$/
    )
    expect([format.code, format.stdout]).toEqual([2, ""])
    expect(format.stderr).toMatch(/^chain-lake: error: --format "yaml": Expected one of the following cases: text, json .*\n$/)
  })
})
