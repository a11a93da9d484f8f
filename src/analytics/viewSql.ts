/**
 * The SQL of the lake's own views: one per dataset over the files its manifest lists (as of now,
 * or, for the catalog, as of each query), and `snapshots` over the snapshot datasets' manifests.
 */
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { DATASETS } from "../datasets/index.js"
import type { Column, ColumnType } from "../lake/columns.js"
import type { ListedFiles } from "../lake/listed.js"
import { COMMITTED_GLOB, committedName, STAGING } from "../lake/layout.js"
import { MANIFEST_FILE } from "../lake/manifest.js"
import { quoteIdent, sqlString, sqlStringList } from "../lake/sql.js"
import type { LAKE_DATASETS } from "./lakeViewList.js"

const emptyType = (t: ColumnType) => (t === "JSON" ? "JSON" : t)

/** A column every row has as NULL, typed as the dataset declares it. */
const nullColumn = (c: Column) => `CAST(NULL AS ${emptyType(c.type)}) AS ${quoteIdent(c.name)}`

/** Paths as forward-slash text, whatever the platform's separator. */
const slashed = (column: string) => `replace(${column}, '\\', '/')`

/**
 * The rows of the files a dataset's manifest lists when a query runs, among the Parquet files
 * under its folder then named as committed ones are (a relative glob, COMMITTED_GLOB): for the catalog, whose views must show files committed
 * after it was written, and never a file the manifest does not list (one a compaction replaced,
 * kept for a while for readers that listed it; one not committed yet; one someone else put there).
 * A file is matched by its last three path parts (`<dataset>/<partition>/<file>`, the lake's
 * layout), so the catalog still works once the folder is moved, and whatever folder DuckDB resolves
 * the paths from (file_search_path or the working directory, which may differ for the glob and the
 * manifest); the glob reaches one partition folder deep only, so a copy of a partition kept deeper
 * in the dataset's folder is never among the files matched.
 */
const liveSource = (dataset: string) =>
  `(SELECT * EXCLUDE (filename) FROM read_parquet(${sqlString(`${dataset}/${COMMITTED_GLOB}`)}, hive_partitioning = true, union_by_name = true, filename = true) ` +
  `WHERE replace(regexp_extract(filename, '[^/\\\\]+[/\\\\][^/\\\\]+[/\\\\][^/\\\\]+$'), '\\', '/') IN (SELECT ${sqlString(`${dataset}/`)} || f.path FROM (SELECT unnest(files) AS f FROM read_json(${sqlString(`${dataset}/${MANIFEST_FILE}`)}, columns = {files: 'STRUCT(path VARCHAR)[]'}, maximum_object_size = 2147483647))) ` +
  `AND ${unfinishedGuard(dataset)} IS NULL)`

const stagingPattern = (dataset: string, rest: string) => `${STAGING.split("\\").join("/")}/*/${dataset}/${rest}`

/**
 * For the catalog's views, at each query: an error, never fewer rows, when files the manifest lists
 * are not in the dataset's folder but wait in a writer's staging folder (an export stopped between
 * writing its manifest and moving its files in). A compaction's staged files (its writer folder
 * holds its intent, `_compaction.json`) are renamed in before they are listed, so a query racing its
 * swap is not taken for a stopped export.
 */
const unfinishedGuard = (dataset: string) => {
  const listed = `(SELECT unnest(files).path AS p FROM read_json(${sqlString(`${dataset}/${MANIFEST_FILE}`)}, columns = {files: 'STRUCT(path VARCHAR)[]'}, maximum_object_size = 2147483647))`
  const staging = STAGING.split("\\").join("/").replace(/\./g, "\\.")
  const stagedRe = sqlString(`(^|/)${staging}/([^/]+)/${dataset}/(.+)\\.pending$`)
  const intentRe = sqlString(`(^|/)${staging}/([^/]+)/${dataset}/_compaction\\.json$`)
  const staged =
    `(SELECT regexp_extract(${slashed("file")}, ${stagedRe}, 3) FROM glob(${sqlString(stagingPattern(dataset, "**/*.pending"))}) ` +
    `WHERE regexp_extract(${slashed("file")}, ${stagedRe}, 2) NOT IN (SELECT regexp_extract(${slashed("file")}, ${intentRe}, 2) FROM glob(${sqlString(stagingPattern(dataset, "_compaction.json"))})))`
  const inPlace = `(SELECT regexp_extract(${slashed("file")}, '[^/]+/[^/]+$') FROM glob(${sqlString(`${dataset}/**/*.parquet`)}))`
  const message = `${sqlString(`${dataset}: `)} || count(*) FILTER (WHERE l.p IN ${staged} AND l.p NOT IN ${inPlace}) || ' of the ' || count(*) || ${sqlString(` files its ${MANIFEST_FILE} lists are not in place (an export was stopped between writing the manifest and moving its files in): run the export again to finish that commit`)}`
  return `(SELECT CASE WHEN count(*) FILTER (WHERE l.p IN ${staged} AND l.p NOT IN ${inPlace}) > 0 THEN error(${message}) END FROM ${listed} l)`
}

/** Whether the dataset folder `dir` holds a file named as committed ones are (layout.ts COMMITTED_GLOB), committed or not: what its readers' glob finds. */
const holdsCommittedName = (dir: string): boolean => {
  const entries = (at: string) => {
    try {
      return readdirSync(at, { withFileTypes: true })
    } catch {
      return []
    }
  }
  return entries(dir).some((e) => e.isDirectory() && entries(join(dir, e.name)).some((f) => committedName(`${e.name}/${f.name}`)))
}

/**
 * The dataset view: the files its manifest lists as committed (a Parquet file someone else put
 * in the folder, one a run has not committed, or one a compaction replaced, is not data), as of
 * now, or, with `live`, as of each query (liveSource: the catalog); an empty typed relation when
 * there are none. `listed`: what listedFiles found when the view is made; a problem (a damaged
 * manifest, listed files not in place) makes a view that fails every query with it, so a query
 * never answers with fewer rows; queries of other datasets still answer. `absent`: columns the
 * files lack (written before the column was added), given as NULL.
 */
export const datasetViewSql = (
  d: (typeof LAKE_DATASETS)[number],
  dataDir: string,
  listed: ListedFiles,
  live = false,
  absent: ReadonlyArray<Column> = [],
  absolute = false
): string => {
  const cols = [...d.columns.map(nullColumn), `CAST(NULL AS ${d.partitionType}) AS ${d.partition}`]
  if (listed !== undefined && "problem" in listed)
    return `CREATE OR REPLACE VIEW ${quoteIdent(d.name)} AS SELECT ${cols.join(", ")} FROM (SELECT 1) WHERE error(${sqlString(listed.problem)}) IS NULL`
  // `absolute`: a confined DuckDB checks a relative path as given, not against file_search_path (it refused every view)
  const paths = listed?.paths.map((p) => (absolute ? join(dataDir, d.name, p) : `${d.name}/${p}`))
  const source = live
    ? paths !== undefined && holdsCommittedName(join(dataDir, d.name))
      ? liveSource(d.name)
      : undefined
    : paths !== undefined && paths.length > 0
      ? `read_parquet(${sqlStringList(paths)}, hive_partitioning = true, union_by_name = true)`
      : undefined
  if (source !== undefined)
    return `CREATE OR REPLACE VIEW ${quoteIdent(d.name)} AS SELECT ${["*", ...absent.map(nullColumn)].join(", ")} FROM ${source}`
  return `CREATE OR REPLACE VIEW ${quoteIdent(d.name)} AS SELECT ${cols.join(", ")} WHERE false`
}

/** The snapshot datasets (holders, nft_collections, nft_tokens): their manifests say how each snapshot was read. */
const SNAPSHOT_DATASETS = DATASETS.filter((d) => d.kind === "snapshot").map((d) => d.name)
const SNAPSHOT_FIELDS =
  "snapshot_height BIGINT, snapshot_time VARCHAR, consistency VARCHAR, watermark_before BIGINT, watermark_after BIGINT, rows BIGINT, duplicates_dropped BIGINT, reads INTEGER, lists VARCHAR[], absent VARCHAR[], note VARCHAR"

/**
 * The view `snapshots`: one row per committed snapshot of every snapshot dataset, from the
 * manifests: whether it is exact (read while the watermark stood still, no page overlapping
 * another) or best-effort, the watermarks it spans, and the lists the source did not have. An
 * analyst keeps exact snapshots only by joining on (dataset, snapshot_height).
 */
export const snapshotsViewSql = (dataDir: string, absolute = false): string => {
  const manifests = SNAPSHOT_DATASETS.map((n) => `${n}/${MANIFEST_FILE}`)
    .filter((p) => existsSync(join(dataDir, p)))
    .map((p) => (absolute ? join(dataDir, p) : p))
  // DuckDB reserves maximum_object_size for the read: 2 GiB ran out of a confined query's memory
  // limit, so a view made for now (absolute) allows twice the largest manifest it reads, 16 MiB at least
  const largest = Math.max(0, ...manifests.map((p) => statSync(absolute ? p : join(dataDir, p)).size))
  const maxObject = absolute ? Math.max(16 * 1024 * 1024, 2 * largest) : 2147483647
  const columns =
    "dataset, s.snapshot_height, CAST(s.snapshot_time AS TIMESTAMP) AS snapshot_time, s.consistency, s.consistency = 'exact' AS exact, s.watermark_before, s.watermark_after, " +
    "s.rows, s.duplicates_dropped, s.reads, s.lists, coalesce(s.absent, []) AS absent, s.note"
  const from =
    manifests.length === 0
      ? `(SELECT CAST(NULL AS VARCHAR) AS dataset, CAST(NULL AS STRUCT(${SNAPSHOT_FIELDS})) AS s WHERE false)`
      : `(SELECT dataset, unnest(snapshots) AS s FROM read_json(${sqlStringList(manifests)}, columns = {dataset: 'VARCHAR', snapshots: 'STRUCT(${SNAPSHOT_FIELDS})[]'}, maximum_object_size = ${maxObject}))`
  return `CREATE OR REPLACE VIEW snapshots AS SELECT ${columns} FROM ${from}`
}
