/**
 * The HTML report: one self-contained file (inline SVG, inline CSS, no scripts, no network at
 * view time) with a chart per main question, each drawn from a Vega-Lite spec rendered to SVG
 * by `vega` in Node, over the Analytics views.
 */
import { readFile, writeFile } from "node:fs/promises"
import { Effect } from "effect"
import type { TopLevelSpec } from "vega-lite"
import { Analytics, AnalyticsError, datasetsRead, LAKE_DATASETS, type SqlError } from "./Analytics.js"
import { quoteIdent } from "../lake/sql.js"
import { redact } from "../secrets/redact.js"

export interface Chart {
  readonly id: string
  readonly title: string
  readonly question: string
  /** rows → Vega-Lite spec; undefined rows means the data is not in the lake yet */
  readonly sql: string
  readonly spec: (rows: Array<Record<string, unknown>>) => TopLevelSpec
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v))

/** A long token, collection or denom shortened for a label: its head and tail. */
const SHORT_LABEL_SQL = (column: string) =>
  `CASE WHEN length(${column}) > 22 THEN left(${column}, 12) || '…' || right(${column}, 6) ELSE ${column} END`

/** The time bucket of each row, at the lake's time grain (the time_grain view: at most 60 buckets over the chain's span). */
const BUCKET_SQL = "time_bucket(to_seconds((SELECT seconds FROM time_grain)), timestamp)"
const GRAIN_LABEL_SQL = "(SELECT label FROM time_grain) AS grain, (SELECT seconds FROM time_grain) AS grain_seconds"
/**
 * Whether the bucket starting at `t` lies whole within the blocks' time span: the buckets at
 * either end cover the lake only in part and would show a false drop. Kept all the same where
 * the span holds fewer than 3 buckets (nothing else to show).
 */
const WHOLE_BUCKET_SQL = (t: string) =>
  `(${t} >= (SELECT min(timestamp) FROM blocks) AND ${t} + to_seconds((SELECT seconds FROM time_grain)) <= (SELECT max(timestamp) FROM blocks)
    OR (SELECT count(DISTINCT ${BUCKET_SQL}) FROM blocks) < 3)`
/** The route chart's legend: its color, dash and shape share it. */
const PAIR_LEGEND = { orient: "bottom", columns: 1, labelLimit: 520 } as const
const PARTIAL_NOTE = "buckets the lake covers only in part, at either end, are left out"
/** A UTC time axis labelled at the grain's precision (vega would print local 12-hour times). */
const timeAxis = (rows: Array<Record<string, unknown>>) => {
  const seconds = Number(rows[0]?.grain_seconds ?? 86400)
  const format = seconds < 60 ? "%H:%M:%S" : seconds < 86400 ? "%m-%d %H:%M" : "%Y-%m-%d"
  return {
    field: "t",
    type: "temporal" as const,
    scale: { type: "utc" as const },
    title: `time (UTC, per ${String(rows[0]?.grain ?? "bucket")})`,
    axis: { labelOverlap: true, format }
  }
}
/** A bucket's start as a bar label at the grain's precision ("2026-01-01T00:00:05Z" → "00:00:05"). */
const bucketLabel = (t: unknown, seconds: number) => {
  const text = String(t)
  return seconds < 60 ? text.slice(11, 19) : seconds < 86400 ? text.slice(5, 16).replace("T", " ") : text.slice(0, 10)
}

/** The activity chart's kind of a bucket whose txs were not all exported (blocks count them; which failed is unknown). */
const NOT_SPLIT = "txs not exported"

export const CHARTS: ReadonlyArray<Chart> = [
  {
    id: "activity-over-time",
    title: "Activity over time",
    question: `How many txs (and failed txs) does the chain carry over time? Bucketed by the lake's time grain (daily_activity has them per day; ${PARTIAL_NOTE}).`,
    sql: `WITH b AS (SELECT ${BUCKET_SQL} AS t, sum(tx_count) AS txs FROM blocks GROUP BY ALL),
          f AS (SELECT ${BUCKET_SQL} AS t, count(*) AS exported, count(*) FILTER (WHERE code <> 0) AS failed_txs FROM txs GROUP BY ALL)
          SELECT strftime(t, '%Y-%m-%dT%H:%M:%SZ') AS t, ${GRAIN_LABEL_SQL}, txs,
                 CASE WHEN txs = 0 THEN 0 WHEN exported = txs THEN failed_txs END AS failed_txs
          FROM b LEFT JOIN f USING (t) WHERE ${WHOLE_BUCKET_SQL("t")} ORDER BY t`,
    spec: (rows) => ({
      data: {
        values: rows.flatMap((r) => {
          const bucket = bucketLabel(r.t, Number(r.grain_seconds))
          // a bucket whose txs were not all exported: its failed count is unknown, its total is not
          if (r.failed_txs === null) return [{ bucket, kind: NOT_SPLIT, txs: num(r.txs) }]
          return [
            { bucket, kind: "succeeded", txs: num(r.txs)! - num(r.failed_txs)! },
            { bucket, kind: "failed", txs: num(r.failed_txs) }
          ]
        })
      },
      mark: "bar",
      encoding: {
        x: { field: "bucket", type: "ordinal", sort: null, title: timeAxis(rows).title, axis: { labelOverlap: true, labelAngle: 0 } },
        y: { field: "txs", type: "quantitative", stack: "zero", title: "txs" },
        color: {
          field: "kind",
          type: "nominal",
          title: null,
          scale: { domain: ["succeeded", "failed", NOT_SPLIT], range: ["#4c78a8", "#e45756", "#bab0ac"] },
          legend: { orient: "top" }
        }
      }
    })
  },
  {
    id: "activity-by-height",
    title: "Activity over the chain's life",
    question:
      "How do txs and gas per block change with height? Means over windows of equal height (about 40 windows; a last window shorter than half the others is left out).",
    sql: `WITH span AS (SELECT min(height) AS lo, CAST(greatest(1, ceil((max(height) - min(height) + 1) / 40.0)) AS BIGINT) AS w FROM blocks),
          windows AS (SELECT lo + ((height - lo) // w) * w AS window_start, any_value(w) AS w, count(*) AS blocks, avg(tx_count) AS txs_per_block, avg(gas_used) AS gas_per_block FROM blocks, span GROUP BY ALL)
          SELECT window_start, txs_per_block, gas_per_block FROM windows WHERE blocks * 2 >= w ORDER BY 1`,
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ window: num(r.window_start), txs: num(r.txs_per_block), gas: num(r.gas_per_block) })) },
      vconcat: [
        {
          width: 560,
          height: 110,
          mark: { type: "line", point: true },
          encoding: {
            x: { field: "window", type: "quantitative", title: null, axis: { format: "~s" } },
            y: { field: "txs", type: "quantitative", title: "mean txs per block" }
          }
        },
        {
          width: 560,
          height: 110,
          mark: { type: "line", point: true, color: "#f58518" },
          encoding: {
            x: { field: "window", type: "quantitative", title: "height (window start)", axis: { format: "~s" } },
            y: { field: "gas", type: "quantitative", title: "mean gas per block", axis: { format: "~s" } }
          }
        }
      ]
    })
  },
  {
    id: "block-times",
    title: "Block times",
    question: "How long between blocks? Distribution of block_interval_ms.",
    sql: "SELECT block_interval_ms FROM blocks WHERE block_interval_ms > 0",
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ ms: num(r.block_interval_ms) })) },
      mark: "bar",
      encoding: {
        x: { field: "ms", type: "quantitative", bin: { maxbins: 30 }, title: "block time (ms)" },
        y: { aggregate: "count", type: "quantitative", title: "blocks" }
      }
    })
  },
  {
    id: "message-mix",
    title: "Message mix",
    question: "Which message types are sent, and how often do their txs fail? (colour: failure rate on a scale from 0)",
    sql: "SELECT message_type, messages, failure_rate FROM msg_type_mix",
    spec: (rows) => ({
      data: {
        values: rows.map((r) => ({
          type: String(r.message_type).split(".").pop(),
          messages: num(r.messages),
          failure: num(r.failure_rate)
        }))
      },
      mark: "bar",
      encoding: {
        y: { field: "type", type: "nominal", sort: "-x", title: null },
        x: { field: "messages", type: "quantitative", axis: { format: "~s" } },
        // from 0, so that 5% and 6% look alike, as they are
        color: {
          field: "failure",
          type: "quantitative",
          title: "failure rate",
          scale: { scheme: "orangered", domainMin: 0 },
          legend: { format: ".0%", orient: "bottom" }
        }
      }
    })
  },
  {
    id: "holder-lorenz",
    title: "Holder concentration (Lorenz curve)",
    question: "How evenly is each token held at the latest rich-list snapshot? The further below the diagonal, the more concentrated.",
    sql: `WITH latest AS (SELECT denom, max(snapshot_height) AS h FROM holders GROUP BY denom),
          h AS (SELECT holders.denom, CAST(amount AS DOUBLE) AS amount FROM holders JOIN latest ON holders.denom = latest.denom AND holders.snapshot_height = latest.h WHERE amount > 0)
          SELECT ${SHORT_LABEL_SQL("denom")} AS denom,
                 row_number() OVER w / count(*) OVER (PARTITION BY denom) AS holders_share,
                 sum(amount) OVER w / sum(amount) OVER (PARTITION BY denom) AS amount_share
          FROM h WINDOW w AS (PARTITION BY denom ORDER BY amount ASC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`,
    spec: (rows) => ({
      data: {
        values: [
          ...rows.map((r) => ({ denom: r.denom, x: num(r.holders_share), y: num(r.amount_share) })),
          ...[...new Set(rows.map((r) => r.denom))].map((denom) => ({ denom, x: 0, y: 0 }))
        ]
      },
      layer: [
        {
          mark: { type: "line", point: false },
          encoding: {
            x: { field: "x", type: "quantitative", title: "share of holders (poorest first)", axis: { format: ".0%" } },
            y: { field: "y", type: "quantitative", title: "share of the amount", axis: { format: ".0%" } },
            color: { field: "denom", type: "nominal", legend: { orient: "bottom", columns: 2, labelLimit: 300 } },
            order: { field: "x" }
          }
        },
        {
          data: {
            values: [
              { x: 0, y: 0 },
              { x: 1, y: 1 }
            ]
          },
          mark: { type: "line", strokeDash: [4, 4], color: "#999" },
          encoding: { x: { field: "x", type: "quantitative" }, y: { field: "y", type: "quantitative" } }
        }
      ]
    })
  },
  {
    id: "route-quotes",
    title: "Route quotes vs amount",
    question:
      "How does the price impact of a route grow with the amount sent? (default options, median over samples; amounts in whole tokens where router_assets knows the asset's decimals)",
    sql: `WITH assets AS (SELECT chain_id, denom, any_value(symbol) AS symbol, any_value(decimals) AS decimals FROM router_assets GROUP BY ALL),
          pairs AS (SELECT DISTINCT pair, source_chain_id, source_denom, dest_chain_id FROM route_quotes)
          SELECT coalesce(a.symbol, ${SHORT_LABEL_SQL("p.source_denom")}) || ' ' || p.source_chain_id || ' → ' || p.dest_chain_id AS label,
                 CAST(s.amount_in AS DOUBLE) / pow(10, coalesce(a.decimals, 0)) AS amount, a.decimals IS NOT NULL AS whole_tokens,
                 coalesce(s.median_price_impact_percent, 0) AS impact
          FROM route_quote_stats s JOIN pairs p USING (pair) LEFT JOIN assets a ON a.chain_id = p.source_chain_id AND a.denom = p.source_denom
          WHERE s.variant = 'default' AND s.availability > 0 ORDER BY label, amount`,
    spec: (rows) => ({
      data: {
        values: rows.map((r) => ({
          pair: String(r.label) + (r.whole_tokens ? "" : " (base units)"),
          amount: num(r.amount),
          impact: num(r.impact)
        }))
      },
      // series that coincide (two pairs with the same impacts) stay visible: each its own dash and point shape
      mark: { type: "line", point: { filled: false, size: 50 }, opacity: 0.85 },
      encoding: {
        x: { field: "amount", type: "quantitative", scale: { type: "log" }, title: "amount in (log scale)", axis: { format: "~s" } },
        y: { field: "impact", type: "quantitative", title: "price impact (%)" },
        // one legend for the three: the same field, title and legend settings merge them
        color: { field: "pair", type: "nominal", title: null, legend: PAIR_LEGEND },
        strokeDash: { field: "pair", type: "nominal", title: null, legend: PAIR_LEGEND },
        shape: { field: "pair", type: "nominal", title: null, legend: PAIR_LEGEND }
      }
    })
  },
  {
    id: "nft-ownership",
    title: "NFT ownership",
    question:
      "Per collection at the latest snapshot: live tokens and distinct owners (each on its own scale: tokens outnumber owners by far).",
    sql: "SELECT collection_name, tokens, owners FROM nft_collection_stats WHERE snapshot_height = (SELECT max(snapshot_height) FROM nft_collection_stats)",
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ collection: r.collection_name, tokens: num(r.tokens), owners: num(r.owners) })) },
      hconcat: (["tokens", "owners"] as const).map((what) => ({
        width: 230,
        mark: { type: "bar", color: what === "tokens" ? "#4c78a8" : "#f58518" },
        encoding: {
          y: {
            field: "collection",
            type: "nominal",
            sort: { field: "tokens", order: "descending" },
            title: null,
            axis: what === "tokens" ? { labelLimit: 140 } : null
          },
          x: { field: what, type: "quantitative", title: what === "tokens" ? "live tokens" : "distinct owners", axis: { format: "~s" } }
        }
      }))
    })
  },
  {
    id: "top-tokens",
    title: "Top tokens",
    question: "Which tokens move most? Transfers per token (top 10, top_tokens), ERC-20 logs and cosmos transfer events apart.",
    sql: `SELECT ${SHORT_LABEL_SQL("token")} AS token, source, transfers FROM top_tokens
          WHERE token IN (SELECT token FROM top_tokens GROUP BY token ORDER BY sum(transfers) DESC, token LIMIT 10)`,
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ token: r.token, source: r.source, transfers: num(r.transfers) })) },
      mark: "bar",
      encoding: {
        y: { field: "token", type: "nominal", sort: "-x", title: null, axis: { labelLimit: 200 } },
        x: { field: "transfers", type: "quantitative", stack: "zero", axis: { format: "~s" } },
        color: {
          field: "source",
          type: "nominal",
          title: null,
          scale: { domain: ["cosmos", "evm"], range: ["#54a24b", "#4c78a8"] },
          legend: { orient: "top" }
        }
      }
    })
  },
  {
    id: "token-flows",
    title: "Token flows over time",
    question: `How many transfers of the five busiest tokens happen over time? (token_flows has them per day, with volumes; ${PARTIAL_NOTE})`,
    sql: `WITH top AS (SELECT token FROM token_transfers GROUP BY token ORDER BY count(*) DESC, token LIMIT 5),
          per AS (SELECT ${BUCKET_SQL} AS bucket, ${SHORT_LABEL_SQL("token")} AS token, count(*) AS transfers FROM token_transfers WHERE token IN (SELECT token FROM top) GROUP BY ALL)
          SELECT strftime(bucket, '%Y-%m-%dT%H:%M:%SZ') AS t, ${GRAIN_LABEL_SQL}, token, transfers FROM per WHERE ${WHOLE_BUCKET_SQL("bucket")} ORDER BY t`,
    spec: (rows) => ({
      data: { values: rows.map((r) => ({ t: r.t, token: r.token, transfers: num(r.transfers) })) },
      mark: { type: "line", point: true },
      encoding: {
        x: timeAxis(rows),
        y: { field: "transfers", type: "quantitative", title: "transfers" },
        color: { field: "token", type: "nominal", title: null, legend: { orient: "bottom", columns: 2, labelLimit: 300 } }
      }
    })
  },
  {
    id: "active-accounts",
    title: "Active accounts",
    question: `How many accounts act over time, on each side and in all (an account active on both sides counted once; active_accounts has them per day; ${PARTIAL_NOTE})?`,
    sql: `WITH per AS (SELECT ${BUCKET_SQL} AS bucket,
                 count(DISTINCT account_address) AS all_sides, count(DISTINCT account_address) FILTER (WHERE side = 'cosmos') AS cosmos, count(DISTINCT account_address) FILTER (WHERE side = 'evm') AS evm
          FROM account_activity GROUP BY ALL)
          SELECT strftime(bucket, '%Y-%m-%dT%H:%M:%SZ') AS t, ${GRAIN_LABEL_SQL}, all_sides, cosmos, evm FROM per WHERE ${WHOLE_BUCKET_SQL("bucket")} ORDER BY t`,
    spec: (rows) => ({
      data: {
        values: rows.flatMap((r) =>
          (["all_sides", "cosmos", "evm"] as const).map((side) => ({
            t: r.t,
            side: side === "all_sides" ? "either side" : side,
            accounts: num(r[side])
          }))
        )
      },
      mark: { type: "line", point: true },
      encoding: {
        x: timeAxis(rows),
        y: { field: "accounts", type: "quantitative", title: "active accounts" },
        color: {
          field: "side",
          type: "nominal",
          title: null,
          scale: { domain: ["either side", "cosmos", "evm"], range: ["#222222", "#54a24b", "#4c78a8"] },
          legend: { orient: "top" }
        }
      }
    })
  },
  {
    id: "nft-transfer-activity",
    title: "NFT transfer activity",
    question:
      "Per collection (by name where an nft_collections snapshot has it): mints, transfers and burns from the ERC-721 Transfer logs (nft_transfer_activity, summed over the lake).",
    sql: `WITH names AS (SELECT collection_address, arg_max(name, snapshot_height) AS name FROM nft_collections GROUP BY 1)
          SELECT coalesce(n.name || ' · ' || left(a.collection_address, 8), ${SHORT_LABEL_SQL("a.collection_address")}) AS collection,
                 sum(mints) AS mints, sum(transfers) AS transfers, sum(burns) AS burns
          FROM nft_transfer_activity a LEFT JOIN names n USING (collection_address) GROUP BY ALL`,
    spec: (rows) => ({
      data: {
        values: rows.flatMap((r) =>
          (["mints", "transfers", "burns"] as const).map((kind) => ({ collection: r.collection, kind, n: num(r[kind]) }))
        )
      },
      mark: "bar",
      encoding: {
        y: { field: "collection", type: "nominal", sort: "-x", title: null, axis: { labelLimit: 200 } },
        x: { field: "n", type: "quantitative", stack: "zero", title: "events" },
        color: {
          field: "kind",
          type: "nominal",
          title: null,
          scale: { domain: ["mints", "transfers", "burns"], range: ["#54a24b", "#4c78a8", "#e45756"] },
          legend: { orient: "top" }
        }
      }
    })
  }
]

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

export const renderChartSvg = (spec: TopLevelSpec) =>
  Effect.tryPromise({
    try: async () => {
      // 560 px of plot leaves room for axes and a side legend inside the 700 px card
      // loaded here: only `report` pays for vega's start-up
      const [vega, { compile }] = await Promise.all([import("vega"), import("vega-lite")])
      const compiled = compile({ width: 560, height: 240, ...spec } as TopLevelSpec).spec
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

/**
 * What to run to have the rows a chart reads: each dataset it reads that the lake holds none of,
 * with the command that writes it (export, or a sampler's).
 */
const toHave = (read: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const analytics = yield* Analytics
    /** the datasets lacking, by the command that writes them */
    const lacking = new Map<string, Array<string>>()
    for (const name of read) {
      const held = yield* analytics.query(`SELECT count(*) FROM ${quoteIdent(name)}`)
      if (Number(held.rows[0]?.[0] ?? 0) > 0) continue
      const by = LAKE_DATASETS.find((x) => x.name === name)?.writtenBy ?? "export"
      lacking.set(by, [...(lacking.get(by) ?? []), name])
    }
    if (lacking.size === 0) return "the rows it reads hold nothing for it yet"
    return [...lacking]
      .map(([by, names]) => (by === "export" ? `chain-lake export --datasets ${names.join(",")}` : `${names.join(", ")}: chain-lake ${by}`))
      .join("; ")
  })

/** What a report starts with (its title): a file at the report's path without it is someone else's. */
const REPORT_MARK = "<title>chain-lake report</title>"

/** A file at `path` that is not a report this tool wrote is left as it is: the run fails before writing. */
const refuseForeignFile = (path: string) =>
  Effect.flatMap(
    Effect.promise(() =>
      readFile(path, "utf8").then(
        (text) => text.slice(0, 1000).includes(REPORT_MARK),
        (e: NodeJS.ErrnoException) => e.code === "ENOENT"
      )
    ),
    (ours) =>
      ours
        ? Effect.void
        : Effect.fail(
            new AnalyticsError({
              message: `${path} exists and is no chain-lake report: it is left as it is; give the report another file (--out)`
            })
          )
  )

/** Builds the report over the Analytics views and writes it to `path`. */
export const writeReport = (path: string): Effect.Effect<ReportSummary, AnalyticsError | SqlError, Analytics> =>
  Effect.gen(function* () {
    const analytics = yield* Analytics
    yield* refuseForeignFile(path)
    const sections: Array<string> = []
    const charts: Array<{ id: string; rows: number }> = []
    for (const chart of CHARTS) {
      const result = yield* analytics.query(chart.sql)
      const rows = result.rows.map((row) => Object.fromEntries(result.columns.map((c, i) => [c.name, row[i]])))
      charts.push({ id: chart.id, rows: rows.length })
      const body =
        rows.length === 0
          ? `<p class="empty">No data yet: ${escapeHtml(yield* toHave(datasetsRead(chart.sql)))}.</p>`
          : yield* renderChartSvg(chart.spec(rows))
      sections.push(
        `<figure class="chart" id="${chart.id}" data-rows="${rows.length}"><h2>${escapeHtml(chart.title)}</h2><p class="question">${escapeHtml(chart.question)}</p>${body}</figure>`
      )
    }
    const stats = yield* analytics.query(
      "SELECT (SELECT count(*) FROM blocks) AS blocks, (SELECT count(*) FROM txs) AS txs, (SELECT max(height) FROM blocks) AS tip"
    )
    const [blocks, txs, tip] = stats.rows[0] ?? []
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">${REPORT_MARK}
<style>
body{font-family:system-ui,-apple-system,sans-serif;margin:2rem auto;max-width:760px;color:#222}
h1{margin-bottom:.2rem} .meta{color:#666;margin-top:0}
figure.chart{margin:2rem 0;padding:1rem;border:1px solid #eee;border-radius:8px}
figure.chart svg{max-width:100%;height:auto}
figure.chart h2{margin:.2rem 0;font-size:1.2rem} .question{color:#555;margin:.2rem 0 1rem}
.empty{color:#a00}
</style></head>
<body>
<h1>chain-lake report</h1>
<p class="meta">${escapeHtml(String(blocks ?? 0))} blocks (to height ${escapeHtml(String(tip ?? "-"))}), ${escapeHtml(String(txs ?? 0))} txs · generated ${new Date().toISOString()} from ${escapeHtml(analytics.dataDir)}</p>
${sections.join("\n")}
</body></html>
`
    yield* Effect.tryPromise({
      try: () => writeFile(path, redact(html)),
      catch: (e) => new AnalyticsError({ message: `cannot write ${path}: ${(e as Error).message}` })
    })
    return { path, charts }
  })
