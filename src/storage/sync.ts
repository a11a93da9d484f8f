/**
 * Lake ↔ S3: an export to `s3://…` runs in a local work folder that mirrors the remote manifests,
 * and uploads each commit as it happens: its files, then its commit-log fragment.
 * A release published to `s3://…` is built locally, then uploaded with manifest.json last.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect, Either } from "effect"
import { LAKE_DATASETS } from "../analytics/Analytics.js"
import { listFiles, pathInside } from "../lake/files.js"
import { decodeLakeFile, IDENTITY_FILE, Manifest, MANIFEST_FILE } from "../lake/manifest.js"
import { readReleaseManifest } from "../publish/publish.js"
import { CheckpointError } from "../lake/Checkpoints.js"
import { writerGone } from "../lake/lock.js"
import { fragmentName, mergeFragment } from "../lake/commitLog.js"
import { download, downloadFile, exists, list, makeS3, parseS3Url, put, StorageError, upload, type S3, type S3Location } from "./s3.js"

const WORK_PREFIX = "chain-lake-s3-"

/**
 * A work folder for one export to S3, named by its writer: its own, so that two jobs on one
 * machine never share one; the folders of killed runs (their process gone) are removed here.
 */
export const newWorkDir = (writer: string) =>
  Effect.promise(async () => {
    for (const entry of await readdir(tmpdir()).catch(() => [] as Array<string>))
      if (entry.startsWith(WORK_PREFIX) && writerGone(entry.slice(WORK_PREFIX.length))) await rm(join(tmpdir(), entry), { recursive: true, force: true })
    const dir = join(tmpdir(), WORK_PREFIX + writer)
    await mkdir(dir, { recursive: true })
    return dir
  })


/** The commit log of a dataset on S3: one fragment per commit of a writer (src/lake/commitLog.ts). */
export const logOf = (dataset: string) => `${dataset}/_log/`

/** A dataset's manifest on S3: `_manifest.json` (from older versions) merged with the commit log's fragments in name order; and which fragments were not taken. */
export const remoteManifest = (s3: S3, loc: S3Location, dataset: string) =>
  Effect.gen(function* () {
    const where = (rel: string) => `s3://${loc.bucket}/${loc.prefix ? loc.prefix + "/" : ""}${rel}`
    const baseText = yield* download(s3, loc, `${dataset}/${MANIFEST_FILE}`)
    let manifest = baseText === undefined ? undefined : yield* decodeManifest(where(`${dataset}/${MANIFEST_FILE}`), baseText)
    const rejected: Array<string> = []
    for (const name of yield* list(s3, loc, logOf(dataset))) {
      const text = yield* download(s3, loc, logOf(dataset) + name)
      if (text === undefined) continue
      const merged = mergeFragment(manifest, yield* decodeManifest(where(logOf(dataset) + name), text))
      if (merged) manifest = merged
      else rejected.push(name)
    }
    return { manifest, rejected }
  })

/** Brings the remote manifests (and the lake's identity) into the work folder, so a local export resumes where the remote lake ends. */
export const pullManifests = (url: string, workDir: string, endpoint?: string) =>
  Effect.gen(function* () {
    const loc = yield* Effect.try({ try: () => parseS3Url(url), catch: (e) => e as StorageError })
    const s3 = makeS3(endpoint)
    const identity = yield* download(s3, loc, IDENTITY_FILE)
    if (identity !== undefined) yield* Effect.promise(() => writeFile(join(workDir, IDENTITY_FILE), identity))
    for (const d of LAKE_DATASETS) {
      const { manifest } = yield* remoteManifest(s3, loc, d.name)
      if (!manifest) continue
      yield* Effect.promise(async () => {
        await mkdir(join(workDir, d.name), { recursive: true })
        await writeFile(join(workDir, d.name, MANIFEST_FILE), JSON.stringify(manifest, null, 1))
      })
    }
  })

const decodeManifest = (where: string, text: string) =>
  Either.match(decodeLakeFile(Manifest, text), {
    onLeft: (issue) => Effect.fail(new StorageError({ message: `${where} is damaged at ${issue}` })),
    onRight: Effect.succeed
  })

/**
 * The commits of an S3 export, uploaded as they happen: `afterCommit` (Checkpoints' hook) puts a
 * commit's files, then its commit-log fragment (never another writer's key), then deletes the
 * files here (the work folder holds only what is in flight); the lake's identity goes up before
 * the first. `fetchCommitted` brings a committed file back for a reader (a snapshot's default
 * denoms read the blocks). `finish` uploads the run report and reads each dataset's log back: a fragment that another
 * writer's overlapping one preceded was not taken, and the run fails saying so. Many jobs can
 * export disjoint ranges into one prefix at once, and a killed run keeps what it committed.
 */
export const remoteCommits = (url: string, workDir: string, writer: string, endpoint?: string) => {
  const loc = parseS3Url(url)
  const s3 = makeS3(endpoint)
  const written: Array<{ readonly dataset: string; readonly name: string }> = []
  let files = 0
  let identitySent = false
  const afterCommit = (added: Manifest) =>
    Effect.gen(function* () {
      if (!identitySent && (yield* Effect.promise(() => readFile(join(workDir, IDENTITY_FILE)).then(() => true, () => false)))) yield* upload(s3, workDir, loc, [IDENTITY_FILE])
      identitySent = true
      const paths = added.files.map((f) => `${added.dataset}/${f.path}`)
      yield* upload(s3, workDir, loc, paths)
      const name = fragmentName(new Date(), writer, written.length)
      yield* put(s3, loc, logOf(added.dataset) + name, JSON.stringify(added, null, 1))
      written.push({ dataset: added.dataset, name })
      files += added.files.length
      // up and committed: local disk keeps only what is in flight (a reader of them fetches them back: fetchCommitted)
      yield* Effect.promise(() => Promise.all(paths.map((p) => rm(join(workDir, p), { force: true }))))
    }).pipe(Effect.mapError((e) => new CheckpointError({ message: e.message })))
  /** A committed file of the remote lake, brought to the local file `to` (Checkpoints' withCommittedFiles). */
  const fetchCommitted = (dataset: string, path: string, to: string) =>
    Effect.gen(function* () {
      // the path comes from a remote manifest: it must stay inside its dataset's folder
      if (pathInside(join(workDir, dataset), path) === undefined) return yield* new StorageError({ message: `${dataset}/${path} leaves its folder: refusing to read it` })
      yield* downloadFile(s3, loc, `${dataset}/${path}`, to)
    }).pipe(Effect.mapError((e) => new CheckpointError({ message: e.message })))
  /** `also`: files of the work folder to upload too (the run report), since the folder goes with the run. */
  const finish = (also: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      yield* upload(s3, workDir, loc, also)
      for (const dataset of new Set(written.map((w) => w.dataset))) {
        const { rejected } = yield* remoteManifest(s3, loc, dataset)
        if (written.some((w) => w.dataset === dataset && rejected.includes(w.name)))
          return yield* new StorageError({ message: `another job committed part of the same ${dataset} ranges to ${url} first, so some of this run's commits were not taken` })
      }
      return files
    })
  return { url, afterCommit, fetchCommitted, finish }
}

/** Uploads a local release folder to `s3://…/NAME/VERSION/`, manifest.json last; never over an existing one. */
export const pushRelease = (releaseDir: string, url: string, name: string, version: string, endpoint?: string) =>
  Effect.gen(function* () {
    const base = yield* Effect.try({ try: () => parseS3Url(url), catch: (e) => e as StorageError })
    const loc: S3Location = { bucket: base.bucket, prefix: [base.prefix, name, version].filter(Boolean).join("/") }
    const s3 = makeS3(endpoint)
    if (yield* exists(s3, loc, "manifest.json"))
      return yield* new StorageError({ message: `s3://${loc.bucket}/${loc.prefix} exists: a published version is never overwritten; pick a new --version` })
    const files = (yield* Effect.promise(() => listFiles(releaseDir))).filter((f) => f !== "manifest.json")
    yield* upload(s3, releaseDir, loc, files)
    yield* upload(s3, releaseDir, loc, ["manifest.json"])
    return `s3://${loc.bucket}/${loc.prefix}`
  })

/** Downloads a published release from S3 into a temp folder (for validate). */
export const pullRelease = (url: string, endpoint?: string) =>
  Effect.gen(function* () {
    const loc = yield* Effect.try({ try: () => parseS3Url(url), catch: (e) => e as StorageError })
    const s3 = makeS3(endpoint)
    const text = yield* download(s3, loc, "manifest.json")
    if (text === undefined) return yield* new StorageError({ message: `${url} has no manifest.json: is it a published version?` })
    const decoded = readReleaseManifest(text, `${url}/manifest.json`)
    if (Either.isLeft(decoded)) return yield* new StorageError({ message: `${decoded.left}: refusing to download it` })
    const manifest = decoded.right
    const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "chain-lake-release-")))
    yield* Effect.promise(() => writeFile(join(dir, "manifest.json"), text))
    // paths come from a remote, possibly hostile, manifest: none may leave the temp folder
    const outside = manifest.datasets.flatMap((d) => d.files.map((f) => f.path)).filter((p) => pathInside(dir, p) === undefined)
    if (outside.length > 0) {
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
      return yield* new StorageError({ message: `${url}/manifest.json lists paths that leave the release (${outside.slice(0, 3).join(", ")}): refusing to download it` })
    }
    for (const d of manifest.datasets)
      for (const f of d.files) {
        const body = yield* Effect.tryPromise({
          try: async () => {
            const { GetObjectCommand } = await import("@aws-sdk/client-s3")
            const r = await (await s3.client()).send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.prefix ? `${loc.prefix}/${f.path}` : f.path }))
            return Buffer.from(await r.Body!.transformToByteArray())
          },
          catch: () => undefined
        }).pipe(Effect.orElseSucceed(() => undefined))
        if (body === undefined) continue // validate reports it missing
        const to = pathInside(dir, f.path)!
        yield* Effect.promise(async () => {
          await mkdir(dirname(to), { recursive: true })
          await writeFile(to, body)
        })
      }
    return dir
  })

export const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
