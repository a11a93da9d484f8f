/** File helpers shared by the sink, the manifests and publishing. */
import { createHash } from "node:crypto"
import { createReadStream, existsSync, readdirSync, statSync } from "node:fs"
import { mkdir, readdir, stat } from "node:fs/promises"
import { dirname, isAbsolute, join, resolve, sep } from "node:path"

/** Hex sha256 of a file, streamed. */
export const sha256File = (path: string) =>
  new Promise<string>((resolve, reject) => {
    const h = createHash("sha256")
    createReadStream(path)
      .on("data", (d) => h.update(d))
      .on("end", () => resolve(h.digest("hex")))
      .on("error", reject)
  })

/**
 * `mkdir -p` that cannot spin: Node's own recursive mkdir loops forever where the kernel answers
 * ENOENT for a folder whose parent exists (`--out /proc/x` kept 2 cores busy and ignored
 * SIGTERM). Here each folder is asked for at most twice: once, and again after its parent is made.
 */
export const makeFolder = async (path: string): Promise<void> => {
  try {
    await mkdir(path)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "EEXIST") {
      if ((await stat(path)).isDirectory()) return
      throw e
    }
    const parent = dirname(path)
    if (code !== "ENOENT" || parent === path) throw e
    await makeFolder(parent)
    await mkdir(path).catch((again: NodeJS.ErrnoException) => {
      // made meanwhile by another writer
      if (again.code !== "EEXIST") throw again
    })
  }
}

/** Whether `path` exists (a file or a folder). */
export const exists = (path: string) =>
  stat(path).then(
    () => true,
    // Stryker disable next-line ArrowFunction: undefined is as false here
    () => false
  )

/** Whether `dir` holds a Parquet file, at any depth. */
export const holdsParquet = (dir: string): boolean => {
  if (!existsSync(dir)) return false
  for (const e of readdirSync(dir)) {
    const p = join(dir, e)
    if (statSync(p).isDirectory() ? holdsParquet(p) : e.endsWith(".parquet")) return true
  }
  return false
}

/** Every file below `dir`, relative, with forward slashes; a missing folder has none. */
export const listFiles = async (dir: string, prefix = ""): Promise<Array<string>> => {
  const out: Array<string> = []
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => [])
  for (const e of entries) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)))
    else out.push(rel)
  }
  return out
}

/**
 * Whether a path read from data (a manifest, a release, an API) is relative and stays below the
 * folder it is relative to: not absolute, no drive letter, no `..`, `.` or empty parts, no
 * backslashes or NUL.
 */
export const isContainedPath = (rel: string): boolean =>
  rel !== "" &&
  !rel.includes("\0") &&
  !rel.includes("\\") &&
  !isAbsolute(rel) &&
  !/^[A-Za-z]:/.test(rel) &&
  rel.split("/").every((part) => part !== "" && part !== "." && part !== "..")

/** `root/rel` for a path read from data, or undefined when it could leave `root`. */
export const pathInside = (root: string, rel: string): string | undefined => {
  if (!isContainedPath(rel)) return undefined
  const base = resolve(root)
  const full = resolve(base, rel)
  return full.startsWith(base + sep) ? full : undefined
}
