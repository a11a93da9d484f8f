/**
 * A dataset's manifest on disk: read as it is now (another writer may have changed it), and
 * written only by the holder of its lock, only over the manifest it read.
 */
import { rename, rm, stat, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { Effect } from "effect"
import { makeFolder } from "../files.js"
import { datasetPath, manifestLockPath, manifestPath, manifestTmpName } from "../layout.js"
import { holds } from "../lock.js"
import { Manifest } from "../manifest.js"
import { fail, ManifestError } from "./errors.js"
import { Damaged, readJsonAt, stampOf } from "./jsonFiles.js"
import type { LakeWriter } from "./lakeWriter.js"
import { Fenced } from "./locks.js"

/** The manifest a commit read and builds on: its stamp (none: there was no manifest) and version. */
export type Basis = { readonly stamp: string | undefined; readonly version: number }
const NO_MANIFEST: Basis = { stamp: undefined, version: 0 }

/**
 * Tests only: milliseconds to wait between a manifest write's last check and its rename, the
 * window in which a stopped writer's commit must still be fenced (test/lake/lake-writers.test.ts).
 */
const pauseBeforeRename = () => {
  const ms = Number(process.env.CHAIN_LAKE_TEST_PAUSE_BEFORE_MANIFEST_MS)
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve()
}

/** The manifest on disk and the basis a write over it needs. */
export const readAt = (lake: LakeWriter, dataset: string) =>
  Effect.tryPromise({
    try: async () => {
      const found = await readJsonAt(lake.known, manifestPath(lake.root, dataset), Manifest)
      return { manifest: found?.value, basis: found ? { stamp: found.stamp, version: found.value.version ?? 0 } : NO_MANIFEST }
    },
    catch: (e) =>
      new ManifestError({
        message: `cannot read the manifest of ${dataset}: ${e instanceof Damaged ? `${manifestPath(lake.root, dataset)} is damaged at ${e.issue}` : (e as Error).message}`
      })
  })

/** The manifest on disk, or undefined. */
export const read = (lake: LakeWriter, dataset: string) => Effect.map(readAt(lake, dataset), (r) => r.manifest)

/** The manifest on disk and its basis, for a commit: one that `open` started. */
export const opened = (lake: LakeWriter, dataset: string) =>
  Effect.flatMap(readAt(lake, dataset), (r) =>
    r.manifest
      ? Effect.succeed({ m: r.manifest, basis: r.basis })
      : Effect.fail(new ManifestError({ message: `${dataset} was not opened` }))
  )

/**
 * Writes `m` over the manifest read as `basis`, as version basis + 1, only if this writer still
 * holds the dataset's lock and the manifest on disk is still that one (same file: every write
 * renames a new one into place, so its inode, size and mtime differ); otherwise Fenced, nothing
 * written. The check is the last step before the rename; a writer stopped between the two is
 * fenced by the next holder deleting its temp file (locks.ts fenceOthers). Returns what it wrote.
 */
export const write = (lake: LakeWriter, m: Manifest, basis: Basis) =>
  Effect.tryPromise({
    try: async () => {
      const written: Manifest = { ...m, version: basis.version + 1 }
      const path = manifestPath(lake.root, m.dataset)
      const tmp = datasetPath(lake.root, m.dataset, manifestTmpName(lake.writer))
      await makeFolder(dirname(path))
      await writeFile(tmp, JSON.stringify(written, null, 1))
      const onDisk = await stat(path).then(stampOf, () => undefined)
      if (onDisk !== basis.stamp || !(await holds(manifestLockPath(lake.root, m.dataset), lake.writer))) {
        await rm(tmp, { force: true })
        throw new Fenced({ dataset: m.dataset })
      }
      await pauseBeforeRename()
      await rename(tmp, path).catch((e: NodeJS.ErrnoException) => {
        // the temp file was deleted by the writer that took the lock over: fenced
        throw e.code === "ENOENT" ? new Fenced({ dataset: m.dataset }) : e
      })
      return written
    },
    catch: (e) => (e instanceof Fenced ? e : fail(e))
  })
