/**
 * The schema convention (docs/schema.md), enforced: every column of every dataset in the registry
 * and of every analytics view (DESCRIBEd by real DuckDB over an empty lake) follows its naming
 * and type rules. A new column that breaks one fails here, naming it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Analytics, analyticsViews, layerAnalytics } from "../../src/analytics/Analytics.js"
import { DATASETS } from "../../src/datasets/index.js"

interface Described {
  readonly table: string
  readonly name: string
  readonly type: string
  readonly description?: string
}

/** Names retired by the convention, and names too vague to say what they hold. */
const FORBIDDEN = new Set([
  "hash",
  "txhash",
  "transaction_hash",
  "block_number",
  "transaction_index",
  "address",
  "account",
  "owner",
  "creator",
  "sender",
  "from",
  "to",
  "index",
  "parent_index",
  "collection",
  "value_wei",
  "amount_decimal",
  "block_time"
])
/** Exact amounts: base units as DECIMAL(38,0) (or HUGEINT, a sum of them). */
const AMOUNT = /^(amount|value|volume|delta)$|_amount$|^amount_(in|out)$|^estimated_amount_out$/
const EXACT = new Set(["DECIMAL(38,0)", "HUGEINT"])

/** Every broken rule of one column, as text naming it. */
const problems = (c: Described, siblings: ReadonlySet<string>, reserved: ReadonlySet<string>): Array<string> => {
  const at = `${c.table}.${c.name} (${c.type})`
  const out: Array<string> = []
  const rule = (ok: boolean, what: string) => (ok ? undefined : out.push(`${at}: ${what}`))
  rule(/^[a-z][a-z0-9_]*$/.test(c.name), "not lowercase snake_case")
  rule(!reserved.has(c.name), "an SQL keyword DuckDB reserves: needs quoting")
  rule(!FORBIDDEN.has(c.name) && !/_(hex|addr)$/.test(c.name), "a name the convention retired or too vague (docs/schema.md)")
  if (c.name === "height" || c.name.endsWith("_height")) rule(c.type === "BIGINT", "a height is BIGINT")
  else rule(!c.name.includes("height") || c.name === "height_bucket", "a height column is `height` or `<what>_height`")
  if (c.name.includes("hash"))
    rule(
      /(^|_)(tx|block)_hash$/.test(c.name) && c.type === "VARCHAR",
      "a hash is `tx_hash`, `block_hash` or `<what>_tx_hash`/`<what>_block_hash`, VARCHAR"
    )
  if (c.name.endsWith("_address"))
    rule(
      c.type === "VARCHAR" && (c.description === undefined || /canonical/.test(c.description)),
      "an address is VARCHAR, canonical 0x-hex (its description says so)"
    )
  if (c.name.endsWith("_bech32"))
    rule(
      c.type === "VARCHAR" && siblings.has(c.name.replace(/_bech32$/, "_address")),
      "a bech32 column is VARCHAR beside its `_address` twin"
    )
  if (c.type.startsWith("TIMESTAMP")) rule(c.name === "timestamp" || /_(at|time)$/.test(c.name), "a time is `timestamp` or `<what>_at`")
  if (c.name === "timestamp" || c.name.endsWith("_at")) rule(c.type.startsWith("TIMESTAMP"), "`timestamp` and `*_at` are TIMESTAMP")
  if (AMOUNT.test(c.name) && !c.name.startsWith("usd_")) rule(EXACT.has(c.type), "an amount is exact: DECIMAL(38,0)")
  if (c.name.endsWith("_text"))
    rule(c.type === "VARCHAR" && siblings.has(c.name.replace(/_text$/, "")), "a `_text` twin is VARCHAR beside its numeric column")
  if (c.description !== undefined) rule(!c.description.includes("''"), "absent values are NULL, not ''")
  return out
}

let reserved: ReadonlySet<string> = new Set()
let views: Array<Described> = []
const empty = mkdtempSync(join(tmpdir(), "chain-lake-schema-"))

beforeAll(async () => {
  const described = await Effect.runPromise(
    Effect.gen(function* () {
      const a = yield* Analytics
      const words = (yield* a.query("SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'")).rows.map((r) =>
        String(r[0])
      )
      const columns: Array<Described> = []
      for (const v of analyticsViews())
        for (const r of (yield* a.query(`DESCRIBE ${v.name}`)).rows) columns.push({ table: v.name, name: String(r[0]), type: String(r[1]) })
      return { words, columns }
    }).pipe(Effect.provide(layerAnalytics({ dataDir: empty })), Effect.scoped)
  )
  reserved = new Set(described.words)
  views = described.columns
})
afterAll(() => rmSync(empty, { recursive: true, force: true }))

describe("the schema convention (docs/schema.md)", () => {
  it("DuckDB's reserved keywords are known (the check below can fail)", () => {
    expect([...reserved]).toEqual(expect.arrayContaining(["from", "to", "order", "select"]))
    expect(problems({ table: "t", name: "from", type: "VARCHAR" }, new Set(), reserved).length).toBeGreaterThan(0)
    expect(problems({ table: "t", name: "amount", type: "VARCHAR" }, new Set(), reserved)).toEqual([
      "t.amount (VARCHAR): an amount is exact: DECIMAL(38,0)"
    ])
  })

  it("every dataset's columns follow it", () => {
    const broken = DATASETS.flatMap((d) => {
      const names = new Set(d.columns.map((c) => c.name))
      return d.columns.flatMap((c) => problems({ table: d.name, ...c }, names, reserved))
    })
    expect(broken).toEqual([])
  })

  it("every view's columns follow it", () => {
    expect(new Set(views.map((v) => v.table)).size).toBe(analyticsViews().length)
    const broken = views.flatMap((c) => problems(c, new Set(views.filter((v) => v.table === c.table).map((v) => v.name)), reserved))
    expect(broken).toEqual([])
  })
})
