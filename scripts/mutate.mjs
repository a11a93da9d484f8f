#!/usr/bin/env node
/**
 * `npm run mutate [-- group …] [-- stryker flags]`: mutation testing of the core, one Stryker run
 * per group of scripts/mutation-groups.mjs (all groups when none is named), one after another
 * (each run uses both cores). Prints each group's time, then the score table over every group's
 * report (scripts/mutation-summary.mjs), which docs/testing.md records.
 * Flags other than group names go to Stryker (e.g. `--mutate src/engine/shard.ts`).
 */
import { spawnSync } from "node:child_process"
import { MUTATION_GROUPS } from "./mutation-groups.mjs"

const args = process.argv.slice(2)
const named = args.filter((a) => a in MUTATION_GROUPS)
const strykerArgs = args.filter((a) => !(a in MUTATION_GROUPS))
const groups = named.length > 0 ? named : Object.keys(MUTATION_GROUPS)

const times = []
const finished = []
const started = Date.now()
for (const group of groups) {
  const t0 = Date.now()
  console.log(`\n=== mutation group ${group} ===`)
  const run = spawnSync("npx", ["stryker", "run", "stryker.config.mjs", ...strykerArgs], {
    stdio: "inherit",
    env: { ...process.env, MUTATE_GROUP: group }
  })
  times.push([group, Date.now() - t0])
  if (run.status === 0) finished.push(group)
  else {
    console.error(`mutation group ${group}: Stryker exited with ${run.status ?? run.signal}; its scores are left out below`)
    process.exitCode = 1
  }
}
const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`
console.log("\n| group | run time |\n|---|---:|")
for (const [group, ms] of times) console.log(`| ${group} | ${minutes(ms)} |`)
console.log(`| **all** | **${minutes(Date.now() - started)}** |\n`)
// only this run's reports: a failed group's file, if any, is an earlier run's
if (finished.length > 0)
  spawnSync("node", ["scripts/mutation-summary.mjs", ...finished.map((g) => `reports/mutation/${g}.json`)], { stdio: "inherit" })
