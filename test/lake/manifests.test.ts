/**
 * Manifests, the manifest half of the commit protocol, on a real folder: what open starts and
 * clears, how commits add files and ranges, how snapshots merge and are pruned, and that the
 * manifest on disk (what the next process reads) always says what the calls committed.
 */
import { Effect, Either, Fiber } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  Manifests,
  layerManifests,
  makeManifests,
  retiredPath,
  type ManifestsService,
  type CommittedFile,
  type CommittedSnapshot,
  ManifestError
} from "../../src/lake/Manifests.js"
import type { Column } from "../../src/lake/columns.js"
import { commitFiles, olderColumnsNotice } from "../../src/engine/commit.js"
import { filesUnder } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const temp = tempDirs("chain-lake-manifests-")
afterAll(() => temp.removeAll())

const columns: ReadonlyArray<Column> = [
  { name: "height", type: "BIGINT", description: "block height" },
  { name: "hash", type: "VARCHAR", description: "block hash" }
]

const run = <A, E>(root: string, program: Effect.Effect<A, E, Manifests>) =>
  Effect.runPromise(program.pipe(Effect.provide(layerManifests(root))))
const onDisk = (root: string, dataset: string) => JSON.parse(readFileSync(join(root, dataset, "_manifest.json"), "utf8"))
const file = (path: string, range?: readonly [number, number]): CommittedFile => ({
  path,
  rows: 3,
  bytes: `rows of ${path}`.length,
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
/** Files as a writer stages them before a commit (in its staging folder), of the size `file` lists them at (open checks it). */
const stage = (c: ManifestsService, dataset: string, files: Array<CommittedFile>) => {
  for (const f of files) {
    mkdirSync(join(c.staged(dataset, f.path), ".."), { recursive: true })
    writeFileSync(c.staged(dataset, f.path), `rows of ${f.path}`)
  }
  return files
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

describe("Manifests", () => {
  it("open starts an empty manifest with the columns, and a later open reads it back", async () => {
    const root = temp.make()
    const m = await run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
    )
    expect(m).toEqual({
      dataset: "blocks",
      format_version: 1,
      unit: "height",
      columns: [
        { name: "height", type: "BIGINT" },
        { name: "hash", type: "VARCHAR" }
      ],
      files: [],
      committed: [],
      snapshots: [],
      version: 1
    })
    expect(onDisk(root, "blocks")).toEqual(m)
    const got = await run(
      root,
      Effect.flatMap(Manifests, (c) => c.get("blocks"))
    )
    expect(got).toEqual(m)
    expect(
      await run(
        root,
        Effect.flatMap(Manifests, (c) => c.get("txs"))
      )
    ).toBeUndefined()
  })

  it("commits add files and merge ranges; a file committed again under its path replaces its entry", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/a.parquet", [1, 11])]), [1, 11])
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/c.parquet", [21, 31])]), [21, 31])
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/b.parquet", [11, 21])]), [11, 21])
        yield* c.commitFiles("blocks", stage(c, "blocks", [{ ...file("height_bucket=0/a.parquet", [1, 11]), rows: 9 }]))
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
    const again = await run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
    )
    expect(again).toEqual(m)
  })

  it("commits asked for while one is made are made next, together, in one manifest write; each keeps its own outcome, in the order asked", async () => {
    const root = temp.make()
    const theirs = join(root, "blocks", "height_bucket=0", "in-the-way.parquet")
    const added: Array<Array<string>> = []
    const layer = layerManifests(root, { afterCommit: (m) => Effect.sync(() => void added.push(m.files.map((f) => f.path))) })
    const r = await Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        const before = onDisk(root, "blocks").version
        mkdirSync(join(theirs, ".."), { recursive: true })
        writeFileSync(theirs, "the user's own bytes")
        const commit = (name: string, range: readonly [number, number]) =>
          Effect.either(c.commitFiles("blocks", stage(c, "blocks", [file(`height_bucket=0/${name}.parquet`, range)]), [range[0], range[1]]))
        // six at once: one group
        const outcomes = yield* Effect.all(
          [
            commit("a", [1, 11]),
            commit("b", [11, 21]),
            commit("again", [5, 15]),
            commit("in-the-way", [41, 51]),
            commit("c", [21, 31]),
            commit("d", [31, 41])
          ],
          { concurrency: "unbounded" }
        )
        const writes = onDisk(root, "blocks").version - before
        // a group of only refused commits writes nothing
        const late = yield* commit("late", [3, 8])
        return {
          outcomes,
          writes,
          late,
          lateWrites: onDisk(root, "blocks").version - before - writes,
          staged: existsSync(c.staged("blocks", "height_bucket=0/again.parquet"))
        }
      }).pipe(Effect.provide(layer))
    )
    expect(r.outcomes.map((o) => (Either.isRight(o) ? o.right.committed : o.left.message.split(":")[0]))).toEqual([
      true,
      true,
      false,
      `${theirs} is already there and the lake did not write it (blocks/_manifest.json does not list it)`,
      true,
      true
    ])
    // the overlapping commit saw what the group's earlier commits added, as it would have one after another
    const again = r.outcomes[2]
    expect(Either.isRight(again) && !again.right.committed && again.right.ranges).toEqual([[1, 21]])
    expect(r.staged).toBe(false)
    expect(r.writes).toBe(1)
    expect(Either.isRight(r.late) && r.late.right.committed).toBe(false)
    expect(r.lateWrites).toBe(0)
    const m = onDisk(root, "blocks")
    expect(m.committed).toEqual([[1, 41]])
    expect(m.files.map((f: CommittedFile) => f.path)).toEqual(["a", "b", "c", "d"].map((n) => `height_bucket=0/${n}.parquet`))
    for (const n of ["a", "b", "c", "d"])
      expect(readFileSync(join(root, "blocks", "height_bucket=0", `${n}.parquet`), "utf8")).toBe(`rows of height_bucket=0/${n}.parquet`)
    expect(readFileSync(theirs, "utf8")).toBe("the user's own bytes")
    // the commit log is told each commit that was made, as made alone
    expect(added).toEqual(["a", "b", "c", "d"].map((n) => [`height_bucket=0/${n}.parquet`]))
  })

  it("in a group, a commit the commit log refuses fails alone: the others are made and logged", async () => {
    const root = temp.make()
    const logged: Array<string> = []
    const layer = layerManifests(root, {
      afterCommit: (m) =>
        m.files.some((f) => f.path.includes("/b."))
          ? Effect.fail(new ManifestError({ message: "the commit log refused b" }))
          : Effect.sync(() => void logged.push(...m.files.map((f) => f.path)))
    })
    const outcomes = await Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        const commit = (name: string, range: readonly [number, number]) =>
          Effect.either(c.commitFiles("blocks", stage(c, "blocks", [file(`height_bucket=0/${name}.parquet`, range)]), [range[0], range[1]]))
        return yield* Effect.all([commit("a", [1, 11]), commit("b", [11, 21]), commit("c", [21, 31])], { concurrency: "unbounded" })
      }).pipe(Effect.provide(layer))
    )
    expect(outcomes.map((o) => (Either.isRight(o) ? o.right.committed : o.left.message))).toEqual([true, "the commit log refused b", true])
    expect(logged).toEqual(["height_bucket=0/a.parquet", "height_bucket=0/c.parquet"])
  })

  it("a group fenced before its rename (another writer took the lock and committed) is decided again from the manifest on disk: a commit it dropped the first time can be made, its staged file still there", async () => {
    const root = temp.make()
    const outcome = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        const tmp = join(root, "blocks", `_manifest.json.${c.writer}.tmp`)
        process.env.CHAIN_LAKE_TEST_PAUSE_BEFORE_MANIFEST_MS = "300"
        // x, then y overlapping it: y is dropped on the first try
        const commits = yield* Effect.fork(
          Effect.all(
            [
              c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/x.parquet", [1, 11])]), [1, 11]),
              c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/y.parquet", [5, 15])]), [5, 15])
            ],
            { concurrency: "unbounded" }
          )
        )
        while (!existsSync(tmp)) yield* Effect.sleep("2 millis")
        delete process.env.CHAIN_LAKE_TEST_PAUSE_BEFORE_MANIFEST_MS
        // meanwhile another writer takes the lock over: it deletes this writer's pending write and commits 0..2
        rmSync(tmp)
        const theirs = onDisk(root, "blocks")
        writeFileSync(
          join(root, "blocks", "_manifest.json"),
          JSON.stringify({ ...theirs, committed: [[0, 3]], version: theirs.version + 1 })
        )
        const [x, y] = yield* Fiber.join(commits)
        return { x, y, reopened: yield* c.open("blocks", "height", columns) }
      })
    ).finally(() => delete process.env.CHAIN_LAKE_TEST_PAUSE_BEFORE_MANIFEST_MS)
    expect(outcome.x).toEqual({ committed: false, ranges: [[0, 3]], reason: "another writer committed part of 1..10 first" })
    expect(outcome.y).toEqual({ committed: true })
    expect(outcome.reopened.committed).toEqual([
      [0, 3],
      [5, 15]
    ])
    expect(outcome.reopened.files.map((f: CommittedFile) => f.path)).toEqual(["height_bucket=0/y.parquet"])
    expect(readFileSync(join(root, "blocks", "height_bucket=0", "y.parquet"), "utf8")).toBe("rows of height_bucket=0/y.parquet")
    expect(existsSync(join(root, "blocks", "height_bucket=0", "x.parquet"))).toBe(false)
  })

  it("a commit never renames over a file the manifest does not list: it fails naming it, the file stays byte for byte, nothing is listed", async () => {
    const root = temp.make()
    const theirs = join(root, "blocks", "height_bucket=0", "b.parquet")
    const outcome = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/a.parquet", [1, 11])]), [1, 11])
        writeFileSync(theirs, "the user's own bytes")
        const clash = yield* Effect.either(
          c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/b.parquet", [11, 21])]), [11, 21])
        )
        return { clash, staged: existsSync(c.staged("blocks", "height_bucket=0/b.parquet")) }
      })
    )
    expect(Either.isLeft(outcome.clash) && outcome.clash.left.message).toBe(
      `${theirs} is already there and the lake did not write it (blocks/_manifest.json does not list it): nothing was committed over it; move it out of ${join(root, "blocks")}, or export into a new --out`
    )
    expect(outcome.staged).toBe(false)
    expect(readFileSync(theirs, "utf8")).toBe("the user's own bytes")
    expect(onDisk(root, "blocks").files.map((f: CommittedFile) => f.path)).toEqual(["height_bucket=0/a.parquet"])
    expect(onDisk(root, "blocks").committed).toEqual([[1, 11]])
  })

  it("open checks each listed file's size against its manifest: a file cut short since its commit stops the run, naming it", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/a.parquet", [1, 11])]), [1, 11])
      })
    )
    const path = join(root, "blocks", "height_bucket=0", "a.parquet")
    const listed = file("height_bucket=0/a.parquet").bytes
    writeFileSync(path, "cut")
    const damaged = await run(root, Effect.either(Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))))
    expect(Either.isLeft(damaged) && damaged.left.message).toBe(
      `${path} is 3 bytes, but blocks/_manifest.json lists it at ${listed}: the committed file was damaged (cut short or overwritten); restore it from a copy, or export into a new --out (chain-lake verify checks every file)`
    )
  })

  it("open clears only temp files this tool named, and keeps committed files and files it did not write", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("txs", "position", columns)
        yield* c.commitFiles("txs", stage(c, "txs", [file("height_bucket=0/kept.parquet", [0, 10])]), [0, 10])
      })
    )
    for (const rel of [
      "height_bucket=0/x.parquet.tmp",
      "height_bucket=0/y.parquet.pending",
      "height_bucket=10/users-own.parquet",
      "_manifest.json.tmp",
      "notes.md"
    ])
      touch(join(root, "txs"), rel)
    await run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("txs", "position", columns))
    )
    expect(filesUnder(join(root, "txs")).sort()).toEqual([
      "_manifest.json",
      "height_bucket=0/kept.parquet",
      "height_bucket=10/users-own.parquet",
      "notes.md"
    ])
    // the writer's staging folder went with it
    expect(filesUnder(join(root, ".chain-lake"))).toEqual([])
  })

  it("a new writer removes the DuckDB spill folders of writers that are gone, and keeps live ones", async () => {
    const root = temp.make()
    const host = hostname().replace(/[^0-9A-Za-z.-]/g, "_")
    const gone = `${host}-${spawnSync(process.execPath, ["-e", "0"]).pid}-0123abcd`
    const live = `${host}-${process.ppid}-0123abcd`
    for (const w of [gone, live]) touch(join(root, ".chain-lake", "tmp", w), "duckdb_temp_block-1.block")
    await run(
      root,
      Effect.flatMap(Manifests, (c) => c.get("blocks"))
    )
    expect(filesUnder(join(root, ".chain-lake", "tmp"))).toEqual([`${live}/duckdb_temp_block-1.block`])
  })

  it("a folder with Parquet files and no manifest (lost) is refused, and nothing in it is deleted", async () => {
    const root = temp.make()
    touch(join(root, "blocks"), "height_bucket=0/part-h1-11-0.parquet")
    const refused = await run(root, Effect.either(Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))))
    expect(Either.isLeft(refused) && refused.left.message).toBe(
      `${join(root, "blocks")} holds 1 Parquet file(s) but no _manifest.json, so nothing says which are committed: restore the manifest, move the folder away, or export into a new --out (nothing was deleted)`
    )
    expect(filesUnder(join(root, "blocks"))).toEqual(["height_bucket=0/part-h1-11-0.parquet"])
  })

  it("open finishes a commit whose writer was killed after its manifest and before its renames; a listed file found nowhere stops it", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
    )
    // a writer of this host whose process is gone, killed between steps 3 and 4 of the protocol
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid
    const writer = `${hostname().replace(/[^0-9A-Za-z.-]/g, "_")}-${gone}-0123abcd`
    touch(join(root, ".chain-lake", "staging", writer, "blocks"), "height_bucket=0/a.parquet.pending")
    touch(join(root, ".chain-lake", "staging", writer, "blocks"), "height_bucket=0/uncommitted.parquet.pending")
    const m = onDisk(root, "blocks")
    writeFileSync(
      join(root, "blocks", "_manifest.json"),
      JSON.stringify({ ...m, files: [{ ...file("height_bucket=0/a.parquet", [1, 11]), bytes: 1 }], committed: [[1, 11]] })
    )
    await run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
    )
    expect(filesUnder(join(root, "blocks")).sort()).toEqual(["_manifest.json", "height_bucket=0/a.parquet"])
    // the dead writer's staging folder is gone with what it never committed
    expect(existsSync(join(root, ".chain-lake", "staging", writer))).toBe(false)
    // a listed file that is nowhere: the lake lost it
    rmSync(join(root, "blocks", "height_bucket=0", "a.parquet"))
    const lost = await run(root, Effect.either(Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))))
    expect(Either.isLeft(lost) && lost.left.message).toMatch(
      /height_bucket=0\/a\.parquet is listed in blocks\/_manifest\.json but missing: the lake lost a committed file/
    )
  })

  it("two writers: a range another writer committed meanwhile is dropped with what it overlaps, and reported", async () => {
    const root = temp.make()
    const outcome = await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* makeManifests(root)
        const b = yield* makeManifests(root)
        yield* a.open("blocks", "height", columns)
        yield* b.open("blocks", "height", columns)
        expect(a.writer).not.toBe(b.writer)
        expect(
          (yield* a.commitFiles("blocks", stage(a, "blocks", [file("height_bucket=0/part-a.parquet", [0, 10])]), [0, 10])).committed
        ).toBe(true)
        const overlapping = yield* b.commitFiles("blocks", stage(b, "blocks", [file("height_bucket=0/part-b.parquet", [5, 15])]), [5, 15])
        const disjoint = yield* b.commitFiles("blocks", stage(b, "blocks", [file("height_bucket=0/part-c.parquet", [10, 15])]), [10, 15])
        return { overlapping, disjoint, stagedB: existsSync(b.staged("blocks", "height_bucket=0/part-b.parquet")) }
      }).pipe(Effect.scoped)
    )
    expect(outcome.overlapping).toEqual({ committed: false, ranges: [[0, 10]], reason: "another writer committed part of 5..14 first" })
    expect(outcome.stagedB).toBe(false)
    expect(outcome.disjoint).toEqual({ committed: true })
    const m = onDisk(root, "blocks")
    expect(m.committed).toEqual([[0, 15]])
    expect(filesUnder(join(root, "blocks")).sort()).toEqual([
      "_manifest.json",
      "height_bucket=0/part-a.parquet",
      "height_bucket=0/part-c.parquet"
    ])
    // snapshots: a list committed first wins; another list gets its own part number
    const snapshots = await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* makeManifests(root)
        const b = yield* makeManifests(root)
        yield* a.open("holders", "snapshot", columns)
        yield* a.commitSnapshot("holders", stage(a, "holders", [file("snapshot_height=5/part-0.parquet")]), snapshot(5, ["uinit"]))
        const same = yield* b.commitSnapshot(
          "holders",
          stage(b, "holders", [file("snapshot_height=5/part-0.parquet")]),
          snapshot(5, ["uinit"])
        )
        const other = yield* b.commitSnapshot(
          "holders",
          stage(b, "holders", [file("snapshot_height=5/part-0.parquet")]),
          snapshot(5, ["uusdc"])
        )
        return { same, other }
      }).pipe(Effect.scoped)
    )
    expect(snapshots.same).toEqual({ committed: false, ranges: [], reason: "another writer committed uinit of snapshot 5 first" })
    expect(snapshots.other).toEqual({ committed: true })
    expect(onDisk(root, "holders").files.map((f: CommittedFile) => f.path)).toEqual([
      "snapshot_height=5/part-0.parquet",
      "snapshot_height=5/part-1.parquet"
    ])
    expect(filesUnder(join(root, "holders")).sort()).toEqual([
      "_manifest.json",
      "snapshot_height=5/part-0.parquet",
      "snapshot_height=5/part-1.parquet"
    ])
  })

  it("refuses a manifest written for another unit, and names an unreadable one", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
    )
    const wrong = await run(root, Effect.either(Effect.flatMap(Manifests, (c) => c.open("blocks", "position", columns))))
    expect(Either.isLeft(wrong) && wrong.left.message).toBe("blocks/_manifest.json was written for unit height, not position")
    writeFileSync(join(root, "blocks", "_manifest.json"), "{ not json")
    const broken = await run(root, Effect.either(Effect.flatMap(Manifests, (c) => c.get("blocks"))))
    expect(Either.isLeft(broken) && broken.left.message).toMatch(/^cannot read the manifest of blocks: /)
    const unopened = await run(
      temp.make(),
      Effect.either(Effect.flatMap(Manifests, (c) => c.commitFiles("txs", stage(c, "txs", []), [0, 1])))
    )
    expect(Either.isLeft(unopened) && unopened.left.message).toBe("txs was not opened")
    const unopenedSnapshot = await run(
      temp.make(),
      Effect.either(Effect.flatMap(Manifests, (c) => c.commitSnapshot("holders", stage(c, "holders", []), snapshot(3, ["a"]))))
    )
    expect(Either.isLeft(unopenedSnapshot) && unopenedSnapshot.left.message).toBe("holders was not opened")
    // a manifest that cannot be written (the lake's root is a file) names the reason
    const notAFolder = join(temp.make(), "file")
    writeFileSync(notAFolder, "")
    const unwritable = await run(notAFolder, Effect.either(Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))))
    expect(Either.isLeft(unwritable) && unwritable.left.message).toMatch(/ENOTDIR/)
    expect(
      await run(
        temp.make(),
        Effect.flatMap(Manifests, (c) => c.pruneSnapshots("holders", 1))
      )
    ).toEqual([])
  })

  it("a snapshot completed by a later run merges its lists, rows and consistency; pruning keeps the newest heights, manifest first", async () => {
    const root = temp.make()
    const snap = (h: number) => `snapshot_height=${h}/part-0.parquet`
    const dropped = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("holders", "snapshot", columns)
        yield* c.commitSnapshot("holders", stage(c, "holders", [file(snap(5))]), snapshot(5, ["a"]))
        yield* c.commitSnapshot(
          "holders",
          stage(c, "holders", [file("snapshot_height=5/part-1.parquet")]),
          snapshot(5, ["b"], "best-effort")
        )
        yield* c.commitSnapshot("holders", stage(c, "holders", [file(snap(9))]), snapshot(9, ["a"]))
        yield* c.commitSnapshot("holders", stage(c, "holders", [file(snap(7))]), snapshot(7, ["a"]))
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
        const c = yield* Manifests
        yield* c.open("holders", "snapshot", columns)
        yield* c.commitSnapshot("holders", stage(c, "holders", [file(snap(5))]), snapshot(5, ["a"]))
        yield* c.commitSnapshot(
          "holders",
          stage(c, "holders", [file("snapshot_height=5/part-1.parquet")]),
          snapshot(5, ["b"], "best-effort")
        )
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
          const c = yield* Manifests
          yield* c.open("holders", "snapshot", columns)
          yield* c.commitSnapshot("holders", stage(c, "holders", []), snapshot(5, ["a"], first))
          yield* c.commitSnapshot("holders", stage(c, "holders", []), snapshot(5, ["b"], second))
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
        const c = yield* Manifests
        yield* c.open("nft_tokens", "snapshot", columns)
        for (const h of [3, 4, 5]) {
          yield* c.commitSnapshot(
            "nft_tokens",
            stage(c, "nft_tokens", [file(`snapshot_height=${h}/part-0.parquet`)]),
            snapshot(h, ["tokens"])
          )
        }
        expect(yield* c.pruneSnapshots("nft_tokens", 1)).toEqual([3, 4])
      })
    )
    expect(filesUnder(join(root, "nft_tokens")).sort()).toEqual(["_manifest.json", "snapshot_height=5/part-0.parquet"])
    expect(onDisk(root, "nft_tokens").files.map((f: CommittedFile) => f.path)).toEqual(["snapshot_height=5/part-0.parquet"])
    expect(existsSync(join(root, "nft_tokens", "snapshot_height=3"))).toBe(false)
  })
})

describe("the lake's identity, compaction's swap, vacuum and reading committed files", () => {
  it("recordIdentity keeps one chain and its anchors by height (one per height: the newest 8 and older ones spread out, 10 here all kept); another chain is refused; a damaged file is said", async () => {
    const root = temp.make()
    const result = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        const before = yield* c.identity
        for (const h of [50, 10, 90, 20, 80, 30, 70, 40, 60, 100]) yield* c.recordIdentity("chain-a", { height: h, hash: `H${h}` })
        yield* c.recordIdentity("chain-a", { height: 100, hash: "again" })
        const after = yield* c.identity
        const other = yield* Effect.flip(c.recordIdentity("chain-b", { height: 1, hash: "X" }))
        return { before, after, other }
      })
    )
    expect(result.before).toBeUndefined()
    expect(result.after).toEqual({
      format_version: 1,
      chain_id: "chain-a",
      anchors: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((h) => ({ height: h, hash: h === 100 ? "again" : `H${h}` }))
    })
    expect(result.other.message).toBe(`${root} holds chain chain-a, not chain-b`)
    expect(JSON.parse(readFileSync(join(root, "_lake.json"), "utf8"))).toEqual(result.after)
    writeFileSync(join(root, "_lake.json"), JSON.stringify({ format_version: 1, chain_id: 5, anchors: [] }))
    const damaged = await run(root, Effect.flip(Effect.flatMap(Manifests, (c) => c.identity)))
    expect(damaged.message).toMatch(
      new RegExp(`^cannot read ${join(root, "_lake.json")}: damaged at .*chain_id.*; restore it, or export into a new --out$`)
    )
  })

  it("commitCompaction puts the new file where the first old one was listed and retires the old ones out of the folder; a stale or taken swap commits nothing; vacuum deletes retired files past their grace", async () => {
    const root = temp.make()
    const f = (name: string, sha: string): CommittedFile => ({
      ...file(`height_bucket=0/${name}.parquet`, undefined),
      sha256: sha.repeat(64)
    })
    const result = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [f("a", "1"), f("b", "2"), f("c", "3")]))
        const merged = f("ab", "4")
        const swapped = yield* c.commitCompaction("blocks", [f("a", "1"), f("b", "2")], stage(c, "blocks", [merged]))
        const afterSwap = onDisk(root, "blocks")
        // replaced files no longer as listed (another writer got there first), or a new name already in use: nothing committed
        const stale = yield* c.commitCompaction("blocks", [f("c", "9")], stage(c, "blocks", [f("c2", "5")]))
        const taken = yield* c.commitCompaction("blocks", [f("c", "3")], stage(c, "blocks", [f("ab", "6")]))
        const notYet = yield* c.vacuum("blocks", 3_600_000)
        const deleted = yield* c.vacuum("blocks", 0)
        return { swapped, afterSwap, stale, taken, notYet, deleted, afterVacuum: onDisk(root, "blocks") }
      })
    )
    expect(result.swapped).toEqual({ committed: true })
    expect(result.afterSwap.files.map((x: CommittedFile) => x.path)).toEqual(["height_bucket=0/ab.parquet", "height_bucket=0/c.parquet"])
    expect(result.afterSwap.retired.map((r: { path: string; replaced_by: Array<string> }) => [r.path, r.replaced_by])).toEqual([
      ["height_bucket=0/a.parquet", ["height_bucket=0/ab.parquet"]],
      ["height_bucket=0/b.parquet", ["height_bucket=0/ab.parquet"]]
    ])
    expect(result.stale).toEqual({ committed: false, ranges: [], reason: "another writer replaced height_bucket=0/c.parquet first" })
    expect(result.taken).toEqual({ committed: false, ranges: [], reason: "height_bucket=0/ab.parquet is in use" })
    expect(result.notYet).toEqual([])
    expect(result.deleted).toEqual(["height_bucket=0/a.parquet", "height_bucket=0/b.parquet"])
    expect(result.afterVacuum.retired).toEqual([])
    expect(result.afterVacuum.files.map((x: CommittedFile) => x.path)).toEqual(["height_bucket=0/ab.parquet", "height_bucket=0/c.parquet"])
    // on disk: the listed files and the manifest; nothing retired left, nothing staged
    expect(filesUnder(join(root, "blocks")).sort()).toEqual(["_manifest.json", "height_bucket=0/ab.parquet", "height_bucket=0/c.parquet"])
    expect(existsSync(retiredPath(root, "blocks", "height_bucket=0/a.parquet"))).toBe(false)
    expect(readFileSync(join(root, "blocks", "height_bucket=0/ab.parquet"), "utf8")).toBe("rows of height_bucket=0/ab.parquet")
  })

  it("withCommittedFiles reads the committed files in the folder in one call, and each missing one through fetchCommitted alone, in a copy deleted after", async () => {
    const root = temp.make()
    const elsewhere = temp.make()
    const fetched: Array<string> = []
    const layer = layerManifests(root, {
      fetchCommitted: (dataset, path, to) =>
        Effect.sync(() => {
          fetched.push(`${dataset}/${path}`)
          writeFileSync(to, readFileSync(join(elsewhere, path)))
        })
    })
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* Manifests
        const none = yield* c.withCommittedFiles("blocks", (paths) => Effect.succeed(paths))
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("a.parquet"), file("b.parquet"), file("c.parquet")]))
        // b and c live elsewhere (an S3 lake keeps no committed file locally)
        for (const name of ["b.parquet", "c.parquet"]) {
          writeFileSync(join(elsewhere, name), `remote ${name}`)
          rmSync(join(root, "blocks", name))
        }
        const calls: Array<Array<string>> = []
        const read = yield* c.withCommittedFiles("blocks", (paths) =>
          Effect.sync(() => {
            calls.push([...paths])
            return paths.map((p) => readFileSync(p, "utf8"))
          })
        )
        return { none, read, calls }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    expect(result.none).toEqual([])
    expect(result.read).toEqual(["rows of a.parquet", "remote b.parquet", "remote c.parquet"])
    expect(result.calls.map((c) => c.length)).toEqual([1, 1, 1])
    expect(result.calls[0]).toEqual([join(root, "blocks", "a.parquet")])
    expect(fetched).toEqual(["blocks/b.parquet", "blocks/c.parquet"])
    // the copies are gone
    for (const call of result.calls.slice(1)) expect(existsSync(call[0])).toBe(false)
  })
})

describe("recovery of a compaction cut short", () => {
  const host = hostname().replace(/[^0-9A-Za-z.-]/g, "_")
  const deadWriter = () => `${host}-${spawnSync(process.execPath, ["-e", "0"]).pid}-0123abcd`
  /** A lake with blocks' c.parquet committed, and a.parquet retired by a compaction whose manifest write happened. */
  const lakeWith = async (root: string, retired: Array<string> = []) => {
    await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/c.parquet")]))
      })
    )
    const m = onDisk(root, "blocks")
    writeFileSync(
      join(root, "blocks", "_manifest.json"),
      JSON.stringify({
        ...m,
        retired: retired.map((path) => ({ path, retired_at: "2026-01-01T00:00:00.000Z", replaced_by: ["height_bucket=0/c.parquet"] }))
      })
    )
  }
  const intent = (root: string, writer: string, paths: Array<unknown>) => {
    touch(root, join(".chain-lake", "staging", writer, "blocks", "_compaction.json"))
    writeFileSync(join(root, ".chain-lake", "staging", writer, "blocks", "_compaction.json"), JSON.stringify({ paths }))
    return join(root, ".chain-lake", "staging", writer, "blocks", "_compaction.json")
  }
  const reopen = (root: string) =>
    run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
    )

  it("a dead writer's swap before its manifest write: the unlisted files it put in place go, listed ones and paths outside the dataset stay", async () => {
    const root = temp.make()
    await lakeWith(root)
    const writer = deadWriter()
    intent(root, writer, ["height_bucket=0/ab.parquet", 5, "height_bucket=0/c.parquet", "../outside.parquet"])
    touch(root, "blocks/height_bucket=0/ab.parquet")
    touch(root, "outside.parquet")
    await reopen(root)
    expect(filesUnder(join(root, "blocks")).sort()).toEqual(["_manifest.json", "height_bucket=0/c.parquet"])
    expect(existsSync(join(root, "outside.parquet"))).toBe(true)
    expect(existsSync(join(root, ".chain-lake", "staging", writer))).toBe(false)
  })

  it("another host's intent is left alone for an hour (its swap may be running), and undone after", async () => {
    const root = temp.make()
    await lakeWith(root)
    const other = "another-host-4242-0123abcd"
    const intentPath = intent(root, other, ["height_bucket=0/ab.parquet"])
    touch(root, "blocks/height_bucket=0/ab.parquet")
    await reopen(root)
    expect(existsSync(join(root, "blocks", "height_bucket=0", "ab.parquet"))).toBe(true)
    expect(existsSync(intentPath)).toBe(true)
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000)
    utimesSync(intentPath, twoHoursAgo, twoHoursAgo)
    await reopen(root)
    expect(existsSync(join(root, "blocks", "height_bucket=0", "ab.parquet"))).toBe(false)
    expect(existsSync(intentPath)).toBe(false)
    // its staging folder is the other host's to clear
    expect(existsSync(join(root, ".chain-lake", "staging", other, "blocks"))).toBe(true)
  })

  it("a swap killed after its manifest write: retired files still in place are moved out (one already gone is passed over)", async () => {
    const root = temp.make()
    await lakeWith(root, ["height_bucket=0/a.parquet", "height_bucket=0/gone.parquet"])
    touch(root, "blocks/height_bucket=0/a.parquet")
    await reopen(root)
    expect(filesUnder(join(root, "blocks")).sort()).toEqual(["_manifest.json", "height_bucket=0/c.parquet"])
    expect(readFileSync(retiredPath(root, "blocks", "height_bucket=0/a.parquet"), "utf8")).toBe("x")
    expect(existsSync(retiredPath(root, "blocks", "height_bucket=0/gone.parquet"))).toBe(false)
  })

  it("temp files this tool names are cleared from the dataset folder; anything else stays", async () => {
    const root = temp.make()
    await lakeWith(root)
    for (const rel of [
      "_manifest.json.tmp",
      "height_bucket=0/x.parquet.pending",
      "height_bucket=0/y.parquet.tmp",
      "notes.txt",
      "height_bucket=0/z.tmp",
      "mine.json.tmp"
    ])
      touch(root, join("blocks", rel))
    await reopen(root)
    expect(filesUnder(join(root, "blocks")).sort()).toEqual([
      "_manifest.json",
      "height_bucket=0/c.parquet",
      "height_bucket=0/z.tmp",
      "mine.json.tmp",
      "notes.txt"
    ])
  })
})

describe("commit hooks, compaction's checks, vacuum's edges", () => {
  it("afterCommit gets what each commit added, in the manifest's form: files and range, or a snapshot's files and entry", async () => {
    const root = temp.make()
    const added: Array<{ files: Array<string>; committed: unknown; snapshots: Array<number> }> = []
    const layer = layerManifests(root, {
      afterCommit: (m) =>
        Effect.sync(
          () =>
            void added.push({
              files: m.files.map((f) => f.path),
              committed: m.committed,
              snapshots: m.snapshots.map((s) => s.snapshot_height)
            })
        )
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/a.parquet", [1, 11])]), [1, 11])
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/b.parquet")]))
        yield* c.open("holders", "snapshot", columns)
        yield* c.commitSnapshot("holders", stage(c, "holders", [file("snapshot_height=5/part-0.parquet")]), snapshot(5, ["uinit"]))
      }).pipe(Effect.provide(layer))
    )
    expect(added).toEqual([
      { files: ["height_bucket=0/a.parquet"], committed: [[1, 11]], snapshots: [] },
      { files: ["height_bucket=0/b.parquet"], committed: [], snapshots: [] },
      { files: ["snapshot_height=5/part-0.parquet"], committed: [], snapshots: [5] }
    ])
  })

  it("commitCompaction: the merged file takes the first replaced file's place among others; the old files leave the folder at once; a replaced file not listed, or a new name that is retired or on disk, commits nothing", async () => {
    const root = temp.make()
    const f = (name: string) => file(`height_bucket=0/${name}.parquet`)
    const result = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [f("x"), f("a"), f("b"), f("y")]))
        const swapped = yield* c.commitCompaction("blocks", [f("a"), f("b")], stage(c, "blocks", [f("ab")]))
        const onDiskAfterSwap = filesUnder(join(root, "blocks")).sort()
        const order = onDisk(root, "blocks").files.map((x: CommittedFile) => x.path)
        const notListed = yield* c.commitCompaction("blocks", [f("nope")], stage(c, "blocks", [f("n2")]))
        const retiredName = yield* c.commitCompaction("blocks", [f("x")], stage(c, "blocks", [f("a")]))
        touch(root, "blocks/height_bucket=0/users.parquet")
        const onDiskName = yield* c.commitCompaction("blocks", [f("x")], stage(c, "blocks", [f("users")]))
        return { swapped, onDiskAfterSwap, order, notListed, retiredName, onDiskName }
      })
    )
    expect(result.swapped).toEqual({ committed: true })
    expect(result.order).toEqual(["height_bucket=0/x.parquet", "height_bucket=0/ab.parquet", "height_bucket=0/y.parquet"])
    // at once, not at the next open or vacuum; the swap's intent is gone too
    expect(result.onDiskAfterSwap).toEqual([
      "_manifest.json",
      "height_bucket=0/ab.parquet",
      "height_bucket=0/x.parquet",
      "height_bucket=0/y.parquet"
    ])
    expect(existsSync(join(root, ".chain-lake", "retired", "blocks", "height_bucket=0", "a.parquet.retired"))).toBe(true)
    expect(result.notListed).toEqual({ committed: false, ranges: [], reason: "another writer replaced height_bucket=0/nope.parquet first" })
    expect(result.retiredName).toEqual({ committed: false, ranges: [], reason: "height_bucket=0/a.parquet is in use" })
    expect(result.onDiskName).toEqual({ committed: false, ranges: [], reason: "height_bucket=0/users.parquet is in use" })
    expect(readFileSync(join(root, "blocks", "height_bucket=0", "users.parquet"), "utf8")).toBe("x")
  })

  it("vacuum: nothing for a dataset never opened; only the retired files past their grace; pruneSnapshots keeps exactly `keep`", async () => {
    const root = temp.make()
    const result = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        const never = yield* c.vacuum("blocks", 0)
        yield* c.open("blocks", "height", columns)
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/c.parquet")]))
        const m = onDisk(root, "blocks")
        const retiredAt = (path: string, at: string) => ({ path, retired_at: at, replaced_by: ["height_bucket=0/c.parquet"] })
        writeFileSync(
          join(root, "blocks", "_manifest.json"),
          JSON.stringify({
            ...m,
            retired: [
              retiredAt("height_bucket=0/old.parquet", "2020-01-01T00:00:00.000Z"),
              retiredAt("height_bucket=0/new.parquet", new Date().toISOString())
            ]
          })
        )
        for (const name of ["old", "new"])
          touch(root, join(".chain-lake", "retired", "blocks", "height_bucket=0", `${name}.parquet.retired`))
        const deleted = yield* c.vacuum("blocks", 3_600_000)
        yield* c.open("holders", "snapshot", columns)
        for (const h of [5, 6])
          yield* c.commitSnapshot("holders", stage(c, "holders", [file(`snapshot_height=${h}/part-0.parquet`)]), snapshot(h, ["uinit"]))
        const prunedAtKeep = yield* c.pruneSnapshots("holders", 2)
        return { never, deleted, retired: onDisk(root, "blocks").retired.map((r: { path: string }) => r.path), prunedAtKeep }
      })
    )
    expect(result.never).toEqual([])
    expect(result.deleted).toEqual(["height_bucket=0/old.parquet"])
    expect(result.retired).toEqual(["height_bucket=0/new.parquet"])
    expect(existsSync(join(root, ".chain-lake", "retired", "blocks", "height_bucket=0", "old.parquet.retired"))).toBe(false)
    expect(existsSync(join(root, ".chain-lake", "retired", "blocks", "height_bucket=0", "new.parquet.retired"))).toBe(true)
    expect(result.prunedAtKeep).toEqual([])
  })

  it("withCommittedFiles without a fetcher reads every listed file, fails naming those not in place (never fewer rows); no call at all when nothing is committed; a damaged manifest is said; the writer's staging folder goes with it", async () => {
    const root = temp.make()
    let calls = 0
    let staging = ""
    const result = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        staging = join(root, ".chain-lake", "staging", c.writer)
        yield* c.open("blocks", "height", columns)
        const nothing = yield* c.withCommittedFiles("blocks", (paths) => Effect.sync(() => (calls++, [...paths])))
        yield* c.commitFiles("blocks", stage(c, "blocks", [file("a.parquet"), file("b.parquet")]))
        const all = yield* c.withCommittedFiles("blocks", (paths) => Effect.sync(() => (calls++, paths.map((p) => p.slice(root.length)))))
        rmSync(join(root, "blocks", "b.parquet"))
        const short = yield* Effect.flip(c.withCommittedFiles("blocks", (paths) => Effect.sync(() => (calls++, [...paths]))))
        expect(existsSync(staging)).toBe(true)
        return { nothing, all, short: short.message }
      })
    )
    expect(result).toEqual({
      nothing: [],
      all: [join("/blocks", "a.parquet"), join("/blocks", "b.parquet")],
      short:
        "blocks: 1 of the 2 files its _manifest.json lists is missing and no export staged it: the lake lost committed files; restore them from a copy, or export into a new --out"
    })
    expect(calls).toBe(1)
    expect(existsSync(staging)).toBe(false)
    writeFileSync(join(root, "blocks", "_manifest.json"), "{ not json")
    const damaged = await run(root, Effect.flip(Effect.flatMap(Manifests, (c) => c.get("blocks"))))
    expect(damaged.message).toMatch(
      new RegExp(`^cannot read the manifest of blocks: ${join(root, "blocks", "_manifest.json")} is damaged at `)
    )
  })
})

// slow (waits out a lock): last, so that a mutant an earlier test kills never waits for it
describe("a dataset's lock, waited for", () => {
  it("a dataset's lock is taken over only from a holder that is gone: a dead process of this host, an empty lock unchanged past its grace, another host's lock unchanged for a whole lease; never for its age", async () => {
    const root = temp.make()
    await run(
      root,
      Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
    )
    const lock = join(root, "blocks", "_manifest.lock")
    const host = hostname().replace(/[^0-9A-Za-z.-]/g, "_")
    const openWith = (content: string, ageMs: number) => {
      writeFileSync(lock, content)
      const at = new Date(Date.now() - ageMs)
      utimesSync(lock, at, at)
      return run(
        root,
        Effect.flatMap(Manifests, (c) => c.open("blocks", "height", columns))
      )
    }
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid
    await openWith(JSON.stringify({ host, pid: gone, writer: "w", at: "" }), 0)
    expect(existsSync(lock)).toBe(false)
    // an empty lock, however old its mtime, is waited for over its grace (2 s), by this clock
    let started = Date.now()
    await openWith("", 5_000)
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000)
    // another host's lock, back-dated an hour: its lease (here 1 s) starts when the waiter first sees it
    process.env.CHAIN_LAKE_LOCK_LEASE_MS = "1000"
    try {
      started = Date.now()
      await openWith(JSON.stringify({ host: "another-host", pid: 1, writer: "w", at: "" }), 3_600_000)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000)
      // a live holder of this host (this test's parent process), back-dated past any lease: waited for until freed
      const freedAt = Date.now() + 1_500
      setTimeout(() => rmSync(lock), 1_500)
      await openWith(JSON.stringify({ host, pid: process.ppid, writer: "w", at: "" }), 3_600_000)
      expect(Date.now()).toBeGreaterThanOrEqual(freedAt)
      expect(existsSync(lock)).toBe(false)
    } finally {
      delete process.env.CHAIN_LAKE_LOCK_LEASE_MS
    }
  })
})

describe("the engine's commit step (src/engine/commit.ts)", () => {
  it("commits without anyone watching (the samplers pass no onCommitted), and tells a watcher only of commits that went through", async () => {
    const root = temp.make()
    const heard: Array<ReadonlyArray<string>> = []
    const outcomes = await run(
      root,
      Effect.gen(function* () {
        const c = yield* Manifests
        yield* c.open("blocks", "height", columns)
        const unwatched = yield* commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/a.parquet", [0, 10])]), [0, 10])
        const watched = yield* commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/b.parquet", [10, 20])]), [10, 20], (files) =>
          heard.push(files.map((f) => f.path))
        )
        const refused = yield* commitFiles("blocks", stage(c, "blocks", [file("height_bucket=0/c.parquet", [5, 15])]), [5, 15], (files) =>
          heard.push(files.map((f) => f.path))
        )
        return [unwatched.committed, watched.committed, refused.committed]
      })
    )
    expect(outcomes).toEqual([true, true, false])
    expect(heard).toEqual([["height_bucket=0/b.parquet"]])
    expect(onDisk(root, "blocks").files.map((f: CommittedFile) => f.path)).toEqual([
      "height_bucket=0/a.parquet",
      "height_bucket=0/b.parquet"
    ])
  })
})

describe("olderColumnsNotice", () => {
  const now = [{ name: "height" }, { name: "hash" }, { name: "fee_denom" }, { name: "fee_amount" }]
  it("says which columns the files committed earlier lack, naming each", () => {
    expect(
      olderColumnsNotice("blocks", { columns: [{ name: "height" }, { name: "hash" }, { name: "fee_amount" }], files: [{}] }, now)
    ).toBe(
      "blocks: files committed earlier lack fee_denom (added by a newer chain-lake); those rows read NULL there: export into a new folder to have it everywhere"
    )
    expect(olderColumnsNotice("blocks", { columns: [{ name: "height" }, { name: "hash" }], files: [{}] }, now)).toBe(
      "blocks: files committed earlier lack fee_denom, fee_amount (added by a newer chain-lake); those rows read NULL there: export into a new folder to have them everywhere"
    )
  })
  it("says nothing when no file was committed, there is no manifest, or nothing is lacking", () => {
    expect(olderColumnsNotice("blocks", { columns: [], files: [] }, now)).toBeUndefined()
    expect(olderColumnsNotice("blocks", undefined, now)).toBeUndefined()
    expect(olderColumnsNotice("blocks", { columns: now, files: [{}] }, now)).toBeUndefined()
  })
})
