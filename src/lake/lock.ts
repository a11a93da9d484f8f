/**
 * A lock file shared by processes (and hosts, on a shared folder): created with O_EXCL, holding
 * who took it. Commits hold a dataset's lock for milliseconds (read the manifest, write it,
 * rename the files), so a lock is stale when its process is gone (same host), when it is older
 * than STALE_MS whoever holds it (a pid reused in a container, another host that died), or when
 * it is empty or unreadable past a short grace (a holder killed between create and write).
 */
import { randomBytes } from "node:crypto"
import { open, readFile, rm, stat } from "node:fs/promises"
import { hostname } from "node:os"
import { Data, Effect } from "effect"

export class LockError extends Data.TaggedError("LockError")<{ readonly message: string }> {}

/** A commit takes well under a second; a lock this old belongs to no running commit. */
const STALE_MS = 60_000
/** A lock file is created empty and then written: this young, empty is not stale yet. */
export const EMPTY_GRACE_MS = 2_000
/** How long to wait for a lock held by a live writer before giving up. */
const WAIT_MS = 120_000

/** This host's name as it appears in writer ids. */
const HOST = hostname().replace(/[^0-9A-Za-z.-]/g, "_")

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

/** Whether `writer` is a process of this host that no longer runs. */
export const writerGone = (writer: string) => {
  const p = writerProcess(writer)
  return p !== undefined && p.host === HOST && p.pid !== process.pid && !alive(p.pid)
}

/** A lock file's content (undefined when empty or not a JSON object) and its age; undefined when there is no lock file. */
export const readLockFile = async (path: string): Promise<{ readonly json?: Readonly<Record<string, unknown>>; readonly ageMs: number } | undefined> => {
  const info = await stat(path).catch(() => undefined)
  if (!info) return undefined
  // the file may go between stat and read (its holder released it): then it reads as empty;
  // Stryker disable next-line StringLiteral,ArrowFunction: any text that is not JSON is equivalent
  const text = await readFile(path, "utf8").catch(() => "")
  const ageMs = Date.now() - info.mtimeMs
  try {
    const json: unknown = JSON.parse(text)
    return typeof json === "object" && json !== null ? { json: json as Record<string, unknown>, ageMs } : { ageMs }
  } catch {
    return { ageMs }
  }
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

const readHolder = async (path: string): Promise<{ holder?: LockHolder; ageMs: number } | undefined> => {
  const found = await readLockFile(path)
  if (!found) return undefined
  const j = found.json
  const holder = j && typeof j.pid === "number" && typeof j.host === "string" && typeof j.writer === "string" ? (j as unknown as LockHolder) : undefined
  return { ...(holder ? { holder } : {}), ageMs: found.ageMs }
}

const isStale = (found: { holder?: LockHolder; ageMs: number }) => {
  if (found.ageMs > STALE_MS) return true
  if (!found.holder) return found.ageMs > EMPTY_GRACE_MS
  return found.holder.host === HOST && found.holder.pid !== process.pid && !alive(found.holder.pid)
}

const acquire = (path: string, writer: string, waitMs: number) =>
  Effect.tryPromise({
    try: async () => {
      const started = Date.now()
      const me: LockHolder = { host: HOST, pid: process.pid, writer, at: new Date().toISOString() }
      for (;;) {
        try {
          await createLockFile(path, JSON.stringify(me))
          return
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
        }
        const found = await readHolder(path)
        if (found && isStale(found)) {
          // force: another writer may have taken it over and freed it meanwhile (a race no test provokes)
          // Stryker disable next-line ObjectLiteral,BooleanLiteral
          await rm(path, { force: true })
          continue
        }
        if (Date.now() - started > waitMs) {
          const h = found?.holder
          throw new LockError({
            message: `${path} has been held ${h ? `by pid ${h.pid} on ${h.host} (since ${h.at})` : "by an unknown writer"} for over ${waitMs / 1000} s; if no chain-lake is writing this folder, delete that file and run again`
          })
        }
        // Stryker disable next-line ArithmeticOperator: a shorter or negative pause (1 ms) only polls more often
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20))
      }
    },
    catch: (e) => (e instanceof LockError ? e : new LockError({ message: `cannot take the lock ${path}: ${(e as Error).message}` }))
  })

/** Removes the lock only if it is still ours (a holder taken over as stale must not free the new one). */
const release = (path: string, writer: string) =>
  Effect.promise(async () => {
    const found = await readHolder(path)
    // the file was just read, so `force` only matters in a race no test provokes
    // Stryker disable next-line ObjectLiteral,BooleanLiteral
    if (found?.holder?.writer === writer && found.holder.pid === process.pid) await rm(path, { force: true })
  })

/** Runs `self` holding the lock file `path` as `writer`, waiting up to `waitMs` for a live holder. */
export const withLockFile = <A, E, R>(path: string, writer: string, self: Effect.Effect<A, E, R>, waitMs = WAIT_MS): Effect.Effect<A, E | LockError, R> =>
  Effect.acquireUseRelease(acquire(path, writer, waitMs), () => self, () => release(path, writer))
