/**
 * The loopback HTTP server both devnet services run on: applies latency and faults around a
 * pure request handler, and tracks sockets and timers so stop() is immediate.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { corruptOneRecord, type FaultInjector } from "./faults.js"

export interface DevnetRequest {
  readonly method: string
  readonly url: URL
  readonly body: string
  /** the request's Cache-Control header */
  readonly cacheControl?: string
}
export interface DevnetReply {
  readonly status: number
  readonly body: string
  readonly contentType: string
  /** whether a truncated or malformed variant of this reply is allowed (not for non-idempotent POSTs) */
  readonly corruptible?: boolean
  /** the server's work beyond the latency, in ms (rows an OFFSET scanned): the reply is sent that much later */
  readonly workMs?: number
  /** whether a response cache answered it (X-Cache), where one stands in front */
  readonly cache?: "hit" | "miss"
}

export interface HttpService {
  readonly url: string
  readonly close: () => Promise<void>
}

const FAULT_BODIES: Record<string, string> = {
  "500": "Internal Server Error",
  "502": "Bad Gateway",
  "503": "Service Unavailable",
  "429": "Too Many Requests"
}

export const serve = async (options: {
  readonly port: number
  readonly handle: (req: DevnetRequest) => DevnetReply
  readonly faults: FaultInjector
  readonly seed: number
  readonly latencyMs: number
  /** paths never faulted (the OpenAPI document) */
  readonly exempt?: (url: URL) => boolean
}): Promise<HttpService> => {
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const later = (ms: number, fn: () => void) => {
    if (ms <= 0) return fn()
    const t = setTimeout(() => {
      timers.delete(t)
      fn()
    }, ms)
    timers.add(t)
  }

  // The reply is computed when the request arrives and sent `latencyMs` after that (plus a stall
  // fault's delay): the server's own work counts within the latency, as on a real indexer with
  // cores to spare, so that a burst of concurrent requests is not serialised by this one thread.
  const respond = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const arrived = performance.now()
    const url = new URL(req.url ?? "/", "http://devnet")
    const key = `${req.method} ${url.pathname}${url.search} ${body}`
    const fault = options.exempt?.(url) ? undefined : options.faults.next(key)
    let due = arrived + options.latencyMs + (fault === "stall" ? options.faults.spec.stallMs : 0)
    const atDue = (send: () => void) => later(due - performance.now(), send)
    if (fault === "reset") return atDue(() => req.socket.destroy())
    if (fault === "429" || fault === "500" || fault === "502" || fault === "503")
      return atDue(() => {
        const headers: Record<string, string> = { "content-type": "text/plain; charset=utf-8" }
        if (fault === "429") {
          const s = options.faults.spec.retryAfterSeconds
          // both forms of Retry-After appear in the wild: delta-seconds and an HTTP-date
          headers["retry-after"] = key.length % 2 === 0 ? String(s) : new Date(Date.now() + s * 1000).toUTCString()
        }
        res.writeHead(Number(fault), headers)
        res.end(FAULT_BODIES[fault])
      })
    let reply: DevnetReply
    try {
      reply = options.handle({ method: req.method ?? "GET", url, body, cacheControl: req.headers["cache-control"] })
    } catch (e) {
      console.error("devnet handler crashed:", e)
      reply = { status: 500, body: "Internal Server Error", contentType: "text/plain; charset=utf-8" }
    }
    due += reply.workMs ?? 0
    let out = reply.body
    const corruptible = reply.corruptible !== false && reply.status === 200
    if (corruptible && options.faults.malformed(`${url.pathname}${url.search}`)) out = corruptOneRecord(out, options.seed, key)
    const bytes = Buffer.from(out, "utf8")
    if (fault === "truncate" && corruptible && bytes.length > 2) {
      const half = bytes.subarray(0, Math.floor(bytes.length / 2))
      if (options.faults.truncateStyle(key) === "short-body")
        return atDue(() => {
          res.writeHead(reply.status, { "content-type": reply.contentType, "content-length": String(half.length) })
          res.end(half)
        })
      return atDue(() => {
        res.writeHead(reply.status, { "content-type": reply.contentType, "content-length": String(bytes.length) })
        res.write(half)
        later(5, () => req.socket.destroy())
      })
    }
    atDue(() => {
      res.writeHead(reply.status, {
        "content-type": reply.contentType,
        "content-length": String(bytes.length),
        ...(reply.cache ? { "x-cache": reply.cache } : {})
      })
      res.end(bytes)
    })
  }

  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => respond(req, res, Buffer.concat(chunks).toString("utf8")))
  })
  server.keepAliveTimeout = 30_000
  server.headersTimeout = 31_000
  server.on("connection", (s) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t)
        timers.clear()
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}
