/**
 * Routes of the devnet router: route, op-hook, msgs, track and status with the shapes of the
 * router API (Skip Go API plus the Initia additions), JSON errors {code, message, details}, and
 * the three flow rules enforced. POST /devnet/broadcast is devnet-only: it turns a msgs tx into
 * a tx hash that track and status then follow.
 *
 * This module holds the router's state and the dispatch; the routes live in router-route.ts
 * (route, op-hook), router-msgs.ts and router-transfers.ts (broadcast, track, status).
 */
import type { DevnetReply, DevnetRequest } from "./http.js"
import { msgs } from "./router-msgs.js"
import { assets, chains } from "./router-reference.js"
import { opHook, route } from "./router-route.js"
import { broadcast, issuedKey, status, track, type Broadcast, type Issued, type Transfers } from "./router-transfers.js"
import { errorReply, parseBody, RouterError } from "./router-wire.js"

export interface RouterOptions {
  readonly seed: number
  /** transfer durations are the route's estimates times this factor (a 30 s hop takes 0.3 s at 0.01) */
  readonly transferTimeScale: number
  /** a tracked tx answers 404 "tx not found" this long after track, as the real tracking service does until it indexed it */
  readonly indexDelayMs: number
  /** serve /v2/fungible/assets and /v2/info/chains (outside the documented flow; a router may answer 404 there) */
  readonly metadata: boolean
  readonly now?: () => number
  /** distinguishes devnet runs, so a tx broadcast to one is not mistaken for one of another */
  readonly instance?: string
}

export class RouterApi {
  /** operations of each msgs tx issued, keyed by the tx's JSON, so broadcast can find them */
  private readonly issued = new Map<string, Issued>()
  private readonly broadcasts = new Map<string, Broadcast>()
  private broadcastCount = 0
  private readonly metadata: boolean
  /** the state above as the transfer routes see it */
  private readonly transfers: Transfers

  constructor(options: RouterOptions) {
    this.metadata = options.metadata
    this.transfers = {
      options,
      now: options.now ?? Date.now,
      issued: this.issued,
      broadcasts: this.broadcasts,
      nextBroadcast: () => ++this.broadcastCount
    }
  }

  handle(req: DevnetRequest): DevnetReply {
    try {
      const p = req.url.pathname
      if (req.method === "POST" && p === "/v2/fungible/route") return route(parseBody(req.body))
      if (req.method === "POST" && p === "/op-hook") return opHook(parseBody(req.body))
      if (req.method === "POST" && p === "/v2/fungible/msgs") {
        const { reply, tx, issued } = msgs(parseBody(req.body))
        this.issued.set(issuedKey(tx), issued)
        return reply
      }
      if (req.method === "POST" && p === "/v2/tx/track") return track(this.transfers, parseBody(req.body))
      if (req.method === "GET" && p === "/v2/tx/status") return status(this.transfers, req.url.searchParams)
      if (this.metadata && req.method === "GET" && p === "/v2/fungible/assets") return assets(req.url.searchParams)
      if (this.metadata && req.method === "GET" && p === "/v2/info/chains") return chains(req.url.searchParams)
      if (req.method === "POST" && p === "/devnet/broadcast") return broadcast(this.transfers, parseBody(req.body))
      throw new RouterError(404, 5, `Not Found: ${req.method} ${p}`)
    } catch (e) {
      if (e instanceof RouterError) return errorReply(e)
      return errorReply(new RouterError(500, 2, "internal server error"))
    }
  }
}
