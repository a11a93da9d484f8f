/**
 * The commit step every writer of the lake goes through (export shards, snapshots, the router
 * samplers): a file is written to the writer's staging folder, then committed by Manifests
 * (manifest first, then renamed into place; see Manifests.ts) in one uninterruptible step, so a
 * stop (Ctrl-C) lands before or after a commit, never inside one.
 */
import { type Context, Data, Effect, Option } from "effect"
import { HistoryGuard } from "./identity.js"
import { Manifests, stagedPath, type CommittedFile, type CommittedSnapshot, type ManifestError } from "../lake/Manifests.js"
import type { SourceFailure } from "./Source.js"
import type { StagedFile } from "../lake/ParquetSink.js"
import type { Range } from "../lake/RangeSet.js"

export class CommitError extends Data.TaggedError("CommitError")<{ readonly message: string }> {}

/** Writes what `writer` staged to this writer's staging folder: a file ready to commit as `dataset/rel`. */
export const writePending = (
  writer: StagedFile,
  dataset: string,
  rel: string,
  heights: { readonly min: number | null; readonly max: number | null },
  range?: Range,
  uniqueBy?: ReadonlyArray<string>
) => Effect.flatMap(Manifests, (manifests) => writeStaged(writer, manifests.staging, dataset, rel, heights, range, uniqueBy))

/** Writes what `writer` staged into the staging folder `staging`: a file ready to commit as `dataset/rel`. */
export const writeStaged = (
  writer: StagedFile,
  staging: string,
  dataset: string,
  rel: string,
  heights: { readonly min: number | null; readonly max: number | null },
  range?: Range,
  uniqueBy?: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    const written = yield* writer.finish(stagedPath(staging, dataset, rel), uniqueBy ? { uniqueBy } : {})
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

/**
 * Called with the files of a commit that went through, inside its uninterruptible step: a stop
 * that lands right after a commit still finds it counted (the interrupted run's report lists
 * exactly what the manifests gained).
 */
export type OnCommitted = (files: ReadonlyArray<CommittedFile>) => void

const counted =
  (files: ReadonlyArray<CommittedFile>, onCommitted?: OnCommitted) =>
  <A extends { readonly committed: boolean }, E, R>(commit: Effect.Effect<A, E, R>) =>
    Effect.uninterruptible(Effect.tap(commit, (outcome) => Effect.sync(() => (outcome.committed ? onCommitted?.(files) : undefined))))

/**
 * Commits staged files of `dataset` and the range they complete (append-only datasets), or none;
 * where the run's guard witnesses, the block at the files' top height is anchored (HistoryGuard).
 */
export const commitFiles = (dataset: string, files: ReadonlyArray<CommittedFile>, range?: Range, onCommitted?: OnCommitted) =>
  anchoredBy(
    (guard) => {
      const top = Math.max(0, ...files.map((f) => f.max_height ?? 0))
      return guard.witness && top > 0 ? guard.witness(top) : Effect.succeed(Effect.void)
    },
    Effect.flatMap(Manifests, (manifests) => manifests.commitFiles(dataset, files, range)).pipe(counted(files, onCommitted))
  )

/** Commits a snapshot's staged files with its manifest entry; one of a height above the run's anchor anchors that height (HistoryGuard.vouch). */
export const commitSnapshot = (
  dataset: string,
  files: ReadonlyArray<CommittedFile>,
  snapshot: CommittedSnapshot,
  onCommitted?: OnCommitted
) =>
  anchoredBy(
    (guard) => guard.vouch(snapshot.snapshot_height),
    Effect.flatMap(Manifests, (manifests) => manifests.commitSnapshot(dataset, files, snapshot)).pipe(counted(files, onCommitted))
  )

/**
 * `commit`, guarded where the run has a history guard, and the anchor `anchoring` reads of it
 * (before the guard's check: the source is checked after the block was read) recorded once the
 * commit went through.
 */
const anchoredBy = <A extends { readonly committed: boolean }, E, R>(
  anchoring: (guard: Context.Tag.Service<typeof HistoryGuard>) => Effect.Effect<Effect.Effect<void, ManifestError>, SourceFailure>,
  commit: Effect.Effect<A, E, R>
) =>
  Effect.flatMap(Effect.serviceOption(HistoryGuard), (guard) =>
    Option.isNone(guard)
      ? commit
      : Effect.flatMap(anchoring(guard.value), (record) =>
          Effect.zipRight(
            guard.value.check,
            Effect.tap(commit, (outcome) => (outcome.committed ? record : Effect.void))
          )
        )
  )

/**
 * A lake written by an older chain-lake may lack columns added since: its files read as NULL
 * there (the views read files by column name). Said once per dataset, so that NULLs are not
 * taken for data.
 */
export const olderColumnsNotice = (
  dataset: string,
  manifest: { readonly columns: ReadonlyArray<{ readonly name: string }>; readonly files: ReadonlyArray<unknown> } | undefined,
  columns: ReadonlyArray<{ readonly name: string }>
): string | undefined => {
  if (!manifest || manifest.files.length === 0) return undefined
  const had = new Set(manifest.columns.map((c) => c.name))
  const added = columns.filter((c) => !had.has(c.name)).map((c) => c.name)
  return added.length > 0
    ? `${dataset}: files committed earlier lack ${added.join(", ")} (added by a newer chain-lake); those rows read NULL there: export into a new folder to have ${added.length > 1 ? "them" : "it"} everywhere`
    : undefined
}
