/**
 * A child process for test/lake/duckdb-interrupt.test.ts: starts a DuckDB query that runs for minutes
 * through the sink or the analytics layer, interrupts its fiber after 300 ms (what Ctrl-C does),
 * and exits. Before connections were guarded (src/lake/duckdb.ts), the scope closed the
 * connection under the running query and `process.exit` then waited for DuckDB's worker forever.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Fiber } from "effect"
import { Analytics, layerAnalytics } from "../../src/analytics/Analytics.js"
import { layerParquetSink, ParquetSink } from "../../src/lake/ParquetSink.js"

const LONG = "SELECT count(*) AS n FROM range(100000000000) t(i) WHERE i % 7 = 3"

const program: Effect.Effect<unknown, unknown> =
  process.argv[2] === "analytics"
    ? Effect.flatMap(Analytics, (a) => a.query(LONG)).pipe(
        Effect.provide(layerAnalytics({ dataDir: mkdtempSync(join(tmpdir(), "chain-lake-interrupt-")) }))
      )
    : Effect.flatMap(ParquetSink, (s) => s.query(LONG)).pipe(Effect.provide(layerParquetSink()))

const fiber = Effect.runFork(program)
await new Promise((r) => setTimeout(r, 300))
const exit = await Effect.runPromise(Fiber.interrupt(fiber))
console.log(`interrupted: ${exit._tag}`)
process.exit(0)
