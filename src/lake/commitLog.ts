/**
 * A dataset's commit log, for stores without a lock (S3): each writer adds what it committed as
 * one new object, a fragment in the manifest's own format holding only its new files, ranges and
 * snapshot lists, named `<time>-<writer>.json` so that no two writers ever write the same key. The
 * manifest is the fragments merged in name order. A fragment that overlaps what came before it
 * (a range or snapshot list another writer committed first) is not taken: its files stay unlisted,
 * and its writer, which reads the log back after writing, reports that its commit lost.
 */
import { mergeSnapshot, type CommittedSnapshot, type Manifest } from "./manifest.js"
import { normalize, subtract, total } from "./RangeSet.js"

/** The key of a writer's fragment under the dataset's `_log/` folder: sorts by time, unique by writer. */
export const fragmentName = (at: Date, writer: string) => `${String(at.getTime()).padStart(15, "0")}-${writer.replace(/[^0-9A-Za-z.-]/g, "_")}.json`

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
  return {
    ...(base ?? fragment),
    files: [...(base?.files ?? []), ...fragment.files],
    committed: normalize([...committed, ...fragment.committed]),
    snapshots
  }
}

/** What `local` committed beyond `pulled` (the manifest it started from): the fragment to add, or undefined when nothing. */
export const fragmentOf = (local: Manifest, pulled: Manifest | undefined): Manifest | undefined => {
  const had = new Set((pulled?.files ?? []).map((f) => f.path))
  const files = local.files.filter((f) => !had.has(f.path))
  const committed = local.committed.flatMap((r) => subtract(r, pulled?.committed ?? []))
  const snapshots: Array<CommittedSnapshot> = []
  for (const s of local.snapshots) {
    const prior = pulled?.snapshots.find((p) => p.snapshot_height === s.snapshot_height)
    const lists = s.lists.filter((l) => !prior?.lists.includes(l))
    if (lists.length === 0) continue
    snapshots.push(prior ? { ...s, lists, rows: s.rows - prior.rows, duplicates_dropped: s.duplicates_dropped - prior.duplicates_dropped } : s)
  }
  if (files.length === 0 && committed.length === 0 && snapshots.length === 0) return undefined
  return { ...local, files, committed, snapshots }
}
