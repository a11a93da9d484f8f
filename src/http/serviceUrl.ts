/**
 * A service's address and credentials, kept apart. Real indexers and routers often sit behind
 * gateways that want basic auth (`https://user:pass@host`), a header (`Authorization: Bearer …`,
 * `x-api-key: …`) or a key in the query (`?apikey=…`). The credentials are taken out of the URL
 * here, once: the clients (and so every error message, log line, run report and manifest they
 * feed) only ever see `baseUrl`, and the transport adds `headers` and `query` to each request of
 * that one service (undici follows no redirects, so they never reach another host).
 */
import { Either } from "effect"
import { redact, redactUrl, rememberSecret, rememberUrlSecrets } from "../secrets/redact.js"

/** redaction lives in secrets/redact.ts; these stay importable from here, where credentials are parsed */
export { redact, redactUrl }

export interface ServiceUrl {
  /** origin and path, no credentials and no query: what clients build URLs on and messages show */
  readonly baseUrl: string
  /** sent with every request: basic auth from the URL, then the user's headers */
  readonly headers: Readonly<Record<string, string>>
  /** the URL's own query parameters (an API key), appended to every request */
  readonly query: ReadonlyArray<readonly [string, string]>
}

/** An endpoint with no credentials (the embedded devnet, tests). */
export const plainServiceUrl = (baseUrl: string): ServiceUrl => ({ baseUrl: baseUrl.replace(/\/+$/, ""), headers: {}, query: [] })

/** Whether a header name is a token (RFC 9110), so a typo like "Authorization Bearer x" is caught. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** A refused header line as a message shows it: its first word only (the rest may be the key), and nothing of a line of one word (which may be the key itself). */
const shownLine = (line: string): string => {
  const first = line.trim().split(/[\s:]/)[0]
  return first.length < line.trim().length ? `"${first.slice(0, 40)}…"` : "one word and no colon"
}

/** "Name: value" lines (from repeated flags, or one per line in an environment variable). */
export const parseHeaderLines = (lines: ReadonlyArray<string>): Either.Either<Record<string, string>, string> => {
  const headers: Record<string, string> = {}
  for (const line of lines.flatMap((l) => l.split(/\r?\n/)).filter((l) => l.trim() !== "")) {
    const colon = line.indexOf(":")
    const name = colon > 0 ? line.slice(0, colon).trim() : ""
    if (!HEADER_NAME.test(name))
      return Either.left(`a header must look like "Name: value" (e.g. "Authorization: Bearer …"), got ${shownLine(line)}`)
    headers[name.toLowerCase()] = line.slice(colon + 1).trim()
  }
  return Either.right(headers)
}

/**
 * Parses a service URL given by a user: http(s) only; `user:pass@` becomes a basic-auth header
 * (a header the user gives by name wins); the query is kept for every request. The message on
 * failure never repeats the URL's credentials.
 */
export const parseServiceUrl = (raw: string, headers: Readonly<Record<string, string>> = {}): Either.Either<ServiceUrl, string> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(`must be an http(s) URL like http://127.0.0.1:8080, got "${redactUrl(raw)}"`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return Either.left(`must be an http(s) URL like http://127.0.0.1:8080, got "${redactUrl(raw)}"`)
  // "http://user:12/34@host" parses as host "user", port 12 and path "/34@host": a password with an
  // unencoded "/" would be sent as a path, and shown in every message naming the service
  if (url.pathname.includes("@"))
    return Either.left(
      `has an "@" in its path ("${redactUrl(raw)}"): a user name or password with "/", "?", "#" or "@" in it must be percent-encoded (%2F, %3F, %23, %40)`
    )
  const auth: Record<string, string> = {}
  if (url.username || url.password)
    auth.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
  const query = [...url.searchParams.entries()].map(([k, v]) => [k, v] as const)
  const baseUrl = `${url.origin}${url.pathname}`.replace(/\/+$/, "")
  return Either.right({ baseUrl, headers: { ...auth, ...headers }, query })
}

/**
 * Remembers (for `redact`) the credentials of `endpoint`: its header values (and the token of
 * "Bearer xyz" / "Basic xyz") and query values, and those of the URL as typed.
 */
export const rememberSecrets = (endpoint: ServiceUrl, rawUrl?: string): void => {
  if (rawUrl !== undefined) rememberUrlSecrets(rawUrl)
  for (const value of Object.values(endpoint.headers)) rememberHeaderValue(value)
  for (const [, value] of endpoint.query) rememberSecret(value)
}

const rememberHeaderValue = (value: string): void => {
  rememberSecret(value)
  rememberSecret(value.split(/\s+/).at(-1) ?? "")
}

/**
 * Remembers the values of "Name: value" lines as given, before they are checked: of a line with
 * no colon ("Authorization Bearer xyz", a typo), each word that could be a key, so that the
 * message refusing it cannot carry one; a plain word ("Bad header") is no key, and masked it
 * garbled every message holding it ("indexer ***s: a *** must look like").
 */
export const rememberHeaderLines = (lines: ReadonlyArray<string>): void => {
  for (const line of lines.flatMap((l) => l.split(/\r?\n/)).map((l) => l.trim())) {
    const colon = line.indexOf(":")
    if (colon > 0) rememberHeaderValue(line.slice(colon + 1).trim())
    else for (const word of line.split(/\s+/)) if (word.length >= 12 || /[^A-Za-z]/.test(word)) rememberSecret(word)
  }
}

export type Service = "indexer" | "router"

/** Where a service's headers come from in the environment: one "Name: value" per line. */
export const HEADERS_ENV: Readonly<Record<Service, string>> = { indexer: "CHAIN_LAKE_INDEXER_HEADERS", router: "CHAIN_LAKE_ROUTER_HEADERS" }

/**
 * The endpoint of `service` at `raw`, with its headers from the environment and then `headerLines`
 * (flags); its credentials are remembered for `redact`. A mistake names the flag to fix.
 */
export const serviceUrlFrom = (
  service: Service,
  raw: string,
  headerLines: ReadonlyArray<string> = []
): Either.Either<ServiceUrl, string> => {
  const lines = [process.env[HEADERS_ENV[service]] ?? "", ...headerLines]
  // remembered before they are checked: a message refusing them must not carry them either
  rememberUrlSecrets(raw)
  rememberHeaderLines(lines)
  const headers = parseHeaderLines(lines)
  if (Either.isLeft(headers)) return Either.left(`${service} headers: ${headers.left}`)
  const endpoint = parseServiceUrl(raw, headers.right)
  if (Either.isLeft(endpoint)) return Either.left(`--${service}-url ${endpoint.left}`)
  rememberSecrets(endpoint.right, raw)
  return endpoint
}
