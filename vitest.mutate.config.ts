/**
 * The tests mutation testing runs (`npm run mutate`, stryker.config.mjs): those that exercise the
 * core in this process. Tests that drive the CLI in a child process cannot see a mutant (Stryker
 * switches mutants inside the test process), so they would only cost time; so would the slow
 * route-sampling tests, whose row builder row-builders.test covers.
 */
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"
import base from "./vitest.config.js"
// @ts-expect-error: a plain .mjs module (Stryker's config reads it too); this file is not type-checked by tsc
import { mutationGroup } from "./scripts/mutation-groups.mjs"

// MUTATE_GROUP names the group (scripts/mutation-groups.mjs) whose tests run, cheapest first: a
// mutant's tests run in this order and stop at the first failure (Stryker's bail), so a mutant a
// unit test kills never waits for an export test.
// MUTATE_TESTS=test/a.test.ts,test/b.test.ts narrows a trial run (with `--mutate src/x.ts`).
const order: Array<string> = mutationGroup().tests
const include = process.env.MUTATE_TESTS ? process.env.MUTATE_TESTS.split(",") : order

// not mergeConfig: it would append this list to the base's include instead of replacing it
/** Runs test files in the list's order; vitest's own order (slowest first) would run the export tests before the unit tests that kill most mutants at once. */
class CheapestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>) {
    const rank = (file: TestSpecification) => order.findIndex((name) => file.moduleId.endsWith(name))
    return [...files].sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  // CHAIN_LAKE_MUTATION: tests whose subject runs in a child process skip themselves (test/support/mutation.ts)
  // scripts/stryker-worker-reset.mjs: no mutant or coverage carried over from the file before (the worker thread is kept)
  test: {
    ...base.test,
    setupFiles: ["scripts/stryker-worker-reset.mjs"],
    env: { CHAIN_LAKE_MUTATION: "1" },
    include,
    reporters: ["default"],
    outputFile: {},
    sequence: { sequencer: CheapestFirst }
  }
})
