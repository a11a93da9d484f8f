/**
 * Checkpoints: one manifest per dataset (`OUT/<dataset>/_manifest.json`) listing every committed
 * file with rows, bytes, sha256 and its height or position range, and every committed snapshot.
 * Files are committed (renamed into place) just before their manifest entry; on open, files the
 * manifest does not list (and temp or pending files) are leftovers of an interrupted run and are
 * removed, so a resumed run never shows duplicates.
 */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Context, Data, Effect, Layer } from "effect"
import type { Column } from "./columns.js"
import { listFiles } from "./files.js"
import { normalize, type Range } from "./RangeSet.js"
import { snapshotDir, snapshotHeightOf } from "./layout.js"

export class CheckpointError extends Data.TaggedError("CheckpointError")<{ readonly message: string }> {}

export interface CommittedFile {
  /** relative to the dataset folder, with forward slashes */
  readonly path: string
  readonly rows: number
  readonly bytes: number
  readonly sha256: string
  /** [start, end) in the source's unit (heights or row positions); absent for snapshots */
  readonly range?: Range
  readonly min_height: number | null
  readonly max_height: number | null
  readonly committed_at: string
}

export interface CommittedSnapshot {
  readonly snapshot_height: number
  readonly snapshot_time: string
  readonly consistency: "exact" | "best-effort"
  readonly watermark_before: number
  readonly watermark_after: number
  readonly rows: number
  readonly duplicates_dropped: number
  readonly reads: number
  /** the lists read into this snapshot (e.g. one per denom); a later run may add lists */
  readonly lists: ReadonlyArray<string>
  readonly note?: string
}

export interface Manifest {
  readonly dataset: string
  readonly format_version: 1
  /** what `committed` ranges count: heights, row positions; snapshots and samples have none */
  readonly unit: "height" | "position" | "snapshot" | "sample"
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>
  readonly files: ReadonlyArray<CommittedFile>
  readonly committed: ReadonlyArray<Range>
  readonly snapshots: ReadonlyArray<CommittedSnapshot>
}

export interface CheckpointsService {
  readonly root: string
  /** Loads (or starts) a dataset's manifest and removes uncommitted leftovers from its folder. */
  readonly open: (dataset: string, unit: Manifest["unit"], columns: ReadonlyArray<Column>) => Effect.Effect<Manifest, CheckpointError>
  readonly get: (dataset: string) => Effect.Effect<Manifest | undefined, CheckpointError>
  /** Records files (already renamed into place) and the range they complete. */
  readonly commitFiles: (dataset: string, files: ReadonlyArray<CommittedFile>, range?: Range) => Effect.Effect<void, CheckpointError>
  readonly commitSnapshot: (dataset: string, files: ReadonlyArray<CommittedFile>, snapshot: CommittedSnapshot) => Effect.Effect<void, CheckpointError>
  /** Keeps the `keep` newest snapshots: drops the others from the manifest, then deletes their files. Returns the heights dropped. */
  readonly pruneSnapshots: (dataset: string, keep: number) => Effect.Effect<ReadonlyArray<number>, CheckpointError>
}

export class Checkpoints extends Context.Tag("chain-lake/Checkpoints")<Checkpoints, CheckpointsService>() {}

const MANIFEST = "_manifest.json"

export const makeCheckpoints = (root: string) =>
  Effect.gen(function* () {
    const cache = new Map<string, Manifest>()
    const lock = yield* Effect.makeSemaphore(1)
    const fail = (e: unknown) => new CheckpointError({ message: (e as Error).message })

    const write = (m: Manifest) =>
      Effect.tryPromise({
        try: async () => {
          const dir = join(root, m.dataset)
          await mkdir(dir, { recursive: true })
          const tmp = join(dir, `${MANIFEST}.tmp`)
          await writeFile(tmp, JSON.stringify(m, null, 1))
          await rename(tmp, join(dir, MANIFEST))
          cache.set(m.dataset, m)
        },
        catch: fail
      })

    const read = (dataset: string) =>
      Effect.tryPromise({
        try: async () => {
          if (cache.has(dataset)) return cache.get(dataset)
          const text = await readFile(join(root, dataset, MANIFEST), "utf8").catch((e: NodeJS.ErrnoException) => {
            if (e.code === "ENOENT") return undefined
            throw e
          })
          if (text === undefined) return undefined
          const m = JSON.parse(text) as Manifest
          cache.set(dataset, m)
          return m
        },
        catch: (e) => new CheckpointError({ message: `cannot read the manifest of ${dataset}: ${(e as Error).message}` })
      })

    const service: CheckpointsService = {
      root,
      get: read,
      open: (dataset, unit, columns) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const existing = yield* read(dataset)
            if (existing && existing.unit !== unit)
              return yield* new CheckpointError({ message: `${dataset}/_manifest.json was written for unit ${existing.unit}, not ${unit}` })
            const manifest: Manifest = existing ?? { dataset, format_version: 1, unit, columns: columns.map((c) => ({ name: c.name, type: c.type })), files: [], committed: [], snapshots: [] }
            // leftovers of an interrupted run: temp files and files the manifest never listed
            const listed = new Set(manifest.files.map((f) => f.path))
            const dir = join(root, dataset)
            for (const rel of yield* Effect.promise(() => listFiles(dir))) {
              const file = join(dir, rel)
              if (rel.endsWith(".tmp") || rel.endsWith(".pending") || (rel.endsWith(".parquet") && !listed.has(rel))) yield* Effect.promise(() => rm(file, { force: true }))
            }
            if (!existing) yield* write(manifest)
            return manifest
          })
        ),
      commitFiles: (dataset, files, range) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const m = yield* read(dataset)
            if (!m) return yield* new CheckpointError({ message: `${dataset} was not opened` })
            const paths = new Set(files.map((f) => f.path))
            yield* write({
              ...m,
              files: [...m.files.filter((f) => !paths.has(f.path)), ...files],
              committed: range ? normalize([...m.committed, range]) : m.committed
            })
          })
        ),
      commitSnapshot: (dataset, files, snapshot) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const m = yield* read(dataset)
            if (!m) return yield* new CheckpointError({ message: `${dataset} was not opened` })
            // a snapshot may be completed by later runs (more denoms): merge lists and counts
            const prior = m.snapshots.find((s) => s.snapshot_height === snapshot.snapshot_height)
            const merged: CommittedSnapshot = prior
              ? {
                  ...snapshot,
                  rows: prior.rows + snapshot.rows,
                  duplicates_dropped: prior.duplicates_dropped + snapshot.duplicates_dropped,
                  lists: [...prior.lists, ...snapshot.lists],
                  consistency: prior.consistency === "exact" && snapshot.consistency === "exact" ? "exact" : "best-effort"
                }
              : snapshot
            yield* write({
              ...m,
              files: [...m.files, ...files],
              snapshots: [...m.snapshots.filter((s) => s.snapshot_height !== snapshot.snapshot_height), merged]
            })
          })
        ),
      pruneSnapshots: (dataset, keep) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const m = yield* read(dataset)
            if (!m || m.snapshots.length <= keep) return []
            const kept = new Set([...m.snapshots].sort((a, b) => b.snapshot_height - a.snapshot_height).slice(0, Math.max(0, keep)).map((s) => s.snapshot_height))
            const dropped = m.snapshots.filter((s) => !kept.has(s.snapshot_height)).map((s) => s.snapshot_height)
            const isDropped = (path: string) => dropped.includes(snapshotHeightOf(path) ?? NaN)
            // the manifest first: from then on the files are leftovers, removed now (a snapshot's
            // files are all in its folder) or by the next open
            yield* write({ ...m, files: m.files.filter((f) => !isDropped(f.path)), snapshots: m.snapshots.filter((s) => kept.has(s.snapshot_height)) })
            yield* Effect.promise(async () => {
              for (const h of dropped) await rm(join(root, dataset, snapshotDir(h)), { recursive: true, force: true })
            })
            return dropped
          })
        )
    }
    return service
  })

export const layerCheckpoints = (root: string) => Layer.effect(Checkpoints, makeCheckpoints(root))
