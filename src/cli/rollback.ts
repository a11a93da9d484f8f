/**
 * `chain-lake rollback`: cuts a lake back to a height (engine/rollback.ts), after the chain or its
 * indexer was rolled back, or to re-export a stretch of history. Local lakes only.
 */
import { Command, Options } from "@effect/cli"
import { resolve } from "node:path"
import { Console, Effect } from "effect"
import { isLake } from "../analytics/Analytics.js"
import { DATASETS } from "../datasets/index.js"
import { belowCut, describeRollback, fromHeight, lakeHoldings, plannedRollback, rollbackLake, snapshotsWord } from "../engine/rollback.js"
import { lowestHeight } from "../lake/manifest.js"
import { layerLake } from "../lake/writer.js"
import { isS3Url } from "../s3/s3.js"
import { UserError } from "./errors.js"
import { rollbackCutShort } from "./export.js"
import { integerOption } from "./integers.js"
import { noLake } from "./query.js"

/** What a dry run says: what each dataset would lose (and what of it is at or below the height). */
const dryRun = (toHeight: number) =>
  Effect.map(plannedRollback(DATASETS, toHeight), (planned) => {
    const below = belowCut(planned, toHeight)
    return [
      ...planned.map(
        (p) =>
          `${p.dataset}: would drop ${p.rowsDropped} rows${fromHeight(p)}${p.snapshotsDropped > 0 ? `, ${snapshotsWord(p.snapshotsDropped)}` : ""} (${p.filesDropped} files dropped whole, ${p.filesRewritten} rewritten)`
      ),
      ...(below ? [below] : [])
    ]
  })

/** The lowest height of a row the lake holds (Infinity for none). */
const lowestHeld = Effect.map(lakeHoldings(DATASETS, []), ({ manifests }) => Math.min(Infinity, ...manifests.map(lowestHeight)))

export const rollbackCommand = Command.make(
  "rollback",
  {
    data: Options.text("data").pipe(Options.withDefault("data"), Options.withDescription("the lake to roll back (a folder)")),
    toHeight: integerOption("to-height").pipe(
      Options.withDescription(
        "the last height to keep: every row of the chain above it is dropped (a tx-family file holding heights on both sides of it goes whole: those rows are read again by the next export)"
      )
    ),
    dryRun: Options.boolean("dry-run").pipe(Options.withDescription("say what would be dropped; change nothing"))
  },
  (o) =>
    Effect.gen(function* () {
      const bad = (message: string) => new UserError({ message, exitCode: 2 })
      // (a cut below the first block would leave a lake with no anchor, which every export refuses: that is a new folder)
      if (o.toHeight < 1)
        return yield* bad(`--to-height must be at least 1 (heights start at 1), got ${o.toHeight}: to start over, export into a new folder`)
      if (isS3Url(o.data))
        return yield* bad("rollback works on a local lake: sync the S3 lake to a folder, roll it back there, and publish it")
      const data = resolve(o.data)
      if (!isLake(data)) return yield* bad(noLake(data))
      const failed = (e: { readonly message: string }) => new UserError({ message: `rollback: ${e.message}` })
      const layer = layerLake(data)
      // below every row the lake holds, a cut empties it (and keeps no anchor, which every export refuses): that is a new folder
      const lowest = yield* lowestHeld.pipe(Effect.provide(layer), Effect.mapError(failed))
      if (Number.isFinite(lowest) && o.toHeight < lowest)
        return yield* bad(
          `${data} holds rows from height ${lowest} on: --to-height ${o.toHeight} would drop every one of them: to start over, export into a new folder`
        )
      if (o.dryRun) {
        const lines = yield* dryRun(o.toHeight).pipe(Effect.provide(layer), Effect.mapError(failed))
        for (const line of lines) yield* Console.log(line)
        return yield* Console.log(
          lines.length > 0 ? "dry run: nothing was changed" : `dry run: ${data} holds nothing above height ${o.toHeight}`
        )
      }
      const report = yield* rollbackLake(DATASETS, o.toHeight, { by: "command", notice: (m) => console.error(`chain-lake: ${m}`) }).pipe(
        Effect.provide(layer),
        Effect.mapError(failed),
        // stopped (Ctrl-C): what it dropped so far, and how to finish; the datasets it cut stay unread until then
        Effect.onInterrupt(() =>
          Console.error(rollbackCutShort(data) ?? "chain-lake: rollback stopped; the lake holds no unfinished rollback")
        )
      )
      yield* Console.log(describeRollback(data, report))
      if (!report.unchanged)
        yield* Console.log(
          `the next export reads the chain from there; the dropped files wait in ${data}/.chain-lake/retired until a compaction deletes them`
        )
    })
).pipe(
  Command.withDescription(
    "Drop the lake's rows above a height (after the chain or its indexer was rolled back), in one commit per dataset, logged in _lake.json; the next export reads from there"
  )
)
