/**
 * Object storage for users outgrowing one machine: uploads of a local folder's committed files to
 * `s3://bucket/prefix` through @aws-sdk/client-s3 (any S3-compatible store with --s3-endpoint).
 * Data files go first and manifests last, so a reader that trusts the manifest never sees a
 * partial upload. Credentials come from the AWS SDK's default chain.
 */
import type { S3Client } from "@aws-sdk/client-s3"
import { createReadStream } from "node:fs"
import { join } from "node:path"
import { Data, Effect } from "effect"

export class StorageError extends Data.TaggedError("StorageError")<{ readonly message: string }> {}

export interface S3Location {
  readonly bucket: string
  readonly prefix: string
}

export const isS3Url = (s: string) => s.startsWith("s3://")

export const parseS3Url = (url: string): S3Location => {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/(.*))?$/.exec(url)
  if (!m) throw new StorageError({ message: `"${url}" is not an s3://bucket/prefix URL` })
  return { bucket: m[1], prefix: (m[3] ?? "").replace(/^\/+|\/+$/g, "") }
}

/** The AWS SDK, loaded on first use: only runs that read or write s3:// pay its start-up. */
const sdk = () => import("@aws-sdk/client-s3")

/** Node's major version, below which the AWS SDK's releases after January 2027 will not run. */
const SDK_FUTURE_NODE = 22
/** The AWS SDK's own switch for its notice on older Node versions. */
const SDK_NOTICE_SWITCH = "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED"
let noticeSaid = false

/**
 * Makes an S3 client without the AWS SDK's notice on Node 20 (that its releases after January 2027
 * need Node 22): eight lines through process.emitWarning, in the middle of a command's output. The
 * version pinned here supports Node 20, so it is said in one line instead, once per process, on
 * stderr. The SDK decides once per process, when its first client is made, and reads its switch
 * then: the switch is set for that moment only, so that child processes (and the user's later
 * clients) do not inherit it; a switch the user set, either way, is left to the SDK.
 */
const withoutSdkNodeNotice = <A>(make: () => A): A => {
  if (process.env[SDK_NOTICE_SWITCH] !== undefined) return make()
  if (!noticeSaid && Number(process.versions.node.split(".")[0]) < SDK_FUTURE_NODE)
    console.error(
      `chain-lake: note: AWS SDK releases after January 2027 need Node ${SDK_FUTURE_NODE} or newer; this is Node ${process.versions.node}, which the SDK version chain-lake pins supports`
    )
  noticeSaid = true
  process.env[SDK_NOTICE_SWITCH] = "true"
  try {
    return make()
  } finally {
    delete process.env[SDK_NOTICE_SWITCH]
  }
}

/** An S3 client made on first use. */
export interface S3 {
  readonly client: () => Promise<S3Client>
}

export const makeS3 = (endpoint?: string): S3 => {
  let client: Promise<S3Client> | undefined
  return {
    client: () =>
      (client ??= sdk().then(({ S3Client }) =>
        withoutSdkNodeNotice(
          () =>
            new S3Client({
              region: process.env.AWS_REGION ?? "us-east-1",
              ...(endpoint ? { endpoint, forcePathStyle: true } : {})
              // credentials: the SDK's default chain (environment, profiles and SSO, web identity as in
              // Kubernetes IRSA, instance and container roles), never fixed ones
            })
        )
      ))
  }
}

const key = (loc: S3Location, rel: string) => (loc.prefix ? `${loc.prefix}/${rel}` : rel)

const fail = (what: string) => (e: unknown) =>
  new StorageError({ message: `${what}: ${(e as Error).name === "NoSuchBucket" ? "no such bucket" : (e as Error).message}` })

export const exists = (s3: S3, loc: S3Location, rel: string) =>
  Effect.tryPromise({
    try: async () => {
      try {
        await (await s3.client()).send(new (await sdk()).HeadObjectCommand({ Bucket: loc.bucket, Key: key(loc, rel) }))
        return true
      } catch (e) {
        if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false
        throw e
      }
    },
    catch: fail(`cannot reach s3://${loc.bucket}/${key(loc, rel)}`)
  })

export const download = (s3: S3, loc: S3Location, rel: string) =>
  Effect.tryPromise({
    try: async () => {
      try {
        const r = await (await s3.client()).send(new (await sdk()).GetObjectCommand({ Bucket: loc.bucket, Key: key(loc, rel) }))
        return await r.Body!.transformToString()
      } catch (e) {
        if ((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined
        throw e
      }
    },
    catch: fail(`cannot read s3://${loc.bucket}/${key(loc, rel)}`)
  })

/**
 * Uploads `files` (relative to `dir`), streamed from disk; a file past one part (8 MB) goes up as
 * a multipart upload (parts retried one by one, no 5 GB single-PUT cap). Callers put manifests last.
 */
export const upload = (s3: S3, dir: string, loc: S3Location, files: ReadonlyArray<string>, concurrency = 4) =>
  Effect.forEach(
    files,
    (rel) =>
      Effect.tryPromise({
        try: async () => {
          const { Upload } = await import("@aws-sdk/lib-storage")
          await new Upload({
            client: await s3.client(),
            params: { Bucket: loc.bucket, Key: key(loc, rel), Body: createReadStream(join(dir, rel)) },
            partSize: 8 * 1024 * 1024,
            queueSize: 2
          }).done()
        },
        catch: fail(`upload of ${rel} to s3://${loc.bucket}/${key(loc, rel)} failed`)
      }),
    { concurrency, discard: true }
  )

/** Keys under `rel` (a folder, with its trailing slash), relative to it, in name order, with when each was written; only those named after `after` when given. */
export const listEntries = (s3: S3, loc: S3Location, rel: string, after?: string) =>
  Effect.tryPromise({
    try: async () => {
      const out: Array<{ readonly name: string; readonly modified: Date }> = []
      let token: string | undefined
      do {
        const r = await (await s3.client()).send(
          new (await sdk()).ListObjectsV2Command({
            Bucket: loc.bucket,
            Prefix: key(loc, rel),
            ContinuationToken: token,
            ...(after !== undefined && !token ? { StartAfter: key(loc, rel + after) } : {})
          })
        )
        for (const c of r.Contents ?? [])
          if (c.Key) out.push({ name: c.Key.slice(key(loc, rel).length), modified: c.LastModified ?? new Date(0) })
        token = r.IsTruncated ? r.NextContinuationToken : undefined
      } while (token)
      // a store that ignores StartAfter is held to it here
      return out.filter((e) => after === undefined || e.name > after).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    },
    catch: fail(`cannot list s3://${loc.bucket}/${key(loc, rel)}`)
  })

/** Keys under `rel` (a folder, with its trailing slash), relative to it, in name order; only those named after `after` when given. */
export const list = (s3: S3, loc: S3Location, rel: string, after?: string) =>
  Effect.map(listEntries(s3, loc, rel, after), (entries) => entries.map((e) => e.name))

/** Writes one object from memory. */
export const put = (s3: S3, loc: S3Location, rel: string, body: string) =>
  Effect.tryPromise({
    try: async () => (await s3.client()).send(new (await sdk()).PutObjectCommand({ Bucket: loc.bucket, Key: key(loc, rel), Body: body })),
    catch: fail(`upload to s3://${loc.bucket}/${key(loc, rel)} failed`)
  })

/** Downloads one object to a local file, streamed (a data file, possibly large). */
export const downloadFile = (s3: S3, loc: S3Location, rel: string, path: string) =>
  Effect.tryPromise({
    try: async () => {
      const { pipeline } = await import("node:stream/promises")
      const { createWriteStream } = await import("node:fs")
      const r = await (await s3.client()).send(new (await sdk()).GetObjectCommand({ Bucket: loc.bucket, Key: key(loc, rel) }))
      await pipeline(r.Body as NodeJS.ReadableStream, createWriteStream(path))
    },
    catch: fail(`cannot read s3://${loc.bucket}/${key(loc, rel)}`)
  })

/** A key as CopySource wants it: URL-encoded, but `=` of the Hive folders kept (a sub-delimiter paths allow, which some stores do not decode). */
const copySource = (k: string) =>
  k
    .split("/")
    .map((part) => encodeURIComponent(part).replace(/%3D/g, "="))
    .join("/")

/** Copies one object to another key of the same bucket, server side. */
export const copy = (s3: S3, loc: S3Location, from: string, to: string) =>
  Effect.tryPromise({
    try: async () =>
      (await s3.client()).send(
        new (await sdk()).CopyObjectCommand({
          Bucket: loc.bucket,
          CopySource: `${loc.bucket}/${copySource(key(loc, from))}`,
          Key: key(loc, to)
        })
      ),
    catch: fail(`cannot copy s3://${loc.bucket}/${key(loc, from)} to ${key(loc, to)}`)
  })

/** Deletes one object (none there is no error). */
export const remove = (s3: S3, loc: S3Location, rel: string) =>
  Effect.tryPromise({
    try: async () => (await s3.client()).send(new (await sdk()).DeleteObjectCommand({ Bucket: loc.bucket, Key: key(loc, rel) })),
    catch: fail(`cannot delete s3://${loc.bucket}/${key(loc, rel)}`)
  })
