/** The analytics service's options, answers and errors (Analytics.ts is the service). */
import { realpathSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { Data } from "effect"
import type { ListedFiles } from "../lake/listed.js"

export class AnalyticsError extends Data.TaggedError("AnalyticsError")<{ readonly message: string }> {}
/**
 * DuckDB rejected the SQL (syntax, unknown column, bad parameter …): its own message. `lake`: it
 * failed on the lake's files instead, no mistake in the query: a view whose files could not be
 * read when it was made (a damaged file or manifest, listed files not in place) or made again.
 */
export class SqlError extends Data.TaggedError("SqlError")<{ readonly message: string; readonly lake?: true }> {}

export interface QueryResult {
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>
  /** JSON-safe values: BIGINT, HUGEINT and DECIMAL as exact strings, times as ISO-like text */
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
}

export type ParamValue = string | number | bigint | boolean | null

export interface AnalyticsOptions {
  readonly dataDir: string
  /** a DuckDB file to hold the views (the catalog); default in memory */
  readonly dbFile?: string
  /** views read the files a manifest lists when each query runs (new ones show by themselves) rather than as of now */
  readonly live?: boolean
  /**
   * Confines DuckDB to the lake (`chain-lake query`, whose SQL is the user's): DuckDB's own sandbox
   * (enable_external_access = false, allowed_directories = the lake, allowed_paths = `paths`,
   * then lock_configuration so SQL cannot undo it), within `memoryLimit`, spilling into a fresh
   * temporary folder that is removed at the end. Without it, `read_text('/etc/passwd')`,
   * `glob('/root/*')` and `read_text('/proc/self/environ')` answered. Not for the catalog, whose
   * views are for other clients and must keep relative paths.
   */
  readonly confine?: { readonly paths?: ReadonlyArray<string>; readonly memoryLimit?: string }
  /**
   * The files each dataset's view reads, as listedFiles found them once (`chain-lake verify`, whose
   * checks compare the views with the manifests that listed their files): the views are made of
   * these, not of the manifests as they stand when the views are made, which a writer may commit
   * to meanwhile. Datasets it does not name are read as usual.
   */
  readonly pinned?: ReadonlyMap<string, ListedFiles>
}

/**
 * The real path of `path`: DuckDB's sandbox compares the paths it opens after resolving links, so
 * a lake reached through a symlink (or a /tmp that is one) is allowed by its real path. A path not
 * there yet (an output file) is its nearest existing parent's real path plus the rest.
 */
export const realPathOf = (path: string): string => {
  const full = resolve(path)
  try {
    return realpathSync(full)
  } catch {
    const parent = dirname(full)
    return parent === full ? full : join(realPathOf(parent), basename(full))
  }
}
