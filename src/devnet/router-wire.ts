/**
 * The devnet router's wire conventions, shared by all its routes: JSON replies, the JSON error
 * body {code, message, details} with gRPC codes, and the checks of request fields (required
 * strings, booleans, amounts, addresses per chain) with the messages the router answers.
 */
import { goJson } from "./encoding.js"
import type { DevnetReply } from "./http.js"
import { ROLLUP } from "./router-graph.js"

/** A refusal: the HTTP status, the gRPC code, and an ErrorInfo reason when the router gives one. */
export class RouterError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly reason?: string
  ) {
    super(message)
  }
}
export const invalid = (message: string, reason?: string) => new RouterError(400, 3, message, reason)

export const ok = (body: unknown, corruptible = true): DevnetReply => ({
  status: 200,
  body: goJson(body),
  contentType: "application/json",
  corruptible
})
export const errorReply = (e: RouterError): DevnetReply => ({
  status: e.status,
  contentType: "application/json",
  body: goJson({
    code: e.code,
    message: e.message,
    details: e.reason ? [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: e.reason, domain: "skip.build", metadata: {} }] : []
  })
})

export const isAmount = (v: unknown): v is string => typeof v === "string" && /^[0-9]+$/.test(v) && BigInt(v) > 0n
export const parseBody = (body: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(body)
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return v as Record<string, unknown>
  } catch {
    /* fall through */
  }
  throw invalid("request body must be a JSON object")
}
export const requireString = (o: Record<string, unknown>, field: string): string => {
  const v = o[field]
  if (typeof v !== "string" || v === "") throw invalid(`${field} is required`)
  return v
}
export const optionalBool = (o: Record<string, unknown>, field: string): boolean | undefined => {
  const v = o[field]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "boolean") throw invalid(`${field} must be a boolean`)
  return v
}

/** Address formats per chain, for address_list validation. */
export const addressOk = (chainId: string, address: string): boolean => {
  if (/^\d+$/.test(chainId)) return /^0x[0-9a-fA-F]{40}$/.test(address)
  const prefix =
    chainId === "osmosis-1"
      ? "osmo1"
      : chainId === "noble-1"
        ? "noble1"
        : chainId === "cosmoshub-4"
          ? "cosmos1"
          : chainId === "isolated-1"
            ? "iso1"
            : "init1"
  return (address.startsWith(prefix) && address.length >= prefix.length + 20) || (chainId === ROLLUP && /^0x[0-9a-fA-F]{40}$/.test(address))
}
