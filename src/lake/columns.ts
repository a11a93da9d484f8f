/** The lake's column model: a column's name, Parquet (DuckDB) type and meaning, and the values a row holds. */

/** Parquet column types (DuckDB types). Amounts too big for DECIMAL(38,0) stay exact as VARCHAR. */
export type ColumnType =
  | "BIGINT"
  | "INTEGER"
  | "BOOLEAN"
  | "DOUBLE"
  | "VARCHAR"
  | "JSON"
  | "TIMESTAMP"
  | "TIMESTAMP_NS"
  | "DECIMAL(38,0)"
  | "VARCHAR[]"

export interface Column {
  readonly name: string
  readonly type: ColumnType
  readonly description: string
}

/** One row's values in column order: strings for VARCHAR/JSON/TIMESTAMP/DECIMAL, JSON text for lists. */
export type Value = string | number | bigint | boolean | null
export type Row = Array<Value>

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** Whether `v` fits a BIGINT (DuckDB's int64): a safe or exact integer number, an integer's decimal text, a bigint. */
const fitsInt64 = (v: Exclude<Value, null>): boolean => {
  if (typeof v === "number") return Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63
  if (typeof v === "bigint") return v >= INT64_MIN && v <= INT64_MAX
  if (typeof v !== "string" || !/^-?\d{1,19}$/.test(v)) return false
  // up to 18 digits always fits; 19 may not
  return v.length - (v[0] === "-" ? 1 : 0) < 19 || (BigInt(v) >= INT64_MIN && BigInt(v) <= INT64_MAX)
}

/**
 * The check of a row's integer columns against their types, run before a row is appended: a value
 * out of range (a tx_count past 2^31, gas past 2^63) failed the append half-way through the row,
 * with only "number out of int32 range" to say so. Undefined when every value fits, else the
 * first column that does not and why.
 */
export const integerRangeCheck = (columns: ReadonlyArray<Column>) => {
  const checked = columns.flatMap((c, i) => (c.type === "INTEGER" || c.type === "BIGINT" ? [{ i, name: c.name, type: c.type }] : []))
  return (row: ReadonlyArray<Value>): { readonly column: string; readonly message: string } | undefined => {
    for (const { i, name, type } of checked) {
      const v = row[i]
      if (v === null) continue
      // an INTEGER's text is decimal digits, as a BIGINT's ("", " ", "0x1f" or "1e3" are no integers)
      const n = type === "INTEGER" && (typeof v === "number" || (typeof v === "string" && /^-?\d{1,10}$/.test(v))) ? Number(v) : NaN
      const fits = type === "INTEGER" ? Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 : fitsInt64(v)
      if (!fits)
        return {
          column: name,
          message: `${String(v).slice(0, 40)} does not fit column ${name} (${type === "INTEGER" ? "a 32-bit" : "a 64-bit"} integer)`
        }
    }
    return undefined
  }
}

/**
 * What is wrong with a dataset whose committed files were written with columns this version no
 * longer has (renamed or dropped: the schema convention of docs/schema.md renamed many), or
 * undefined. Its files and new ones cannot be read as one table (a renamed column would read as
 * two half-NULL ones), so neither an export into it nor a reader of it goes on.
 */
export const retiredColumnsProblem = (
  dataset: string,
  had: ReadonlyArray<{ readonly name: string }>,
  columns: ReadonlyArray<{ readonly name: string }>
): string | undefined => {
  const now = new Set(columns.map((c) => c.name))
  const gone = had.map((c) => c.name).filter((n) => !now.has(n))
  return gone.length > 0
    ? `${dataset} was written by an older chain-lake, with columns since renamed or dropped (${gone.join(", ")}; see docs/schema.md): export it again into a new folder (the old one stays readable by the chain-lake that wrote it)`
    : undefined
}
