/**
 * What a dataset module declares: its source endpoint, row and Parquet schema, sort key,
 * partitioning and how a record becomes rows. The export engine reads these declarations and
 * knows no dataset by name.
 */
import type { Effect } from "effect"
import type { IndexerClientService, PageRequest } from "../indexer/IndexerClient.js"
import type { IndexerError } from "../indexer/errors.js"
import type { FieldIssue } from "../schema-path.js"

/** Parquet column types (DuckDB types). Amounts too big for DECIMAL(38,0) stay exact as VARCHAR. */
export type ColumnType = "BIGINT" | "INTEGER" | "BOOLEAN" | "DOUBLE" | "VARCHAR" | "JSON" | "TIMESTAMP" | "DECIMAL(38,0)" | "VARCHAR[]"

export interface Column {
  readonly name: string
  readonly type: ColumnType
  readonly description: string
}

/** One row's values in column order: strings for VARCHAR/JSON/TIMESTAMP/DECIMAL, JSON text for lists. */
export type Value = string | number | bigint | boolean | null
export type Row = Array<Value>

/** Which /status field bounds the data (internal txs and the rich list lag the tip). */
export type Watermark = "height" | "internal_tx_height" | "rich_list_height"

/**
 * An append-only source: a list endpoint paged in ascending order. `height` sources (blocks) are
 * sharded by height with constructed height cursors; `position` sources (the tx families) by row
 * position: first page by offset, then the cursor, stopping after the shard's row count.
 */
export interface AppendSource {
  readonly id: string
  readonly endpoint: string
  readonly path: string
  readonly arrayKey: string
  readonly unit: "height" | "position"
  readonly watermark: Watermark
  /** the record check on the hot path (compiled from the record's Effect Schema) */
  readonly validate: (record: unknown) => FieldIssue | undefined
  readonly heightOf: (record: any) => number
  /** EVM-only endpoints are skipped on Move/Wasm chains */
  readonly evmOnly: boolean
}

export interface AppendDataset {
  readonly kind: "append"
  readonly name: string
  readonly description: string
  readonly source: AppendSource
  readonly columns: ReadonlyArray<Column>
  /** rows are sorted by these columns within each file */
  readonly sortKey: ReadonlyArray<string>
  /** index of the height column in a row (partitioning by height bucket) */
  readonly heightColumn: number
  readonly toRows: (record: any) => Array<Row>
}

/** One offset-paged list read for a snapshot (e.g. the rich list of one denom). */
export interface SnapshotList {
  readonly label: string
  readonly fetchPage: (page: PageRequest) => Effect.Effect<{ readonly items: ReadonlyArray<unknown>; readonly pagination: { readonly next_key: string | null; readonly total: string } }, IndexerError>
  readonly toRows: (record: any) => Array<Row>
}

export interface SnapshotContext {
  readonly indexer: IndexerClientService
  readonly denoms: ReadonlyArray<string>
}

/** A mutable-state dataset written as a snapshot partition taken at a watermark. */
export interface SnapshotDataset {
  readonly kind: "snapshot"
  readonly name: string
  readonly description: string
  readonly endpoints: ReadonlyArray<string>
  readonly watermark: Watermark
  readonly evmOnly: boolean
  readonly needsDenoms: boolean
  readonly columns: ReadonlyArray<Column>
  readonly sortKey: ReadonlyArray<string>
  /** the identity of a row; duplicates from offset paging under change are dropped by it */
  readonly keyOf: (row: Row) => string
  readonly lists: (ctx: SnapshotContext) => Effect.Effect<ReadonlyArray<SnapshotList>, IndexerError>
}

export type Dataset = AppendDataset | SnapshotDataset
