/**
 * The account spellings the datasets join on (src/datasets/addresses.ts): bech32 read by the
 * BIP-173 rules (its published test vectors), 0x-hex, and log topics, to the one canonical form.
 * The expected bytes come from the devnet's own encoder or from words encoded here, never from the
 * code under test.
 */
import { describe, expect, it } from "vitest"
import { accountBech32, bech32Bytes, bech32Of, canonicalAddress, REMEMBERED, topicAddress } from "../../src/datasets/addresses.js"
import { bech32Encode, hexToBytes } from "../../src/devnet/encoding.js"

/** A bech32 string of arbitrary 5-bit words (BIP-173's checksum), so that bad paddings can be written. */
const fromWords = (prefix: string, words: ReadonlyArray<number>): string => {
  const G = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3]
  let chk = 1
  const values = [
    ...[...prefix].map((c) => c.charCodeAt(0) >> 5),
    0,
    ...[...prefix].map((c) => c.charCodeAt(0) & 31),
    ...words,
    0,
    0,
    0,
    0,
    0,
    0
  ]
  for (const v of values) {
    const top = chk >>> 25
    chk = ((chk & 0x1ffffff) << 5) ^ v
    G.forEach((g, i) => {
      if ((top >>> i) & 1) chk ^= g
    })
  }
  chk ^= 1
  const checksum = [25, 20, 15, 10, 5, 0].map((shift) => (chk >>> shift) & 31)
  // a word of -1 is written "b", a character bech32 does not have, with the checksum made as if it were read as -1
  return prefix + "1" + [...words, ...checksum].map((w) => (w < 0 ? "b" : "qpzry9x8gf2tvdw0s3jn54khce6mua7l"[w])).join("")
}
const hexOf = (b: { readonly bytes: Uint8Array } | undefined) => (b ? Buffer.from(b.bytes).toString("hex") : undefined)

describe("bech32Bytes", () => {
  it("reads BIP-173's valid strings: prefix lowercased, the data's bytes", () => {
    expect(bech32Bytes("A12UEL5L")).toEqual({ prefix: "a", bytes: new Uint8Array() })
    expect(bech32Bytes("a12uel5l")).toEqual({ prefix: "a", bytes: new Uint8Array() })
    expect(bech32Bytes("an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs")?.prefix).toBe(
      "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio"
    )
    // the 32 characters in charset order are the words 0..31: 160 bits
    expect(hexOf(bech32Bytes("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw"))).toBe("00443214c74254b635cf84653a56d7c675be77df")
    expect(bech32Bytes("11" + "q".repeat(82) + "c8247j")).toEqual({ prefix: "1", bytes: new Uint8Array(51) })
    expect(bech32Bytes("split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w")?.bytes.length).toBe(30)
    expect(bech32Bytes("?1ezyfcl")).toEqual({ prefix: "?", bytes: new Uint8Array() })
  })

  it("refuses BIP-173's invalid strings", () => {
    for (const bad of [
      "\x201nwldj5", // prefix character out of range
      "\x7f1axkwrx",
      "\x801eym55h",
      "an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx", // 91 characters
      "pzry9x0s0muk", // no separator
      "1pzry9x0s0muk", // empty prefix
      "x1b4n0q5v", // 'b' is not a data character
      "li1dgmt3", // checksum too short
      "de1lg7wt\xff", // bad character in the checksum
      "A1G7SGD8", // checksum made over the uppercase prefix
      "10a06t8", // empty prefix, 7 characters
      "1qzzfhee", // empty prefix
      "A12uEL5L", // mixed case
      "a12uel5m" // one character off
    ])
      expect(bech32Bytes(bad), JSON.stringify(bad)).toBeUndefined()
  })

  it("the edges: 8 and 90 characters, a 6-character checksum right after the separator, prefix characters 33 and 126", () => {
    expect(bech32Bytes("a12uel5l")).toBeDefined() // 8 characters, the separator 7 from the end
    expect(bech32Bytes("a12uel5")).toBeUndefined()
    const ninety = fromWords("a", Array(82).fill(0))
    expect(ninety.length).toBe(90)
    expect(bech32Bytes(ninety)?.bytes.length).toBe(51)
    expect(bech32Bytes(fromWords("a", Array(83).fill(0)))).toBeUndefined() // 91
    expect(bech32Bytes(fromWords("!", []))).toEqual({ prefix: "!", bytes: new Uint8Array() })
    expect(bech32Bytes(fromWords("~", []))).toEqual({ prefix: "~", bytes: new Uint8Array() })
    expect(bech32Bytes(fromWords("a b", []))).toBeUndefined()
    // refused for what they are, though their checksums add up: an empty prefix, a character outside the charset
    expect(bech32Bytes(fromWords("", [0, 0]))).toBeUndefined()
    expect(bech32Bytes(fromWords("a", [0, 0, 0, 0, 0, 0, 0, 0]))?.bytes.length).toBe(5)
    expect(bech32Bytes(fromWords("a", [0, 0, 0, 0, 0, 0, 0, -1]))).toBeUndefined()
    // the last "1" separates: a prefix may hold a "1"
    expect(bech32Bytes(fromWords("a1b", [0, 0]))).toEqual({ prefix: "a1b", bytes: new Uint8Array([0]) })
  })

  it("the 5-to-8 regrouping: zero padding of under 5 bits is read, anything else refused", () => {
    expect(hexOf(bech32Bytes(fromWords("a", [0, 4])))).toBe("01") // 10 bits: a byte and two zero bits
    expect(hexOf(bech32Bytes(fromWords("a", [31, 28])))).toBe("ff")
    expect(bech32Bytes(fromWords("a", [0, 1]))).toBeUndefined() // non-zero padding
    expect(bech32Bytes(fromWords("a", [0, 2]))).toBeUndefined()
    expect(bech32Bytes(fromWords("a", [0]))).toBeUndefined() // 5 bits: padding of a whole word
    expect(hexOf(bech32Bytes(fromWords("a", [0, 0, 0, 0])))).toBe("0000") // 20 bits: two bytes and four zero bits
    expect(bech32Bytes(fromWords("a", [0, 0, 0]))).toBeUndefined() // 15 bits: a byte and seven zero bits (a whole word too many)
  })

  it("reads what the devnet's encoder writes, at 20 and 32 bytes, and writes what it reads", () => {
    for (const hex of [
      "00".repeat(20),
      "ff".repeat(20),
      "0123456789abcdef0123456789abcdef01234567",
      "fe".repeat(32),
      "0011223344556677889900aabbccddeeff00112233445566778899aabbccddee"
    ]) {
      const text = bech32Encode("init", hexToBytes(hex))
      expect(bech32Bytes(text)).toEqual({ prefix: "init", bytes: hexToBytes(hex) })
      expect(bech32Bytes(text.toUpperCase())).toEqual({ prefix: "init", bytes: hexToBytes(hex) })
      expect(bech32Of("init", hexToBytes(hex))).toBe(text)
    }
  })
})

describe("canonicalAddress", () => {
  const hex20 = "0x0123456789AbCdEf0123456789aBcDeF01234567"
  const hex32 = "0x" + "Ab".repeat(32)
  it("0x-hex of 20 or 32 bytes, any case, is lowercased", () => {
    expect(canonicalAddress(hex20)).toBe(hex20.toLowerCase())
    expect(canonicalAddress(hex32)).toBe(hex32.toLowerCase())
  })
  it("a bech32 account of any prefix and length is 0x + the hex of its bytes", () => {
    expect(canonicalAddress(bech32Encode("init", hexToBytes(hex20.slice(2).toLowerCase())))).toBe(hex20.toLowerCase())
    expect(canonicalAddress(bech32Encode("init", hexToBytes("ab".repeat(32))))).toBe(hex32.toLowerCase())
    expect(canonicalAddress(bech32Encode("cosmos", hexToBytes("0102")))).toBe("0x0102")
    expect(canonicalAddress(bech32Encode("init", hexToBytes("ab".repeat(20))).toUpperCase())).toBe("0x" + "ab".repeat(20))
  })
  it("anything else is NULL: none, empty, a module name, hex of another length or without 0x, a bad checksum", () => {
    for (const bad of [
      null,
      undefined,
      "",
      "distribution",
      "0x" + "a".repeat(39),
      "0x" + "a".repeat(41),
      "0x" + "a".repeat(63),
      "0x" + "a".repeat(65),
      "a".repeat(40),
      "0X" + "a".repeat(40),
      "0x" + "g".repeat(40),
      " 0x" + "a".repeat(40),
      "0x" + "a".repeat(40) + "\n"
    ])
      expect(canonicalAddress(bad), JSON.stringify(bad)).toBeNull()
    const good = bech32Encode("init", hexToBytes("ab".repeat(20)))
    expect(canonicalAddress(good.slice(0, -1) + (good.endsWith("q") ? "p" : "q"))).toBeNull()
  })
})

describe("accountBech32 and topicAddress", () => {
  it("accountBech32: the init spelling of 0x-hex of 20 or 32 bytes, what the devnet encodes; NULL otherwise", () => {
    expect(accountBech32("0x" + "AB".repeat(20))).toBe(bech32Encode("init", hexToBytes("ab".repeat(20))))
    expect(accountBech32("0x" + "cd".repeat(32))).toBe(bech32Encode("init", hexToBytes("cd".repeat(32))))
    for (const bad of [null, "", "0x" + "ab".repeat(19), "ab".repeat(20), "init1xyz"]) expect(accountBech32(bad)).toBeNull()
  })
  it("topicAddress: the last 20 bytes of a 32-byte topic, lowercased; NULL for anything but a 32-byte topic", () => {
    expect(topicAddress("0x000000000000000000000000" + "AbCd".repeat(10))).toBe("0x" + "abcd".repeat(10))
    for (const bad of [
      "0x" + "0".repeat(63),
      "0x" + "0".repeat(65),
      "0".repeat(66),
      "zz0x" + "0".repeat(64),
      "0x" + "g".repeat(64),
      "0x" + "0".repeat(64) + "\n"
    ])
      expect(topicAddress(bad), bad).toBeNull()
  })
})

describe("remembered conversions", () => {
  it("answer as the first time past the REMEMBERED last arguments, and again for those forgotten, a refused spelling too", () => {
    const hexOf = (i: number) => "0x" + i.toString(16).padStart(40, "0")
    const count = REMEMBERED + 50
    const spellings = Array.from({ length: count }, (_, i) => bech32Encode("init", hexToBytes(hexOf(i).slice(2))))
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < count; i += round === 0 ? 1 : 97) {
        expect(canonicalAddress(spellings[i])).toBe(hexOf(i))
        expect(canonicalAddress(hexOf(i).toUpperCase().replace("0X", "0x"))).toBe(hexOf(i))
        expect(accountBech32(hexOf(i))).toBe(spellings[i])
        expect(canonicalAddress("distribution")).toBeNull()
        expect(accountBech32("0x" + "ab".repeat(19))).toBeNull()
      }
  })
})
