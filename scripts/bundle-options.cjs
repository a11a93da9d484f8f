/**
 * What the CLI's bundles share (scripts/build.mjs) with the shard worker bundled from the sources
 * on first use (src/pipelines/layers.ts): the packages left outside, imported where used, and the
 * banner that gives the bundle a require() (some bundled CommonJS packages call it; an ES module
 * has none of its own).
 *
 * Outside: DuckDB's native binding (a direct dependency, so that it resolves from here under any
 * package manager; its JavaScript API is inside: its ~60 CommonJS modules, loaded one by one, cost
 * a worker ~150 ms of its start on 2 cores, ~45 ms bundled, bench/RESULTS.md), vega for report,
 * the AWS SDK for s3://, esbuild for pipeline files.
 */
module.exports = {
  external: ["@duckdb/node-bindings", "vega", "vega-lite", "@aws-sdk/*", "esbuild"],
  requireBanner: 'import { createRequire as __chainLakeRequire } from "node:module"; const require = __chainLakeRequire(import.meta.url);'
}
