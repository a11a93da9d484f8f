/**
 * The HTML report: one self-contained file (inline SVG, inline CSS, no scripts, no network at
 * view time) with a chart per main question, each drawn from a Vega-Lite spec rendered to SVG
 * by `vega` in Node, over the Analytics views.
 */
import { writeFile } from "node:fs/promises"
import { Effect } from "effect"
import * as vega from "vega"
import { compile, type TopLevelSpec } from "vega-lite"
import { Analytics, AnalyticsError, type SqlError } from "./Analytics.js"

export interface Chart {
  readonly id: string
  readonly title: string
  readonly question: string
  /** rows → Vega-Lite spec; undefined rows means the data is not in the lake yet */
  readonly sql: string
  readonly spec: (rows: Array<Record<string, unknown>>) => TopLevelSpec
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))

export const CHARTS: ReadonlyArray<Chart> = [
  {
    id: "daily-activity",
    title: "Daily activity",
    question: "How many txs (and failed txs) does the chain carry per day?",
    sql: "SELECT CAST(day AS VARCHAR) AS day, txs, coalesce(failed_txs, 0) AS failed_txs FROM daily_activity ORDER BY day",
    spec: (rows) => ({
      data: { values: rows.flatMap((r) => [{ day: r.day, kind: "succeeded", txs: num(r.txs)! - num(r.failed_txs)! }, { day: r.day, kind: "failed", txs: num(r.failed_txs) }]) },
      mark: "bar",
      encoding: {
        x: { field: "day", type: "ordinal", title: "day (UTC)" },
        y: { field: "txs", type: "quantitative", stack: "zero", title: "txs" },
        color: { field: "kind", type: "nominal", scale: { domain: ["succeeded", "failed"], range: ["#4c78a8", "#e45756"] } }
      }
    })
  },
  {
    id: "activity-by-height",
    title: "Activity over the chain's life",
    question: "How do txs and gas per block change with height (100-block windows)?",
    sql: "SELECT (height // 100) * 100 AS window_start, avg(tx_count) AS txs_per_block, avg(gas_used) AS gas_per_block FROM blocks GROUP BY ALL ORDER BY 1",
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ window: num(r.window_start), txs: num(r.txs_per_block) })) },
      mark: { type: "line", point: true },
      encoding: { x: { field: "window", type: "quantitative", title: "height (window start)" }, y: { field: "txs", type: "quantitative", title: "mean txs per block" } }
    })
  },
  {
    id: "block-times",
    title: "Block times",
    question: "How long between blocks? Distribution of block_time (ms).",
    sql: "SELECT block_time FROM blocks WHERE block_time > 0",
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ ms: num(r.block_time) })) },
      mark: "bar",
      encoding: { x: { field: "ms", type: "quantitative", bin: { maxbins: 30 }, title: "block time (ms)" }, y: { aggregate: "count", type: "quantitative", title: "blocks" } }
    })
  },
  {
    id: "message-mix",
    title: "Message mix",
    question: "Which message types are sent, and how often do their txs fail?",
    sql: "SELECT message_type, messages, failure_rate FROM msg_type_mix",
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ type: String(r.message_type).split(".").pop(), messages: num(r.messages), failure: num(r.failure_rate) })) },
      mark: "bar",
      encoding: {
        y: { field: "type", type: "nominal", sort: "-x", title: null },
        x: { field: "messages", type: "quantitative" },
        color: { field: "failure", type: "quantitative", title: "failure rate", scale: { scheme: "orangered" } }
      }
    })
  },
  {
    id: "holder-lorenz",
    title: "Holder concentration (Lorenz curve)",
    question: "How evenly is each token held at the latest rich-list snapshot? The further below the diagonal, the more concentrated.",
    sql: `WITH latest AS (SELECT denom, max(snapshot_height) AS h FROM holders GROUP BY denom),
          h AS (SELECT holders.denom, CAST(amount AS DOUBLE) AS amount FROM holders JOIN latest ON holders.denom = latest.denom AND holders.snapshot_height = latest.h WHERE TRY_CAST(amount AS HUGEINT) > 0)
          SELECT CASE WHEN length(denom) > 20 THEN left(denom, 16) || '…' ELSE denom END AS denom,
                 row_number() OVER w / count(*) OVER (PARTITION BY denom) AS holders_share,
                 sum(amount) OVER w / sum(amount) OVER (PARTITION BY denom) AS amount_share
          FROM h WINDOW w AS (PARTITION BY denom ORDER BY amount ASC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`,
    spec: (rows) => ({
      data: { values: [...rows.map((r) => ({ denom: r.denom, x: num(r.holders_share), y: num(r.amount_share) })), ...[...new Set(rows.map((r) => r.denom))].map((denom) => ({ denom, x: 0, y: 0 }))] },
      layer: [
        { mark: { type: "line", point: false }, encoding: { x: { field: "x", type: "quantitative", title: "share of holders (poorest first)" }, y: { field: "y", type: "quantitative", title: "share of the amount" }, color: { field: "denom", type: "nominal" }, order: { field: "x" } } },
        { data: { values: [{ x: 0, y: 0 }, { x: 1, y: 1 }] }, mark: { type: "line", strokeDash: [4, 4], color: "#999" }, encoding: { x: { field: "x", type: "quantitative" }, y: { field: "y", type: "quantitative" } } }
      ]
    })
  },
  {
    id: "route-quotes",
    title: "Route quotes vs amount",
    question: "How does the price impact of a route grow with the amount sent? (default options, median over samples)",
    sql: "SELECT pair, CAST(amount_in AS DOUBLE) AS amount_in, coalesce(median_price_impact_percent, 0) AS impact, availability FROM route_quote_stats WHERE variant = 'default' AND availability > 0",
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ pair: String(r.pair).replace(/\/(ibc|evm)\/[^ ]+/g, "/$1/…").slice(0, 48), amount: num(r.amount_in), impact: num(r.impact) })) },
      mark: { type: "line", point: true },
      encoding: {
        x: { field: "amount", type: "quantitative", scale: { type: "log" }, title: "amount in (base units, log scale)" },
        y: { field: "impact", type: "quantitative", title: "price impact (%)" },
        color: { field: "pair", type: "nominal", legend: { orient: "bottom", columns: 1 } }
      }
    })
  },
  {
    id: "nft-ownership",
    title: "NFT ownership",
    question: "Per collection at the latest snapshot: live tokens and distinct owners.",
    sql: "SELECT collection_name, tokens, owners FROM nft_collection_stats WHERE snapshot_height = (SELECT max(snapshot_height) FROM nft_collection_stats)",
    spec: (rows) => ({
      data: { values: rows.flatMap((r) => [{ collection: r.collection_name, what: "tokens", n: num(r.tokens) }, { collection: r.collection_name, what: "owners", n: num(r.owners) }]) },
      mark: "bar",
      encoding: {
        y: { field: "collection", type: "nominal", title: null },
        yOffset: { field: "what" },
        x: { field: "n", type: "quantitative", title: "count" },
        color: { field: "what", type: "nominal" }
      }
    })
  }
]

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

export const renderChartSvg = (spec: TopLevelSpec) =>
  Effect.tryPromise({
    try: async () => {
      const compiled = compile({ width: 640, height: 260, ...spec } as TopLevelSpec).spec
      const view = new vega.View(vega.parse(compiled), { renderer: "none" })
      const svg = await view.toSVG()
      view.finalize()
      return svg
    },
    catch: (e) => new AnalyticsError({ message: `rendering a chart failed: ${(e as Error).message}` })
  })

export interface ReportSummary {
  readonly path: string
  readonly charts: ReadonlyArray<{ readonly id: string; readonly rows: number }>
}

/** Builds the report over the Analytics views and writes it to `path`. */
export const writeReport = (path: string): Effect.Effect<ReportSummary, AnalyticsError | SqlError, Analytics> =>
  Effect.gen(function* () {
    const analytics = yield* Analytics
    const sections: Array<string> = []
    const charts: Array<{ id: string; rows: number }> = []
    for (const chart of CHARTS) {
      const result = yield* analytics.query(chart.sql)
      const rows = result.rows.map((row) => Object.fromEntries(result.columns.map((c, i) => [c.name, row[i]])))
      charts.push({ id: chart.id, rows: rows.length })
      const body = rows.length === 0 ? `<p class="empty">No data yet: export the datasets this chart reads.</p>` : yield* renderChartSvg(chart.spec(rows))
      sections.push(`<figure class="chart" id="${chart.id}" data-rows="${rows.length}"><h2>${escapeHtml(chart.title)}</h2><p class="question">${escapeHtml(chart.question)}</p>${body}</figure>`)
    }
    const stats = yield* analytics.query("SELECT (SELECT count(*) FROM blocks) AS blocks, (SELECT count(*) FROM txs) AS txs, (SELECT max(height) FROM blocks) AS tip")
    const [blocks, txs, tip] = stats.rows[0] ?? []
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chain-lake report</title>
<style>
body{font-family:system-ui,-apple-system,sans-serif;margin:2rem auto;max-width:760px;color:#222}
h1{margin-bottom:.2rem} .meta{color:#666;margin-top:0}
figure.chart{margin:2rem 0;padding:1rem;border:1px solid #eee;border-radius:8px}
figure.chart h2{margin:.2rem 0;font-size:1.2rem} .question{color:#555;margin:.2rem 0 1rem}
.empty{color:#a00}
</style></head>
<body>
<h1>chain-lake report</h1>
<p class="meta">${escapeHtml(String(blocks ?? 0))} blocks (to height ${escapeHtml(String(tip ?? "-"))}), ${escapeHtml(String(txs ?? 0))} txs · generated ${new Date().toISOString()} from ${escapeHtml(analytics.dataDir)}</p>
${sections.join("\n")}
</body></html>
`
    yield* Effect.tryPromise({ try: () => writeFile(path, html), catch: (e) => new AnalyticsError({ message: `cannot write ${path}: ${(e as Error).message}` }) })
    return { path, charts }
  })
