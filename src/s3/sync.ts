/**
 * Lake ↔ S3: an export to `s3://…` runs in a local work folder that mirrors the remote manifests,
 * and uploads each commit as it happens: its files, then its commit-log fragment.
 * A release published to `s3://…` is built locally, then uploaded with manifest.json last.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Effect, Either, type Schema } from "effect"
import { LAKE_DATASETS } from "../analytics/Analytics.js"
import { listFiles, pathInside, makeFolder } from "../lake/files.js"
import { decodeLakeFile, IDENTITY_FILE, Manifest, MANIFEST_FILE } from "../lake/manifest.js"
import { readReleaseManifest } from "../publish/release.js"
import { ManifestError } from "../lake/Manifests.js"
import { newWriterId, writerGone } from "../lake/lock.js"
import { checkpointName, fragmentName, fragmentTaken, LogCheckpoint, mergeFragment } from "../lake/commitLog.js"
import {
  download,
  downloadFile,
  exists,
  list,
  listEntries,
  makeS3,
  parseS3Url,
  put,
  remove,
  StorageError,
  upload,
  type S3,
  type S3Location
} from "./s3.js"

const WORK_PREFIX = "chain-lake-s3-"

/**
 * A folder of the OS temp folder for one writer, `prefix` and its id: its own, so that two jobs on
 * one machine never share one; the folders of `prefix` whose writer's process is gone (killed runs:
 * one that ends removes its own) are removed here, those of running ones and of other hosts stay.
 */
export const writerTempFolder = (prefix: string, writer: string) =>
  Effect.promise(async () => {
    for (const entry of await readdir(tmpdir()).catch(() => [] as Array<string>))
      if (entry.startsWith(prefix) && writerGone(entry.slice(prefix.length)))
        await rm(join(tmpdir(), entry), { recursive: true, force: true })
    const dir = join(tmpdir(), prefix + writer)
    await makeFolder(dir)
    return dir
  })

/** A work folder for one export to S3 (or compaction of one), named by its writer (writerTempFolder). */
export const newWorkDir = (writer: string) => writerTempFolder(WORK_PREFIX, writer)

/** The commit log of a dataset on S3: one fragment per commit of a writer (src/lake/commitLog.ts). */
export const logOf = (dataset: string) => `${dataset}/_log/`
/** Where a dataset's commit-log checkpoints are kept (src/lake/commitLog.ts). */
export const checkpointsOf = (dataset: string) => `${dataset}/_checkpoint/`

/** A dataset's manifest as read from S3, and what the read saw of its commit log. */
export interface RemoteRead {
  readonly manifest: Manifest | undefined
  /** the fragment the newest checkpoint covers (the read started there), if any */
  readonly covers: string | undefined
  /** the fragments named after it, in order, and which of them were not taken */
  readonly fragments: ReadonlyArray<string>
  readonly rejected: ReadonlyArray<string>
}

/**
 * A dataset's manifest on S3: the newest checkpoint (or, with none, `_manifest.json` from older
 * versions) merged with the commit log's fragments named after it, in name order.
 */
export const remoteManifest = (s3: S3, loc: S3Location, dataset: string): Effect.Effect<RemoteRead, StorageError> =>
  Effect.gen(function* () {
    const where = (rel: string) => `s3://${loc.bucket}/${loc.prefix ? loc.prefix + "/" : ""}${rel}`
    const newest = (yield* list(s3, loc, checkpointsOf(dataset))).at(-1)
    let manifest: Manifest | undefined
    let covers: string | undefined
    if (newest !== undefined) {
      const text = yield* download(s3, loc, checkpointsOf(dataset) + newest)
      // a checkpoint deleted since the listing was superseded by a newer one: read again
      if (text === undefined) return yield* remoteManifest(s3, loc, dataset)
      const checkpoint = yield* decoded(LogCheckpoint, where(checkpointsOf(dataset) + newest), text)
      manifest = checkpoint.manifest
      covers = checkpoint.covers
    } else {
      const baseText = yield* download(s3, loc, `${dataset}/${MANIFEST_FILE}`)
      manifest = baseText === undefined ? undefined : yield* decoded(Manifest, where(`${dataset}/${MANIFEST_FILE}`), baseText)
    }
    const fragments = yield* list(s3, loc, logOf(dataset), covers)
    const rejected: Array<string> = []
    for (const name of fragments) {
      const text = yield* download(s3, loc, logOf(dataset) + name)
      if (text === undefined) continue
      const merged = mergeFragment(manifest, yield* decoded(Manifest, where(logOf(dataset) + name), text))
      if (merged) manifest = merged
      else rejected.push(name)
    }
    const read: RemoteRead = { manifest, covers, fragments, rejected }
    return read
  })

/** Whether the fragment `name` (holding `fragment`) was taken, as `read` saw the log: by name after its checkpoint, by its files before. */
export const wasTaken = (read: RemoteRead, name: string, fragment: Pick<Manifest, "files">) =>
  read.covers !== undefined && name <= read.covers ? fragmentTaken(read.manifest, fragment) : !read.rejected.includes(name)

/** Fragments a dataset's log may gather after its newest checkpoint before a writer checkpoints it. */
export const CHECKPOINT_AFTER = 50
/** How long a checkpoint stands before the fragments it covers are deleted (a reader that listed them before it was written has long finished). */
export const CHECKPOINT_SETTLE_MS = 60 * 60_000

/**
 * Checkpoints a dataset's commit log when `read` saw at least `after` fragments past the newest
 * checkpoint: the manifest they merge to goes to `_checkpoint/<last fragment>`, so later reads
 * start there. Then the fragments (and older checkpoints) covered by a checkpoint that has stood
 * `settleMs` are deleted. Any writer may do it: two checkpoints of the same log agree.
 */
export const checkpointLog = (
  s3: S3,
  loc: S3Location,
  dataset: string,
  read: RemoteRead,
  options: { readonly after?: number; readonly settleMs?: number } = {}
) =>
  Effect.gen(function* () {
    const last = read.fragments.at(-1)
    if (read.manifest === undefined || last === undefined || read.fragments.length < (options.after ?? CHECKPOINT_AFTER)) return false
    const checkpoint: LogCheckpoint = { format_version: 1, covers: last, manifest: read.manifest }
    yield* put(s3, loc, checkpointsOf(dataset) + checkpointName(last), JSON.stringify(checkpoint))
    const settleMs = options.settleMs ?? CHECKPOINT_SETTLE_MS
    const settled = (yield* listEntries(s3, loc, checkpointsOf(dataset)))
      .filter((c) => Date.now() - c.modified.getTime() >= settleMs)
      .at(-1)
    if (settled === undefined) return true
    for (const name of yield* list(s3, loc, logOf(dataset))) {
      if (name > settled.name) break
      yield* remove(s3, loc, logOf(dataset) + name)
    }
    for (const name of yield* list(s3, loc, checkpointsOf(dataset)))
      if (name < settled.name) yield* remove(s3, loc, checkpointsOf(dataset) + name)
    return true
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
        await makeFolder(join(workDir, d.name))
        await writeFile(join(workDir, d.name, MANIFEST_FILE), JSON.stringify(manifest, null, 1))
      })
    }
  })

const decoded = <A, I>(schema: Schema.Schema<A, I>, where: string, text: string) =>
  Either.match(decodeLakeFile(schema, text), {
    onLeft: (issue) => Effect.fail(new StorageError({ message: `${where} is damaged at ${issue}` })),
    onRight: Effect.succeed
  })

/**
 * The commits of an S3 export, uploaded as they happen: `afterCommit` (Manifests' hook) puts a
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
  const written: Array<{ readonly dataset: string; readonly name: string; readonly files: Manifest["files"] }> = []
  let files = 0
  let identitySent = false
  const afterCommit = (added: Manifest) =>
    Effect.gen(function* () {
      if (
        !identitySent &&
        (yield* Effect.promise(() =>
          readFile(join(workDir, IDENTITY_FILE)).then(
            () => true,
            () => false
          )
        ))
      )
        yield* upload(s3, workDir, loc, [IDENTITY_FILE])
      identitySent = true
      const paths = added.files.map((f) => `${added.dataset}/${f.path}`)
      yield* upload(s3, workDir, loc, paths)
      const name = fragmentName(new Date(), writer, written.length)
      yield* put(s3, loc, logOf(added.dataset) + name, JSON.stringify(added, null, 1))
      written.push({ dataset: added.dataset, name, files: added.files })
      files += added.files.length
      // up and committed: local disk keeps only what is in flight (a reader of them fetches them back: fetchCommitted)
      yield* Effect.promise(() => Promise.all(paths.map((p) => rm(join(workDir, p), { force: true }))))
      // a long run (a follow) reads its log back every so often, and checkpoints it
      if (written.filter((w) => w.dataset === added.dataset).length % CHECKPOINT_AFTER === 0) yield* readBack(added.dataset)
    }).pipe(Effect.mapError((e) => new ManifestError({ message: e.message })))
  /** Reads `dataset`'s log back: every commit of this run must have been taken; a log grown long is checkpointed. */
  const readBack = (dataset: string) =>
    Effect.gen(function* () {
      const read = yield* remoteManifest(s3, loc, dataset)
      if (written.some((w) => w.dataset === dataset && !wasTaken(read, w.name, w)))
        return yield* new StorageError({
          message: `another job committed part of the same ${dataset} ranges to ${url} first, so some of this run's commits were not taken`
        })
      yield* checkpointLog(s3, loc, dataset, read)
    })
  /** A committed file of the remote lake, brought to the local file `to` (Manifests' withCommittedFiles). */
  const fetchCommitted = (dataset: string, path: string, to: string) =>
    Effect.gen(function* () {
      // the path comes from a remote manifest: it must stay inside its dataset's folder
      if (pathInside(join(workDir, dataset), path) === undefined)
        return yield* new StorageError({ message: `${dataset}/${path} leaves its folder: refusing to read it` })
      yield* downloadFile(s3, loc, `${dataset}/${path}`, to)
    }).pipe(Effect.mapError((e) => new ManifestError({ message: e.message })))
  /**
   * `also`: files of the work folder to upload too (the run report), since the folder goes with
   * the run. Reads each dataset's log back (every commit must have been taken), and checkpoints
   * a log that has grown long.
   */
  const finish = (also: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      yield* upload(s3, workDir, loc, also)
      for (const dataset of new Set(written.map((w) => w.dataset))) yield* readBack(dataset)
      return files
    })
  return { url, afterCommit, fetchCommitted, finish }
}

/** An S3 export's uploads, as remoteCommits makes them. */
export type RemoteCommits = ReturnType<typeof remoteCommits>

/**
 * The local work folder of an export to the lake at `url` (s3://bucket/prefix), made for this
 * run's own writer and removed when the scope closes: the remote manifests pulled into it, and
 * `remote`, which uploads each commit as it happens (remoteCommits).
 */
export const s3ExportFolder = (url: string, endpoint?: string) =>
  Effect.gen(function* () {
    const writer = newWriterId()
    const out = yield* Effect.acquireRelease(newWorkDir(writer), removeDir)
    yield* pullManifests(url, out, endpoint)
    return { out, remote: remoteCommits(url, out, writer, endpoint) }
  })

/** Uploads a local release folder to `s3://…/NAME/VERSION/`, manifest.json last; never over an existing one. */
export const pushRelease = (releaseDir: string, url: string, name: string, version: string, endpoint?: string) =>
  Effect.gen(function* () {
    const base = yield* Effect.try({ try: () => parseS3Url(url), catch: (e) => e as StorageError })
    const loc: S3Location = { bucket: base.bucket, prefix: [base.prefix, name, version].filter(Boolean).join("/") }
    const s3 = makeS3(endpoint)
    if (yield* exists(s3, loc, "manifest.json"))
      return yield* new StorageError({
        message: `s3://${loc.bucket}/${loc.prefix} exists: a published version is never overwritten; pick a new --version`
      })
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
    // validate checks datapackage.json against the manifest too (absent here: validate says it is missing)
    const datapackage = yield* download(s3, loc, "datapackage.json")
    if (datapackage !== undefined) yield* Effect.promise(() => writeFile(join(dir, "datapackage.json"), datapackage))
    // paths come from a remote, possibly hostile, manifest: none may leave the temp folder
    const outside = manifest.datasets.flatMap((d) => d.files.map((f) => f.path)).filter((p) => pathInside(dir, p) === undefined)
    if (outside.length > 0) {
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
      return yield* new StorageError({
        message: `${url}/manifest.json lists paths that leave the release (${outside.slice(0, 3).join(", ")}): refusing to download it`
      })
    }
    for (const d of manifest.datasets)
      for (const f of d.files) {
        const body = yield* Effect.tryPromise({
          try: async () => {
            const { GetObjectCommand } = await import("@aws-sdk/client-s3")
            const r = await (await s3.client()).send(
              new GetObjectCommand({ Bucket: loc.bucket, Key: loc.prefix ? `${loc.prefix}/${f.path}` : f.path })
            )
            return Buffer.from(await r.Body!.transformToByteArray())
          },
          catch: () => undefined
        }).pipe(Effect.orElseSucceed(() => undefined))
        if (body === undefined) continue // validate reports it missing
        const to = pathInside(dir, f.path)!
        yield* Effect.promise(async () => {
          await makeFolder(dirname(to))
          await writeFile(to, body)
        })
      }
    return dir
  })

export const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
