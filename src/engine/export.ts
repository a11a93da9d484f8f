/**
 * The export engine: plans, pages, validates, writes and checkpoints any dataset declared with
 * the types in Dataset.ts. It knows no dataset by name.
 *
 * Append-only sources are split into shards that run concurrently under the shared request
 * limits: height sources (blocks) by height range, with a constructed {"height": a-1} cursor for
 * the first page; position sources (the tx families) by row position, first page by offset, then
 * the cursor, stopping after the shard's row count (sequences are contiguous, and the chain never
 * rewrites history). Shards come in a multiple of `concurrency`, of equal size, so that no worker
 * idles while the last shards finish; a page is parsed when it arrives and each record decoded
 * just before its rows are appended (pageDecode.ts), so rows never outlive their page. Each
 * shard writes one file per height bucket it touches (more when a file grows past `flushBytes`)
 * and commits them with the range they complete, so a rerun resumes exactly where committed data
 * ends, with no duplicates. Snapshot datasets read offset-paged lists at a watermark, drop
 * duplicate keys, and re-read when the watermark moved under them.
 */
import { appendFile, mkdir, rename } from "node:fs/promises"
import { join } from "node:path"
import { Data, Effect, Stream } from "effect"
import { type IndexerError, IndexerDecodeError, IndexerHttpError, IndexerPagingError, IndexerTruncatedBody } from "../indexer/errors.js"
import { IndexerClient, type IndexerClientService, type PageRequest } from "../indexer/IndexerClient.js"
import { cursorWalk, fetchPage, type ListRequest, type PageInfo } from "../indexer/paginate.js"
import type { Status } from "../indexer/schemas.js"
import { Checkpoints, type CheckpointError, type CommittedFile } from "./Checkpoints.js"
import type { AppendDataset, AppendSource, Dataset, Row, SnapshotDataset, Watermark } from "./Dataset.js"
import { ParquetSink, type ParquetWriter, type SinkError } from "./ParquetSink.js"
import { decodeRecord, isInvalid, parsePage, type ParsedPage } from "./pageDecode.js"
import { covers, normalize, split, subtract, total as rangeTotal, type Range } from "./RangeSet.js"

export class ExportError extends Data.TaggedError("ExportError")<{ readonly message: string }> {}

export interface ExportOptions {
  /** dataset names; default: every dataset the chain serves */
  readonly datasets?: ReadonlyArray<string>
  /** denoms for holders; default: the denoms seen in the exported blocks' total_fee */
  readonly denoms?: ReadonlyArray<string>
  readonly fromHeight?: number
  /** default: the tip seen at start (or the source's watermark, if lower) */
  readonly toHeight?: number
  readonly pageSize?: number
  readonly concurrency?: number
  readonly onInvalid?: "fail" | "quarantine"
  readonly bucketWidth?: number
  /** start a new file once a writer holds this many bytes of strings */
  readonly flushBytes?: number
  /** largest shard (heights or rows); shards are smaller when that keeps every worker busy */
  readonly maxShardUnits?: number
  readonly dryRun?: boolean
  readonly observer?: ExportObserver
}

/** Progress reports; the CLI renders them as bars or log lines. */
export interface ExportObserver {
  readonly notice?: (message: string) => void
  readonly planned?: (dataset: string, plan: DatasetPlan) => void
  readonly rows?: (dataset: string, rows: number) => void
  readonly committed?: (dataset: string, file: CommittedFile) => void
  readonly done?: (dataset: string, result: DatasetResult) => void
}

export interface DatasetPlan {
  readonly dataset: string
  readonly kind: "append" | "snapshot"
  readonly unit: "height" | "position" | "snapshot"
  readonly heights: readonly [number, number] | null
  /** units (heights or rows) to fetch in this run, and already committed */
  readonly todo: number
  readonly done: number
  readonly shards: number
  readonly estimatedRequests: number
  readonly watermark?: number
}

export interface DatasetResult {
  readonly dataset: string
  readonly rows: number
  readonly files: number
  readonly bytes: number
  readonly skipped?: string
  readonly quarantined: number
  readonly snapshotHeight?: number
  readonly consistency?: "exact" | "best-effort"
}

export interface ExportReport {
  readonly startedAt: string
  readonly finishedAt: string
  readonly chainId: string
  readonly tip: number
  readonly datasets: ReadonlyArray<DatasetResult>
  readonly plans: ReadonlyArray<DatasetPlan>
  readonly dryRun: boolean
}

type Env = IndexerClient | ParquetSink | Checkpoints
type Failure = IndexerError | SinkError | CheckpointError | ExportError

const b64 = (s: string) => Buffer.from(s).toString("base64")

/** Suffix of finished files a shard has not committed yet: complete, but no reader's glob matches them. */
export const PENDING = ".pending"

const publishPending = (dir: string, files: ReadonlyArray<CommittedFile>) =>
  Effect.tryPromise({
    try: async () => {
      for (const f of files) await rename(join(dir, f.path) + PENDING, join(dir, f.path))
    },
    catch: (e) => new ExportError({ message: `could not commit files in ${dir}: ${(e as Error).message}` })
  })
const pad = (n: number) => String(n).padStart(12, "0")

const watermarkOf = (status: Status, w: Watermark): number | undefined =>
  w === "height" ? status.height : w === "internal_tx_height" ? status.internal_tx_height : status.rich_list_height

/** Whether the chain serves EVM routes (they answer 404 on Move/Wasm rollups). */
const probeEvm = (indexer: IndexerClientService) =>
  indexer.evmTxs({ limit: 1 }).pipe(
    Effect.as(true),
    Effect.catchIf(
      (e): e is IndexerHttpError => e._tag === "IndexerHttpError" && e.status === 404,
      () => Effect.succeed(false)
    )
  )

/**
 * Position of the first row whose height is >= `height` in an ascending position source
 * (binary search over single-row probes; probes are cached).
 */
const makePositionFinder = (indexer: IndexerClientService, source: AppendSource) => {
  const req: ListRequest = { endpoint: source.endpoint, path: source.path, arrayKey: source.arrayKey }
  const probes = new Map<number, number | null>()
  const heightAt = (pos: number) =>
    probes.has(pos)
      ? Effect.succeed(probes.get(pos)!)
      : fetchPage(indexer, req, { offset: pos, limit: 1, reverse: false }).pipe(
          Effect.map((p) => {
            const h = p.records.length > 0 ? source.heightOf(p.records[0]) : null
            probes.set(pos, h)
            return h
          })
        )
  /** number of rows: `total` is MAX(sequence), equal to the count while sequences are contiguous */
  const count = fetchPage(indexer, req, { limit: 1, reverse: false }).pipe(
    Effect.flatMap((p) => {
      const total = Number(p.total)
      if (!Number.isFinite(total) || total < 0) return Effect.fail(new ExportError({ message: `${source.endpoint} reports total ${p.total}; cannot plan position shards` }))
      if (total === 0) return Effect.succeed(0)
      return heightAt(total - 1).pipe(
        Effect.flatMap((h) =>
          h === null ? Effect.fail(new ExportError({ message: `${source.endpoint}: total ${total} but no row at position ${total - 1}: sequences are not contiguous` })) : Effect.succeed(total)
        )
      )
    })
  )
  const firstAtOrAbove = (height: number, rows: number) =>
    Effect.gen(function* () {
      // the common cases need no search: everything is below `height`, or everything above it
      // Stryker disable all: shortcuts; without them the search below finds the same position (more probes)
      if (rows === 0) return 0
      const last = yield* heightAt(rows - 1)
      if (last !== null && last < height) return rows
      const first = yield* heightAt(0)
      if (first !== null && first >= height) return 0
      // Stryker restore all
      let lo = 0
      let hi = rows
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2)
        const h = yield* heightAt(mid)
        if (h !== null && h >= height) hi = mid
        else lo = mid + 1
      }
      return lo
    })
  return { count, firstAtOrAbove }
}

/** A shard's open file for one dataset and height bucket, with the heights staged in it. */
interface ShardWriter {
  readonly writer: ParquetWriter
  readonly dataset: AppendDataset
  readonly bucket: number
  part: number
  minHeight: number
  maxHeight: number
}

interface ShardWriters {
  readonly byKey: Map<string, ShardWriter>
  readonly files: Map<string, Array<CommittedFile>>
}

/** Exports the datasets of `catalog` that `options` selects. */
export const runExport = (catalog: ReadonlyArray<Dataset>, options: ExportOptions = {}): Effect.Effect<ExportReport, Failure, Env> =>
  Effect.gen(function* () {
    const indexer = yield* IndexerClient
    const sink = yield* ParquetSink
    const checkpoints = yield* Checkpoints
    const observer = options.observer ?? {}
    const notice = (m: string) => observer.notice?.(m)
    const pageSize = options.pageSize ?? 500
    const concurrency = options.concurrency ?? 8
    const bucketWidth = options.bucketWidth ?? 10_000
    // DuckDB holds what a writer has staged: this bounds memory per shard in flight
    const flushBytes = options.flushBytes ?? 24 * 1024 * 1024
    const maxShardUnits = options.maxShardUnits ?? 100_000
    const onInvalid = options.onInvalid ?? "fail"
    const startedAt = new Date().toISOString()
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) return yield* new ExportError({ message: `--page-size must be 1..1000 (the indexer's limit), got ${pageSize}` })

    const unknown = (options.datasets ?? []).filter((n) => !catalog.some((d) => d.name === n))
    if (unknown.length > 0)
      return yield* new ExportError({ message: `unknown dataset ${unknown.join(", ")}; known: ${catalog.map((d) => d.name).join(", ")}` })
    let selected: Array<Dataset> = catalog.filter((d) => !options.datasets || options.datasets.includes(d.name))

    const needsEvm = selected.some((d) => (d.kind === "append" ? d.source.evmOnly : d.evmOnly))
    // the lowest height each height source serves (a pruned node starts above 1); asked together
    // with /status and the EVM probe, since each is a round trip before any shard can start
    const heightSources = [...new Map(selected.flatMap((d) => (d.kind === "append" && d.source.unit === "height" ? [[d.source.id, d.source] as const] : []))).values()]
    const lowestHeight = (source: AppendSource) =>
      fetchPage(indexer, { endpoint: source.endpoint, path: source.path, arrayKey: source.arrayKey }, { limit: 1, reverse: false }).pipe(
        Effect.map((p) => (p.records.length > 0 ? source.heightOf(p.records[0]) : 1)),
        Effect.either
      )
    const [status, isEvm, lowestProbes] = yield* Effect.all(
      [indexer.status, needsEvm ? probeEvm(indexer) : Effect.succeed(true), Effect.forEach(heightSources, (s) => lowestHeight(s).pipe(Effect.map((e) => [s.id, e] as const)), { concurrency: "unbounded" })],
      { concurrency: "unbounded" }
    )
    const lowestBySource = new Map(lowestProbes)
    const results: Array<DatasetResult> = []
    const plans: Array<DatasetPlan> = []
    if (!isEvm) {
      for (const d of selected.filter((d) => (d.kind === "append" ? d.source.evmOnly : d.evmOnly))) {
        notice(`${d.name}: skipped, this chain has no EVM routes (Move/Wasm rollup)`)
        results.push({ dataset: d.name, rows: 0, files: 0, bytes: 0, quarantined: 0, skipped: "not an EVM chain" })
      }
      selected = selected.filter((d) => !(d.kind === "append" ? d.source.evmOnly : d.evmOnly))
    }
    if (options.fromHeight !== undefined && options.toHeight !== undefined && options.fromHeight > options.toHeight)
      return yield* new ExportError({ message: `--from-height ${options.fromHeight} is above --to-height ${options.toHeight}` })

    const quarantineDir = join(checkpoints.root, "_quarantine")
    let quarantinedBySource = new Map<string, number>()
    const quarantine = (source: AppendSource, issue: IndexerDecodeError, record: unknown) =>
      Effect.promise(async () => {
        await mkdir(quarantineDir, { recursive: true })
        await appendFile(join(quarantineDir, `${source.id}.ndjson`), JSON.stringify({ endpoint: issue.endpoint, key: issue.key, path: issue.path, message: issue.message, record }) + "\n")
        quarantinedBySource.set(source.id, (quarantinedBySource.get(source.id) ?? 0) + 1)
      })

    // ------------------------------------------------------------------ append-only sources

    const appendGroups = new Map<string, Array<AppendDataset>>()
    for (const d of selected) if (d.kind === "append") appendGroups.set(d.source.id, [...(appendGroups.get(d.source.id) ?? []), d])

    for (const group of appendGroups.values()) {
      const source = group[0].source
      const watermark = watermarkOf(status, source.watermark)
      if (watermark === undefined || watermark < 1) {
        for (const d of group) {
          notice(`${d.name}: skipped, /status has no ${source.watermark} (the indexer does not serve it)`)
          results.push({ dataset: d.name, rows: 0, files: 0, bytes: 0, quarantined: 0, skipped: `no ${source.watermark}` })
        }
        continue
      }
      const lowest = source.unit === "height" ? yield* lowestBySource.get(source.id)! : 1
      const fromH = Math.max(options.fromHeight ?? lowest, lowest)
      const toH = Math.min(options.toHeight ?? watermark, watermark)
      if (options.toHeight !== undefined && options.toHeight > watermark)
        notice(`${group.map((d) => d.name).join(", ")}: --to-height ${options.toHeight} is above ${source.watermark} ${watermark}; exporting to ${watermark}`)

      let range: Range = [0, 0]
      if (toH >= fromH) {
        if (source.unit === "height") range = [fromH, toH + 1]
        else {
          const finder = makePositionFinder(indexer, source)
          const rows = yield* finder.count
          const start = fromH <= 1 ? 0 : yield* finder.firstAtOrAbove(fromH, rows)
          const end = yield* finder.firstAtOrAbove(toH + 1, rows)
          range = [start, end]
        }
      }
      const manifests = new Map<string, ReadonlyArray<Range>>()
      for (const d of group) {
        // a dry run only reads: opening would start manifests and clear leftovers
        const m = options.dryRun ? yield* checkpoints.get(d.name) : yield* checkpoints.open(d.name, source.unit, d.columns)
        manifests.set(d.name, m?.committed ?? [])
      }
      // what some dataset of the group still lacks; cut at every committed boundary so that each
      // shard is wanted by a fixed set of datasets
      const wanted = normalize(group.flatMap((d) => subtract(range, manifests.get(d.name)!)))
      const cuts = group.flatMap((d) => manifests.get(d.name)!.flatMap(([a, b]) => [a, b]))
      const todo = rangeTotal(wanted)
      // a multiple of `concurrency` shards of equal size, so that every round of shards keeps every
      // worker busy to the end (the last round is where a sharded export loses time)
      const shardCount = concurrency * Math.max(1, Math.ceil(todo / (maxShardUnits * concurrency)))
      const shardSize = Math.max(pageSize, Math.ceil(todo / shardCount))
      const shards = split(wanted, shardSize, cuts)
      for (const d of group) {
        const plan: DatasetPlan = {
          dataset: d.name,
          kind: "append",
          unit: source.unit,
          heights: toH >= fromH ? [fromH, toH] : null,
          todo: rangeTotal(subtract(range, manifests.get(d.name)!)),
          done: rangeTotal([range]) - rangeTotal(subtract(range, manifests.get(d.name)!)),
          shards: shards.length,
          estimatedRequests: shards.reduce((s, [a, b]) => s + Math.ceil((b - a) / pageSize), 0),
          watermark
        }
        plans.push(plan)
        observer.planned?.(d.name, plan)
      }
      if (options.dryRun) continue

      const totals = new Map(group.map((d) => [d.name, { rows: 0, files: 0, bytes: 0 }]))
      const runShard = ([a, b]: Range) =>
        Effect.gen(function* () {
          const targets = group.filter((d) => !covers(manifests.get(d.name)!, [a, b]))
          const writers: ShardWriters = { byKey: new Map(), files: new Map(targets.map((d) => [d.name, []])) }
          const fileName = (bucket: number, part: number) =>
            `height_bucket=${bucket}/part-${source.unit === "height" ? "h" : "p"}${pad(a)}-${pad(b)}-${part}.parquet`
          const flush = (w: ShardWriter) =>
            Effect.gen(function* () {
              if (w.writer.rows() === 0) return
              const rel = fileName(w.bucket, w.part++)
              // written under a name no reader globs (*.parquet.pending) until the shard commits
              const written = yield* w.writer.finish(join(checkpoints.root, w.dataset.name, rel) + PENDING)
              writers.files.get(w.dataset.name)!.push({ path: rel, rows: written.rows, bytes: written.bytes, sha256: written.sha256, range: [a, b], min_height: w.minHeight, max_height: w.maxHeight, committed_at: new Date().toISOString() })
              w.minHeight = Infinity
              w.maxHeight = -Infinity
            })
          // the writer each target dataset used last: consecutive records nearly always share a bucket
          const current: Array<ShardWriter | undefined> = targets.map(() => undefined)
          const writerFor = (t: number, height: number) =>
            Effect.gen(function* () {
              const d = targets[t]
              const bucket = Math.floor(height / bucketWidth) * bucketWidth
              const key = `${d.name}/${bucket}`
              let w = writers.byKey.get(key)
              if (!w) {
                w = { writer: yield* sink.openWriter(d.columns, d.sortKey), dataset: d, bucket, part: 0, minHeight: Infinity, maxHeight: -Infinity }
                writers.byKey.set(key, w)
              }
              current[t] = w
              return w
            })
          /*
           * Each record is decoded just before its rows are appended, in the step that parsed the
           * page, and dropped once its rows are made: nothing of a page outlives it. (Against
           * whole pages decoded on arrival and buffered one per shard: scavenges ~20% cheaper,
           * GC in all about the same, one buffer and one page type fewer.) Only a new bucket's
           * writer, a flush and quarantine wait (slow paths, a few per file).
           */
          const ingest = (page: Extract<ParsedPage, { _tag: "Page" }>, key: string | null) =>
            Effect.gen(function* () {
              const flushes = new Set<ShardWriter>()
              for (let i = 0; i < page.items.length; i++) {
                const record = decodeRecord(page.items[i], page.latin1, source, targets)
                // the parsed record is not needed past here: let the GC have it mid-page
                ;(page.items as Array<unknown>)[i] = undefined
                if (isInvalid(record)) {
                  const { issue } = record
                  const err = new IndexerDecodeError({ endpoint: source.endpoint, key, path: `${source.arrayKey}[${i}]${issue.path ? (issue.path.startsWith("[") ? "" : ".") + issue.path : ""}`, message: issue.message })
                  if (onInvalid === "fail") return yield* err
                  yield* quarantine(source, err, record.record)
                  continue
                }
                const h = record.height
                if (source.unit === "height" && (h < a || h >= b))
                  return yield* new IndexerPagingError({ endpoint: source.endpoint, key, message: `height ${h} is outside the shard ${a}..${b - 1}` })
                for (let t = 0; t < targets.length; t++) {
                  const d = targets[t]
                  const rows = record.rows[t]
                  for (const row of rows) {
                    const height = Number(row[d.heightColumn])
                    const last = current[t]
                    const w = last && height >= last.bucket && height < last.bucket + bucketWidth ? last : yield* writerFor(t, height)
                    w.writer.append(row)
                    if (height < w.minHeight) w.minHeight = height
                    if (height > w.maxHeight) w.maxHeight = height
                    if (w.writer.stagedBytes() > flushBytes) flushes.add(w)
                  }
                  totals.get(d.name)!.rows += rows.length
                  observer.rows?.(d.name, rows.length)
                }
              }
              // after the page: a writer may pass flushBytes by at most one page
              for (const w of flushes) yield* flush(w)
            })
          // the first page by a constructed height cursor (blocks) or by offset (positions), then
          // the cursor
          const first =
            source.unit === "height"
              ? { key: b64(JSON.stringify({ height: a - 1 })), limit: Math.min(pageSize, b - a), reverse: false }
              : { offset: a, limit: Math.min(pageSize, b - a), reverse: false }
          // a page is fetched as bytes and parsed in one step (a body that is not JSON is a
          // truncated response, retried like one), then written
          const fetchAndWrite = (request: PageRequest): Effect.Effect<PageInfo, Failure> => {
            const key = request.key ?? null
            return indexer
              .getWith(source.endpoint, source.path, indexer.pageQuery(request), (raw) => {
                const page = parsePage(raw.bytes, source)
                if (page._tag === "Truncated") return Effect.fail(new IndexerTruncatedBody({ url: raw.url, bytes: page.bytes }))
                if (page._tag === "BadEnvelope") return Effect.fail(new IndexerDecodeError({ endpoint: source.endpoint, key, path: page.issue.path, message: page.issue.message }))
                return Effect.succeed(page)
              })
              .pipe(Effect.flatMap((page) => ingest(page, key).pipe(Effect.as({ key, nextKey: page.nextKey, count: page.items.length }))))
          }
          let seen = 0
          yield* Stream.runForEach(cursorWalk(source.endpoint, fetchAndWrite, { first, maxRows: b - a }), (page) =>
            Effect.sync(() => {
              seen += page.count
            })
          )
          if (seen !== b - a)
            return yield* new IndexerPagingError({
              endpoint: source.endpoint,
              key: null,
              message: `expected ${b - a} rows for ${source.unit}s ${a}..${b - 1}, the listing ended after ${seen}`
            })
          for (const w of writers.byKey.values()) yield* flush(w)
          // the commit: pending files renamed into place, then the manifest; not interruptible, so
          // a stop (Ctrl-C) lands before or after it, never between a visible file and its entry
          yield* Effect.uninterruptible(
            Effect.forEach(targets, (d) =>
              Effect.gen(function* () {
                const files = writers.files.get(d.name)!
                yield* publishPending(join(checkpoints.root, d.name), files)
                yield* checkpoints.commitFiles(d.name, files, [a, b])
                const t = totals.get(d.name)!
                t.files += files.length
                t.bytes += files.reduce((s, f) => s + f.bytes, 0)
                for (const f of files) observer.committed?.(d.name, f)
              })
            )
          )
        })

      // writers hold DuckDB connections: close them whatever happens to the shard
      const runShardClosing = (r: Range) =>
        Effect.suspend(() => {
          const opened: Array<ParquetWriter> = []
          const tracking = { ...sink, openWriter: (...args: Parameters<typeof sink.openWriter>) => sink.openWriter(...args).pipe(Effect.tap((w) => opened.push(w))) }
          return runShard(r).pipe(
            Effect.provideService(ParquetSink, tracking),
            Effect.ensuring(Effect.forEach(opened, (w) => w.close(), { discard: true }))
          )
        })

      yield* Effect.forEach(shards, runShardClosing, { concurrency, discard: true })
      for (const d of group) {
        const t = totals.get(d.name)!
        const result: DatasetResult = { dataset: d.name, ...t, quarantined: quarantinedBySource.get(source.id) ?? 0 }
        results.push(result)
        observer.done?.(d.name, result)
      }
    }

    // ------------------------------------------------------------------ snapshots

    for (const d of selected) {
      if (d.kind !== "snapshot") continue
      const result = yield* runSnapshot(d, options, status, plans, notice)
      results.push(result)
      observer.done?.(d.name, result)
    }

    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      chainId: status.chain_id,
      tip: status.height,
      datasets: results,
      plans,
      dryRun: options.dryRun === true
    }
  })

const runSnapshot = (d: SnapshotDataset, options: ExportOptions, startStatus: Status, plans: Array<DatasetPlan>, notice: (m: string) => void) =>
  Effect.gen(function* () {
    const indexer = yield* IndexerClient
    const sink = yield* ParquetSink
    const checkpoints = yield* Checkpoints
    const empty: DatasetResult = { dataset: d.name, rows: 0, files: 0, bytes: 0, quarantined: 0 }
    const before = watermarkOf(startStatus, d.watermark)
    if (before === undefined || before < 1) {
      notice(`${d.name}: skipped, /status has no ${d.watermark}`)
      return { ...empty, skipped: `no ${d.watermark}` }
    }
    // a dry run only reads: opening would start the manifest and clear leftovers
    const manifest = options.dryRun ? yield* checkpoints.get(d.name) : yield* checkpoints.open(d.name, "snapshot", d.columns)
    let denoms = options.denoms ?? []
    if (d.needsDenoms && denoms.length === 0) denoms = yield* denomsFromBlocks(checkpoints.root)
    if (d.needsDenoms && denoms.length === 0) {
      notice(`${d.name}: skipped, no denoms: pass --denoms, or export blocks first (their total_fee denoms are the default)`)
      return { ...empty, skipped: "no denoms" }
    }
    const plan: DatasetPlan = { dataset: d.name, kind: "snapshot", unit: "snapshot", heights: [before, before], todo: 1, done: 0, shards: 1, estimatedRequests: 1, watermark: before }
    plans.push(plan)
    options.observer?.planned?.(d.name, plan)
    if (options.dryRun) return empty
    if (!manifest) return yield* new ExportError({ message: `${d.name}: no manifest after opening it` })
    const prior = manifest.snapshots.find((s) => s.snapshot_height === before)
    const allLists = yield* d.lists({ indexer, denoms })
    const lists = allLists.filter((l) => !prior?.lists.includes(l.label))
    if (lists.length === 0) {
      notice(`${d.name}: snapshot at height ${before} is already committed`)
      return { ...empty, skipped: `snapshot ${before} already committed`, snapshotHeight: before }
    }
    const pageSize = options.pageSize ?? 500
    const writer = yield* Effect.acquireRelease(sink.openWriter(d.columns, d.sortKey), (w) => w.close())
    const maxReads = 3
    let reads = 0
    let rows = 0
    let duplicates = 0
    let after = before
    let consistent = false
    let snapshotTime = ""
    while (reads < maxReads && !consistent) {
      reads++
      if (reads > 1) yield* writer.discard()
      const statusBefore = reads === 1 ? startStatus : yield* indexer.status
      const mark = watermarkOf(statusBefore, d.watermark) ?? before
      snapshotTime = new Date().toISOString()
      const seen = new Set<string>()
      rows = 0
      duplicates = 0
      let shortOfTotal = false
      for (const list of lists) {
        let key: string | null = null
        let listRows = 0
        let total = -1
        const keys = new Set<string>()
        for (;;) {
          const page: { items: ReadonlyArray<unknown>; pagination: { next_key: string | null; total: string } } = yield* list.fetchPage({ key, limit: pageSize, reverse: d.watermark === "rich_list_height" })
          total = Number(page.pagination.total)
          for (const item of page.items) {
            for (const row of list.toRows(item)) {
              const full = [...row, snapshotTime]
              const k = d.keyOf(full)
              listRows++
              if (seen.has(k)) {
                duplicates++
                continue
              }
              seen.add(k)
              writer.append(full)
              rows++
            }
          }
          const next = page.pagination.next_key
          if (page.items.length < pageSize || next === null) break
          if (keys.has(next)) return yield* new IndexerPagingError({ endpoint: list.label, key, message: `next_key ${next} repeated` })
          keys.add(next)
          key = next
        }
        if (total >= 0 && listRows !== total) shortOfTotal = true
      }
      const statusAfter = yield* indexer.status
      after = watermarkOf(statusAfter, d.watermark) ?? mark
      consistent = after === mark && duplicates === 0 && !shortOfTotal
      if (!consistent && reads < maxReads)
        notice(`${d.name}: the ${d.watermark} moved (${mark} → ${after}) or pages overlapped (${duplicates} duplicates) during the read; reading again`)
    }
    const height = before
    const rel = `snapshot_height=${height}/part-${manifest.files.filter((f) => f.path.startsWith(`snapshot_height=${height}/`)).length}.parquet`
    // file and manifest entry together: a stop lands before or after, not between
    const { written, file } = yield* Effect.uninterruptible(
      Effect.gen(function* () {
        const written = yield* writer.finish(join(checkpoints.root, d.name, rel))
        const file: CommittedFile = { path: rel, rows: written.rows, bytes: written.bytes, sha256: written.sha256, min_height: height, max_height: height, committed_at: new Date().toISOString() }
        yield* checkpoints.commitSnapshot(d.name, [file], {
          snapshot_height: height,
          snapshot_time: snapshotTime,
          consistency: consistent ? "exact" : "best-effort",
          watermark_before: before,
          watermark_after: after,
          rows: written.rows,
          duplicates_dropped: duplicates,
          reads,
          lists: lists.map((l) => l.label),
          ...(consistent ? {} : { note: "the data changed while it was read; duplicates were dropped by key, but rows may be missing or from a later height" })
        })
        return { written, file }
      })
    )
    options.observer?.committed?.(d.name, file)
    options.observer?.rows?.(d.name, written.rows)
    return { ...empty, rows: written.rows, files: 1, bytes: written.bytes, snapshotHeight: height, consistency: consistent ? ("exact" as const) : ("best-effort" as const) }
  }).pipe(Effect.scoped)

/** Default denoms for holders: those in the committed blocks' total_fee. */
const denomsFromBlocks = (root: string) =>
  Effect.gen(function* () {
    const checkpoints = yield* Checkpoints
    const sink = yield* ParquetSink
    const m = yield* checkpoints.get("blocks")
    if (!m || m.files.length === 0) return [] as Array<string>
    const files = m.files.map((f) => `'${join(root, "blocks", f.path).replace(/'/g, "''")}'`).join(", ")
    const rows = yield* sink.query(
      `SELECT DISTINCT f.denom AS denom FROM (SELECT unnest(from_json(total_fee, '[{"denom":"VARCHAR","amount":"VARCHAR"}]')) AS f FROM read_parquet([${files}])) ORDER BY 1`
    )
    return rows.map((r) => String(r.denom))
  })
