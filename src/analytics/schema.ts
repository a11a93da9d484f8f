/**
 * What a lake holds, for people and programs, with no lake and no server: every dataset of the
 * registry and every view `chain-lake query` offers, each with its columns, their types and what
 * they mean (`chain-lake schema` prints it).
 *
 * Datasets are listed as the registry declares them, plus the partition column their view adds.
 * Views are described by DuckDB in memory over an empty lake: there every dataset's view is an
 * empty relation with the registry's columns (viewSql.ts), so DESCRIBE gives a view's columns as
 * a query of a real lake sees them, and a view whose SQL changes is described as it is now.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Data, Effect } from "effect"
import { DATASETS } from "../datasets/index.js"
import type { Dataset } from "../engine/Dataset.js"
import { partitionColumn } from "../lake/layout.js"
import { quoteIdent } from "../lake/sql.js"
import { Analytics, AnalyticsError, analyticsViews, firstSentence, layerAnalytics, SNAPSHOTS_DESCRIPTION } from "./Analytics.js"

/** `lakeSchema` was asked for a name that is no dataset and no view. */
export class UnknownSchemaName extends Data.TaggedError("UnknownSchemaName")<{ readonly message: string }> {}

export interface SchemaColumn {
  readonly name: string
  /** the DuckDB type a query sees (JSON for JSON text, DECIMAL(38,0) for exact amounts …) */
  readonly type: string
  /** what it holds; "" for a view's columns, which the view's description covers */
  readonly description: string
}

export interface SchemaEntry {
  readonly name: string
  readonly kind: "dataset" | "view"
  readonly description: string
  /** the columns that name one row (within one snapshot, for snapshot datasets); [] for a view */
  readonly key: ReadonlyArray<string>
  /** the order rows are written in; [] for a view */
  readonly sortKey: ReadonlyArray<string>
  /** the column the dataset's folders are split by (height_bucket, snapshot_height, date); null for a view */
  readonly partition: string | null
  readonly columns: ReadonlyArray<SchemaColumn>
}

/** The partition column a dataset's view adds (from its folder names), and what it holds. */
const partitionOf = (d: Dataset): SchemaColumn => {
  const { name, type } = partitionColumn(d.partition)
  const p = d.partition
  const description =
    p.kind === "height_bucket"
      ? `partition: the first height of the bucket of ${p.column} the row's folder holds (height_bucket=N; 10,000 heights wide unless the library's runExport was given another bucketWidth)`
      : p.kind === "snapshot"
        ? "partition: the height the snapshot was read at (snapshot_height=N); the key names one row within one snapshot"
        : `partition: the UTC day of ${p.column} (date=YYYY-MM-DD)`
  return { name, type, description }
}

/** One dataset as the registry declares it: no DuckDB, no files. */
export const datasetSchema = (d: Dataset): SchemaEntry => ({
  name: d.name,
  kind: "dataset",
  description: d.description,
  key: d.key,
  sortKey: d.sortKey,
  partition: partitionColumn(d.partition).name,
  columns: [...d.columns.map((c) => ({ name: c.name, type: c.type, description: c.description })), partitionOf(d)]
})

/** The views besides the datasets', in the order `query` makes them (`snapshots`, then src/analytics/sql/ by file name), each with the question it answers. */
export const viewNames = (): Array<{ readonly name: string; readonly question: string; readonly description: string }> => [
  { name: "snapshots", question: firstSentence(SNAPSHOTS_DESCRIPTION), description: SNAPSHOTS_DESCRIPTION },
  ...analyticsViews().map((v) => ({ name: v.name, question: v.question, description: v.description }))
]

/** A view's columns as DuckDB describes them over the empty lake `analytics` reads. */
const describeView = (name: string) =>
  Effect.gen(function* () {
    const analytics = yield* Analytics
    const r = yield* analytics.query(`DESCRIBE ${quoteIdent(name)}`)
    const at = (column: string) => r.columns.findIndex((c) => c.name === column)
    return r.rows.map(
      (row): SchemaColumn => ({ name: String(row[at("column_name")]), type: String(row[at("column_type")]), description: "" })
    )
  }).pipe(Effect.mapError((e) => new AnalyticsError({ message: `describing view ${name}: ${e.message}` })))

/** A folder holding no lake, removed at the end: what the views are described over. */
const emptyLake = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "chain-lake-schema-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** The views named (all by default), described by DuckDB in memory. */
export const viewSchemas = (
  names: ReadonlyArray<string> = viewNames().map((v) => v.name)
): Effect.Effect<Array<SchemaEntry>, AnalyticsError> =>
  Effect.gen(function* () {
    const views = viewNames().filter((v) => names.includes(v.name))
    if (views.length === 0) return []
    const dataDir = yield* emptyLake
    return yield* Effect.forEach(views, (v) =>
      Effect.map(
        describeView(v.name),
        (columns): SchemaEntry => ({
          name: v.name,
          kind: "view",
          description: v.description,
          key: [],
          sortKey: [],
          partition: null,
          columns
        })
      )
    ).pipe(Effect.provide(layerAnalytics({ dataDir })))
  }).pipe(Effect.scoped)

/**
 * Every dataset (registry order) and every view, or only the one named `only`; a name that is
 * neither is an error listing the names there are. DuckDB is loaded only where a view is asked for.
 */
export const lakeSchema = (only?: string): Effect.Effect<Array<SchemaEntry>, AnalyticsError | UnknownSchemaName> =>
  Effect.gen(function* () {
    const known = [...DATASETS.map((d) => d.name), ...viewNames().map((v) => v.name)]
    if (only !== undefined && !known.includes(only))
      return yield* new UnknownSchemaName({ message: `no dataset or view named "${only}"; known: ${known.join(", ")}` })
    const datasets = DATASETS.filter((d) => only === undefined || d.name === only).map(datasetSchema)
    const views = yield* viewSchemas(only === undefined ? undefined : [only])
    return [...datasets, ...views]
  })
