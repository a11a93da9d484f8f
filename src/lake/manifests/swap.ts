/**
 * The swap of committed files for others in one commit (a compaction's merge, a rollback's cut
 * copies), in an order such that a reader of the manifest sees the old files or the new ones,
 * never both and never neither: an intent naming the new paths in the writer's staging folder, the
 * new files in place (unlisted: not data yet), the manifest listing them and marking the old ones
 * retired, then the old ones moved out of the dataset folder, into the lake's retired folder, where
 * they wait out their grace period (retention.ts). A writer killed before the manifest write
 * leaves unlisted new files its intent names, and one killed after it leaves retired files in
 * place: the next open finishes either (recovery.ts).
 */
import { rename, rm, stat } from "node:fs/promises"
import { dirname } from "node:path"
import { Effect } from "effect"
import { exists, makeFolder, pathInside } from "../files.js"
import { datasetPath, intentPath, manifestPath, retiredPath, stagedPath } from "../layout.js"
import { writerGone } from "../lock.js"
import { type CommittedFile, type Manifest, MANIFEST_FILE, type RetiredFile } from "../manifest.js"
import { ManifestError } from "./errors.js"
import { remember, writeJson } from "./jsonFiles.js"
import type { LakeWriter } from "./lakeWriter.js"
import { locked } from "./locks.js"
import { type Basis, opened, write } from "./manifestFile.js"
import { drop, publish } from "./commit.js"

/** An intent this old belongs to no running compaction, whoever wrote it. */
const INTENT_STALE_MS = 60 * 60_000

/**
 * Whether the intent of writer `w` at `path` is abandoned: its writer is gone (this host), or it
 * is another host's intent left for an hour (a compaction's swap takes milliseconds).
 */
export const intentAbandoned = async (w: string, path: string) =>
  writerGone(w) || Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now()) > INTENT_STALE_MS

/** Moves a retired file out of the dataset folder, where no glob sees it (nothing to do when it is gone already). */
export const retire = async (root: string, dataset: string, path: string) => {
  const from = pathInside(datasetPath(root, dataset), path)
  // Stryker disable next-line ConditionalExpression: the manifest's schema already refuses a path outside the dataset; a second guard
  if (!from) return
  const to = retiredPath(root, dataset, path)
  await makeFolder(dirname(to))
  await rename(from, to).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== "ENOENT") throw e
  })
}

/** `m` with `files` listed where the first of `replaced` was (every file before it is kept: a manifest keeps its order), `replaced` retired at `at`. */
const swapped = (
  m: Manifest,
  replaced: ReadonlyArray<CommittedFile>,
  files: ReadonlyArray<CommittedFile>,
  change: Partial<Pick<Manifest, "committed" | "snapshots">>,
  at: string
): Manifest => {
  const gone = new Set(replaced.map((r) => r.path))
  const kept = m.files.filter((f) => !gone.has(f.path))
  const found = m.files.findIndex((f) => gone.has(f.path))
  const first = found < 0 ? kept.length : found
  const newlyRetired: Array<RetiredFile> = replaced.map((r) => ({
    path: r.path,
    retired_at: at,
    replaced_by: files.map((f) => f.path)
  }))
  return {
    ...m,
    ...change,
    files: [...kept.slice(0, first), ...files, ...kept.slice(first)],
    retired: [...(m.retired ?? []), ...newlyRetired]
  }
}

/**
 * Swaps `replaced` (committed files of `m`, read as `basis`) for `files` (staged, new paths) and
 * writes `m` changed by `change`, in the order above. Under the lock.
 */
const swap = (
  lake: LakeWriter,
  m: Manifest,
  basis: Basis,
  replaced: ReadonlyArray<CommittedFile>,
  files: ReadonlyArray<CommittedFile>,
  change: Partial<Pick<Manifest, "committed" | "snapshots">> = {}
) =>
  Effect.gen(function* () {
    const dataset = m.dataset
    const staged = (rel: string) => stagedPath(lake.staging, dataset, rel)
    const intent = intentPath(lake.staging, dataset)
    // Stryker disable next-line ObjectLiteral,ArrowFunction: read only after a kill mid-swap (the recovery tests write it by hand)
    yield* writeJson(intent, `${intent}.tmp`, { paths: files.map((f) => f.path) })
    // the new files in place first, unlisted: a reader of the manifest sees the old files until the manifest names the new ones
    yield* publish(lake, dataset, files, staged)
    // fenced: the new files go back to staging (unlisted, no one else names them), so that the commit made again finds them there
    const written = yield* write(lake, swapped(m, replaced, files, change, new Date().toISOString()), basis).pipe(
      Effect.tapError(() =>
        Effect.promise(async () => {
          for (const f of files) await rename(datasetPath(lake.root, dataset, f.path), staged(f.path)).catch(() => undefined)
          await rm(intent, { force: true })
        })
      )
    )
    // the old files out of the folder: a glob sees the old files or the new ones again
    yield* Effect.tryPromise({
      try: async () => {
        for (const r of replaced) await retire(lake.root, dataset, r.path)
        await rm(intent, { force: true })
      },
      catch: (e) =>
        new ManifestError({
          message: `could not move replaced files of ${dataset} out of its folder: ${(e as Error).message} (the next run finishes it)`
        })
    })
    yield* remember(lake.known, manifestPath(lake.root, dataset), written)
    return { committed: true } as const
  })

/** A compaction's commit (ManifestsService.commitCompaction): unless another writer changed or replaced one of `replaced` first, or a path of `files` is in use. */
export const commitCompaction = (
  lake: LakeWriter,
  dataset: string,
  replaced: ReadonlyArray<CommittedFile>,
  files: ReadonlyArray<CommittedFile>
) =>
  locked(
    lake,
    dataset,
    Effect.gen(function* () {
      const { m, basis } = yield* opened(lake, dataset)
      const listed = new Map(m.files.map((f) => [f.path, f]))
      const changed = replaced.find((r) => listed.get(r.path)?.sha256 !== r.sha256)
      const retired = new Set((m.retired ?? []).map((r) => r.path))
      const taken = yield* Effect.promise(async () => {
        for (const f of files)
          if (listed.has(f.path) || retired.has(f.path) || (await exists(datasetPath(lake.root, dataset, f.path)))) return f.path
        return undefined
      })
      if (changed || taken) {
        yield* drop(lake, dataset, files)
        return {
          committed: false,
          ranges: [],
          reason: changed ? `another writer replaced ${changed.path} first` : `${taken} is in use`
        } as const
      }
      return yield* swap(lake, m, basis, replaced, files)
    })
  )

/** A rollback's commit (ManifestsService.commitRollback): unless the manifest changed since `read`. */
export const commitRollback = (
  lake: LakeWriter,
  read: Manifest,
  replaced: ReadonlyArray<CommittedFile>,
  files: ReadonlyArray<CommittedFile>,
  kept: Pick<Manifest, "committed" | "snapshots">
) =>
  locked(
    lake,
    read.dataset,
    Effect.gen(function* () {
      const { m, basis } = yield* opened(lake, read.dataset)
      if ((m.version ?? 0) !== (read.version ?? 0)) {
        yield* drop(lake, read.dataset, files)
        return {
          committed: false,
          ranges: m.committed,
          reason: `${read.dataset}/${MANIFEST_FILE} changed since the rollback read it`
        } as const
      }
      return yield* swap(lake, m, basis, replaced, files, kept)
    })
  )
