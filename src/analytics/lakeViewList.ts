/** The analytics views of src/analytics/sql/ (one per file, with the question it answers) and the lake's datasets the views read. */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { DATASETS } from "../datasets/index.js"
import { partitionOf } from "../engine/Dataset.js"
import type { Column } from "../lake/columns.js"

const SQL_DIR = fileURLToPath(new URL("./sql/", import.meta.url))

/**
 * The analytics views, in file-name order: each file opens with a comment whose first sentence is
 * the question the view answers (`question`) and whose whole text says what its rows are
 * (`description`).
 */
export const analyticsViews = (): Array<{ name: string; question: string; description: string; sql: string }> =>
  readdirSync(SQL_DIR)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(SQL_DIR, f), "utf8")
      const description = sql
        .split("\n")
        .filter((l) => l.startsWith("--"))
        .map((l) => l.replace(/^--\s?/, ""))
        .join(" ")
      return { name: f.replace(/\.sql$/, ""), question: firstSentence(description), description, sql }
    })

/**
 * Creates every analytics view through `run` (one SQL statement at a time), each after the views
 * it reads: file-name order is not dependency order (account_activity and token_flows read
 * token_transfers, itself a view over two datasets), so each pass creates those whose inputs
 * exist. A pass that creates none fails naming the view whose own SQL is wrong, rather than one
 * that only waits for it. The one way views are made, for `chain-lake query` and the benches
 * alike, so that a bench cannot fall behind a view that starts reading another.
 */
export const createAnalyticsViews = async (run: (sql: string) => Promise<unknown>): Promise<void> => {
  let pending = analyticsViews()
  while (pending.length > 0) {
    const failed: Array<{ view: (typeof pending)[number]; error: Error }> = []
    for (const view of pending) await run(view.sql).catch((error: Error) => failed.push({ view, error }))
    if (failed.length === pending.length) {
      const cause = failed.find((f) => !/does not exist/i.test(f.error.message)) ?? failed[0]
      throw new Error(`view ${cause.view.name}: ${cause.error.message}`)
    }
    pending = failed.map((f) => f.view)
  }
}

/** Up to the first `?` or `.` that ends a sentence (followed by a space or the end). */
export const firstSentence = (text: string): string => /^.*?[?.](?=\s|$)/.exec(text)?.[0] ?? text

/** What the `snapshots` view (snapshotsViewSql) answers, for help and `chain-lake schema`. */
export const SNAPSHOTS_DESCRIPTION =
  "How was each snapshot read? One row per committed snapshot of holders, nft_collections and nft_tokens, from their manifests: exact (read while the watermark stood still, every row the source counts) or best-effort, the watermarks it spans, reads, duplicates dropped and the lists the source did not have; join on (dataset, snapshot_height) to keep exact snapshots only."

/** Every dataset the lake can hold, with its columns, its hive partition column and the command that writes it (from the registry). */
export const LAKE_DATASETS: ReadonlyArray<{
  readonly name: string
  readonly columns: ReadonlyArray<Column>
  readonly partition: string
  readonly partitionType: string
  /** `chain-lake …` that writes it */
  readonly writtenBy: string
  /** the list whose invalid records an export quarantines in `_quarantine/<it>.ndjson` (rows of its records this dataset lacks) */
  readonly list?: string
}> = DATASETS.map((d) => ({
  name: d.name,
  columns: d.columns,
  partition: partitionOf(d).name,
  partitionType: partitionOf(d).type,
  writtenBy: d.kind === "sample" ? d.writtenBy : "export",
  ...(d.kind === "append" ? { list: d.list.id } : {})
}))

/** The datasets a query reads, directly or through the analytics views it names (for "export these" hints). */
export const datasetsRead = (sql: string, depth = 3): ReadonlyArray<string> => {
  const words = new Set(sql.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [])
  const direct = LAKE_DATASETS.map((d) => d.name).filter((n) => words.has(n))
  const viaViews =
    depth > 0
      ? analyticsViews()
          .filter((v) => words.has(v.name))
          .flatMap((v) => datasetsRead(v.sql, depth - 1))
      : []
  return [...new Set([...direct, ...viaViews])].sort()
}
