/**
 * DuckDB connections that are safe to close at any moment.
 *
 * Closing a connection while one of its queries runs on a libuv worker deadlocks that worker
 * inside DuckDB 1.5 (the finishing query drops the last reference to its client context, whose
 * destructor waits for a lock the same thread holds), and `process.exit` then joins the worker
 * forever: a Ctrl-C that landed during a COPY left the CLI hanging after it had said
 * "interrupted". An interrupted Effect abandons its promise, so the query may still run when the
 * scope's finalizer closes the connection. Every call is therefore made through `use`, and
 * `close` interrupts what still runs, waits for it to settle, and only then closes.
 */
import type { DuckDBConnection } from "@duckdb/node-api"

type DuckDBApi = typeof import("@duckdb/node-api")

/**
 * DuckDB's JavaScript API, loaded where first used (a static import would load it for --help too).
 * Bundled into the CLI (scripts/build.mjs), the package is a CommonJS chunk whose exports are its
 * module's default export; imported from its package, Node names them both ways.
 */
export const duckdbApi = async (): Promise<DuckDBApi> => {
  const loaded = (await import("@duckdb/node-api")) as DuckDBApi & { readonly default?: DuckDBApi }
  return loaded.default ?? loaded
}

export interface GuardedConnection {
  /** Runs one call on the connection (a query, a prepare, an appender's creation), tracked until it settles. */
  readonly use: <A>(call: (conn: DuckDBConnection) => Promise<A>) => Promise<A>
  /**
   * Interrupts running calls, waits for them, runs `beforeClosing` (e.g. closing an appender,
   * which must not race a query) and closes; later calls are refused. Idempotent.
   */
  readonly close: (beforeClosing?: () => void) => Promise<void>
}

export const guardConnection = (conn: DuckDBConnection): GuardedConnection => {
  const running = new Set<Promise<unknown>>()
  let closing: Promise<void> | undefined
  return {
    use: (call) => {
      if (closing) return Promise.reject(new Error("the DuckDB connection is closed"))
      const p = call(conn)
      running.add(p)
      const untrack = () => void running.delete(p)
      p.then(untrack, untrack)
      return p
    },
    close: (beforeClosing) =>
      (closing ??= (async () => {
        if (running.size > 0) {
          conn.interrupt()
          await Promise.allSettled([...running])
        }
        try {
          beforeClosing?.()
        } finally {
          conn.closeSync()
        }
      })())
  }
}
