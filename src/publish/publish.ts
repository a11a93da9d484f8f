/**
 * Publishing: a versioned release of the lake's committed files (never uncommitted leftovers),
 * with `manifest.json` (every file's path, bytes, sha256, rows and height range or snapshot
 * watermark; every dataset's schema), a Frictionless `datapackage.json`, and a README dataset card
 * documenting every column. Written to a temp folder and renamed, so readers see all or nothing.
 */
import { existsSync } from "node:fs"
import { copyFile, readdir, rename, rm, writeFile } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import { Effect, Exit } from "effect"
import { LAKE_DATASETS } from "../analytics/Analytics.js"
import type { ColumnType } from "../lake/columns.js"
import { identityProblem, Manifests, type Manifest } from "../lake/Manifests.js"
import { holdsParquet, makeFolder, sha256File } from "../lake/files.js"
import { quarantinedRecords } from "../lake/quarantine.js"
import { datasetPath, snapshotHeightOf } from "../lake/layout.js"
import { alive } from "../lake/lock.js"
import { describeRanges, missingHeights } from "../lake/held.js"
import { listedFiles } from "../lake/listed.js"
import { normalize } from "../lake/RangeSet.js"
import { PublishError, type Coverage, type ReleaseManifest } from "./release.js"
import { validateRelease } from "./validate.js"

export interface PublishOptions {
  readonly to: string
  readonly name: string
  readonly version: string
  readonly license?: string
}

/** Frictionless table-schema types for the Parquet column types. */
const frictionlessType = (t: ColumnType | string): string =>
  t === "BIGINT" || t === "INTEGER"
    ? "integer"
    : t === "DOUBLE"
      ? "number"
      : t === "BOOLEAN"
        ? "boolean"
        : t === "TIMESTAMP" || t === "TIMESTAMP_NS"
          ? "datetime"
          : t === "JSON"
            ? "object"
            : t === "VARCHAR[]"
              ? "array"
              : t === "DECIMAL(38,0)"
                ? "integer"
                : "string"

const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** What is wrong with a release's name or version (each becomes a folder name), or undefined. */
export const releaseNameProblem = (name: string, version: string): string | undefined =>
  !SAFE.test(name)
    ? `--name must be 1-64 of letters, digits, . _ - (it becomes a folder name), got "${name}"`
    : !SAFE.test(version)
      ? `--version must be 1-64 of letters, digits, . _ - (it becomes a folder name), got "${version}"`
      : undefined

type LakeDataset = (typeof LAKE_DATASETS)[number]
type ReleaseDataset = ReleaseManifest["datasets"][number]
type ReleaseFile = ReleaseDataset["files"][number]

/** Removes what killed publishes left beside `target`: their staging folders, named by a process that is gone (or by this one). */
const removeAbandonedStaging = (target: string) =>
  Effect.tryPromise({
    try: async () => {
      for (const entry of await readdir(dirname(target)).catch(() => [] as Array<string>)) {
        const m = /\.tmp-(\d+)$/.exec(entry)
        if (m && (Number(m[1]) === process.pid || !alive(Number(m[1]))))
          await rm(join(dirname(target), entry), { recursive: true, force: true })
      }
    },
    catch: (e) => new PublishError({ message: (e as Error).message })
  })

/** The committed file `f` of `dataset` copied into the release at `staging`, checked against its sha256, as the release manifest lists it. */
const copyCommittedFile = (root: string, staging: string, dataset: string, f: Manifest["files"][number]) =>
  Effect.gen(function* () {
    const from = datasetPath(root, dataset, f.path)
    const to = join(staging, dataset, f.path)
    yield* Effect.tryPromise({
      try: async () => {
        await makeFolder(dirname(to))
        await copyFile(from, to)
        // copy what the manifest promises, or fail: a changed file is not published
        const sum = await sha256File(to)
        if (sum !== f.sha256)
          throw new Error(`${dataset}/${f.path} does not match its committed sha256 (the lake was changed after export)`)
      },
      catch: (e) => new PublishError({ message: (e as Error).message })
    })
    const snapshotHeight = snapshotHeightOf(f.path)
    return {
      path: `${dataset}/${f.path}`,
      bytes: f.bytes,
      sha256: f.sha256,
      rows: f.rows,
      min_height: f.min_height,
      max_height: f.max_height,
      ...(snapshotHeight !== undefined ? { snapshot_height: snapshotHeight } : {})
    } satisfies ReleaseFile
  })

/** What of the chain the committed files of `m` hold (Coverage), `quarantined` records of its list left out. */
const coverageOf = (m: Manifest, quarantined: number): Coverage => ({
  quarantined,
  unit: m.unit,
  committed: normalize(m.committed).map(([a, b]) => [a, b] as const),
  missing_heights: m.unit === "height" || m.unit === "position" ? missingHeights(m) : [],
  snapshots: m.snapshots.map((s) => ({
    snapshot_height: s.snapshot_height,
    consistency: s.consistency,
    ...(s.note === undefined ? {} : { note: s.note })
  }))
})

/** Why records of committed ranges are not in a release. */
export const quarantinedNote =
  "they broke the schema and were quarantined by the export (the lake's _quarantine/ holds them); a rollback below them and a new export reads them again"

/** One line saying what of the chain a released dataset holds, for its README section. */
export const describeCoverage = (c: Coverage): string => {
  if (c.unit === "snapshot")
    return c.snapshots.map((s) => `Snapshot at height ${s.snapshot_height}: ${s.consistency}${s.note ? ` (${s.note})` : ""}.`).join(" ")
  if (c.unit === "sample") return ""
  const what = c.unit === "height" ? `Heights ${describeRanges(c.committed, 10)}` : `List positions ${describeRanges(c.committed, 10)}`
  const left = (c.quarantined ?? 0) > 0 ? ` **${c.quarantined} records left out**: ${quarantinedNote}.` : ""
  return c.missing_heights.length === 0
    ? `${what} committed${left ? ";" + left : ", without a gap."}`
    : `${what} committed; **not held: heights ${describeRanges(c.missing_heights, 10)}** (not exported when this was published${c.unit === "position" ? "; the heights at either side held in part" : ""}).${left}`
}

/** The committed files of `d` copied into the release at `staging`, and its entry of the release manifest; undefined when it has none. */
const releaseDataset = (staging: string, d: LakeDataset) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const root = manifests.root
    const m: Manifest | undefined = yield* manifests.get(d.name).pipe(Effect.mapError((e) => new PublishError({ message: e.message })))
    // a dataset folder with Parquet files and no manifest lost its manifest: publishing the rest without a word would drop it
    if (!m && holdsParquet(datasetPath(root, d.name)))
      return yield* new PublishError({
        message: `${d.name} holds Parquet files but no _manifest.json, which says which of them are data: restore it, or export ${d.name} again into a new folder`
      })
    if (!m || m.files.length === 0) return undefined
    // a release holds whole commits only: listed files not in place refuse it
    const listed = yield* Effect.promise(() => listedFiles(root, d.name, d.columns))
    if (listed !== undefined && "problem" in listed)
      return yield* new PublishError({ message: `${listed.problem} (nothing was published)` })
    const files: Array<ReleaseFile> = []
    for (const f of m.files) files.push(yield* copyCommittedFile(root, staging, d.name, f))
    return {
      name: d.name,
      partition: d.partition,
      columns: d.columns.map((c) => ({ name: c.name, type: c.type, description: c.description })),
      rows: files.reduce((s, f) => s + f.rows, 0),
      coverage: coverageOf(m, d.list === undefined ? 0 : yield* Effect.promise(() => quarantinedRecords(root, d.list!))),
      files
    } satisfies ReleaseDataset
  })

/** The release's Frictionless `datapackage.json`: a resource per dataset, with its files and typed fields. */
const datapackageOf = (manifest: ReleaseManifest, options: PublishOptions) => ({
  name: options.name.toLowerCase().replace(/[^a-z0-9._-]/g, "-"),
  version: options.version,
  created: manifest.created_at,
  ...(options.license ? { licenses: [{ name: options.license }] } : {}),
  resources: manifest.datasets.map((d) => ({
    name: d.name,
    path: d.files.map((f) => f.path),
    format: "parquet",
    mediatype: "application/vnd.apache.parquet",
    bytes: d.files.reduce((s, f) => s + f.bytes, 0),
    schema: {
      fields: [
        ...d.columns.map((c) => ({
          name: c.name,
          type: frictionlessType(c.type),
          description: c.description,
          "x-parquet-type": c.type
        })),
        {
          name: d.partition,
          type: d.partition === "date" ? "date" : "integer",
          description: "hive partition column (from the folder name)"
        }
      ]
    }
  }))
})

/** "1 file", "2 files" */
const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

/** The release's README: how to read it, and a section per dataset documenting every column. */
const datasetCard = (manifest: ReleaseManifest, options: PublishOptions) =>
  [
    `# ${options.name} ${options.version}`,
    "",
    `Published ${manifest.created_at} by chain-lake${options.license ? ` under ${options.license}` : ""}. Hive-partitioned Parquet (ZSTD):`,
    "read `<dataset>/**/*.parquet` with `hive_partitioning = true` in DuckDB, Spark, Trino or Athena.",
    "`manifest.json` lists every file with its sha256; `chain-lake validate <this folder>` re-checks them.",
    "",
    ...manifest.datasets.flatMap((d) => [
      `## ${d.name}`,
      "",
      `${count(d.rows, "row")} in ${count(d.files.length, "file")}, partitioned by \`${d.partition}\`.`,
      "",
      ...(d.coverage && describeCoverage(d.coverage) ? [describeCoverage(d.coverage), ""] : []),
      "| column | type | description |",
      "|---|---|---|",
      ...d.columns.map((c) => `| \`${c.name}\` | ${c.type} | ${c.description.replace(/\|/g, "\\|")} |`),
      ""
    ])
  ].join("\n")

/** Why the lake cannot be published as it stands (what exports refuse: no chain named, a rollback half done, two histories), or undefined. */
const lakeProblem = Effect.gen(function* () {
  const manifests = yield* Manifests
  const identity = yield* manifests.identity.pipe(
    Effect.mapError((e) => new PublishError({ message: `${e.message} (nothing was published)` }))
  )
  // (sampled datasets, route quotes, name no chain)
  const exported = yield* Effect.forEach(
    LAKE_DATASETS.filter((d) => d.writtenBy === "export"),
    (d) => Effect.map(manifests.get(d.name), (m) => (m?.files.length ?? 0) > 0)
  ).pipe(Effect.mapError((e) => new PublishError({ message: e.message })))
  return identityProblem(manifests.root, identity, exported.includes(true))
})

/** The release written whole into `staging`: every dataset's committed files, manifest.json, datapackage.json and README.md. */
const stageRelease = (staging: string, options: PublishOptions) =>
  Effect.gen(function* () {
    const datasets: Array<ReleaseDataset> = []
    for (const d of LAKE_DATASETS) {
      const released = yield* releaseDataset(staging, d)
      if (released) datasets.push(released)
    }
    if (datasets.length === 0)
      return yield* new PublishError({
        message: `nothing to publish: ${(yield* Manifests).root} has no committed files (run export first)`
      })
    const manifest: ReleaseManifest = {
      name: options.name,
      version: options.version,
      license: options.license ?? null,
      created_at: new Date().toISOString(),
      datasets
    }
    yield* writing(async () => {
      await makeFolder(staging)
      await writeFile(join(staging, "manifest.json"), JSON.stringify(manifest, null, 1))
      await writeFile(join(staging, "datapackage.json"), JSON.stringify(datapackageOf(manifest, options), null, 1))
      await writeFile(join(staging, "README.md"), datasetCard(manifest, options))
    })
    return manifest
  })

const writing = (step: () => Promise<void>) =>
  Effect.tryPromise({ try: step, catch: (e) => new PublishError({ message: `writing the release failed: ${(e as Error).message}` }) })

/**
 * Publishes the lake's committed files as release `options.version` of `options.name` under
 * `options.to`: staged beside it, checked as validate checks a release, then renamed into place
 * (readers see all of it or nothing). A staging folder a failure or an interruption leaves is removed.
 */
export const publish = (options: PublishOptions) =>
  Effect.gen(function* () {
    const badName = releaseNameProblem(options.name, options.version)
    if (badName) return yield* new PublishError({ message: badName })
    const target = resolve(options.to, options.name, options.version)
    if (existsSync(target))
      return yield* new PublishError({ message: `${target} exists: a published version is never overwritten; pick a new --version` })
    const problem = yield* lakeProblem
    if (problem) return yield* new PublishError({ message: `${problem} (nothing was published)` })
    const staging = `${target}.tmp-${process.pid}`
    yield* removeAbandonedStaging(target)
    const manifest = yield* Effect.gen(function* () {
      const staged = yield* stageRelease(staging, options)
      // what validate would find, found first: a manifest's rows (edited by hand) its files do not hold
      const { problems } = yield* validateRelease(staging)
      if (problems.length > 0)
        return yield* new PublishError({
          message: `the release would not validate: ${problems[0]}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}; nothing was published`
        })
      yield* writing(() => rename(staging, target))
      return staged
    }).pipe(
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.promise(() => rm(staging, { recursive: true, force: true }))))
    )
    return { path: target, manifest }
  })
