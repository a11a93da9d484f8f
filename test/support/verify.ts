/** Reading `chain-lake verify`'s report: one line per check, `ok` or `FAIL`, its name, a colon and its detail. */
import { expect } from "vitest"

/** The checks whose names match `name` (names hold colons too, so a check is found by its name's shape). */
export const verifyChecks = (stdout: string, name: RegExp): Map<string, boolean> => {
  const checks = new Map<string, boolean>()
  for (const line of stdout.split("\n")) {
    const m = /^(ok|FAIL) +(.*)$/.exec(line)
    const found = m && new RegExp(`^(?:${name.source}): `).exec(m[2])
    if (m && found) checks.set(found[0].slice(0, -2), m[1] === "ok")
  }
  return checks
}

/**
 * After an interrupted run the lake may have holes (shards commit out of order) but is consistent:
 * every check verify ran passed (it compares datasets only where both hold every row), among them
 * the duplicate and manifest-vs-files checks of blocks.
 */
export const expectConsistent = (stdout: string) => {
  const checks = verifyChecks(stdout, /[a-z_]+: [^:]+/)
  expect([...checks.keys()], stdout).toContain("blocks: no duplicate heights")
  expect([...checks.keys()], stdout).toContain("blocks: rows equal the manifest's")
  expect(stdout).not.toMatch(/^FAIL/m)
  expect(stdout).toMatch(/^all \d+ checks passed$/m)
}
