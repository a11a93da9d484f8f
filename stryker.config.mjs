/**
 * Mutation testing of the core (`npm run mutate`; opt-in, not part of CI): StrykerJS plants small
 * bugs (mutants) in the modules below, one at a time, and runs the tests that cover each; a mutant
 * no test notices "survives". Scope: the engine's paging, commit and resume, the commit protocol
 * (sink and checkpoints), retry and limiter, and the dataset row builders. Scores per module and
 * the surviving mutants judged equivalent are in docs/testing.md. Keep the scope current as
 * modules move.
 */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts", related: false },
  plugins: ["@stryker-mutator/vitest-runner"],
  mutate: [
    // paging, planning, shards, snapshots, commit and resume
    "src/engine/export.ts",
    "src/engine/plan.ts",
    "src/engine/positions.ts",
    "src/engine/pager.ts",
    "src/engine/shard.ts",
    "src/engine/snapshot.ts",
    "src/engine/pageDecode.ts",
    "src/engine/commit.ts",
    "src/engine/identity.ts",
    "src/sources/indexer.ts",
    "src/indexer/envelope.ts",
    "src/lake/RangeSet.ts",
    // the commit protocol: files staged and committed under a lock, manifests, the layout, the lake's identity
    "src/lake/ParquetSink.ts",
    "src/lake/Checkpoints.ts",
    "src/lake/lock.ts",
    "src/lake/manifest.ts",
    "src/lake/commitLog.ts",
    "src/lake/files.ts",
    "src/lake/layout.ts",
    // compaction: the plan, the merge and the swap (Checkpoints.commitCompaction above)
    "src/lake/compaction.ts",
    // retry and limiter
    "src/http/retry.ts",
    "src/http/RequestLimiter.ts",
    "src/indexer/errors.ts",
    // the dataset declarations and their row builders
    "src/engine/Dataset.ts",
    "src/datasets/*.ts",
    "!src/datasets/index.ts"
  ],

  coverageAnalysis: "perTest",
  // module-level constants run once at import, so every test would have to run for each of them
  // (98% of the time in a trial); they are listed as ignored, not scored
  ignoreStatic: true,
  // one runner per core: 3 runners on 2 cores overloaded the machine (load 6) and ran no faster
  concurrency: 2,
  // a mutant that makes paging loop forever is cut off after its tests' usual time × 1.5 + this
  timeoutMS: 8000,
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  thresholds: { high: 90, low: 80, break: null }
}
