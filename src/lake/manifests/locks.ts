/**
 * The locks a writer holds while it changes the lake's manifests or identity, and the fencing of a
 * writer that lost its lock: lock.ts takes over a lock whose holder is provably gone, and such a
 * holder may still wake up (a resumed SIGSTOP). Its commit is then refused (Fenced) and made again.
 */
import { readdir, rm } from "node:fs/promises"
import { dirname } from "node:path"
import { Data, Effect } from "effect"
import { makeFolder } from "../files.js"
import { datasetPath, isManifestTmpName, manifestLockPath, manifestTmpName } from "../layout.js"
import { withLockFile, type LockError } from "../lock.js"
import { fail, ManifestError } from "./errors.js"
import type { LakeWriter } from "./lakeWriter.js"

/** A manifest write refused because this writer no longer holds the lock, or the manifest changed since it was read: the commit is made again from the start. */
export class Fenced extends Data.TaggedError("Fenced")<{ readonly dataset: string }> {}

/** How many times a fenced commit is made again (each time from the manifest on disk) before it fails. */
const FENCED_RETRIES = 3

/** Runs `self` holding the lock file `path` (its folder made first). */
export const holding = <A, E extends { readonly _tag: string }>(lake: LakeWriter, path: string, self: Effect.Effect<A, E>) =>
  lake.local.withPermits(1)(
    Effect.flatMap(
      Effect.tryPromise({ try: () => makeFolder(dirname(path)), catch: fail }),
      // Stryker disable next-line all: a lock held past its wait is not provoked by the unit tests (lake-files.test tests the wait and its message)
      () =>
        withLockFile(path, lake.writer, self).pipe(
          Effect.mapError((e: E | LockError) =>
            e._tag === "LockError" ? new ManifestError({ message: (e as LockError).message }) : (e as E)
          )
        )
    )
  )

/**
 * Fencing, right after the lock is taken: every other writer's pending manifest write (its temp
 * file) is deleted. A writer that lost the lock while stopped, after its last check and before
 * its rename, then finds nothing to rename when it resumes, and its commit fails: the rename is
 * an atomic step on one name, so either it happened before this (and this writer reads the
 * manifest it wrote) or it cannot happen at all. The tmp a writer made before its check is
 * there for this to find; one it makes after the lock changed hands fails its check.
 */
const fenceOthers = (lake: LakeWriter, dataset: string) =>
  Effect.tryPromise({
    try: async () => {
      for (const name of await readdir(datasetPath(lake.root, dataset)).catch(() => [] as Array<string>))
        if (isManifestTmpName(name) && name !== manifestTmpName(lake.writer))
          await rm(datasetPath(lake.root, dataset, name), { force: true })
    },
    catch: fail
  })

/**
 * Runs a commit's `self` holding the dataset's lock. A commit fenced (its writer lost the lock,
 * stopped past its lease, or the manifest changed under it) wrote nothing, and is made again
 * from the manifest on disk: it finds what the other writer committed, and gives way or adds
 * to it. After FENCED_RETRIES it fails, in one line.
 */
export const locked = <A>(lake: LakeWriter, dataset: string, self: Effect.Effect<A, ManifestError | Fenced>) =>
  holding(lake, manifestLockPath(lake.root, dataset), Effect.zipRight(fenceOthers(lake, dataset), self)).pipe(
    Effect.retry({ times: FENCED_RETRIES, while: (e) => e._tag === "Fenced" }),
    Effect.catchTag("Fenced", () =>
      Effect.fail(
        new ManifestError({
          message: `${dataset}: another writer took this writer's lock ${FENCED_RETRIES + 1} times before it could commit (this process was stopped or too slow past the lock's lease); nothing of it was committed: run it again`
        })
      )
    )
  )
