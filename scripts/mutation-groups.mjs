/**
 * The scope of mutation testing (`npm run mutate`), in groups: each group's modules are mutated
 * against that group's tests only, in a Stryker run of its own (scripts/mutate.mjs runs them one
 * after another; stryker.config.mjs and vitest.mutate.config.ts read the group from
 * MUTATE_GROUP).
 *
 * Why groups: a mutant runs every test that executes its line until one fails. An export test
 * executes the engine, the sink, the manifests and every row builder, so in one run over the
 * whole scope a lake or row-builder mutant its own unit tests miss waits for every export test
 * (≈ 10–25 s of a runner each), and that is what made the run take hours. Here a module is scored
 * by the tests written for it: a survivor costs a second, not half a minute, and the score is a
 * lower bound (an export test might still have killed it). The engine's group keeps the in-process
 * export tests, which are the engine's own tests.
 *
 * Keep the scope current as modules move: every module of the core belongs to one group.
 * Test files are listed cheapest first: a mutant's tests run in this order and stop at the first
 * failure (Stryker's bail), so a mutant a unit test kills never waits for an export test.
 */
export const MUTATION_GROUPS = {
  // the dataset declarations and their row builders
  datasets: {
    mutate: ["src/engine/Dataset.ts", "src/datasets/*.ts", "!src/datasets/index.ts"],
    tests: [
      "test/datasets/addresses.test.ts",
      "test/datasets/row-edge-cases.test.ts",
      "test/datasets/row-builders.test.ts",
      "test/datasets/row-values.test.ts",
      "test/datasets/registry.test.ts"
    ]
  },
  // the lake's commit protocol: files staged and committed under a lock, manifests, the layout,
  // the S3 commit log, compaction's plan, merge and swap
  lake: {
    mutate: [
      "src/lake/RangeSet.ts",
      "src/lake/ParquetSink.ts",
      "src/lake/sinkDatabase.ts",
      "src/lake/stagedFile.ts",
      "src/lake/stagedColumns.ts",
      "src/lake/atomicCopy.ts",
      "src/lake/rewrite.ts",
      "src/lake/sinkMemory.ts",
      "src/lake/sql.ts",
      "src/lake/Manifests.ts",
      "src/lake/manifests/*.ts",
      "src/lake/lock.ts",
      "src/lake/manifest.ts",
      "src/lake/commitLog.ts",
      "src/lake/files.ts",
      "src/lake/layout.ts",
      "src/lake/compaction.ts"
    ],
    tests: [
      "test/lake/rangeset.test.ts",
      "test/lake/commit-log.test.ts",
      "test/lake/lake-files.test.ts",
      "test/lake/manifests.test.ts",
      "test/lake/compaction.test.ts",
      "test/lake/parquet-sink.test.ts"
    ]
  },
  // retry, the request limiter, the indexer's error classification
  http: {
    mutate: ["src/http/retry.ts", "src/http/RequestLimiter.ts", "src/indexer/errors.ts"],
    tests: ["test/indexer/errors.test.ts", "test/engine/paging.test.ts", "test/indexer/indexer-client.test.ts", "test/http/retry.test.ts"]
  },
  // the engine: paging, planning, shards, snapshots, commit and resume, the indexer driver
  engine: {
    mutate: [
      "src/engine/export.ts",
      "src/engine/exportTasks.ts",
      "src/engine/probe.ts",
      "src/engine/pagingRules.ts",
      "src/engine/plan.ts",
      "src/engine/positions.ts",
      "src/engine/pager.ts",
      "src/engine/pageBudget.ts",
      "src/engine/shard.ts",
      "src/engine/shardFiles.ts",
      "src/engine/pageContext.ts",
      "src/engine/snapshot.ts",
      "src/engine/pageDecode.ts",
      "src/engine/commit.ts",
      "src/engine/identity.ts",
      "src/drivers/indexer.ts",
      "src/drivers/indexer/*.ts",
      "src/indexer/cursors.ts",
      "src/indexer/envelope.ts"
    ],
    tests: [
      "test/engine/paging.test.ts",
      "test/engine/page-budget.test.ts",
      "test/engine/plan.test.ts",
      "test/engine/export-checks.test.ts",
      "test/engine/page-decode.test.ts",
      "test/drivers/block-times.test.ts",
      "test/lake/manifests.test.ts",
      "test/engine/export-hostile.test.ts",
      "test/engine/shard-edges.test.ts",
      "test/engine/export-options.test.ts",
      "test/engine/export-values.test.ts",
      "test/http/retry.test.ts"
    ]
  }
}

/** The group MUTATE_GROUP names, or an error naming the groups there are. */
export const mutationGroup = (name = process.env.MUTATE_GROUP) => {
  const group = MUTATION_GROUPS[name ?? ""]
  if (!group)
    throw new Error(
      `MUTATE_GROUP must be one of ${Object.keys(MUTATION_GROUPS).join(", ")} (got ${name ?? "nothing"}); npm run mutate runs them all`
    )
  return group
}
