/**
 * How `query` writes an answer: a table (its widths need every row it shows), or csv, json, ndjson
 * and markdown, each written as DuckDB hands over its rows, a chunk at a time, so that an answer of
 * millions of rows is never held whole.
 */
import type { QueryResult } from "../analytics/Analytics.js"
import { displayWidth } from "./progress.js"

/** How `query` writes a result (parquet is written by DuckDB itself, not formatted here). */
export type Format = "table" | "csv" | "json" | "ndjson" | "markdown"
export const FORMATS = ["table", "csv", "json", "ndjson", "markdown", "parquet"] as const

type Columns = QueryResult["columns"]
type Rows = ReadonlyArray<ReadonlyArray<unknown>>

const cell = (v: unknown): string => (v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v))
const csvCell = (v: unknown) => {
  const s = cell(v)
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

/** DuckDB's text of a time: date, time of day, and for TIMESTAMPTZ a zone's offset (node-api writes the process's zone: TZ). */
const DUCKDB_TIME = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d+)?(?:([+-])(\d\d)(?::(\d\d))?)?$/
/**
 * The lake's times are UTC (TIMESTAMP without a zone): printed so, as ISO 8601 with Z; a
 * TIMESTAMPTZ is moved to UTC the same way, whatever zone the process runs in. Text that is no
 * such time (infinity, a year BC) stays DuckDB's.
 */
const utc = (v: unknown) => {
  const m = typeof v === "string" ? DUCKDB_TIME.exec(v) : null
  if (m === null) return v
  const [, year, month, day, hour, minute, second, fraction = "", sign, zoneHours = "0", zoneMinutes = "0"] = m
  const at = new Date(0)
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day))
  at.setUTCHours(Number(hour), Number(minute) - (sign === "-" ? -1 : 1) * (Number(zoneHours) * 60 + Number(zoneMinutes)), Number(second))
  return `${at.toISOString().slice(0, 19)}${fraction}Z`
}
/** DuckDB's time column types (their values come as text). */
const TIMES = new Set(["TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMP WITH TIME ZONE"])
/** A JSON column's text, as the JSON it holds (text that does not parse stays text). */
const parsedJson = (v: unknown) => {
  if (typeof v !== "string") return v
  try {
    return JSON.parse(v)
  } catch {
    return v
  }
}

/** `rows` with each value as the output shows it: times marked UTC, JSON as JSON (json and ndjson output only). */
const converted = (columns: Columns, rows: Rows, format: Format): Rows => {
  const convert = columns.map((c) =>
    TIMES.has(c.type) ? utc : c.type === "JSON" && (format === "json" || format === "ndjson") ? parsedJson : (v: unknown) => v
  )
  return rows.map((row) => row.map((v, i) => (v === null ? null : convert[i](v))))
}

/** Table cells longer than this are cut, as DuckDB's own CLI cuts them; csv and json print every value whole. */
const TABLE_CELL_WIDTH = 48
/** A cell as the table shows it: line breaks as ↵, cut past TABLE_CELL_WIDTH terminal columns (a wide char takes two). */
const shownCell = (text: string): { readonly text: string; readonly cut: boolean } => {
  const flat = text.replace(/\r?\n/g, "↵")
  if (displayWidth(flat) <= TABLE_CELL_WIDTH) return { text: flat, cut: false }
  let kept = ""
  let width = 0
  for (const ch of flat) {
    width += displayWidth(ch)
    if (width > TABLE_CELL_WIDTH - 1) break
    kept += ch
  }
  return { text: `${kept}…`, cut: true }
}
export const tableCell = (text: string): string => shownCell(text).text

/**
 * A markdown cell: `|` escaped (it ends a cell), and `\` too, or a value ending in one would
 * escape the `|` after it; a line break would end the row, so it becomes <br>.
 */
const markdownCell = (v: unknown): string =>
  cell(v)
    .replace(/[\\|]/g, (c) => `\\${c}`)
    .replace(/\r?\n/g, "<br>")
/** Columns of numbers are right-aligned (`---:`), so their digits line up once rendered. */
const NUMERIC = /^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|DOUBLE|FLOAT|REAL|DECIMAL\(.*\))$/

const object = (columns: Columns, row: ReadonlyArray<unknown>) => Object.fromEntries(columns.map((c, i) => [c.name, row[i]]))
const lines = (texts: ReadonlyArray<string>) => texts.map((t) => `${t}\n`).join("")

/**
 * A format written as the rows come: its head once the columns are known, each chunk's rows
 * (`before`: how many rows were written before them), then its tail. Every line ends in \n.
 */
interface StreamedFormat {
  readonly head: (columns: Columns) => string
  readonly rows: (columns: Columns, rows: Rows, before: number) => string
  readonly tail: (written: number) => string
}

const STREAMED: Readonly<Record<Exclude<Format, "table">, StreamedFormat>> = {
  csv: {
    head: (columns) => lines([columns.map((c) => csvCell(c.name)).join(",")]),
    rows: (_, rows) => lines(rows.map((row) => row.map(csvCell).join(","))),
    tail: () => ""
  },
  // one object a line, no line at all for no rows (a blank line is no JSON)
  ndjson: {
    head: () => "",
    rows: (columns, rows) => lines(rows.map((row) => JSON.stringify(object(columns, row)))),
    tail: () => ""
  },
  // as JSON.stringify(rows, null, 1) writes the whole array: each object one level in
  json: {
    head: () => "[",
    rows: (columns, rows, before) =>
      rows
        .map((row, i) => `${before + i === 0 ? "\n" : ",\n"} ${JSON.stringify(object(columns, row), null, 1).replace(/\n/g, "\n ")}`)
        .join(""),
    tail: (written) => (written === 0 ? "]\n" : "\n]\n")
  },
  // GitHub-flavoured (DuckDB's CLI has it as `.mode markdown`): every value whole, each row on one line
  markdown: {
    head: (columns) =>
      lines([
        `| ${columns.map((c) => markdownCell(c.name)).join(" | ")} |`,
        `| ${columns.map((c) => (NUMERIC.test(c.type) ? "---:" : "---")).join(" | ")} |`
      ]),
    rows: (_, rows) => lines(rows.map((row) => `| ${row.map(markdownCell).join(" | ")} |`)),
    tail: () => ""
  }
}

/**
 * Writes an answer in `format` (not the table) as its chunks come: `start` once the columns are
 * known, then `chunk` for each chunk of rows, then `end`; each returns the text to write.
 */
export const streamedWriter = (format: Exclude<Format, "table">) => {
  const f = STREAMED[format]
  let written = 0
  return {
    start: (columns: Columns) => f.head(columns),
    chunk: (columns: Columns, rows: Rows) => {
      const text = f.rows(columns, converted(columns, rows, format), written)
      written += rows.length
      return text
    },
    end: () => f.tail(written)
  }
}

/** The most rows the table shows on a terminal, and the rows of each block it is written in elsewhere. */
export const TABLE_ROWS = 10_000

/** What the table says below it where it cut a value. */
const CUT_NOTE = `(values wider than ${TABLE_CELL_WIDTH} columns are cut with …: --format csv or json prints them whole)`

/**
 * Writes the table as its rows come, a block of TABLE_ROWS rows at a time, so that a table of
 * millions of rows is never held whole: the first block's columns fit it and the header, and a
 * later block's widen where its values are wider (as psql's FETCH_COUNT does; `widened` says
 * so). An answer of at most TABLE_ROWS rows is one table whose columns fit every row. Cells are
 * cut past TABLE_CELL_WIDTH columns (a note below says so), line breaks shown as ↵.
 */
export const tableWriter = () => {
  let held: Array<ReadonlyArray<string>> = []
  let widths: Array<number> | undefined
  let cut = false
  let widened = false
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => c + " ".repeat(Math.max(0, (widths?.[i] ?? 0) - displayWidth(c))))
      .join("  ")
      .trimEnd()
  const block = (columns: Columns) => {
    const rows = held
    held = []
    const fitted = columns.map((c, i) =>
      rows.reduce((w, row) => Math.max(w, displayWidth(row[i])), Math.max(widths?.[i] ?? 0, displayWidth(c.name)))
    )
    const head = widths === undefined
    widened ||= !head && fitted.some((w, i) => w > (widths?.[i] ?? 0))
    widths = fitted
    const lines = head ? [line(columns.map((c) => c.name)), line(widths.map((w) => "-".repeat(w)))] : []
    return [...lines, ...rows.map(line)].map((l) => `${l}\n`).join("")
  }
  return {
    chunk: (columns: Columns, rows: Rows): string => {
      let text = ""
      for (const row of converted(columns, rows, "table")) {
        held.push(
          row.map((v) => {
            const shown = shownCell(cell(v))
            cut ||= shown.cut
            return shown.text
          })
        )
        if (held.length === TABLE_ROWS) text += block(columns)
      }
      return text
    },
    end: (columns: Columns): string => {
      if (widths === undefined && held.length === 0) return `(no rows; columns: ${columns.map((c) => c.name).join(", ")})\n`
      return (held.length > 0 ? block(columns) : "") + (cut ? `${CUT_NOTE}\n` : "")
    },
    /** a block after the first widened a column: the header's columns no longer line up with every row */
    widened: () => widened
  }
}
