/** `chain-lake run PIPELINE`: one run (--once, the default) or runs on the pipeline's schedule. */
import { Args, Command, Options } from "@effect/cli"
import { Console, Cron, Effect, Either, Option } from "effect"
import { relative } from "node:path"
import { loadPipeline } from "../pipelines/load.js"
import { describeCommitted } from "../pipelines/runReports.js"
import { pipelineEndpoints, runPipeline, schedulePipeline, type PipelineRunReport } from "../pipelines/run.js"
import { UserError } from "./errors.js"
import { headerOption } from "./serviceUrls.js"
import { INTERRUPTED, rollbackCutShort } from "./export.js"
import { stderrProgress } from "./progress.js"
import { LOG_FORMAT_DESCRIPTION } from "./output.js"
import { integerOption } from "./integers.js"
import { retriedClause } from "../http/Retries.js"

/** A run stopped before its end (Ctrl-C): what it committed, where its report is, and a rollback it cut short. */
const saidStopped = (report: PipelineRunReport, path: string | undefined) => {
  const where = path ? `report in ${relative(report.out, path)}` : "its report could not be written"
  process.stderr.write(
    `committed by this run before it was stopped: ${describeCommitted(report.committed ?? [], report.merged)} (${where})\n`
  )
  const cut = rollbackCutShort(report.out)
  if (cut) process.stderr.write(cut + "\n")
}

const line = (r: PipelineRunReport) =>
  r.ok
    ? `${r.finishedAt} ${r.pipeline}: ok — ${[
        ...(r.export?.datasets ?? []).map((d) => `${d.dataset} +${d.rows}`),
        ...(r.routeRound
          ? [
              `route_quotes +${r.routeRound.quotes}${r.routeRound.refused ? ` (${r.routeRound.refused.asks} asks refused for their credentials, not stored: ${r.routeRound.refused.why})` : ""}`
            ]
          : [])
      ].join(", ")}${
        (r.compacted ?? []).some((c) => c.merged.length > 0)
          ? `; compacted ${(r.compacted ?? [])
              .filter((c) => c.merged.length > 0)
              .map((c) => `${c.dataset} ${c.filesBefore}→${c.filesAfter} files`)
              .join(", ")}`
          : ""
      }${retriedClause(r.retried ?? {})} → ${r.out}`
    : `${r.finishedAt} ${r.pipeline}: FAILED — ${r.error}${retriedClause(r.retried ?? {})}`

export const runCommand = Command.make(
  "run",
  {
    pipeline: Args.text({ name: "PIPELINE" }).pipe(
      Args.withDescription("a name in pipelines/ (demo, daily-snapshot, route-quotes, full-history) or a file")
    ),
    once: Options.boolean("once").pipe(Options.withDescription("run once (the default)")),
    logFormat: Options.choice("log-format", ["text", "json"]).pipe(
      Options.withDefault("text" as const),
      Options.withDescription(LOG_FORMAT_DESCRIPTION)
    ),
    schedule: Options.boolean("schedule").pipe(
      Options.withDescription("run at each tick of the pipeline's cron until stopped (the first at the next tick, not now)")
    ),
    maxRuns: integerOption("max-runs").pipe(Options.optional, Options.withDescription("with --schedule: stop after this many runs")),
    indexerUrl: Options.text("indexer-url").pipe(
      Options.optional,
      Options.withDescription("indexer API base URL (default: the pipeline's sources)")
    ),
    routerUrl: Options.text("router-url").pipe(
      Options.optional,
      Options.withDescription("router API base URL (default: the pipeline's sources)")
    ),
    indexerHeader: headerOption("indexer", "indexer-header"),
    routerHeader: headerOption("router", "router-header"),
    devnet: Options.boolean("devnet").pipe(Options.withDescription("run on the embedded devnet's simulated chain where no URL is given")),
    out: Options.directory("out").pipe(Options.optional, Options.withDescription("output folder (default: the pipeline's)"))
  },
  (o) =>
    Effect.gen(function* () {
      if (o.once && o.schedule) return yield* new UserError({ message: "--once and --schedule exclude each other", exitCode: 2 })
      if (!o.schedule && Option.isSome(o.maxRuns))
        return yield* new UserError({ message: "--max-runs applies with --schedule only", exitCode: 2 })
      if (Option.isSome(o.maxRuns) && o.maxRuns.value < 1)
        return yield* new UserError({ message: `--max-runs must be 1 or more, got ${o.maxRuns.value}`, exitCode: 2 })
      // an empty --out (an unset shell variable) wrote into the working directory
      if (Option.isSome(o.out) && o.out.value.trim() === "")
        return yield* new UserError({ message: "--out is empty: give a folder (it is made if missing)", exitCode: 2 })
      const def = yield* loadPipeline(o.pipeline).pipe(Effect.mapError((e) => new UserError({ message: e.message, exitCode: 2 })))
      // a missing URL is a usage error, found before any lock or devnet
      const options = {
        indexerUrl: Option.getOrUndefined(o.indexerUrl),
        routerUrl: Option.getOrUndefined(o.routerUrl),
        indexerHeaders: o.indexerHeader,
        routerHeaders: o.routerHeader,
        out: Option.getOrUndefined(o.out),
        devnet: o.devnet
      }
      const urls = pipelineEndpoints(def, options)
      if (Either.isLeft(urls)) return yield* new UserError({ message: urls.left.message, exitCode: 2 })
      if (o.schedule) {
        yield* Console.error(
          `${def.name}: running on "${def.schedule}" until stopped${Option.isSome(o.maxRuns) ? ` (at most ${o.maxRuns.value} runs)` : ""}; the first at ${Cron.next(Cron.unsafeParse(def.schedule)).toISOString()}`
        )
        const { runs, failed } = yield* schedulePipeline(def, {
          ...options,
          maxRuns: Option.getOrUndefined(o.maxRuns),
          stopped: saidStopped,
          onRun: (r) => console.log(line(r))
        })
        if (failed > 0)
          return yield* new UserError({
            message: `${failed} of ${runs} runs of ${def.name} failed (see the lines above, and the reports in _runs/)`
          })
        return
      }
      // the export's plan and progress, as `export` shows them (a long run was silent until its last line)
      const progress = stderrProgress({ names: def.datasets })
      // (what a stopped run says comes after the progress has stopped: its last redraw would hide it)
      let stopped: Parameters<typeof saidStopped> | undefined
      const report = yield* runPipeline(def, { ...options, observer: progress.observer, stopped: (...said) => (stopped = said) }).pipe(
        Effect.ensuring(Effect.sync(() => progress.stop())),
        Effect.onInterrupt(() => Effect.sync(() => stopped && saidStopped(...stopped))),
        Effect.mapError((e) => new UserError({ message: e.message }))
      )
      yield* Console.log(line(report))
      if (!report.ok) return yield* new UserError({ message: `pipeline ${def.name} failed: ${report.error}` })
    }).pipe(Effect.onInterrupt(() => Console.error(INTERRUPTED)))
).pipe(Command.withDescription("Run a declared pipeline once, or on its schedule (one run at a time per output folder)"))
