/**
 * CI's closing lines: one per test run (a Node version, from its vitest JSON report), then
 * "Tests: N passed, N failed" summed over every run. A run whose report is missing or unreadable
 * counts as one failed test (it never got to report), and so does each failed check (typecheck, lint).
 * Usage: node .ci/summary.mjs RUNS.tsv "FAILED CHECKS", RUNS.tsv holding "label<TAB>report" lines and
 * FAILED CHECKS the names of the checks that failed, space-separated (empty when none did).
 */
import { readFileSync } from "node:fs"

const [runsFile, failedChecks = ""] = process.argv.slice(2)

/** passed and failed tests of one vitest JSON report; a suite that failed to load counts once */
const counts = (report) => {
  try {
    const r = JSON.parse(readFileSync(report, "utf8"))
    return { passed: r.numPassedTests, failed: r.numFailedTests + (r.numFailedTestSuites && !r.numFailedTests ? r.numFailedTestSuites : 0) }
  } catch {
    return { passed: 0, failed: 1 }
  }
}

let passed = 0
let failed = 0
for (const line of readFileSync(runsFile, "utf8").split("\n").filter(Boolean)) {
  const [label, report] = line.split("\t")
  const c = counts(report)
  console.log(`${label}: ${c.passed} passed, ${c.failed} failed`)
  passed += c.passed
  failed += c.failed
}
for (const check of failedChecks.split(" ").filter(Boolean)) {
  console.log(`${check} failed`)
  failed += 1
}
console.log(`Tests: ${passed} passed, ${failed} failed`)
