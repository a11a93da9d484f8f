/**
 * A lock file shared by processes (and hosts, on a shared folder): created with O_EXCL, holding
 * who took it. A lock is taken over only when its holder is provably gone, never because it is old:
 * - a holder of this host: its process no longer runs (a stopped process, SIGSTOP or a frozen
 *   container, still runs: it is waited for, and the wait ends with a message naming it);
 * - a holder of another host (whose pid means nothing here): its lease expired, measured by the
 *   waiter's own clock: the waiter saw the lock file unchanged (content and mtime) for a whole
 *   lease. A live holder renews its lease (touches the file) every quarter lease, so a holder
 *   that stopped renewing is stopped or gone; a lock file back-dated (its mtime set into the past)
 *   changed, so its lease starts again rather than being over.
 * - a lock file that names no holder (its holder was killed between create and write): unchanged
 *   for EMPTY_GRACE_MS, seen the same way.
 * A holder whose lock was taken over this way may still wake up (a resumed SIGSTOP): what it
 * writes is fenced by the caller (manifests/manifestFile.ts and manifests/locks.ts: the manifest's
 * version, checked with `holds` right before its write, and the new holder deleting the old one's
 * pending manifest write).
 */
import { randomBytes } from "node:crypto"
import { link, open, readFile, rename, rm, stat, utimes } from "node:fs/promises"
import { hostname } from "node:os"
import { Context, Data, Duration, Effect, Fiber, Option } from "effect"
import { stopSignalOf } from "../stop/StopSignal.js"

export class LockError extends Data.TaggedError("LockError")<{ readonly message: string }> {}

/**
 * A holder of another host whose lock file has not changed for this long is gone: it renews every
 * quarter of it. CHAIN_LAKE_LOCK_LEASE_MS sets it (tests, and hosts whose pauses are longer).
 */
const DEFAULT_LEASE_MS = 60_000
export const leaseMs = () => {
  const set = Number(process.env.CHAIN_LAKE_LOCK_LEASE_MS)
  return Number.isFinite(set) && set >= 100 ? set : DEFAULT_LEASE_MS
}
/** A lock file is created empty and then written: this long unchanged and empty, its holder was killed. */
export const EMPTY_GRACE_MS = 2_000
/** How long to wait for a lock held by a live writer before giving up. */
const WAIT_MS = 120_000
/**
 * How long a stopped run still waits for a live holder: long enough for another writer's ordinary
 * commit to end (milliseconds), short enough that a stop never waits on another run's work.
 */
const STOPPED_WAIT_MS = 2_000

/** How long a wait for a live holder goes unsaid: an ordinary commit of another writer holds a lock for milliseconds. */
const SAY_WAIT_AFTER_MS = 2_000

/**
 * Told once a wait for a lock held by a live writer has lasted SAY_WAIT_AFTER_MS, with a line naming
 * the holder (a frozen writer, SIGSTOP, is waited for up to the wait's end): the CLI says it on
 * stderr. Where none is provided, a wait is silent until it ends.
 */
export class LockWaits extends Context.Tag("chain-lake/LockWaits")<LockWaits, (line: string) => void>() {}

/**
 * This host's name as it appears in writer ids and locks. CHAIN_LAKE_WRITER_HOST overrides it
 * where hosts share a name but not their processes (containers given one hostname), and in tests
 * that play two hosts.
 */
const HOST = (process.env.CHAIN_LAKE_WRITER_HOST || hostname()).replace(/[^0-9A-Za-z.-]/g, "_")

export interface LockHolder {
  readonly host: string
  readonly pid: number
  readonly writer: string
  readonly at: string
}

/** Whether a process of this host is alive (EPERM: it is, under another user). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** This process's writer name: host, pid and a random part (two writers in one process differ). */
export const newWriterId = () => `${HOST}-${process.pid}-${randomBytes(4).toString("hex")}`

/** The host and pid a writer id names, to tell whether its process is gone. */
export const writerProcess = (writer: string): { readonly host: string; readonly pid: number } | undefined => {
  const m = /^(.*)-(\d+)-[0-9a-f]{8}$/.exec(writer)
  return m ? { host: m[1], pid: Number(m[2]) } : undefined
}

/** Whether `p` is another process of this host: only of those can it be told whether they run (a pid of another host tells nothing here). */
const otherProcessHere = (p: { readonly host: string; readonly pid: number }) => p.host === HOST && p.pid !== process.pid

/** Whether `p` is a process of this host that no longer runs: the rule for a writer id and a lock's holder alike. */
const processGone = (p: { readonly host: string; readonly pid: number }) => otherProcessHere(p) && !alive(p.pid)

/** The pid of `writer` where it is another process of this host that still runs. */
export const otherWriterRunning = (writer: string): number | undefined => {
  const p = writerProcess(writer)
  return p !== undefined && otherProcessHere(p) && alive(p.pid) ? p.pid : undefined
}

/** Whether `writer` is a process of this host that no longer runs. */
export const writerGone = (writer: string) => {
  const p = writerProcess(writer)
  return p !== undefined && processGone(p)
}

/** A lock file's text (empty when it went meanwhile), what it parses to and its mtime; undefined when there is no lock file. */
const readLock = async (
  path: string
): Promise<{ readonly text: string; readonly json?: unknown; readonly mtimeMs: number } | undefined> => {
  const info = await stat(path).catch(() => undefined)
  if (!info) return undefined
  // the file may go between stat and read (its holder released it): then it reads as empty;
  // Stryker disable next-line StringLiteral,ArrowFunction: any text that is not JSON is equivalent
  const text = await readFile(path, "utf8").catch(() => "")
  try {
    return { text, json: JSON.parse(text), mtimeMs: info.mtimeMs }
  } catch {
    return { text, mtimeMs: info.mtimeMs }
  }
}

/** A lock file's content (undefined when empty or not a JSON object) and its age; undefined when there is no lock file. */
export const readLockFile = async (
  path: string
): Promise<{ readonly json?: Readonly<Record<string, unknown>>; readonly ageMs: number } | undefined> => {
  const found = await readLock(path)
  if (!found) return undefined
  const ageMs = Date.now() - found.mtimeMs
  const json = found.json
  return typeof json === "object" && json !== null ? { json: json as Record<string, unknown>, ageMs } : { ageMs }
}

/**
 * Creates the lock file `path` with `content`, failing with EEXIST when it exists. Creating and
 * writing are two steps: when the write fails after the create (a full disk), the empty file just
 * made is removed, so that it holds up no other writer.
 */
export const createLockFile = async (path: string, content: string) => {
  const handle = await open(path, "wx")
  try {
    await handle.writeFile(content)
    await handle.close()
  } catch (e) {
    await handle.close().catch(() => undefined)
    await rm(path, { force: true })
    throw e
  }
}

/** A lock file's holder (when it names one) and a key that changes whenever the file does (content or mtime); undefined when there is none. */
const readHolder = async (path: string): Promise<{ holder?: LockHolder; key: string } | undefined> => {
  const found = await readLock(path)
  if (!found) return undefined
  const j = found.json as Record<string, unknown> | null | undefined
  const names = j && typeof j === "object" && typeof j.pid === "number" && typeof j.host === "string" && typeof j.writer === "string"
  return { ...(names ? { holder: j as unknown as LockHolder } : {}), key: `${found.mtimeMs}:${found.text}` }
}

/** Whether the holder is provably gone, the file having been seen unchanged for `unchangedMs` by this process's clock (see the top of this file). */
const isGone = (found: { holder?: LockHolder }, unchangedMs: number) => {
  const h = found.holder
  if (!h) return unchangedMs > EMPTY_GRACE_MS
  if (h.host === HOST) return processGone(h)
  return unchangedMs > leaseMs()
}

/**
 * Removes the lock file judged gone (`key`): renamed aside first, so that of two waiters taking it
 * over at once only one removes it; a file that is not the one judged (a live writer took the
 * lock meanwhile) is put back where it was, unless yet another lock is there already.
 */
const takeOver = async (path: string, key: string, writer: string) => {
  const aside = `${path}.${writer}.gone`
  try {
    await rename(path, aside)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return
    throw e
  }
  const moved = await readHolder(aside)
  if (moved && moved.key !== key) await link(aside, path).catch(() => undefined)
  await rm(aside, { force: true })
}

/** Who holds a lock, in a message. */
const heldBy = (h: LockHolder | undefined) => (h ? `by pid ${h.pid} on ${h.host} (since ${h.at})` : "by an unknown writer")

/*
 * The wait for a live holder gives up STOPPED_WAIT_MS after a stop was asked of the run (Ctrl-C):
 * a commit waits inside an uninterruptible step, which an interruption would leave waiting out
 * `waitMs` for another process's lock, one lock after another.
 */
const acquire = (path: string, writer: string, waitMs: number) =>
  Effect.flatMap(Effect.all([stopSignalOf, Effect.serviceOption(LockWaits)]), ([stop, waits]) =>
    Effect.tryPromise({
      try: async () => {
        const started = Date.now()
        let said = false
        const me: LockHolder = { host: HOST, pid: process.pid, writer, at: new Date().toISOString() }
        // the lock file as last seen, and since when (this clock) it has not changed
        let seen: { key: string; since: number } | undefined
        for (;;) {
          try {
            await createLockFile(path, JSON.stringify(me))
            return
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
          }
          const found = await readHolder(path)
          if (!found) continue
          if (seen?.key !== found.key) seen = { key: found.key, since: Date.now() }
          if (isGone(found, Date.now() - seen.since)) {
            await takeOver(path, found.key, writer)
            seen = undefined
            continue
          }
          const stoppedAt = stop?.askedAt()
          if (stoppedAt !== undefined && Date.now() - stoppedAt > STOPPED_WAIT_MS)
            throw new LockError({
              message: `stopped while waiting for ${path}, held ${heldBy(found.holder)}: what the run read since its last commit is not committed`
            })
          if (!said && Option.isSome(waits) && Date.now() - started > SAY_WAIT_AFTER_MS && waitMs > SAY_WAIT_AFTER_MS) {
            said = true
            waits.value(
              `waiting for ${path}, held ${heldBy(found.holder)}: another writer of this lake (a stopped one is waited for too), for up to ${waitMs / 1000} s`
            )
          }
          if (Date.now() - started > waitMs) {
            throw new LockError({
              message: `${path} has been held ${heldBy(found.holder)} for over ${waitMs / 1000} s; if no chain-lake is writing this folder, delete that file and run again`
            })
          }
          // Stryker disable next-line ArithmeticOperator: a shorter or negative pause (1 ms) only polls more often
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20))
        }
      },
      catch: (e) => (e instanceof LockError ? e : new LockError({ message: `cannot take the lock ${path}: ${(e as Error).message}` }))
    })
  )

/** Whether the lock file `path` names `writer` of this process: checked right before a write that only its holder may make. */
export const holds = async (path: string, writer: string) => {
  const found = await readHolder(path)
  return found?.holder?.writer === writer && found.holder.pid === process.pid
}

/** Removes the lock only if it is still ours (a holder taken over as gone must not free the new one). */
const release = (path: string, writer: string) =>
  Effect.promise(async () => {
    // the file was just read, so `force` only matters in a race no test provokes
    // Stryker disable next-line ObjectLiteral,BooleanLiteral
    if (await holds(path, writer)) await rm(path, { force: true })
  })

/** Renews the lease: touches the lock file if it is still ours (what a waiter of another host watches). */
const renewOnce = (path: string, writer: string) =>
  Effect.promise(async () => {
    if (await holds(path, writer)) {
      const now = new Date()
      await utimes(path, now, now).catch(() => undefined)
    }
  })

/** Runs `self` holding the lock file `path` as `writer`, waiting up to `waitMs` for a live holder, renewing its lease meanwhile. */
export const withLockFile = <A, E, R>(
  path: string,
  writer: string,
  self: Effect.Effect<A, E, R>,
  waitMs = WAIT_MS
): Effect.Effect<A, E | LockError, R> =>
  Effect.acquireUseRelease(
    acquire(path, writer, waitMs),
    () =>
      Effect.flatMap(
        // interruptible even inside an uninterruptible commit (a fork inherits that), so that it stops when the work ends
        Effect.forkDaemon(
          Effect.interruptible(Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(leaseMs() / 4)), renewOnce(path, writer))))
        ),
        (renewing) => Effect.ensuring(self, Fiber.interrupt(renewing))
      ),
    () => release(path, writer)
  )
