/**
 * A dataset's commit log, for stores without a lock (S3): each commit of a writer is one new object, a fragment in the manifest's own format holding only its new files, ranges and
 * snapshot lists (a compaction's: its merged files, and the files they replace as `retired`), named `<time>-<writer>.json` so that no two writers ever write the same key. The
 * manifest is the fragments merged in name order. A fragment that overlaps what came before it
 * (a range or snapshot list another writer committed first) is not taken: its files stay unlisted,
 * and its writer, which reads the log back after writing, reports that its commit lost.
 *
 * The log is compacted by checkpoints: a checkpoint is the manifest the fragments up to one of
 * them (`covers`, by name) merge to, kept under `_checkpoint/` and named by that fragment, so the
 * newest sorts last. A reader starts from the newest checkpoint and merges only the fragments named
 * after it; fragments a checkpoint covers are deleted once that checkpoint has stood for a while.
 */
import { Schema } from "effect"
import { Manifest, mergeSnapshot } from "./manifest.js"
import { normalize, subtract, total } from "./RangeSet.js"

/** The key of a writer's `seq`-th fragment under the dataset's `_log/` folder: sorts by time, unique by writer and sequence. */
export const fragmentName = (at: Date, writer: string, seq: number) =>
  `${String(at.getTime()).padStart(15, "0")}-${writer.replace(/[^0-9A-Za-z.-]/g, "_")}-${String(seq).padStart(6, "0")}.json`

/** `base` with `fragment` merged in, or undefined when the fragment overlaps it. */
export const mergeFragment = (base: Manifest | undefined, fragment: Manifest): Manifest | undefined => {
  const committed = base?.committed ?? []
  if (fragment.committed.some((r) => total(subtract(r, committed)) < r[1] - r[0])) return undefined
  const snapshots = [...(base?.snapshots ?? [])]
  for (const s of fragment.snapshots) {
    const i = snapshots.findIndex((p) => p.snapshot_height === s.snapshot_height)
    if (i < 0) {
      snapshots.push(s)
      continue
    }
    const prior = snapshots[i]
    if (s.lists.some((l) => prior.lists.includes(l))) return undefined
    snapshots[i] = mergeSnapshot(prior, s)
  }
  const paths = new Set(fragment.files.map((f) => f.path))
  if ((base?.files ?? []).some((f) => paths.has(f.path))) return undefined
  // a compaction's fragment retires files it merged: each must still be listed (another compaction may have merged it first)
  const retiring = new Set((fragment.retired ?? []).map((r) => r.path))
  const listed = new Set((base?.files ?? []).map((f) => f.path))
  if ([...retiring].some((p) => !listed.has(p))) return undefined
  const retired = [...(base?.retired ?? []), ...(fragment.retired ?? [])]
  return {
    ...(base ?? fragment),
    files: [...(base?.files ?? []).filter((f) => !retiring.has(f.path)), ...fragment.files],
    committed: normalize([...committed, ...fragment.committed]),
    snapshots,
    ...(retired.length > 0 ? { retired } : {})
  }
}

/** A checkpoint of a dataset's commit log: what the fragments up to and including `covers` merge to. */
export const LogCheckpoint = Schema.Struct({
  format_version: Schema.Literal(1),
  /** the name of the last fragment merged in */
  covers: Schema.String,
  manifest: Manifest
})
export type LogCheckpoint = typeof LogCheckpoint.Type

/** The key of the checkpoint covering the fragment `covers`, under the dataset's `_checkpoint/` folder: sorts as the fragments do. */
export const checkpointName = (covers: string) => covers

/** Whether a writer's fragment was taken: each file it committed is listed in the merged manifest (or was, until a compaction retired it). */
export const fragmentTaken = (merged: Manifest | undefined, fragment: Pick<Manifest, "files">): boolean => {
  const listed = new Set([...(merged?.files ?? []), ...(merged?.retired ?? [])].map((f) => f.path))
  return fragment.files.every((f) => listed.has(f.path))
}
