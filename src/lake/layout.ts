/**
 * The lake's layout: how a dataset is partitioned into Hive folders, and the names of its files.
 * Every path under a dataset's folder is built here, from a partitioning its module declares:
 *
 *   heightBucket("height")  →  height_bucket=10000/part-h000000010001-000000010501-0.parquet
 *   snapshot()              →  snapshot_height=1234/part-0.parquet
 *   date("sampled_at")      →  date=2026-11-23/part-<name>.parquet
 *   a compaction's merge    →  <partition>/part-h000000000001-000000010501-c<token>.parquet
 *
 * Readers glob `DATASET/**\/*.parquet` with hive partitioning, so the folder's key becomes a column.
 * Writers stage each file first as `.chain-lake/staging/<writer>/<dataset>/<path>.pending`.
 *
 * The lake's own files are named here too: each dataset's manifest and its lock, the lake's
 * identity and its lock at the root, and the working folder `.chain-lake/` (staging, DuckDB's
 * spill folders, retired files, the compaction lock), which no reader's glob looks into.
 */
import { join } from "node:path"
import { IDENTITY_FILE, MANIFEST_FILE } from "./manifest.js"

/** The lake's own working folder, at its root; no reader's glob looks into it. */
const WORK = ".chain-lake"
/** Where writers stage files, one folder per writer. */
export const STAGING = join(WORK, "staging")
/** A staged file's name is its committed path with this added. */
export const PENDING = ".pending"
/** Where each writer's DuckDB spills (ParquetSink's tempDirectory), one folder per writer. */
export const SCRATCH = join(WORK, "tmp")
/** Where files a compaction replaced wait out their grace period (`<dataset>/<path>.retired`). */
export const RETIRED = join(WORK, "retired")
/** The lock file in each dataset's folder that every change of its manifest holds (a reader that must not see a commit halfway may take it too). */
export const MANIFEST_LOCK = "_manifest.lock"
/** A compactor's intent, in its staging folder of the dataset: the paths it is about to rename into place. */
const INTENT = "_compaction.json"

/**
 * A path in the folder of `dataset` of the lake at `root`: `rel` as its manifest lists it, or a
 * file of the dataset's own (a lock, a registry), which lies beside the partition folders where
 * readers' `**\/*.parquet` skips it (none: the folder).
 */
export const datasetPath = (root: string, dataset: string, rel = "") => join(root, dataset, rel)
/** The manifest of `dataset`. */
export const manifestPath = (root: string, dataset: string) => join(root, dataset, MANIFEST_FILE)
/** The lock of the manifest of `dataset`. */
export const manifestLockPath = (root: string, dataset: string) => join(root, dataset, MANIFEST_LOCK)
/** `writer`'s temp file name for a manifest, in its dataset's folder: each writer has its own, so that a new holder of the lock can fence an old one's. */
export const manifestTmpName = (writer: string) => `${MANIFEST_FILE}.${writer}.tmp`
/** Whether a file name in a dataset's folder is a writer's temp file for its manifest. */
export const isManifestTmpName = (name: string) => name.startsWith(`${MANIFEST_FILE}.`) && name.endsWith(".tmp")
/** One compaction of a lake at a time: the lock every compaction of the lake at `root` holds. */
export const compactionLockPath = (root: string) => join(root, WORK, "compaction.lock")
/** The lake's identity (`_lake.json`), at its root. */
export const identityPath = (root: string) => join(root, IDENTITY_FILE)
/** `writer`'s temp file for the lake's identity. */
export const identityTmpPath = (root: string, writer: string) => join(root, `${IDENTITY_FILE}.${writer}.tmp`)
/** The lock every change of the lake's identity holds. */
export const identityLockPath = (root: string) => join(root, "_lake.lock")
/** The staging folder of `writer`. */
export const stagingFolder = (root: string, writer: string) => join(root, STAGING, writer)
/** Where a writer whose staging folder is `staging` writes a file of `dataset` to be committed as `rel`. */
export const stagedPath = (staging: string, dataset: string, rel: string) => join(staging, dataset, rel) + PENDING
/** A compactor's intent for `dataset`, in its staging folder `staging`. */
export const intentPath = (staging: string, dataset: string) => join(staging, dataset, INTENT)
/** The DuckDB spill folder of `writer`. */
export const scratchFolderOf = (root: string, writer: string) => join(root, SCRATCH, writer)
/** The folder where the retired files of `dataset` wait, each under its path in the dataset folder (retiredPath). */
export const retiredFolder = (root: string, dataset: string) => join(root, RETIRED, dataset)
/** Where the retired file `path` of `dataset` is kept until it is deleted. */
export const retiredPath = (root: string, dataset: string, path: string) => join(root, RETIRED, dataset, retiredName(path))

/** Folders of `width` heights (runExport's bucketWidth, 10,000 by default; no CLI flag), by the row's height column. */
export interface HeightBucketPartitioning {
  readonly kind: "height_bucket"
  readonly column: string
}
/** One folder per snapshot height. */
export interface SnapshotPartitioning {
  readonly kind: "snapshot"
}
/** One folder per UTC day of a TIMESTAMP column. */
export interface DatePartitioning {
  readonly kind: "date"
  readonly column: string
}
/** How a dataset's files are split into folders. */
export type Partitioning = HeightBucketPartitioning | SnapshotPartitioning | DatePartitioning

export const heightBucket = (column: string): HeightBucketPartitioning => ({ kind: "height_bucket", column })
export const snapshot = (): SnapshotPartitioning => ({ kind: "snapshot" })
export const date = (column: string): DatePartitioning => ({ kind: "date", column })

/** The column a reader sees for the folder key, and its type. */
export const partitionColumn = (p: Partitioning): { readonly name: string; readonly type: "BIGINT" | "DATE" } =>
  p.kind === "height_bucket"
    ? { name: "height_bucket", type: "BIGINT" }
    : p.kind === "snapshot"
      ? { name: "snapshot_height", type: "BIGINT" }
      : { name: "date", type: "DATE" }

/** The bucket a height falls in. */
export const bucketOf = (height: number, width: number) => Math.floor(height / width) * width

const pad = (n: number) => String(n).padStart(12, "0")

/** A file of an append-only dataset: its bucket, the shard's range [a, b) of heights (h) or positions (p), and its part. */
export const shardFile = (bucket: number, unit: "height" | "position", [a, b]: readonly [number, number], part: number) =>
  `height_bucket=${bucket}/part-${unit === "height" ? "h" : "p"}${pad(a)}-${pad(b)}-${part}.parquet`

/**
 * A glob every committed file of a dataset matches, relative to its folder (shardFile,
 * snapshotFile, dateFile, mergedFile: a partition folder `key=value`, then part-…): a reader that
 * globs the folder meets no file of the user's outside it (notes, a folder of their own, a copy of
 * a partition kept deeper), whose read would fail every query ("too small to be a Parquet file",
 * a hive partition mismatch).
 */
export const COMMITTED_GLOB = "*=*/part-*.parquet"

/** Whether `path` (relative to a dataset's folder) is named as committed files are (COMMITTED_GLOB). */
export const committedName = (path: string) => /^[^/]*=[^/]*\/part-[^/]*\.parquet$/.test(path)

/** The folder of a snapshot height. */
export const snapshotDir = (height: number) => `snapshot_height=${height}`

/** The `part`-th file of a snapshot height. */
export const snapshotFile = (height: number, part: number) => `${snapshotDir(height)}/part-${part}.parquet`

/** The snapshot height a file path of a snapshot dataset is under, or undefined. */
export const snapshotHeightOf = (path: string): number | undefined => {
  const m = /^snapshot_height=(\d+)\//.exec(path)
  return m ? Number(m[1]) : undefined
}

/** A file of a date-partitioned dataset: the UTC day of `at`, and a name unique to its writer (letters, digits, - only). */
export const dateFile = (at: Date, name: string) =>
  `date=${at.toISOString().slice(0, 10)}/part-${name.replace(/[^0-9A-Za-z-]/g, "")}.parquet`

/** A compaction's merged file in `partition`: after the range it holds (append datasets), with a token no other file has. */
export const mergedFile = (
  partition: string,
  unit: "height" | "position" | "snapshot" | "sample",
  range: readonly [number, number] | undefined,
  token: string
) =>
  `${partition}/part-${range && (unit === "height" || unit === "position") ? `${unit === "height" ? "h" : "p"}${pad(range[0])}-${pad(range[1])}-` : ""}c${token}.parquet`

/** A run report in the lake: `_runs/<its start time, with - for : and .>[-<kind>].json` (kind: "interrupted", "pipeline-<name>"). */
export const runReportFile = (startedAt: string, kind?: string) =>
  `_runs/${startedAt.replace(/[:.]/g, "-")}${kind === undefined ? "" : `-${kind}`}.json`

/** The lock file of the lake's pipeline runs (one at a time per lake), at its top. */
export const pipelineLockFile = () => ".chain-lake.lock"

/** The path in the lake (relative to its root: an S3 key under the lake's prefix) of `path`, a path in `dataset`'s folder. */
export const datasetFile = (dataset: string, path: string) => `${dataset}/${path}`

/** The S3 key (under the lake's prefix) where a file of `dataset` that a compaction replaced waits out its grace period. */
export const retiredFile = (dataset: string, path: string) => `${retiredPrefix(dataset)}${retiredName(path)}`

/** A retired file's name in its dataset's retired folder: its path in the dataset's folder, with `.retired` added. */
export const retiredName = (path: string) => `${path}.retired`

/** The S3 key prefix of `dataset`'s retired files, with its final slash (a listing's prefix). */
export const retiredPrefix = (dataset: string) => `${WORK}/retired/${dataset}/`

/** The folder of the intents of compactions of `dataset` on S3 (one per compacting writer), with its final slash. */
export const compactionIntentsFolder = (dataset: string) => `${WORK}/compacting/${dataset}/`

/** The intent of `writer`'s compaction of `dataset` on S3: the merged paths it is about to upload. */
export const compactionIntentFile = (dataset: string, writer: string) => `${compactionIntentsFolder(dataset)}${writer}.json`

/** Where the invalid records of a list's run are kept (with where each was and what is wrong): `_quarantine/<list id>.ndjson`, beside the datasets. */
export const quarantineFile = (root: string, listId: string) => join(root, "_quarantine", `${listId}.ndjson`)
