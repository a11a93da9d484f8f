/**
 * Rollbacks: the lake cut back to a height, as after a reorg, or an indexer rolled back and
 * re-synced to another history. Every dataset anchored to the chain loses what it holds above the
 * height, each in one commit (Manifests.commitRollback: readers see the dataset before or after
 * it); the next export reads the new history from there.
 *
 * - Height datasets (blocks) keep exactly the heights up to it: a file holding heights on both
 *   sides is rewritten with its rows up to it.
 * - Position datasets (the tx families, ranges of list positions) lose every file from the first
 *   one holding a height above it: which positions a file's heights end at is not recorded, so
 *   a file holding heights on both sides goes whole, and the next export reads its rows up to the
 *   height again. Positions no file holds (shards that gave no rows) count as above it unless a
 *   later file starts at or below it.
 * - Snapshots taken above it (or read while the chain passed it) go whole.
 * - Router datasets (samples) are no history of this chain: untouched.
 *
 * The lake is changed in three steps, so that a stop at any moment leaves it readable or plainly
 * unfinished: the intent (the height and the datasets) is written into `_lake.json` first, and
 * readers of those datasets fail while it is there; then each dataset is cut; then the anchors
 * above the height are dropped (the lowest of them kept as the rollback's witness) and the lake's
 * newest block at or below it anchored, the rollback is logged in `_lake.json`'s `reorgs`, and
 * the intent cleared. A rollback cut short is finished by the next rollback or export, before anything else.
 */
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import { Data, Effect } from "effect"
import { Manifests, type ManifestError, type CommittedFile, type CommittedSnapshot, type Manifest } from "../lake/Manifests.js"
import { highestHeight, lowestHeight, type LakeIdentity, type Reorg } from "../lake/manifest.js"
import { mergedFile, snapshotHeightOf } from "../lake/layout.js"
import { linkedFolderProblem } from "../lake/listed.js"
import { ParquetSink, type SinkError } from "../lake/ParquetSink.js"
import { quoteIdent, sqlString, sqlStringList } from "../lake/sql.js"
import { below, type Range } from "../lake/RangeSet.js"
import type { Dataset } from "./Dataset.js"
import { lakeBlockAtOrBelow } from "./identity.js"

export class RollbackError extends Data.TaggedError("RollbackError")<{ readonly message: string }> {}

/** What cutting a manifest to a height drops (whole files), rewrites (files holding heights on both sides) and keeps. */
export interface Cut {
  readonly drop: ReadonlyArray<CommittedFile>
  readonly trim: ReadonlyArray<CommittedFile>
  readonly committed: ReadonlyArray<Range>
  readonly snapshots: ReadonlyArray<CommittedSnapshot>
}

/**
 * The first position of a position dataset that may hold a record above `height`. Positions
 * ascend with heights, but a file tells only the heights of its rows, and a record may have none
 * (a receipt without logs, a tx without transfers): past a file's last row there may be records
 * above the height that left no trace. So only a file that starts with rows at or below the
 * height proves every position before it is at or below it: the cut is the start of the last
 * such file (that file and every one after it go; the next export reads them again). Where the
 * lake never reached past the height (`lakeTop`, its highest anchor, is at or below it) nothing is
 * cut.
 */
export const positionCut = (m: Manifest, height: number, lakeTop = Infinity): number => {
  if (lakeTop <= height) return Infinity
  const starts = m.files.flatMap((f) => (f.range && f.min_height !== null && f.min_height <= height ? [f.range[0]] : []))
  return starts.length > 0 ? starts.reduce((a, b) => Math.max(a, b)) : m.committed.reduce((low, [a]) => Math.min(low, a), 0)
}

/** A snapshot that may hold state of heights above `height`: taken above it, or read while the chain passed it. */
const snapshotAbove = (s: CommittedSnapshot, height: number) => s.snapshot_height > height || s.watermark_after > height

/** What cutting `m` to `height` does. */
export const planCut = (m: Manifest, height: number, lakeTop = Infinity): Cut => {
  switch (m.unit) {
    case "height": {
      const end = height + 1
      return {
        drop: m.files.filter((f) => (f.range ? f.range[0] >= end : (f.max_height ?? -1) > height)),
        trim: m.files.filter((f) => f.range !== undefined && f.range[0] < end && f.range[1] > end),
        committed: below(m.committed, end),
        snapshots: m.snapshots
      }
    }
    case "position": {
      const cut = positionCut(m, height, lakeTop)
      return {
        drop: m.files.filter((f) => (f.range ? f.range[1] > cut : (f.max_height ?? -1) > height)),
        trim: [],
        committed: below(m.committed, cut),
        snapshots: m.snapshots
      }
    }
    case "snapshot": {
      const gone = new Set(m.snapshots.filter((s) => snapshotAbove(s, height)).map((s) => s.snapshot_height))
      return {
        drop: m.files.filter((f) => gone.has(snapshotHeightOf(f.path) ?? NaN)),
        trim: [],
        committed: m.committed,
        snapshots: m.snapshots.filter((s) => !gone.has(s.snapshot_height))
      }
    }
    case "sample":
      return { drop: [], trim: [], committed: m.committed, snapshots: m.snapshots }
  }
}

const isNoop = (cut: Cut, m: Manifest) =>
  cut.drop.length === 0 &&
  cut.trim.length === 0 &&
  cut.snapshots.length === m.snapshots.length &&
  JSON.stringify(cut.committed) === JSON.stringify(m.committed)

/** A dataset's part of a rollback. */
export interface DatasetRollback {
  readonly dataset: string
  readonly rowsDropped: number
  readonly filesDropped: number
  readonly filesRewritten: number
  readonly snapshotsDropped: number
  /** where files holding heights on both sides of the cut went whole (position datasets): the lowest height they held, at or below the cut */
  readonly droppedFrom?: number
}

/** What cutting `m` to `height` as `cut` took from its dataset, `rowsDropped` rows in all. */
const cutTook = (m: Manifest, cut: Cut, height: number, rowsDropped: number): DatasetRollback => {
  // rows the cut took at or below the height (files holding heights on both sides went whole), read again by the next export
  const lowest = lowestHeight({ files: cut.drop })
  return {
    dataset: m.dataset,
    rowsDropped,
    filesDropped: cut.drop.length,
    filesRewritten: cut.trim.length,
    snapshotsDropped: m.snapshots.length - cut.snapshots.length,
    ...(lowest <= height ? { droppedFrom: lowest } : {})
  }
}

/** The column of `d` a cut reads heights from. */
const heightColumnOf = (d: Dataset) => (d.kind === "append" ? quoteIdent(d.columns[d.heightColumn].name) : "height")

/** Rewrites `f` (a height file holding heights on both sides of `height`) with its rows up to it, staged as a new file. */
const trimFile = (d: Dataset, m: Manifest, f: CommittedFile, height: number) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const sink = yield* ParquetSink
    const column = heightColumnOf(d)
    const range: Range = [f.range![0], height + 1]
    const rel = mergedFile(
      f.path.slice(0, Math.max(0, f.path.lastIndexOf("/"))),
      m.unit,
      range,
      `r${Date.now().toString(36)}${randomBytes(3).toString("hex")}`
    )
    const at = manifests.staged(d.name, rel)
    const written = yield* sink.rewrite([join(manifests.root, d.name, f.path)], at, d.sortKey, `${column} <= ${height}`)
    const [h] = yield* sink.query(`SELECT min(${column})::BIGINT AS lo, max(${column})::BIGINT AS hi FROM read_parquet(${sqlString(at)})`)
    const file: CommittedFile = {
      path: rel,
      rows: written.rows,
      bytes: written.bytes,
      sha256: written.sha256,
      range,
      min_height: h.lo === null ? null : Number(h.lo),
      max_height: h.hi === null ? null : Number(h.hi),
      committed_at: new Date().toISOString()
    }
    return file
  })

/** How many times a dataset's cut is planned again when another writer changed its manifest meanwhile. */
const CUT_TRIES = 5

/** Cuts one dataset to `height` in one commit; undefined when the lake does not hold it. */
export const rollbackDataset = (d: Dataset, height: number, lakeTop = Infinity) =>
  Effect.gen(function* (): Effect.fn.Return<
    DatasetRollback | undefined,
    RollbackError | ManifestError | SinkError,
    Manifests | ParquetSink
  > {
    const manifests = yield* Manifests
    for (let attempt = 0; attempt < CUT_TRIES; attempt++) {
      const m = yield* manifests.get(d.name)
      if (!m) return undefined
      const cut = planCut(m, height, lakeTop)
      if (isNoop(cut, m)) return cutTook(m, cut, height, 0)
      const rewritten: Array<CommittedFile> = []
      for (const f of cut.trim) rewritten.push(yield* trimFile(d, m, f, height))
      const replaced = [...cut.drop, ...cut.trim]
      const outcome = yield* Effect.uninterruptible(
        manifests.commitRollback(m, replaced, rewritten, { committed: cut.committed, snapshots: cut.snapshots })
      )
      if (!outcome.committed) continue
      return cutTook(m, cut, height, replaced.reduce((s, f) => s + f.rows, 0) - rewritten.reduce((s, f) => s + f.rows, 0))
    }
    return yield* new RollbackError({
      message: `${d.name}: its manifest changed under the rollback ${CUT_TRIES} times (another writer is committing to it): stop the other writers and run the rollback again`
    })
  })

export interface RollbackOptions {
  /** who asked: the user (`chain-lake rollback`) or an export that found the source on another history */
  readonly by: Reorg["by"]
  /** where the source was found to differ from the lake */
  readonly differs?: Reorg["differs"]
  readonly notice?: (message: string) => void
}

export interface RollbackReport {
  readonly toHeight: number
  /** the highest height the lake held before */
  readonly fromHeight: number
  readonly datasets: ReadonlyArray<DatasetRollback>
  /** the lake held nothing above the height: nothing was changed or logged */
  readonly unchanged: boolean
  /** the height from which a txs/blocks disagreement the lake recorded left rows suspect, cleared by this cut (LakeIdentity.disagreed) */
  readonly disagreementCleared?: number
}

/** The highest height the lake holds in any dataset, or anchored. */
const highestHeld = (manifests: ReadonlyArray<Manifest>, anchors: ReadonlyArray<{ readonly height: number }>) =>
  Math.max(0, ...anchors.map((a) => a.height), ...manifests.map(highestHeight))

/**
 * The manifests of `catalog`'s chain datasets the lake holds, what it held at most, and how far
 * its runs reached (`lakeTop` of planCut): a lake with no anchor left could have reached any height.
 */
export const lakeHoldings = (catalog: ReadonlyArray<Dataset>, anchors: ReadonlyArray<{ readonly height: number }>) =>
  Effect.gen(function* () {
    const lake = yield* Manifests
    const manifests: Array<Manifest> = []
    for (const d of catalog) {
      const m = d.kind === "sample" ? undefined : yield* lake.get(d.name)
      if (m) manifests.push(m)
    }
    const fromHeight = highestHeld(manifests, anchors)
    return { manifests, fromHeight, lakeTop: anchors.length > 0 ? fromHeight : Infinity }
  })

/**
 * What cutting the lake to `height` would drop from each dataset that would change, as
 * rollbackDataset would cut it (the rows above it in the files it would rewrite counted in them);
 * nothing is changed. A rollback cut short is not finished here: the real one finishes it first.
 */
export const plannedRollback = (catalog: ReadonlyArray<Dataset>, height: number) =>
  Effect.gen(function* () {
    const lake = yield* Manifests
    const sink = yield* ParquetSink
    const { manifests, lakeTop } = yield* lakeHoldings(catalog, (yield* lake.identity)?.anchors ?? [])
    const planned: Array<DatasetRollback> = []
    for (const m of manifests) {
      const cut = planCut(m, height, lakeTop)
      if (isNoop(cut, m)) continue
      const d = catalog.find((x) => x.name === m.dataset)!
      const files = cut.trim.map((f) => join(lake.root, d.name, f.path))
      const [above] =
        files.length === 0
          ? [{ n: 0 }]
          : yield* sink.query(
              `SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlStringList(files)}) WHERE ${heightColumnOf(d)} > ${height}`
            )
      planned.push(cutTook(m, cut, height, cut.drop.reduce((s, f) => s + f.rows, 0) + Number(above.n)))
    }
    return planned
  })

/**
 * Cuts every dataset of `catalog` the lake holds to `height` (see the module's comment), and
 * finishes a rollback cut short first: with one pending, the lake is cut to the lower of the two.
 */
export const rollbackLake = (catalog: ReadonlyArray<Dataset>, height: number, options: RollbackOptions) =>
  Effect.gen(function* () {
    const lake = yield* Manifests
    const identity = yield* lake.identity
    if (!identity)
      return yield* new RollbackError({
        message: `${lake.root} holds no _lake.json naming its chain: nothing says which history it holds (an export with --adopt-lake records it)`
      })
    const pending = identity.rollback
    const target = pending ? Math.min(pending.to_height, height) : height
    if (pending) options.notice?.(`${lake.root}: finishing a rollback to height ${pending.to_height} that was cut short`)
    const chained = catalog.filter((d) => d.kind !== "sample")
    const { manifests, fromHeight, lakeTop } = yield* lakeHoldings(chained, identity.anchors)
    const names = manifests.map((m) => m.dataset)
    const linked = manifests
      .map((m) =>
        linkedFolderProblem(
          lake.root,
          m.dataset,
          m.files.map((f) => f.path)
        )
      )
      .find((p) => p !== undefined)
    if (linked) return yield* new RollbackError({ message: linked })
    // a disagreement recorded from above the cut is cleared by it, whether or not rows stand there:
    // the run that found it may have committed nothing past its check (its commit refused)
    const cleared = identity.disagreed && identity.disagreed.from > target ? identity.disagreed.from : undefined
    const touches =
      pending !== undefined ||
      cleared !== undefined ||
      identity.anchors.some((a) => a.height > target) ||
      manifests.some((m) => !isNoop(planCut(m, target, lakeTop), m))
    if (!touches) return { toHeight: target, fromHeight, datasets: [], unchanged: true } satisfies RollbackReport
    const startedAt = new Date().toISOString()
    const differs = pending?.differs ?? options.differs
    yield* lake.updateIdentity((prior) => ({
      ...(prior ?? identity),
      rollback: {
        to_height: target,
        started_at: pending?.started_at ?? startedAt,
        by: pending?.by ?? options.by,
        datasets: [...new Set([...(pending?.datasets ?? []), ...names])],
        rows_dropped: pending?.rows_dropped ?? {},
        ...(differs ? { differs } : {})
      }
    }))
    const datasets: Array<DatasetRollback> = []
    for (const d of chained) {
      const done = yield* rollbackDataset(d, target, lakeTop)
      if (!done) continue
      // what this dataset lost, added to the intent at once: a run that finishes a cut-short rollback logs it too
      const before = pending?.rows_dropped?.[d.name] ?? 0
      datasets.push({ ...done, rowsDropped: done.rowsDropped + before })
      yield* lake.updateIdentity((prior) => {
        const now = prior ?? identity
        return now.rollback
          ? { ...now, rollback: { ...now.rollback, rows_dropped: { ...now.rollback.rows_dropped, [d.name]: done.rowsDropped + before } } }
          : now
      })
    }
    const block = yield* lakeBlockAtOrBelow(target)
    const entry: Reorg = {
      at: startedAt,
      to_height: target,
      from_height: fromHeight,
      by: pending?.by ?? options.by,
      ...(differs ? { differs } : {}),
      rows_dropped: Object.fromEntries(datasets.map((r) => [r.dataset, r.rowsDropped]))
    }
    yield* lake.updateIdentity((prior) => {
      const { rollback: _done, disagreed, ...rest } = prior ?? identity
      const witness = witnessOf(rest, target)
      return {
        ...rest,
        // rows a disagreement left suspect are gone once the cut is below them
        ...(disagreed && disagreed.from <= target ? { disagreed } : {}),
        anchors: anchorsKept(rest.anchors, target, block),
        reorgs: [...(rest.reorgs ?? []), { ...entry, ...(witness ? { witness } : {}) }]
      }
    })
    return {
      toHeight: target,
      fromHeight,
      datasets,
      unchanged: false,
      ...(cleared !== undefined ? { disagreementCleared: cleared } : {})
    } satisfies RollbackReport
  })

type Anchor = LakeIdentity["anchors"][number]

/**
 * The anchors a cut to `target` keeps: those below it (one at it only with the lake's block there),
 * and the lake's highest block at or below it (`block`), so that a lake holding blocks stays checkable.
 */
const anchorsKept = (anchors: ReadonlyArray<Anchor>, target: number, block: Anchor | undefined) => {
  // (one at the height is checked against the lake's block there only where the lake holds that block)
  const kept = anchors.filter((a) => a.height < target || (a.height === target && (block?.height !== target || a.hash === block.hash)))
  return block ? [...kept.filter((a) => a.height !== block.height), block].sort((a, b) => a.height - b.height) : kept
}

/** What vouches for the rows a cut to `target` keeps (Reorg.witness): the lowest anchor it drops, else the previous rollback's witness. */
const witnessOf = (lake: LakeIdentity, target: number): Anchor | undefined =>
  lake.anchors.filter((a) => a.height > target).sort((a, b) => a.height - b.height)[0] ?? lake.reorgs?.at(-1)?.witness

/** Finishes a rollback of the lake that was cut short (see rollbackLake), if there is one. */
export const finishRollback = (catalog: ReadonlyArray<Dataset>, notice?: (message: string) => void) =>
  Effect.flatMap(Manifests, (manifests) =>
    Effect.flatMap(manifests.identity, (identity) =>
      identity?.rollback
        ? Effect.asVoid(rollbackLake(catalog, identity.rollback.to_height, { by: identity.rollback.by, ...(notice ? { notice } : {}) }))
        : Effect.void
    )
  )

/** A rollback in one line: what the lake held, where it was cut, the rows each dataset lost. */
export const describeRollback = (root: string, r: RollbackReport): string => {
  if (r.unchanged) return `${root} holds nothing above height ${r.toHeight}: nothing to roll back`
  const lost = r.datasets.filter((d) => d.rowsDropped > 0 || d.filesDropped > 0 || d.snapshotsDropped > 0)
  const parts = lost.map(
    (d) => `${d.dataset} ${d.rowsDropped} rows${fromHeight(d)}${d.snapshotsDropped > 0 ? ` (${snapshotsWord(d.snapshotsDropped)})` : ""}`
  )
  const below = belowCut(lost, r.toHeight)
  const dropped =
    parts.length > 0
      ? `dropped ${parts.join(", ")}`
      : r.disagreementCleared !== undefined
        ? "no rows above it"
        : "no rows above it (anchors dropped)"
  const cleared =
    r.disagreementCleared !== undefined ? `; the txs/blocks disagreement recorded from height ${r.disagreementCleared} is cleared` : ""
  return `rolled ${root} back from height ${r.fromHeight} to ${r.toHeight}: ${dropped}${cleared}; logged in _lake.json (reorgs)${below ? `. ${below}` : ""}`
}

/** " from height H" where a dataset's cut took rows at or below its height, else "". */
export const fromHeight = (d: DatasetRollback) => (d.droppedFrom !== undefined ? ` from height ${d.droppedFrom}` : "")

/** "1 snapshot", "2 snapshots" */
export const snapshotsWord = (n: number) => `${n} snapshot${n > 1 ? "s" : ""}`

/** What a cut took at or below its height (position datasets' files holding heights on both sides go whole), said, or undefined. */
export const belowCut = (datasets: ReadonlyArray<DatasetRollback>, height: number): string | undefined => {
  const below = datasets.filter((d) => d.droppedFrom !== undefined)
  if (below.length === 0) return undefined
  return `${below.map((d) => `${d.dataset} from height ${d.droppedFrom}`).join(", ")}: files holding heights on both sides of ${height} went whole (which of their rows end at it is not recorded), so those datasets lack rows at or below ${height} until the next export reads them again`
}
