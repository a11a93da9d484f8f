/**
 * How a column is staged and written: the staging table holds each column in a plain DuckDB type
 * (text for the types the appender cannot take directly), the appender of each column takes a
 * row's value, and the COPY that writes the file casts each back to its Parquet type.
 */
import type { DuckDBAppender } from "@duckdb/node-api"
import type { Column, ColumnType, Value } from "./columns.js"
import { quoteIdent } from "./sql.js"

export const stageType = (t: ColumnType): "BIGINT" | "INTEGER" | "BOOLEAN" | "DOUBLE" | "VARCHAR" =>
  t === "BIGINT" || t === "INTEGER" || t === "BOOLEAN" || t === "DOUBLE" ? t : "VARCHAR"

/** The SELECT expression turning a staged column into its Parquet type. */
export const finalExpr = (c: Column): string => {
  const id = quoteIdent(c.name)
  switch (c.type) {
    case "TIMESTAMP":
      // through TIMESTAMP_NS: DuckDB's cast of text to TIMESTAMP drops a UTC offset (block times
      // come in the indexer's local zone: 17:00:01+09:00 would be stored as 17:00:01), the one to
      // TIMESTAMP_NS applies it, whatever the session's zone; a time outside its years (1677–2262:
      // Go's zero time, year 1) as TIMESTAMP, and text that is no time fails the file
      return `COALESCE(TRY_CAST(TRY_CAST(${id} AS TIMESTAMP_NS) AS TIMESTAMP), CAST(${id} AS TIMESTAMP)) AS ${id}`
    case "TIMESTAMP_NS":
      return `CAST(${id} AS TIMESTAMP_NS) AS ${id}`
    case "DECIMAL(38,0)":
      return `TRY_CAST(${id} AS DECIMAL(38,0)) AS ${id}`
    case "JSON":
      return `CAST(${id} AS JSON) AS ${id}`
    case "VARCHAR[]":
      return `from_json(${id}, '["VARCHAR"]') AS ${id}`
    default:
      return id
  }
}

/** a JSON escape of a surrogate, after an even run of backslashes (an odd one escapes the "\\" itself) */
const ESCAPED_SURROGATE = /(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g
/**
 * JSON text as DuckDB's JSON type takes it. JSON.stringify writes a lone surrogate (a string cut
 * mid-pair, which a server may send escaped) as its escape and a whole pair as itself, and
 * DuckDB refuses the escape ("Conversion Error", the whole file failing): so each escaped
 * surrogate becomes U+FFFD, as the appender stores a lone surrogate of a VARCHAR.
 */
export const wellFormedJson = (text: string): string => (text.indexOf("\\u") === -1 ? text : text.replace(ESCAPED_SURROGATE, "$1\ufffd"))

type Appendix = (a: DuckDBAppender, v: Value) => void
export const appenderFor = (t: ColumnType): Appendix => {
  if (t === "JSON" || t === "VARCHAR[]") return (a, v) => (v === null ? a.appendNull() : a.appendVarchar(wellFormedJson(String(v))))
  switch (stageType(t)) {
    // Stryker disable next-line StringLiteral,ConditionalExpression: the staging column casts text to its type, so a value appended as text is stored the same (only slower)
    case "BIGINT":
      // Stryker disable next-line StringLiteral,ConditionalExpression: as above; BigInt of a bigint is itself
      return (a, v) => (v === null ? a.appendNull() : a.appendBigInt(typeof v === "bigint" ? v : BigInt(v as number | string)))
    // Stryker disable next-line StringLiteral,ConditionalExpression: as above
    case "INTEGER":
      return (a, v) => (v === null ? a.appendNull() : a.appendInteger(Number(v)))
    // Stryker disable next-line StringLiteral,ConditionalExpression: as above
    case "BOOLEAN":
      return (a, v) => (v === null ? a.appendNull() : a.appendBoolean(Boolean(v)))
    // Stryker disable next-line StringLiteral,ConditionalExpression: as above
    case "DOUBLE":
      return (a, v) => (v === null ? a.appendNull() : a.appendDouble(Number(v)))
    default:
      return (a, v) => (v === null ? a.appendNull() : a.appendVarchar(String(v)))
  }
}
