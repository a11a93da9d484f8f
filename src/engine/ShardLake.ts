/**
 * What a shard needs of the lake: the folder its quarantine goes to, where it stages its files, and
 * their commit (through the run's history guard, counted in the run's totals). In the run's own
 * thread it is the run's Manifests (`shardLakeOf`); in a shard worker, the same calls made by
 * message to the thread that runs the export (shardWorker.ts), so that every commit of a run goes
 * through one Manifests.
 */
import { Context, Effect } from "effect"
import { Manifests, type CommitOutcome, type CommittedFile, type ManifestError } from "../lake/Manifests.js"
import type { SinkError } from "../lake/ParquetSink.js"
import type { Range } from "../lake/RangeSet.js"
import { type CommitError, commitFiles } from "./commit.js"
import type { SourceFailure } from "./Source.js"

export interface ShardLakeService {
  readonly root: string
  /** the staging folder: a file of `dataset` committed as `rel` is written at stagedPath(staging, dataset, rel) */
  readonly staging: string
  /** commits staged files of `dataset` and the range they complete, unless another writer committed part of it first */
  readonly commit: (dataset: string, files: ReadonlyArray<CommittedFile>, range: Range) => Effect.Effect<CommitOutcome, SourceFailure>
}

export class ShardLake extends Context.Tag("chain-lake/ShardLake")<ShardLake, ShardLakeService>() {}

/** A check of a commit's staged files before it (rowCounts.ts, positionOrder.ts): a failure refuses the commit. */
export interface CommitCheck {
  readonly check: (dataset: string, files: ReadonlyArray<CommittedFile>) => Effect.Effect<void, CommitError | SinkError | ManifestError>
}

/**
 * The run's Manifests as a shard's lake; `committed` is told each file a commit lists. Each commit
 * goes through `checks` first, in turn.
 */
export const shardLakeOf = (committed: (dataset: string, file: CommittedFile) => void, checks: ReadonlyArray<CommitCheck>) =>
  Effect.map(
    Manifests,
    (manifests): ShardLakeService => ({
      root: manifests.root,
      staging: manifests.staging,
      // (the history guard, where the run has one, is the caller's: commitFiles finds it there)
      commit: (dataset, files, range) =>
        Effect.provideService(
          Effect.zipRight(
            Effect.forEach(checks, (c) => c.check(dataset, files), { discard: true }),
            commitFiles(dataset, files, range, (listed) => {
              for (const f of listed) committed(dataset, f)
            })
          ),
          Manifests,
          manifests
        )
    })
  )
