/**
 * A dataset's commit log, for stores without a lock (S3): each commit of a writer is one new object, a fragment in the manifest's own format holding only its new files, ranges and
 * snapshot lists (a compaction's: its merged files, and the files they replace as `retired`), named `<time>-<writer>.json` so that no two writers ever write the same key. The
 * manifest is the fragments merged in name order. A fragment that overlaps what came before it
 * (a range or snapshot list another writer committed first) is not taken: its files stay unlisted,
 * and its writer, which reads the log back after writing, reports that its commit lost.
 */
import { mergeSnapshot, type Manifest } from "./manifest.js"
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
