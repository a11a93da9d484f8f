/**
 * Commits of new files (steps 2 to 4 of the commit protocol, ../Manifests.ts): under the dataset's
 * lock, the manifest on disk is read; if another writer committed any of the work meanwhile, the
 * staged files are dropped and the commit says so; otherwise the manifest lists them, then they
 * are renamed into place.
 */
import { rename, rm } from "node:fs/promises"
import { dirname } from "node:path"
import { Deferred, Effect, Exit, FiberId } from "effect"
import { exists, makeFolder } from "../files.js"
import { datasetPath, manifestPath, snapshotFile, stagedPath } from "../layout.js"
import { type CommittedFile, type CommittedSnapshot, type Manifest, MANIFEST_FILE, mergeSnapshot } from "../manifest.js"
import { normalize, subtract, total, type Range } from "../RangeSet.js"
import { ManifestError } from "./errors.js"
import type { CommitOutcome } from "../Manifests.js"
import { remember } from "./jsonFiles.js"
import type { LakeWriter } from "./lakeWriter.js"
import { locked } from "./locks.js"
import { opened, write } from "./manifestFile.js"

/** Moves staged files into place (step 4). */
export const publish = (lake: LakeWriter, dataset: string, files: ReadonlyArray<CommittedFile>, from: (rel: string) => string) =>
  Effect.tryPromise({
    try: async () => {
      for (const f of files) {
        const target = datasetPath(lake.root, dataset, f.path)
        await makeFolder(dirname(target))
        await rename(from(f.path), target).catch(async (e: NodeJS.ErrnoException) => {
          // already moved by another writer's recovery (this one was stopped after its manifest write): done
          if (e.code !== "ENOENT" || !(await exists(target))) throw e
        })
      }
    },
    // Stryker disable next-line ArrowFunction,ObjectLiteral,StringLiteral: a rename into the lake failing is not provoked by any test
    catch: (e) =>
      new ManifestError({ message: `could not move committed files into ${datasetPath(lake.root, dataset)}: ${(e as Error).message}` })
  })

/** Deletes the staged files of a commit that is not made. */
export const drop = (lake: LakeWriter, dataset: string, files: ReadonlyArray<CommittedFile>) =>
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: the staged files it drops exist
  Effect.promise(() => Promise.all(files.map((f) => rm(stagedPath(lake.staging, dataset, f.path), { force: true }))))

/**
 * The first file of a commit whose place already holds a file the manifest does not list: the
 * lake did not write it (a user's file, a copy), and a commit never renames over it. A listed
 * one is the lake's own (a file committed again under its path). Checked under the lock, before
 * the manifest write: a killed writer's commit (listed, then renamed) is not affected.
 */
const inTheWay = (lake: LakeWriter, dataset: string, m: Manifest, files: ReadonlyArray<CommittedFile>) =>
  Effect.promise(async () => {
    const listed = new Set(m.files.map((f) => f.path))
    for (const f of files) if (!listed.has(f.path) && (await exists(datasetPath(lake.root, dataset, f.path)))) return f.path
    return undefined
  })

const inTheWayProblem = (root: string, dataset: string, path: string) =>
  `${datasetPath(root, dataset, path)} is already there and the lake did not write it (${dataset}/${MANIFEST_FILE} does not list it): nothing was committed over it; move it out of ${datasetPath(root, dataset)}, or export into a new --out`

/** What a commit added, in the manifest's format (an S3 commit-log fragment): `m`'s header with only the new parts. */
const fragment = (m: Manifest, added: Pick<Manifest, "files" | "committed" | "snapshots">): Manifest => ({
  dataset: m.dataset,
  format_version: m.format_version,
  unit: m.unit,
  columns: m.columns,
  ...added
})

/** A commit of new files waiting to be made, and where its outcome goes. */
interface Pending {
  readonly files: ReadonlyArray<CommittedFile>
  readonly range?: Range
  readonly done: Deferred.Deferred<CommitOutcome, ManifestError>
}

/**
 * Commits staged files and the range they complete, unless another writer committed part of that
 * range (ManifestsService.commitFiles). Commits of a dataset asked for while one of its commits
 * is being made are made together, next, in one manifest write under one lock: shards that end
 * together (a run's last round) otherwise each waited for the lock and wrote the manifest in
 * turn, ~16 ms each. Each keeps the outcome it would have had alone, in the order asked. The
 * groups are made by a fiber of their own, so that a caller waits for its own group only.
 */
export const groupCommits = (lake: LakeWriter) => {
  /** per dataset, the commits asked for while one of its groups is being made */
  const waiting = new Map<string, Array<Pending>>()
  /** Makes the dataset's waiting commits, group after group, until none waits. */
  const drain = (dataset: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const group = waiting.get(dataset)!.splice(0)
      // (in the same step as the look: a commit asked for after it starts a drain of its own)
      if (group.length === 0) {
        waiting.delete(dataset)
        return Effect.void
      }
      return Effect.flatMap(Effect.exit(commitGroup(lake, dataset, group)), (exit) =>
        Effect.zipRight(
          Effect.forEach(group, (p, i) =>
            Deferred.done(p.done, Exit.isSuccess(exit) ? exit.value[i] : (exit as Exit.Exit<never, ManifestError>))
          ),
          drain(dataset)
        )
      )
    })
  return (dataset: string, files: ReadonlyArray<CommittedFile>, range?: Range): Effect.Effect<CommitOutcome, ManifestError> =>
    // asked and, where none is being made, the drain started, in one step no interruption splits
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const done = Deferred.unsafeMake<CommitOutcome, ManifestError>(FiberId.none)
        const queue = waiting.get(dataset)
        if (queue) queue.push({ files, range, done })
        else waiting.set(dataset, [{ files, range, done }])
        const started = queue ? Effect.void : Effect.forkDaemon(Effect.uninterruptible(drain(dataset)))
        return Effect.zipRight(started, restore(Deferred.await(done)))
      })
    )
}

/**
 * Makes a group of commits of one dataset under its lock, in order, as one manifest write: a commit
 * whose range is committed already (by another writer, or an earlier commit) is dropped, one whose
 * file is in the way fails; each one's outcome, in the group's order. A commit listed fails alone
 * where its files cannot be moved into place or the commit log refuses it.
 */
const commitGroup = (lake: LakeWriter, dataset: string, group: ReadonlyArray<Pending>) =>
  Effect.flatMap(locked(lake, dataset, makeGroup(lake, dataset, group)), ({ outcomes, dropped }) =>
    // staged files are deleted once the group's decisions stand (a fenced try decides again)
    Effect.as(drop(lake, dataset, dropped), outcomes)
  )

const makeGroup = (lake: LakeWriter, dataset: string, group: ReadonlyArray<Pending>) =>
  Effect.gen(function* () {
    const { m, basis } = yield* opened(lake, dataset)
    const outcomes: Array<Exit.Exit<CommitOutcome, ManifestError>> = []
    const dropped: Array<CommittedFile> = []
    /** the commits listed, by their place in the group */
    const made: Array<number> = []
    let next = m
    for (const [i, { files, range }] of group.entries()) {
      // another writer got there first: its rows are committed, these are dropped
      if (range && total(subtract(range, next.committed)) < range[1] - range[0]) {
        dropped.push(...files)
        outcomes.push(
          Exit.succeed({
            committed: false,
            ranges: next.committed,
            reason: `another writer committed part of ${range[0]}..${range[1] - 1} first`
          })
        )
        continue
      }
      const clash = yield* inTheWay(lake, dataset, next, files)
      if (clash) {
        dropped.push(...files)
        outcomes.push(Exit.fail(new ManifestError({ message: inTheWayProblem(lake.root, dataset, clash) })))
        continue
      }
      const paths = new Set(files.map((f) => f.path))
      next = {
        ...next,
        files: [...next.files.filter((f) => !paths.has(f.path)), ...files],
        committed: range ? normalize([...next.committed, range]) : next.committed
      }
      made.push(i)
      outcomes.push(Exit.succeed({ committed: true }))
    }
    if (made.length === 0) return { outcomes, dropped }
    const written = yield* write(lake, next, basis)
    yield* remember(lake.known, manifestPath(lake.root, dataset), written)
    for (const i of made) {
      const { files, range } = group[i]
      const moved = publish(lake, dataset, files, (rel) => stagedPath(lake.staging, dataset, rel))
      const after = lake.options.afterCommit
      const logged = after ? after(fragment(m, { files, committed: range ? [range] : [], snapshots: [] })) : Effect.void
      const exit = yield* Effect.exit(Effect.zipRight(moved, logged))
      if (Exit.isFailure(exit)) outcomes[i] = Exit.failCause(exit.cause)
    }
    return { outcomes, dropped }
  })

/**
 * The paths a snapshot's files are committed as: part numbers are given under the lock, so two
 * writers completing one snapshot never collide; a number a listed or retired file (or any file in
 * the folder) has is skipped.
 */
const numberParts = (lake: LakeWriter, dataset: string, m: Manifest, height: number, files: ReadonlyArray<CommittedFile>) =>
  Effect.gen(function* () {
    const inUse = new Set([...m.files.map((f) => f.path), ...(m.retired ?? []).map((r) => r.path)])
    const named: Array<CommittedFile> = []
    for (let part = 0; named.length < files.length; part++) {
      const path = snapshotFile(height, part)
      if (!inUse.has(path) && !(yield* Effect.promise(() => exists(datasetPath(lake.root, dataset, path)))))
        named.push({ ...files[named.length], path })
    }
    return named
  })

/** Commits a snapshot's staged files, unless another writer committed one of its lists at that height (ManifestsService.commitSnapshot). */
export const commitSnapshot = (lake: LakeWriter, dataset: string, files: ReadonlyArray<CommittedFile>, snapshot: CommittedSnapshot) =>
  locked(
    lake,
    dataset,
    Effect.gen(function* () {
      const { m, basis } = yield* opened(lake, dataset)
      // a snapshot may be completed by later runs (more lists): merge lists and counts
      const prior = m.snapshots.find((s) => s.snapshot_height === snapshot.snapshot_height)
      const taken = prior ? snapshot.lists.filter((l) => prior.lists.includes(l)) : []
      if (taken.length > 0) {
        yield* drop(lake, dataset, files)
        return {
          committed: false,
          ranges: [],
          reason: `another writer committed ${taken.join(", ")} of snapshot ${snapshot.snapshot_height} first`
        } as const
      }
      const named = yield* numberParts(lake, dataset, m, snapshot.snapshot_height, files)
      const merged: CommittedSnapshot = prior ? mergeSnapshot(prior, snapshot) : snapshot
      const next: Manifest = {
        ...m,
        files: [...m.files, ...named],
        snapshots: [...m.snapshots.filter((s) => s.snapshot_height !== snapshot.snapshot_height), merged]
      }
      const written = yield* write(lake, next, basis)
      const stagedAs = new Map(named.map((f, i) => [f.path, stagedPath(lake.staging, dataset, files[i].path)]))
      yield* publish(lake, dataset, named, (rel) => stagedAs.get(rel)!)
      yield* remember(lake.known, manifestPath(lake.root, dataset), written)
      if (lake.options.afterCommit) yield* lake.options.afterCommit(fragment(m, { files: named, committed: [], snapshots: [snapshot] }))
      return { committed: true } as const
    })
  )
