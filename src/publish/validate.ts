/**
 * Validation of a published release: every file the manifest lists exists with its bytes,
 * sha256, row count and schema; no data file is unlisted. Returns every mismatch.
 */
import { readFile, stat } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Effect, Either } from "effect"
import { listFiles, pathInside, sha256File } from "../lake/files.js"
import { PublishError, readReleaseManifest, type ReleaseManifest } from "./publish.js"

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
      const instance = await (await import("@duckdb/node-api")).DuckDBInstance.create(":memory:")
      const conn = await instance.connect()
      try {
        const listed = new Set<string>()
        for (const d of manifest.datasets) {
          for (const f of d.files) {
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
            const quoted = `'${path.replace(/'/g, "''")}'`
            const rows = Number((await conn.runAndReadAll(`SELECT count(*) FROM read_parquet(${quoted}, hive_partitioning = false)`)).getRows()[0][0])
            if (rows !== f.rows) problems.push(`${f.path}: ${rows} rows, the manifest says ${f.rows}`)
            const cols = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoted}, hive_partitioning = false)`)).getRowObjectsJS().map((r) => String(r.column_name))
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
      } finally {
        conn.closeSync()
        instance.closeSync()
      }
      return { manifest, problems }
    },
    catch: (e) => new PublishError({ message: (e as Error).message })
  })
