/** Small helpers for tests that talk to the devnet over real loopback HTTP. */
import { Either, type Schema } from "effect"
import { decodeWithPath } from "../../src/schema/decode.js"

export interface Fetched {
  readonly status: number
  readonly body: string
  readonly contentType: string
}

export const getText = async (url: string): Promise<Fetched> => {
  const res = await fetch(url)
  return { status: res.status, body: await res.text(), contentType: res.headers.get("content-type") ?? "" }
}

export const postJson = async (url: string, body: unknown): Promise<Fetched & { json: any }> => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, body: text, contentType: res.headers.get("content-type") ?? "", json }
}

/** Decodes with an Effect Schema and fails the test with the field path on error. */
export const decodeOrThrow = <A, I>(schema: Schema.Schema<A, I>, value: unknown, label: string): A => {
  const result = decodeWithPath(schema, value)
  if (Either.isLeft(result)) throw new Error(`${label}: ${result.left.path}: ${result.left.message}`)
  return result.right
}

export const b64 = (s: string) => Buffer.from(s).toString("base64")
