/** This process as a writer of a lake: what each part of the Manifests service works with. */
import { readdir, rm } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { makeFolder } from "../files.js"
import { SCRATCH, STAGING, scratchFolderOf, stagingFolder } from "../layout.js"
import { newWriterId, otherWriterRunning, writerGone } from "../lock.js"
import type { Manifest } from "../manifest.js"
import { fail, type ManifestError } from "./errors.js"
import type { KnownFiles } from "./jsonFiles.js"

export interface ManifestsOptions {
  /** the committed files live elsewhere (an S3 export's work folder mirrors only the manifests): a listed file missing here is not a loss */
  readonly filesElsewhere?: boolean
  /**
   * Called inside each commit, once its files are in place, with what the commit added (the
   * manifest's format, holding only the new files, range and snapshot lists): an S3 export uploads
   * it there, so the remote lake grows commit by commit. A failure fails the commit's run.
   */
  readonly afterCommit?: (added: Manifest) => Effect.Effect<void, ManifestError>
  /** Brings a committed file that is not here (`path` in `dataset`'s folder of the remote lake) to the local file `to` (withCommittedFiles). */
  readonly fetchCommitted?: (dataset: string, path: string, to: string) => Effect.Effect<void, ManifestError>
}

export interface LakeWriter {
  readonly root: string
  /** this writer's name in locks, temp file names and its staging folder */
  readonly writer: string
  /** this writer's staging folder (layout.ts stagedPath) */
  readonly staging: string
  readonly options: ManifestsOptions
  /** the lake files this writer last read or wrote (jsonFiles.ts) */
  readonly known: KnownFiles
  /** the lock files this process holds, one at a time: its fibers queue here; processes queue on the lock file */
  readonly local: Effect.Semaphore
}

/** Removes the spill folders of writers that were killed (a live writer removes its own). */
const removeGoneScratch = (root: string) =>
  Effect.promise(async () => {
    // Stryker disable next-line BooleanLiteral: the folders it removes exist (force only spares an error on one just gone)
    for (const w of await readdir(join(root, SCRATCH)).catch(() => [] as Array<string>))
      if (writerGone(w)) await rm(scratchFolderOf(root, w), { recursive: true, force: true })
  })

/**
 * Makes this writer seen by the lake's other writers from now on (its staging folder, which its
 * first staged file would make only later) and returns the pids of the other processes of this
 * host writing the lake now: those whose staging or spill folder is there (a writer of another
 * host cannot be told).
 */
export const joinWriters = (lake: LakeWriter) =>
  Effect.tryPromise({
    try: async () => {
      await makeFolder(lake.staging)
      const folders = await Promise.all([STAGING, SCRATCH].map((f) => readdir(join(lake.root, f)).catch(() => [] as Array<string>)))
      const pids = folders.flat().flatMap((w) => otherWriterRunning(w) ?? [])
      return [...new Set(pids)].sort((a, b) => a - b)
    },
    catch: fail
  })

/** Starts a new writer of the lake at `root`; its staging folder goes with its scope (a killed writer's, with the next open). */
export const startWriter = (root: string, options: ManifestsOptions) =>
  Effect.gen(function* () {
    const writer = newWriterId()
    const staging = stagingFolder(root, writer)
    yield* removeGoneScratch(root)
    const local = yield* Effect.makeSemaphore(1)
    yield* Effect.addFinalizer(() => Effect.promise(() => rm(staging, { recursive: true, force: true }).catch(() => undefined)))
    const lake: LakeWriter = { root, writer, staging, options, known: new Map(), local }
    return lake
  })
