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
 *    while stopped cannot rename; see `write` in manifests/manifestFile.ts and `fenceOthers` in
 *    manifests/locks.ts), then
 * 4. renames the files into place, and frees the lock.
 * Commits of one dataset asked for while one of its commits is being made go through 2–4
 * together next, in one manifest write, each with the outcome it would have had alone
 * (manifests/commit.ts `groupCommits`).
 * A file is visible to globs only once it is listed. A writer killed between 3 and 4 leaves
 * listed files in its staging folder: the next open (under the lock) finishes the renames. Nothing else
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
 *
 * This module is the service's interface; its parts are in manifests/: the lake's JSON files
 * (jsonFiles.ts), a dataset's manifest on disk and its fenced write (manifestFile.ts), the locks
 * and the fencing of a writer that lost its lock (locks.ts), opening a dataset and finishing what
 * killed writers left (recovery.ts), commits of new files (commit.ts), the compaction's and the
 * rollback's swap (swap.ts), retired files and old snapshots (retention.ts), the lake's chain
 * identity (identity.ts), and committed files that live elsewhere (committedFiles.ts).
 */
import { Context, Effect, Layer } from "effect"
import { scratchFolderOf, stagedPath } from "./layout.js"
import { newWriterId } from "./lock.js"
import type { CommittedFile, CommittedSnapshot, LakeIdentity, Manifest } from "./manifest.js"
import type { Range } from "./RangeSet.js"
import type { Column } from "./columns.js"
import { commitSnapshot, groupCommits } from "./manifests/commit.js"
import { withCommittedFiles } from "./manifests/committedFiles.js"
import type { ManifestError } from "./manifests/errors.js"
import { readIdentity, recordIdentity, updateIdentity } from "./manifests/identity.js"
import { joinWriters, startWriter, type ManifestsOptions } from "./manifests/lakeWriter.js"
import { read } from "./manifests/manifestFile.js"
import { open, refuseOrphans } from "./manifests/recovery.js"
import { pruneSnapshots, vacuum } from "./manifests/retention.js"
import { commitCompaction, commitRollback } from "./manifests/swap.js"

export { ManifestError } from "./manifests/errors.js"
export { disagreedProblem, identityProblem, keptAnchors } from "./manifests/identity.js"
export { RETIRED_BUDGET } from "./manifests/retention.js"
export { MANIFEST_LOCK, retiredPath, stagedPath } from "./layout.js"
export type { CommittedFile, CommittedSnapshot, LakeIdentity, Manifest }

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
  /**
   * Fails where `dataset`'s folder holds Parquet files but no manifest (nothing says which are
   * committed), as `open` does: a run checks every dataset it will write before it writes any, so
   * that one it refuses leaves the folder as it was.
   */
  readonly checkUnlisted: (dataset: string) => Effect.Effect<void, ManifestError>
  /** Makes this writer seen by the lake's other writers; the pids of those of this host writing it now (lakeWriter.ts joinWriters). */
  readonly joinWriters: Effect.Effect<ReadonlyArray<number>, ManifestError>
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
   * Runs `use` over every committed file of `dataset` (those `which` takes, where given), given as
   * local paths: the files in the lake folder all in one call; each file that lives elsewhere (an
   * S3 export's, brought by `fetchCommitted`) alone, in a copy deleted right after, so local disk
   * holds one at a time. Returns the calls' results, concatenated. A listed file of a local lake
   * not in place fails it, or with `missing: "skip"` is left out.
   */
  readonly withCommittedFiles: <A, E>(
    dataset: string,
    use: (paths: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>, E>,
    which?: (file: CommittedFile) => boolean,
    missing?: "fail" | "skip"
  ) => Effect.Effect<Array<A>, E | ManifestError>
}

export class Manifests extends Context.Tag("chain-lake/Manifests")<Manifests, ManifestsService>() {}

/** The DuckDB spill folder of a new writer of the lake at `root`. */
export const scratchFolder = (root: string) => scratchFolderOf(root, newWriterId())

/** The Manifests service of a new writer of the lake at `root`; its staging folder goes with its scope. */
export type { ManifestsOptions } from "./manifests/lakeWriter.js"

export const makeManifests = (root: string, options: ManifestsOptions = {}) =>
  Effect.map(startWriter(root, options), (lake): ManifestsService => {
    const commitFiles = groupCommits(lake)
    return {
      root,
      writer: lake.writer,
      staging: lake.staging,
      staged: (dataset, rel) => stagedPath(lake.staging, dataset, rel),
      open: (dataset, unit, columns) => open(lake, dataset, unit, columns),
      checkUnlisted: (dataset) => Effect.flatMap(read(lake, dataset), (m) => (m ? Effect.void : refuseOrphans(root, dataset))),
      joinWriters: joinWriters(lake),
      get: (dataset) => read(lake, dataset),
      commitFiles,
      commitSnapshot: (dataset, files, snapshot) => commitSnapshot(lake, dataset, files, snapshot),
      identity: readIdentity(lake),
      recordIdentity: (chainId, anchor) => recordIdentity(lake, chainId, anchor),
      updateIdentity: (change) => updateIdentity(lake, change),
      commitCompaction: (dataset, replaced, files) => commitCompaction(lake, dataset, replaced, files),
      commitRollback: (read, replaced, files, kept) => commitRollback(lake, read, replaced, files, kept),
      vacuum: (dataset, graceMs, maxRetiredBytes) => vacuum(lake, dataset, graceMs, maxRetiredBytes),
      pruneSnapshots: (dataset, keep) => pruneSnapshots(lake, dataset, keep),
      withCommittedFiles: (dataset, use, which, missing) => withCommittedFiles(lake, dataset, use, which, missing)
    }
  })

export const layerManifests = (root: string, options: ManifestsOptions = {}) => Layer.scoped(Manifests, makeManifests(root, options))
