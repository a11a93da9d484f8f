/** The lake's column model: a column's name, Parquet (DuckDB) type and meaning, and the values a row holds. */

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
