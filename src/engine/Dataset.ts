/**
 * What a dataset module declares, and the one way to declare it (`defineAppend`, `defineSnapshot`,
 * `defineSample`): its source, its columns (each with its name, Parquet type, meaning and the
 * value it takes from a record, declared together), its key, sort order and partitioning. The
 * engine reads these declarations and knows no dataset by name; rows stay fast positional arrays
 * inside the engine, built from the column list.
 */
import type { Effect } from "effect"
import type { Column, ColumnType, Row, Value } from "../lake/columns.js"
import { partitionColumn, type DatePartitioning, type HeightBucketPartitioning, type Partitioning } from "../lake/layout.js"
import type { FieldIssue } from "../schema/decode.js"
import { redact } from "../secrets/redact.js"
import type { ListRef, SourceFailure } from "./Source.js"

/** The JavaScript values a column of each type accepts (JSON and lists as JSON text). */
export interface ValueOf {
  readonly BIGINT: number | string | bigint
  readonly INTEGER: number
  readonly BOOLEAN: boolean
  readonly DOUBLE: number
  readonly VARCHAR: string
  readonly JSON: string
  readonly TIMESTAMP: string
  readonly TIMESTAMP_NS: string
  readonly "DECIMAL(38,0)": string
  readonly "VARCHAR[]": string
}

/**
 * What a row may read besides its record: the time of the block at a height (for lists whose
 * records carry only a height, such as EVM receipts). The engine asks the source for the block
 * times of a page's heights before it makes the page's rows, for datasets that declare `blockTime`.
 * And the hashes of the cosmos txs of a block (block order, as the txs list spells them), for the
 * heights of the records their source says need them, for datasets that declare `cosmosTx` (`AppendList.cosmosTx`: an EVM
 * receipt minievm built for a cosmos tx links to it only through them).
 */
export interface RowContext {
  readonly blockTime: (height: number) => string
  readonly cosmosTxHashes: (height: number) => ReadonlyArray<string>
}

/** The context of rows that read nothing besides their record. */
export const NO_CONTEXT: RowContext = {
  blockTime: () => {
    throw new Error("a column reads the block time, but its dataset does not declare blockTime: true")
  },
  cosmosTxHashes: () => {
    throw new Error("a column reads a block's cosmos txs, but its source does not say which records need them (cosmosTx)")
  }
}

/** A column and the value it takes from an item (a record, or one of the rows a record yields). */
export interface ColumnOf<I> extends Column {
  readonly value: (item: I, context: RowContext) => Value
}

/**
 * The column declarer for items of type I: `const col = columnsOf<Block>()`, then
 * `col("height", "BIGINT", "block height", (b) => b.height)`: name, type, meaning and value
 * together, the value typed by the column type.
 */
export const columnsOf =
  <I>() =>
  <T extends ColumnType>(
    name: string,
    type: T,
    description: string,
    value: (item: I, context: RowContext) => ValueOf[T] | null
  ): ColumnOf<I> => ({ name, type, description, value })

/**
 * An append-only list: paged in ascending order. `height` lists (blocks) are sharded by height,
 * each shard's first page asked by the source's key of the rows after height a - 1; `position`
 * lists (the tx families) by row position, position p being the rows after sequence p (keyAfter),
 * then following next_key, stopping after the shard's row count. Neither is read by offset, which
 * the real indexer pays for with every row it skips.
 */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds sources of every record type; each dataset's module names its own
export interface AppendList<R = any> extends ListRef {
  /** one fetch serves every dataset of the same source id (evm_txs and evm_logs) */
  readonly id: string
  readonly unit: "height" | "position"
  /** the source's watermark that bounds the data (the tip, or a lagging one such as internal_tx_height) */
  readonly watermark: string
  /** the record check on the hot path (compiled from the record's Effect Schema) */
  readonly validate: (record: unknown) => FieldIssue | undefined
  readonly heightOf: (record: R) => number
  /** what names one record of the list (a block's height, a tx's hash): a record met twice means the pages overlap */
  readonly identityOf: (record: R) => string
  /** the chain a record names, where it names one (a block's chain_id): a record of another chain than /status's is foreign */
  readonly chainIdOf?: (record: R) => string
  /**
   * records that stand for one of their block's cosmos txs (RowContext.cosmosTxHashes): `needed`
   * says which (the engine asks for those blocks' hashes only), `of` which of the block's hashes
   * one stands for, undefined where none does (the page is then refused: the indexer's answers
   * disagree, as a replica behind answering for the block would)
   */
  readonly cosmosTx?: {
    readonly needed: (record: R) => boolean
    readonly of: (record: R, hashes: ReadonlyArray<string>) => string | undefined
  }
  /**
   * another list whose records count this position list's records at their height, at least (the
   * blocks' tx_count for txs; the cosmos txs that have receipts for EVM receipts; the blocks with
   * txs above the newest internal tx, which /status's internal_tx_height says cannot be there):
   * where the newest record is below the plan's tip, the heights up to the tip must count none
   * (answers behind /status, from a replica or a cache, would end the plan early). `says`: what a
   * record that counts says, where "counts N of them" would not
   */
  readonly countedBy?: {
    readonly list: AppendList
    // biome-ignore lint/suspicious/noExplicitAny: a record of the counting list, which passed its own check
    readonly count: (record: any) => number
    readonly says?: string
  }
}

interface Common {
  readonly name: string
  readonly description: string
  /** every column, in file order */
  readonly columns: ReadonlyArray<Column>
  /** the columns that name one row: no two rows of the dataset (of one snapshot) share them */
  readonly key: ReadonlyArray<string>
  /** rows are sorted by these columns within each file ("col DESC" allowed) */
  readonly sortKey: ReadonlyArray<string>
  readonly partition: Partitioning
}

export interface AppendDataset extends Common {
  readonly kind: "append"
  readonly list: AppendList
  /** index of the height column in a row (the partition's column) */
  readonly heightColumn: number
  /** its rows read the block time of their record's height (RowContext.blockTime) */
  readonly blockTime: boolean
  /** its rows read the cosmos tx their record stands for (RowContext.cosmosTxHashes, AppendList.cosmosTx) */
  readonly cosmosTx: boolean
  /** how many rows it holds at each height, as another dataset's column says it (RowsPerHeight) */
  readonly rowsPerHeight?: RowsPerHeight
  /** each record is one row (no `items`): a file holds a row for each list position it covers, but the records quarantined */
  readonly rowPerRecord: boolean
  /** a record's rows, each in column order */
  // biome-ignore lint/suspicious/noExplicitAny: the record passed the source's compiled check; its module reads it as its own type
  readonly toRows: (record: any, context: RowContext) => Array<Row>
}

/**
 * A column of another dataset that says how many rows this one holds at each height (blocks'
 * tx_count for txs), both read from one history: at the heights a commit holds whole, they must
 * agree with what the run or the lake holds of the other, or the two lists were answered from
 * different histories (two deployments behind one address), and the commit that shows it is
 * refused (rowCounts.ts).
 */
export interface RowsPerHeight {
  readonly dataset: string
  readonly column: string
}

/** One offset-paged list read for a snapshot (e.g. the rich list of one denom). */
export interface SnapshotList {
  readonly label: string
  readonly list: ListRef
  /** read in descending order (the rich list: largest holders first) */
  readonly reverse?: boolean
  /**
   * the list's pagination.total is an estimate (the real indexer's NFT collections total is
   * Postgres' reltuples: stale, or -1), so it says nothing of completeness: the cursor walk does
   */
  readonly totalIsEstimate?: boolean
  /**
   * what to do when the source answers that this list does not exist (the rich list of a denom the
   * chain cannot resolve): "empty" reads it as a list without rows, with a notice and the label
   * kept in the snapshot's `absent`; "fail" (a list the user named) fails the run once the
   * snapshot's other lists are committed. Unset: such an answer fails the run like any other.
   */
  readonly whenAbsent?: "empty" | "fail"
  /** the item check (compiled from the item's Effect Schema) */
  readonly validate: (item: unknown) => FieldIssue | undefined
  /** an item's rows in column order, without the snapshot_time the engine adds */
  // biome-ignore lint/suspicious/noExplicitAny: the item passed `validate`; its module reads it as its own type
  readonly toRows: (item: any) => Array<Row>
}

/** Why a snapshot has nothing to read this run, and what the user can do about it. */
export interface SnapshotSkip {
  readonly skip: string
  readonly hint?: string
}

/** What a snapshot dataset may use to name its lists. */
export interface SnapshotInput {
  /** list parameters given to the export (e.g. denoms) */
  readonly params: Readonly<Record<string, ReadonlyArray<string>>>
  /** every item of a list, read with the engine's pager */
  readonly readAll: (
    list: ListRef,
    validate: (item: unknown) => FieldIssue | undefined
  ) => Effect.Effect<ReadonlyArray<unknown>, SourceFailure>
  /**
   * rows of another dataset's committed files: `select` reads them as the table `committed`. It
   * may run over the files in several batches (an S3 lake's files are fetched one at a time), its
   * rows concatenated: a select whose batches the caller cannot combine (a count, say) is wrong here.
   */
  readonly readCommitted: (dataset: string, select: string) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, SourceFailure>
}

/** A mutable-state dataset written as a snapshot partition taken at a watermark. */
export interface SnapshotDataset extends Common {
  readonly kind: "snapshot"
  readonly watermark: string
  /** the position of the column holding the height of each row's state (a creation, the last transfer), if rows carry one: a row past the snapshot height is not state as of it */
  readonly stateHeightColumn?: number
  /** the list whose answer tells whether this source serves the dataset at all */
  readonly probe: ListRef
  /** datasets whose committed files this one reads (SnapshotInput.readCommitted): in a run that exports them, it waits for them */
  readonly after: ReadonlyArray<string>
  /** the lists to read; none (with a reason, and what to do) when the dataset has nothing to read, e.g. no denoms */
  readonly lists: (input: SnapshotInput) => Effect.Effect<ReadonlyArray<SnapshotList> | SnapshotSkip, SourceFailure>
}

/** A dataset written by a sampler (router quotes, tracked transfers) through the engine's commit. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds samplers of every item type; each dataset's module names its own
export interface SampleDataset<I = any> extends Common {
  readonly kind: "sample"
  /** the command that writes it (`chain-lake <writtenBy>`): export does not */
  readonly writtenBy: string
  /** by the UTC day of a time column */
  readonly partition: DatePartitioning
  /** the row of one sampled item */
  readonly toRow: (item: I) => Row
}

export type Dataset = AppendDataset | SnapshotDataset | SampleDataset

/** The row builder of a column list: one positional row per item. */
const rowBuilder = <I>(columns: ReadonlyArray<ColumnOf<I>>): ((item: I, context?: RowContext) => Row) => {
  const values = columns.map((c) => c.value)
  const n = values.length
  return (item, context = NO_CONTEXT) => {
    // Stryker disable next-line ArrayDeclaration: sized up front only for speed; every slot is set below
    const row: Row = new Array(n)
    for (let i = 0; i < n; i++) row[i] = values[i](item, context)
    return row
  }
}

const plain = (columns: ReadonlyArray<Column>): Array<Column> =>
  columns.map((c) => ({ name: c.name, type: c.type, description: c.description }))

const indexOf = (name: string, columns: ReadonlyArray<Column>, dataset: string, what: string): number => {
  const i = columns.findIndex((c) => c.name === name)
  if (i < 0) throw new Error(`${dataset}: ${what} ${name} is not a column`)
  return i
}

const checked = <D extends Common>(d: D): D => {
  for (const k of d.key) indexOf(k, d.columns, d.name, "key column")
  // Stryker disable next-line Regex: column names hold no spaces, so " ASC"/" DESC" can only be the end
  for (const k of d.sortKey) indexOf(k.replace(/ (ASC|DESC)$/i, ""), d.columns, d.name, "sort column")
  if (new Set(d.columns.map((c) => c.name)).size !== d.columns.length) throw new Error(`${d.name}: a column is declared twice`)
  return d
}

/** The column every snapshot dataset ends with: when its snapshot was read (set by the engine). */
export const SNAPSHOT_TIME: Column = { name: "snapshot_time", type: "TIMESTAMP", description: "when the snapshot was read (UTC)" }

/**
 * An append-only dataset of `source`: each record yields `items(record)` rows (one row per record
 * by default), each row's values read by `columns`.
 */
export const defineAppend = <R, I = R>(d: {
  readonly name: string
  readonly description: string
  readonly list: AppendList<R>
  readonly items?: (record: R) => ReadonlyArray<I>
  /** one row per record, its columns read from this view of it (instead of `items`) */
  readonly view?: (record: R) => I
  readonly columns: ReadonlyArray<ColumnOf<I>>
  readonly key: ReadonlyArray<string>
  readonly sortKey: ReadonlyArray<string>
  readonly partition: HeightBucketPartitioning
  /** a column reads `context.blockTime` (the source's records carry a height but no time) */
  readonly blockTime?: boolean
  /** a column reads `context.cosmosTxHashes` (the cosmos tx a record stands for: AppendList.cosmosTx) */
  readonly cosmosTx?: boolean
  readonly rowsPerHeight?: RowsPerHeight
}): AppendDataset => {
  const row = rowBuilder(d.columns)
  const { items, view = (record: R) => record as unknown as I } = d
  return checked({
    kind: "append",
    name: d.name,
    description: d.description,
    list: d.list,
    columns: plain(d.columns),
    key: d.key,
    sortKey: d.sortKey,
    partition: d.partition,
    heightColumn: indexOf(d.partition.column, d.columns, d.name, "partition column"),
    blockTime: d.blockTime ?? false,
    cosmosTx: d.cosmosTx ?? false,
    ...(d.rowsPerHeight ? { rowsPerHeight: d.rowsPerHeight } : {}),
    rowPerRecord: items === undefined,
    toRows: items
      ? (record: R, context: RowContext) => items(record).map((item) => row(item, context))
      : (record: R, context: RowContext) => [row(view(record), context)]
  })
}

/** A snapshot dataset: its lists' items each become one row by `columns`, plus snapshot_time. */
export const defineSnapshot = <I>(d: {
  readonly name: string
  readonly description: string
  readonly watermark: string
  readonly probe: ListRef
  readonly after?: ReadonlyArray<string>
  readonly columns: ReadonlyArray<ColumnOf<I>>
  readonly key: ReadonlyArray<string>
  readonly sortKey: ReadonlyArray<string>
  /** the column holding the height of each row's state (a creation, the last transfer), if rows carry one */
  readonly stateHeight?: string
  /** the lists to read; `row` is this dataset's row builder */
  readonly lists: (input: SnapshotInput, row: (item: I) => Row) => Effect.Effect<ReadonlyArray<SnapshotList> | SnapshotSkip, SourceFailure>
}): SnapshotDataset => {
  const row = rowBuilder(d.columns)
  const columns = [...plain(d.columns), SNAPSHOT_TIME]
  return checked({
    kind: "snapshot",
    name: d.name,
    description: d.description,
    watermark: d.watermark,
    ...(d.stateHeight === undefined ? {} : { stateHeightColumn: indexOf(d.stateHeight, d.columns, d.name, "state height column") }),
    probe: d.probe,
    after: d.after ?? [],
    columns,
    key: d.key,
    sortKey: d.sortKey,
    partition: { kind: "snapshot" },
    lists: (input) => d.lists(input, row)
  })
}

/**
 * `column` with its text redacted (secrets/redact.ts): a router (or a gateway before it) may echo
 * the request's key or credentials into any text it answers, a warning or a link as well as an
 * error, and what a service said is stored as it said it.
 */
const redacted = <I>(column: ColumnOf<I>): ColumnOf<I> => {
  if (column.type !== "VARCHAR" && column.type !== "JSON" && column.type !== "VARCHAR[]") return column
  const value = column.value
  const hide = (v: unknown) => (typeof v === "string" ? redact(v) : v)
  return {
    ...column,
    value: (item, context) => {
      const v = value(item, context)
      return (Array.isArray(v) ? v.map(hide) : hide(v)) as ReturnType<typeof value>
    }
  }
}

/** A sampled dataset (a service's answers over time): each item becomes one row by `columns`, its text redacted. */
export const defineSample = <I>(d: {
  readonly name: string
  readonly description: string
  readonly writtenBy: string
  readonly columns: ReadonlyArray<ColumnOf<I>>
  readonly key: ReadonlyArray<string>
  readonly sortKey: ReadonlyArray<string>
  readonly partition: DatePartitioning
}): SampleDataset<I> =>
  checked({
    kind: "sample",
    name: d.name,
    description: d.description,
    writtenBy: d.writtenBy,
    columns: plain(d.columns),
    key: d.key,
    sortKey: d.sortKey,
    partition: d.partition,
    toRow: rowBuilder(d.columns.map(redacted))
  })

/** The hive partition column a reader sees for `d` (height_bucket, snapshot_height or date). */
export const partitionOf = (d: Dataset) => partitionColumn(d.partition)
