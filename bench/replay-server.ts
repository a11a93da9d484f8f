/**
 * A replay of a server, for benchmarks (not part of chain-lake): every 200 answer the origin gave
 * to a URL is kept and served again from memory, each reply sent `latency` ms after its request
 * came. Warmed up by one pass of each client, it answers like a remote indexer on its own
 * hardware: the latency is the network's and the server's time, and none of its CPU is taken from
 * the client's cores (the devnet renders pages on the same 2 cores as the client it serves).
 *
 *   tsx bench/replay-server.ts ORIGIN_URL [LATENCY_MS]   → prints url=http://127.0.0.1:PORT
 *
 * `GET /__requests` answers the requests served since the last such call, each as
 * [arrived, answered, url] (epoch milliseconds), for a bench's timeline of one run.
 */
import { createServer } from "node:http"
import { request } from "undici"

const origin = process.argv[2]
const latencyMs = Number(process.argv[3] ?? 20)
if (!origin) throw new Error("usage: replay-server.ts ORIGIN_URL [LATENCY_MS]")

const kept = new Map<string, { readonly status: number; readonly type: string; readonly body: Buffer }>()

let served: Array<[number, number, string]> = []
const server = createServer((req, res) => {
  const arrived = performance.now()
  const url = req.url ?? "/"
  if (url === "/__requests") {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify(served))
    served = []
    return
  }
  const answer = async () => {
    const hit = kept.get(url)
    if (hit) return hit
    const r = await request(origin + url)
    const fresh = {
      status: r.statusCode,
      type: String(r.headers["content-type"] ?? "application/json"),
      body: Buffer.from(await r.body.arrayBuffer())
    }
    if (fresh.status === 200) kept.set(url, fresh)
    return fresh
  }
  void answer().then(
    (a) =>
      setTimeout(
        () => {
          res.writeHead(a.status, { "content-type": a.type, "content-length": a.body.length })
          res.end(a.body)
          served.push([performance.timeOrigin + arrived, performance.timeOrigin + performance.now(), url])
        },
        Math.max(0, latencyMs - (performance.now() - arrived))
      ),
    (e) => {
      res.writeHead(502)
      res.end(String(e))
    }
  )
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (typeof address === "object" && address) console.log(`url=http://127.0.0.1:${address.port}`)
})
process.on("SIGINT", () => process.exit(0))
