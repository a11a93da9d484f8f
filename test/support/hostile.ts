/**
 * A hostile HTTP server for tests, on 127.0.0.1: each request is answered the way the test's
 * handler says (any status, headers and body; a dropped connection; a body cut short), or
 * forwarded to an upstream (the devnet) and passed on, rewritten if the handler likes.
 * Every request is recorded with its arrival time as the server saw it, and requests in flight
 * are counted, so tests count retries and measure rate limits where they show: at the server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { afterAll, afterEach, beforeAll } from "vitest"
import { startDevnet, type Devnet, type DevnetOptions } from "../../src/devnet/index.js"

export interface RecordedRequest {
  readonly method: string
  /** path and query, as the client sent them */
  readonly path: string
  /** performance.now() when the request arrived */
  readonly at: number
  /** the request's headers, names lowercase */
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
}

export interface Reply {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  /** the body as bytes (a compressed one), instead of `body` */
  readonly bytes?: Uint8Array
  /** send headers that promise the whole body, then only this many bytes, then drop the connection */
  readonly cutAfterBytes?: number
}

/** Drop the connection without answering. */
export const RESET = "reset"
export type Answer = Reply | typeof RESET

export interface HostileRequest extends RecordedRequest {
  readonly url: URL
  /** 0 for the first request this server received */
  readonly index: number
  /** the request's body (POST), as text */
  readonly body?: string
}

/** Sends the request (to `path` instead, if given) to the upstream and returns its answer, body as text. */
export type Forward = (path?: string) => Promise<Reply & { readonly body: string }>

export type Handler = (request: HostileRequest, forward: Forward) => Answer | Promise<Answer>

export interface HostileServer {
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** the most requests open at once: arrived, and not yet answered */
  readonly peakInFlight: () => number
  readonly close: () => Promise<void>
}

export const json = (value: unknown, status = 200): Reply => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(value)
})
export const text = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  body
})
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Answers each request with `handler`, which may forward it to `upstreamUrl` and rewrite the answer. */
export const startProxy = (upstreamUrl: string, handler: Handler): Promise<HostileServer> => start(upstreamUrl.replace(/\/+$/, ""), handler)

/** Answers each request with `handler` alone. */
export const startServer = (handler: (request: HostileRequest) => Answer | Promise<Answer>): Promise<HostileServer> =>
  start(undefined, handler)

const start = async (upstream: string | undefined, handler: Handler): Promise<HostileServer> => {
  const requests: Array<RecordedRequest> = []
  let open = 0
  let peak = 0

  const forwardFrom =
    (request: HostileRequest): Forward =>
    async (path = request.path) => {
      if (upstream === undefined) throw new Error("this server has no upstream to forward to")
      // (Cache-Control goes on, as a proxy passes it: the devnet keeps answers as the real indexer does)
      const cacheControl: Record<string, string> = {}
      if (request.headers["cache-control"] !== undefined) cacheControl["cache-control"] = String(request.headers["cache-control"])
      const res = await fetch(upstream + path, {
        method: request.method,
        ...(request.body === undefined
          ? { headers: cacheControl }
          : {
              body: request.body,
              headers: { ...cacheControl, "content-type": String(request.headers["content-type"] ?? "application/json") }
            })
      })
      return { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "text/plain" }, body: await res.text() }
    }

  // the in-flight count drops when the answer is handed over, never later: a client cannot have
  // seen it before, so a permit it freed cannot be counted twice
  const send = (req: IncomingMessage, res: ServerResponse, answer: Answer) => {
    open--
    if (answer === RESET) return req.socket.destroy()
    const bytes = answer.bytes ? Buffer.from(answer.bytes) : Buffer.from(answer.body ?? "", "utf8")
    res.writeHead(answer.status, { ...answer.headers, "content-length": String(bytes.length) })
    if (answer.cutAfterBytes === undefined) return res.end(bytes)
    res.write(bytes.subarray(0, answer.cutAfterBytes), () => req.socket.destroy())
  }

  const server = createServer((req, res) => {
    const recorded: RecordedRequest = { method: req.method ?? "GET", path: req.url ?? "/", at: performance.now(), headers: req.headers }
    const index = requests.length
    requests.push(recorded)
    peak = Math.max(peak, ++open)
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    new Promise<void>((resolve) => req.on("end", resolve))
      .then(() => {
        const body = chunks.length > 0 ? Buffer.concat(chunks).toString("utf8") : undefined
        return {
          ...recorded,
          url: new URL(recorded.path, "http://hostile.invalid"),
          index,
          ...(body === undefined ? {} : { body })
        } satisfies HostileRequest
      })
      .then((request) => handler(request, forwardFrom(request)))
      .catch((e: unknown): Answer => text(500, `hostile handler failed: ${(e as Error).stack ?? String(e)}`))
      .then((answer) => send(req, res, answer))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    peakInFlight: () => peak,
    close: () =>
      new Promise<void>((resolve) => {
        // keep-alive connections of the client under test would hold close() open
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * A devnet for one test file (started before its tests, stopped after), and proxies in front of
 * it, each closed after its test. `started` receives the devnet, for the file's own variable.
 */
export const proxiedDevnet = (options: DevnetOptions, started: (devnet: Devnet) => void) => {
  let devnet: Devnet | undefined
  const servers: Array<HostileServer> = []
  beforeAll(async () => {
    devnet = await startDevnet(options)
    started(devnet)
  })
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
  })
  afterAll(async () => {
    await devnet?.stop()
  })
  return {
    /** closes `server` after the test, like the proxies */
    track: (server: HostileServer) => {
      servers.push(server)
      return server
    },
    proxy: async (handler: Handler) => {
      const server = await startProxy(devnet!.indexerUrl, handler)
      servers.push(server)
      return server
    }
  }
}
