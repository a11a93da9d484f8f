/**
 * The CLI's one way out for text: stdout and stderr go through `redact` (secrets/redact.ts), so no
 * line a command, a library, the progress renderer or an error handler prints, whoever built it,
 * carries a secret the process knows. The secrets given on the command line and in the
 * environment are remembered before anything runs: @effect/cli may repeat a flag's value in its
 * own complaint, and a URL may be refused before any endpoint is made of it.
 */
import { Buffer } from "node:buffer"
import { HEADERS_ENV, rememberHeaderLines, type Service } from "../http/endpoint.js"
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
