/**
 * What readers (query, report, the catalog, verify, publish) may read of a dataset: the files its
 * manifest lists, all of them in place, or a one-line problem. Readers never skip a listed file
 * that is missing: that answered with fewer rows and exit 0.
 *
 * A listed file can be missing for three reasons, told apart here:
 * - a commit was cut short: a writer lists its files in the manifest, then renames them into place
 *   from `OUT/.chain-lake/staging/<writer>/<dataset>/<path>.pending`; killed in between, the files
 *   wait there until the next export (Manifests `open`) finishes the renames. A writer that is
 *   alive and mid-commit finishes within milliseconds: readers wait for it a little;
 * - a compaction swapped files while the reader looked: the manifest changed, so it is read again
 *   (a compaction renames its new files in before it lists them, and moves the old ones out only
 *   after, so a manifest read after the swap lists files that are all in place);
 * - the lake lost a committed file (deleted, or a copy made without it): nothing finishes that.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { retiredColumnsProblem } from "./columns.js"
import { holdsParquet, sha256File } from "./files.js"
import { datasetPath, identityPath, manifestPath, STAGING, stagedPath, stagingFolder } from "./layout.js"
import { writerGone } from "./lock.js"
import { decodeLakeFile, LakeIdentity, Manifest, MANIFEST_FILE } from "./manifest.js"

/** How long a reader waits for a live writer to move the files it listed into place. */
const LIVE_COMMIT_WAIT_MS = 2_000
/** How often a reader reads a manifest again while a compaction keeps changing it. */
const MANIFEST_READS = 10

/** The files a dataset's manifest lists (relative to its folder) and the manifest's text, or a problem with the manifest itself. */
type ReadManifest =
  | { readonly text: string; readonly manifest: Manifest; readonly paths: ReadonlyArray<string> }
  | { readonly problem: string }
  | undefined

const readManifest = (dataDir: string, dataset: string): ReadManifest => {
  const path = manifestPath(dataDir, dataset)
  let text: string
  try {
    text = readFileSync(path, "utf8")
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      return { problem: `cannot read ${dataset}/${MANIFEST_FILE}: ${(e as Error).message}` }
    return holdsParquet(datasetPath(dataDir, dataset))
      ? {
          problem: `${dataset} holds Parquet files but no ${MANIFEST_FILE}, which says which of them are data: restore it, or export ${dataset} again into a new folder`
        }
      : undefined
  }
  const manifest = decodeLakeFile(Manifest, text)
  // (the manifest's schema refuses a path outside the dataset's folder: such a manifest is damaged)
  if (Either.isLeft(manifest))
    return {
      problem: `${dataset}/${MANIFEST_FILE} is damaged (${manifest.left}): restore it, or export ${dataset} again into a new folder`
    }
  return { text, manifest: manifest.right, paths: manifest.right.files.map((f) => f.path) }
}

/** What finishes a rollback of the lake at `dataDir` to `height` that is under way or was cut short. */
export const toFinishRollback = (dataDir: string, height: number) =>
  `run chain-lake rollback --data ${dataDir} --to-height ${height} (or the export) again to finish it`

/** The rollback under way in the lake at `dataDir`, or cut short (`_lake.json`'s `rollback`), if any. */
export const rollbackUnderWay = (dataDir: string) => {
  let text: string
  try {
    text = readFileSync(identityPath(dataDir), "utf8")
  } catch {
    return undefined
  }
  const identity = decodeLakeFile(LakeIdentity, text)
  return Either.isRight(identity) ? identity.right.rollback : undefined
}

/**
 * A rollback under way, or cut short, that is cutting `dataset` (`_lake.json`'s `rollback`): some
 * of the lake's datasets may be cut and others not yet, so the dataset is not read until it is done.
 */
const rollingBack = (dataDir: string, dataset: string): string | undefined => {
  const rollback = rollbackUnderWay(dataDir)
  return rollback?.datasets.includes(dataset)
    ? `${dataset}: a rollback of this lake to height ${rollback.to_height} is under way or was cut short: ${toFinishRollback(dataDir, rollback.to_height)}`
    : undefined
}

/**
 * Where `dataset`'s folder, or a partition folder of its committed `paths`, is a link (to
 * another disk, say), what is said: readers are confined to the lake's real folder (DuckDB's
 * sandbox refused the files, "cannot be read"), and a compaction or a rollback through it deleted
 * and wrote files outside the lake. One rule for every command: a lake's folders are its own.
 */
export const linkedFolderProblem = (dataDir: string, dataset: string, paths: ReadonlyArray<string>): string | undefined => {
  const folders = [dataset, ...new Set(paths.map((p) => `${dataset}/${p.split("/")[0]}`))]
  for (const folder of folders) {
    const at = join(dataDir, folder)
    let target: string | undefined
    try {
      target = lstatSync(at).isSymbolicLink() ? readlinkSync(at) : undefined
    } catch {
      // not there: a missing file is judged as such
    }
    if (target !== undefined)
      return `${folder} is a link to ${target}: a lake's folders are its own, never links (one is neither read nor written: files behind it, outside the lake, would be replaced or deleted); move the folder back into the lake`
  }
  return undefined
}

/** The writers whose staging folder holds `path` of `dataset`, waiting to be moved into place. */
export const stagedBy = (dataDir: string, dataset: string, path: string): Array<string> => {
  const staging = join(dataDir, STAGING)
  let writers: Array<string>
  try {
    writers = readdirSync(staging)
  } catch {
    return []
  }
  return writers.filter((w) => existsSync(stagedPath(stagingFolder(dataDir, w), dataset, path)))
}

const files = (n: number) => (n === 1 ? "file" : "files")

/** The line a reader fails with when `missing` of the `listed` files of `dataset` are not in place. */
export const missingFilesProblem = (dataset: string, missing: number, listed: number, staged: boolean): string =>
  staged
    ? `${dataset}: ${missing} of the ${listed} ${files(listed)} its ${MANIFEST_FILE} lists ${missing === 1 ? "is" : "are"} not in place (an export was stopped between writing the manifest and moving its files in): run the export again to finish that commit`
    : `${dataset}: ${missing} of the ${listed} ${files(listed)} its ${MANIFEST_FILE} lists ${missing === 1 ? "is" : "are"} missing and no export staged ${missing === 1 ? "it" : "them"}: the lake lost committed files; restore them from a copy, or export into a new --out`

export type ListedFiles =
  /** every listed file, in place (paths relative to the dataset folder), and the manifest that lists them */
  | { readonly paths: ReadonlyArray<string>; readonly manifest: Manifest }
  /** the dataset cannot be read whole; `missing`: listed files are not in place */
  | { readonly problem: string; readonly missing?: true }
  /** the lake has no such dataset */
  | undefined

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * The files of `dataset` as its manifest lists them, every one in place; otherwise the problem,
 * in one line. A manifest that changes while its files are looked at is read again; listed files
 * a live writer (this host's, or another host's) still has staged are waited for, up to 2 s.
 */
export const listedFiles = async (
  dataDir: string,
  dataset: string,
  columns?: ReadonlyArray<{ readonly name: string }>
): Promise<ListedFiles> => {
  const cut = rollingBack(dataDir, dataset)
  if (cut) return { problem: cut, missing: true }
  const started = Date.now()
  let reads = 0
  for (;;) {
    const read = readManifest(dataDir, dataset)
    if (read === undefined || "problem" in read) return read
    const retired = columns && read.paths.length > 0 ? retiredColumnsProblem(dataset, read.manifest.columns, columns) : undefined
    if (retired) return { problem: retired }
    const linked = linkedFolderProblem(dataDir, dataset, read.paths)
    if (linked) return { problem: linked }
    const missing = read.paths.filter((p) => !existsSync(datasetPath(dataDir, dataset, p)))
    if (missing.length === 0) return { paths: read.paths, manifest: read.manifest }
    const again = readManifest(dataDir, dataset)
    // the manifest changed meanwhile (a compaction's swap, another commit): judge the new one
    if (again === undefined || "problem" in again || again.text !== read.text) {
      if (++reads < MANIFEST_READS) continue
      return again === undefined || "problem" in again
        ? again
        : { problem: `${dataset}/${MANIFEST_FILE} kept changing while it was read (${MANIFEST_READS} times): try again`, missing: true }
    }
    const staged = missing.map((p) => stagedBy(dataDir, dataset, p))
    const live = staged.some((ws) => ws.some((w) => !writerGone(w)))
    if (live && Date.now() - started < LIVE_COMMIT_WAIT_MS) {
      await sleep(50)
      continue
    }
    return {
      problem: missingFilesProblem(
        dataset,
        missing.length,
        read.paths.length,
        staged.every((ws) => ws.length > 0)
      ),
      missing: true
    }
  }
}

/** Of what listedFiles found, the datasets whose listed files are not all in place, in one line (undefined when none). */
export const notInPlace = (found: ReadonlyArray<ListedFiles>): string | undefined => {
  const problems = found.flatMap((l) => (l !== undefined && "missing" in l ? [l.problem] : []))
  return problems.length > 0 ? problems.join("; ") : undefined
}

/** Every dataset of `names` whose listed files are not all in place, in one line (undefined when none). */
export const unfinishedCommits = async (dataDir: string, names: ReadonlyArray<string>): Promise<string | undefined> => {
  const found: Array<ListedFiles> = []
  for (const name of names) found.push(await listedFiles(dataDir, name))
  return notInPlace(found)
}

/** The most bytes a reader hashes to find which file a failed read met damaged (`chain-lake verify` hashes every one). */
const DAMAGE_SEARCH_BYTES = 2 * 1024 ** 3

/**
 * The first committed file of `datasets`, as `dataset/path`, whose bytes are not those its commit
 * recorded: its size first (every file's, cheap), then its sha256, hashing at most
 * DAMAGE_SEARCH_BYTES (a file past what is left is passed over); undefined when none is found.
 * A missing file is not this: listedFiles says so.
 */
export const changedFile = async (dataDir: string, datasets: ReadonlyArray<string>): Promise<string | undefined> => {
  const committed = datasets.flatMap((dataset) => {
    const read = readManifest(dataDir, dataset)
    return read === undefined || "problem" in read ? [] : read.manifest.files.map((f) => ({ dataset, f }))
  })
  const sizeOf = (path: string) => {
    try {
      return statSync(path).size
    } catch {
      return -1
    }
  }
  const present = committed
    .map((c) => {
      const at = datasetPath(dataDir, c.dataset, c.f.path)
      return { ...c, at, size: sizeOf(at) }
    })
    .filter((c) => c.size >= 0)
  const resized = present.find((c) => c.size !== c.f.bytes)
  if (resized) return `${resized.dataset}/${resized.f.path}`
  let budget = DAMAGE_SEARCH_BYTES
  for (const c of present) {
    if (c.f.bytes > budget) continue
    budget -= c.f.bytes
    if ((await sha256File(c.at).catch(() => c.f.sha256)) !== c.f.sha256) return `${c.dataset}/${c.f.path}`
  }
  return undefined
}
