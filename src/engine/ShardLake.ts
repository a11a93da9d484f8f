/**
 * What a shard needs of the lake: the folder its quarantine goes to, where it stages its files, and
 * their commit (through the run's history guard, counted in the run's totals). In the run's own
 * thread it is the run's Manifests (`shardLakeOf`); in a shard worker, the same calls made by
 * message to the thread that runs the export (shardWorker.ts), so that every commit of a run goes
 * through one Manifests.
 */
import { Context, Effect } from "effect"
import { Manifests, type CommitOutcome, type CommittedFile } from "../lake/Manifests.js"
import type { Range } from "../lake/RangeSet.js"
import { commitFiles } from "./commit.js"
import type { RowCounts } from "./rowCounts.js"
import type { SourceFailure } from "./Source.js"

export interface ShardLakeService {
  readonly root: string
  /** the staging folder: a file of `dataset` committed as `rel` is written at stagedPath(staging, dataset, rel) */
  readonly staging: string
  /** commits staged files of `dataset` and the range they complete, unless another writer committed part of it first */
  readonly commit: (dataset: string, files: ReadonlyArray<CommittedFile>, range: Range) => Effect.Effect<CommitOutcome, SourceFailure>
}

export class ShardLake extends Context.Tag("chain-lake/ShardLake")<ShardLake, ShardLakeService>() {}

/**
 * The run's Manifests as a shard's lake; `committed` is told each file a commit lists. Where the
 * run writes datasets that count each other's rows, each commit is checked against them first
 * (rowCounts.ts).
 */
export const shardLakeOf = (committed: (dataset: string, file: CommittedFile) => void, counts?: RowCounts) =>
  Effect.map(
    Manifests,
    (manifests): ShardLakeService => ({
      root: manifests.root,
      staging: manifests.staging,
      // (the history guard, where the run has one, is the caller's: commitFiles finds it there)
      commit: (dataset, files, range) =>
        Effect.provideService(
          Effect.zipRight(
            counts ? counts.check(dataset, files) : Effect.void,
            commitFiles(dataset, files, range, (listed) => {
              for (const f of listed) committed(dataset, f)
            })
          ),
          Manifests,
          manifests
        )
    })
  )
