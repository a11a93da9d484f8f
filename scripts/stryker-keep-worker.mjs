/**
 * A Stryker plugin module with no plugins, loaded for its one side effect in each test-runner
 * process: vitest's worker thread is kept from one test file to the next (within a mutant run and
 * across runs) instead of being replaced after every file.
 *
 * Why: Stryker's vitest runner starts each mutant's tests with `vitest.start`, and vitest 3.2's
 * threads pool (Stryker forces it) gives each test file of a run a new worker thread (tinypool's
 * `isolateWorkers`), so every mutant re-imports `effect`, undici and DuckDB's bindings natively
 * (~0.7 s of a runner per file and mutant on this machine; docs/testing.md, session 11).
 *
 * What stays isolated: vitest still resets every module it transforms (the project's sources,
 * mutated or not, and the test files) before each test file (`poolOptions.threads.isolate` stays
 * true), so no project module's state outlives a file. What does outlive it: node_modules packages
 * loaded natively (effect, undici, @duckdb/node-api), which Stryker never mutates; `globalThis`,
 * where Stryker keeps the active mutant and the coverage (scripts/stryker-worker-reset.mjs resets
 * them before each file); and work a failed test left running (timers, sockets), which the tests'
 * own cleanup (servers closed in `finally`) keeps rare. The thread is still replaced about every
 * RECYCLE_EVERY files, so whatever builds up stays bounded.
 * `MUTATE_KEEP_WORKER=0` turns this off (to compare outcomes or times).
 */
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"

// the tinypool vitest itself resolves (a transitive dependency; patching another copy would do nothing)
const fromVitest = createRequire(createRequire(import.meta.url).resolve("vitest/package.json"))
const { Tinypool } = await import(pathToFileURL(fromVitest.resolve("tinypool")).href)

const RECYCLE_EVERY = 50

if (process.env.MUTATE_KEEP_WORKER !== "0") {
  const run = Tinypool.prototype.run
  let tasks = 0
  Tinypool.prototype.run = function (...args) {
    // the pool's options object is live and read when a task ends: with isolateWorkers off, the
    // worker that finished takes the next task instead of being terminated. (A run queues all its
    // files at once, so "every RECYCLE_EVERY" is approximate.)
    this.options.isolateWorkers = ++tasks % RECYCLE_EVERY === 0
    return run.apply(this, args)
  }
}

export const strykerPlugins = []
