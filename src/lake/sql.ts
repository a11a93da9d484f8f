/**
 * Quoting for the SQL that chain-lake writes itself (file paths, column and view names, messages
 * in a view): the one place a string or an identifier is put into DuckDB's SQL text. A value a
 * user gives a query is bound as a parameter (`Analytics.query`), never quoted in.
 */

/** A name (column, table, view) as an SQL identifier: in double quotes, a double quote doubled. */
export const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`

/** A string as an SQL literal: in single quotes, a single quote doubled (DuckDB reads no backslash escape there). */
export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`

/** Strings as a DuckDB list literal, e.g. the files of `read_parquet([…])`. */
export const sqlStringList = (items: ReadonlyArray<string>) => `[${items.map(sqlString).join(", ")}]`

/** The ORDER BY terms of a sort key: a plain column name is quoted, a term such as "col DESC" is kept as is. */
export const orderByOf = (sortKey: ReadonlyArray<string>) => sortKey.map((k) => (/^[a-z_][a-z0-9_]*$/.test(k) ? quoteIdent(k) : k))
