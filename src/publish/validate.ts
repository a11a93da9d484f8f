/**
 * Validation of a published release: every file the manifest lists exists with its bytes,
 * sha256, row count and schema; no data file is unlisted. Returns every mismatch.
 */
import { readFile, stat } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Effect, Either } from "effect"
import { isContainedPath, listFiles, pathInside, sha256File } from "../lake/files.js"
import { duckdbApi } from "../lake/duckdb.js"
import { sqlString } from "../lake/sql.js"
import { PublishError, readReleaseManifest, type ReleaseManifest } from "./release.js"

export const validateRelease = (dir: string) =>
  Effect.tryPromise({
    try: async () => {
      const root = resolve(dir)
      let text: string
      try {
        text = await readFile(join(root, "manifest.json"), "utf8")
      } catch (e) {
        throw new Error(`${root} has no readable manifest.json (${(e as Error).message}): is it a published version folder?`)
      }
      const decoded = readReleaseManifest(text, join(root, "manifest.json"))
      if (Either.isLeft(decoded)) throw new Error(decoded.left)
      const manifest: ReleaseManifest = decoded.right
      const problems: Array<string> = []
      const instance = await (await duckdbApi()).DuckDBInstance.create(":memory:")
      const conn = await instance.connect()
      try {
        const listed = new Set<string>()
        const datasetsSeen = new Set<string>()
        for (const d of manifest.datasets) {
          // a dataset or a file listed twice is read twice by whoever follows the manifest
          if (datasetsSeen.has(d.name)) problems.push(`${d.name}: listed twice in manifest.json`)
          datasetsSeen.add(d.name)
          const fileRows = d.files.reduce((sum, f) => sum + f.rows, 0)
          if (fileRows !== d.rows) problems.push(`${d.name}: ${d.rows} rows in manifest.json, but its files list ${fileRows}`)
          for (const f of d.files) {
            if (listed.has(f.path)) problems.push(`${f.path}: listed twice in manifest.json`)
            listed.add(f.path)
            const path = pathInside(root, f.path)
            if (path === undefined) {
              problems.push(`${f.path}: leaves the release folder (an untrusted manifest?); not read`)
              continue
            }
            const info = await stat(path).catch(() => undefined)
            if (!info) {
              problems.push(`${f.path}: missing`)
              continue
            }
            if (info.size !== f.bytes) problems.push(`${f.path}: ${info.size} bytes, the manifest says ${f.bytes}`)
            const sum = await sha256File(path)
            if (sum !== f.sha256) {
              problems.push(`${f.path}: sha256 ${sum.slice(0, 12)}…, the manifest says ${f.sha256.slice(0, 12)}…`)
              continue
            }
            const quoted = sqlString(path)
            const rows = Number(
              (await conn.runAndReadAll(`SELECT count(*) FROM read_parquet(${quoted}, hive_partitioning = false)`)).getRows()[0][0]
            )
            if (rows !== f.rows) problems.push(`${f.path}: ${rows} rows, the manifest says ${f.rows}`)
            const cols = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoted}, hive_partitioning = false)`))
              .getRowObjectsJS()
              .map((r) => String(r.column_name))
            const expected = d.columns.map((c) => c.name)
            // a file written before a column was added lacks it (readers see NULL there): its columns
            // are the schema's with some left out, in the schema's order; anything else is a mismatch
            let at = 0
            const inOrder = cols.every((c) => {
              while (at < expected.length && expected[at] !== c) at++
              return at++ < expected.length
            })
            if (!inOrder) problems.push(`${f.path}: columns ${cols.join(", ")}; the schema says ${expected.join(", ")}`)
          }
        }
        for (const f of await listFiles(root)) if (f.endsWith(".parquet") && !listed.has(f)) problems.push(`${f}: not in the manifest`)
        problems.push(...(await datapackageProblems(root, manifest)))
      } finally {
        conn.closeSync()
        instance.closeSync()
      }
      return { manifest, problems }
    },
    catch: (e) => new PublishError({ message: (e as Error).message })
  })

/** datapackage.json (what Frictionless tools follow) must name the manifest's datasets and files, and nothing outside the release. */
const datapackageProblems = async (root: string, manifest: ReleaseManifest): Promise<Array<string>> => {
  const text = await readFile(join(root, "datapackage.json"), "utf8").catch(() => undefined)
  if (text === undefined) return ["datapackage.json: missing (publish writes one beside manifest.json)"]
  let resources: Array<{ name?: unknown; path?: unknown }>
  try {
    const parsed = JSON.parse(text) as { resources?: unknown }
    if (!Array.isArray(parsed.resources)) return ["datapackage.json: no resources list"]
    resources = parsed.resources as Array<{ name?: unknown; path?: unknown }>
  } catch (e) {
    return [`datapackage.json: not JSON (${(e as Error).message})`]
  }
  const problems: Array<string> = []
  const byName = new Map(manifest.datasets.map((d) => [d.name, new Set(d.files.map((f) => f.path))]))
  for (const r of resources) {
    const name = String(r.name)
    const paths = (Array.isArray(r.path) ? r.path : [r.path]).map(String)
    const outside = paths.find((p) => !isContainedPath(p))
    if (outside !== undefined) problems.push(`datapackage.json: ${name} lists ${JSON.stringify(outside)}, outside the release folder`)
    const files = byName.get(name)
    if (files === undefined) problems.push(`datapackage.json: ${name} is not a dataset of manifest.json`)
    else if (paths.length !== files.size || !paths.every((p) => files.has(p)))
      problems.push(`datapackage.json: ${name}'s files are not the ones manifest.json lists`)
  }
  for (const name of byName.keys()) if (!resources.some((r) => r.name === name)) problems.push(`datapackage.json: no resource for ${name}`)
  return problems
}
