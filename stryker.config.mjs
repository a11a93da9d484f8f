/**
 * Mutation testing of the core (`npm run mutate`; opt-in, not part of CI): StrykerJS plants small
 * bugs (mutants) in the scope's modules, one at a time, and runs the tests that cover each; a
 * mutant no test notices "survives". The scope (the engine's paging, commit and resume, the commit
 * protocol, retry and limiter, the dataset row builders) is in groups, each mutated against its
 * own tests (scripts/mutation-groups.mjs); this file runs the group MUTATE_GROUP names, and
 * scripts/mutate.mjs runs them all. Scores per module and the surviving mutants judged equivalent
 * are in docs/testing.md.
 */
import { mutationGroup } from "./scripts/mutation-groups.mjs"

const name = process.env.MUTATE_GROUP
const group = mutationGroup(name)

export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts", related: false },
  // the second keeps vitest's worker thread from one test file to the next (see the file)
  plugins: ["@stryker-mutator/vitest-runner", "./scripts/stryker-keep-worker.mjs"],
  // one group of the scope (scripts/mutation-groups.mjs); scripts/mutate.mjs runs every group
  mutate: group.mutate,

  coverageAnalysis: "perTest",
  // module-level constants run once at import, so every test would have to run for each of them
  // (98% of the time in a trial); they are listed as ignored, not scored
  ignoreStatic: true,
  // one runner per core: 3 runners on 2 cores overloaded the machine (load 6) and ran no faster
  concurrency: 2,
  // a mutant that makes paging loop forever is cut off after its tests' usual time × 1.5 + this
  // (8000 until session 12: 4000 gave every mutant of the lake and http groups the same status,
  // and a timed-out mutant costs this wait and a new runner)
  timeoutMS: 4000,
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  // `npm run mutate -- --incremental` re-tests only mutants whose code or tests changed since the
  // group's last run (a developer's loop; a recorded score comes from a full run)
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
  thresholds: { high: 90, low: 80, break: null }
}
