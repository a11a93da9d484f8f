/** Temporary folders for one test file; `removeAll` (in afterAll) deletes every one it made. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const tempDirs = (prefix: string) => {
  const dirs: Array<string> = []
  return {
    make: (): string => {
      const d = mkdtempSync(join(tmpdir(), prefix))
      dirs.push(d)
      return d
    },
    removeAll: (): void => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
    }
  }
}
