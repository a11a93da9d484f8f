/**
 * Fault injection: profiles and spec strings, rates, determinism from the seed, transient faults
 * that a retry gets past, and the malformed record that no retry fixes.
 */
import { request } from "node:http"
import { describe, expect, it } from "vitest"
import { parseFaults, startDevnet } from "../../src/devnet/index.js"

/** One raw request: status and body, or the network error (reset, dropped body). */
const raw = (url: string, timeoutMs = 2000): Promise<string> =>
  new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        let parse = "json"
        try {
          JSON.parse(body)
        } catch {
          parse = "not-json"
        }
        resolve(`${res.statusCode}:${res.statusCode === 200 ? parse : body}${res.headers["retry-after"] ? ":retry-after" : ""}`)
      })
      res.on("error", () => resolve("body-error"))
      res.on("aborted", () => resolve("body-aborted"))
    })
    req.on("timeout", () => {
      req.destroy()
      resolve("timeout")
    })
    req.on("error", (e: NodeJS.ErrnoException) => resolve(`error:${e.code ?? e.message}`))
    req.end()
  })

const sample = async (url: string, paths: Array<string>) => {
  const out: Array<string> = []
  for (const p of paths) out.push(await raw(url + p, 500))
  return out
}

describe("fault profiles", () => {
  it("parses profiles and spec strings, and rejects bad ones with a clear message", () => {
    expect(parseFaults("none").rates["503"]).toBe(0)
    const heavy = parseFaults("heavy")
    expect(Object.values(heavy.rates).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(0.2)
    const spec = parseFaults("429=0.05,503=0.05,reset=0.02,truncate=0.02,malformed=0.1,count-timeout,stall-ms=50")
    expect(spec).toMatchObject({ malformed: 0.1, countTimeout: true, stallMs: 50 })
    expect(spec.rates).toMatchObject({ "429": 0.05, "503": 0.05, reset: 0.02, truncate: 0.02 })
    expect(() => parseFaults("503=lots")).toThrow(/bad fault "503=lots"/)
    expect(() => parseFaults("teapot=0.1")).toThrow(/unknown fault "teapot"/)
    expect(() => parseFaults("500=0.7,503=0.7")).toThrow(/more than 1/)
  })

  it("heavy fails at least 20% of requests in every transient way, reproducibly from the seed", async () => {
    const paths = Array.from({ length: 300 }, (_, i) => `/indexer/block/v1/blocks/${(i % 50) + 1}?n=${i}`)
    const runs: Array<Array<string>> = []
    for (let run = 0; run < 2; run++) {
      const d = await startDevnet({ seed: 11, blocks: 50, faults: "heavy,stall-ms=1000" })
      try {
        runs.push(await sample(d.indexerUrl, paths))
      } finally {
        await d.stop()
      }
    }
    expect(runs[1]).toEqual(runs[0])
    const failed = runs[0].filter((r) => r !== "200:json")
    expect(failed.length / paths.length).toBeGreaterThanOrEqual(0.2)
    const kinds = new Set(failed.map((r) => (r.startsWith("error:") ? "reset" : r.startsWith("body-") ? "dropped" : r)))
    expect(kinds).toEqual(
      new Set([
        "429:Too Many Requests:retry-after",
        "500:Internal Server Error",
        "502:Bad Gateway",
        "503:Service Unavailable",
        "reset",
        "timeout",
        "200:not-json",
        "dropped"
      ])
    )
  })

  it("a transient fault goes away on retry; a malformed record stays on every retry", async () => {
    const d = await startDevnet({ seed: 12, blocks: 50, faults: "503=0.5,malformed=0.3" })
    try {
      const results = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const path = `/indexer/block/v1/blocks?pagination.limit=5&pagination.offset=${i}`
          let body = ""
          for (let attempt = 0; attempt < 20; attempt++) {
            const res = await fetch(d.indexerUrl + path)
            if (res.status === 200) {
              body = await res.text()
              break
            }
          }
          expect(body, path).not.toBe("")
          const again = await (async () => {
            for (;;) {
              const res = await fetch(d.indexerUrl + path)
              if (res.status === 200) return res.text()
            }
          })()
          expect(again).toBe(body)
          return JSON.parse(body).blocks.some((b: any) => typeof b.height === "number" || typeof b.chain_id === "number")
        })
      )
      const malformed = results.filter(Boolean).length
      expect(malformed).toBeGreaterThan(0)
      expect(malformed).toBeLessThan(30)
    } finally {
      await d.stop()
    }
  })

  it("latency delays every response", async () => {
    const d = await startDevnet({ seed: 1, blocks: 5, latencyMs: 120 })
    try {
      const t0 = performance.now()
      await fetch(d.indexerUrl + "/status")
      expect(performance.now() - t0).toBeGreaterThanOrEqual(110)
    } finally {
      await d.stop()
    }
  })
})
