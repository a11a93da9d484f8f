/**
 * Response bodies to strings. Many bodies are pure-ASCII JSON, and
 * decoding ASCII as latin1 is a copy where UTF-8 decoding is a scan: measured ~3 µs against
 * ~11 µs per 2.8 KB tx (bench/RESULTS.md). Bodies with any non-ASCII byte are decoded as UTF-8.
 */
import { Buffer, isAscii } from "node:buffer"
import { redact } from "../secrets/redact.js"

export const decodeBody = (body: ArrayBuffer): string => {
  const bytes = Buffer.from(body)
  return isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8")
}

/**
 * Whether a 200 is a web page where JSON was expected (a wrong URL, a login or gateway page): its
 * body begins with "<" and, where the server says, it is labelled text/html. A JSON body labelled
 * text/html (a gateway that mislabels) is JSON all the same.
 */
export const isHtmlPage = (body: ArrayBuffer, contentType?: string): boolean =>
  (contentType === undefined || /^\s*text\/html\b/i.test(contentType)) && /^\s*</.test(Buffer.from(body.slice(0, 64)).toString("latin1"))

/**
 * What a 200 that is not JSON is, said in a message: a proxy's or gateway's HTML page (it begins
 * with "<"), or JSON cut short in transit. Either is asked again; a message calling a login page
 * "truncated" sends the user looking at the network.
 */
export const notJson = (body: ArrayBuffer): string =>
  isHtmlPage(body)
    ? `an HTML page, not JSON (${body.byteLength} bytes; a proxy or gateway answering?)`
    : `not valid JSON (${body.byteLength} bytes; cut short?)`

/**
 * An error body as part of a one-line message: whitespace runs (a server's stack trace, an HTML
 * page) made one space, at most 300 chars. Known secrets (an echoed key) are hidden first: cut
 * short, a secret's start would pass as text no longer equal to it.
 */
export const bodyExcerpt = (body: string): string => {
  const flat = redact(body).replace(/\s+/g, " ").trim()
  if (flat.length <= 300) return flat
  // not between the two halves of a surrogate pair (an emoji)
  const end = /[\ud800-\udbff]/.test(flat[299]) ? 299 : 300
  return `${flat.slice(0, end)}…`
}
