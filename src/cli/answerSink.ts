/**
 * Where `query` writes an answer as its rows come: stdout, or --output FILE through a part file in
 * the folder the answer lands in (links walked) that takes its name once the answer is whole, so
 * that a query that fails halfway leaves no file that reads as whole (one that is not a plain file,
 * a FIFO or /dev/stdout, is written in place). Each write waits until the reader has taken what
 * came before (a slow reader slows the query, never fills the memory). Text to a file is redacted
 * as stdout's is (output.ts).
 */
import { createWriteStream, readdirSync, rmSync, statSync } from "node:fs"
import { chmod, rename } from "node:fs/promises"
import { hostname } from "node:os"
import { basename, dirname, join } from "node:path"
import { Effect } from "effect"
import { redact } from "../secrets/redact.js"
import { UserError } from "./errors.js"

export interface AnswerSink {
  /** writes `text`, resolved once more may follow; after the reader went away (`| head`), writes nothing */
  readonly write: (text: string) => Promise<void>
  /** the reader of stdout went away before the answer was whole (a pipe closed: `| head`) */
  readonly readerGone: () => boolean
  /** the answer is whole: the file takes its name */
  readonly done: Effect.Effect<void, UserError>
  /** the answer is not whole: the file beside --output is removed (one written in place is left as it is) */
  readonly abandon: Effect.Effect<void>
}

/**
 * Writes to `stream`, waiting for it to drain when its buffer is full; fails with what failed it,
 * or once the stream is closed under a waiting write (given up: abandoned, or the process ending).
 */
const writer = (stream: NodeJS.WritableStream, onError: (e: NodeJS.ErrnoException) => void, harmless: () => boolean) => {
  let failed: Error | undefined
  stream.on("error", (e: NodeJS.ErrnoException) => {
    failed = e
    onError(e)
  })
  return (text: string) =>
    new Promise<void>((resolve, reject) => {
      if (failed) return harmless() ? resolve() : reject(failed)
      if (text === "" || stream.write(text)) return resolve()
      const settle = () => {
        for (const event of ["drain", "error", "close"]) stream.off(event, settle)
        if (!failed && stream.writable) return resolve()
        if (harmless()) return resolve()
        reject(failed ?? new Error("the output was closed"))
      }
      for (const event of ["drain", "error", "close"]) stream.on(event, settle)
    })
}

const stdoutSink = (): AnswerSink => {
  let readerGone = false
  const write = writer(
    process.stdout,
    (e) => {
      readerGone = e.code === "EPIPE"
    },
    () => readerGone
  )
  return { write, readerGone: () => readerGone, done: Effect.void, abandon: Effect.void }
}

/** --output as the user named it (for messages), and the real path it lands at (links walked). */
export interface Output {
  readonly named: string
  readonly at: string
}

/** The mode of the file at `path` when it is a plain file, else undefined (then it is written in place, or made). */
const fileMode = (path: string): number | "special" | undefined => {
  try {
    const info = statSync(path)
    return info.isFile() ? info.mode & 0o7777 : "special"
  } catch {
    return undefined
  }
}

/**
 * The file an answer to `target` is written to until it is whole: beside it, named for this host
 * and process (a process of another host, or of another container, sharing the folder is never
 * judged by a PID of its own).
 */
const partFileOf = (target: string) => join(dirname(target), `.${basename(target)}.${hostname()}.${process.pid}.part`)

/** Whether the process `pid` of this host is running (one of another user's is: the kernel refuses to signal it). */
const running = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Removes the part files beside `target` of this host's queries that were killed (kill -9 runs no exit handler): their process is gone. */
const removeKilledParts = (target: string) => {
  const name = new RegExp(`^\\.${escaped(basename(target))}\\.${escaped(hostname())}\\.(\\d+)\\.part$`)
  let names: ReadonlyArray<string> = []
  try {
    names = readdirSync(dirname(target))
  } catch {
    return
  }
  for (const n of names) {
    const pid = Number(name.exec(n)?.[1] ?? Number.NaN)
    if (!Number.isSafeInteger(pid) || pid === process.pid || running(pid)) continue
    try {
      rmSync(join(dirname(target), n), { force: true })
    } catch {
      // another user's, in a sticky folder (/tmp): theirs to remove
    }
  }
}

/**
 * How an answer lands at `target`, where --output `output` lands: written to `path`, a part file
 * beside it (or `target` itself when that is no plain file: a FIFO, /dev/stdout), which takes its
 * name, keeping an existing file's mode, once the answer is whole, and is removed otherwise, a
 * second Ctrl-C's exit too. Part files that killed queries left beside it are removed first.
 * `cannot` is the line of a write that failed, naming no file but the one the user named.
 */
export const landing = ({ named: output, at: target }: Output) => {
  const mode = fileMode(target)
  const inPlace = mode === "special"
  const path = inPlace ? target : partFileOf(target)
  if (!inPlace) removeKilledParts(target)
  const remove = () => {
    if (!inPlace) rmSync(path, { force: true })
  }
  process.once("exit", remove)
  return {
    path,
    /** the mode the written file is made with: an existing file's */
    mode: typeof mode === "number" ? mode : undefined,
    land: async () => {
      if (typeof mode === "number") await chmod(path, mode)
      if (!inPlace) await rename(path, target)
      process.off("exit", remove)
    },
    abandon: () => {
      remove()
      process.off("exit", remove)
    },
    cannot: (e: { readonly message: string }) =>
      new UserError({ message: `cannot write --output ${output}: ${e.message.replaceAll(path, output).replaceAll(target, output)}` })
  }
}

const fileSink = (output: Output): AnswerSink => {
  const { path, mode, land, abandon, cannot } = landing(output)
  const stream = createWriteStream(path, mode === undefined ? {} : { mode })
  const closed = new Promise<void>((resolve) => stream.once("close", () => resolve()))
  const raw = writer(
    stream,
    () => undefined,
    () => false
  )
  return {
    write: (text) => raw(redact(text)).catch((e: Error) => Promise.reject(new Error(cannot(e).message))),
    readerGone: () => false,
    done: Effect.tryPromise({
      try: async () => {
        await new Promise<void>((resolve, reject) => stream.end((e?: Error | null) => (e ? reject(e) : resolve())))
        await land()
      },
      catch: (e) => cannot(e as Error)
    }),
    abandon: Effect.promise(async () => {
      stream.destroy()
      await closed
      abandon()
    })
  }
}

/** The sink of an answer: --output (as named, and where it lands), or stdout. */
export const answerSink = (output: Output | undefined): AnswerSink => (output === undefined ? stdoutSink() : fileSink(output))
