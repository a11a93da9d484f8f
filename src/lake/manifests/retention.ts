/** What a dataset keeps of its past: retired files until their grace period is over (vacuum), and its newest snapshots (pruneSnapshots). */
import { rm, stat } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { datasetPath, retiredFolder, retiredPath, snapshotDir, snapshotHeightOf } from "../layout.js"
import type { Manifest } from "../manifest.js"
import { ManifestError } from "./errors.js"
import type { LakeWriter } from "./lakeWriter.js"
import { locked } from "./locks.js"
import { readAt, write } from "./manifestFile.js"
import { recover } from "./recovery.js"

/** The bytes of retired files a dataset keeps by default, as a multiple of its committed bytes (Manifests.vacuum). */
export const RETIRED_BUDGET = 4

/**
 * The retired files of `m` to delete: those retired `graceMs` ago or more, and the oldest beyond
 * `maxRetiredBytes`. Retired files wait out their grace for readers that listed them before the
 * swap, but not without bound: a lake compacted every round (--follow) retires its growing merged
 * file each time, and kept 544 MB for 12 MB of data. Beyond the budget (by default RETIRED_BUDGET
 * times the dataset's committed bytes: small files replaced by one merged, better compressed file
 * weigh more than it), the oldest go first, grace or not; chain-lake's readers read again when a
 * file they listed is gone.
 */
const expired = (root: string, dataset: string, m: Manifest, graceMs: number, maxRetiredBytes: number | undefined) =>
  Effect.gen(function* () {
    const now = Date.now()
    const budget = maxRetiredBytes ?? RETIRED_BUDGET * m.files.reduce((sum, f) => sum + f.bytes, 0)
    const sizes = yield* Effect.promise(() =>
      Promise.all(
        (m.retired ?? []).map((r) =>
          stat(retiredPath(root, dataset, r.path)).then(
            (i) => i.size,
            () => 0
          )
        )
      )
    )
    const newestFirst = (m.retired ?? [])
      .map((r, i) => ({ r, size: sizes[i] }))
      .sort((a, b) => Date.parse(b.r.retired_at) - Date.parse(a.r.retired_at))
    let kept = 0
    const overBudget = new Set<string>()
    for (const { r, size } of newestFirst) {
      kept += size
      if (kept > budget) overBudget.add(r.path)
    }
    return (m.retired ?? []).filter((r) => now - Date.parse(r.retired_at) >= graceMs || overBudget.has(r.path))
  })

/**
 * Finishes what killed writers left of `dataset` (as `open` does), deletes the retired files
 * `expired` names, then drops them from the manifest; returns their paths (ManifestsService.vacuum).
 */
export const vacuum = (lake: LakeWriter, dataset: string, graceMs: number, maxRetiredBytes?: number) =>
  locked(
    lake,
    dataset,
    Effect.gen(function* () {
      const { manifest: m, basis } = yield* readAt(lake, dataset)
      // what a writer killed mid-commit left (a compaction's unlisted files, retired files still in place) is finished first
      if (m) yield* recover(lake, dataset, m)
      if (!m) return []
      const deleted = yield* expired(lake.root, dataset, m, graceMs, maxRetiredBytes)
      if (deleted.length === 0) return []
      // the files first: a kill in between leaves entries whose files are gone, which the next vacuum drops
      yield* Effect.tryPromise({
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: a retired file already gone is the only case force covers
        try: () => Promise.all(deleted.map((r) => rm(retiredPath(lake.root, dataset, r.path), { force: true }))),
        // Stryker disable next-line ArrowFunction,ObjectLiteral,StringLiteral: a delete failing is not provoked by any test
        catch: (e) => new ManifestError({ message: `could not delete retired files of ${dataset}: ${(e as Error).message}` })
      })
      const gone = new Set(deleted.map((r) => r.path))
      yield* write(lake, { ...m, retired: (m.retired ?? []).filter((r) => !gone.has(r.path)) }, basis)
      return deleted.map((r) => r.path)
    })
  )

/** Keeps the `keep` newest snapshots: drops the others from the manifest, then deletes their files; returns the heights dropped (ManifestsService.pruneSnapshots). */
export const pruneSnapshots = (lake: LakeWriter, dataset: string, keep: number) =>
  locked(
    lake,
    dataset,
    Effect.gen(function* () {
      const { manifest: m, basis } = yield* readAt(lake, dataset)
      if (!m || m.snapshots.length <= keep) return []
      const kept = new Set(
        [...m.snapshots]
          .sort((a, b) => b.snapshot_height - a.snapshot_height)
          .slice(0, Math.max(0, keep))
          .map((s) => s.snapshot_height)
      )
      const dropped = m.snapshots.filter((s) => !kept.has(s.snapshot_height)).map((s) => s.snapshot_height)
      const isDropped = (path: string) => dropped.includes(snapshotHeightOf(path) ?? NaN)
      // the manifest first: from then on the files are no longer committed
      yield* write(
        lake,
        {
          ...m,
          files: m.files.filter((f) => !isDropped(f.path)),
          snapshots: m.snapshots.filter((s) => kept.has(s.snapshot_height)),
          ...(m.retired ? { retired: m.retired.filter((r) => !isDropped(r.path)) } : {})
        },
        basis
      )
      yield* Effect.promise(async () => {
        for (const h of dropped) {
          // Stryker disable next-line BooleanLiteral: the folder exists when pruned (force only spares an error on one just gone)
          await rm(datasetPath(lake.root, dataset, snapshotDir(h)), { recursive: true, force: true })
          // Stryker disable next-line BooleanLiteral: the tests prune no snapshot with retired files, so this folder is absent, which rm with force takes recursive or not
          await rm(join(retiredFolder(lake.root, dataset), snapshotDir(h)), { recursive: true, force: true })
        }
      })
      return dropped
    })
  )
