/**
 * RouterClient: route, op-hook, msgs, track and status of the router API, decoded with Effect
 * Schema, under the same request limits, timeout and retry schedule as the indexer client (how an
 * endpoint is asked, and its path, are in endpoints.ts).
 * The bridging flow's rules are enforced here, not left to callers:
 *  1. when a route has required_op_hook, msgs needs a signed op-hook;
 *  2. a tx is registered with track once (a repeat is refused; a retried registration that the
 *     router already took counts as done);
 *  3. address_list is built from the route's required_chain_addresses.
 */
import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import { HttpTransport } from "../http/transport.js"
import { RequestLimiter } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, retrySchedule, type RetryPolicy } from "../http/retry.js"
import { Retries, type RetriesService } from "../http/Retries.js"
import { NoRouteError, RouterDecodeError, RouterFlowError, type RouterError, type RouterHttpError } from "./errors.js"
import { decodeAnswer, routerRequests, type RouterRequests } from "./endpoints.js"
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

/** only hex addresses and hashes may differ in case (checksummed EVM addresses, ibc/ hashes); Cosmos denoms and addresses are case-sensitive */
const HEX = /^(0x|ibc\/|evm\/|move\/|l2\/)[0-9a-f]+$/i
/** Whether two denoms or addresses name the same thing (hex ones compared without case). */
const same = (a: string, b: string) => (HEX.test(a) ? a.toLowerCase() : a) === (HEX.test(b) ? b.toLowerCase() : b)

/**
 * Where a route answers another question than the one asked: another source or destination asset,
 * another amount in, or a path (chain_ids, the first operation) that starts or ends elsewhere or
 * moves another amount. Such a route was signed for as asked (bridge printed a MsgTransfer of 1
 * for an ask of 1000000) and stored as a quote of the pair asked. Hex denoms compare without case
 * (EVM addresses come checksummed or not); amounts as numbers (no leading zeros).
 */
const answerMismatch = (asked: R.RouteRequest, route: R.RouteResponse): { path: string; message: string } | undefined => {
  for (const field of ["source_asset_chain_id", "source_asset_denom", "dest_asset_chain_id", "dest_asset_denom"] as const)
    if (!same(asked[field], route[field]))
      return { path: field, message: `the route is for ${JSON.stringify(route[field])}, but ${JSON.stringify(asked[field])} was asked` }
  if (BigInt(asked.amount_in) !== BigInt(route.amount_in))
    return { path: "amount_in", message: `the route moves ${route.amount_in}, but ${asked.amount_in} was asked` }
  const [first, last] = [route.chain_ids[0], route.chain_ids.at(-1)]
  if (first !== asked.source_asset_chain_id || last !== asked.dest_asset_chain_id)
    return {
      path: "chain_ids",
      message: `the route's chains run ${JSON.stringify(route.chain_ids)}, but ${asked.source_asset_chain_id} to ${asked.dest_asset_chain_id} was asked`
    }
  const start = route.operations[0]
  if (start && BigInt(start.amount_in) !== BigInt(route.amount_in))
    return {
      path: "operations[0].amount_in",
      message: `the route's first operation moves ${start.amount_in}, but the route ${route.amount_in}`
    }
  return undefined
}

/**
 * A route's answer: a 200 with a message and no operations is the router saying "no routes found"
 * (any other body without operations, `{}` or a gateway's `{"error": …}`, is no route's answer: it
 * fails decoding); a route answering another question than `asked` is refused.
 */
const readRoute = (asked: R.RouteRequest, json: unknown): Effect.Effect<R.RouteResponse, RouterError> => {
  const o = json as Json
  if (typeof o === "object" && o !== null && !Array.isArray(o) && !("operations" in o))
    return Effect.fail(
      typeof o.message === "string"
        ? new NoRouteError({ message: o.message, status: 200 })
        : // (at the root: no route's answer at all, as a gateway's {} or {"error": …}; a round of them is an outage)
          new RouterDecodeError({
            endpoint: "route",
            path: "",
            message: "neither a route (no operations) nor a no-route answer (no message)",
            truncated: false
          })
    )
  const decoded = decodeAnswer("route", json)
  if (Either.isLeft(decoded)) return Effect.fail(decoded.left)
  const mismatch = answerMismatch(asked, decoded.right)
  return mismatch
    ? Effect.fail(new RouterDecodeError({ endpoint: "route", path: mismatch.path, message: mismatch.message, truncated: false }))
    : Effect.succeed(decoded.right)
}

/** The flow rule a msgs request for `routeResponse` with `options` breaks (rules 3 and 1), or undefined. */
const msgsRuleBroken = (routeResponse: R.RouteResponse, options: MsgsOptions): RouterFlowError | undefined => {
  // Rule 3: one address per required chain, in the route's order
  const missing = routeResponse.required_chain_addresses.filter((c) => !options.addresses[c])
  if (missing.length > 0)
    return new RouterFlowError({
      rule: "address_list",
      message: `the route needs an address on ${missing.join(", ")} (required_chain_addresses: ${routeResponse.required_chain_addresses.join(", ")})`
    })
  // Rule 1: a route with required_op_hook needs the signed hook first
  if (routeResponse.required_op_hook === true && !options.signedOpHook)
    return new RouterFlowError({
      rule: "op_hook",
      message: "the route has required_op_hook: fetch /op-hook, sign the hook, and pass signedOpHook"
    })
  return undefined
}

/** a tx's part to sign, whichever VM it is for */
const signedPart = (tx: R.MsgsTx) => tx.cosmos_tx ?? tx.evm_tx ?? tx.svm_tx

/** An IBC MsgTransfer's JSON, as far as it is checked: the coin it sends, in base units. */
const MsgTransferCoin = Schema.parseJson(
  Schema.Struct({ token: Schema.Struct({ denom: Schema.String, amount: Schema.String.pipe(Schema.pattern(/^\d+$/)) }) })
)

/** Why a first msg that is an IBC transfer does not send the route's coin and amount, or undefined. */
const transferMismatch = (msg: { readonly msg: string; readonly msg_type_url: string }, route: R.RouteResponse): string | undefined => {
  if (msg.msg_type_url !== "/ibc.applications.transfer.v1.MsgTransfer") return undefined
  const sent = Schema.decodeUnknownEither(MsgTransferCoin)(msg.msg)
  if (Either.isLeft(sent))
    return `its IBC transfer names no coin (token.denom and token.amount in base units), but the route sends ${route.amount_in} ${route.source_asset_denom}`
  const { denom, amount } = sent.right.token
  return denom === route.source_asset_denom && BigInt(amount) === BigInt(route.amount_in)
    ? undefined
    : `its IBC transfer sends ${amount} ${denom}, but the route ${route.amount_in} ${route.source_asset_denom}`
}

/**
 * Where msgs to sign contradict the route they were asked for and the addresses given: no tx, a
 * tx on a chain off the route or signed by another address than the one given for its chain, a
 * first tx elsewhere than the source chain or whose IBC transfer sends another coin or amount,
 * a minimum out above the route's amount out. They would be signed as printed.
 */
const msgsMismatch = (
  route: R.RouteResponse,
  options: MsgsOptions,
  answer: R.MsgsResponse
): { path: string; message: string } | undefined => {
  if (answer.txs.length === 0) return { path: "txs", message: "the router gave no tx to sign" }
  for (const [i, tx] of answer.txs.entries()) {
    const part = signedPart(tx)
    if (part === undefined) continue
    const at = `txs[${i}].${tx.cosmos_tx ? "cosmos_tx" : tx.evm_tx ? "evm_tx" : "svm_tx"}`
    if (!route.chain_ids.includes(part.chain_id))
      return { path: `${at}.chain_id`, message: `a tx on ${part.chain_id}, which the route (${route.chain_ids.join(" → ")}) does not pass` }
    if (i === 0 && part.chain_id !== route.source_asset_chain_id)
      return {
        path: `${at}.chain_id`,
        message: `the first tx is on ${part.chain_id}, but the route starts on ${route.source_asset_chain_id}`
      }
    const given = options.addresses[part.chain_id]
    if (given === undefined || !same(given, part.signer_address))
      return {
        path: `${at}.signer_address`,
        message: `signed by ${part.signer_address}, but the address given for ${part.chain_id} is ${given ?? "none"}`
      }
  }
  const first = answer.txs[0].cosmos_tx?.msgs[0]
  const transfer = first && transferMismatch(first, route)
  if (transfer) return { path: "txs[0].cosmos_tx.msgs[0].msg", message: transfer }
  if (answer.min_amount_out != null && BigInt(answer.min_amount_out) > BigInt(route.amount_out))
    return { path: "min_amount_out", message: `at least ${answer.min_amount_out} out, above the route's ${route.amount_out}` }
  return undefined
}

/** The body of a msgs request for `routeResponse`: its assets, amounts and operations, and an address per required chain. */
const msgsBody = (routeResponse: R.RouteResponse, options: MsgsOptions): Json => ({
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
})

/** The key of a tx in the set of txs tracked (hashes compared in lower case). */
const trackedKey = (txHash: string, chainId: string) => `${chainId}/${txHash.toLowerCase()}`

/**
 * Rule 2: registers `txHash` on `chainId` with the router once per client (`tracked` holds those
 * registered). A retried registration the router already took (its first answer was lost) is done.
 */
const trackOnce = (
  requests: RouterRequests,
  policy: RetryPolicy,
  retries: RetriesService | undefined,
  tracked: Set<string>,
  txHash: string,
  chainId: string
): Effect.Effect<typeof R.TrackResponse.Type, RouterError> =>
  Effect.gen(function* () {
    const key = trackedKey(txHash, chainId)
    if (tracked.has(key))
      return yield* new RouterFlowError({
        rule: "track_once",
        message: `${txHash} on ${chainId} is already tracked; poll its status instead`
      })
    let attempts = 0
    const attempt = Effect.suspend(() => {
      attempts++
      return requests.call("track", { json: { tx_hash: txHash, chain_id: chainId } }, false)
    })
    const result = yield* attempt.pipe(
      Effect.retry(retrySchedule<RouterError>(policy, retries?.retried)),
      Effect.catchIf(
        (e): e is RouterHttpError => e._tag === "RouterHttpError" && e.status === 409 && attempts > 1,
        () => Effect.succeed({ tx_hash: txHash, explorer_link: "" })
      )
    )
    tracked.add(key)
    return result
  })

export const makeRouterClient = (config: RouterClientConfig) =>
  Effect.gen(function* () {
    const policy = config.retry ?? DEFAULT_RETRY
    const baseUrl = config.baseUrl.replace(/\/+$/, "")
    const retries = Option.getOrUndefined(yield* Effect.serviceOption(Retries))
    const requests = routerRequests({ http: yield* HttpTransport, limiter: yield* RequestLimiter, policy, baseUrl, retries })
    const tracked = new Set<string>()

    const route = (request: R.RouteRequest): Effect.Effect<R.RouteResponse, RouterError> =>
      requests.json("route", { json: request }).pipe(Effect.flatMap((json) => readRoute(request, json)))

    const opHook = (request: typeof R.OpHookRequest.Type) => requests.call("op-hook", { json: request })

    const msgs = (routeResponse: R.RouteResponse, options: MsgsOptions): Effect.Effect<R.MsgsResponse, RouterError> =>
      Effect.suspend(() => {
        const broken = msgsRuleBroken(routeResponse, options)
        if (broken) return Effect.fail(broken)
        return Effect.flatMap(requests.call("msgs", { json: msgsBody(routeResponse, options) }), (answer) => {
          const mismatch = msgsMismatch(routeResponse, options, answer)
          return mismatch
            ? Effect.fail(new RouterDecodeError({ endpoint: "msgs", path: mismatch.path, message: mismatch.message, truncated: false }))
            : Effect.succeed(answer)
        })
      })

    const track = (txHash: string, chainId: string) => trackOnce(requests, policy, retries, tracked, txHash, chainId)

    /**
     * The one re-registration the Skip SDK makes (retry_track) when status keeps answering "tx not
     * found": a router that lost the first registration learns of the tx; one that has it answers
     * as it likes (an error here is not the transfer's, so it is ignored).
     */
    const retrack = (txHash: string, chainId: string) =>
      requests.call("track", { json: { tx_hash: txHash, chain_id: chainId } }, false).pipe(Effect.asVoid, Effect.ignore)

    const status = (txHash: string, chainId: string) => requests.call("status", { query: { tx_hash: txHash, chain_id: chainId } })

    /** Every asset the router knows, per chain (symbols and decimals). */
    const assets = requests.call("assets", { query: { include_evm_assets: "true", include_cw20_assets: "true" } })
    /** Every chain the router knows, EVM chains included. */
    const chains = requests.call("chains", { query: { include_evm: "true" } })

    /** Devnet only: turn a msgs tx into a trackable tx hash (a real router never broadcasts). */
    const devnetBroadcast = (chainId: string, tx: R.MsgsTx, outcome?: "success" | "error" | "abandoned" | "unknown") =>
      requests.call("devnet/broadcast", { json: { chain_id: chainId, tx, ...(outcome ? { outcome } : {}) } })

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
      markTracked: (txHash: string, chainId: string) => tracked.add(trackedKey(txHash, chainId))
    }
  })

export type RouterClientService = Effect.Effect.Success<ReturnType<typeof makeRouterClient>>

export class RouterClient extends Context.Tag("chain-lake/RouterClient")<RouterClient, RouterClientService>() {}

/** The client for `baseUrl`; needs an HttpTransport (layerHttpTransport) and a RequestLimiter. */
export const layerRouterClient = (config: RouterClientConfig) => Layer.effect(RouterClient, makeRouterClient(config))
