/**
 * Manifests: one manifest per dataset (`OUT/<dataset>/_manifest.json`) listing every committed
 * file with rows, bytes, sha256 and its height or position range, and every committed snapshot.
 *
 * The commit protocol, safe for several writers (processes, hosts on a shared folder) at once:
 * 1. a writer writes its files into its own staging folder, `OUT/.chain-lake/staging/<writer>/`,
 *    named `*.pending` (no reader's glob matches them);
 * 2. it takes the dataset's lock (`OUT/<dataset>/_manifest.lock`, lock.ts) and reads the manifest
 *    from disk: if another writer committed any of the range (or snapshot list) meanwhile, its own
 *    files are dropped and the commit says so; otherwise
 * 3. it writes the manifest with the files listed: to a temp file of its own, then, if it still
 *    holds the lock and the manifest on disk is still the one it read, renamed into place (a
 *    writer that takes the lock deletes other writers' temp files first, so one that lost the lock
 *    while stopped cannot rename; see `write` and `fenceOthers`), then
 * 4. renames the files into place, and frees the lock.
 * A file is visible to globs only once it is listed. A writer killed between 3 and 4 leaves listed
 * files in its staging folder: the next open (under the lock) finishes the renames. Nothing else
 * is deleted: a Parquet file the manifest does not list was put there by someone else and is kept,
 * never replaced (a commit whose file's place holds one fails, naming it); a dataset folder with
 * Parquet files but no manifest is refused rather than guessed at. At open, each listed file's size
 * is checked against the manifest: a damaged one stops the run.
 *
 * A compaction (src/lake/compaction.ts) swaps files of one partition for their merge in one commit,
 * in another order, so that a reader of the manifest sees the old files or the new ones, never
 * both and never neither: it writes its intent (the new paths) to its staging folder, renames the
 * new files into place (not yet listed: not data), writes the manifest listing them instead of the
 * old ones, which it marks `retired`, and moves the old files out of the dataset folder, into
 * `OUT/.chain-lake/retired/<dataset>/<path>.retired` (no glob of the folder sees them; a reader
 * that listed one before the swap finds it there until the grace period is over, when `vacuum`
 * deletes it). A compactor killed before the manifest write leaves unlisted new files its intent
 * names, and one killed after it leaves retired files in place: the next open finishes either.
 */
import { readdir, readFile, rename, rm, rmdir, stat, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Context, Data, Effect, Either, Layer, type Schema } from "effect"
import type { Column } from "./columns.js"
import { listFiles, pathInside, makeFolder } from "./files.js"
import {
  type CommittedFile,
  type CommittedSnapshot,
  decodeLakeFile,
  IDENTITY_FILE,
  LakeIdentity,
  Manifest,
  MANIFEST_FILE,
  mergeSnapshot,
  type RetiredFile
} from "./manifest.js"
import { holds, newWriterId, withLockFile, writerGone, type LockError } from "./lock.js"
import { normalize, subtract, total, type Range } from "./RangeSet.js"
import { PENDING, snapshotDir, snapshotFile, snapshotHeightOf, STAGING } from "./layout.js"
import { missingFilesProblem, stagedBy } from "./listed.js"

export class ManifestError extends Data.TaggedError("ManifestError")<{ readonly message: string }> {}

/** A manifest write refused because this writer no longer holds the lock, or the manifest changed since it was read: the commit is made again from the start. */
class Fenced extends Data.TaggedError("Fenced")<{ readonly dataset: string }> {}

/** How many times a fenced commit is made again (each time from the manifest on disk) before it fails. */
const FENCED_RETRIES = 3

/**
 * Tests only: milliseconds to wait between a manifest write's last check and its rename, the
 * window in which a stopped writer's commit must still be fenced (test/lake-writers.test.ts).
 */
const pauseBeforeRename = () => {
  const ms = Number(process.env.CHAIN_LAKE_TEST_PAUSE_BEFORE_MANIFEST_MS)
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve()
}

export type { CommittedFile, CommittedSnapshot, LakeIdentity, Manifest }

/** The bytes of retired files a dataset keeps by default, as a multiple of its committed bytes (Manifests.vacuum). */
export const RETIRED_BUDGET = 4

/** How many of the newest anchors a lake keeps: enough that a pruning indexer still serves one of them. */
const ANCHORS_KEPT = 8
/** How many older anchors it keeps besides, spread over its history: a fork deeper than the newest runs still finds a block in common (engine/identity.ts findFork). */
const OLDER_ANCHORS_KEPT = 8

/**
 * The anchors a lake keeps, ascending: the newest ANCHORS_KEPT, and OLDER_ANCHORS_KEPT of the
 * others, the oldest always, then those farthest from their neighbours (each time the one
 * closest to the anchor before it goes), so the kept ones spread out as the lake grows.
 */
export const keptAnchors = <A extends { readonly height: number }>(anchors: ReadonlyArray<A>): Array<A> => {
  const sorted = [...anchors].sort((a, b) => a.height - b.height)
  const newest = sorted.slice(-ANCHORS_KEPT)
  const older = sorted.slice(0, Math.max(0, sorted.length - ANCHORS_KEPT))
  while (older.length > OLDER_ANCHORS_KEPT) {
    let closest = 1
    for (let i = 2; i < older.length; i++)
      if (older[i].height - older[i - 1].height < older[closest].height - older[closest - 1].height) closest = i
    older.splice(closest, 1)
  }
  return [...older, ...newest]
}

/** What a commit did: listed the files, or dropped them because another writer committed that work first. */
export type CommitOutcome =
  | { readonly committed: true }
  | {
      readonly committed: false
      /** what the other writer committed: the dataset's committed ranges, as read at the commit */
      readonly ranges: ReadonlyArray<Range>
      readonly reason: string
    }

export interface ManifestsService {
  readonly root: string
  /** this writer's name in locks and its staging folder */
  readonly writer: string
  /** This writer's staging folder: a file of `dataset` to be committed as `rel` is written at stagedPath(it, dataset, rel). */
  readonly staging: string
  /** Where to write a file of `dataset` that will be committed as `rel`. */
  readonly staged: (dataset: string, rel: string) => string
  /** Loads (or starts) a dataset's manifest and finishes a commit a killed writer left half done. */
  readonly open: (dataset: string, unit: Manifest["unit"], columns: ReadonlyArray<Column>) => Effect.Effect<Manifest, ManifestError>
  /** The manifest as it is on disk now, or undefined. */
  readonly get: (dataset: string) => Effect.Effect<Manifest | undefined, ManifestError>
  /** Commits staged files and the range they complete, unless another writer committed part of that range. */
  readonly commitFiles: (dataset: string, files: ReadonlyArray<CommittedFile>, range?: Range) => Effect.Effect<CommitOutcome, ManifestError>
  /** Commits a snapshot's staged files, unless another writer committed one of its lists at that height. */
  readonly commitSnapshot: (
    dataset: string,
    files: ReadonlyArray<CommittedFile>,
    snapshot: CommittedSnapshot
  ) => Effect.Effect<CommitOutcome, ManifestError>
  /** The chain this lake holds, or undefined for a lake that never recorded one. */
  readonly identity: Effect.Effect<LakeIdentity | undefined, ManifestError>
  /** Records the lake's chain and one more anchor (a height and its block hash). */
  readonly recordIdentity: (
    chainId: string,
    anchor: { readonly height: number; readonly hash: string }
  ) => Effect.Effect<void, ManifestError>
  /** Changes the lake's identity (a rollback's intent and log) under its lock; `change` gets it as it is on disk, and may refuse (nothing is written then). */
  readonly updateIdentity: (
    change: (prior: LakeIdentity | undefined) => LakeIdentity | ManifestError
  ) => Effect.Effect<LakeIdentity, ManifestError>
  /**
   * Swaps `replaced` (committed files of one partition) for `files` (staged, holding exactly their
   * rows) in one commit, unless another writer changed or replaced one of them first. The
   * replaced files stay in place, retired, until `vacuum` deletes them.
   */
  readonly commitCompaction: (
    dataset: string,
    replaced: ReadonlyArray<CommittedFile>,
    files: ReadonlyArray<CommittedFile>
  ) => Effect.Effect<CommitOutcome, ManifestError>
  /**
   * A rollback's commit (src/engine/rollback.ts): swaps `replaced` for `files` (staged cut-down
   * copies) as a compaction does, and sets the dataset's committed ranges and snapshots to
   * `kept`, unless the manifest changed since `read` (its version): then nothing is committed and
   * the rollback plans again from the manifest on disk.
   */
  readonly commitRollback: (
    read: Manifest,
    replaced: ReadonlyArray<CommittedFile>,
    files: ReadonlyArray<CommittedFile>,
    kept: Pick<Manifest, "committed" | "snapshots">
  ) => Effect.Effect<CommitOutcome, ManifestError>
  /**
   * Finishes what killed writers left of `dataset` (as `open` does), deletes the files retired more
   * than `graceMs` ago, and the oldest retired files beyond `maxRetiredBytes` (default:
   * RETIRED_BUDGET times the bytes of the dataset's committed files), then drops them from the manifest. Returns their paths.
   */
  readonly vacuum: (dataset: string, graceMs: number, maxRetiredBytes?: number) => Effect.Effect<ReadonlyArray<string>, ManifestError>
  /** Keeps the `keep` newest snapshots: drops the others from the manifest, then deletes their files. Returns the heights dropped. */
  readonly pruneSnapshots: (dataset: string, keep: number) => Effect.Effect<ReadonlyArray<number>, ManifestError>
  /**
   * Runs `use` over every committed file of `dataset`, given as local paths: the files in the lake
   * folder all in one call; each file that lives elsewhere (an S3 export's, brought by
   * `fetchCommitted`) alone, in a copy deleted right after, so local disk holds one at a time.
   * Returns the calls' results, concatenated.
   */
  readonly withCommittedFiles: <A, E>(
    dataset: string,
    use: (paths: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>, E>
  ) => Effect.Effect<Array<A>, E | ManifestError>
}

export class Manifests extends Context.Tag("chain-lake/Manifests")<Manifests, ManifestsService>() {}

const LOCK = "_manifest.lock"
/** The lock file in each dataset's folder that every change of its manifest holds (a reader that must not see a commit halfway may take it too). */
export const MANIFEST_LOCK = LOCK
/** A compactor's intent, in its staging folder of the dataset: the paths it is about to rename into place. */
const INTENT = "_compaction.json"
/** An intent this old belongs to no running compaction, whoever wrote it. */
const INTENT_STALE_MS = 60 * 60_000
/** Where each writer's DuckDB spills (ParquetSink's tempDirectory), one folder per writer. */
export const SCRATCH = join(".chain-lake", "tmp")
/** Where files a compaction replaced wait out their grace period (`<dataset>/<path>.retired`). */
export const RETIRED = join(".chain-lake", "retired")

/** Where the retired file `path` of `dataset` of the lake at `root` is kept until it is deleted. */
export const retiredPath = (root: string, dataset: string, path: string) => join(root, RETIRED, dataset, `${path}.retired`)

/** The DuckDB spill folder of a new writer of the lake at `root`. */
export const scratchFolder = (root: string) => join(root, SCRATCH, newWriterId())

/** A lake file that is not what its schema says (the issue names the field). */
class Damaged extends Error {
  constructor(readonly issue: string) {
    super(issue)
  }
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    // Stryker disable next-line ArrowFunction: undefined is as false here
    () => false
  )

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

/** What a commit added, in the manifest's format (an S3 commit-log fragment): `m`'s header with only the new parts. */
const fragment = (m: Manifest, added: Pick<Manifest, "files" | "committed" | "snapshots">): Manifest => ({
  dataset: m.dataset,
  format_version: m.format_version,
  unit: m.unit,
  columns: m.columns,
  ...added
})

/** Where a writer whose staging folder is `staging` writes a file of `dataset` to be committed as `rel`. */
export const stagedPath = (staging: string, dataset: string, rel: string) => join(staging, dataset, rel) + PENDING

export const makeManifests = (root: string, options: ManifestsOptions = {}) =>
  Effect.gen(function* () {
    const writer = newWriterId()
    const staging = join(root, STAGING, writer)
    // spill folders of writers that were killed (a live writer removes its own)
    yield* Effect.promise(async () => {
      // Stryker disable next-line BooleanLiteral: the folders it removes exist (force only spares an error on one just gone)
      for (const w of await readdir(join(root, SCRATCH)).catch(() => [] as Array<string>))
        if (writerGone(w)) await rm(join(root, SCRATCH, w), { recursive: true, force: true })
    })
    // fibers of this process queue here; processes queue on the lock file
    const local = yield* Effect.makeSemaphore(1)
    const fail = (e: unknown) => new ManifestError({ message: (e as Error).message })
    const staged = (dataset: string, rel: string) => stagedPath(staging, dataset, rel)
    /** Runs `self` holding the lock file `path` (its folder made first). */
    const holding = <A, E extends { readonly _tag: string }>(path: string, self: Effect.Effect<A, E>) =>
      local.withPermits(1)(
        Effect.flatMap(
          Effect.tryPromise({ try: () => makeFolder(dirname(path)), catch: fail }),
          // Stryker disable next-line all: a lock held past its wait is not provoked by the unit tests (lake-files.test tests the wait and its message)
          () =>
            withLockFile(path, writer, self).pipe(
              Effect.mapError((e: E | LockError) =>
                e._tag === "LockError" ? new ManifestError({ message: (e as LockError).message }) : (e as E)
              )
            )
        )
      )
    const lockPath = (dataset: string) => join(root, dataset, LOCK)
    /** This writer's temp name for the manifest of `dataset`: each writer has its own, so that a new holder of the lock can fence an old one's. */
    const manifestTmp = (_dataset: string) => `${MANIFEST_FILE}.${writer}.tmp`
    /**
     * Fencing, right after the lock is taken: every other writer's pending manifest write (its temp
     * file) is deleted. A writer that lost the lock while stopped, after its last check and before
     * its rename, then finds nothing to rename when it resumes, and its commit fails: the rename is
     * an atomic step on one name, so either it happened before this (and this writer reads the
     * manifest it wrote) or it cannot happen at all. The tmp a writer made before its check is
     * there for this to find; one it makes after the lock changed hands fails its check.
     */
    const fenceOthers = (dataset: string) =>
      Effect.tryPromise({
        try: async () => {
          for (const name of await readdir(join(root, dataset)).catch(() => [] as Array<string>))
            if (name.startsWith(`${MANIFEST_FILE}.`) && name.endsWith(".tmp") && name !== manifestTmp(dataset))
              await rm(join(root, dataset, name), { force: true })
        },
        catch: fail
      })
    /**
     * Runs a commit's `self` holding the dataset's lock. A commit fenced (its writer lost the lock,
     * stopped past its lease, or the manifest changed under it) wrote nothing, and is made again
     * from the manifest on disk: it finds what the other writer committed, and gives way or adds
     * to it. After FENCED_RETRIES it fails, in one line.
     */
    const locked = <A>(dataset: string, self: Effect.Effect<A, ManifestError | Fenced>) =>
      holding(lockPath(dataset), Effect.zipRight(fenceOthers(dataset), self)).pipe(
        Effect.retry({ times: FENCED_RETRIES, while: (e) => e._tag === "Fenced" }),
        Effect.catchTag("Fenced", () =>
          Effect.fail(
            new ManifestError({
              message: `${dataset}: another writer took this writer's lock ${FENCED_RETRIES + 1} times before it could commit (this process was stopped or too slow past the lock's lease); nothing of it was committed: run it again`
            })
          )
        )
      )

    /*
     * A manifest is read from disk at every commit, since another writer may have changed it. A
     * file that is still the one this writer last read or wrote (every write renames a new file
     * into place, so the same inode, size and mtime) is not parsed and decoded again: commits
     * stay cheap as a manifest grows to thousands of files.
     */
    const known = new Map<string, { readonly stamp: string; readonly value: unknown }>()
    const stampOf = (info: { ino: number; size: number; mtimeMs: number }) => `${info.ino}:${info.size}:${info.mtimeMs}`

    /** Writes one of the lake's files whole or not at all: to `tmp` (a name no other writer uses at once), then renamed over `path`. */
    const writeJson = (path: string, tmp: string, value: unknown) =>
      Effect.tryPromise({
        try: async () => {
          await makeFolder(dirname(path))
          await writeFile(tmp, JSON.stringify(value, null, 1))
          await rename(tmp, path)
        },
        catch: fail
      })
    /** Notes that `path` now holds `value` (called once a commit is complete: nothing may widen the gap between manifest and renames). */
    const remember = (path: string, value: unknown) =>
      // Stryker disable next-line ObjectLiteral: the cache: a miss reads the file again (a cost, not a result)
      Effect.tryPromise({ try: async () => void known.set(path, { stamp: stampOf(await stat(path)), value }), catch: fail })
    const manifestPath = (dataset: string) => join(root, dataset, MANIFEST_FILE)
    /** The manifest a commit read and builds on: its stamp (none: there was no manifest) and version. */
    type Basis = { readonly stamp: string | undefined; readonly version: number }
    const NO_MANIFEST: Basis = { stamp: undefined, version: 0 }
    /**
     * Writes `m` over the manifest read as `basis`, as version basis + 1, only if this writer still
     * holds the dataset's lock and the manifest on disk is still that one (same file: every write
     * renames a new one into place, so its inode, size and mtime differ); otherwise Fenced, nothing
     * written. The check is the last step before the rename; a writer stopped between the two is
     * fenced by the next holder deleting its temp file (fenceOthers). Returns what it wrote.
     */
    const write = (m: Manifest, basis: Basis) =>
      Effect.tryPromise({
        try: async () => {
          const written: Manifest = { ...m, version: basis.version + 1 }
          const path = manifestPath(m.dataset)
          const tmp = join(root, m.dataset, manifestTmp(m.dataset))
          await makeFolder(dirname(path))
          await writeFile(tmp, JSON.stringify(written, null, 1))
          const onDisk = await stat(path).then(stampOf, () => undefined)
          if (onDisk !== basis.stamp || !(await holds(lockPath(m.dataset), writer))) {
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

    /** One of the lake's files, decoded with `schema`; undefined when there is none; a Damaged error naming what is wrong. */
    const readJson = async <A, I>(path: string, schema: Schema.Schema<A, I>): Promise<A | undefined> =>
      (await readJsonAt(path, schema))?.value
    /** As readJson, with the file's stamp (inode, size, mtime) as read. */
    const readJsonAt = async <A, I>(
      path: string,
      schema: Schema.Schema<A, I>
    ): Promise<{ readonly value: A; readonly stamp: string } | undefined> => {
      // Stryker disable next-line BlockStatement: only ENOENT is provoked by tests (root reads everything)
      const info = await stat(path).catch((e: NodeJS.ErrnoException) => {
        // Stryker disable next-line ConditionalExpression: as above
        if (e.code === "ENOENT") return undefined
        throw e
      })
      if (!info) return undefined
      const stamp = stampOf(info)
      const cached = known.get(path)
      // Stryker disable next-line ConditionalExpression: the cache: a miss reads the file again
      if (cached?.stamp === stamp) return { value: cached.value as A, stamp }
      // read after the stat: if the file was replaced in between, the next stat differs and reads again
      // Stryker disable next-line StringLiteral: read without an encoding, the bytes parse as the same JSON
      const decoded = decodeLakeFile(schema, await readFile(path, "utf8"))
      if (Either.isLeft(decoded)) throw new Damaged(decoded.left)
      // Stryker disable next-line ObjectLiteral: the cache, as above
      known.set(path, { stamp, value: decoded.right })
      return { value: decoded.right, stamp }
    }

    /** The manifest on disk and the basis a write over it needs. */
    const readAt = (dataset: string) =>
      Effect.tryPromise({
        try: async () => {
          const found = await readJsonAt(manifestPath(dataset), Manifest)
          return { manifest: found?.value, basis: found ? { stamp: found.stamp, version: found.value.version ?? 0 } : NO_MANIFEST }
        },
        catch: (e) =>
          new ManifestError({
            message: `cannot read the manifest of ${dataset}: ${e instanceof Damaged ? `${manifestPath(dataset)} is damaged at ${e.issue}` : (e as Error).message}`
          })
      })
    const read = (dataset: string) => Effect.map(readAt(dataset), (r) => r.manifest)
    const opened = (dataset: string) =>
      Effect.flatMap(readAt(dataset), (r) =>
        r.manifest
          ? Effect.succeed({ m: r.manifest, basis: r.basis })
          : Effect.fail(new ManifestError({ message: `${dataset} was not opened` }))
      )

    /** Moves staged files into place (step 4). */
    const publish = (dataset: string, files: ReadonlyArray<CommittedFile>, from: (rel: string) => string) =>
      Effect.tryPromise({
        try: async () => {
          for (const f of files) {
            const target = join(root, dataset, f.path)
            await makeFolder(dirname(target))
            await rename(from(f.path), target).catch(async (e: NodeJS.ErrnoException) => {
              // already moved by another writer's recovery (this one was stopped after its manifest write): done
              if (e.code !== "ENOENT" || !(await exists(target))) throw e
            })
          }
        },
        // Stryker disable next-line ArrowFunction,ObjectLiteral,StringLiteral: a rename into the lake failing is not provoked by any test
        catch: (e) => new ManifestError({ message: `could not move committed files into ${join(root, dataset)}: ${(e as Error).message}` })
      })
    /**
     * The first file of a commit whose place already holds a file the manifest does not list: the
     * lake did not write it (a user's file, a copy), and a commit never renames over it. A listed
     * one is the lake's own (a file committed again under its path). Checked under the lock, before
     * the manifest write: a killed writer's commit (listed, then renamed) is not affected.
     */
    const inTheWay = (dataset: string, m: Manifest, files: ReadonlyArray<CommittedFile>) =>
      Effect.promise(async () => {
        const listed = new Set(m.files.map((f) => f.path))
        for (const f of files) if (!listed.has(f.path) && (await exists(join(root, dataset, f.path)))) return f.path
        return undefined
      })
    const inTheWayProblem = (dataset: string, path: string) =>
      `${join(root, dataset, path)} is already there and the lake did not write it (${dataset}/${MANIFEST_FILE} does not list it): nothing was committed over it; move it out of ${join(root, dataset)}, or export into a new --out`
    /**
     * At open (the start of a run): each listed file in place has the size its manifest lists. A
     * file cut short or overwritten since its commit fails the run naming it, rather than every later
     * read of the dataset; the full sha256 is `verify`'s job (too slow for every run).
     */
    const checkSizes = (dataset: string, m: Manifest) =>
      Effect.tryPromise({
        try: async () => {
          if (options.filesElsewhere) return
          const sizes = await Promise.all(m.files.map((f) => stat(join(root, dataset, f.path)).then((i) => i.size)))
          const bad = m.files.findIndex((f, i) => sizes[i] !== f.bytes)
          if (bad >= 0)
            throw new ManifestError({
              message: `${join(root, dataset, m.files[bad].path)} is ${sizes[bad]} bytes, but ${dataset}/${MANIFEST_FILE} lists it at ${m.files[bad].bytes}: the committed file was damaged (cut short or overwritten); restore it from a copy, or export into a new --out (chain-lake verify checks every file)`
            })
        },
        catch: (e) => (e instanceof ManifestError ? e : fail(e))
      })
    const drop = (dataset: string, files: ReadonlyArray<CommittedFile>) =>
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: the staged files it drops exist
      Effect.promise(() => Promise.all(files.map((f) => rm(staged(dataset, f.path), { force: true }))))

    /** Moves a retired file out of the dataset folder, where no glob sees it (nothing to do when it is gone already). */
    const retire = async (dataset: string, path: string) => {
      const from = pathInside(join(root, dataset), path)
      // Stryker disable next-line ConditionalExpression: the manifest's schema already refuses a path outside the dataset; a second guard
      if (!from) return
      const to = retiredPath(root, dataset, path)
      await makeFolder(dirname(to))
      await rename(from, to).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "ENOENT") throw e
      })
    }

    /**
     * Under the lock: listed files missing from their place are finished from the staging folder
     * of the writer killed mid-commit; staging folders of writers that are gone are removed; a
     * listed file found nowhere is a damaged lake, and stops the run.
     */
    const recover = (dataset: string, m: Manifest) =>
      Effect.tryPromise({
        try: async () => {
          const stagingRoot = join(root, STAGING)
          const writers = await readdir(stagingRoot).catch(() => [] as Array<string>)
          for (const f of m.files) {
            const target = join(root, dataset, f.path)
            if (options.filesElsewhere || (await exists(target))) continue
            const candidates = writers.map((w) => join(stagingRoot, w, dataset, f.path) + PENDING)
            const found = await Promise.all(candidates.map(exists))
            const from = candidates.find((_, i) => found[i])
            if (!from)
              throw new ManifestError({
                message: `${join(root, dataset, f.path)} is listed in ${dataset}/_manifest.json but missing: the lake lost a committed file; restore it from a copy, or export into a new --out`
              })
            // Stryker disable next-line ObjectLiteral,BooleanLiteral: the dataset folder exists; only the last level may be missing
            await makeFolder(dirname(target))
            await rename(from, target)
          }
          const listed = new Set([...m.files, ...(m.retired ?? [])].map((f) => f.path))
          for (const w of writers) {
            // a compaction cut short before its manifest write: the new files it put in place are not
            // data. Its writer is gone (this host), or it is another host's intent left for an hour
            // (a compaction's swap takes milliseconds)
            const intentPath = join(stagingRoot, w, dataset, INTENT)
            const abandoned =
              writerGone(w) || Date.now() - ((await stat(intentPath).catch(() => undefined))?.mtimeMs ?? Date.now()) > INTENT_STALE_MS
            if (!abandoned) continue
            const intent = await readFile(intentPath, "utf8").then(
              (text) => JSON.parse(text) as { readonly paths?: ReadonlyArray<unknown> },
              () => undefined
            )
            for (const path of intent?.paths ?? []) {
              if (typeof path !== "string" || listed.has(path)) continue
              const target = pathInside(join(root, dataset), path)
              if (target) await rm(target, { force: true })
            }
            await rm(intentPath, { force: true })
            if (!writerGone(w)) continue
            await rm(join(stagingRoot, w, dataset), { recursive: true, force: true })
            await rmdir(join(stagingRoot, w)).catch(() => undefined)
          }
          // files a compaction retired that are still in place (it was killed right after its manifest write)
          const committed = new Set(m.files.map((f) => f.path))
          for (const r of m.retired ?? []) if (!committed.has(r.path)) await retire(dataset, r.path)
          // temp files this tool named in the dataset folder: a manifest write cut short (written
          // only under the lock), and files of versions that staged beside the lake
          for (const rel of await listFiles(join(root, dataset)))
            if (rel === `${MANIFEST_FILE}.tmp` || rel.endsWith(".parquet.pending") || rel.endsWith(".parquet.tmp"))
              await rm(join(root, dataset, rel), { force: true })
        },
        catch: (e) => (e instanceof ManifestError ? e : fail(e))
      })

    /** A folder with Parquet files and no manifest: its manifest was lost, and nothing says which files are committed. */
    const refuseOrphans = (dataset: string) =>
      Effect.flatMap(
        Effect.promise(() => listFiles(join(root, dataset))),
        (files) => {
          const parquet = files.filter((f) => f.endsWith(".parquet"))
          return parquet.length === 0
            ? Effect.void
            : Effect.fail(
                new ManifestError({
                  message: `${join(root, dataset)} holds ${parquet.length} Parquet file(s) but no _manifest.json, so nothing says which are committed: restore the manifest, move the folder away, or export into a new --out (nothing was deleted)`
                })
              )
        }
      )

    const readIdentity = Effect.tryPromise({
      try: () => readJson(join(root, IDENTITY_FILE), LakeIdentity),
      catch: (e) =>
        new ManifestError({
          message: `cannot read ${join(root, IDENTITY_FILE)}: ${e instanceof Damaged ? `damaged at ${e.issue}` : (e as Error).message}; restore it, or export into a new --out`
        })
    })

    const updateIdentity = (change: (prior: LakeIdentity | undefined) => LakeIdentity | ManifestError) =>
      holding(
        join(root, "_lake.lock"),
        Effect.gen(function* () {
          const identity = change(yield* readIdentity)
          if (identity instanceof ManifestError) return yield* identity
          yield* writeJson(join(root, IDENTITY_FILE), join(root, `${IDENTITY_FILE}.${writer}.tmp`), identity)
          return identity
        })
      )

    /**
     * Swaps `replaced` (committed files of `m`, read as `basis`) for `files` (staged, new paths) and
     * writes `m` changed by `change`, so that a reader of the manifest sees the old files or the
     * new ones, never both and never neither: an intent naming the new paths in this writer's
     * staging folder, the new files in place (unlisted: not data yet), the manifest listing them
     * and marking the old ones retired, then the old ones moved out of the folder. Under the lock.
     */
    const swap = (
      m: Manifest,
      basis: Basis,
      replaced: ReadonlyArray<CommittedFile>,
      files: ReadonlyArray<CommittedFile>,
      change: Partial<Pick<Manifest, "committed" | "snapshots">> = {}
    ) =>
      Effect.gen(function* () {
        const dataset = m.dataset
        const intent = join(staging, dataset, INTENT)
        // Stryker disable next-line ObjectLiteral,ArrowFunction: read only after a kill mid-swap (the recovery tests write it by hand)
        yield* writeJson(intent, `${intent}.tmp`, { paths: files.map((f) => f.path) })
        // the new files in place first, unlisted: a reader of the manifest sees the old files until the manifest names the new ones
        yield* publish(dataset, files, (rel) => staged(dataset, rel))
        const at = new Date().toISOString()
        const gone = new Set(replaced.map((r) => r.path))
        const kept = m.files.filter((f) => !gone.has(f.path))
        const found = m.files.findIndex((f) => gone.has(f.path))
        const first = found < 0 ? kept.length : found
        const newlyRetired: Array<RetiredFile> = replaced.map((r) => ({
          path: r.path,
          retired_at: at,
          replaced_by: files.map((f) => f.path)
        }))
        // the new files where the first old one was listed (every file before it is kept): a manifest keeps its order
        const next: Manifest = {
          ...m,
          ...change,
          files: [...kept.slice(0, first), ...files, ...kept.slice(first)],
          retired: [...(m.retired ?? []), ...newlyRetired]
        }
        // fenced: the new files go back to staging (unlisted, no one else names them), so that the commit made again finds them there
        const written = yield* write(next, basis).pipe(
          Effect.tapError(() =>
            Effect.promise(async () => {
              for (const f of files) await rename(join(root, dataset, f.path), staged(dataset, f.path)).catch(() => undefined)
              await rm(intent, { force: true })
            })
          )
        )
        // the old files out of the folder: a glob sees the old files or the new ones again
        yield* Effect.tryPromise({
          try: async () => {
            for (const r of replaced) await retire(dataset, r.path)
            await rm(intent, { force: true })
          },
          catch: (e) =>
            new ManifestError({
              message: `could not move replaced files of ${dataset} out of its folder: ${(e as Error).message} (the next run finishes it)`
            })
        })
        yield* remember(manifestPath(dataset), written)
        return { committed: true } as const
      })

    const service: ManifestsService = {
      root,
      identity: readIdentity,
      // the chain is checked under the lock: two writers of different chains into a new lake cannot both anchor
      recordIdentity: (chainId, anchor) =>
        Effect.asVoid(
          updateIdentity((prior) =>
            prior && prior.chain_id !== chainId
              ? new ManifestError({ message: `${root} holds chain ${prior.chain_id}, not ${chainId}` })
              : {
                  ...(prior ?? { format_version: 1, chain_id: chainId }),
                  anchors: keptAnchors([...(prior?.anchors ?? []).filter((a) => a.height !== anchor.height), anchor])
                }
          )
        ),
      updateIdentity,
      writer,
      staging,
      staged,
      get: read,
      withCommittedFiles: <A, E>(dataset: string, use: (paths: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>, E>) =>
        Effect.gen(function* () {
          const files = ((yield* read(dataset))?.files ?? []).map((f) => ({ path: f.path, at: join(root, dataset, f.path) }))
          const present = yield* Effect.promise(() => Promise.all(files.map((f) => exists(f.at))))
          const here = files.filter((_, i) => present[i]).map((f) => f.at)
          const fetch = options.fetchCommitted
          // a listed file not here is an unfinished commit (or a lost file): its rows are not left out
          const missing = files.filter((_, i) => !present[i]).map((f) => f.path)
          if (!fetch && missing.length > 0)
            return yield* new ManifestError({
              message: missingFilesProblem(
                dataset,
                missing.length,
                files.length,
                missing.every((p) => stagedBy(root, dataset, p).length > 0)
              )
            })
          const results: Array<A> = here.length > 0 ? [...(yield* use(here))] : []
          if (!fetch) return results
          const scratch = join(root, SCRATCH, writer)
          for (const [i, f] of files.entries()) {
            if (present[i]) continue
            const copy = join(scratch, `committed-${i}.parquet`)
            const rows = yield* Effect.acquireUseRelease(
              Effect.tryPromise({ try: () => makeFolder(scratch), catch: fail }).pipe(Effect.zipRight(fetch(dataset, f.path, copy))),
              () => use([copy]),
              // Stryker disable next-line ObjectLiteral,BooleanLiteral: the copy it removes exists
              () => Effect.promise(() => rm(copy, { force: true }))
            )
            results.push(...rows)
          }
          return results
        }),
      open: (dataset, unit, columns) =>
        locked(
          dataset,
          Effect.gen(function* () {
            const { manifest: existing, basis } = yield* readAt(dataset)
            if (existing && existing.unit !== unit)
              return yield* new ManifestError({ message: `${dataset}/_manifest.json was written for unit ${existing.unit}, not ${unit}` })
            if (!existing) yield* refuseOrphans(dataset)
            const manifest: Manifest = existing ?? {
              dataset,
              format_version: 1,
              unit,
              columns: columns.map((c) => ({ name: c.name, type: c.type })),
              files: [],
              committed: [],
              snapshots: []
            }
            yield* recover(dataset, manifest)
            yield* checkSizes(dataset, manifest)
            // Stryker disable next-line ConditionalExpression: writing an unchanged manifest again changes nothing read
            return existing ?? (yield* write(manifest, basis))
          })
        ),
      commitFiles: (dataset, files, range) =>
        locked(
          dataset,
          Effect.gen(function* () {
            const { m, basis } = yield* opened(dataset)
            // another writer got there first: its rows are committed, these are dropped
            if (range && total(subtract(range, m.committed)) < range[1] - range[0]) {
              yield* drop(dataset, files)
              return {
                committed: false,
                ranges: m.committed,
                reason: `another writer committed part of ${range[0]}..${range[1] - 1} first`
              } as const
            }
            const clash = yield* inTheWay(dataset, m, files)
            if (clash) {
              yield* drop(dataset, files)
              return yield* new ManifestError({ message: inTheWayProblem(dataset, clash) })
            }
            const paths = new Set(files.map((f) => f.path))
            const next: Manifest = {
              ...m,
              files: [...m.files.filter((f) => !paths.has(f.path)), ...files],
              committed: range ? normalize([...m.committed, range]) : m.committed
            }
            const written = yield* write(next, basis)
            yield* publish(dataset, files, (rel) => staged(dataset, rel))
            yield* remember(manifestPath(dataset), written)
            if (options.afterCommit) yield* options.afterCommit(fragment(m, { files, committed: range ? [range] : [], snapshots: [] }))
            return { committed: true } as const
          })
        ),
      commitSnapshot: (dataset, files, snapshot) =>
        locked(
          dataset,
          Effect.gen(function* () {
            const { m, basis } = yield* opened(dataset)
            // a snapshot may be completed by later runs (more lists): merge lists and counts
            const prior = m.snapshots.find((s) => s.snapshot_height === snapshot.snapshot_height)
            const taken = prior ? snapshot.lists.filter((l) => prior.lists.includes(l)) : []
            if (taken.length > 0) {
              yield* drop(dataset, files)
              return {
                committed: false,
                ranges: [],
                reason: `another writer committed ${taken.join(", ")} of snapshot ${snapshot.snapshot_height} first`
              } as const
            }
            // part numbers are given here, under the lock, so two writers completing one snapshot never
            // collide; a number a listed or retired file (or any file in the folder) has is skipped
            const inUse = new Set([...m.files.map((f) => f.path), ...(m.retired ?? []).map((r) => r.path)])
            const named: Array<CommittedFile> = []
            for (let part = 0; named.length < files.length; part++) {
              const path = snapshotFile(snapshot.snapshot_height, part)
              if (!inUse.has(path) && !(yield* Effect.promise(() => exists(join(root, dataset, path)))))
                named.push({ ...files[named.length], path })
            }
            const merged: CommittedSnapshot = prior ? mergeSnapshot(prior, snapshot) : snapshot
            const next: Manifest = {
              ...m,
              files: [...m.files, ...named],
              snapshots: [...m.snapshots.filter((s) => s.snapshot_height !== snapshot.snapshot_height), merged]
            }
            const written = yield* write(next, basis)
            const stagedAs = new Map(named.map((f, i) => [f.path, staged(dataset, files[i].path)]))
            yield* publish(dataset, named, (rel) => stagedAs.get(rel)!)
            yield* remember(manifestPath(dataset), written)
            if (options.afterCommit) yield* options.afterCommit(fragment(m, { files: named, committed: [], snapshots: [snapshot] }))
            return { committed: true } as const
          })
        ),
      commitCompaction: (dataset, replaced, files) =>
        locked(
          dataset,
          Effect.gen(function* () {
            const { m, basis } = yield* opened(dataset)
            const listed = new Map(m.files.map((f) => [f.path, f]))
            const changed = replaced.find((r) => listed.get(r.path)?.sha256 !== r.sha256)
            const retired = new Set((m.retired ?? []).map((r) => r.path))
            const taken = yield* Effect.promise(async () => {
              for (const f of files)
                if (listed.has(f.path) || retired.has(f.path) || (await exists(join(root, dataset, f.path)))) return f.path
              return undefined
            })
            if (changed || taken) {
              yield* drop(dataset, files)
              return {
                committed: false,
                ranges: [],
                reason: changed ? `another writer replaced ${changed.path} first` : `${taken} is in use`
              } as const
            }
            return yield* swap(m, basis, replaced, files)
          })
        ),
      commitRollback: (read, replaced, files, kept) =>
        locked(
          read.dataset,
          Effect.gen(function* () {
            const { m, basis } = yield* opened(read.dataset)
            if ((m.version ?? 0) !== (read.version ?? 0)) {
              yield* drop(read.dataset, files)
              return {
                committed: false,
                ranges: m.committed,
                reason: `${read.dataset}/${MANIFEST_FILE} changed since the rollback read it`
              } as const
            }
            return yield* swap(m, basis, replaced, files, kept)
          })
        ),
      vacuum: (dataset, graceMs, maxRetiredBytes) =>
        locked(
          dataset,
          Effect.gen(function* () {
            const { manifest: m, basis } = yield* readAt(dataset)
            // what a writer killed mid-commit left (a compaction's unlisted files, retired files still in place) is finished first
            if (m) yield* recover(dataset, m)
            if (!m) return []
            const now = Date.now()
            /*
             * Retired files wait out their grace for readers that listed them before the swap, but
             * not without bound: a lake compacted every round (--follow) retires its growing merged
             * file each time, and kept 544 MB for 12 MB of data. Beyond the budget (by default
             * RETIRED_BUDGET times the dataset's committed bytes: small files replaced by one merged,
             * better compressed file weigh more than it), the oldest go first, grace or not;
             * chain-lake's readers read again when a file they listed is gone.
             */
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
            const expired = (m.retired ?? []).filter((r) => now - Date.parse(r.retired_at) >= graceMs || overBudget.has(r.path))
            if (expired.length === 0) return []
            // the files first: a kill in between leaves entries whose files are gone, which the next vacuum drops
            yield* Effect.tryPromise({
              // Stryker disable next-line ObjectLiteral,BooleanLiteral: a retired file already gone is the only case force covers
              try: () => Promise.all(expired.map((r) => rm(retiredPath(root, dataset, r.path), { force: true }))),
              // Stryker disable next-line ArrowFunction,ObjectLiteral,StringLiteral: a delete failing is not provoked by any test
              catch: (e) => new ManifestError({ message: `could not delete retired files of ${dataset}: ${(e as Error).message}` })
            })
            const gone = new Set(expired.map((r) => r.path))
            yield* write({ ...m, retired: (m.retired ?? []).filter((r) => !gone.has(r.path)) }, basis)
            return expired.map((r) => r.path)
          })
        ),
      pruneSnapshots: (dataset, keep) =>
        locked(
          dataset,
          Effect.gen(function* () {
            const { manifest: m, basis } = yield* readAt(dataset)
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
                await rm(join(root, dataset, snapshotDir(h)), { recursive: true, force: true })
                // Stryker disable next-line BooleanLiteral: the tests prune no snapshot with retired files, so this folder is absent, which rm with force takes recursive or not
                await rm(join(root, RETIRED, dataset, snapshotDir(h)), { recursive: true, force: true })
              }
            })
            return dropped
          })
        )
    }
    // this writer's staging folder goes with it (a killed writer's, with the next open)
    yield* Effect.addFinalizer(() => Effect.promise(() => rm(staging, { recursive: true, force: true }).catch(() => undefined)))
    return service
  })

export const layerManifests = (root: string, options: ManifestsOptions = {}) => Layer.scoped(Manifests, makeManifests(root, options))
