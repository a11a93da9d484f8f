/** Reads an export folder back with DuckDB, as a user would. */
import { DuckDBInstance } from "@duckdb/node-api"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { DATASETS } from "../../src/datasets/index.js"

export const queryLake = (sql: string): Promise<Array<Record<string, any>>> => withQueries((query) => query(sql))

/** Runs `use` with one in-memory DuckDB (starting one costs more than the small queries tests make). */
const withQueries = async <A>(use: (query: (sql: string) => Promise<Array<Record<string, any>>>) => Promise<A>): Promise<A> => {
  const instance = await DuckDBInstance.create(":memory:")
  const conn = await instance.connect()
  try {
    return await use(async (sql) => (await conn.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, any>>)
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

/** `read_parquet` over a dataset's files with hive partitioning, as the README documents. */
export const scan = (out: string, dataset: string) =>
  `read_parquet('${join(out, dataset).replace(/'/g, "''")}/**/*.parquet', hive_partitioning = true, union_by_name = true)`

export const hasDataset = (out: string, dataset: string) => existsSync(join(out, dataset, "_manifest.json"))

const KEYS: Record<string, string> = Object.fromEntries(DATASETS.map((d) => [d.name, d.key.map((k) => `"${k}"`).join(", ")]))
const SNAPSHOTS = new Set(DATASETS.filter((d) => d.kind === "snapshot").map((d) => d.name))

/** Every row of the named datasets as sorted JSON lines (snapshot_time and partition columns left out). */
export const dumpLake = async (
  out: string,
  names: ReadonlyArray<string> = DATASETS.filter((d) => d.kind !== "sample").map((d) => d.name)
) => {
  const result: Record<string, Array<string>> = {}
  await withQueries(async (query) => {
    for (const name of names) {
      const rows = await query(
        `SELECT * EXCLUDE (${SNAPSHOTS.has(name) ? "snapshot_time" : "height_bucket"}) FROM ${scan(out, name)} ORDER BY ${KEYS[name]}`
      )
      result[name] = rows.map((r) => JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v)))
    }
  })
  return result
}

/** Every file under `out`, relative, with forward slashes. */
export const filesUnder = (out: string, prefix = ""): Array<string> =>
  readdirSync(join(out, prefix), { withFileTypes: true }).flatMap((e) => {
    const rel = prefix ? `${prefix}/${e.name}` : e.name
    return e.isDirectory() ? filesUnder(out, rel) : [rel]
  })

/** The data files under `out`: everything but run reports, manifests and the lake's identity (the protocol's own files). */
export const dataFilesUnder = (out: string): Array<string> =>
  filesUnder(out).filter((f) => !f.startsWith("_runs/") && !f.endsWith("/_manifest.json") && f !== "_lake.json")

export interface ManifestEntry {
  /** relative to the lake root: dataset/path */
  readonly path: string
  readonly sha256: string
  readonly rows: number
}

/** Every file the datasets' `_manifest.json` files list (a missing or half-written manifest lists none). */
export const committedFiles = (out: string): Array<ManifestEntry> =>
  existsSync(out)
    ? readdirSync(out, { withFileTypes: true }).flatMap((d) => {
        if (!d.isDirectory()) return []
        try {
          const m = JSON.parse(readFileSync(join(out, d.name, "_manifest.json"), "utf8")) as {
            files: Array<{ path: string; sha256: string; rows: number }>
          }
          return m.files.map((f) => ({ path: `${d.name}/${f.path}`, sha256: f.sha256, rows: f.rows }))
        } catch {
          return []
        }
      })
    : []

export const sha256Of = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex")

/** Every file under `out` with its sha256: equal before and after means nothing was written, renamed or deleted. */
export const hashTree = (out: string): Record<string, string> =>
  existsSync(out)
    ? Object.fromEntries(
        filesUnder(out)
          .sort()
          .map((f) => [f, sha256Of(join(out, f))])
      )
    : {}

const HEIGHT_COLUMN: Record<string, string> = {}

/**
 * Every manifest of `datasets` says the truth about its files: each listed file exists with its
 * sha256, holds `rows` rows whose heights run exactly from `min_height` to `max_height` (the
 * snapshot height for snapshots), within the file's height range for height-ranged datasets, and
 * has the manifest's columns; the committed ranges are the files' ranges merged. `mayBeEmpty`: a
 * manifest may list no file (then it commits no range).
 */
export const expectManifestsTrue = async (
  out: string,
  datasets: ReadonlyArray<string>,
  options: { readonly mayBeEmpty?: boolean } = {}
) => {
  const { expect } = await import("vitest")
  await withQueries(async (query) => {
    for (const name of datasets) {
      const m = JSON.parse(readFileSync(join(out, name, "_manifest.json"), "utf8")) as {
        unit: string
        columns: Array<{ name: string; type: string }>
        committed: Array<[number, number]>
        files: Array<{
          path: string
          sha256: string
          rows: number
          range?: [number, number]
          min_height: number | null
          max_height: number | null
        }>
      }
      // an empty manifest (after a run that committed nothing) promises nothing: no ranges either
      if (options.mayBeEmpty && m.files.length === 0) expect(m.committed, `${name}: committed with no files`).toEqual([])
      else expect(m.files.length, `${name}: files`).toBeGreaterThan(0)
      for (const f of m.files) {
        const path = join(out, name, f.path)
        expect(sha256Of(path), `${name}/${f.path}: sha256`).toBe(f.sha256)
        const file = `read_parquet('${path.replace(/'/g, "''")}', hive_partitioning = false)`
        const height = m.unit === "snapshot" ? "NULL" : `"${HEIGHT_COLUMN[name] ?? "height"}"`
        const [facts] = await query(`SELECT count(*)::INTEGER n, min(${height})::BIGINT lo, max(${height})::BIGINT hi FROM ${file}`)
        const snapshotHeight = m.unit === "snapshot" ? Number(/^snapshot_height=(\d+)\//.exec(f.path)?.[1]) : undefined
        expect(
          { rows: facts.n, min: snapshotHeight ?? Number(facts.lo), max: snapshotHeight ?? Number(facts.hi) },
          `${name}/${f.path}`
        ).toEqual({ rows: f.rows, min: f.min_height, max: f.max_height })
        if (m.unit === "height")
          expect(f.min_height! >= f.range![0] && f.max_height! < f.range![1], `${name}/${f.path}: heights within ${f.range}`).toBe(true)
        const columns = await query(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${file})`)
        expect(
          columns.map((c) => c.column_name),
          `${name}/${f.path}: columns`
        ).toEqual(m.columns.map((c) => c.name))
      }
      if (m.unit === "height" || m.unit === "position") {
        const merged: Array<[number, number]> = []
        for (const [a, b] of m.files.map((f) => f.range!).sort((x, y) => x[0] - y[0])) {
          const last = merged[merged.length - 1]
          if (last && a <= last[1]) last[1] = Math.max(last[1], b)
          else merged.push([a, b])
        }
        expect(m.committed, `${name}: committed ranges`).toEqual(merged)
      }
    }
  })
}
