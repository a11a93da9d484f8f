/**
 * The lake's own files, as Effect Schemas: a dataset's `_manifest.json` and the lake's
 * `_lake.json`. They are decoded (not trusted) when read, so a damaged or hand-edited one is a
 * clear error naming the field, and every file path they list must stay inside its dataset folder.
 */
import { Either, Schema } from "effect"
import { decodeWithPath } from "../schema/decode.js"
import { isContainedPath } from "./files.js"

/** A dataset's manifest, in its folder. */
export const MANIFEST_FILE = "_manifest.json"
/** The lake's identity, at its root. */
export const IDENTITY_FILE = "_lake.json"

/** [start, end) in the source's unit */
const RangeSchema = Schema.Tuple(Schema.Number, Schema.Number)

/** A path relative to its dataset folder, with forward slashes, that cannot leave it. */
const RelativePath = Schema.String.pipe(
  Schema.filter(isContainedPath, { message: () => "a path inside the dataset folder (relative, forward slashes, no . or .. parts)" })
)

export const CommittedFile = Schema.Struct({
  /** relative to the dataset folder, with forward slashes */
  path: RelativePath,
  rows: Schema.Number,
  bytes: Schema.Number,
  sha256: Schema.String,
  /** [start, end) in the source's unit (heights or row positions); absent for snapshots */
  range: Schema.optional(RangeSchema),
  min_height: Schema.NullOr(Schema.Number),
  max_height: Schema.NullOr(Schema.Number),
  committed_at: Schema.String
})
export type CommittedFile = typeof CommittedFile.Type

export const CommittedSnapshot = Schema.Struct({
  snapshot_height: Schema.Number,
  snapshot_time: Schema.String,
  consistency: Schema.Literal("exact", "best-effort"),
  watermark_before: Schema.Number,
  watermark_after: Schema.Number,
  rows: Schema.Number,
  duplicates_dropped: Schema.Number,
  reads: Schema.Number,
  /** the lists read into this snapshot (e.g. one per denom); a later run may add lists */
  lists: Schema.Array(Schema.String),
  /** those of `lists` the source said it does not have (read as empty), e.g. the rich list of a denom with no ERC-20 contract */
  absent: Schema.optional(Schema.Array(Schema.String)),
  note: Schema.optional(Schema.String)
})
export type CommittedSnapshot = typeof CommittedSnapshot.Type

/** A snapshot completed by a later commit (more lists): lists and counts add up; exact only when both parts are. */
export const mergeSnapshot = (prior: CommittedSnapshot, later: CommittedSnapshot): CommittedSnapshot => ({
  ...later,
  rows: prior.rows + later.rows,
  duplicates_dropped: prior.duplicates_dropped + later.duplicates_dropped,
  lists: [...prior.lists, ...later.lists],
  ...(prior.absent || later.absent ? { absent: [...(prior.absent ?? []), ...(later.absent ?? [])] } : {}),
  consistency: prior.consistency === "exact" && later.consistency === "exact" ? "exact" : "best-effort"
})

/**
 * A file a compaction replaced: no longer committed, and moved out of the dataset folder (to
 * `OUT/.chain-lake/retired/<dataset>/<path>.retired`, where a reader that listed it before the
 * swap finds it); deleted by a later compaction once older than the grace period (Manifests.ts).
 */
export const RetiredFile = Schema.Struct({
  path: RelativePath,
  retired_at: Schema.String,
  /** the committed files that hold its rows now */
  replaced_by: Schema.Array(RelativePath)
})
export type RetiredFile = typeof RetiredFile.Type

export const Manifest = Schema.Struct({
  dataset: Schema.String,
  format_version: Schema.Literal(1),
  /** what `committed` ranges count: heights, row positions; snapshots and samples have none */
  unit: Schema.Literal("height", "position", "snapshot", "sample"),
  columns: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String })),
  files: Schema.Array(CommittedFile),
  committed: Schema.Array(RangeSchema),
  snapshots: Schema.Array(CommittedSnapshot),
  /** files a compaction replaced, kept until their grace period ends (absent in lakes never compacted) */
  retired: Schema.optional(Schema.Array(RetiredFile)),
  /**
   * How many times the manifest was written (absent: never by a version that counts): each write
   * is the one it replaced plus 1, and is made only while the manifest on disk is still the one
   * read (Manifests.ts), so it only increases and two commits never share a number.
   */
  version: Schema.optional(Schema.Number)
})
export type Manifest = typeof Manifest.Type

/** The lowest height of a row a dataset's files (or some of them) hold (Infinity for none). */
export const lowestHeight = (m: Pick<Manifest, "files">) => m.files.reduce((low, f) => Math.min(low, f.min_height ?? Infinity), Infinity)

/** The highest height a dataset holds a row or a snapshot of (0 for none). */
export const highestHeight = (m: Manifest) =>
  // (folds, not spreads: a lake of 150,000 files would overflow the stack as arguments)
  Math.max(
    m.files.reduce((top, f) => Math.max(top, f.max_height ?? 0), 0),
    m.snapshots.reduce((top, s) => Math.max(top, s.snapshot_height), 0)
  )

const Anchor = Schema.Struct({ height: Schema.Number, hash: Schema.String })

/** Where a source was found to differ from the lake: the lake's hash there and the source's. */
const Differs = Schema.Struct({ height: Schema.Number, lake_hash: Schema.String, source_hash: Schema.NullOr(Schema.String) })

/** A rollback of the lake (src/engine/rollback.ts): the rows above `to_height` it dropped, and why. */
export const Reorg = Schema.Struct({
  at: Schema.String,
  /** the last height the lake kept */
  to_height: Schema.Number,
  /** the highest height the lake held before */
  from_height: Schema.Number,
  /** `chain-lake rollback` (the user's word) or `--on-reorg rollback` (a source found to differ) */
  by: Schema.Literal("command", "on-reorg"),
  /** where the source was found to differ: the lake's hash there and the source's */
  differs: Schema.optional(Differs),
  /** rows dropped per dataset (rows at or below to_height that were dropped with a file are re-read by the next export) */
  rows_dropped: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /**
   * The lowest anchor above to_height the cut dropped (else the previous rollback's): every row
   * kept was read from the history that block heads, so a source still serving it with this hash
   * vouches for them where no anchor at or above to_height is left (engine/identity.ts).
   */
  witness: Schema.optional(Anchor)
})
export type Reorg = typeof Reorg.Type

/** Which chain a lake holds (`OUT/_lake.json`): its id, and block hashes at a few heights to tell its history from another's. */
export const LakeIdentity = Schema.Struct({
  format_version: Schema.Literal(1),
  chain_id: Schema.String,
  /** newest last; a later run checks the newest its source still serves */
  anchors: Schema.Array(Anchor),
  /**
   * A rollback under way (or cut short): `datasets` are being cut to `to_height`. Their readers
   * fail until it is done; the next export or rollback finishes it first.
   */
  rollback: Schema.optional(
    Schema.Struct({
      to_height: Schema.Number,
      started_at: Schema.String,
      by: Schema.Literal("command", "on-reorg"),
      datasets: Schema.Array(Schema.String),
      /** rows each dataset cut so far lost (a rollback finished by another run logs them all) */
      rows_dropped: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Number })),
      differs: Schema.optional(Differs)
    })
  ),
  /** every rollback the lake went through, oldest first */
  reorgs: Schema.optional(Schema.Array(Reorg)),
  /**
   * An export found two of its datasets disagree (txs per height against blocks' tx_count) at
   * height `at`: what it committed from height `from` on may mix two histories. Every export is
   * refused until a rollback below `from` clears it.
   */
  disagreed: Schema.optional(Schema.Struct({ at: Schema.Number, from: Schema.Number, found_at: Schema.String }))
})
export type LakeIdentity = typeof LakeIdentity.Type

/** Parses and decodes one of the lake's files, or says what is wrong with it (a field path, or not JSON). */
export const decodeLakeFile = <A, I>(schema: Schema.Schema<A, I>, text: string): Either.Either<A, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(`not JSON (${(e as Error).message})`)
  }
  return Either.mapLeft(decodeWithPath(schema, json), (issue) => `${issue.path || "(top)"}: ${issue.message}`)
}
