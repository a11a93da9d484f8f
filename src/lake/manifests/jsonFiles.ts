/**
 * The lake's JSON files (a dataset's manifest, the lake's identity): read decoded with their
 * schema, written whole or not at all.
 *
 * A manifest is read from disk at every commit, since another writer may have changed it. A file
 * that is still the one this writer last read or wrote (every write renames a new file into place,
 * so the same inode, size and mtime) is not parsed and decoded again: commits stay cheap as a
 * manifest grows to thousands of files.
 */
import { readFile, rename, stat, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { Effect, Either, type Schema } from "effect"
import { makeFolder } from "../files.js"
import { decodeLakeFile } from "../manifest.js"
import { fail } from "./errors.js"

/** The lake files a writer last read or wrote, by path: the file's stamp then, and its decoded value. */
export type KnownFiles = Map<string, { readonly stamp: string; readonly value: unknown }>

/** What tells one version of a file from another: its inode, size and mtime. */
export const stampOf = (info: { ino: number; size: number; mtimeMs: number }) => `${info.ino}:${info.size}:${info.mtimeMs}`

/** A lake file that is not what its schema says (the issue names the field). */
export class Damaged extends Error {
  constructor(readonly issue: string) {
    super(issue)
  }
}

/** Writes one of the lake's files whole or not at all: to `tmp` (a name no other writer uses at once), then renamed over `path`. */
export const writeJson = (path: string, tmp: string, value: unknown) =>
  Effect.tryPromise({
    try: async () => {
      await makeFolder(dirname(path))
      await writeFile(tmp, JSON.stringify(value, null, 1))
      await rename(tmp, path)
    },
    catch: fail
  })

/** Notes that `path` now holds `value` (called once a commit is complete: nothing may widen the gap between manifest and renames). */
export const remember = (known: KnownFiles, path: string, value: unknown) =>
  // Stryker disable next-line ObjectLiteral: the cache: a miss reads the file again (a cost, not a result)
  Effect.tryPromise({ try: async () => void known.set(path, { stamp: stampOf(await stat(path)), value }), catch: fail })

/** One of the lake's files, decoded with `schema`, with its stamp as read; undefined when there is none; a Damaged error naming what is wrong. */
export const readJsonAt = async <A, I>(
  known: KnownFiles,
  path: string,
  schema: Schema.Schema<A, I>
): Promise<{ readonly value: A; readonly stamp: string } | undefined> => {
  // Stryker disable next-line BlockStatement: only ENOENT is provoked by tests (root reads everything)
  const info = await stat(path).catch((e: NodeJS.ErrnoException) => {
    // Stryker disable next-line ConditionalExpression: as above
    if (e.code === "ENOENT") return undefined
    throw e
  })
  if (!info) return undefined
  const stamp = stampOf(info)
  const cached = known.get(path)
  // Stryker disable next-line ConditionalExpression: the cache: a miss reads the file again
  if (cached?.stamp === stamp) return { value: cached.value as A, stamp }
  // read after the stat: if the file was replaced in between, the next stat differs and reads again
  // Stryker disable next-line StringLiteral: read without an encoding, the bytes parse as the same JSON
  const decoded = decodeLakeFile(schema, await readFile(path, "utf8"))
  if (Either.isLeft(decoded)) throw new Damaged(decoded.left)
  // Stryker disable next-line ObjectLiteral: the cache, as above
  known.set(path, { stamp, value: decoded.right })
  return { value: decoded.right, stamp }
}

/** As readJsonAt, without the stamp. */
export const readJson = async <A, I>(known: KnownFiles, path: string, schema: Schema.Schema<A, I>): Promise<A | undefined> =>
  (await readJsonAt(known, path, schema))?.value
