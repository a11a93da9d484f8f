/**
 * The commit log of a lake on S3 (src/lake/commitLog.ts): fragments merge in order, one that
 * overlaps what came before is not taken, and names never collide.
 */
import { describe, expect, it } from "vitest"
import { fragmentName, fragmentTaken, mergeFragment } from "../../src/lake/commitLog.js"
import { wasTaken, type RemoteRead } from "../../src/s3/sync.js"
import type { CommittedFile, CommittedSnapshot, Manifest } from "../../src/lake/manifest.js"

const file = (path: string): CommittedFile => ({
  path,
  rows: 2,
  bytes: 10,
  sha256: "cd".repeat(32),
  min_height: 1,
  max_height: 2,
  committed_at: "2026-01-01T00:00:00.000Z"
})
const manifest = (files: Array<string>, committed: Array<[number, number]>, snapshots: Array<CommittedSnapshot> = []): Manifest => ({
  dataset: "blocks",
  format_version: 1,
  unit: "height",
  columns: [{ name: "height", type: "BIGINT" }],
  files: files.map(file),
  committed,
  snapshots
})
const snap = (height: number, lists: Array<string>, rows: number, consistency: "exact" | "best-effort" = "exact"): CommittedSnapshot => ({
  snapshot_height: height,
  snapshot_time: "t",
  consistency,
  watermark_before: height,
  watermark_after: height,
  rows,
  duplicates_dropped: 0,
  reads: 1,
  lists
})

describe("commit log", () => {
  it("merges disjoint fragments; one overlapping a range, a snapshot list or a file before it is not taken", () => {
    const a = mergeFragment(undefined, manifest(["a.parquet"], [[1, 51]]))!
    const ab = mergeFragment(a, manifest(["b.parquet"], [[51, 101]]))!
    expect(ab.committed).toEqual([[1, 101]])
    expect(ab.files.map((f) => f.path)).toEqual(["a.parquet", "b.parquet"])
    expect(mergeFragment(ab, manifest(["c.parquet"], [[100, 120]]))).toBeUndefined()
    expect(mergeFragment(ab, manifest(["a.parquet"], [[200, 210]]))).toBeUndefined()
    expect(mergeFragment(ab, manifest(["c.parquet"], [[101, 120]]))?.committed).toEqual([[1, 120]])
    const s = mergeFragment(undefined, manifest(["s0.parquet"], [], [snap(5, ["uinit"], 3)]))!
    expect(mergeFragment(s, manifest(["s1.parquet"], [], [snap(5, ["uinit"], 3)]))).toBeUndefined()
    expect(mergeFragment(s, manifest(["s1.parquet"], [], [snap(5, ["uusdc"], 4, "best-effort")]))?.snapshots).toEqual([
      { ...snap(5, ["uinit", "uusdc"], 7), consistency: "best-effort" }
    ])
    expect(mergeFragment(s, manifest(["s1.parquet"], [], [snap(6, ["uinit"], 1)]))?.snapshots.map((x) => x.snapshot_height)).toEqual([5, 6])
  })

  it("a compaction's fragment swaps the files it retires for its merged file; one retiring a file no longer listed (merged by another compaction first) is not taken", () => {
    const ab = mergeFragment(mergeFragment(undefined, manifest(["a.parquet"], [[1, 51]]))!, manifest(["b.parquet"], [[51, 101]]))!
    const retire = (paths: Array<string>, by: string): Manifest => ({
      ...manifest([by], []),
      retired: paths.map((path) => ({ path, retired_at: "t", replaced_by: [by] }))
    })
    const merged = mergeFragment(ab, retire(["a.parquet", "b.parquet"], "ab.parquet"))!
    expect(merged.files.map((f) => f.path)).toEqual(["ab.parquet"])
    expect(merged.committed).toEqual([[1, 101]])
    expect(merged.retired?.map((r) => r.path)).toEqual(["a.parquet", "b.parquet"])
    expect(mergeFragment(merged, retire(["a.parquet", "b.parquet"], "ab2.parquet"))).toBeUndefined()
    // later commits merge as before
    expect(mergeFragment(merged, manifest(["c.parquet"], [[101, 150]]))?.files.map((f) => f.path)).toEqual(["ab.parquet", "c.parquet"])
  })

  it("fragment names sort by time and differ by writer and by each commit of a writer", () => {
    const at = new Date(1_700_000_000_000)
    expect(fragmentName(at, "host-1-ab", 7)).toBe("001700000000000-host-1-ab-000007.json")
    expect(fragmentName(new Date(999), "w", 1) < fragmentName(at, "w", 0)).toBe(true)
    expect(fragmentName(at, "w", 1) > fragmentName(at, "w", 0)).toBe(true)
    expect(fragmentName(at, "a/b", 0)).toBe("001700000000000-a_b-000000.json")
  })

  it("a fragment was taken when its name came after the checkpoint and was not rejected, or, covered by the checkpoint, when its files are listed (or retired by a compaction)", () => {
    const merged = {
      ...manifest(["a.parquet", "b.parquet"], [[1, 101]]),
      retired: [{ path: "old.parquet", retired_at: "t", replaced_by: ["b.parquet"] }]
    }
    expect(fragmentTaken(merged, manifest(["a.parquet"], [[1, 51]]))).toBe(true)
    expect(fragmentTaken(merged, manifest(["old.parquet"], [[1, 51]]))).toBe(true)
    expect(fragmentTaken(merged, manifest(["a.parquet", "lost.parquet"], [[1, 51]]))).toBe(false)
    expect(fragmentTaken(undefined, manifest(["a.parquet"], [[1, 51]]))).toBe(false)
    const read: RemoteRead = {
      manifest: merged,
      covers: "000000000000200-w-000001.json",
      fragments: ["000000000000300-w-000002.json"],
      rejected: ["000000000000300-w-000002.json"]
    }
    // covered by the checkpoint: judged by its files
    expect(wasTaken(read, "000000000000100-w-000000.json", manifest(["a.parquet"], []))).toBe(true)
    expect(wasTaken(read, "000000000000200-w-000001.json", manifest(["lost.parquet"], []))).toBe(false)
    // after it: judged by the merge
    expect(wasTaken(read, "000000000000300-w-000002.json", manifest(["a.parquet"], []))).toBe(false)
    expect(wasTaken({ ...read, rejected: [] }, "000000000000300-w-000002.json", manifest(["zzz.parquet"], []))).toBe(true)
    expect(wasTaken({ ...read, covers: undefined }, "000000000000100-w-000000.json", manifest(["lost.parquet"], []))).toBe(true)
  })
})
