/**
 * The tests mutation testing runs (`npm run mutate`, stryker.config.mjs): those that exercise the
 * core in this process. Tests that drive the CLI in a child process cannot see a mutant (Stryker
 * switches mutants inside the test process), so they would only cost time; so would the slow
 * route-sampling tests, whose row builder row-builders.test covers.
 */
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"
import base from "./vitest.config.js"

// cheapest first: a mutant's tests run in this order and stop at the first failure (Stryker's
// bail), so a mutant a unit test kills never waits for an export test
export const MUTATION_TESTS = [
  "test/rangeset.test.ts",
  "test/paging.test.ts",
  "test/errors.test.ts",
  "test/addresses.test.ts",
  "test/row-edge-cases.test.ts",
  "test/row-builders.test.ts",
  "test/row-values.test.ts",
  "test/registry.test.ts",
  "test/commit-log.test.ts",
  "test/lake-files.test.ts",
  "test/checkpoints.test.ts",
  "test/compaction.test.ts",
  "test/plan.test.ts",
  "test/schemas.test.ts",
  "test/page-decode.test.ts",
  "test/parquet-sink.test.ts",
  "test/export-hostile.test.ts",
  "test/indexer-client.test.ts",
  "test/export-values.test.ts",
  "test/export-options.test.ts",
  "test/retry.test.ts"
]

// MUTATE_TESTS=test/a.test.ts,test/b.test.ts narrows a trial run (with `npm run mutate -- --mutate src/x.ts`)
const include = process.env.MUTATE_TESTS ? process.env.MUTATE_TESTS.split(",") : MUTATION_TESTS

// not mergeConfig: it would append this list to the base's include instead of replacing it
/** Runs test files in the list's order; vitest's own order (slowest first) would run the export tests before the unit tests that kill most mutants at once. */
class CheapestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>) {
    const rank = (file: TestSpecification) => MUTATION_TESTS.findIndex((name) => file.moduleId.endsWith(name))
    return [...files].sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  // CHAIN_LAKE_MUTATION: tests whose subject runs in a child process skip themselves (test/support/mutation.ts)
  test: { ...base.test, env: { CHAIN_LAKE_MUTATION: "1" }, include, reporters: ["default"], outputFile: {}, sequence: { sequencer: CheapestFirst } }
})
