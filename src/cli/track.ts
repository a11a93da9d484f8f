/** `chain-lake track`: register a tx once and poll it to a final state, recording each change. */
import { Command, Options } from "@effect/cli"
import { resolve } from "node:path"
import { Console, Duration, Effect, Layer, Option } from "effect"
import { layerLake } from "../lake/writer.js"
import { describeRouterError, type RouterError } from "../router/errors.js"
import { parseEvery } from "../sampling/sampler.js"
import { transferEventsOf } from "../router/schemas.js"
import { NOT_FOUND_FOR_MS, trackTransfer, WALLET_POLLING } from "../sampling/tracker.js"
import { UserError } from "./errors.js"
import { headerOption, probedEndpoint, urlFromEnvironment, urlOption } from "./serviceUrls.js"
import { routerLayer } from "./layers.js"
import { checkOutputFolder } from "./outputFolder.js"
import { integerOption } from "./integers.js"
import { retriesIn } from "../http/Retries.js"
import { sayRetriedAtEnd } from "./retried.js"

const duration = (flag: string, value: Option.Option<string>, fallback: Duration.Duration) =>
  Effect.gen(function* () {
    if (Option.isNone(value)) return fallback
    const d = parseEvery(value.value)
    if (!d) return yield* new UserError({ message: `${flag} must look like 500ms, 5s, 1m, got "${value.value}"`, exitCode: 2 })
    return d
  })

/**
 * A tx hash as chains spell one: 64 hex digits (a cosmos tx's, upper case; an EVM tx's with 0x) or
 * a Solana signature (base58, 64 to 88 characters). Anything else is no tx the router can know: it
 * would answer "tx not found" until --not-found-for ran out.
 */
const TX_HASH = /^(?:(?:0x)?[0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{64,88})$/

export const trackCommand = Command.make(
  "track",
  {
    routerUrl: urlOption("router"),
    header: headerOption("router"),
    txHash: Options.text("tx-hash").pipe(Options.withDescription("the broadcast tx")),
    chainId: Options.text("chain-id").pipe(Options.withDescription("the chain it was submitted to")),
    out: Options.directory("out").pipe(Options.withDefault("data"), Options.withDescription("output folder (transfers dataset)")),
    estimatedSeconds: integerOption("estimated-seconds").pipe(
      Options.optional,
      Options.withDescription("the route's estimated_route_duration_seconds, for the polling pace")
    ),
    pollSlow: Options.text("poll-slow").pipe(Options.optional, Options.withDescription("pace while the ETA is far (default 60s)")),
    pollNear: Options.text("poll-near").pipe(Options.optional, Options.withDescription("pace near the ETA, or without one (default 5s)")),
    pollOverdue: Options.text("poll-overdue").pipe(Options.optional, Options.withDescription("pace once overdue (default 1s)")),
    nearWindow: Options.text("near-window").pipe(
      Options.optional,
      Options.withDescription("how close to the ETA counts as near (default 5m)")
    ),
    notFoundFor: Options.text("not-found-for").pipe(
      Options.optional,
      Options.withDescription(
        'how long status may answer "tx not found" (the router indexes a registered tx within seconds) before tracking gives up (default 2m)'
      )
    ),
    timeout: Options.text("timeout").pipe(
      Options.optional,
      Options.withDescription(
        "how long this run polls before giving up, exit 1, the changes seen kept (default: the estimate plus 30m, or 30m without one)"
      )
    )
  },
  (o) =>
    Effect.gen(function* () {
      // (a hash pasted with its line end)
      const txHash = o.txHash.trim()
      if (!TX_HASH.test(txHash))
        return yield* new UserError({
          message: `--tx-hash must be a tx's hash (64 hex digits, 0x first on an EVM chain, or a Solana signature), got "${o.txHash}"`,
          exitCode: 2
        })
      yield* checkOutputFolder("--out", o.out)
      // (no --devnet: a devnet started here knows no tx broadcast before it)
      const raw = Option.getOrUndefined(o.routerUrl) ?? urlFromEnvironment("router")
      if (raw === undefined)
        return yield* new UserError({ message: "no --router-url: give the router's URL (or set CHAIN_LAKE_ROUTER_URL)", exitCode: 2 })
      const routerUrl = yield* probedEndpoint("router", raw, o.header)
      const schedule = {
        slow: yield* duration("--poll-slow", o.pollSlow, WALLET_POLLING.slow),
        near: yield* duration("--poll-near", o.pollNear, WALLET_POLLING.near),
        overdue: yield* duration("--poll-overdue", o.pollOverdue, WALLET_POLLING.overdue),
        nearWindow: yield* duration("--near-window", o.nearWindow, WALLET_POLLING.nearWindow)
      }
      const notFoundFor = yield* duration("--not-found-for", o.notFoundFor, Duration.millis(NOT_FOUND_FOR_MS))
      // a router that fails now and then slows the polls: said at the end, whatever the end
      const retries = retriesIn()
      yield* sayRetriedAtEnd(retries)
      const timeout = Option.isSome(o.timeout) ? Duration.toMillis(yield* duration("--timeout", o.timeout, Duration.zero)) : undefined
      if (timeout === 0)
        return yield* new UserError({ message: `--timeout must be more than 0, got "${Option.getOrThrow(o.timeout)}"`, exitCode: 2 })
      const result = yield* trackTransfer({
        txHash,
        chainId: o.chainId,
        estimatedSeconds: Option.getOrUndefined(o.estimatedSeconds),
        schedule,
        notFoundForMs: Duration.toMillis(notFoundFor),
        timeoutMs: timeout,
        onChange: (s, elapsed, resumed) => {
          const legs = (transferEventsOf(s) ?? []).map((e) => {
            const kind = Object.keys(e)[0]
            return `${kind} ${(e[kind] as { state?: string })?.state ?? "?"}`
          })
          console.log(`[${elapsed.toFixed(1)} s${resumed ? ", resumed" : ""}] ${s.state}${legs.length ? ` (${legs.join(", ")})` : ""}`)
        }
      }).pipe(
        Effect.provide(Layer.mergeAll(routerLayer(routerUrl, undefined, undefined, retries), layerLake(resolve(o.out)))),
        Effect.mapError(
          (e) =>
            new UserError({
              message:
                ("_tag" in e && String(e._tag).startsWith("Router")) || e._tag === "NoRouteError"
                  ? describeRouterError(e as RouterError)
                  : (e as { message: string }).message
            })
        )
      )
      if (result.status.state !== "STATE_COMPLETED_SUCCESS")
        return yield* new UserError({
          message: `the transfer ended in ${result.status.state}${result.status.state === "STATE_UNKNOWN" ? " (the router lost track of it: an error, as its docs say)" : ""}${result.status.error ? `: ${result.status.error.message}` : ""}`
        })
      yield* Console.log(`completed; state changes recorded in ${resolve(o.out)}/transfers/`)
    }).pipe(
      Effect.scoped,
      Effect.onInterrupt(() =>
        Console.error(
          "chain-lake: interrupted: the state changes seen so far are kept; run the same command again to go on tracking (the tx is not registered twice)"
        )
      )
    )
).pipe(Command.withDescription("Register a tx with the router once and poll it to completion, recording each state change"))
