/**
 * One key for an account on both sides of a rollup: the same bytes are `init1…` (bech32) in
 * cosmos messages and events and `0x…` in EVM receipts and logs. Datasets store the canonical
 * form — `0x` and lowercase hex of the account bytes — next to what the wire said, so cosmos and
 * EVM activity join on one column.
 */

/** The bech32 prefix of accounts on Initia and its rollups (minievm, minimove, miniwasm all use `init`). */
export const ACCOUNT_PREFIX = "init"

const CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
const GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]

const polymod = (values: ReadonlyArray<number>): number => {
  let chk = 1
  for (const v of values) {
    const top = chk >>> 25
    chk = ((chk & 0x1ffffff) << 5) ^ v
    // Stryker disable next-line EqualityOperator: top holds 5 bits, so a sixth step would XOR nothing
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GENERATORS[i]
  }
  return chk
}
const expandPrefix = (prefix: string): Array<number> => [
  ...[...prefix].map((c) => c.charCodeAt(0) >>> 5),
  0,
  ...[...prefix].map((c) => c.charCodeAt(0) & 31)
]

/** Regroups bits (8 → 5 to encode, 5 → 8 to decode); undefined when the padding is not zero. */
const convertBits = (data: ReadonlyArray<number>, from: number, to: number, pad: boolean): Array<number> | undefined => {
  let acc = 0
  let bits = 0
  const out: Array<number> = []
  const max = (1 << to) - 1
  for (const v of data) {
    acc = (acc << from) | v
    bits += from
    while (bits >= to) {
      bits -= to
      out.push((acc >>> bits) & max)
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & max)
  } else if (bits >= from || ((acc << (to - bits)) & max) !== 0) return undefined
  return out
}

/** The bytes of a bech32 string (checksum verified), or undefined when it is not bech32. */
export const bech32Bytes = (text: string): { readonly prefix: string; readonly bytes: Uint8Array } | undefined => {
  // (under 8 characters there is no room for a prefix, the separator and the checksum: refused below)
  if (text.length > 90 || (text !== text.toLowerCase() && text !== text.toUpperCase())) return undefined
  const lower = text.toLowerCase()
  const sep = lower.lastIndexOf("1")
  if (sep < 1 || sep + 7 > lower.length) return undefined
  const prefix = lower.slice(0, sep)
  // BIP-173: prefix characters are printable US-ASCII (33..126)
  // Stryker disable next-line EqualityOperator: one step past the end reads NaN, which is neither < 33 nor > 126
  for (let i = 0; i < prefix.length; i++) if (prefix.charCodeAt(i) < 33 || prefix.charCodeAt(i) > 126) return undefined
  const data: Array<number> = []
  for (const c of lower.slice(sep + 1)) {
    const v = CHARSET.indexOf(c)
    if (v < 0) return undefined
    data.push(v)
  }
  if (polymod([...expandPrefix(prefix), ...data]) !== 1) return undefined
  const bytes = convertBits(data.slice(0, -6), 5, 8, false)
  return bytes ? { prefix, bytes: Uint8Array.from(bytes) } : undefined
}

/** The bech32 string of `bytes` under `prefix`. */
export const bech32Of = (prefix: string, bytes: Uint8Array): string => {
  const data = convertBits([...bytes], 8, 5, true)!
  const checksum = polymod([...expandPrefix(prefix), ...data, 0, 0, 0, 0, 0, 0]) ^ 1
  const words = [...data, ...Array.from({ length: 6 }, (_, i) => (checksum >>> (5 * (5 - i))) & 31)]
  return prefix + "1" + words.map((w) => CHARSET[w]).join("")
}

const HEX = /^0x([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/

/** How many spellings each conversion below remembers (a few hundred kB at most). */
export const REMEMBERED = 4096

/**
 * `f` remembering its answers for the last REMEMBERED arguments, oldest forgotten first: a page's
 * accounts repeat (a sender in its tx, its messages and events; the same contracts block after
 * block), and a bech32 checksum costs more than the row's other columns together.
 */
const remembered = (f: (text: string) => string | null): ((text: string) => string | null) => {
  const answers = new Map<string, string | null>()
  return (text) => {
    const known = answers.get(text)
    // Stryker disable next-line ConditionalExpression: without the remembered answer the same one is computed again
    if (known !== undefined) return known
    const answer = f(text)
    // Stryker disable next-line ConditionalExpression,EqualityOperator: how many are remembered changes memory, never an answer
    if (answers.size >= REMEMBERED) answers.delete(answers.keys().next().value!)
    answers.set(text, answer)
    return answer
  }
}

const canonicalOf = remembered((address) => {
  if (HEX.test(address)) return address.toLowerCase()
  const decoded = bech32Bytes(address)
  return decoded ? "0x" + Buffer.from(decoded.bytes).toString("hex") : null
})

const bech32OfHex = remembered((hex) => (HEX.test(hex) ? bech32Of(ACCOUNT_PREFIX, Buffer.from(hex.slice(2), "hex")) : null))

/**
 * The canonical form of an account, `0x` + lowercase hex of its bytes, from either side's
 * spelling (a bech32 account of any length, or 0x-hex of 20 or 32 bytes, any case); null for
 * anything else (a module name, an empty string).
 */
export const canonicalAddress = (address: string | null | undefined): string | null => (address ? canonicalOf(address) : null)

/** The chain's bech32 spelling of a canonical (or any 0x-hex) address; null when it is not one. */
export const accountBech32 = (hex: string | null): string | null => (hex ? bech32OfHex(hex) : null)

/** The account in the last 20 bytes of a 32-byte log topic (an indexed `address`), canonical. */
export const topicAddress = (topic: string): string | null =>
  /^0x[0-9a-fA-F]{64}$/.test(topic) ? "0x" + topic.slice(26).toLowerCase() : null
