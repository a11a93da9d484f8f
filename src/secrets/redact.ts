/**
 * The process's secrets, and the one function that hides them. Every credential chain-lake is
 * given (a URL's password or token, in whatever form the URL was typed; a header's value; a key
 * in a URL's query; S3 keys from the environment) is remembered here as soon as it is seen, in
 * each form a server, a gateway or a library may repeat it in. `redact` replaces them all, and
 * the user-info of any scheme://user:pass@ URL in the text, by ***.
 *
 * Where text leaves the process it goes through `redact`: the CLI's stdout and stderr
 * (cli/output.ts), the reports and state files it writes (`redactedJson`), the error bodies it
 * quotes (http/body.ts, before they are cut short) and the error columns of its Parquet files. So
 * no message, whatever built it, carries a known secret out.
 *
 * A value shorter than 4 characters is not hidden (it would star out ordinary text); a longer one
 * is hidden wherever it appears, in data too.
 */
import { Buffer } from "node:buffer"

const MIN_LENGTH = 4
/** A part of a longer base64 text is hidden from this length on: shorter ones match data (base64 tx bytes) by chance. */
const MIN_FRAGMENT = 8

/** Every form of every secret, longest first (so a form is hidden whole, not a shorter form inside it). */
let forms: Array<string> = []

/** Remembers `value` (and the forms it may be echoed in) as a secret. */
export const rememberSecret = (value: string): void => {
  if (value.length < MIN_LENGTH) return
  const known = new Set(forms)
  const before = known.size
  for (const form of formsOf(value)) known.add(form)
  if (known.size !== before) forms = [...known].sort((a, b) => b.length - a.length)
}

/**
 * The forms a secret is echoed in: as given, JSON-escaped, URL-encoded (upper- and lowercase
 * escapes, as encodeURI leaves it, and form-encoded), hex (lower and upper case) and base64
 * (base64forms).
 */
const formsOf = (value: string): ReadonlyArray<string> => {
  const bytes = Buffer.from(value)
  const percent = encodeURIComponent(value)
  const hex = bytes.toString("hex")
  return [
    value,
    JSON.stringify(value).slice(1, -1),
    percent,
    percent.replace(/%[0-9A-F]{2}/g, (p) => p.toLowerCase()),
    encodeURI(value),
    new URLSearchParams({ s: value }).toString().slice(2),
    hex,
    hex.toUpperCase(),
    ...base64Forms(bytes)
  ].filter((form) => form.length >= MIN_LENGTH)
}

/**
 * base64 and base64url: the value encoded alone (with and without padding), and the part of its
 * encoding that is the same wherever it sits in a longer text encoded whole ("user:password" in a
 * basic-auth header, a whole "name: value" line): base64 turns each 3 bytes into 4 characters, so
 * at each of the 3 offsets the groups holding only the value's bytes encode the same.
 */
const base64Forms = (bytes: Buffer): ReadonlyArray<string> => {
  const alone = bytes.toString("base64")
  const inside = [0, 1, 2]
    .map((skip) => bytes.subarray(skip, skip + Math.floor((bytes.length - skip) / 3) * 3))
    .flatMap((whole) => [whole.toString("base64"), whole.toString("base64url")])
    .filter((fragment) => fragment.length >= MIN_FRAGMENT)
  return [alone, alone.replace(/=+$/, ""), bytes.toString("base64url"), ...inside]
}

/** A URL's user-info in free text: after a scheme and its slashes, up to the "@" (a password with "/" in it is caught by rememberSecret instead). */
const URL_USER_INFO = /(\b[a-z][a-z0-9+.-]*:[/\\]+)[^/\\\s"'<>]*@/gi

/** `text` with every known secret, and the user-info of every scheme:// URL in it, replaced by ***. */
export const redact = (text: string): string => {
  let out = text.includes("@") ? text.replace(URL_USER_INFO, "$1***@") : text
  for (const form of forms) if (out.includes(form)) out = out.split(form).join("***")
  return out
}

/** Object keys and string values redacted, for JSON.stringify (a hostile server's record may carry a secret in a key). */
const redactedValue = (_key: string, value: unknown): unknown =>
  typeof value === "string"
    ? redact(value)
    : value !== null && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), v]))
      : value

/**
 * `value` as JSON with every string in it redacted: how reports and the files holding what a
 * service said are written. Strings are redacted one by one, never the JSON text, which a secret
 * ending in a backslash could break.
 */
export const redactedJson = (value: unknown, indent?: number): string => JSON.stringify(value, redactedValue, indent)

/** The parts of a URL as typed, however malformed: what precedes its user-info (scheme and slashes, if any), the user-info, and what follows the "@". */
interface UserInfoSplit {
  readonly prefix: string
  readonly userInfo: string
  readonly rest: string
}

const SCHEME_AND_SLASHES = /^(?:[a-z][a-z0-9+.-]*:)?[/\\]*/i

/**
 * A URL's user-info as typed: everything before its last "@" (after a scheme and slashes). The
 * last, not the first, and not only within the authority: a password with an unencoded "/", "?"
 * or "@" in it (or a URL with no scheme, `user:pass@host`) is still taken for one, as the user
 * meant it. Undefined when there is no "@".
 */
const splitUserInfo = (raw: string): UserInfoSplit | undefined => {
  const at = raw.lastIndexOf("@")
  if (at < 0) return undefined
  const prefix = SCHEME_AND_SLASHES.exec(raw.slice(0, at))?.[0] ?? ""
  return { prefix, userInfo: raw.slice(prefix.length, at), rest: raw.slice(at + 1) }
}

const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/**
 * Remembers the secrets of a URL as typed (a flag, the environment, a pipeline's file), valid or
 * not: its user-info and password (as typed and decoded; the user-info whole, since a lone user
 * name is often a token) and the values of its query. A text read as `scheme:` that has no
 * slashes after it may be `user:` of a URL without a scheme: both readings are remembered.
 */
export const rememberUrlSecrets = (raw: string): void => {
  const split = splitUserInfo(raw)
  if (split) {
    const { prefix, userInfo } = split
    const password = userInfo.includes(":") ? userInfo.slice(userInfo.indexOf(":") + 1) : userInfo
    const noSlashes = /^[a-z][a-z0-9+.-]*:$/i.test(prefix)
    for (const value of [userInfo, password, ...(noSlashes ? [prefix + userInfo] : [])]) {
      rememberSecret(value)
      rememberSecret(decoded(value))
    }
  }
  // the query after the "@", and after the first "?" (a "?" may be in the password, an "@" in a value)
  for (const value of [...queryValues(split?.rest ?? ""), ...queryValues(raw)]) {
    rememberSecret(value)
    rememberSecret(decoded(value.replace(/\+/g, " ")))
  }
}

/** The values of the query of a URL as typed (between its first "?" and "#"). */
const queryValues = (url: string): ReadonlyArray<string> =>
  (url.includes("?") ? url.slice(url.indexOf("?") + 1).split("#")[0] : "")
    .split("&")
    .filter((pair) => pair.includes("="))
    .map((pair) => pair.slice(pair.indexOf("=") + 1))

/**
 * A URL as it may be shown: no user-info (whatever its form, see splitUserInfo) and no query values
 * (they may be keys).
 */
export const redactUrl = (raw: string): string => {
  const split = splitUserInfo(raw)
  const shown = split ? `${split.prefix}***@${split.rest}` : raw
  return shown.replace(/([?&][^=&#\s]+)=[^&#\s]*/g, "$1=***")
}
