/**
 * Where `query` writes an answer as its rows come: stdout, or --output FILE through a file beside
 * it that takes its name once the answer is whole, so that a query that fails halfway leaves no
 * file that reads as whole (one that is not a plain file, a FIFO or /dev/stdout, is written in
 * place). Each write waits until the reader has taken what came before (a slow reader slows the
 * query, never fills the memory). Text to a file is redacted as stdout's is (output.ts).
 */
import { createWriteStream, statSync } from "node:fs"
import { rename, rm } from "node:fs/promises"
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

/** Writes to `stream`, waiting for it to drain when its buffer is full; fails with what failed it. */
const writer = (stream: NodeJS.WritableStream, gone: (e: NodeJS.ErrnoException) => boolean) => {
  let failed: Error | undefined
  stream.on("error", (e: NodeJS.ErrnoException) => {
    failed = e
  })
  return (text: string) =>
    new Promise<void>((resolve, reject) => {
      if (failed) return gone(failed) ? resolve() : reject(failed)
      if (text === "" || stream.write(text)) return resolve()
      const settle = () => {
        stream.off("drain", settle)
        stream.off("error", settle)
        if (failed && !gone(failed)) reject(failed)
        else resolve()
      }
      stream.on("drain", settle)
      stream.on("error", settle)
    })
}

const stdoutSink = (): AnswerSink => {
  let readerGone = false
  const write = writer(process.stdout, (e) => (readerGone = e.code === "EPIPE"))
  return { write, readerGone: () => readerGone, done: Effect.void, abandon: Effect.void }
}

/** Whether `path` is there and not a plain file (a FIFO, a device): written in place. */
const special = (path: string) => {
  try {
    return !statSync(path).isFile()
  } catch {
    return false
  }
}

const fileSink = (output: string): AnswerSink => {
  const inPlace = special(output)
  const path = inPlace ? output : join(dirname(output), `.${basename(output)}.${process.pid}.part`)
  const stream = createWriteStream(path)
  // (the file beside it is no name the user gave)
  const cannot = (e: unknown) =>
    new UserError({ message: `cannot write --output ${output}: ${(e as Error).message.replaceAll(path, output)}` })
  const raw = writer(stream, () => false)
  const closed = () => new Promise<void>((resolve, reject) => stream.end((e?: Error | null) => (e ? reject(e) : resolve())))
  return {
    write: (text) => raw(redact(text)).catch((e: Error) => Promise.reject(new Error(cannot(e).message))),
    readerGone: () => false,
    done: Effect.tryPromise({
      try: async () => {
        await closed()
        if (!inPlace) await rename(path, output)
      },
      catch: cannot
    }),
    abandon: Effect.promise(async () => {
      stream.destroy()
      if (!inPlace) await rm(path, { force: true })
    })
  }
}

/** The sink of an answer: --output FILE, or stdout. */
export const answerSink = (output: string | undefined): AnswerSink => (output === undefined ? stdoutSink() : fileSink(output))
