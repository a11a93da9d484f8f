/**
 * An output folder a command is about to write, checked before anything is fetched: a file in its
 * place, or a parent that cannot be written, failed only at the first commit, with what the
 * lake's checkpoint code saw ("cannot read …/_lake.json: ENOTDIR", "ENOENT: mkdir …"), and
 * sample-routes only after it had sampled a whole round.
 */
import { mkdtempSync, rmdirSync, statSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { Effect } from "effect"
import { UserError } from "./errors.js"
import { insideLake } from "./lakeBounds.js"

/**
 * What is wrong with writing into `path` (given by `flag`), or undefined. `s3`: the flag takes an
 * s3:// URL too (checked before: `path` is none).
 */
export const outputFolderProblem = (flag: string, path: string, s3 = false): string | undefined => {
  // resolve("") is the working directory: an empty --out (an unset shell variable) wrote there
  if (path.trim() === "") return `${flag} is empty: give a folder (it is made if missing)`
  // a mistyped URL (s3:/bucket, S3://bucket) was made a folder of that name in the working directory
  if (/^[a-z][a-z0-9+.-]+:\//i.test(path))
    return `${flag} ${path} looks like a URL, not a folder: give a local folder${s3 ? " or an s3://bucket/prefix URL (lower-case s3, two slashes)" : ` (${flag} takes no URL)`}`
  // a dataset folder of another lake: its reader (and verify) would meet files no manifest of its lists
  const lake = insideLake(path)
  if (lake) return `${flag} ${path} is inside the lake at ${lake.lake} (${lake.part}), among its own files: give a folder outside them`
  const full = resolve(path)
  // the folder itself, or the nearest folder above it that exists (the rest is made)
  let existing = full
  for (;;) {
    const kind = kindOf(existing)
    if (kind === "file")
      return existing === full
        ? `${flag} ${path} is a file, not a folder: give a folder (it is made if missing)`
        : `${flag} ${path} cannot be made: ${existing} is a file`
    if (kind === "folder") break
    const parent = dirname(existing)
    if (parent === existing) break
    existing = parent
  }
  const why = unwritable(existing)
  if (why === undefined) return undefined
  return existing === full ? `${flag} ${path} ${why}: give a folder you can write` : `${flag} ${path} cannot be made: ${existing} ${why}`
}

/**
 * Why no folder can be made in the folder `existing`, or undefined: found by making one (and
 * removing it at once), since permissions alone do not tell (root may write anywhere by them,
 * yet not make a folder in /proc).
 */
const unwritable = (existing: string): string | undefined => {
  try {
    rmdirSync(mkdtempSync(join(existing, ".chain-lake-probe-")))
    return undefined
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "EROFS") return "is on a read-only file system"
    if (code === "EACCES" || code === "EPERM") return "is not writable"
    return `takes no new folder (${code ?? (e as Error).message})`
  }
}

const kindOf = (path: string): "file" | "folder" | undefined => {
  try {
    return statSync(path).isDirectory() ? "folder" : "file"
  } catch {
    return undefined
  }
}

/** Fails with a usage error (exit 2) when `path` cannot be written as an output folder. */
export const checkOutputFolder = (flag: string, path: string, s3 = false): Effect.Effect<void, UserError> =>
  Effect.suspend(() => {
    const problem = outputFolderProblem(flag, path, s3)
    return problem ? Effect.fail(new UserError({ message: problem, exitCode: 2 })) : Effect.void
  })
