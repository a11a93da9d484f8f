/**
 * The lake's small guards, on real files: which paths read from data stay inside their folder,
 * how a damaged lake file is named, and the lock file (who holds it, when it is stale, and that a
 * holder never frees a lock another writer has taken over).
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Either, Schema } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { isContainedPath, listFiles, pathInside, sha256File } from "../src/lake/files.js"
import { newWriterId, withLockFile, writerGone, writerProcess } from "../src/lake/lock.js"
import { decodeLakeFile, LakeIdentity } from "../src/lake/manifest.js"

const root = mkdtempSync(join(tmpdir(), "chain-lake-files-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const HOST = hostname().replace(/[^0-9A-Za-z.-]/g, "_")
const deadPid = () => spawnSync(process.execPath, ["-e", "0"]).pid!

describe("paths read from data", () => {
  it("stay inside their folder: relative, forward slashes, no empty, . or .. parts, no NUL or drive letter", () => {
    for (const ok of ["a.parquet", "height_bucket=0/part-h1-2-0.parquet", "x/y/z", "a..b/c", ".hidden"]) {
      expect(isContainedPath(ok), ok).toBe(true)
      expect(pathInside(root, ok), ok).toBe(join(root, ok))
    }
    for (const bad of ["", "/etc/passwd", "../x", "a/../../x", "a/./b", "./a", "a//b", "a/", "a\\b", "..\\x", "C:x", "c:/x", "a\0b", "..", "."]) {
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

describe("lake files decoded", () => {
  it("say what is wrong: not JSON, or the field path and the expected type", () => {
    expect(decodeLakeFile(LakeIdentity, "{ nope")).toEqual(Either.left(expect.stringMatching(/^not JSON \(/)))
    expect(decodeLakeFile(LakeIdentity, JSON.stringify({ format_version: 1, chain_id: 7, anchors: [] }))).toEqual(Either.left(expect.stringMatching(/^chain_id: Expected string, actual 7/)))
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
    const seen = await Effect.runPromise(withLockFile(lock, "w1", Effect.sync(() => JSON.parse(readFileSync(lock, "utf8")))))
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
    expect(Either.isLeft(err) && err.left).toMatchObject({ _tag: "LockError", message: expect.stringMatching(new RegExp(`^cannot take the lock ${nowhere.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: ENOENT`)) })
  })
})
