/**
 * What every endpoint family of the devnet indexer shares: JSON replies and the plain-text
 * errors of the real server (Fiber), path parameters parsed and refused with its messages, and
 * the shape of one request as the dispatch hands it to a family.
 */
import { bech32Decode, goJson } from "./encoding.js"

export interface DevnetResponse {
  readonly status: number
  readonly body: string
  readonly contentType: string
}

/** A refusal, answered in plain text with this status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
}

export const json = (body: unknown): DevnetResponse => ({ status: 200, body: goJson(body), contentType: "application/json" })

/** A plain-text reply, as the server answers errors; a 5xx says only "Internal Server Error". */
export const plainText = (status: number, body: string): DevnetResponse => ({
  status,
  body: status >= 500 ? "Internal Server Error" : body,
  contentType: "text/plain; charset=utf-8"
})

/** Path parameter as Fiber hands it over: raw, with %2F kept (handlers decode what they need). */
export const decodeParam = (s: string) => {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

export const parseHeight = (raw: string): number => {
  if (!/^[+-]?\d+$/.test(raw)) throw new HttpError(400, `[INVALID_VALUE] invalid value for height: ${raw} (must be a valid integer)`)
  const h = Number(raw)
  if (h < 1) throw new HttpError(400, `[INVALID_VALUE] invalid value for height: ${raw} (must be a positive integer)`)
  return h
}

/** Account as bech32 (init1…) or 0x-hex; returns the 20 address bytes as lowercase hex. */
export const parseAccount = (raw: string): string => {
  if (/^0x[0-9a-fA-F]{40}$/.test(raw)) return raw.slice(2).toLowerCase()
  const decoded = bech32Decode(raw)
  if (decoded && decoded.bytes.length === 20) return Buffer.from(decoded.bytes).toString("hex")
  throw new HttpError(400, `[INVALID_VALUE] invalid value for account: ${raw} (invalid address format)`)
}

/** Collection address: 0x-hex; a bad one fails with Go's raw hex error, as the real server does. */
export const parseCollectionAddr = (raw: string): string => {
  const body = raw.startsWith("0x") ? raw.slice(2) : raw
  for (let i = 0; i < body.length; i++) {
    if (!/[0-9a-fA-F]/.test(body[i])) {
      const cp = body.codePointAt(i)!
      throw new HttpError(400, `encoding/hex: invalid byte: U+${cp.toString(16).toUpperCase().padStart(4, "0")} '${String.fromCodePoint(cp)}'`)
    }
  }
  if (body.length % 2 !== 0) throw new HttpError(400, "encoding/hex: odd length hex string")
  return "0x" + body.toLowerCase()
}

/** is_signer as the server reads it: only "true" and "1" count. */
export const signerOnly = (q: URLSearchParams): boolean => q.get("is_signer") === "true" || q.get("is_signer") === "1"

/** One request to an endpoint family, past its family and resource segments. */
export interface EndpointRequest {
  /** the path segments after the resource: ["by_height", "5"] for /indexer/tx/v1/txs/by_height/5 */
  readonly rest: Array<string>
  readonly q: URLSearchParams
  /** the total of a filtered list as the server reports it: "0" when not counted, "-1" when COUNT times out */
  readonly filtered: (n: number) => string
}

/** Sequences (ascending) a scan found up to `tip`, per scan key; extended as the chain grows. */
export type ScanCache = Map<string, { tip: number; seqs: Array<number> }>
