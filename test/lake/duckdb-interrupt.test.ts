/** Ctrl-C during a DuckDB query: the query is interrupted and the process exits, never hangs (src/lake/duckdb.ts). */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const CHILD = fileURLToPath(new URL("../support/interrupt-query.ts", import.meta.url))

/** Runs the child; resolves with its exit code and output, or "hung" if it has not exited after `ms`. */
const runChild = (mode: string, ms: number) =>
  new Promise<{ code: number | null | "hung"; stdout: string }>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, mode], { stdio: ["ignore", "pipe", "inherit"] })
    let stdout = ""
    child.stdout.on("data", (d) => (stdout += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      resolve({ code: "hung", stdout })
    }, ms)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout })
    })
  })

describe("interrupting a running DuckDB query", () => {
  for (const mode of ["sink", "analytics"])
    it(`${mode}: the fiber is interrupted, the connection closes after the query stops, and the process exits`, async () => {
      const r = await runChild(mode, 20_000)
      expect(r).toEqual({ code: 0, stdout: "interrupted: Failure\n" })
    })
})
