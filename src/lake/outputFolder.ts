/**
 * A folder about to be written as a lake (or another command's output), checked before anything
 * is fetched: a file in its place, or a parent that cannot be written, failed only at the first
 * commit, with what the lake's checkpoint code saw ("cannot read …/_lake.json: ENOTDIR", "ENOENT:
 * mkdir …"), and sample-routes only after it had sampled a whole round.
 */
import { lstatSync, mkdtempSync, readlinkSync, rmdirSync, statSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { kindOfValue } from "../schema/decode.js"

/**
 * What is wrong with writing into `path` (named `name`: a flag, an option), or undefined. `s3`:
 * `name` takes an s3:// URL too (checked before: `path` is none). `refused`: a caller's own rule
 * of where not to write, asked before the folder is probed by making one in it. `probe: false`:
 * not probed (a read-only lake a dry run reads is fine).
 */
export const outputFolderProblem = (
  name: string,
  path: string,
  options: { readonly s3?: boolean; readonly refused?: (path: string) => string | undefined; readonly probe?: boolean } = {}
): string | undefined => {
  // (a caller in plain JavaScript)
  if (typeof path !== "string") return `${name} must be a folder's path, a string; got ${kindOfValue(path)}`
  // resolve("") is the working directory: an empty --out (an unset shell variable) wrote there
  if (path.trim() === "") return `${name} is empty: give a folder (it is made if missing)`
  // a mistyped URL (s3:/bucket, S3://bucket) was made a folder of that name in the working directory
  if (/^[a-z][a-z0-9+.-]+:\//i.test(path))
    return `${name} ${path} looks like a URL, not a folder: give a local folder${options.s3 ? " or an s3://bucket/prefix URL (lower-case s3, two slashes)" : ` (${name} takes no URL)`}`
  const refused = options.refused?.(path)
  if (refused) return refused
  const full = resolve(path)
  // the folder itself, or the nearest folder above it that exists (the rest is made)
  let existing = full
  for (;;) {
    const kind = kindOf(existing)
    if (kind === "file")
      return existing === full
        ? `${name} ${path} is a file, not a folder: give a folder (it is made if missing)`
        : `${name} ${path} cannot be made: ${existing} is a file`
    if (kind === "folder") break
    // no folder is made where a link stands (mkdir answers EEXIST), nor through one to nothing
    if (kind === "dangling link")
      return `${name} ${path} cannot be made: ${existing} is a link to ${linkTarget(existing)}, which is not there`
    const parent = dirname(existing)
    if (parent === existing) break
    existing = parent
  }
  const why = options.probe === false ? undefined : unwritable(existing)
  if (why === undefined) return undefined
  return existing === full ? `${name} ${path} ${why}: give a folder you can write` : `${name} ${path} cannot be made: ${existing} ${why}`
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

/** where the link at `path` points ("nothing" where it cannot be read: it went meanwhile) */
const linkTarget = (path: string): string => {
  try {
    return readlinkSync(path)
  } catch {
    return "nothing"
  }
}

const kindOf = (path: string): "file" | "folder" | "dangling link" | undefined => {
  try {
    return statSync(path).isDirectory() ? "folder" : "file"
  } catch {
    try {
      return lstatSync(path).isSymbolicLink() ? "dangling link" : undefined
    } catch {
      return undefined
    }
  }
}
