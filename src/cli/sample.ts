/** `chain-lake sample-routes`: route quotes from a plan, once or on a schedule, into route_quotes. */
import { Command, Options } from "@effect/cli"
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Console, Duration, Effect, Layer, Option } from "effect"
import { DEFAULTS } from "../defaults.js"
import { layerLake } from "../lake/writer.js"
import { describeRouterError } from "../router/errors.js"
import { loadPlan, METADATA_IF_SERVED, parseEvery, sampleRoutes, type MetadataWanted, type NotServed } from "../sampling/sampler.js"
import { UserError } from "./errors.js"
import { devnetOption, endpointOrDevnet, headerOption, sourceProblem, urlOption } from "./serviceUrls.js"
import { routerLayer } from "./layers.js"
import { requestsCounted, retriedClause, retriedTotal, retriesIn, retriesText } from "../http/Retries.js"
import { counted, stderrIsTerminal } from "./progress.js"
import { roundProgress } from "./roundProgress.js"
import { checkOutputFolder } from "./outputFolder.js"
import { commaListOption } from "./commaList.js"
import { integerOption } from "./integers.js"

export const DEFAULT_PLAN = fileURLToPath(new URL("../../pipelines/route-quotes.json", import.meta.url))

const SAMPLED = ["route_quotes", "router_assets", "router_chains"] as const

/**
 * --datasets as what the run wants of the metadata datasets: unset, both where served; given, the
 * named ones are required and the others not read (route_quotes is always sampled).
 */
const metadataWanted = (names: Option.Option<ReadonlyArray<string>>): MetadataWanted | string => {
  if (Option.isNone(names)) return METADATA_IF_SERVED
  const list = names.value
  const unknown = list.filter((n) => !(SAMPLED as ReadonlyArray<string>).includes(n))
  if (unknown.length > 0) return `--datasets takes ${SAMPLED.join(", ")}, got "${list.join(",")}"`
  const want = (d: string) => (list.includes(d) ? "required" : "skip")
  return { router_assets: want("router_assets"), router_chains: want("router_chains") }
}

/** The notice lines of metadata datasets skipped: one for those whose endpoints the router does not serve, one for each it failed to answer. */
const notServedNotices = (skipped: ReadonlyArray<NotServed>): Array<string> => {
  const unserved = skipped.filter((s) => s.failure === undefined)
  return [
    ...(unserved.length > 0
      ? [
          `notice: the router does not serve ${unserved.map((s) => `${s.endpoint} (${s.status})`).join(" nor ")}: ${unserved.map((s) => s.dataset).join(" and ")} skipped (not served); the route quotes are sampled`
        ]
      : []),
    ...skipped.flatMap((s) =>
      s.failure === undefined ? [] : [`notice: ${s.dataset} not read this run (${s.failure}); the route quotes are sampled`]
    )
  ]
}

export const sampleCommand = Command.make(
  "sample-routes",
  {
    routerUrl: urlOption("router"),
    devnet: devnetOption("router"),
    header: headerOption("router"),
    plan: Options.file("plan").pipe(
      Options.withDefault(DEFAULT_PLAN),
      Options.withDescription("sampling plan (default: the shipped pipelines/route-quotes.json)")
    ),
    out: Options.directory("out").pipe(Options.withDefault("data"), Options.withDescription("output folder")),
    every: Options.text("every").pipe(
      Options.optional,
      Options.withDescription("start a round this often: 30s, 5m, 1h (rounds start that far apart; default: once)")
    ),
    count: integerOption("count").pipe(
      Options.optional,
      Options.withDescription("rounds to run (default 1, or until stopped with --every)")
    ),
    concurrency: integerOption("concurrency").pipe(
      Options.withDefault(DEFAULTS.concurrency),
      Options.withDescription("quote requests in flight at once")
    ),
    rps: integerOption("rps").pipe(Options.withDefault(50), Options.withDescription("quote requests per second at most; 0 = no limit")),
    datasets: commaListOption("datasets").pipe(
      Options.optional,
      Options.withDescription(
        "route_quotes, router_assets, router_chains: a named metadata dataset the router does not serve fails the run, one not named is not read (default: route_quotes, and the metadata where the router serves it)"
      )
    )
  },
  (o) =>
    Effect.gen(function* () {
      const bad = (message: string) => new UserError({ message, exitCode: 2 })
      const every = Option.isSome(o.every) ? parseEvery(o.every.value) : undefined
      if (Option.isSome(o.every) && every === undefined)
        return yield* bad(`--every must look like 30s, 5m or 1h, got "${Option.getOrThrow(o.every)}"`)
      // rounds back to back (0s) asked a router its whole plan again and again, as fast as it answered
      if (every !== undefined && Duration.toMillis(every) === 0)
        return yield* bad(
          `--every must be more than 0 (each round asks the router for its whole plan), got "${Option.getOrThrow(o.every)}"`
        )
      const rounds = Option.getOrElse(o.count, () => (every ? Infinity : 1))
      if (rounds < 1) return yield* bad(`--count must be at least 1, got ${rounds}`)
      const metadata = metadataWanted(o.datasets)
      if (typeof metadata === "string") return yield* bad(metadata)
      const source = sourceProblem("router", o.routerUrl, o.devnet)
      if (source) return yield* bad(source)
      yield* checkOutputFolder("--out", o.out)
      const plan = yield* loadPlan(o.plan).pipe(Effect.mapError((e) => bad(e.message)))
      const router = yield* endpointOrDevnet("router", o.routerUrl, o.header, "sampling", o.devnet && { seed: 1, blocks: 10 })
      const amounts = plan.pairs.reduce((s, p) => s + p.amounts.length, 0)
      const asks = amounts * plan.variants.length
      yield* Console.error(
        `${counted(asks, "quote")} per round (${counted(amounts, "amount")} over ${counted(plan.pairs.length, "pair")} × ${counted(plan.variants.length, "variant")})${every ? `, every ${Option.getOrThrow(o.every)}` : ""}`
      )
      const retries = retriesIn()
      const progress = yield* Effect.acquireRelease(
        Effect.sync(() => roundProgress({ tty: stderrIsTerminal(), write: (text) => process.stderr.write(text), retries })),
        (p) => Effect.sync(() => p.stop())
      )
      const layer = Layer.mergeAll(
        routerLayer(router, { concurrency: o.concurrency, rps: o.rps }, undefined, retries),
        layerLake(resolve(o.out))
      )
      yield* sampleRoutes(plan, {
        rounds,
        every,
        concurrency: o.concurrency,
        metadata,
        watcher: progress.watcher,
        onRound: (r) => {
          const retried = progress.retriedInRound()
          progress.roundOver()
          for (const line of notServedNotices(r.reference?.notServed ?? [])) console.error(line)
          if (r.refused)
            console.error(
              `notice: round ${r.roundId}: the router refused ${r.refused.asks} of its asks for their credentials (${r.refused.why}): not stored`
            )
          console.log(
            `round ${r.roundId}: ${r.quotes} quotes, ${r.ok} routes, ${r.failed} failed${retriedClause(retried)} → ${r.files.map((f) => `${resolve(o.out)}/route_quotes/${f}`).join(", ")}`
          )
        },
        onSkipped: (e) => {
          progress.roundOver()
          console.error(`${new Date().toISOString()} round skipped: ${e.message}`)
        }
      }).pipe(
        // the round under way is not stored: what it asked again is said, as a round's line says it
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            const retried = progress.retriedInRound()
            progress.roundOver()
            if (retriedTotal(retried) > 0)
              process.stderr.write(`the round under way asked ${requestsCounted(retriedTotal(retried))} again (${retriesText(retried)})\n`)
          })
        ),
        Effect.provide(layer),
        Effect.mapError(
          (e) =>
            new UserError({
              message: "_tag" in e && e._tag.startsWith("Router") ? describeRouterError(e as never) : (e as { message: string }).message
            })
        )
      )
    }).pipe(
      Effect.scoped,
      Effect.onInterrupt(() =>
        Console.error("chain-lake: interrupted: every round committed so far is kept; the round under way is not stored")
      )
    )
).pipe(Command.withDescription("Sample route quotes from the router by a plan, once or every so often, into the route_quotes dataset"))
