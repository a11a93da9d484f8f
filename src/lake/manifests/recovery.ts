/**
 * Opening a dataset (the start of a run), under its lock: its manifest is loaded (or started), what
 * writers killed mid-commit or mid-swap left is finished, and each listed file is checked to be in
 * place with the size listed. Nothing else is deleted: a dataset folder with Parquet files but no
 * manifest is refused rather than guessed at.
 */
import { readdir, readFile, rename, rm, rmdir, stat } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import type { Column } from "../columns.js"
import { exists, listFiles, makeFolder, pathInside } from "../files.js"
import { datasetPath, intentPath, STAGING, stagedPath, stagingFolder } from "../layout.js"
import { writerGone } from "../lock.js"
import { type Manifest, MANIFEST_FILE } from "../manifest.js"
import { fail, ManifestError } from "./errors.js"
import type { LakeWriter } from "./lakeWriter.js"
import { locked } from "./locks.js"
import { readAt, write } from "./manifestFile.js"
import { intentAbandoned, retire } from "./swap.js"

/** Listed files missing from their place, moved in from the staging folder of the writer killed between its manifest write and its renames. */
const finishRenames = async (lake: LakeWriter, dataset: string, m: Manifest, writers: ReadonlyArray<string>) => {
  for (const f of m.files) {
    const target = datasetPath(lake.root, dataset, f.path)
    if (lake.options.filesElsewhere || (await exists(target))) continue
    const candidates = writers.map((w) => stagedPath(stagingFolder(lake.root, w), dataset, f.path))
    const found = await Promise.all(candidates.map(exists))
    const from = candidates.find((_, i) => found[i])
    if (!from)
      throw new ManifestError({
        message: `${datasetPath(lake.root, dataset, f.path)} is listed in ${dataset}/_manifest.json but missing: the lake lost a committed file; restore it from a copy, or export into a new --out`
      })
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: the dataset folder exists; only the last level may be missing
    await makeFolder(dirname(target))
    await rename(from, target)
  }
}

/**
 * A compaction cut short before its manifest write: the new files it put in place are not data,
 * and are deleted once its intent is abandoned (swap.ts intentAbandoned). The staging folders of
 * writers that are gone are removed.
 */
const dropAbandonedSwaps = async (lake: LakeWriter, dataset: string, m: Manifest, writers: ReadonlyArray<string>) => {
  const listed = new Set([...m.files, ...(m.retired ?? [])].map((f) => f.path))
  for (const w of writers) {
    const intent = intentPath(stagingFolder(lake.root, w), dataset)
    if (!(await intentAbandoned(w, intent))) continue
    const read = await readFile(intent, "utf8").then(
      (text) => JSON.parse(text) as { readonly paths?: ReadonlyArray<unknown> },
      () => undefined
    )
    for (const path of read?.paths ?? []) {
      if (typeof path !== "string" || listed.has(path)) continue
      const target = pathInside(datasetPath(lake.root, dataset), path)
      if (target) await rm(target, { force: true })
    }
    await rm(intent, { force: true })
    if (!writerGone(w)) continue
    await rm(join(stagingFolder(lake.root, w), dataset), { recursive: true, force: true })
    await rmdir(stagingFolder(lake.root, w)).catch(() => undefined)
  }
}

/**
 * Under the lock: listed files missing from their place are finished from the staging folder of
 * the writer killed mid-commit; staging folders of writers that are gone are removed; a listed
 * file found nowhere is a damaged lake, and stops the run.
 */
export const recover = (lake: LakeWriter, dataset: string, m: Manifest) =>
  Effect.tryPromise({
    try: async () => {
      const writers = await readdir(join(lake.root, STAGING)).catch(() => [] as Array<string>)
      await finishRenames(lake, dataset, m, writers)
      await dropAbandonedSwaps(lake, dataset, m, writers)
      // files a compaction retired that are still in place (it was killed right after its manifest write)
      const committed = new Set(m.files.map((f) => f.path))
      for (const r of m.retired ?? []) if (!committed.has(r.path)) await retire(lake.root, dataset, r.path)
      // temp files this tool named in the dataset folder: a manifest write cut short (written
      // only under the lock), and files of versions that staged beside the lake
      for (const rel of await listFiles(datasetPath(lake.root, dataset)))
        if (rel === `${MANIFEST_FILE}.tmp` || rel.endsWith(".parquet.pending") || rel.endsWith(".parquet.tmp"))
          await rm(datasetPath(lake.root, dataset, rel), { force: true })
    },
    catch: (e) => (e instanceof ManifestError ? e : fail(e))
  })

/** A folder with Parquet files and no manifest: its manifest was lost, and nothing says which files are committed. */
export const refuseOrphans = (root: string, dataset: string) =>
  Effect.flatMap(
    Effect.promise(() => listFiles(datasetPath(root, dataset))),
    (files) => {
      const parquet = files.filter((f) => f.endsWith(".parquet"))
      return parquet.length === 0
        ? Effect.void
        : Effect.fail(
            new ManifestError({
              message: `${datasetPath(root, dataset)} holds ${parquet.length} Parquet file(s) but no _manifest.json, so nothing says which are committed: restore the manifest, move the folder away, or export into a new --out (nothing was deleted)`
            })
          )
    }
  )

/**
 * At open (the start of a run): each listed file in place has the size its manifest lists. A
 * file cut short or overwritten since its commit fails the run naming it, rather than every later
 * read of the dataset; the full sha256 is `verify`'s job (too slow for every run).
 */
const checkSizes = (lake: LakeWriter, dataset: string, m: Manifest) =>
  Effect.tryPromise({
    try: async () => {
      if (lake.options.filesElsewhere) return
      const sizes = await Promise.all(m.files.map((f) => stat(datasetPath(lake.root, dataset, f.path)).then((i) => i.size)))
      const bad = m.files.findIndex((f, i) => sizes[i] !== f.bytes)
      if (bad >= 0)
        throw new ManifestError({
          message: `${datasetPath(lake.root, dataset, m.files[bad].path)} is ${sizes[bad]} bytes, but ${dataset}/${MANIFEST_FILE} lists it at ${m.files[bad].bytes}: the committed file was damaged (cut short or overwritten); restore it from a copy, or export into a new --out (chain-lake verify checks every file)`
        })
    },
    catch: (e) => (e instanceof ManifestError ? e : fail(e))
  })

/** Loads (or starts) a dataset's manifest and finishes a commit a killed writer left half done (ManifestsService.open). */
export const open = (lake: LakeWriter, dataset: string, unit: Manifest["unit"], columns: ReadonlyArray<Column>) =>
  locked(
    lake,
    dataset,
    Effect.gen(function* () {
      const { manifest: existing, basis } = yield* readAt(lake, dataset)
      if (existing && existing.unit !== unit)
        return yield* new ManifestError({ message: `${dataset}/_manifest.json was written for unit ${existing.unit}, not ${unit}` })
      if (!existing) yield* refuseOrphans(lake.root, dataset)
      const manifest: Manifest = existing ?? {
        dataset,
        format_version: 1,
        unit,
        columns: columns.map((c) => ({ name: c.name, type: c.type })),
        files: [],
        committed: [],
        snapshots: []
      }
      yield* recover(lake, dataset, manifest)
      yield* checkSizes(lake, dataset, manifest)
      // Stryker disable next-line ConditionalExpression: writing an unchanged manifest again changes nothing read
      return existing ?? (yield* write(lake, manifest, basis))
    })
  )
