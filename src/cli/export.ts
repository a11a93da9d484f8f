/**
 * `chain-lake export`: every indexer dataset to Parquet under --out. Without --indexer-url it
 * exports the embedded devnet (started in-process), so it runs on a machine with no network.
 */
import { Command, Options } from "@effect/cli"
import { mkdir, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import { Console, Effect, Option } from "effect"
import { DEFAULTS } from "../defaults.js"
import { DATASETS, EXPORTED_DATASETS } from "../datasets/index.js"
import { startDevnet } from "../devnet/index.js"
import { datasetNamesProblem, runExport, type ExportReport } from "../engine/export.js"
import { followExport } from "../engine/follow.js"
import { parseEvery } from "../sampling/sampler.js"
import { isS3Url, parseS3Url } from "../storage/s3.js"
import { newWorkDir, pullManifests, remoteCommits, removeDir } from "../storage/sync.js"
import { newWriterId } from "../lake/lock.js"
import { describeIndexerError, type IndexerError } from "../indexer/errors.js"
import { UserError } from "./errors.js"
import { exportLayer } from "./layers.js"
import { makeProgress, summaryTable } from "./progress.js"

const list = (name: string, description: string) =>
  Options.text(name).pipe(
    Options.optional,
    Options.withDescription(description),
    Options.map(Option.map((s) => s.split(",").map((x) => x.trim()).filter(Boolean)))
  )

export const urlOption = (name: string, what: string) =>
  Options.text(name).pipe(Options.optional, Options.withDescription(`${what} base URL (default: the embedded devnet, started in-process)`))

export const options = {
  indexerUrl: urlOption("indexer-url", "indexer API"),
  out: Options.text("out").pipe(Options.withDefault("data"), Options.withDescription("output folder (created if missing), or s3://bucket/prefix")),
  s3Endpoint: Options.text("s3-endpoint").pipe(Options.optional, Options.withDescription("S3-compatible endpoint URL for s3:// outputs (default: AWS)")),
  datasets: list("datasets", `comma-separated datasets (default: all the chain serves): ${EXPORTED_DATASETS.map((d) => d.name).join(", ")}`),
  denoms: list("denoms", "comma-separated denoms for holders (default: the denoms in the exported blocks' total_fee)"),
  fromHeight: Options.integer("from-height").pipe(Options.optional, Options.withDescription("first height (default: the first indexed block)")),
  toHeight: Options.integer("to-height").pipe(Options.optional, Options.withDescription("last height (default: the tip seen at start)")),
  concurrency: Options.integer("concurrency").pipe(Options.withDefault(DEFAULTS.concurrency), Options.withDescription("requests in flight at once, shared by all datasets")),
  rps: Options.integer("rps").pipe(Options.withDefault(DEFAULTS.rps), Options.withDescription("requests per second at most; 0 = no limit")),
  pageSize: Options.integer("page-size").pipe(Options.withDefault(DEFAULTS.pageSize), Options.withDescription("rows per request, 1..1000")),
  onInvalid: Options.choice("on-invalid", ["fail", "quarantine"]).pipe(
    Options.withDefault("fail" as const),
    Options.withDescription("a record that breaks the schema: fail (nothing more is committed) or quarantine (kept in _quarantine/ and skipped)")
  ),
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("print the plan and the Parquet schemas; write nothing")),
  devnetBlocks: Options.integer("devnet-blocks").pipe(Options.withDefault(1000), Options.withDescription("blocks of the embedded devnet (without --indexer-url)")),
  devnetSeed: Options.integer("devnet-seed").pipe(Options.withDefault(1), Options.withDescription("seed of the embedded devnet (without --indexer-url)")),
  follow: Options.boolean("follow").pipe(Options.withDescription("after catching up, keep exporting new blocks until stopped (append-only datasets by default)")),
  poll: Options.text("poll").pipe(Options.withDefault("2s"), Options.withDescription("with --follow: how often to look for new blocks (500ms, 2s, 1m)")),
  untilHeight: Options.integer("until-height").pipe(Options.optional, Options.withDescription("with --follow: stop once this height is exported"))
}

export const checkUrl = (flag: string, value: string) =>
  Effect.try({
    try: () => {
      const u = new URL(value)
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)")
      return value.replace(/\/+$/, "")
    },
    catch: () => new UserError({ message: `${flag} must be an http(s) URL like http://127.0.0.1:8080, got "${value}"`, exitCode: 2 })
  })

/** A quick reachability check, so a wrong URL fails in seconds rather than after the retry budget. */
export const preflight = (flag: string, url: string, path: string) =>
  Effect.tryPromise({
    try: async () => {
      const res = await fetch(url + path, { signal: AbortSignal.timeout(10_000) })
      await res.arrayBuffer()
      if (res.status === 404) throw new Error(`${path} answered 404: is this the right service?`)
    },
    catch: (e) => {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause
      return new UserError({ message: `cannot reach ${url} (${flag}): ${cause?.code ?? cause?.message ?? (e as Error).message}; check the URL and that the service is up` })
    }
  })

/** The router URL from --router-url (checked and probed), or the embedded devnet's router started for this command. */
export const routerUrlOrDevnet = (value: Option.Option<string>, purpose: string) =>
  Effect.gen(function* () {
    if (Option.isSome(value)) {
      const url = yield* checkUrl("--router-url", value.value)
      yield* preflight("--router-url", url, "/v2/tx/status")
      return url
    }
    const devnet = yield* Effect.acquireRelease(Effect.promise(() => startDevnet({ seed: 1, blocks: 10 })), (d) => Effect.promise(() => d.stop()))
    yield* Console.error(`no --router-url: ${purpose} the embedded devnet router at ${devnet.routerUrl}`)
    return devnet.routerUrl
  })

/** What a stopped export or pipeline run says on its way out (exit 130). */
export const INTERRUPTED = "chain-lake: interrupted: every file committed so far is kept; run the same command again to resume"

export const describeExportFailure = (e: { _tag: string; message?: string }): string => {
  switch (e._tag) {
    case "SinkError":
      return `writing Parquet failed: ${e.message}`
    case "CheckpointError":
      return `checkpoint: ${e.message}`
    case "ExportError":
    case "LakeIdentityError":
      return e.message ?? "export failed"
    default:
      return describeIndexerError(e as IndexerError)
  }
}

/** The one line a failed export prints: what failed, and whether a rerun resumes (not when the request or the lake is what is wrong). */
const exportFailure = (e: { _tag: string; message?: string }) =>
  new UserError({
    message: ["ExportError", "LakeIdentityError", "CheckpointError"].includes(e._tag)
      ? describeExportFailure(e)
      : `${describeExportFailure(e)}. Committed files are untouched; rerun to resume.`
  })

const validate = (o: {
  concurrency: number
  rps: number
  pageSize: number
  fromHeight: Option.Option<number>
  toHeight: Option.Option<number>
  datasets: Option.Option<ReadonlyArray<string>>
}) =>
  Effect.gen(function* () {
    const bad = (message: string) => new UserError({ message, exitCode: 2 })
    // before a devnet starts or a server is asked anything
    const names = datasetNamesProblem(DATASETS, Option.getOrUndefined(o.datasets))
    if (names) return yield* bad(names)
    if (o.concurrency < 1) return yield* bad(`--concurrency must be at least 1, got ${o.concurrency}`)
    if (o.rps < 0) return yield* bad(`--rps cannot be negative, got ${o.rps}`)
    if (o.pageSize < 1 || o.pageSize > 1000) return yield* bad(`--page-size must be 1..1000 (the indexer answers 400 above 1000), got ${o.pageSize}`)
    if (Option.isSome(o.fromHeight) && o.fromHeight.value < 1) return yield* bad(`--from-height must be at least 1, got ${o.fromHeight.value}`)
    if (Option.isSome(o.fromHeight) && Option.isSome(o.toHeight) && o.fromHeight.value > o.toHeight.value)
      return yield* bad(`--from-height ${o.fromHeight.value} is above --to-height ${o.toHeight.value}`)
  })

export const exportCommand = Command.make("export", options, (o) =>
  Effect.gen(function* () {
    yield* validate(o)
    // s3:// output: export into a local work folder mirroring the remote manifests, uploading each commit
    const s3Out = isS3Url(o.out) ? o.out : undefined
    const s3Endpoint = Option.getOrUndefined(o.s3Endpoint)
    if (s3Out) yield* Effect.try({ try: () => parseS3Url(s3Out), catch: (e) => new UserError({ message: (e as Error).message, exitCode: 2 }) })
    // a work folder of this run's own (two jobs on one machine never share one), removed at the end
    const writer = newWriterId()
    const out = s3Out ? yield* Effect.acquireRelease(newWorkDir(writer), removeDir) : resolve(o.out)
    if (s3Out) yield* pullManifests(s3Out, out, s3Endpoint).pipe(Effect.mapError((e) => new UserError({ message: e.message })))
    // each commit goes up to S3 as it happens
    const remote = s3Out ? remoteCommits(s3Out, out, writer, s3Endpoint) : undefined
    const layerFor = (indexerUrl: string) =>
      exportLayer({ indexerUrl, out, limits: { concurrency: o.concurrency, rps: o.rps }, filesElsewhere: remote !== undefined, ...(remote ? { afterCommit: remote.afterCommit } : {}) })
    let indexerUrl: string
    if (Option.isSome(o.indexerUrl)) {
      indexerUrl = yield* checkUrl("--indexer-url", o.indexerUrl.value)
      yield* preflight("--indexer-url", indexerUrl, "/status")
    } else {
      const devnet = yield* Effect.acquireRelease(
        Effect.promise(() => startDevnet({ seed: o.devnetSeed, blocks: o.devnetBlocks })),
        (d) => Effect.promise(() => d.stop())
      )
      indexerUrl = devnet.indexerUrl
      yield* Console.error(`no --indexer-url: exporting the embedded devnet (seed ${o.devnetSeed}, ${o.devnetBlocks} blocks) at ${indexerUrl}`)
    }
    if (o.follow) {
      const poll = parseEvery(o.poll)
      if (!poll) return yield* new UserError({ message: `--poll must look like 500ms, 2s or 1m, got "${o.poll}"`, exitCode: 2 })
      yield* followExport(
        EXPORTED_DATASETS,
        {
          datasets: Option.getOrUndefined(o.datasets),
          fromHeight: Option.getOrUndefined(o.fromHeight),
          pageSize: o.pageSize,
          concurrency: o.concurrency,
          onInvalid: o.onInvalid,
          observer: { notice: (m) => process.stderr.write(m + "\n") }
        },
        {
          poll,
          untilHeight: Option.getOrUndefined(o.untilHeight),
          onRound: (r) => {
            const rows = r.datasets.map((d) => `${d.dataset} +${d.rows}`).join(", ")
            console.log(`${new Date().toISOString()} height ${r.tip}: ${rows}`)
          }
        }
      ).pipe(
        Effect.provide(layerFor(indexerUrl)),
        Effect.mapError(exportFailure)
      )
      return
    }
    const tty = process.stderr.isTTY === true && process.env.CI === undefined
    const progress = makeProgress({ tty, log: (line) => process.stderr.write(line + "\n") })
    const started = Date.now()
    const report: ExportReport = yield* runExport(DATASETS, {
      datasets: Option.getOrUndefined(o.datasets),
      params: Option.match(o.denoms, { onNone: () => ({}), onSome: (denoms) => ({ denoms }) }),
      fromHeight: Option.getOrUndefined(o.fromHeight),
      toHeight: Option.getOrUndefined(o.toHeight),
      pageSize: o.pageSize,
      concurrency: o.concurrency,
      onInvalid: o.onInvalid,
      dryRun: o.dryRun,
      observer: progress.observer
    }).pipe(
      Effect.provide(layerFor(indexerUrl)),
      Effect.ensuring(Effect.sync(() => progress.stop())),
      Effect.mapError(exportFailure)
    )
    const seconds = (Date.now() - started) / 1000
    if (o.dryRun) {
      yield* Console.log(`Plan (dry run, nothing written) for ${report.chainId} at height ${report.tip}:`)
      for (const p of report.plans)
        yield* Console.log(
          `  ${p.dataset}: ${p.kind === "snapshot" ? `snapshot at ${p.watermark}` : `${p.todo} ${p.unit}s in ${p.shards} shards, ~${p.estimatedRequests} requests (${p.done} already committed)`}`
        )
      for (const d of EXPORTED_DATASETS.filter((d) => report.plans.some((p) => p.dataset === d.name))) {
        yield* Console.log(`\n${d.name} (${d.kind === "append" ? "partitioned by height_bucket" : "partitioned by snapshot_height"}): ${d.description}`)
        for (const c of d.columns) yield* Console.log(`  ${c.name.padEnd(26)} ${c.type.padEnd(14)} ${c.description}`)
      }
      return
    }
    const runReport = `_runs/${report.startedAt.replace(/[:.]/g, "-")}.json`
    yield* Effect.promise(async () => {
      await mkdir(join(out, "_runs"), { recursive: true })
      await writeFile(join(out, runReport), JSON.stringify({ ...report, indexerUrl, seconds }, null, 1))
    })
    yield* Console.log(summaryTable(report.datasets, seconds))
    if (remote) {
      const uploaded = yield* remote.finish([runReport]).pipe(
        Effect.mapError((e) => new UserError({ message: `${e.message}: run the export again (it fetches what the remote lake lacks)` }))
      )
      yield* Console.log(`\nuploaded ${uploaded} files and their commit-log entries to ${s3Out}`)
    }
    // the heights this run was asked for, not the chain's tip
    const upTo = Option.isSome(o.toHeight) ? Math.min(o.toHeight.value, report.tip) : report.tip
    const span = Option.isSome(o.fromHeight) ? `heights ${o.fromHeight.value}..${upTo}` : `up to height ${upTo}`
    yield* Console.log(`\n${report.chainId} ${span} in ${seconds.toFixed(1)} s → ${s3Out ?? out} (run report in _runs/)`)
  }).pipe(Effect.scoped, Effect.onInterrupt(() => Console.error(INTERRUPTED)))
).pipe(Command.withDescription("Export indexer datasets to Parquet (resumable; rerun to continue or to catch up with the chain)"))
