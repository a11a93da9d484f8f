/**
 * Where `query` writes an answer as its rows come: stdout, or --output FILE through a file beside
 * it that takes its name once the answer is whole, so that a query that fails halfway leaves no
 * file that reads as whole (one that is not a plain file, a FIFO or /dev/stdout, is written in
 * place). Each write waits until the reader has taken what came before (a slow reader slows the
 * query, never fills the memory). Text to a file is redacted as stdout's is (output.ts).
 */
import { createWriteStream, rmSync, statSync } from "node:fs"
import { chmod, rename } from "node:fs/promises"
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
 * `output` as the user named it (for messages); `target`, the real path it lands at (links
 * walked): the file beside it is made there and renamed onto it, keeping an existing file's mode.
 */
const fileSink = (output: string, target: string): AnswerSink => {
  const mode = fileMode(target)
  const inPlace = mode === "special"
  const path = inPlace ? target : join(dirname(target), `.${basename(target)}.${process.pid}.part`)
  const stream = createWriteStream(path, typeof mode === "number" ? { mode } : {})
  const closed = new Promise<void>((resolve) => stream.once("close", () => resolve()))
  // a second Ctrl-C ends the process at once: the file beside --output goes with it
  const leftBehind = () => {
    if (!inPlace) rmSync(path, { force: true })
  }
  process.once("exit", leftBehind)
  // (the file beside it is no name the user gave)
  const cannot = (e: unknown) =>
    new UserError({
      message: `cannot write --output ${output}: ${(e as Error).message.replaceAll(path, output).replaceAll(target, output)}`
    })
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
        if (typeof mode === "number") await chmod(path, mode)
        if (!inPlace) await rename(path, target)
        process.off("exit", leftBehind)
      },
      catch: cannot
    }),
    abandon: Effect.promise(async () => {
      stream.destroy()
      await closed
      leftBehind()
      process.off("exit", leftBehind)
    })
  }
}

/** The sink of an answer: --output (as named, and where it lands), or stdout. */
export const answerSink = (output: { readonly named: string; readonly at: string } | undefined): AnswerSink =>
  output === undefined ? stdoutSink() : fileSink(output.named, output.at)
