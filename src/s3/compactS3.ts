/**
 * Compaction of a lake on S3 (`chain-lake compact --data s3://…`). A store has no lock and no
 * rename, so the swap goes through the dataset's commit log (lake/commitLog.ts), as an export's
 * commits do:
 * 1. put an intent (`.chain-lake/compacting/<dataset>/<writer>.json`: the merged paths);
 * 2. download the partition's small files, check their sha256, merge them locally (DuckDB) and
 *    upload the merged file into the dataset folder (not listed yet: not data to the manifest);
 * 3. put a fragment listing the merged file and retiring the inputs; read the log back: if another
 *    compaction retired one of them first, the fragment was not taken and the merged file is deleted;
 * 4. copy each input to `.chain-lake/retired/<dataset>/<path>.retired` and delete it from the
 *    folder (a glob sees the old files or the new one again), then delete the intent.
 * Each dataset's commit log is checkpointed at the end when it has grown long (sync.ts checkpointLog).
 * Each run first finishes what killed runs left: an intent older than an hour (or whose process on
 * this host is gone) has its unlisted merged files deleted; retired files still in the folder are
 * moved out; retired copies past the grace period are deleted. A glob over the prefix may see a
 * merged file beside the ones it replaces for the seconds between steps 2 and 4.
 */
import { dirname, join } from "node:path"
import { Effect, Either } from "effect"
import {
  compactionReport,
  CompactionError,
  type CompactionGroup,
  DEFAULT_COMPACTION,
  DEFAULT_GRACE_MS,
  mergedName,
  mergeGroup,
  planCompaction,
  plannedMerge,
  type CompactOptions,
  type DatasetCompaction
} from "../lake/compaction.js"
import { fragmentName } from "../lake/commitLog.js"
import { isContainedPath, makeFolder } from "../lake/files.js"
import { compactionIntentFile, compactionIntentsFolder, datasetFile, retiredFile, retiredName, retiredPrefix } from "../lake/layout.js"
import { newWriterId, writerGone } from "../lake/lock.js"
import type { Manifest } from "../lake/manifest.js"
import { copy, download, downloadFile, list, makeS3, parseS3Url, put, remove, upload, type S3, type S3Location } from "./s3.js"
import { checkpointLog, logOf, newWorkDir, remoteManifest, removeDir, wasTaken } from "./sync.js"

/** An intent this old belongs to no running compaction (another host's cannot be asked whether it lives). */
const INTENT_STALE_MS = 60 * 60_000

/** Finishes what killed compactions left of one dataset, and deletes retired copies past the grace period; returns how many it deleted. */
const tidy = (s3: S3, loc: S3Location, manifest: Manifest, graceMs: number) =>
  Effect.gen(function* () {
    const d = manifest.dataset
    const listed = new Set([...manifest.files, ...(manifest.retired ?? [])].map((f) => f.path))
    for (const name of yield* list(s3, loc, compactionIntentsFolder(d))) {
      const text = yield* download(s3, loc, compactionIntentsFolder(d) + name)
      const intent = Either.getOrUndefined(
        Either.try(
          () => JSON.parse(text ?? "") as { readonly writer?: string; readonly at?: string; readonly paths?: ReadonlyArray<unknown> }
        )
      )
      const writer = String(intent?.writer ?? "")
      const stale = Date.now() - Date.parse(String(intent?.at ?? 0)) > INTENT_STALE_MS || writerGone(writer)
      if (!stale) continue
      for (const path of intent?.paths ?? [])
        if (typeof path === "string" && isContainedPath(path) && !listed.has(path)) yield* remove(s3, loc, datasetFile(d, path))
      yield* remove(s3, loc, compactionIntentsFolder(d) + name)
    }
    const now = Date.now()
    let deleted = 0
    const kept = new Set(yield* list(s3, loc, retiredPrefix(d)))
    const present = new Set(yield* list(s3, loc, datasetFile(d, "")))
    for (const r of manifest.retired ?? []) {
      // a run killed between its fragment and the move leaves the replaced file in the folder
      if (!manifest.files.some((f) => f.path === r.path) && present.has(r.path)) {
        yield* retire(s3, loc, d, r.path)
        kept.add(retiredName(r.path))
      }
      if (now - Date.parse(r.retired_at) >= graceMs && kept.has(retiredName(r.path))) {
        yield* remove(s3, loc, retiredFile(d, r.path))
        deleted++
      }
    }
    return deleted
  })

const retire = (s3: S3, loc: S3Location, dataset: string, path: string) =>
  Effect.zipRight(copy(s3, loc, datasetFile(dataset, path), retiredFile(dataset, path)), remove(s3, loc, datasetFile(dataset, path)))

/** What one compaction of a lake on S3 works with: the lake, the run's own writer id and local work folder. */
interface S3Compaction {
  readonly s3: S3
  readonly loc: S3Location
  readonly url: string
  readonly writer: string
  readonly work: string
  /** the sequence number of the writer's next commit-log fragment */
  readonly nextSeq: () => number
}

const fail = (e: { readonly message: string }) => new CompactionError({ message: e.message })

/** A group's merge, swapped in; or why it was dropped. */
type GroupOutcome = { readonly merged: DatasetCompaction["merged"][number] } | { readonly skipped: string }

/** Steps 1–4 for one group of a dataset's small files: the merge it made, or why it was dropped. */
const compactGroup = (
  c: S3Compaction,
  d: { readonly name: string; readonly sortKey: ReadonlyArray<string> },
  manifest: Manifest,
  group: CompactionGroup
) =>
  Effect.gen(function* () {
    const { s3, loc, writer } = c
    const rel = mergedName(group, manifest.unit)
    const local = (path: string) => join(c.work, d.name, path)
    const intent = compactionIntentFile(d.name, writer)
    yield* put(s3, loc, intent, JSON.stringify({ writer, at: new Date().toISOString(), paths: [rel] })).pipe(Effect.mapError(fail))
    yield* Effect.forEach(
      group.files,
      (f) =>
        Effect.zipRight(
          Effect.promise(() => makeFolder(dirname(local(f.path)))),
          downloadFile(s3, loc, datasetFile(d.name, f.path), local(f.path))
        ),
      { concurrency: 4, discard: true }
    ).pipe(Effect.mapError(fail))
    const file = yield* mergeGroup(group, `${c.url}/${d.name}`, (f) => local(f.path), local(rel), rel, d.sortKey)
    yield* upload(s3, c.work, loc, [datasetFile(d.name, rel)]).pipe(Effect.mapError(fail))
    const at = new Date().toISOString()
    const fragment: Manifest = {
      dataset: manifest.dataset,
      format_version: manifest.format_version,
      unit: manifest.unit,
      columns: manifest.columns,
      files: [file],
      committed: [],
      snapshots: [],
      retired: group.files.map((f) => ({ path: f.path, retired_at: at, replaced_by: [rel] }))
    }
    const name = fragmentName(new Date(), writer, c.nextSeq())
    yield* put(s3, loc, logOf(d.name) + name, JSON.stringify(fragment, null, 1)).pipe(Effect.mapError(fail))
    const read = yield* remoteManifest(s3, loc, d.name).pipe(Effect.mapError(fail))
    const taken = wasTaken(read, name, fragment)
    if (!taken) yield* remove(s3, loc, datasetFile(d.name, rel)).pipe(Effect.mapError(fail))
    else
      yield* Effect.forEach(group.files, (f) => retire(s3, loc, d.name, f.path), { concurrency: 4, discard: true }).pipe(
        Effect.mapError(fail)
      )
    yield* remove(s3, loc, intent).pipe(Effect.mapError(fail))
    yield* removeDir(join(c.work, d.name))
    const outcome: GroupOutcome = taken
      ? {
          merged: {
            partition: group.partition,
            files: group.files.length,
            bytesBefore: group.bytes,
            bytesAfter: file.bytes,
            rows: file.rows
          }
        }
      : { skipped: `${group.partition}: another compaction retired one of its files first` }
    return outcome
  })

/** Compacts each of `datasets` of the lake at `url` (s3://bucket/prefix); the ParquetSink merges. */
export const compactS3 = (
  url: string,
  datasets: ReadonlyArray<{ readonly name: string; readonly sortKey: ReadonlyArray<string> }>,
  options: CompactOptions & {
    readonly endpoint?: string
    readonly checkpoint?: { readonly after?: number; readonly settleMs?: number }
  } = {}
) =>
  Effect.gen(function* () {
    const loc = parseS3Url(url)
    const s3 = makeS3(options.endpoint)
    const writer = newWriterId()
    const work = yield* Effect.acquireRelease(newWorkDir(writer), removeDir)
    let seq = 0
    const run: S3Compaction = { s3, loc, url, writer, work, nextSeq: () => seq++ }
    const policy = options.policy ?? DEFAULT_COMPACTION
    const reports: Array<DatasetCompaction> = []
    for (const d of datasets) {
      const { manifest } = yield* remoteManifest(s3, loc, d.name).pipe(Effect.mapError(fail))
      if (!manifest) continue
      const deleted = options.dryRun ? 0 : yield* tidy(s3, loc, manifest, options.graceMs ?? DEFAULT_GRACE_MS).pipe(Effect.mapError(fail))
      const groups = planCompaction(manifest, policy)
      if (options.dryRun) {
        reports.push(compactionReport(manifest, groups.map(plannedMerge), [], 0))
        continue
      }
      const merged: Array<DatasetCompaction["merged"][number]> = []
      const skipped: Array<string> = []
      for (const group of groups) {
        const outcome = yield* compactGroup(run, d, manifest, group)
        if ("merged" in outcome) merged.push(outcome.merged)
        else skipped.push(outcome.skipped)
      }
      reports.push(compactionReport(manifest, merged, skipped, deleted))
      // the log, read once more, checkpointed if it has grown long
      const read = yield* remoteManifest(s3, loc, d.name).pipe(Effect.mapError(fail))
      yield* checkpointLog(s3, loc, d.name, read, options.checkpoint).pipe(Effect.mapError(fail))
    }
    return reports
  }).pipe(Effect.scoped)
