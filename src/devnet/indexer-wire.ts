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
  /** the server's work beyond the latency, in ms (see DevnetReply) */
  readonly workMs?: number
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

export const parseHeight = (raw: string): number => {
  if (!/^[+-]?\d+$/.test(raw)) throw new HttpError(400, `[INVALID_VALUE] invalid value for height: ${raw} (must be a valid integer)`)
  const h = Number(raw)
  if (h < 1) throw new HttpError(400, `[INVALID_VALUE] invalid value for height: ${raw} (must be a positive integer)`)
  return h
}

/**
 * An address as the real indexer reads one (Rollytics util.AccAddressFromString): bech32 with the
 * chain's prefix; otherwise hex, with or without 0x, any case, leading zeros trimmed and the rest
 * left-padded to 20 bytes (≤ 40 digits) or 32 bytes (≤ 64). So "0x1", "1", odd lengths and an
 * init1… address all name an address; a bad hex digit is Go's raw hex error. Returns the address
 * bytes as lowercase hex, or throws the plain error text (the caller frames it per parameter).
 */
const addressBytes = (raw: string): string => {
  if (!raw.startsWith("0x")) {
    const decoded = bech32Decode(raw)
    // the SDK's bech32 check: the account prefix, and the rollup's 20- or 32-byte verifier
    if (decoded && decoded.hrp === "init" && (decoded.bytes.length === 20 || decoded.bytes.length === 32))
      return Buffer.from(decoded.bytes).toString("hex")
  }
  // Go works on bytes: lengths count UTF-8 bytes, and the hex error names the first bad byte
  const trimmed = Buffer.from((raw.startsWith("0x") ? raw.slice(2) : raw).replace(/^0+/, "").toLowerCase(), "utf8")
  const width = trimmed.length <= 40 ? 40 : trimmed.length <= 64 ? 64 : undefined
  if (width === undefined) throw new Error(`[INVALID_VALUE] invalid value for address: ${raw} (invalid address format)`)
  const digits = Buffer.concat([Buffer.from("0".repeat(width - trimmed.length)), trimmed])
  const bad = digits.findIndex((b) => !((b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66)))
  if (bad >= 0)
    throw new Error(
      `encoding/hex: invalid byte: U+${digits[bad].toString(16).toUpperCase().padStart(4, "0")} '${String.fromCharCode(digits[bad])}'`
    )
  return digits.toString("latin1")
}

/** Account path parameter: any address form above; every failure is the handler's one INVALID_VALUE text. */
export const parseAccount = (raw: string): string => {
  try {
    return addressBytes(raw)
  } catch {
    throw new HttpError(400, `[INVALID_VALUE] invalid value for account: ${raw} (invalid address format)`)
  }
}

/** Collection address (path or `collection_addr` query): any address form above, as "0x"+hex; a failure is answered with the raw error text, as the real handler does. */
export const parseCollectionAddr = (raw: string): string => {
  try {
    return "0x" + addressBytes(raw)
  } catch (e) {
    throw new HttpError(400, (e as Error).message)
  }
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
