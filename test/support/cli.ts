/** Runs the real CLI (bin/chain-lake.mjs) as a child process. */
import { spawn, type ChildProcess } from "node:child_process"
import { fileURLToPath } from "node:url"

export const BIN = fileURLToPath(new URL("../../bin/chain-lake.mjs", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `input`: written to the CLI's stdin, which is then closed (without it, stdin stays open and unread). */
export const runCli = (
  args: ReadonlyArray<string>,
  options: {
    cwd?: string
    timeoutMs?: number
    env?: Readonly<Record<string, string>>
    input?: string
    /** Node's own flags, before the CLI's path (`--trace-gc`) */
    nodeFlags?: ReadonlyArray<string>
  } = {}
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.nodeFlags ?? []), BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: "1", ...options.env }
    })
    if (options.input !== undefined) child.stdin.end(options.input)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`chain-lake ${args.join(" ")} timed out\n${stdout}\n${stderr}`))
    }, options.timeoutMs ?? 60_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Starts a long-running command and resolves once `pattern` has appeared on stdout. */
export const startCli = (args: ReadonlyArray<string>, pattern: RegExp): Promise<{ child: ChildProcess; stdout: () => string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: "1" } })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    child.stdout.on("data", (d) => {
      stdout += d
      if (pattern.test(stdout)) resolve({ child, stdout: () => stdout })
    })
    child.on("close", (code) => reject(new Error(`exited ${code} before ${pattern}: ${stdout}\n${stderr}`)))
  })
