/**
 * A release's manifest.json (what publish writes and validate reads back, trusting it only after
 * decoding: a release may come from anyone), and the error both say things with.
 */
import { Data, Either, Schema } from "effect"
import { decodeLakeFile } from "../lake/manifest.js"

export class PublishError extends Data.TaggedError("PublishError")<{ readonly message: string }> {}

const Range = Schema.Tuple(Schema.Int, Schema.Int)

/**
 * What of the chain a released dataset holds, as its lake's manifest committed it: the ranges
 * committed ([start, end) in `unit`: heights, or list positions), the heights between them it does
 * not hold (a stopped run, an export from a later height, a follow still catching up), and a
 * snapshot dataset's snapshots with their consistency. A release of part of a chain says so.
 */
const Coverage = Schema.Struct({
  unit: Schema.Literal("height", "position", "snapshot", "sample"),
  committed: Schema.Array(Range),
  missing_heights: Schema.Array(Range),
  snapshots: Schema.Array(
    Schema.Struct({
      snapshot_height: Schema.Int,
      consistency: Schema.Literal("exact", "best-effort"),
      note: Schema.optional(Schema.String)
    })
  ),
  /** records of its list an export quarantined (they broke the schema): committed ranges that lack their rows; absent in older releases */
  quarantined: Schema.optional(Schema.Int)
})
export type Coverage = typeof Coverage.Type

/** A release's manifest.json: what `validate` trusts only after decoding it (a release may come from anyone). */
export const ReleaseManifest = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  license: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  datasets: Schema.Array(
    Schema.Struct({
      name: Schema.String,
      partition: Schema.String,
      columns: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String, description: Schema.String })),
      rows: Schema.NonNegativeInt,
      /** what of the chain the dataset holds: releases before it have none */
      coverage: Schema.optional(Coverage),
      files: Schema.Array(
        Schema.Struct({
          path: Schema.String,
          bytes: Schema.NonNegativeInt,
          sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
          rows: Schema.NonNegativeInt,
          min_height: Schema.NullOr(Schema.Int),
          max_height: Schema.NullOr(Schema.Int),
          snapshot_height: Schema.optional(Schema.Int)
        })
      )
    })
  )
})
export type ReleaseManifest = typeof ReleaseManifest.Type

/** manifest.json's text as a ReleaseManifest, or what is wrong with it (field path and problem) in one line. */
export const readReleaseManifest = (text: string, where: string): Either.Either<ReleaseManifest, string> =>
  Either.mapLeft(decodeLakeFile(ReleaseManifest, text), (problem) =>
    problem.startsWith("not JSON") ? `${where} is ${problem}` : `${where} is not a release manifest: at ${problem}`
  )
