/**
 * The lake's layout (the names readers and the manifests rely on) and its small guards, on real
 * files: which paths read from data stay inside their folder,
 * how a damaged lake file is named, and the lock file (who holds it, when it is stale, and that a
 * holder never frees a lock another writer has taken over).
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Either, Schema } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { isContainedPath, listFiles, makeFolder, pathInside, sha256File } from "../../src/lake/files.js"
import {
  bucketOf,
  COMMITTED_GLOB,
  committedName,
  date,
  dateFile,
  heightBucket,
  mergedFile,
  partitionColumn,
  shardFile,
  snapshot,
  snapshotFile,
  snapshotHeightOf
} from "../../src/lake/layout.js"
import { alive, newWriterId, readLockFile, withLockFile, writerGone, writerProcess } from "../../src/lake/lock.js"
import { decodeLakeFile, LakeIdentity } from "../../src/lake/manifest.js"

const root = mkdtempSync(join(tmpdir(), "chain-lake-files-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const HOST = hostname().replace(/[^0-9A-Za-z.-]/g, "_")
const deadPid = () => spawnSync(process.execPath, ["-e", "0"]).pid!

describe("layout", () => {
  it("names files and folders as readers glob them: zero-padded ranges, a unit letter, the part; snapshot heights; UTC days", () => {
    expect(bucketOf(0, 100)).toBe(0)
    expect(bucketOf(99, 100)).toBe(0)
    expect(bucketOf(100, 100)).toBe(100)
    expect(bucketOf(10_500, 10_000)).toBe(10_000)
    expect(shardFile(10_000, "height", [10_001, 10_501], 0)).toBe("height_bucket=10000/part-h000000010001-000000010501-0.parquet")
    expect(shardFile(0, "position", [0, 1000], 3)).toBe("height_bucket=0/part-p000000000000-000000001000-3.parquet")
    expect(snapshotFile(1234, 2)).toBe("snapshot_height=1234/part-2.parquet")
    expect(snapshotHeightOf("snapshot_height=1234/part-2.parquet")).toBe(1234)
    expect(snapshotHeightOf("x/snapshot_height=1234/part-2.parquet")).toBeUndefined()
    expect(snapshotHeightOf("snapshot_height=/part-2.parquet")).toBeUndefined()
    // the UTC day, not the local one; a name keeps only letters, digits and dashes
    expect(dateFile(new Date("2026-11-23T23:59:59.999Z"), "run-1_a/b.c")).toBe("date=2026-11-23/part-run-1abc.parquet")
    expect(mergedFile("height_bucket=0", "height", [1, 301], "ab12")).toBe("height_bucket=0/part-h000000000001-000000000301-cab12.parquet")
    expect(mergedFile("height_bucket=0", "position", [0, 50], "t")).toBe("height_bucket=0/part-p000000000000-000000000050-ct.parquet")
    expect(mergedFile("snapshot_height=9", "snapshot", undefined, "t")).toBe("snapshot_height=9/part-ct.parquet")
    expect(mergedFile("date=2026-11-23", "sample", undefined, "t")).toBe("date=2026-11-23/part-ct.parquet")
    expect(mergedFile("height_bucket=0", "height", undefined, "t")).toBe("height_bucket=0/part-ct.parquet")
    expect(mergedFile("snapshot_height=9", "snapshot", [1, 2], "t")).toBe("snapshot_height=9/part-ct.parquet")
    // every committed file's name matches the glob readers read the folder by (the catalog's views)
    const glob = new RegExp(`^${COMMITTED_GLOB.replace(/\./g, "\\.").replace(/\*/g, "[^/]*")}$`)
    for (const path of [
      shardFile(0, "position", [0, 1000], 3),
      snapshotFile(1234, 2),
      dateFile(new Date(), "w"),
      mergedFile("height_bucket=0", "height", [1, 301], "ab12"),
      mergedFile("date=2026-11-23", "sample", undefined, "t")
    ])
      expect(path).toMatch(glob)
    for (const path of ["height_bucket=0/notes.parquet", "backup/part-1.parquet", "a/height_bucket=0/part-1.parquet"]) {
      expect(path).not.toMatch(glob)
      expect(committedName(path), path).toBe(false)
    }
    expect(committedName(shardFile(0, "height", [1, 2], 0))).toBe(true)
  })

  it("says which column a reader sees for each partitioning", () => {
    expect(partitionColumn(heightBucket("height"))).toEqual({ name: "height_bucket", type: "BIGINT" })
    expect(partitionColumn(snapshot())).toEqual({ name: "snapshot_height", type: "BIGINT" })
    expect(partitionColumn(date("sampled_at"))).toEqual({ name: "date", type: "DATE" })
    expect([heightBucket("h"), snapshot(), date("d")]).toEqual([
      { kind: "height_bucket", column: "h" },
      { kind: "snapshot" },
      { kind: "date", column: "d" }
    ])
  })
})

describe("paths read from data", () => {
  it("stay inside their folder: relative, forward slashes, no empty, . or .. parts, no NUL or drive letter", () => {
    for (const ok of ["a.parquet", "height_bucket=0/part-h1-2-0.parquet", "x/y/z", "a..b/c", ".hidden"]) {
      expect(isContainedPath(ok), ok).toBe(true)
      expect(pathInside(root, ok), ok).toBe(join(root, ok))
    }
    for (const bad of [
      "",
      "/etc/passwd",
      "../x",
      "a/../../x",
      "a/./b",
      "./a",
      "a//b",
      "a/",
      "a\\b",
      "..\\x",
      "C:x",
      "c:/x",
      "a\0b",
      "..",
      "."
    ]) {
      expect(isContainedPath(bad), JSON.stringify(bad)).toBe(false)
      expect(pathInside(root, bad), JSON.stringify(bad)).toBeUndefined()
    }
  })

  it("files are listed relative with forward slashes (none for a missing folder) and hashed", async () => {
    const dir = join(root, "listed")
    writeFileSync(join(root, "top.txt"), "abc")
    expect(await listFiles(dir)).toEqual([])
    const { mkdirSync } = await import("node:fs")
    mkdirSync(join(dir, "x", "y"), { recursive: true })
    writeFileSync(join(dir, "x", "y", "f.parquet"), "")
    writeFileSync(join(dir, "z"), "")
    expect((await listFiles(dir)).sort()).toEqual(["x/y/f.parquet", "z"])
    expect(await sha256File(join(root, "top.txt"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    await expect(sha256File(join(root, "missing"))).rejects.toThrow(/ENOENT/)
  })
})

describe("folders made", () => {
  it("makeFolder makes every missing folder, accepts one that exists, and names a file in the way", async () => {
    const deep = join(root, "made", "a", "b", "c")
    await makeFolder(deep)
    await makeFolder(deep)
    expect(existsSync(deep)).toBe(true)
    writeFileSync(join(root, "made", "file"), "x")
    await expect(makeFolder(join(root, "made", "file"))).rejects.toMatchObject({ code: "EEXIST" })
    await expect(makeFolder(join(root, "made", "file", "below"))).rejects.toMatchObject({ code: "ENOTDIR" })
    // two writers making the same folders at once
    await Promise.all([makeFolder(join(root, "both", "x", "y")), makeFolder(join(root, "both", "x", "y"))])
    expect(existsSync(join(root, "both", "x", "y"))).toBe(true)
  })

  it("a folder the kernel will not make though its parent exists (/proc) fails at once: Node's recursive mkdir spun there forever", async () => {
    // (Linux: procfs answers ENOENT to mkdir)
    if (!existsSync("/proc/self")) return
    const outcome = await Promise.race([
      makeFolder("/proc/chain-lake-nope/lake").then(
        () => "made",
        (e: NodeJS.ErrnoException) => e.code
      ),
      new Promise((resolve) => setTimeout(() => resolve("still spinning after 5 s"), 5000))
    ])
    expect(outcome).toBe("ENOENT")
  })
})

describe("lake files decoded", () => {
  it("say what is wrong: not JSON, or the field path and the expected type", () => {
    expect(decodeLakeFile(LakeIdentity, "{ nope")).toEqual(Either.left(expect.stringMatching(/^not JSON \(/)))
    expect(decodeLakeFile(LakeIdentity, JSON.stringify({ format_version: 1, chain_id: 7, anchors: [] }))).toEqual(
      Either.left(expect.stringMatching(/^chain_id: Expected string, actual 7/))
    )
    expect(decodeLakeFile(Schema.Number, JSON.stringify("x"))).toEqual(Either.left(expect.stringMatching(/^\(top\): Expected number/)))
    expect(decodeLakeFile(LakeIdentity, JSON.stringify({ format_version: 1, chain_id: "c", anchors: [{ height: 1, hash: "h" }] }))).toEqual(
      Either.right({ format_version: 1, chain_id: "c", anchors: [{ height: 1, hash: "h" }] })
    )
  })
})

describe("lock files", () => {
  it("writer ids name their host and pid; a writer is gone only when it is this host's and its process ended", () => {
    const id = newWriterId()
    expect(writerProcess(id)).toEqual({ host: HOST, pid: process.pid })
    expect(writerProcess("no-pid-here")).toBeUndefined()
    expect(writerProcess(`x${id}x`)).toBeUndefined()
    expect(writerGone(id)).toBe(false) // this process
    expect(writerGone(`${HOST}-${deadPid()}-0123abcd`)).toBe(true)
    expect(writerGone(`${HOST}-${process.ppid}-0123abcd`)).toBe(false) // alive
    expect(writerGone(`another-host-${deadPid()}-0123abcd`)).toBe(false) // cannot tell: kept
    expect(writerGone("garbage")).toBe(false)
  })

  it("is held while the work runs and freed after; a holder never frees a lock that another writer took over", async () => {
    const lock = join(root, "a.lock")
    const seen = await Effect.runPromise(
      withLockFile(
        lock,
        "w1",
        Effect.sync(() => JSON.parse(readFileSync(lock, "utf8")))
      )
    )
    expect(seen).toMatchObject({ host: HOST, pid: process.pid, writer: "w1" })
    expect(existsSync(lock)).toBe(false)
    // w1 holds it; meanwhile its lock is taken over (as stale) by another writer: w1 leaves it be
    await Effect.runPromise(
      withLockFile(
        lock,
        "w1",
        Effect.sync(() => writeFileSync(lock, JSON.stringify({ host: HOST, pid: process.pid, writer: "w2", at: "" })))
      )
    )
    expect(JSON.parse(readFileSync(lock, "utf8")).writer).toBe("w2")
    rmSync(lock)
    // a failure of the work still frees it
    const failed = await Effect.runPromise(Effect.either(withLockFile(lock, "w1", Effect.fail("boom"))))
    expect(failed).toEqual(Either.left("boom"))
    expect(existsSync(lock)).toBe(false)
  })

  it("reads a lock file's holder and age; none when there is no file, no holder when it is not a JSON object", async () => {
    const lock = join(root, "read.lock")
    expect(await readLockFile(lock)).toBeUndefined()
    writeFileSync(lock, JSON.stringify({ host: "h", pid: 1, writer: "w", at: "" }))
    const tenSecondsAgo = new Date(Date.now() - 10_000)
    utimesSync(lock, tenSecondsAgo, tenSecondsAgo)
    const found = await readLockFile(lock)
    expect(found?.json).toEqual({ host: "h", pid: 1, writer: "w", at: "" })
    expect(found!.ageMs).toBeGreaterThanOrEqual(10_000)
    expect(found!.ageMs).toBeLessThan(60_000)
    for (const text of ["", "{ half", "null", "5", '"text"']) {
      writeFileSync(lock, text)
      expect(await readLockFile(lock), JSON.stringify(text)).toEqual({ ageMs: expect.any(Number) })
    }
    rmSync(lock)
  })

  it("a lock removed or emptied by someone else while held is left as it is when released", async () => {
    const lock = join(root, "gone.lock")
    expect(
      await Effect.runPromise(
        withLockFile(
          lock,
          "w1",
          Effect.sync(() => rmSync(lock))
        )
      )
    ).toBeUndefined()
    expect(existsSync(lock)).toBe(false)
    await Effect.runPromise(
      withLockFile(
        lock,
        "w1",
        Effect.sync(() => writeFileSync(lock, ""))
      )
    )
    expect(readFileSync(lock, "utf8")).toBe("")
    rmSync(lock)
  })

  it("a process is alive while it runs, under another user too", () => {
    expect(alive(process.pid)).toBe(true)
    expect(alive(1)).toBe(true) // init: EPERM for a user, 0 for root
    expect(alive(deadPid())).toBe(false)
  })

  it("a damaged lock past its grace is taken over; a lock in a folder that does not exist is a LockError naming it", async () => {
    const lock = join(root, "b.lock")
    writeFileSync(lock, "{ half")
    const old = new Date(Date.now() - 5_000)
    const { utimesSync } = await import("node:fs")
    utimesSync(lock, old, old)
    expect(await Effect.runPromise(withLockFile(lock, "w1", Effect.succeed("ran")))).toBe("ran")
    // a lock naming a pid of this host that is gone
    writeFileSync(lock, JSON.stringify({ host: HOST, pid: deadPid(), writer: "w0", at: "" }))
    expect(await Effect.runPromise(withLockFile(lock, "w1", Effect.succeed("ran")))).toBe("ran")
    const nowhere = join(root, "missing-folder", "c.lock")
    const err = await Effect.runPromise(Effect.either(withLockFile(nowhere, "w1", Effect.void)))
    expect(Either.isLeft(err) && err.left).toMatchObject({
      _tag: "LockError",
      message: expect.stringMatching(new RegExp(`^cannot take the lock ${nowhere.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: ENOENT`))
    })
  })
})

// slow (waits out a lock): last, so that a mutant an earlier test kills never waits for it
describe("lock files, waited for", () => {
  it("a live holder is waited for, then the wait fails naming it; the lock stays its holder's", async () => {
    const lock = join(root, "held.lock")
    const held = async (content: string, ageMs = 0) => {
      writeFileSync(lock, content)
      const at = new Date(Date.now() - ageMs)
      utimesSync(lock, at, at)
      const started = Date.now()
      const r = await Effect.runPromise(Effect.either(withLockFile(lock, "w1", Effect.succeed("ran"), 150)))
      const waited = Date.now() - started
      // a lock it waited for is left as it was; one it took over is freed after the work
      if (Either.isLeft(r)) expect(readFileSync(lock, "utf8"), content).toBe(content)
      else expect(existsSync(lock), content).toBe(false)
      rmSync(lock, { force: true })
      return { message: Either.isLeft(r) ? r.left.message : "took it", waited }
    }
    const byWhom = (pid: number, host: string, at: string) =>
      `${lock} has been held by pid ${pid} on ${host} (since ${at}) for over 0.15 s; if no chain-lake is writing this folder, delete that file and run again`
    const unknown = `${lock} has been held by an unknown writer for over 0.15 s; if no chain-lake is writing this folder, delete that file and run again`
    // a live process of this host (the test runner's parent), another writer of this very process,
    // a process of another host (whose pid means nothing here), all under a minute old
    const live = await held(JSON.stringify({ host: HOST, pid: process.ppid, writer: "w0", at: "T0" }), 30_000)
    expect(live.message).toBe(byWhom(process.ppid, HOST, "T0"))
    expect(live.waited).toBeGreaterThanOrEqual(150)
    expect((await held(JSON.stringify({ host: HOST, pid: process.pid, writer: "w0", at: "T1" }))).message).toBe(
      byWhom(process.pid, HOST, "T1")
    )
    expect((await held(JSON.stringify({ host: "another-host", pid: deadPid(), writer: "w0", at: "T2" }))).message).toMatch(
      /^.* by pid \d+ on another-host \(since T2\)/
    )
    // an empty lock within its grace (its holder is writing it), or one that names no holder
    expect((await held("")).message).toBe(unknown)
    for (const partial of [
      { host: HOST, pid: process.ppid },
      { host: HOST, pid: String(process.ppid), writer: "w0" },
      { host: 7, pid: process.ppid, writer: "w0" },
      { pid: process.ppid, writer: "w0" }
    ])
      expect((await held(JSON.stringify(partial))).message, JSON.stringify(partial)).toBe(unknown)
    // age is no proof a holder is gone: a live holder's lock back-dated past the lease is waited
    // for, and so is a back-dated one naming no holder (its grace is counted by the waiter's clock)
    expect((await held(JSON.stringify({ host: HOST, pid: process.ppid, writer: "w0", at: "T3" }), 61_000)).message).toBe(
      byWhom(process.ppid, HOST, "T3")
    )
    expect((await held(JSON.stringify({ host: "another-host", pid: 1, writer: "w0", at: "T4" }), 3_600_000)).message).toBe(
      byWhom(1, "another-host", "T4")
    )
    expect((await held(JSON.stringify({ host: HOST, pid: process.ppid }), 3_000)).message).toBe(unknown)
  })
})
