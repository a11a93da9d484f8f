/**
 * Running a pipeline: one run at a time per output folder (a lock file, recovered when its
 * process is gone), export then route sampling, snapshot retention and compaction of the small
 * files runs leave, and a run report in OUT/_runs/ whether the run succeeded or failed. `schedulePipeline` repeats runs on the definition's cron; a failed run is
 * reported and the next tick tries again.
 */
import { rm } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Cron, Data, Effect, Either, Schedule } from "effect"
import { DATASETS, EXPORTED_DATASETS } from "../datasets/index.js"
import { Manifests } from "../lake/Manifests.js"
import { compactLake } from "../lake/compaction.js"
import { pipelineLockFile } from "../lake/layout.js"
import { runExport, type ExportObserver } from "../engine/export.js"
import { loadPlan, sampleRound } from "../sampling/sampler.js"
import type { PipelineDefinition } from "./definePipeline.js"
import { pipelineLayer } from "./layers.js"
import { retriedTotal, retriesIn } from "../http/Retries.js"
import { PIPELINES_DIR } from "./load.js"
import { commitTally, pipelineReportFile, writePipelineReport, type PipelineRunReport } from "./runReports.js"
import { alive, createLockFile, EMPTY_GRACE_MS, readLockFile } from "../lake/lock.js"
import { plainServiceUrl, serviceUrlFrom, type ServiceUrl } from "../http/serviceUrl.js"
import { makeFolder } from "../lake/files.js"

export class LockedError extends Data.TaggedError("LockedError")<{ readonly message: string }> {}
export class RunError extends Data.TaggedError("RunError")<{ readonly message: string }> {}

/** The run lock's holder; an empty or damaged lock is nobody's, unless it is seconds old (its writer may be writing it now). */
const readHolder = async (path: string): Promise<{ pid?: number; pipeline?: unknown; started?: unknown } | "being written"> => {
  const found = await readLockFile(path)
  const j = found?.json
  if (j && typeof j.pid === "number") return { pid: j.pid, pipeline: j.pipeline, started: j.started }
  return found && found.ageMs < EMPTY_GRACE_MS ? "being written" : {}
}

/** Takes OUT's lock (or fails naming its holder); a lock whose process is gone is taken over. */
export const acquireLock = (out: string, pipeline: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await makeFolder(out)
        const path = join(out, pipelineLockFile())
        for (let attempt = 0; attempt < 2; attempt++) {
          try {
            await createLockFile(path, JSON.stringify({ pid: process.pid, pipeline, started: new Date().toISOString() }))
            return path
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
            const holder = await readHolder(path)
            if (holder === "being written")
              throw new LockedError({
                message: `${out} is being locked by another run right now; runs never overlap: wait for it or stop it`
              })
            // a holder with this very pid is a process before us (a container restarted as pid 1): stale
            if (holder.pid && holder.pid !== process.pid && alive(holder.pid))
              throw new LockedError({
                message: `${out} is being written by pipeline ${holder.pipeline ?? "?"} (pid ${holder.pid}, since ${holder.started}); runs never overlap: wait for it or stop it`
              })
            await rm(path, { force: true }) // stale: its process is gone, or the file was left empty or damaged
          }
        }
        throw new LockedError({ message: `could not take the lock ${path}` })
      },
      catch: (e) =>
        e instanceof LockedError
          ? e
          : new RunError({ message: `cannot take the run lock ${join(out, pipelineLockFile())}: ${(e as Error).message}` })
    }),
    (path) => Effect.promise(() => rm(path, { force: true }))
  )

export interface RunOptions {
  readonly indexerUrl?: string
  readonly routerUrl?: string
  /** "Name: value" headers for each service, after those of CHAIN_LAKE_INDEXER_HEADERS / CHAIN_LAKE_ROUTER_HEADERS */
  readonly indexerHeaders?: ReadonlyArray<string>
  readonly routerHeaders?: ReadonlyArray<string>
  readonly out?: string
  /** run on the embedded devnet where no URL is given (a pipeline declaring sources: "devnet" does so by itself) */
  readonly devnet?: boolean
  /** the export's plan, rows and commits as they happen (the CLI's progress) */
  readonly observer?: ExportObserver
  /** told of a run stopped before its end (Ctrl-C): its report, and where it was written (undefined: it could not be) */
  readonly stopped?: (report: PipelineRunReport, path: string | undefined) => void
}

/** Stands for a service the pipeline never calls (no datasets, or no route plan); a request to it fails at once. */
const UNUSED_SERVICE = plainServiceUrl("http://unused.invalid")

/**
 * The pipeline's services: URLs from flags, then the environment, then its definition, each with
 * its credentials (endpoint.ts). A service it uses and no one names is an error, unless the run
 * is on the devnet (asked for, or declared); undefined means "start the devnet".
 */
export const pipelineEndpoints = (
  def: PipelineDefinition,
  options: RunOptions
): Either.Either<{ readonly indexer: ServiceUrl | undefined; readonly router: ServiceUrl | undefined }, RunError> => {
  const declared = typeof def.sources === "object" ? def.sources : {}
  const onDevnet = options.devnet === true || def.sources === "devnet"
  const needs = { indexer: !(def.datasets && def.datasets.length === 0), router: def.routePlan !== undefined }
  // an empty value (CHAIN_LAKE_INDEXER_URL= ) names nothing
  const indexerUrl = options.indexerUrl || process.env.CHAIN_LAKE_INDEXER_URL || declared.indexerUrl || undefined
  const routerUrl = options.routerUrl || process.env.CHAIN_LAKE_ROUTER_URL || declared.routerUrl || undefined
  const missing = [...(needs.indexer && !indexerUrl ? ["indexer"] : []), ...(needs.router && !routerUrl ? ["router"] : [])]
  if (missing.length > 0 && !onDevnet)
    return Either.left(
      new RunError({
        message: `pipeline ${def.name} names no ${missing.join(" or ")} URL: pass ${missing.map((m) => `--${m}-url URL`).join(" and ")} (or set ${missing.map((m) => `CHAIN_LAKE_${m.toUpperCase()}_URL`).join(" / ")}, or sources in the pipeline's file); --devnet runs it on the embedded devnet's simulated chain`
      })
    )
  const endpoint = (service: "indexer" | "router", raw: string | undefined, headers: ReadonlyArray<string> | undefined) =>
    raw === undefined ? Either.right(needs[service] ? undefined : UNUSED_SERVICE) : serviceUrlFrom(service, raw, headers)
  return Either.all({
    indexer: endpoint("indexer", indexerUrl, options.indexerHeaders),
    router: endpoint("router", routerUrl, options.routerHeaders)
  }).pipe(Either.mapLeft((message) => new RunError({ message: `pipeline ${def.name}: ${message}` })))
}

export type { PipelineRunReport } from "./runReports.js"

/** The services the pipeline names, or the embedded devnet's for those it leaves to it (stopped when the scope closes). */
const servicesOrDevnet = (
  def: PipelineDefinition,
  named: { readonly indexer: ServiceUrl | undefined; readonly router: ServiceUrl | undefined }
) =>
  Effect.gen(function* () {
    if (named.indexer && named.router) return { indexer: named.indexer, router: named.router }
    const devnet = yield* Effect.acquireRelease(
      Effect.promise(async () => (await import("../devnet/index.js")).startDevnet({ seed: 1, blocks: 1000 })),
      (d) => Effect.promise(() => d.stop())
    )
    yield* Effect.sync(() =>
      console.error(`${def.name}: on the embedded devnet (a simulated chain; --indexer-url and --router-url name real services)`)
    )
    return { indexer: named.indexer ?? plainServiceUrl(devnet.indexerUrl), router: named.router ?? plainServiceUrl(devnet.routerUrl) }
  })

/** What a pipeline run does, in the lake its layer opens: export, route sampling, snapshot retention, compaction. */
const pipelineWork = (def: PipelineDefinition, observer: ExportObserver | undefined, tally: ReturnType<typeof commitTally>) =>
  Effect.gen(function* () {
    const exported =
      def.datasets && def.datasets.length === 0
        ? undefined
        : yield* runExport(DATASETS, {
            datasets: def.datasets,
            params: def.denoms ? { denoms: def.denoms } : {},
            fromHeight: def.fromHeight,
            toHeight: def.toHeight,
            observer: tally.observe(observer ?? {})
          })
    // relative to pipelines/ unless loadPipeline made it absolute (relative to its file)
    const plan = def.routePlan ? yield* loadPlan(resolve(PIPELINES_DIR, def.routePlan)) : undefined
    const routeRound = plan ? yield* sampleRound(plan, { withReference: true, onCommitted: tally.sampled }) : undefined
    const pruned: Record<string, ReadonlyArray<number>> = {}
    if (def.keepSnapshots !== undefined) {
      const manifests = yield* Manifests
      for (const d of EXPORTED_DATASETS.filter((d) => d.kind === "snapshot")) {
        const dropped = yield* manifests.pruneSnapshots(d.name, def.keepSnapshots)
        if (dropped.length > 0) pruned[d.name] = dropped
      }
    }
    // the small files this run and earlier ones left (snapshot parts, sample files, short ranges), merged
    const compacted = (yield* compactLake(DATASETS, { onMerged: (dataset, group) => tally.merged(dataset, group.files) })).filter(
      (r) => r.merged.length > 0 || r.deleted > 0
    )
    return { exported, routeRound, pruned, compacted }
  })

/** The lake a run writes: --out, else the definition's `out`, relative to the working directory (default data). */
const outOf = (def: PipelineDefinition, options: RunOptions) => resolve(options.out ?? def.out ?? "data")

/** One run: lock, export, route sampling, report. */
export const runPipeline = (def: PipelineDefinition, options: RunOptions = {}) =>
  Effect.gen(function* () {
    const out = outOf(def, options)
    const startedAt = new Date().toISOString()
    const named = yield* pipelineEndpoints(def, options)
    yield* acquireLock(out, def.name)
    const { indexer, router } = yield* servicesOrDevnet(def, named)
    const tally = commitTally()
    const retries = retriesIn()
    const retried = () => (retriedTotal(retries.counts()) > 0 ? { retried: retries.counts() } : {})
    const work = pipelineWork(def, options.observer, tally).pipe(
      Effect.provide(pipelineLayer({ indexerUrl: indexer, routerUrl: router, out, retries }))
    )
    const reportPath = join(out, pipelineReportFile(def.name, startedAt))
    // a run stopped by Ctrl-C is reported too (README: every run, success or failure), with what it committed
    const stopped = Effect.suspend(() => {
      const report: PipelineRunReport = {
        pipeline: def.name,
        out,
        startedAt,
        finishedAt: new Date().toISOString(),
        ok: false,
        interrupted: true,
        error: "interrupted",
        committed: tally.committed(),
        merged: tally.compacted(),
        ...retried()
      }
      return Effect.either(writePipelineReport(reportPath, report)).pipe(
        Effect.flatMap((written) => Effect.sync(() => options.stopped?.(report, Either.isRight(written) ? reportPath : undefined)))
      )
    })
    // a defect (a full disk where a write was not expected to fail) is a failed run too, reported like any other
    const result = yield* Effect.either(work.pipe(Effect.catchAllDefect((d) => Effect.fail(new RunError({ message: messageOf(d) }))))).pipe(
      Effect.onInterrupt(() => stopped)
    )
    const report: PipelineRunReport = {
      pipeline: def.name,
      out,
      startedAt,
      finishedAt: new Date().toISOString(),
      ok: Either.isRight(result),
      ...(Either.isLeft(result)
        ? { error: messageOf(result.left) }
        : {
            export: result.right.exported,
            routeRound: result.right.routeRound,
            pruned: result.right.pruned,
            compacted: result.right.compacted
          }),
      ...retried()
    }
    // a report that cannot be written fails the run, which says why
    const written = yield* Effect.either(writePipelineReport(reportPath, report))
    if (Either.isLeft(written))
      return {
        ...report,
        ok: false,
        error: `${report.error ? `${report.error}; and ` : ""}its run report could not be written to ${reportPath}: ${messageOf(written.left.error)}`
      }
    return report
  }).pipe(Effect.scoped)

const messageOf = (e: unknown): string => String((e as { message?: string } | undefined)?.message ?? e)

/**
 * Runs on the definition's cron until interrupted (or `maxRuns`). A run that fails, whatever the
 * cause (a locked folder, a full disk, a defect), is reported and the next tick runs again; the
 * result counts the runs and the failed ones.
 */
export const schedulePipeline = (
  def: PipelineDefinition,
  options: RunOptions & { readonly maxRuns?: number; readonly onRun?: (r: PipelineRunReport) => void }
) => {
  const cron = Cron.unsafeParse(def.schedule)
  const counts = { runs: 0, failed: 0 }
  const failedRun = (e: unknown): PipelineRunReport => ({
    pipeline: def.name,
    out: outOf(def, options),
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    ok: false,
    error: messageOf(e)
  })
  const once = runPipeline(def, options).pipe(
    Effect.catchAll((e) => Effect.succeed(failedRun(e))),
    Effect.catchAllDefect((d) => Effect.succeed(failedRun(d))),
    Effect.tap((r) =>
      Effect.sync(() => {
        counts.runs++
        if (!r.ok) counts.failed++
        options.onRun?.(r)
      })
    )
  )
  // the first run at the first tick, as cron runs it (a nightly job started at noon ran at noon)
  const ticks = Schedule.cron(cron)
  const scheduled: Effect.Effect<unknown> =
    options.maxRuns !== undefined
      ? Effect.schedule(once, ticks.pipe(Schedule.intersect(Schedule.recurs(options.maxRuns))))
      : Effect.schedule(once, ticks)
  return scheduled.pipe(Effect.as(counts))
}
