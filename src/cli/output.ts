/**
 * The CLI's one way out for text: stdout and stderr go through `redact` (secrets/redact.ts), so no
 * line a command, a library, the progress renderer or an error handler prints, whoever built it,
 * carries a secret the process knows. The secrets given on the command line and in the
 * environment are remembered before anything runs: @effect/cli may repeat a flag's value in its
 * own complaint, and a URL may be refused before any endpoint is made of it.
 */
import { Buffer } from "node:buffer"
import { HEADERS_ENV, rememberHeaderLines, type Service } from "../http/serviceUrl.js"
import { redact, rememberSecret, rememberUrlSecrets } from "../secrets/redact.js"

/** Every string (and byte) chunk written to stdout and stderr from now on is redacted first. */
export const redactStandardStreams = (): void => {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: Array<unknown>) => boolean
    stream.write = ((chunk: unknown, ...rest: Array<unknown>) => write(redactedChunk(chunk), ...rest)) as typeof stream.write
  }
}

/** Bytes are read as latin1 (one character a byte, so they come back unchanged where nothing is hidden). */
const redactedChunk = (chunk: unknown): unknown => {
  if (typeof chunk === "string") return redact(chunk)
  if (!(chunk instanceof Uint8Array)) return chunk
  const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1")
  const clean = redact(text)
  return clean === text ? chunk : Buffer.from(clean, "latin1")
}

/** A flag whose value is a service URL (--indexer-url, --router-url, …) or a header line (--header, --indexer-header, …). */
const URL_FLAG = /^--[a-z0-9-]*url$/
const HEADER_FLAG = /^--([a-z]+-)?header$/
const SERVICES: ReadonlyArray<Service> = ["indexer", "router"]
/** the environment's other secrets: S3 keys (the AWS SDK reads them; an S3-compatible server may echo them) */
const SECRET_ENV = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]

/**
 * Remembers the credentials in `args` (the values of URL and header flags, as `--flag value` or
 * `--flag=value`, and any other value that is a URL with user-info) and in the environment.
 */
export const rememberGivenSecrets = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): void => {
  args.forEach((arg, i) => {
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
    const [flag, value] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, args[i + 1] ?? ""]
    if (URL_FLAG.test(flag)) rememberUrlSecrets(value)
    if (HEADER_FLAG.test(flag)) rememberHeaderLines([value])
    if (arg.includes("://") && arg.includes("@")) rememberUrlSecrets(eq > 0 ? value : arg)
  })
  for (const service of SERVICES) {
    rememberUrlSecrets(env[`CHAIN_LAKE_${service.toUpperCase()}_URL`] ?? "")
    rememberHeaderLines([env[HEADERS_ENV[service]] ?? ""])
  }
  for (const name of SECRET_ENV) rememberSecret(env[name] ?? "")
}

let json = false
/** Whether stderr carries JSON lines (stderrAsJsonLines): the progress renderer then writes its events as JSON objects. */
export const logsAreJson = (): boolean => json

/** Whether this run logs JSON (`--log-format json` among `args`, or CHAIN_LAKE_LOG_FORMAT=json). */
export const wantsJsonLogs = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): boolean => {
  const i = args.findIndex((a) => a === "--log-format" || a.startsWith("--log-format="))
  const value = i < 0 ? env.CHAIN_LAKE_LOG_FORMAT : args[i].includes("=") ? args[i].slice("--log-format=".length) : args[i + 1]
  return value === "json"
}

/** One log line as JSON: a line that is a JSON object already (the progress renderer's) as it is; else time, level and message. */
export const asJsonLine = (line: string): string => {
  if (line.startsWith("{")) {
    try {
      if (typeof JSON.parse(line) === "object") return line
    } catch {
      // text that starts with a brace: a message like any other
    }
  }
  const error = /^chain-lake: error: /.exec(line)
  const warn = !error && /^chain-lake: /.exec(line)
  const message = error ? line.slice(error[0].length) : warn ? line.slice(warn[0].length) : line
  return JSON.stringify({ time: new Date().toISOString(), level: error ? "error" : warn ? "warn" : "info", message })
}

/**
 * From now on stderr carries one JSON object a line (scheduled and containerised runs, whose logs
 * a machine reads): each line written to it, whoever wrote it (errors, notices, progress), becomes
 * one (asJsonLine); a line cut across writes is joined first, and the last one is written at exit.
 */
export const stderrAsJsonLines = (): void => {
  json = true
  const write = process.stderr.write.bind(process.stderr) as (chunk: string) => boolean
  let pending = ""
  process.stderr.write = ((chunk: unknown, ...rest: Array<unknown>) => {
    pending += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8")
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) if (line.trim() !== "") write(asJsonLine(line) + "\n")
    const done = rest.find((r) => typeof r === "function") as (() => void) | undefined
    done?.()
    return true
  }) as typeof process.stderr.write
  process.on("exit", () => {
    if (pending.trim() !== "") write(asJsonLine(pending) + "\n")
  })
}

/** The `--log-format` flag of commands that run long (export, run): read by main.ts before the command starts (wantsJsonLogs). */
export const LOG_FORMAT_DESCRIPTION =
  "text, or json: stderr carries one JSON object a line (time, level, message; the plan, progress and each dataset's end as events with their counts), stdout the summary as one JSON object; also CHAIN_LAKE_LOG_FORMAT=json"
