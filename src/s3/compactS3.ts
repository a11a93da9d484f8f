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
import { newWriterId, writerGone } from "../lake/lock.js"
import type { Manifest } from "../lake/manifest.js"
import { copy, download, downloadFile, list, makeS3, parseS3Url, put, remove, upload, type S3, type S3Location } from "./s3.js"
import { checkpointLog, logOf, newWorkDir, remoteManifest, removeDir, wasTaken } from "./sync.js"

/** An intent this old belongs to no running compaction (another host's cannot be asked whether it lives). */
const INTENT_STALE_MS = 60 * 60_000

const retiredKey = (dataset: string, path: string) => `.chain-lake/retired/${dataset}/${path}.retired`
const intentsOf = (dataset: string) => `.chain-lake/compacting/${dataset}/`

/** Finishes what killed compactions left of one dataset, and deletes retired copies past the grace period; returns how many it deleted. */
const tidy = (s3: S3, loc: S3Location, manifest: Manifest, graceMs: number) =>
  Effect.gen(function* () {
    const d = manifest.dataset
    const listed = new Set([...manifest.files, ...(manifest.retired ?? [])].map((f) => f.path))
    for (const name of yield* list(s3, loc, intentsOf(d))) {
      const text = yield* download(s3, loc, intentsOf(d) + name)
      const intent = Either.getOrUndefined(
        Either.try(
          () => JSON.parse(text ?? "") as { readonly writer?: string; readonly at?: string; readonly paths?: ReadonlyArray<unknown> }
        )
      )
      const writer = String(intent?.writer ?? "")
      const stale = Date.now() - Date.parse(String(intent?.at ?? 0)) > INTENT_STALE_MS || writerGone(writer)
      if (!stale) continue
      for (const path of intent?.paths ?? [])
        if (typeof path === "string" && isContainedPath(path) && !listed.has(path)) yield* remove(s3, loc, `${d}/${path}`)
      yield* remove(s3, loc, intentsOf(d) + name)
    }
    const now = Date.now()
    let deleted = 0
    const kept = new Set(yield* list(s3, loc, `.chain-lake/retired/${d}/`))
    const present = new Set(yield* list(s3, loc, `${d}/`))
    for (const r of manifest.retired ?? []) {
      // a run killed between its fragment and the move leaves the replaced file in the folder
      if (!manifest.files.some((f) => f.path === r.path) && present.has(r.path)) {
        yield* retire(s3, loc, d, r.path)
        kept.add(`${r.path}.retired`)
      }
      if (now - Date.parse(r.retired_at) >= graceMs && kept.has(`${r.path}.retired`)) {
        yield* remove(s3, loc, retiredKey(d, r.path))
        deleted++
      }
    }
    return deleted
  })

const retire = (s3: S3, loc: S3Location, dataset: string, path: string) =>
  Effect.zipRight(copy(s3, loc, `${dataset}/${path}`, retiredKey(dataset, path)), remove(s3, loc, `${dataset}/${path}`))

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
    const policy = options.policy ?? DEFAULT_COMPACTION
    const fail = (e: { readonly message: string }) => new CompactionError({ message: e.message })
    const reports: Array<DatasetCompaction> = []
    let seq = 0
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
        const rel = mergedName(group, manifest.unit)
        const local = (path: string) => join(work, d.name, path)
        const intent = `${intentsOf(d.name)}${writer}.json`
        yield* put(s3, loc, intent, JSON.stringify({ writer, at: new Date().toISOString(), paths: [rel] })).pipe(Effect.mapError(fail))
        yield* Effect.forEach(
          group.files,
          (f) =>
            Effect.zipRight(
              Effect.promise(() => makeFolder(dirname(local(f.path)))),
              downloadFile(s3, loc, `${d.name}/${f.path}`, local(f.path))
            ),
          { concurrency: 4, discard: true }
        ).pipe(Effect.mapError(fail))
        const file = yield* mergeGroup(group, `${url}/${d.name}`, (f) => local(f.path), local(rel), rel, d.sortKey)
        yield* upload(s3, work, loc, [`${d.name}/${rel}`]).pipe(Effect.mapError(fail))
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
        const name = fragmentName(new Date(), writer, seq++)
        yield* put(s3, loc, logOf(d.name) + name, JSON.stringify(fragment, null, 1)).pipe(Effect.mapError(fail))
        const read = yield* remoteManifest(s3, loc, d.name).pipe(Effect.mapError(fail))
        if (!wasTaken(read, name, fragment)) {
          yield* remove(s3, loc, `${d.name}/${rel}`).pipe(Effect.mapError(fail))
          skipped.push(`${group.partition}: another compaction retired one of its files first`)
        } else {
          yield* Effect.forEach(group.files, (f) => retire(s3, loc, d.name, f.path), { concurrency: 4, discard: true }).pipe(
            Effect.mapError(fail)
          )
          merged.push({
            partition: group.partition,
            files: group.files.length,
            bytesBefore: group.bytes,
            bytesAfter: file.bytes,
            rows: file.rows
          })
        }
        yield* remove(s3, loc, intent).pipe(Effect.mapError(fail))
        yield* removeDir(join(work, d.name))
      }
      reports.push(compactionReport(manifest, merged, skipped, deleted))
      // the log, read once more, checkpointed if it has grown long
      const read = yield* remoteManifest(s3, loc, d.name).pipe(Effect.mapError(fail))
      yield* checkpointLog(s3, loc, d.name, read, options.checkpoint).pipe(Effect.mapError(fail))
    }
    return reports
  }).pipe(Effect.scoped)
