#!/usr/bin/env node
/**
 * Summarises StrykerJS JSON reports (default: every group's, reports/mutation/<group>.json, written by
 * `npm run mutate`) as the Markdown table docs/testing.md records: per module, mutants killed
 * (timeouts count as killed), survived, not covered and ignored (static), and the score
 * killed / (killed + survived + not covered). `--survivors PATH` lists the survivors of the
 * modules whose path contains PATH, one line each, for triage.
 */
import { existsSync, readFileSync } from "node:fs"
import { MUTATION_GROUPS } from "./mutation-groups.mjs"

const args = process.argv.slice(2)
const at = args.indexOf("--survivors")
const survivorsOf = at >= 0 ? args.splice(at, 2)[1] : undefined
const paths =
  args.length > 0
    ? args
    : Object.keys(MUTATION_GROUPS)
        .map((g) => `reports/mutation/${g}.json`)
        .filter(existsSync)
// a module belongs to one group, so the reports' files do not overlap
const report = { files: Object.assign({}, ...paths.map((p) => JSON.parse(readFileSync(p, "utf8")).files)) }

const rows = []
const total = { killed: 0, survived: 0, noCoverage: 0, ignored: 0 }
for (const [file, data] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  const n = { killed: 0, survived: 0, noCoverage: 0, ignored: 0 }
  for (const m of data.mutants) {
    if (m.status === "Killed" || m.status === "Timeout") n.killed++
    else if (m.status === "Survived") n.survived++
    else if (m.status === "NoCoverage") n.noCoverage++
    else if (m.status === "Ignored") n.ignored++
  }
  for (const k of Object.keys(total)) total[k] += n[k]
  rows.push([file, n])
  if (survivorsOf && file.includes(survivorsOf)) {
    const lines = data.source.split("\n")
    for (const m of data.mutants
      .filter((m) => m.status === "Survived" || m.status === "NoCoverage")
      .sort((a, b) => a.location.start.line - b.location.start.line))
      console.log(
        `${file}:${m.location.start.line} ${m.status} ${m.mutatorName}: ${lines[m.location.start.line - 1].trim().slice(0, 100)} → ${String(m.replacement).replace(/\s+/g, " ").slice(0, 80)}`
      )
  }
}
if (!survivorsOf) {
  const score = (n) =>
    n.killed + n.survived + n.noCoverage === 0 ? "–" : `${((100 * n.killed) / (n.killed + n.survived + n.noCoverage)).toFixed(1)} %`
  console.log("| module | score | killed | survived | not covered | ignored (static) |")
  console.log("|---|---:|---:|---:|---:|---:|")
  for (const [file, n] of rows) console.log(`| ${file} | ${score(n)} | ${n.killed} | ${n.survived} | ${n.noCoverage} | ${n.ignored} |`)
  console.log(`| **all** | **${score(total)}** | ${total.killed} | ${total.survived} | ${total.noCoverage} | ${total.ignored} |`)
}
