/** The export engine's options, reports and errors (export.ts runs it). */
import { Data, Schema, type Effect } from "effect"
import type { CommittedFile, ManifestError, Manifests } from "../lake/Manifests.js"
import type { ParquetSink, SinkError } from "../lake/ParquetSink.js"
import type { AppendDataset, SnapshotDataset } from "./Dataset.js"
import type { LakeIdentityError, OnReorg } from "./identity.js"
import type { RollbackError } from "./rollback.js"
import type { Source, SourceFailure } from "./Source.js"

export class ExportError extends Data.TaggedError("ExportError")<{ readonly message: string }> {}

export interface ExportOptions {
  /** dataset names; default: every dataset the registry exports */
  readonly datasets?: ReadonlyArray<string>
  /** list parameters of snapshot datasets, e.g. `{ denoms: [...] }` for holders */
  readonly params?: Readonly<Record<string, ReadonlyArray<string>>>
  readonly fromHeight?: number
  /** default: the tip seen at start (or the source's watermark, if lower) */
  readonly toHeight?: number
  /**
   * `toHeight` is a goal the chain may not have reached yet (a follow round): clipping it to a
   * watermark is expected and not announced (otherwise: a notice, since the user asked for more)
   */
  readonly toHeightAhead?: boolean
  readonly pageSize?: number
  readonly concurrency?: number
  readonly onInvalid?: "fail" | "quarantine"
  readonly bucketWidth?: number
  /** start a new file once a writer holds this many bytes of strings */
  readonly flushBytes?: number
  /** largest shard (heights or rows); shards are smaller when that keeps every worker busy */
  readonly maxShardUnits?: number
  /** the longest a shard holds what it read before committing it (ms; default DEFAULTS.checkpointMs) */
  readonly checkpointMs?: number
  readonly dryRun?: boolean
  /** take a lake that holds data but names no chain (no `_lake.json`), once its newest block is checked against the source */
  readonly adoptLake?: boolean
  /**
   * A source on another history than the lake above some height it holds (a reorg, an indexer
   * rolled back and re-synced): "refuse" (default), or "rollback": drop the lake's rows above the
   * last common height (rollback.ts) and export the source's history; a source that changes
   * history during the run then starts the run over (at most ROLLBACK_RESTARTS times).
   */
  readonly onReorg?: OnReorg
  readonly observer?: ExportObserver
}

const atLeast = (n: number, why = "") =>
  Schema.Int.pipe(
    Schema.greaterThanOrEqualTo(n, { message: (v) => `must be a whole number, at least ${n}${why}, got ${String(v.actual)}` })
  )
const Height = atLeast(1, " (heights start at 1)")
const Count = atLeast(1)
/** one of `values` (a union's first issue named only its first member) */
const oneOf = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.Literal(...values).annotations({
    message: () => ({ message: `must be ${values.map((v) => JSON.stringify(v)).join(" or ")}`, override: true })
  })

/**
 * ExportOptions as runExport checks them before anything starts: a caller in plain JavaScript
 * (`datasets: "blocks"`, `toHeight: 0`, a misspelt option) got a TypeError from deep inside, or
 * a run over no heights.
 */
export const ExportOptionsSchema = Schema.Struct({
  datasets: Schema.optional(Schema.Array(Schema.String)),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })),
  fromHeight: Schema.optional(Height),
  toHeight: Schema.optional(Height),
  toHeightAhead: Schema.optional(Schema.Boolean),
  // its bounds are the source's (exportOptionsProblem)
  pageSize: Schema.optional(Schema.Number),
  concurrency: Schema.optional(Count),
  onInvalid: Schema.optional(oneOf("fail", "quarantine")),
  bucketWidth: Schema.optional(Count),
  flushBytes: Schema.optional(Count),
  maxShardUnits: Schema.optional(Count),
  checkpointMs: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
  dryRun: Schema.optional(Schema.Boolean),
  adoptLake: Schema.optional(Schema.Boolean),
  onReorg: Schema.optional(oneOf("refuse", "rollback")),
  observer: Schema.optional(Schema.Object)
})
// the schema checks every option there is
const _everyOption: Required<Record<keyof ExportOptions, unknown>> = ExportOptionsSchema.fields
void _everyOption

/** Progress reports; the CLI renders them as bars or log lines. */
export interface ExportObserver {
  /** `standing`: a condition that holds until it changes (another writer, older columns): a follow says it once, not every round */
  readonly notice?: (message: string, standing?: boolean) => void
  readonly planned?: (dataset: string, plan: DatasetPlan) => void
  /** rows made (a record gives any number: a receipt many logs, a tx no transfer); negative for staged rows dropped */
  readonly rows?: (dataset: string, rows: number) => void
  /** units of the dataset's plan read (records of its source, or heights): what its `todo` counts; negative for a range read again */
  readonly fetched?: (dataset: string, units: number) => void
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
  /** where the run wrote only up to a height below its top (the block it anchors: the indexer did not serve the top's yet) */
  readonly writtenTo?: number
  /** the highest height the run's append datasets hold a row of once it ended (above its range when it asked for heights the lake held) */
  readonly heldTo: number
  readonly datasets: ReadonlyArray<DatasetResult>
  readonly plans: ReadonlyArray<DatasetPlan>
  readonly dryRun: boolean
}

export type Env = Source | ParquetSink | Manifests
export type Failure = SourceFailure | SinkError | ManifestError | ExportError | LakeIdentityError | RollbackError
export type ExportableDataset = AppendDataset | SnapshotDataset

/** One unit of work of the pool: a shard, or a snapshot. */
export interface Task {
  /** units of work, for largest-first ordering */
  readonly size: number
  readonly run: Effect.Effect<void, Failure, Env>
}
