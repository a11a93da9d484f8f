/**
 * Keccak-256 (the original Keccak padding, 0x01, as Ethereum hashes: not NIST SHA3-256, whose
 * padding is 0x06; Node's crypto offers only the latter). Used to derive the hash minievm gives
 * the synthetic EVM tx of a cosmos tx (see syntheticTx.ts). Shared by the devnet and the
 * datasets as a primitive only: each side derives the synthetic tx hash with its own code.
 */
const MASK = (1n << 64n) - 1n
const RC = [
  0x0000000000000001n,
  0x0000000000008082n,
  0x800000000000808an,
  0x8000000080008000n,
  0x000000000000808bn,
  0x0000000080000001n,
  0x8000000080008081n,
  0x8000000000008009n,
  0x000000000000008an,
  0x0000000000000088n,
  0x0000000080008009n,
  0x000000008000000an,
  0x000000008000808bn,
  0x800000000000008bn,
  0x8000000000008089n,
  0x8000000000008003n,
  0x8000000000008002n,
  0x8000000000000080n,
  0x000000000000800an,
  0x800000008000000an,
  0x8000000080008081n,
  0x8000000000008080n,
  0x0000000080000001n,
  0x8000000080008008n
]
// rotation offsets, indexed x + 5y
const ROT = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14].map(BigInt)
const rotl = (x: bigint, n: bigint) => (n === 0n ? x : ((x << n) | (x >> (64n - n))) & MASK)

const permute = (s: Array<bigint>) => {
  const c = new Array<bigint>(5)
  const b = new Array<bigint>(25)
  for (let round = 0; round < 24; round++) {
    for (let x = 0; x < 5; x++) c[x] = s[x] ^ s[x + 5] ^ s[x + 10] ^ s[x + 15] ^ s[x + 20]
    for (let x = 0; x < 5; x++) {
      const d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1n)
      for (let y = 0; y < 25; y += 5) s[x + y] ^= d
    }
    for (let x = 0; x < 5; x++) for (let y = 0; y < 5; y++) b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(s[x + 5 * y], ROT[x + 5 * y])
    for (let x = 0; x < 5; x++) for (let y = 0; y < 25; y += 5) s[x + y] = b[x + y] ^ (~b[((x + 1) % 5) + y] & MASK & b[((x + 2) % 5) + y])
    s[0] ^= RC[round]
  }
}

const RATE = 136

/** keccak256 of `data`, as 64 lowercase hex digits (no 0x). */
export const keccak256Hex = (data: Uint8Array): string => {
  const padded = new Uint8Array((Math.floor(data.length / RATE) + 1) * RATE)
  padded.set(data)
  padded[data.length] ^= 0x01
  padded[padded.length - 1] ^= 0x80
  const s = new Array<bigint>(25).fill(0n)
  for (let off = 0; off < padded.length; off += RATE) {
    for (let i = 0; i < RATE / 8; i++) {
      let lane = 0n
      for (let k = 7; k >= 0; k--) lane = (lane << 8n) | BigInt(padded[off + i * 8 + k])
      s[i] ^= lane
    }
    permute(s)
  }
  let out = ""
  for (let i = 0; i < 4; i++)
    for (let k = 0; k < 8; k++)
      out += Number((s[i] >> BigInt(8 * k)) & 0xffn)
        .toString(16)
        .padStart(2, "0")
  return out
}
