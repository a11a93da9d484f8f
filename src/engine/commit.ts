/**
 * The commit step every writer of the lake goes through (export shards, snapshots, the router
 * samplers): files are written under a name no reader globs (`*.parquet.pending`), then renamed
 * into place and listed in the dataset's manifest in one uninterruptible step, so a stop (Ctrl-C)
 * lands before or after a commit, never between a visible file and its manifest entry.
 */
import { rename } from "node:fs/promises"
import { join } from "node:path"
import { Data, Effect } from "effect"
import { Checkpoints, type CommittedFile, type CommittedSnapshot } from "../lake/Checkpoints.js"
import type { ParquetWriter } from "../lake/ParquetSink.js"
import type { Range } from "../lake/RangeSet.js"

export class CommitError extends Data.TaggedError("CommitError")<{ readonly message: string }> {}

/** Suffix of finished files not committed yet: complete, but no reader's glob matches them. */
export const PENDING = ".pending"

/** Writes what `writer` staged to `dataset/rel` + PENDING: a file ready to commit. */
export const writePending = (writer: ParquetWriter, dataset: string, rel: string, heights: { readonly min: number | null; readonly max: number | null }, range?: Range) =>
  Effect.gen(function* () {
    const checkpoints = yield* Checkpoints
    const written = yield* writer.finish(join(checkpoints.root, dataset, rel) + PENDING)
    const file: CommittedFile = {
      path: rel,
      rows: written.rows,
      bytes: written.bytes,
      sha256: written.sha256,
      ...(range ? { range } : {}),
      min_height: heights.min,
      max_height: heights.max,
      committed_at: new Date().toISOString()
    }
    return file
  })

const publish = (root: string, dataset: string, files: ReadonlyArray<CommittedFile>) =>
  Effect.tryPromise({
    try: async () => {
      for (const f of files) await rename(join(root, dataset, f.path) + PENDING, join(root, dataset, f.path))
    },
    catch: (e) => new CommitError({ message: `could not commit files in ${join(root, dataset)}: ${(e as Error).message}` })
  })

/** Commits pending files of `dataset` and the range they complete (append-only datasets), or none. */
export const commitFiles = (dataset: string, files: ReadonlyArray<CommittedFile>, range?: Range) =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const checkpoints = yield* Checkpoints
      yield* publish(checkpoints.root, dataset, files)
      yield* checkpoints.commitFiles(dataset, files, range)
    })
  )

/** Commits a snapshot's pending files with its manifest entry. */
export const commitSnapshot = (dataset: string, files: ReadonlyArray<CommittedFile>, snapshot: CommittedSnapshot) =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const checkpoints = yield* Checkpoints
      yield* publish(checkpoints.root, dataset, files)
      yield* checkpoints.commitSnapshot(dataset, files, snapshot)
    })
  )
