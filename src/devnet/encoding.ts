/** Wire encodings the real services use: Go's JSON escaping, bech32 addresses, base64 keys. */

/**
 * Go's encoding/json escapes <, >, & and U+2028/2029 inside strings. JSON.stringify does not,
 * so the devnet post-processes its output to send the same bytes the real indexer sends.
 */
export const goJson = (value: unknown): string => {
  const text = JSON.stringify(value)
  if (!/[<>&\u2028\u2029]/.test(text)) return text
  return text
    .replaceAll("<", "\\u003c")
    .replaceAll(">", "\\u003e")
    .replaceAll("&", "\\u0026")
    .replaceAll("\u2028", "\\u2028")
    .replaceAll("\u2029", "\\u2029")
}

const CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

const polymod = (values: ReadonlyArray<number>): number => {
  let chk = 1
  for (const v of values) {
    const top = chk >>> 25
    chk = ((chk & 0x1ffffff) << 5) ^ v
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GEN[i]
  }
  return chk
}
const hrpExpand = (hrp: string): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) >>> 5)
  out.push(0)
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) & 31)
  return out
}
const convertBits = (data: ArrayLike<number>, from: number, to: number, pad: boolean): Array<number> | undefined => {
  let acc = 0
  let bits = 0
  const out: Array<number> = []
  const maxv = (1 << to) - 1
  for (let i = 0; i < data.length; i++) {
    acc = (acc << from) | data[i]
    bits += from
    while (bits >= to) {
      bits -= to
      out.push((acc >>> bits) & maxv)
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & maxv)
  } else if (bits >= from || (acc << (to - bits)) & maxv) {
    return undefined
  }
  return out
}

export const bech32Encode = (hrp: string, bytes: Uint8Array): string => {
  const data = convertBits(bytes, 8, 5, true)!
  const mod = polymod([...hrpExpand(hrp), ...data, 0, 0, 0, 0, 0, 0]) ^ 1
  const checksum: Array<number> = []
  for (let p = 0; p < 6; p++) checksum.push((mod >>> (5 * (5 - p))) & 31)
  return hrp + "1" + [...data, ...checksum].map((d) => CHARSET[d]).join("")
}

/** Decodes a bech32 string; undefined when the checksum or characters are wrong. */
export const bech32Decode = (text: string): { hrp: string; bytes: Uint8Array } | undefined => {
  if (text !== text.toLowerCase() && text !== text.toUpperCase()) return undefined
  const s = text.toLowerCase()
  const pos = s.lastIndexOf("1")
  if (pos < 1 || pos + 7 > s.length || s.length > 90) return undefined
  const hrp = s.slice(0, pos)
  const data: Array<number> = []
  for (const c of s.slice(pos + 1)) {
    const d = CHARSET.indexOf(c)
    if (d < 0) return undefined
    data.push(d)
  }
  if (polymod([...hrpExpand(hrp), ...data]) !== 1) return undefined
  const bytes = convertBits(data.slice(0, -6), 5, 8, false)
  return bytes ? { hrp, bytes: Uint8Array.from(bytes) } : undefined
}

export const hexToBytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex, "hex"))

export const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64")

/** Go's base64.StdEncoding.DecodeString: padding required, no whitespace, canonical only. */
export const strictBase64Decode = (text: string): string | undefined => {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined
  const buf = Buffer.from(text, "base64")
  if (buf.toString("base64") !== text) return undefined
  return buf.toString("utf8")
}

/** RFC3339Nano as Go prints it: fractional seconds with trailing zeros trimmed. */
export const rfc3339Nano = (epochMs: number, extraNanos = 0): string => {
  const whole = Math.floor(epochMs / 1000)
  const nanos = Math.round((epochMs - whole * 1000) * 1e6) + extraNanos
  const base = new Date(whole * 1000).toISOString().slice(0, 19)
  if (nanos === 0) return base + "Z"
  return base + "." + String(nanos).padStart(9, "0").replace(/0+$/, "") + "Z"
}

/** RFC3339 at second precision, as the block endpoints print `timestamp`. */
export const rfc3339Seconds = (epochMs: number): string => new Date(Math.floor(epochMs / 1000) * 1000).toISOString().slice(0, 19) + "Z"

/** 0x-hex quantity as EVM JSON-RPC prints it (no leading zeros). */
export const hexQty = (n: number | bigint): string => "0x" + n.toString(16)

/** 0x-hex of bytes, odd lengths left-padded, as the internal-tx extension prints value/input/output. */
export const hexBytes = (n: number | bigint): string => {
  if (n === 0 || n === 0n) return "0x00"
  const h = n.toString(16)
  return "0x" + (h.length % 2 ? "0" + h : h)
}
