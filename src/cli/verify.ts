/** `chain-lake verify`: reconcile the lake with itself and, given --indexer-url, with the API. */
import { Command, Options } from "@effect/cli"
import { resolve } from "node:path"
import { Console, Effect, Layer, Option } from "effect"
import { layerAnalytics } from "../analytics/Analytics.js"
import { layerManifests, Manifests } from "../lake/Manifests.js"
import { describeIndexerError, type IndexerError } from "../indexer/errors.js"
import { verifyAgainstApi, verifyLakeAt, type Check } from "../verify/verify.js"
import { UserError } from "./errors.js"
import { headerOption, probedEndpoint } from "./serviceUrls.js"
import { indexerLayer } from "./layers.js"
import { requireLake } from "./query.js"

export const verifyCommand = Command.make(
  "verify",
  {
    data: Options.directory("data").pipe(Options.withDefault("data"), Options.withDescription("the lake to check")),
    indexerUrl: Options.text("indexer-url").pipe(
      Options.optional,
      Options.withDescription("also spot-check the lake against this indexer")
    ),
    header: headerOption("indexer")
  },
  (o) =>
    Effect.gen(function* () {
      yield* requireLake(o.data)
      const data = resolve(o.data)
      // the committed files (the views), and every Parquet file on disk against the manifests
      const checks: Array<Check> = [...(yield* verifyLakeAt(data).pipe(Effect.mapError((e) => new UserError({ message: e.message }))))]
      if (Option.isSome(o.indexerUrl)) {
        const url = yield* probedEndpoint("indexer", o.indexerUrl.value, o.header)
        const identity = yield* Effect.flatMap(Manifests, (m) => m.identity).pipe(
          Effect.provide(layerManifests(data)),
          Effect.mapError((e) => new UserError({ message: e.message }))
        )
        const api = yield* verifyAgainstApi(10, identity).pipe(
          Effect.provide(Layer.mergeAll(layerAnalytics({ dataDir: data }), indexerLayer(url))),
          Effect.mapError(
            (e) =>
              new UserError({
                message:
                  "_tag" in e && String(e._tag).startsWith("Indexer")
                    ? describeIndexerError(e as IndexerError)
                    : (e as { message: string }).message
              })
          )
        )
        checks.push(...api)
      }
      if (checks.length === 0) return yield* new UserError({ message: `nothing to verify in ${data}: export first` })
      for (const c of checks) yield* Console.log(`${c.ok ? "ok  " : "FAIL"}  ${c.name}: ${c.detail}`)
      const failed = checks.filter((c) => !c.ok).length
      if (failed > 0) return yield* new UserError({ message: `${failed} of ${checks.length} checks failed` })
      yield* Console.log(`all ${checks.length} checks passed`)
    })
).pipe(
  Command.withDescription(
    "Check the lake: every committed height once, no duplicates, txs per block and logs per receipt where both are held, manifests vs files, and spot checks against the API"
  )
)
