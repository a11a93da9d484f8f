/**
 * Compaction: the small files of a partition, rewritten into files of a target size and swapped
 * into the lake in one commit (Manifests.commitCompaction), as Delta's OPTIMIZE or Iceberg's
 * rewrite_data_files do. `export --follow` commits every round and makes ~2,500 tiny files per
 * dataset an hour; every reader then opens them all.
 *
 * - A file is small below half the target size; a partition is compacted once it holds at least
 *   `minFiles` small files. The small files of append datasets are merged in runs of adjacent
 *   committed ranges (a merged file's range is their union, so ranges stay true); those of a
 *   snapshot height or of a day (samples) all together. Never across partitions: different
 *   snapshot heights are never merged.
 * - Each merge is checked: the inputs' sha256 against the manifest before they are read (a damaged
 *   file is not laundered into a new one) and the output's rows against the inputs'.
 * - The replaced files leave the dataset folder at the swap (a glob sees the old files or the new
 *   ones again) and wait out `graceMs` in the lake's retired folder, for readers that listed them
 *   before it; a later compaction deletes them (`vacuum`). chain-lake's own readers go by the
 *   manifest and read again when a file they listed was replaced meanwhile (analytics/views.ts).
 */
import { dirname } from "node:path"
import { randomBytes } from "node:crypto"
import { Data, Effect } from "effect"
import { Manifests, type CommittedFile, type Manifest } from "./Manifests.js"
import { makeFolder, sha256File } from "./files.js"
import { linkedFolderProblem } from "./listed.js"
import { withLockFile } from "./lock.js"
import { ParquetSink } from "./ParquetSink.js"
import { compactionLockPath, datasetPath, mergedFile } from "./layout.js"
import type { Range } from "./RangeSet.js"

export class CompactionError extends Data.TaggedError("CompactionError")<{ readonly message: string }> {}

export interface CompactionPolicy {
  /** the size a merged file aims at, in bytes; files from half of it up are left alone */
  readonly targetBytes: number
  /** how many small files a partition holds before it is compacted (at least 2) */
  readonly minFiles: number
}

/** Default: 128 MB files (what DuckDB, Spark and Trino read well), every partition with 2 small files or more. */
export const DEFAULT_COMPACTION: CompactionPolicy = { targetBytes: 128 * 1024 * 1024, minFiles: 2 }

/** A merge: small files of one partition that become one file. */
export interface CompactionGroup {
  readonly partition: string
  readonly files: ReadonlyArray<CommittedFile>
  /** the union of the files' committed ranges (append datasets) */
  readonly range?: Range
  readonly rows: number
  readonly bytes: number
}

/** The folder a file path is in: every layout is `<partition>/<file>` (layout.ts). */
const partitionOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf("/")))

/** Splits a run of small files into groups of at most `targetBytes` (a single file is no merge). */
const pack = (partition: string, run: ReadonlyArray<CommittedFile>, targetBytes: number): Array<CompactionGroup> => {
  const groups: Array<CompactionGroup> = []
  let current: Array<CommittedFile> = []
  const close = () => {
    if (current.length >= 2) {
      const ranges = current.flatMap((f) => (f.range ? [f.range] : []))
      groups.push({
        partition,
        files: current,
        ...(ranges.length === current.length
          ? { range: [Math.min(...ranges.map((r) => r[0])), Math.max(...ranges.map((r) => r[1]))] as const }
          : {}),
        rows: current.reduce((s, f) => s + f.rows, 0),
        bytes: current.reduce((s, f) => s + f.bytes, 0)
      })
    }
    current = []
  }
  for (const f of run) {
    if (current.length > 0 && current.reduce((s, c) => s + c.bytes, 0) + f.bytes > targetBytes) close()
    current.push(f)
  }
  close()
  return groups
}

/** What compacting `manifest` under `policy` would merge. */
export const planCompaction = (manifest: Manifest, policy: CompactionPolicy): Array<CompactionGroup> => {
  const small = policy.targetBytes / 2
  const byPartition = new Map<string, Array<CommittedFile>>()
  for (const f of manifest.files) {
    const p = partitionOf(f.path)
    byPartition.set(p, [...(byPartition.get(p) ?? []), f])
  }
  const groups: Array<CompactionGroup> = []
  for (const [partition, files] of byPartition) {
    if (files.filter((f) => f.bytes < small).length < Math.max(2, policy.minFiles)) continue
    if (manifest.unit === "height" || manifest.unit === "position") {
      // runs of adjacent ranges, in range order; a large file, or a range not yet committed, ends a run
      const ordered = [...files].sort((a, b) => (a.range?.[0] ?? 0) - (b.range?.[0] ?? 0) || (a.path < b.path ? -1 : 1))
      let run: Array<CommittedFile> = []
      let end = 0
      const flush = () => {
        groups.push(...pack(partition, run, policy.targetBytes))
        run = []
      }
      for (const f of ordered) {
        if (f.bytes >= small || !f.range) {
          flush()
          continue
        }
        if (run.length > 0 && f.range[0] > end) flush()
        end = run.length === 0 ? f.range[1] : Math.max(end, f.range[1])
        run.push(f)
      }
      flush()
    } else {
      groups.push(
        ...pack(
          partition,
          files.filter((f) => f.bytes < small).sort((a, b) => (a.path < b.path ? -1 : 1)),
          policy.targetBytes
        )
      )
    }
  }
  return groups
}

/** The name of a merged file (layout.ts), with a token of the time and random bytes: no other file has it. */
export const mergedName = (group: CompactionGroup, unit: Manifest["unit"]) =>
  mergedFile(group.partition, unit, group.range, `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`)

export interface DatasetCompaction {
  readonly dataset: string
  /** merges committed */
  readonly merged: ReadonlyArray<{
    readonly partition: string
    readonly files: number
    readonly bytesBefore: number
    readonly bytesAfter: number
    readonly rows: number
  }>
  /** merges planned but not committed: another writer replaced one of their files first (a later compaction retries) */
  readonly skipped: ReadonlyArray<string>
  /** retired files deleted (their grace period was over) */
  readonly deleted: number
  readonly filesBefore: number
  readonly filesAfter: number
}

export interface CompactOptions {
  readonly policy?: CompactionPolicy
  /** how long replaced files stay for readers that listed them before they are deleted (default 15 minutes) */
  readonly graceMs?: number
  /** plan only: read the manifest, write and delete nothing */
  readonly dryRun?: boolean
  /** called as each merge is committed, in its uninterruptible step */
  readonly onMerged?: (dataset: string, group: CompactionGroup) => void
  /** the most bytes of retired files a dataset keeps, grace or not (default: 4 times its committed bytes; see Manifests.vacuum) */
  readonly maxRetiredBytes?: number
  /**
   * Another compaction of the lake is running (another process's `compact`, a --follow run's
   * round): "wait" for it (`chain-lake compact`), or "skip" this one (a --follow round: the next
   * round compacts what is left). Default "wait".
   */
  readonly whenBusy?: "wait" | "skip"
  /** called when a compaction is skipped because another one holds the lake */
  readonly onBusy?: (message: string) => void
}

/** How long `chain-lake compact` waits for another compaction of the lake (a live one; a gone one is taken over). */
const COMPACTION_WAIT_MS = 30 * 60_000

export const DEFAULT_GRACE_MS = 15 * 60_000

/**
 * Writes the merge of `group` (its files read at `inputAt(file)`, checked against their sha256
 * first) to `output`, and returns its manifest entry as `rel`: rows must equal the inputs'.
 */
export const mergeGroup = (
  group: CompactionGroup,
  where: string,
  inputAt: (f: CommittedFile) => string,
  output: string,
  rel: string,
  sortKey: ReadonlyArray<string>
) =>
  Effect.gen(function* () {
    const sink = yield* ParquetSink
    for (const f of group.files) {
      const sha = yield* Effect.tryPromise({
        try: () => sha256File(inputAt(f)),
        catch: (e) => new CompactionError({ message: `cannot read ${where}/${f.path}: ${(e as Error).message}` })
      })
      if (sha !== f.sha256)
        return yield* new CompactionError({
          message: `${where}/${f.path} does not hold what its manifest says (sha256 differs): the file is damaged; restore it from a copy (nothing was compacted)`
        })
    }
    const written = yield* sink
      .rewrite(group.files.map(inputAt), output, sortKey)
      .pipe(Effect.mapError((e) => new CompactionError({ message: e.message })))
    if (written.rows !== group.rows)
      return yield* new CompactionError({
        message: `merging ${group.files.length} files of ${where}/${group.partition} gave ${written.rows} rows, not the ${group.rows} the manifest lists: nothing was compacted; run verify`
      })
    const heights = group.files.flatMap((f) => [f.min_height, f.max_height]).filter((h): h is number => h !== null)
    const file: CommittedFile = {
      path: rel,
      rows: written.rows,
      bytes: written.bytes,
      sha256: written.sha256,
      ...(group.range ? { range: group.range } : {}),
      min_height: heights.length > 0 ? Math.min(...heights) : null,
      max_height: heights.length > 0 ? Math.max(...heights) : null,
      committed_at: new Date().toISOString()
    }
    return file
  })

/**
 * Compacts one dataset of the lake: deletes retired files past their grace period, then merges
 * what `planCompaction` finds, one commit per merge (a stop lands between merges).
 */
export const compactDataset = (dataset: string, sortKey: ReadonlyArray<string>, options: CompactOptions = {}) =>
  Effect.gen(function* (): Effect.fn.Return<DatasetCompaction | undefined, CompactionError, Manifests | ParquetSink> {
    const manifests = yield* Manifests
    const policy = options.policy ?? DEFAULT_COMPACTION
    const fail = (e: { readonly message: string }) => new CompactionError({ message: e.message })
    // a dataset the lake does not hold is left alone: its lock alone made an empty folder of it
    if (!(yield* manifests.get(dataset).pipe(Effect.mapError(fail)))) return undefined
    const vacuum = manifests.vacuum(dataset, options.graceMs ?? DEFAULT_GRACE_MS, options.maxRetiredBytes).pipe(Effect.mapError(fail))
    const deleted = options.dryRun ? [] : [...(yield* vacuum)]
    const manifest = yield* manifests.get(dataset).pipe(Effect.mapError(fail))
    if (!manifest) return undefined
    const linked = linkedFolderProblem(
      manifests.root,
      dataset,
      manifest.files.map((f) => f.path)
    )
    if (linked) return yield* new CompactionError({ message: linked })
    const groups = planCompaction(manifest, policy)
    const merged: Array<Merge> = []
    const skipped: Array<string> = []
    if (!options.dryRun)
      for (const group of groups) {
        const path = mergedName(group, manifest.unit)
        const merging = mergeGroup(
          group,
          datasetPath(manifests.root, dataset),
          (f) => datasetPath(manifests.root, dataset, f.path),
          manifests.staged(dataset, path),
          path,
          sortKey
        )
        // an input that failed to read because another writer replaced it meanwhile (a compaction
        // of another chain-lake version, or of an S3 copy) skips the merge; one still listed fails it
        const file = yield* Effect.catchTag(merging, "CompactionError", (e) =>
          Effect.flatMap(manifests.get(dataset).pipe(Effect.mapError(fail)), (now) => {
            const listed = new Map((now?.files ?? []).map((f) => [f.path, f.sha256]))
            const gone = group.files.find((f) => listed.get(f.path) !== f.sha256)
            return gone ? Effect.succeed(`another writer replaced ${gone.path} first` as const) : Effect.fail(e)
          })
        )
        if (typeof file === "string") {
          skipped.push(`${group.partition}: ${file}`)
          continue
        }
        // told inside the commit's step: a stop right after the merge still finds it told
        const outcome = yield* Effect.uninterruptible(
          Effect.tap(manifests.commitCompaction(dataset, group.files, [file]), (o) =>
            Effect.sync(() => (o.committed ? options.onMerged?.(dataset, group) : undefined))
          )
        ).pipe(Effect.mapError(fail))
        if (!outcome.committed) {
          skipped.push(`${group.partition}: ${outcome.reason}`)
          continue
        }
        merged.push({
          partition: group.partition,
          files: group.files.length,
          bytesBefore: group.bytes,
          bytesAfter: file.bytes,
          rows: file.rows
        })
      }
    // what these merges retired counts against the byte budget at once (their grace is not waited out beyond it)
    if (merged.length > 0) deleted.push(...(yield* vacuum))
    return compactionReport(manifest, options.dryRun ? groups.map(plannedMerge) : merged, skipped, deleted.length)
  })

type Merge = DatasetCompaction["merged"][number]

/** A planned group as a dry run reports it (nothing written yet). */
export const plannedMerge = (g: CompactionGroup): Merge => ({
  partition: g.partition,
  files: g.files.length,
  bytesBefore: g.bytes,
  bytesAfter: 0,
  rows: g.rows
})

/** What compacting a dataset did (for a dry run: would do). */
export const compactionReport = (
  manifest: Manifest,
  merged: ReadonlyArray<Merge>,
  skipped: ReadonlyArray<string>,
  deleted: number
): DatasetCompaction => ({
  dataset: manifest.dataset,
  merged,
  skipped,
  deleted,
  filesBefore: manifest.files.length,
  filesAfter: manifest.files.length - merged.reduce((s, g) => s + g.files - 1, 0)
})

/**
 * Compacts each of `datasets` (name and sort key, as their modules declare them) that has a
 * manifest, holding the lake's compaction lock: two compactions of one lake (a `--follow` run's
 * rounds and a `chain-lake compact` beside it) would plan the same merges and read files the
 * other just retired, so one waits for the other, or skips (`whenBusy`). A dry run takes no lock.
 */
export const compactLake = (
  datasets: ReadonlyArray<{ readonly name: string; readonly sortKey: ReadonlyArray<string> }>,
  options: CompactOptions = {}
) =>
  Effect.gen(function* () {
    const all = Effect.map(
      Effect.forEach(datasets, (d) => compactDataset(d.name, d.sortKey, options)),
      (reports) => reports.filter((r): r is DatasetCompaction => r !== undefined)
    )
    if (options.dryRun) return yield* all
    const manifests = yield* Manifests
    // a rollback cut short leaves datasets cut and others not: merging them now would merge what is about to go
    const rollback = (yield* manifests.identity.pipe(Effect.mapError((e) => new CompactionError({ message: e.message }))))?.rollback
    if (rollback)
      return yield* new CompactionError({
        message: `a rollback of ${manifests.root} to height ${rollback.to_height} is under way or was cut short: run chain-lake rollback --data ${manifests.root} --to-height ${rollback.to_height} (or the export) first`
      })
    const lock = compactionLockPath(manifests.root)
    yield* Effect.tryPromise({
      try: () => makeFolder(dirname(lock)),
      catch: (e) => new CompactionError({ message: (e as Error).message })
    })
    const skip = options.whenBusy === "skip"
    return yield* withLockFile(lock, manifests.writer, all, skip ? 0 : COMPACTION_WAIT_MS).pipe(
      Effect.catchTag("LockError", (e) => {
        if (!skip || !/has been held/.test(e.message)) return Effect.fail(new CompactionError({ message: e.message }))
        options.onBusy?.(
          `compaction skipped: another compaction of ${manifests.root} is running (${lock}); the next round compacts what is left`
        )
        return Effect.succeed([] as Array<DatasetCompaction>)
      })
    )
  })
