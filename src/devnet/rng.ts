/**
 * Deterministic randomness for the devnet. Everything the devnet serves is derived from
 * (seed, labels…) through these functions, so the same seed and height give the same bytes
 * without storing the chain.
 */
import { createHash } from "node:crypto"

/** FNV-1a over the labels, then avalanche: a 32-bit seed for a stream. */
export const hash32 = (...parts: ReadonlyArray<string | number>): number => {
  let h = 0x811c9dc5
  for (const part of parts) {
    const s = typeof part === "number" ? String(part) : part
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i)
      h = Math.imul(h, 0x01000193)
    }
    h ^= 0x2f // separator, so ("ab","c") differs from ("a","bc")
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A small PRNG (mulberry32) seeded from labels. */
export class Rng {
  private state: number
  constructor(...parts: ReadonlyArray<string | number>) {
    this.state = hash32(...parts)
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }
  chance(p: number): boolean {
    return this.next() < p
  }
  pick<A>(items: ReadonlyArray<A>): A {
    return items[Math.floor(this.next() * items.length)]
  }
  /** Index in [0, n) with a Zipf-like skew: low indices are much more likely. */
  skewed(n: number, power = 2.2): number {
    return Math.min(n - 1, Math.floor(n * this.next() ** power))
  }
  /** Picks by weight; weights need not sum to 1. */
  weighted<A>(items: ReadonlyArray<readonly [A, number]>): A {
    let total = 0
    for (const [, w] of items) total += w
    let x = this.next() * total
    for (const [a, w] of items) {
      x -= w
      if (x < 0) return a
    }
    return items[items.length - 1][0]
  }
}

/** Hex digest of sha256 over the labels (64 lowercase hex chars). */
export const sha256Hex = (...parts: ReadonlyArray<string | number>): string =>
  createHash("sha256").update(parts.join("\u0000")).digest("hex")

/**
 * A keyed permutation of 48-bit integers (4-round Feistel on two 24-bit halves). Hashes start
 * with permute(height·2^16 + index), so a hash can be mapped back to its tx without an index.
 */
const MASK24 = 0xffffff
const roundFn = (x: number, key: number): number => {
  let h = Math.imul(x ^ key, 0x9e3779b1)
  h ^= h >>> 15
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  return h & MASK24
}
export const permute48 = (value: number, key: number): number => {
  let left = Math.floor(value / 0x1000000) & MASK24
  let right = value & MASK24
  for (let r = 0; r < 4; r++) {
    const next = left ^ roundFn(right, key + r)
    left = right
    right = next
  }
  return left * 0x1000000 + right
}
export const unpermute48 = (value: number, key: number): number => {
  let left = Math.floor(value / 0x1000000) & MASK24
  let right = value & MASK24
  for (let r = 3; r >= 0; r--) {
    const prev = right ^ roundFn(left, key + r)
    right = left
    left = prev
  }
  return left * 0x1000000 + right
}
