/** `chain-lake compact`: merges the small files of a lake made earlier (lake/compaction.ts), and deletes replaced files whose grace period is over. */
import { readSize } from "./sizes.js"
import { Command, Options } from "@effect/cli"
import { join, resolve } from "node:path"
import { Console, Duration, Effect, Option } from "effect"
import { isLake } from "../analytics/Analytics.js"
import { DATASETS } from "../datasets/index.js"
import { namesProblem } from "../engine/export.js"
import { compactLake, DEFAULT_COMPACTION, DEFAULT_GRACE_MS, type DatasetCompaction } from "../lake/compaction.js"
import { newWriterId } from "../lake/lock.js"
import { layerParquetSink } from "../lake/ParquetSink.js"
import { defaultMemoryLimit, layerLake, sinkMemory } from "../lake/writer.js"
import { compactS3 } from "../s3/compactS3.js"
import { parseEvery } from "../sampling/sampler.js"
import { isS3Url, parseS3Url } from "../s3/s3.js"
import { removeDir, writerTempFolder } from "../s3/sync.js"
import { commaListOption } from "./commaList.js"
import { UserError } from "./errors.js"
import { compactionLine } from "./progress.js"

export const compactCommand = Command.make(
  "compact",
  {
    data: Options.text("data").pipe(
      Options.withDefault("data"),
      Options.withDescription("the lake to compact: a folder, or s3://bucket/prefix")
    ),
    datasets: commaListOption("datasets").pipe(
      Options.optional,
      Options.withDescription("comma-separated datasets (default: every dataset the lake holds)")
    ),
    dryRun: Options.boolean("dry-run").pipe(Options.withDescription("say what would be merged; write and delete nothing")),
    targetSize: Options.text("target-size").pipe(
      Options.withDefault("128MB"),
      Options.withDescription("the size merged files aim at; files of half of it or more are left alone")
    ),
    grace: Options.text("grace").pipe(
      Options.withDefault(`${DEFAULT_GRACE_MS / 60_000}m`),
      Options.withDescription(
        "how long replaced files stay for readers that listed them before they are deleted (0s: at once, when nothing reads the lake)"
      )
    ),
    s3Endpoint: Options.text("s3-endpoint").pipe(
      Options.optional,
      Options.withDescription("S3-compatible endpoint URL for an s3:// lake (default: AWS)")
    ),
    memoryLimit: Options.text("memory-limit").pipe(
      Options.withDefault(defaultMemoryLimit()),
      Options.withDescription("the memory the merge may use (DuckDB spills the rest into the lake's scratch folder)")
    )
  },
  (o) =>
    Effect.gen(function* () {
      const bad = (message: string) => new UserError({ message, exitCode: 2 })
      // every dataset a lake holds is compacted, the sampled ones (route_quotes, transfers) too
      const names = Option.isSome(o.datasets) ? namesProblem(DATASETS, o.datasets.value) : undefined
      if (names) return yield* bad(names)
      const target = readSize("--target-size", o.targetSize, { atLeast: "1MB", examples: "64MB, 1GB" })
      if (typeof target === "string") return yield* bad(target)
      const memory = readSize("--memory-limit", o.memoryLimit, { atLeast: "128MB", examples: "512MB, 2GB" })
      if (typeof memory === "string") return yield* bad(memory)
      const grace = /^0+$/.test(o.grace.trim()) ? Duration.zero : parseEvery(o.grace)
      if (!grace) return yield* bad(`--grace must look like 0s, 30s, 15m or 1h, got "${o.grace}"`)
      const chosen = Option.match(o.datasets, { onNone: () => DATASETS, onSome: (names) => DATASETS.filter((d) => names.includes(d.name)) })
      const options = { policy: { ...DEFAULT_COMPACTION, targetBytes: target }, graceMs: Duration.toMillis(grace), dryRun: o.dryRun }
      const failed = (e: { readonly _tag: string; readonly message: string }) =>
        new UserError({ message: e._tag === "CompactionError" ? e.message : `compaction: ${e.message}` })
      let data = o.data
      let reports: ReadonlyArray<DatasetCompaction>
      if (isS3Url(o.data)) {
        yield* Effect.try({ try: () => parseS3Url(o.data), catch: (e) => bad((e as Error).message) })
        // merged in a scratch folder of this run's own, which goes with it (a killed run's, with the next)
        const scratch = yield* writerTempFolder("chain-lake-compact-", newWriterId())
        reports = yield* compactS3(o.data, chosen, { ...options, endpoint: Option.getOrUndefined(o.s3Endpoint) }).pipe(
          Effect.provide(layerParquetSink({ tempDirectory: join(scratch, "tmp"), ...sinkMemory(memory) })),
          Effect.ensuring(removeDir(scratch)),
          Effect.mapError(failed)
        )
      } else {
        data = resolve(o.data)
        if (!isLake(data))
          return yield* bad(`${data} holds no lake (no _lake.json, no <dataset>/_manifest.json): give --data the folder an export wrote`)
        reports = yield* compactLake(chosen, options).pipe(
          Effect.provide(layerLake(data, { memoryLimitBytes: memory })),
          Effect.mapError(failed)
        )
      }
      if (reports.length === 0)
        return yield* new UserError({ message: `${data} holds none of ${chosen.map((d) => d.name).join(", ")}: nothing to compact` })
      for (const r of reports) yield* Console.log(compactionLine(r, o.dryRun))
      const before = reports.reduce((s, r) => s + r.filesBefore, 0)
      const after = reports.reduce((s, r) => s + r.filesAfter, 0)
      yield* Console.log(o.dryRun ? `dry run: ${before} files would become ${after}; nothing was written` : `${before} files → ${after}`)
    })
).pipe(
  Command.withDescription(
    "Merge the lake's small files (from --follow and scheduled runs) into large ones, so queries stay fast; readers are never disturbed"
  )
)
