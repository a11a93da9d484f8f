/**
 * `chain-lake bridge`: route → op-hook (when the route requires it) → msgs, printed as JSON ready
 * to sign. It never signs and never broadcasts.
 */
import { Command, Options } from "@effect/cli"
import { readFile } from "node:fs/promises"
import { Console, Effect, Either, Option } from "effect"
import { describeRouterError, type RouterError } from "../router/errors.js"
import { RouterClient } from "../router/RouterClient.js"
import { operationKind, SignedOpHook } from "../router/schemas.js"
import { decodeWithPath } from "../schema/decode.js"
import { UserError } from "./errors.js"
import { devnetOption, endpointOrDevnet, headerOption, sourceProblem, urlOption } from "./serviceUrls.js"
import { routerLayer } from "./layers.js"
import { retriesIn } from "../http/Retries.js"
import { sayRetriedAtEnd } from "./retried.js"

const asset = (flag: string, text: string) => {
  const i = text.indexOf(":")
  if (i < 1 || i === text.length - 1) throw new Error(`${flag} must look like CHAIN:DENOM (e.g. noble-1:uusdc), got "${text}"`)
  return { chain_id: text.slice(0, i), denom: text.slice(i + 1) }
}

const options = {
  routerUrl: urlOption("router"),
  devnet: devnetOption("router"),
  header: headerOption("router"),
  from: Options.text("from").pipe(Options.withDescription("source asset, CHAIN:DENOM")),
  to: Options.text("to").pipe(Options.withDescription("destination asset, CHAIN:DENOM")),
  amount: Options.text("amount").pipe(Options.withDescription("amount in base units")),
  address: Options.text("address").pipe(
    Options.repeated,
    Options.withDescription("CHAIN=ADDRESS for each chain the route needs (repeatable)")
  ),
  slippage: Options.text("slippage").pipe(Options.withDefault("1"), Options.withDescription("slippage tolerance in percent")),
  signedOpHook: Options.file("signed-op-hook").pipe(
    Options.optional,
    Options.withDescription("JSON {signer, hook} of the signed /op-hook payload, when the route requires one")
  ),
  goFast: Options.boolean("go-fast").pipe(Options.withDescription("ask for Go Fast routes")),
  opWithdraw: Options.boolean("op-withdraw").pipe(Options.withDescription("force an OPinit (optimistic) withdrawal route"))
}

/** The flags as parsed. */
type BridgeFlags = Command.Command.ParseConfig<typeof options>

const bad = (message: string) => new UserError({ message, exitCode: 2 })

/** Each --address CHAIN=ADDRESS, by chain: one address a chain (a second would silently replace the first). */
const addressesOf = (given: ReadonlyArray<string>): Record<string, string> => {
  const addresses: Record<string, string> = {}
  for (const a of given) {
    const i = a.indexOf("=")
    if (i < 1) throw new Error(`--address must look like CHAIN=ADDRESS, got "${a}"`)
    const chain = a.slice(0, i)
    if (Object.hasOwn(addresses, chain)) throw new Error(`--address names chain ${chain} twice: give one address for each chain`)
    addresses[chain] = a.slice(i + 1)
  }
  return addresses
}

/** The assets and addresses the flags name, the amount and slippage checked. */
const parseFlags = (o: BridgeFlags) =>
  Effect.gen(function* () {
    const parsed = yield* Effect.try({
      try: () => ({
        from: asset("--from", o.from),
        to: asset("--to", o.to),
        addresses: addressesOf(o.address)
      }),
      catch: (e) => bad((e as Error).message)
    })
    if (!/^[0-9]+$/.test(o.amount) || BigInt(o.amount) === 0n)
      return yield* bad(`--amount must be a positive integer in base units, got "${o.amount}"`)
    if (!/^\d+(\.\d+)?$/.test(o.slippage)) return yield* bad(`--slippage must be a percentage like 1 or 0.5, got "${o.slippage}"`)
    return parsed
  })
type Parsed = Effect.Effect.Success<ReturnType<typeof parseFlags>>

/** The signed op-hook of --signed-op-hook FILE, if given. */
const readSignedOpHook = (file: Option.Option<string>) =>
  Effect.gen(function* () {
    if (Option.isNone(file)) return undefined
    const text = yield* Effect.tryPromise({
      try: () => readFile(file.value, "utf8"),
      catch: (e) => bad(`cannot read --signed-op-hook: ${(e as Error).message}`)
    })
    const decoded = decodeWithPath(
      SignedOpHook,
      yield* Effect.try({ try: () => JSON.parse(text), catch: () => bad("--signed-op-hook is not JSON") })
    )
    if (Either.isLeft(decoded))
      return yield* bad(`--signed-op-hook must be {"signer": …, "hook": …}: ${decoded.left.path} ${decoded.left.message}`)
    return decoded.right
  })

/** The route, then its msgs printed as JSON; a route that needs an op-hook not yet signed prints the hook to sign and fails. */
const routeAndMsgs = (o: BridgeFlags, parsed: Parsed, signed: typeof SignedOpHook.Type | undefined) =>
  Effect.gen(function* () {
    const router = yield* RouterClient
    const route = yield* router.route({
      amount_in: o.amount,
      source_asset_chain_id: parsed.from.chain_id,
      source_asset_denom: parsed.from.denom,
      dest_asset_chain_id: parsed.to.chain_id,
      dest_asset_denom: parsed.to.denom,
      ...(o.goFast ? { go_fast: true } : {}),
      ...(o.opWithdraw ? { is_op_withdraw: true } : {})
    })
    if (route.required_op_hook === true && !signed) {
      const hook = yield* router.opHook({
        source_address: parsed.addresses[route.source_asset_chain_id] ?? "",
        source_asset_chain_id: route.source_asset_chain_id,
        source_asset_denom: route.source_asset_denom,
        dest_address: parsed.addresses[route.dest_asset_chain_id] ?? "",
        dest_asset_chain_id: route.dest_asset_chain_id,
        dest_asset_denom: route.dest_asset_denom
      })
      yield* Console.log(JSON.stringify({ op_hook: hook }, null, 1))
      return yield* new UserError({
        message: `this route needs a signed op-hook: sign the hook printed above on ${hook.chain_id} and pass it as --signed-op-hook FILE ({"signer", "hook"})`
      })
    }
    const msgs = yield* router.msgs(route, { addresses: parsed.addresses, slippageTolerancePercent: o.slippage, signedOpHook: signed })
    yield* Console.log(
      JSON.stringify(
        {
          route: {
            amount_in: route.amount_in,
            amount_out: route.amount_out,
            chain_ids: route.chain_ids,
            operation_kinds: route.operations.map(operationKind),
            estimated_route_duration_seconds: route.estimated_route_duration_seconds,
            warning: route.warning ?? null,
            extra_warnings: route.extra_warnings ?? []
          },
          txs: msgs.txs,
          min_amount_out: msgs.min_amount_out ?? null
        },
        null,
        1
      )
    )
  })

/** A router's failure as the CLI says it: the library names the chains; the CLI names its flag too. */
const routerFailure = (o: BridgeFlags) => (e: RouterError) =>
  new UserError({
    message:
      e._tag === "NoRouteError"
        ? // "no routes found" alone did not say for what
          `${describeRouterError(e)} from ${o.from} to ${o.to} for ${o.amount}: try another amount or pair (chain-lake query "FROM router_assets" lists the router's assets once sample-routes has read them from a router that serves them)`
        : `${describeRouterError(e)}${e._tag === "RouterFlowError" && e.rule === "address_list" ? ": give each with --address CHAIN=ADDR" : ""}`
  })

export const bridgeCommand = Command.make("bridge", options, (o) =>
  Effect.gen(function* () {
    const parsed = yield* parseFlags(o)
    // msgs of a simulated router are nothing to sign: the devnet's are asked for by name
    const source = sourceProblem("router", o.routerUrl, o.devnet)
    if (source) return yield* bad(source)
    const signed = yield* readSignedOpHook(o.signedOpHook)
    const routerUrl = yield* endpointOrDevnet("router", o.routerUrl, o.header, "using", o.devnet && { seed: 1, blocks: 10 })
    const retries = retriesIn()
    yield* sayRetriedAtEnd(retries)
    yield* routeAndMsgs(o, parsed, signed).pipe(
      Effect.provide(routerLayer(routerUrl, undefined, undefined, retries)),
      Effect.catchIf(
        (e): e is RouterError => "_tag" in e && e._tag !== "UserError",
        (e) => Effect.fail(routerFailure(o)(e))
      )
    )
  }).pipe(Effect.scoped)
).pipe(Command.withDescription("Route, op-hook when required, then the signable msgs as JSON (never signs or broadcasts)"))
