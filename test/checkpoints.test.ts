/**
 * Checkpoints, the manifest half of the commit protocol, on a real folder: what open starts and
 * clears, how commits add files and ranges, how snapshots merge and are pruned, and that the
 * manifest on disk (what the next process reads) always says what the calls committed.
 */
import { Effect, Either } from "effect"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Checkpoints, layerCheckpoints, type CommittedFile, type CommittedSnapshot } from "../src/lake/Checkpoints.js"
import type { Column } from "../src/lake/columns.js"
import { filesUnder } from "./support/lake.js"
import { tempDirs } from "./support/tmp.js"

const temp = tempDirs("chain-lake-checkpoints-")
afterAll(() => temp.removeAll())

const columns: ReadonlyArray<Column> = [
  { name: "height", type: "BIGINT", description: "block height" },
  { name: "hash", type: "VARCHAR", description: "block hash" }
]

const run = <A, E>(root: string, program: Effect.Effect<A, E, Checkpoints>) => Effect.runPromise(program.pipe(Effect.provide(layerCheckpoints(root))))
const onDisk = (root: string, dataset: string) => JSON.parse(readFileSync(join(root, dataset, "_manifest.json"), "utf8"))
const file = (path: string, range?: readonly [number, number]): CommittedFile => ({
  path,
  rows: 3,
  bytes: 100,
  sha256: "ab".repeat(32),
  ...(range ? { range } : {}),
  min_height: range ? range[0] : 7,
  max_height: range ? range[1] - 1 : 7,
  committed_at: "2026-01-01T00:00:00.000Z"
})
const touch = (root: string, rel: string) => {
  mkdirSync(join(root, rel, ".."), { recursive: true })
  writeFileSync(join(root, rel), "x")
}
const snapshot = (height: number, lists: Array<string>, consistency: "exact" | "best-effort" = "exact"): CommittedSnapshot => ({
  snapshot_height: height,
  snapshot_time: "2026-01-01T00:00:00.000Z",
  consistency,
  watermark_before: height,
  watermark_after: height,
  rows: 3,
  duplicates_dropped: consistency === "exact" ? 0 : 1,
  reads: 1,
  lists
})

describe("Checkpoints", () => {
  it("open starts an empty manifest with the columns, and a later open reads it back", async () => {
    const root = temp.make()
    const m = await run(root, Effect.flatMap(Checkpoints, (c) => c.open("blocks", "height", columns)))
    expect(m).toEqual({ dataset: "blocks", format_version: 1, unit: "height", columns: [{ name: "height", type: "BIGINT" }, { name: "hash", type: "VARCHAR" }], files: [], committed: [], snapshots: [] })
    expect(onDisk(root, "blocks")).toEqual(m)
    const got = await run(root, Effect.flatMap(Checkpoints, (c) => c.get("blocks")))
    expect(got).toEqual(m)
    expect(await run(root, Effect.flatMap(Checkpoints, (c) => c.get("txs")))).toBeUndefined()
  })

  it("commits add files and merge ranges; a file committed again under its path replaces its entry", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.gen(function* () {
        const c = yield* Checkpoints
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", [file("height_bucket=0/a.parquet", [1, 11])], [1, 11])
        yield* c.commitFiles("blocks", [file("height_bucket=0/c.parquet", [21, 31])], [21, 31])
        yield* c.commitFiles("blocks", [file("height_bucket=0/b.parquet", [11, 21])], [11, 21])
        yield* c.commitFiles("blocks", [{ ...file("height_bucket=0/a.parquet", [1, 11]), rows: 9 }])
      })
    )
    const m = onDisk(root, "blocks")
    expect(m.committed).toEqual([[1, 31]])
    expect(m.files.map((f: CommittedFile) => [f.path, f.rows])).toEqual([
      ["height_bucket=0/c.parquet", 3],
      ["height_bucket=0/b.parquet", 3],
      ["height_bucket=0/a.parquet", 9]
    ])
    // a new process sees the same
    const again = await run(root, Effect.flatMap(Checkpoints, (c) => c.open("blocks", "height", columns)))
    expect(again).toEqual(m)
  })

  it("open clears what an interrupted run left (temp, pending and unlisted Parquet files) and keeps the committed files", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.gen(function* () {
        const c = yield* Checkpoints
        yield* c.open("txs", "position", columns)
        yield* c.commitFiles("txs", [file("height_bucket=0/kept.parquet", [0, 10])], [0, 10])
      })
    )
    for (const rel of ["height_bucket=0/kept.parquet", "height_bucket=0/x.parquet.tmp", "height_bucket=0/y.parquet.pending", "height_bucket=10/orphan.parquet", "_manifest.json.tmp", "notes.md"]) touch(join(root, "txs"), rel)
    await run(root, Effect.flatMap(Checkpoints, (c) => c.open("txs", "position", columns)))
    expect(filesUnder(join(root, "txs")).sort()).toEqual(["_manifest.json", "height_bucket=0/kept.parquet", "notes.md"])
  })

  it("refuses a manifest written for another unit, and names an unreadable one", async () => {
    const root = temp.make()
    await run(root, Effect.flatMap(Checkpoints, (c) => c.open("blocks", "height", columns)))
    const wrong = await run(root, Effect.either(Effect.flatMap(Checkpoints, (c) => c.open("blocks", "position", columns))))
    expect(Either.isLeft(wrong) && wrong.left.message).toBe("blocks/_manifest.json was written for unit height, not position")
    writeFileSync(join(root, "blocks", "_manifest.json"), "{ not json")
    const broken = await run(root, Effect.either(Effect.flatMap(Checkpoints, (c) => c.get("blocks"))))
    expect(Either.isLeft(broken) && broken.left.message).toMatch(/^cannot read the manifest of blocks: /)
    const unopened = await run(temp.make(), Effect.either(Effect.flatMap(Checkpoints, (c) => c.commitFiles("txs", [], [0, 1]))))
    expect(Either.isLeft(unopened) && unopened.left.message).toBe("txs was not opened")
    const unopenedSnapshot = await run(temp.make(), Effect.either(Effect.flatMap(Checkpoints, (c) => c.commitSnapshot("holders", [], snapshot(3, ["a"])))))
    expect(Either.isLeft(unopenedSnapshot) && unopenedSnapshot.left.message).toBe("holders was not opened")
    // a manifest that cannot be written (the lake's root is a file) names the reason
    const notAFolder = join(temp.make(), "file")
    writeFileSync(notAFolder, "")
    const unwritable = await run(notAFolder, Effect.either(Effect.flatMap(Checkpoints, (c) => c.open("blocks", "height", columns))))
    expect(Either.isLeft(unwritable) && unwritable.left.message).toMatch(/ENOTDIR/)
    expect(await run(temp.make(), Effect.flatMap(Checkpoints, (c) => c.pruneSnapshots("holders", 1)))).toEqual([])
  })

  it("a snapshot completed by a later run merges its lists, rows and consistency; pruning keeps the newest heights, manifest first", async () => {
    const root = temp.make()
    const snap = (h: number) => `snapshot_height=${h}/part-0.parquet`
    const dropped = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Checkpoints
        yield* c.open("holders", "snapshot", columns)
        yield* c.commitSnapshot("holders", [file(snap(5))], snapshot(5, ["a"]))
        yield* c.commitSnapshot("holders", [file("snapshot_height=5/part-1.parquet")], snapshot(5, ["b"], "best-effort"))
        yield* c.commitSnapshot("holders", [file(snap(9))], snapshot(9, ["a"]))
        yield* c.commitSnapshot("holders", [file(snap(7))], snapshot(7, ["a"]))
        expect((yield* c.pruneSnapshots("holders", 5)).length).toBe(0)
        return yield* c.pruneSnapshots("holders", 2)
      })
    )
    expect(dropped).toEqual([5])
    const m = onDisk(root, "holders")
    expect(m.snapshots.map((s: CommittedSnapshot) => s.snapshot_height).sort()).toEqual([7, 9])
    // a snapshot of another height is its own entry, never merged into an earlier one
    expect(m.snapshots.find((s: CommittedSnapshot) => s.snapshot_height === 9)).toEqual(snapshot(9, ["a"]))
    expect(m.files.map((f: CommittedFile) => f.path).sort()).toEqual([snap(7), snap(9)])
    // the merged snapshot, before it was pruned, in a second lake
    const other = temp.make()
    const merged = await run(
      other,
      Effect.gen(function* () {
        const c = yield* Checkpoints
        yield* c.open("holders", "snapshot", columns)
        yield* c.commitSnapshot("holders", [file(snap(5))], snapshot(5, ["a"]))
        yield* c.commitSnapshot("holders", [file("snapshot_height=5/part-1.parquet")], snapshot(5, ["b"], "best-effort"))
        return yield* c.get("holders")
      })
    )
    expect(merged?.snapshots).toEqual([{ ...snapshot(5, ["a", "b"], "best-effort"), rows: 6, duplicates_dropped: 1 }])
    expect(merged?.files.length).toBe(2)
    // exact only when every part is exact, whichever came first
    const consistencyOf = (first: "exact" | "best-effort", second: "exact" | "best-effort") =>
      run(
        temp.make(),
        Effect.gen(function* () {
          const c = yield* Checkpoints
          yield* c.open("holders", "snapshot", columns)
          yield* c.commitSnapshot("holders", [], snapshot(5, ["a"], first))
          yield* c.commitSnapshot("holders", [], snapshot(5, ["b"], second))
          return (yield* c.get("holders"))?.snapshots.map((s) => s.consistency)
        })
      )
    expect(await consistencyOf("exact", "exact")).toEqual(["exact"])
    expect(await consistencyOf("best-effort", "exact")).toEqual(["best-effort"])
    expect(await consistencyOf("exact", "best-effort")).toEqual(["best-effort"])
  })

  it("pruning deletes the dropped snapshots' files and folders", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.gen(function* () {
        const c = yield* Checkpoints
        yield* c.open("nft_tokens", "snapshot", columns)
        for (const h of [3, 4, 5]) {
          touch(join(root, "nft_tokens"), `snapshot_height=${h}/part-0.parquet`)
          yield* c.commitSnapshot("nft_tokens", [file(`snapshot_height=${h}/part-0.parquet`)], snapshot(h, ["tokens"]))
        }
        expect(yield* c.pruneSnapshots("nft_tokens", 1)).toEqual([3, 4])
      })
    )
    expect(filesUnder(join(root, "nft_tokens")).sort()).toEqual(["_manifest.json", "snapshot_height=5/part-0.parquet"])
    expect(onDisk(root, "nft_tokens").files.map((f: CommittedFile) => f.path)).toEqual(["snapshot_height=5/part-0.parquet"])
    expect(existsSync(join(root, "nft_tokens", "snapshot_height=3"))).toBe(false)
  })
})
