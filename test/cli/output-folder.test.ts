/** The output folder check every writing command makes before it fetches anything (src/cli/outputFolder.ts). */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { outputFolderOutsideLakesProblem as outputFolderProblem } from "../../src/cli/outputFolder.js"

const dir = mkdtempSync(join(tmpdir(), "chain-lake-output-folder-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("an output folder", () => {
  it("that can be made passes, and the check leaves nothing behind", () => {
    writeFileSync(join(dir, "mine.txt"), "the user's")
    expect(outputFolderProblem("--out", join(dir, "lake", "deeper"))).toBeUndefined()
    expect(outputFolderProblem("--out", dir)).toBeUndefined()
    expect(readdirSync(dir)).toEqual(["mine.txt"])
  })

  it("where no folder can be made though permissions allow it (root in /proc) is refused, naming where", () => {
    expect(outputFolderProblem("--out", "/proc/nope")).toMatch(
      /^--out \/proc\/nope cannot be made: \/proc (takes no new folder \(\w+\)|is not writable)$/
    )
  })

  it("with a file in its place, or on its way, is refused", () => {
    writeFileSync(join(dir, "file"), "")
    expect(outputFolderProblem("--out", join(dir, "file"))).toMatch(/is a file, not a folder/)
    expect(outputFolderProblem("--out", join(dir, "file", "lake"))).toBe(
      `--out ${join(dir, "file", "lake")} cannot be made: ${join(dir, "file")} is a file`
    )
  })
})
