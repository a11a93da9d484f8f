/**
 * RouterClient: route, op-hook, msgs, track and status of the router API, decoded with Effect
 * Schema, under the same request limits, timeout and retry schedule as the indexer client.
 * The bridging flow's rules are enforced here, not left to callers:
 *  1. when a route has required_op_hook, msgs needs a signed op-hook;
 *  2. a tx is registered with track once (a repeat is refused; a retried registration that the
 *     router already took counts as done);
 *  3. address_list is built from the route's required_chain_addresses.
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import { decodeBody } from "../http/body.js"
import { fetchBytes, HttpTransport, type HttpRequest } from "../http/transport.js"
import { RequestLimiter } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, parseRetryAfter, retrySchedule, type RetryPolicy } from "../http/retry.js"
import { decodeWithPath } from "../schema/decode.js"
import {
  BadPriceError,
  LowInfoError,
  NoRouteError,
  RouterDecodeError,
  RouterFlowError,
  RouterHttpError,
  RouterNetworkError,
  RouterTimeout,
  type RouterError
} from "./errors.js"
import * as R from "./schemas.js"

export interface RouterClientConfig {
  readonly baseUrl: string
  readonly retry?: RetryPolicy
}

export interface MsgsOptions {
  /** an address for every chain of route.required_chain_addresses, by chain id */
  readonly addresses: Readonly<Record<string, string>>
  readonly slippageTolerancePercent: string
  /** required when route.required_op_hook is true: the signed /op-hook payload */
  readonly signedOpHook?: typeof R.SignedOpHook.Type
}

type Json = Record<string, unknown>

/**
 * Where a route answers another question than the one asked: another source or destination asset,
 * or another amount in. Such a route was signed for as asked (bridge printed a MsgTransfer of 1
 * for an ask of 1000000) and stored as a quote of the pair asked. Hex denoms compare without case
 * (EVM addresses come checksummed or not); amounts as numbers (no leading zeros).
 */
const answerMismatch = (asked: R.RouteRequest, route: R.RouteResponse): { path: string; message: string } | undefined => {
  // only hex addresses and hashes may differ in case (checksummed EVM addresses, ibc/ hashes); Cosmos denoms are case-sensitive
  const HEX = /^(0x|ibc\/|evm\/|move\/|l2\/)[0-9a-f]+$/i
  const norm = (d: string) => (HEX.test(d) ? d.toLowerCase() : d)
  const same = (a: string, b: string) => norm(a) === norm(b)
  for (const field of ["source_asset_chain_id", "source_asset_denom", "dest_asset_chain_id", "dest_asset_denom"] as const)
    if (!same(asked[field], route[field]))
      return { path: field, message: `the route is for ${JSON.stringify(route[field])}, but ${JSON.stringify(asked[field])} was asked` }
  if (BigInt(asked.amount_in) !== BigInt(route.amount_in))
    return { path: "amount_in", message: `the route moves ${route.amount_in}, but ${asked.amount_in} was asked` }
  return undefined
}

export const makeRouterClient = (config: RouterClientConfig) =>
  Effect.gen(function* () {
    const http = yield* HttpTransport
    const limiter = yield* RequestLimiter
    const policy = config.retry ?? DEFAULT_RETRY
    const baseUrl = config.baseUrl.replace(/\/+$/, "")
    const tracked = new Set<string>()

    /** One request: parsed JSON on 2xx; JSON error bodies become tagged errors. */
    const once = (endpoint: string, request: HttpRequest): Effect.Effect<unknown, RouterError> => {
      const url = request.url
      const transport = fetchBytes(http, request, policy.timeoutMs, {
        network: (reason): RouterError => new RouterNetworkError({ url, reason }),
        tooLarge: (reason): RouterError =>
          new RouterDecodeError({ endpoint, path: "", message: `the answer of ${url} is ${reason}`, truncated: false }),
        timeout: (): RouterError => new RouterTimeout({ url, timeoutMs: policy.timeoutMs })
      })
      return Effect.gen(function* () {
        const res = yield* transport
        const text = decodeBody(res.bytes)
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          if (res.status >= 200 && res.status < 300)
            return yield* new RouterDecodeError({
              endpoint,
              path: "",
              message: `not JSON (${text.length} bytes; truncated?)`,
              truncated: true
            })
        }
        if (res.status >= 200 && res.status < 300) return json
        const body = Schema.decodeUnknownOption(R.RouterErrorBody)(json)
        const code = body._tag === "Some" ? body.value.code : undefined
        const message = body._tag === "Some" ? body.value.message : text
        const reason = body._tag === "Some" ? body.value.details?.find((d) => d.reason)?.reason : undefined
        if (reason === "BAD_PRICE_ERROR" || reason === "HIGH_LOSS_ERROR") return yield* new BadPriceError({ message, reason })
        if (reason === "LOW_INFO_ERROR") return yield* new LowInfoError({ message })
        // no route: code 12 or a 404 about routes (Skip); on Initia any route 400 without a reason (its wallet kit reads it so), with the body's optional `info`
        const info = body._tag === "Some" ? body.value.info : undefined
        if (
          endpoint === "route" &&
          (code === 12 ||
            (res.status === 404 && code === 5 && /route/i.test(message)) ||
            (res.status === 400 && reason === undefined && !/\binvalid\b|\brequired\b/i.test(message)))
        )
          return yield* new NoRouteError({ message: info ? `${message} (${info})` : message, status: res.status })
        return yield* new RouterHttpError({
          status: res.status,
          url,
          code,
          body: message,
          retryAfterMs: parseRetryAfter(res.headers["retry-after"])
        })
      })
    }

    const call = <A, I>(schema: Schema.Schema<A, I>, endpoint: string, request: HttpRequest, retry = true) =>
      (retry
        ? limiter.run(once(endpoint, request)).pipe(Effect.retry(retrySchedule<RouterError>(policy)))
        : limiter.run(once(endpoint, request))
      ).pipe(
        Effect.flatMap((json) => {
          const decoded = decodeWithPath(schema, json)
          return Either.isRight(decoded)
            ? Effect.succeed(decoded.right)
            : Effect.fail(new RouterDecodeError({ endpoint, path: decoded.left.path, message: decoded.left.message, truncated: false }))
        })
      )
    const post = (path: string, body: Json): HttpRequest => ({ method: "POST", url: baseUrl + path, json: body })

    const route = (request: R.RouteRequest): Effect.Effect<R.RouteResponse, RouterError> =>
      limiter.run(once("route", post("/v2/fungible/route", request as unknown as Json))).pipe(
        Effect.retry(retrySchedule<RouterError>(policy)),
        Effect.flatMap((json): Effect.Effect<R.RouteResponse, RouterError> => {
          // a 200 with no operations is the router saying "no routes found"
          const o = json as Json
          if (typeof o === "object" && o !== null && !("operations" in o))
            return Effect.fail(new NoRouteError({ message: typeof o.message === "string" ? o.message : "no routes found", status: 200 }))
          const decoded = decodeWithPath(R.RouteResponse, json)
          if (Either.isLeft(decoded))
            return Effect.fail(
              new RouterDecodeError({ endpoint: "route", path: decoded.left.path, message: decoded.left.message, truncated: false })
            )
          const mismatch = answerMismatch(request, decoded.right)
          return mismatch
            ? Effect.fail(new RouterDecodeError({ endpoint: "route", path: mismatch.path, message: mismatch.message, truncated: false }))
            : Effect.succeed(decoded.right)
        })
      )

    const opHook = (request: typeof R.OpHookRequest.Type) => call(R.OpHookResponse, "op-hook", post("/op-hook", request as unknown as Json))

    const msgs = (routeResponse: R.RouteResponse, options: MsgsOptions): Effect.Effect<R.MsgsResponse, RouterError> =>
      Effect.gen(function* () {
        // Rule 3: one address per required chain, in the route's order
        const missing = routeResponse.required_chain_addresses.filter((c) => !options.addresses[c])
        if (missing.length > 0)
          return yield* new RouterFlowError({
            rule: "address_list",
            message: `the route needs an address on ${missing.join(", ")} (required_chain_addresses: ${routeResponse.required_chain_addresses.join(", ")})`
          })
        // Rule 1: a route with required_op_hook needs the signed hook first
        if (routeResponse.required_op_hook === true && !options.signedOpHook)
          return yield* new RouterFlowError({
            rule: "op_hook",
            message: "the route has required_op_hook: fetch /op-hook, sign the hook, and pass signedOpHook"
          })
        const body: Json = {
          source_asset_denom: routeResponse.source_asset_denom,
          source_asset_chain_id: routeResponse.source_asset_chain_id,
          dest_asset_denom: routeResponse.dest_asset_denom,
          dest_asset_chain_id: routeResponse.dest_asset_chain_id,
          amount_in: routeResponse.amount_in,
          amount_out: routeResponse.amount_out,
          operations: Schema.encodeSync(Schema.Array(R.Operation))(routeResponse.operations),
          address_list: routeResponse.required_chain_addresses.map((c) => options.addresses[c]),
          slippage_tolerance_percent: options.slippageTolerancePercent,
          ...(options.signedOpHook ? { signed_op_hook: options.signedOpHook } : {})
        }
        return yield* call(R.MsgsResponse, "msgs", post("/v2/fungible/msgs", body))
      })

    const track = (txHash: string, chainId: string): Effect.Effect<typeof R.TrackResponse.Type, RouterError> =>
      Effect.gen(function* () {
        // Rule 2: a tx is registered once
        const key = `${chainId}/${txHash.toLowerCase()}`
        if (tracked.has(key))
          return yield* new RouterFlowError({
            rule: "track_once",
            message: `${txHash} on ${chainId} is already tracked; poll its status instead`
          })
        let attempts = 0
        const attempt = Effect.suspend(() => {
          attempts++
          return call(R.TrackResponse, "track", post("/v2/tx/track", { tx_hash: txHash, chain_id: chainId }), false)
        })
        const result = yield* attempt.pipe(
          Effect.retry(retrySchedule<RouterError>(policy)),
          // a retried registration the router already took (its first answer was lost) is done
          Effect.catchIf(
            (e): e is RouterHttpError => e._tag === "RouterHttpError" && e.status === 409 && attempts > 1,
            () => Effect.succeed({ tx_hash: txHash, explorer_link: "" })
          )
        )
        tracked.add(key)
        return result
      })

    /**
     * The one re-registration the Skip SDK makes (retry_track) when status keeps answering "tx not
     * found": a router that lost the first registration learns of the tx; one that has it answers
     * as it likes (an error here is not the transfer's, so it is ignored).
     */
    const retrack = (txHash: string, chainId: string) =>
      call(R.TrackResponse, "track", post("/v2/tx/track", { tx_hash: txHash, chain_id: chainId }), false).pipe(Effect.asVoid, Effect.ignore)

    const status = (txHash: string, chainId: string) =>
      call(R.TxStatusResponse, "status", {
        method: "GET",
        url: `${baseUrl}/v2/tx/status?${new URLSearchParams({ tx_hash: txHash, chain_id: chainId })}`
      })

    const get = (path: string): HttpRequest => ({ method: "GET", url: baseUrl + path })
    /** Every asset the router knows, per chain (symbols and decimals). */
    const assets = call(R.AssetsResponse, "assets", get("/v2/fungible/assets?include_evm_assets=true&include_cw20_assets=true"))
    /** Every chain the router knows, EVM chains included. */
    const chains = call(R.ChainsResponse, "chains", get("/v2/info/chains?include_evm=true"))

    /** Devnet only: turn a msgs tx into a trackable tx hash (a real router never broadcasts). */
    const devnetBroadcast = (chainId: string, tx: R.MsgsTx, outcome?: "success" | "error" | "abandoned" | "unknown") =>
      call(
        Schema.Struct({ tx_hash: Schema.String, chain_id: Schema.String }),
        "devnet/broadcast",
        post("/devnet/broadcast", { chain_id: chainId, tx, ...(outcome ? { outcome } : {}) })
      )

    return {
      baseUrl,
      route,
      opHook,
      msgs,
      track,
      retrack,
      status,
      assets,
      chains,
      devnetBroadcast,
      markTracked: (txHash: string, chainId: string) => tracked.add(`${chainId}/${txHash.toLowerCase()}`)
    }
  })

export type RouterClientService = Effect.Effect.Success<ReturnType<typeof makeRouterClient>>

export class RouterClient extends Context.Tag("chain-lake/RouterClient")<RouterClient, RouterClientService>() {}

/** The client for `baseUrl`; needs an HttpTransport (layerHttpTransport) and a RequestLimiter. */
export const layerRouterClient = (config: RouterClientConfig) => Layer.effect(RouterClient, makeRouterClient(config))
