/**
 * A service's address and credentials, kept apart. Real indexers and routers often sit behind
 * gateways that want basic auth (`https://user:pass@host`), a header (`Authorization: Bearer …`,
 * `x-api-key: …`) or a key in the query (`?apikey=…`). The credentials are taken out of the URL
 * here, once: the clients (and so every error message, log line, run report and manifest they
 * feed) only ever see `baseUrl`, and the transport adds `headers` and `query` to each request of
 * that one service (undici follows no redirects, so they never reach another host).
 */
import { Either } from "effect"

export interface ServiceEndpoint {
  /** origin and path, no credentials and no query: what clients build URLs on and messages show */
  readonly baseUrl: string
  /** sent with every request: basic auth from the URL, then the user's headers */
  readonly headers: Readonly<Record<string, string>>
  /** the URL's own query parameters (an API key), appended to every request */
  readonly query: ReadonlyArray<readonly [string, string]>
}

/** An endpoint with no credentials (the embedded devnet, tests). */
export const plainEndpoint = (baseUrl: string): ServiceEndpoint => ({ baseUrl: baseUrl.replace(/\/+$/, ""), headers: {}, query: [] })

/** Whether a header name is a token (RFC 9110), so a typo like "Authorization Bearer x" is caught. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** "Name: value" lines (from repeated flags, or one per line in an environment variable). */
export const parseHeaderLines = (lines: ReadonlyArray<string>): Either.Either<Record<string, string>, string> => {
  const headers: Record<string, string> = {}
  for (const line of lines.flatMap((l) => l.split(/\r?\n/)).filter((l) => l.trim() !== "")) {
    const colon = line.indexOf(":")
    const name = colon > 0 ? line.slice(0, colon).trim() : ""
    if (!HEADER_NAME.test(name)) return Either.left(`a header must look like "Name: value" (e.g. "Authorization: Bearer …"), got "${line.slice(0, 40).split(":")[0]}…"`)
    headers[name.toLowerCase()] = line.slice(colon + 1).trim()
  }
  return Either.right(headers)
}

/**
 * Parses a service URL given by a user: http(s) only; `user:pass@` becomes a basic-auth header
 * (a header the user gives by name wins); the query is kept for every request. The message on
 * failure never repeats the URL's credentials.
 */
export const parseEndpoint = (raw: string, headers: Readonly<Record<string, string>> = {}): Either.Either<ServiceEndpoint, string> => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(`must be an http(s) URL like http://127.0.0.1:8080, got "${redactUrl(raw)}"`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return Either.left(`must be an http(s) URL like http://127.0.0.1:8080, got "${redactUrl(raw)}"`)
  const auth: Record<string, string> = {}
  if (url.username || url.password)
    auth.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
  const query = [...url.searchParams.entries()].map(([k, v]) => [k, v] as const)
  const baseUrl = `${url.origin}${url.pathname}`.replace(/\/+$/, "")
  return Either.right({ baseUrl, headers: { ...auth, ...headers }, query })
}

/** A URL as it may be shown: no user or password, and no query values (they may be keys). */
export const redactUrl = (raw: string): string =>
  raw.replace(/\/\/[^/\s"']*@/, "//***@").replace(/([?&][^=&#\s]+)=[^&#\s]*/g, "$1=***")

/**
 * Every credential value the process was given, so that a message built from something that
 * still holds one (a server echoing a header, a library's error quoting a request) is cleaned
 * before it is printed. Values shorter than 4 characters are not worth hiding (and would mangle text).
 */
const secrets = new Set<string>()

export const rememberSecrets = (endpoint: ServiceEndpoint, rawUrl?: string): void => {
  try {
    const u = rawUrl ? new URL(rawUrl) : undefined
    if (u?.password) secrets.add(decodeURIComponent(u.password)).add(u.password)
  } catch {
    /* not a URL: nothing to remember */
  }
  for (const value of Object.values(endpoint.headers)) {
    secrets.add(value)
    // the token part of "Bearer xyz" / "Basic xyz" too
    const token = value.split(/\s+/).at(-1)
    if (token) secrets.add(token)
  }
  for (const [, value] of endpoint.query) secrets.add(value)
  for (const s of [...secrets]) if (s.length < 4) secrets.delete(s)
  // as a server or gateway may echo them: URL-encoded (a quoted request line, a query as sent on
  // the wire), form-encoded ("+" for a space) and a value base64-encoded on its own (not inside a
  // longer encoded text, such as a whole "name: value" line)
  for (const s of [...secrets]) for (const form of encodings(s)) secrets.add(form)
}

const encodings = (s: string): ReadonlyArray<string> => {
  const base64 = Buffer.from(s).toString("base64")
  return [encodeURIComponent(s), new URLSearchParams({ s }).toString().slice(2), base64, base64.replace(/=+$/, ""), Buffer.from(s).toString("base64url")]
}

export type Service = "indexer" | "router"

/** Where a service's headers come from in the environment: one "Name: value" per line. */
export const HEADERS_ENV: Readonly<Record<Service, string>> = { indexer: "CHAIN_LAKE_INDEXER_HEADERS", router: "CHAIN_LAKE_ROUTER_HEADERS" }

/**
 * The endpoint of `service` at `raw`, with its headers from the environment and then `headerLines`
 * (flags); its credentials are remembered for `redact`. A mistake names the flag to fix.
 */
export const serviceEndpointFrom = (service: Service, raw: string, headerLines: ReadonlyArray<string> = []): Either.Either<ServiceEndpoint, string> => {
  const headers = parseHeaderLines([process.env[HEADERS_ENV[service]] ?? "", ...headerLines])
  if (Either.isLeft(headers)) return Either.left(`${service} headers: ${headers.left}`)
  const endpoint = parseEndpoint(raw, headers.right)
  if (Either.isLeft(endpoint)) return Either.left(`--${service}-url ${endpoint.left}`)
  rememberSecrets(endpoint.right, raw)
  return endpoint
}

/** `text` with remembered credentials and URL user-info replaced by ***. */
export const redact = (text: string): string => {
  let out = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s"']*@/gi, "$1***@")
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join("***")
  return out
}
