/**
 * `chain-lake export`: every indexer dataset to Parquet under --out. Without --indexer-url it
 * exports the embedded devnet (started in-process), so it runs on a machine with no network.
 */
import { readSize } from "./sizes.js"
import { Command, Options } from "@effect/cli"
import { MAX_PAGE_LIMIT } from "../indexer/endpoints.js"
import { resolve } from "node:path"
import { Console, Duration, Effect, Option } from "effect"
import { DEFAULTS } from "../defaults.js"
import { DATASETS, EXPORTED_DATASETS } from "../datasets/index.js"
import { datasetNamesProblem, runExport, type ExportObserver, type ExportReport } from "../engine/export.js"
import { FOLLOW_COMPACT_AFTER, followExport } from "../engine/follow.js"
import type { DatasetCompaction } from "../lake/compaction.js"
import { rollbackUnderWay, toFinishRollback } from "../lake/listed.js"
import { parseEvery } from "../sampling/sampler.js"
import { isS3Url, parseS3Url } from "../s3/s3.js"
import { s3ExportFolder, type RemoteCommits } from "../s3/sync.js"
import {
  type CommittedToDataset,
  commitTally,
  describeCommitted,
  writeExportReport,
  writeFailedExportReport,
  writeStoppedExportReport
} from "../pipelines/runReports.js"
import { describeIndexerError, type IndexerError } from "../indexer/errors.js"
import type { ServiceUrl } from "../http/serviceUrl.js"
import { retriedClause, retriedSinceLast, retriedTotal, retriesIn, type RetriesService, type RetryCounts } from "../http/Retries.js"
import { devnetOption, endpointOrDevnet, headerOption, sourceProblem, urlOption } from "./serviceUrls.js"
import { UserError } from "./errors.js"
import {
  defaultMemoryLimit,
  MIN_MEMORY_LIMIT_BYTES,
  NODE_FLOOR_BYTES,
  PROCESS_BASE_BYTES,
  parseMemorySize,
  sinkMemory
} from "../lake/writer.js"
import { exportLayer, smallestLimitForWorkers } from "./layers.js"
import { compactionLine, stderrProgress, summaryTable } from "./progress.js"
import { LOG_FORMAT_DESCRIPTION, logsAreJson } from "./output.js"
import { checkOutputFolder } from "./outputFolder.js"
import { retriedLine } from "./retried.js"
import { commaListOption } from "./commaList.js"
import { integerOption } from "./integers.js"

const list = (name: string, description: string) => commaListOption(name).pipe(Options.optional, Options.withDescription(description))

export const options = {
  indexerUrl: urlOption("indexer"),
  devnet: devnetOption("indexer"),
  header: headerOption("indexer"),
  out: Options.text("out").pipe(
    Options.withDefault("data"),
    Options.withDescription("output folder (created if missing), or s3://bucket/prefix")
  ),
  s3Endpoint: Options.text("s3-endpoint").pipe(
    Options.optional,
    Options.withDescription("S3-compatible endpoint URL for s3:// outputs (default: AWS)")
  ),
  datasets: list(
    "datasets",
    `comma-separated datasets (default: all the chain serves): ${EXPORTED_DATASETS.map((d) => d.name).join(", ")}`
  ),
  denoms: list("denoms", "comma-separated denoms for holders (default: the denoms in the exported blocks' total_fee)"),
  fromHeight: integerOption("from-height").pipe(
    Options.optional,
    Options.withDescription("first height (default: the first indexed block); snapshots are of their watermark whatever the range")
  ),
  toHeight: integerOption("to-height").pipe(
    Options.optional,
    Options.withDescription("last height (default: the tip seen at start); snapshots are of their watermark whatever the range")
  ),
  concurrency: integerOption("concurrency").pipe(
    Options.withDefault(DEFAULTS.concurrency),
    Options.withDescription("requests in flight at once, shared by all datasets")
  ),
  rps: integerOption("rps").pipe(Options.withDefault(DEFAULTS.rps), Options.withDescription("requests per second at most; 0 = no limit")),
  workers: integerOption("workers").pipe(
    Options.withDefault(0),
    Options.withDescription(
      "worker threads that page, decode and write the shards (0: the main thread does; try the cores you can spare). --concurrency and --rps hold for all of them together"
    )
  ),
  pageSize: integerOption("page-size").pipe(
    Options.withDefault(DEFAULTS.pageSize),
    Options.withDescription(`rows per request, 1..${MAX_PAGE_LIMIT}`)
  ),
  maxPageMb: integerOption("max-page-mb").pipe(
    Options.withDefault(DEFAULTS.maxPageMb),
    Options.withDescription(
      "the largest answer read from the indexer, in MB; a larger one fails the run (a broken or hostile server cannot fill memory)"
    )
  ),
  memoryLimit: Options.text("memory-limit").pipe(
    Options.withDefault(defaultMemoryLimit()),
    Options.withDescription(
      `the most memory the run may use, a cap on its peak (e.g. 512MB, 2GB; ${MIN_MEMORY_LIMIT_BYTES / 1024 / 1024}MB at least): past 100 MB for the process, DuckDB gets 40% and writers stage a third of that, Node the rest (pages in flight shrink to fit it); lower means smaller pages and files`
    )
  ),
  logFormat: Options.choice("log-format", ["text", "json"]).pipe(
    Options.withDefault("text" as const),
    Options.withDescription(LOG_FORMAT_DESCRIPTION)
  ),
  onInvalid: Options.choice("on-invalid", ["fail", "quarantine"]).pipe(
    Options.withDefault("fail" as const),
    Options.withDescription(
      "a record that breaks the schema: fail (nothing more is committed) or quarantine (kept in _quarantine/ and skipped)"
    )
  ),
  dryRun: Options.boolean("dry-run").pipe(Options.withDescription("print the plan and the Parquet schemas; write nothing")),
  adoptLake: Options.boolean("adopt-lake").pipe(
    Options.withDescription(
      "take an --out that holds data but names no chain (no _lake.json: an older lake), once its newest block is checked against the indexer"
    )
  ),
  onReorg: Options.choice("on-reorg", ["refuse", "rollback"]).pipe(
    Options.withDefault("refuse" as const),
    Options.withDescription(
      "the indexer serves another history than the lake above some height (a reorg, a rolled-back and re-synced indexer): refuse, or rollback (drop the lake's rows above the last common height, logged in _lake.json, and export the indexer's history)"
    )
  ),
  devnetBlocks: integerOption("devnet-blocks").pipe(Options.optional, Options.withDescription("with --devnet: its blocks (default 1000)")),
  devnetSeed: integerOption("devnet-seed").pipe(Options.optional, Options.withDescription("with --devnet: its seed (default 1)")),
  follow: Options.boolean("follow").pipe(
    Options.withDescription("after catching up, keep exporting new blocks until stopped (append-only datasets by default)")
  ),
  poll: Options.text("poll").pipe(
    Options.optional,
    Options.withDescription("with --follow: how often to look for new blocks (500ms, 2s, 1m; default 2s)")
  ),
  untilHeight: integerOption("until-height").pipe(
    Options.optional,
    Options.withDescription("with --follow: stop once this height is exported")
  ),
  compactAfter: integerOption("compact-after").pipe(
    Options.withDefault(FOLLOW_COMPACT_AFTER),
    Options.withDescription("with --follow: compact a partition once it holds this many small files (0: never; see chain-lake compact)")
  )
}

/** What a stopped export or pipeline run says on its way out (exit 130). */
export const INTERRUPTED = "chain-lake: interrupted: every file committed so far is kept; run the same command again to resume"

export const describeExportFailure = (e: { _tag: string; message?: string }): string => {
  switch (e._tag) {
    case "SinkError": {
      // DuckDB's messages go on with lines of advice ("Possible solutions: … SET threads=X") that a CLI user cannot follow
      const first = (e.message ?? "").split("\n")[0].trim()
      return /Out of Memory/i.test(first)
        ? `writing Parquet failed: DuckDB ran out of memory (${first}): raise --memory-limit, or lower --concurrency`
        : `writing Parquet failed: ${first}`
    }
    case "ManifestError":
      return e.message ?? "the lake's manifests cannot be read"
    case "CompactionError":
      return `compaction: ${e.message}`
    case "ExportError":
    case "CommitError":
    case "LakeIdentityError":
    case "RollbackError":
      return e.message ?? "export failed"
    default:
      return describeIndexerError(e as IndexerError)
  }
}

/** `text` as a sentence: its own ending kept ("…in front of it?"), else a full stop. */
const sentence = (text: string) => (/[.?!]$/.test(text) ? text : `${text}.`)

/** The one line a failed export prints: what failed, and whether a rerun resumes (not when the request or the lake is what is wrong). */
const exportFailure =
  (onInvalid: "fail" | "quarantine") => (e: { _tag: string; message?: string; status?: number; endpoint?: string; path?: string }) =>
    new UserError({
      message: [
        "ExportError",
        "LakeIdentityError",
        "RollbackError",
        "ManifestError",
        "CompactionError",
        "CommitError",
        "IndexerVersionError",
        "IndexerAnswerTooLarge"
      ].includes(e._tag)
        ? describeExportFailure(e)
        : refused(e)
          ? // asked again, the same request is refused the same way (a denom the rich list does not know)
            `${sentence(describeExportFailure(e))} Committed files are untouched; change what the indexer refused, then rerun.`
          : e._tag === "IndexerDecodeError"
            ? // a rerun reads the same answer: set bad records aside, or (an HTML page) point at the indexer
              `${sentence(describeExportFailure(e))} Committed files are untouched${onInvalid === "fail" && quarantinable(e) ? "; --on-invalid quarantine sets such records aside and exports the rest" : ""}.`
            : e._tag === "IndexerPagingError"
              ? // a list that moved while it was paged passes on a rerun; a server (or proxy) that pages wrongly fails the same way again
                `${sentence(describeExportFailure(e))} Committed files are untouched; a rerun resumes if the list was changing, but if it fails the same way the server's paging is wrong (check any proxy or gateway in front of it).`
              : `${sentence(describeExportFailure(e))} Committed files are untouched; rerun to resume.`
    })
/** A record of an appended list that breaks its schema (`txs[3].height`): what --on-invalid quarantine sets aside (not an envelope, nor a snapshot's record). */
const APPENDED = new Set(EXPORTED_DATASETS.flatMap((d) => (d.kind === "append" ? [d.list.endpoint] : [])))
const quarantinable = (e: { endpoint?: string; path?: string }) =>
  e.endpoint !== undefined && APPENDED.has(e.endpoint) && /\[\d+\]/.test(e.path ?? "")
/** A 4xx that is not "later" (408, 425, 429): the request itself is what the indexer refuses. */
const refused = (e: { _tag: string; status?: number }) =>
  e._tag === "IndexerHttpError" && e.status !== undefined && e.status >= 400 && e.status < 500 && ![408, 425, 429].includes(e.status)

/** The refusal of a --memory-limit below what an export needs at all, naming the smallest that works. */
export const memoryLimitTooLow = (given: string) => {
  const mb = (bytes: number) => Math.round(bytes / 1024 / 1024)
  const duckdb = sinkMemory(MIN_MEMORY_LIMIT_BYTES).memoryLimit.replace("MiB", "")
  return `--memory-limit ${given} is below what an export needs at all: the smallest that works is ${mb(MIN_MEMORY_LIMIT_BYTES)}MB (~${mb(PROCESS_BASE_BYTES)} MB for the runtime and code, ${duckdb} MB for DuckDB, ~${mb(NODE_FLOOR_BYTES)} MB for Node's heap and the pages in flight)`
}

const validate = (o: {
  concurrency: number
  workers: number
  rps: number
  pageSize: number
  maxPageMb: number
  memoryLimit: string
  fromHeight: Option.Option<number>
  toHeight: Option.Option<number>
  datasets: Option.Option<ReadonlyArray<string>>
  follow: boolean
  dryRun: boolean
  poll: Option.Option<string>
  untilHeight: Option.Option<number>
  compactAfter: number
  devnet: boolean
  indexerUrl: Option.Option<string>
  devnetBlocks: Option.Option<number>
  devnetSeed: Option.Option<number>
}) =>
  Effect.gen(function* () {
    const bad = (message: string) => new UserError({ message, exitCode: 2 })
    // before a devnet starts or a server is asked anything
    const names = datasetNamesProblem(DATASETS, Option.getOrUndefined(o.datasets))
    if (names) return yield* bad(names)
    if (o.concurrency < 1) return yield* bad(`--concurrency must be at least 1, got ${o.concurrency}`)
    if (o.rps < 0) return yield* bad(`--rps cannot be negative, got ${o.rps}`)
    if (o.workers < 0 || o.workers > 64) return yield* bad(`--workers must be 0..64, got ${o.workers}`)
    if (o.maxPageMb < 1) return yield* bad(`--max-page-mb must be at least 1, got ${o.maxPageMb}`)
    const memory = readSize("--memory-limit", o.memoryLimit, { examples: "512MB, 2GB" })
    if (typeof memory === "string") return yield* bad(memory)
    // a limit the run cannot stay within is refused, not passed
    if (memory < MIN_MEMORY_LIMIT_BYTES) return yield* bad(memoryLimitTooLow(o.memoryLimit))
    if (o.workers > 0 && memory < smallestLimitForWorkers(o.workers))
      return yield* bad(
        `--workers ${o.workers} needs --memory-limit ${Math.ceil(smallestLimitForWorkers(o.workers) / 1024 / 1024)}MB at least (each worker's DuckDB needs its share), got ${o.memoryLimit}: raise --memory-limit or use fewer workers`
      )
    if (o.pageSize < 1 || o.pageSize > MAX_PAGE_LIMIT)
      return yield* bad(`--page-size must be 1..${MAX_PAGE_LIMIT} (the indexer answers 400 above ${MAX_PAGE_LIMIT}), got ${o.pageSize}`)
    // heights start at 1: a bound of 0 or below matches no block
    for (const [flag, value] of [
      ["--from-height", o.fromHeight],
      ["--to-height", o.toHeight],
      ["--until-height", o.untilHeight]
    ] as const)
      if (Option.isSome(value) && value.value < 1) return yield* bad(`${flag} must be at least 1 (heights start at 1), got ${value.value}`)
    if (Option.isSome(o.fromHeight) && Option.isSome(o.toHeight) && o.fromHeight.value > o.toHeight.value)
      return yield* bad(`--from-height ${o.fromHeight.value} is above --to-height ${o.toHeight.value}`)
    if (o.follow && (o.compactAfter < 0 || o.compactAfter === 1))
      return yield* bad(`--compact-after must be 0 (never) or at least 2, got ${o.compactAfter}`)
    // flags of a plain export that --follow would take and not honour
    if (o.follow && o.dryRun) return yield* bad("--dry-run plans one export and writes nothing, --follow writes every round: give one")
    if (o.follow && Option.isSome(o.toHeight)) return yield* bad("--to-height bounds a plain export: --follow stops at --until-height")
    // flags of --follow without it were taken and did nothing
    if (!o.follow && Option.isSome(o.poll)) return yield* bad("--poll applies with --follow only")
    if (!o.follow && Option.isSome(o.untilHeight))
      return yield* bad("--until-height applies with --follow only (--to-height bounds a plain export)")
    if (!o.devnet && (Option.isSome(o.devnetBlocks) || Option.isSome(o.devnetSeed)))
      return yield* bad(`--devnet-${Option.isSome(o.devnetBlocks) ? "blocks" : "seed"} applies with --devnet only`)
    if (o.follow && Option.isSome(o.poll) && !parseEvery(o.poll.value))
      return yield* bad(`--poll must look like 500ms, 2s or 1m, got "${o.poll.value}"`)
    // the source last: the flags' own mistakes are named first
    const source = sourceProblem("indexer", o.indexerUrl, o.devnet)
    if (source) return yield* bad(source)
  })

/** The flags as parsed. */
type ExportFlags = Command.Command.ParseConfig<typeof options>

/** Where an export writes: a local lake; or, for an s3:// --out, a work folder of the run's own that mirrors the remote manifests, each commit uploaded as it happens (`remote`). */
interface ExportTarget {
  /** the local folder the run writes */
  readonly out: string
  readonly s3Url?: string
  readonly remote?: RemoteCommits
}

/** --out checked (a local folder it can write, an S3 URL it can parse) and made ready to write. */
const exportTarget = (o: ExportFlags) =>
  Effect.gen(function* () {
    if (!isS3Url(o.out)) {
      yield* checkOutputFolder("--out", o.out, true)
      return { out: resolve(o.out) } satisfies ExportTarget
    }
    const s3Url = o.out
    yield* Effect.try({ try: () => parseS3Url(s3Url), catch: (e) => new UserError({ message: (e as Error).message, exitCode: 2 }) })
    // a rollback rewrites committed files, which an s3:// run's work folder does not hold
    if (o.onReorg === "rollback")
      return yield* new UserError({
        message: "--on-reorg rollback works on a local lake: sync the S3 lake to a folder, export there, and publish it",
        exitCode: 2
      })
    const { out, remote } = yield* s3ExportFolder(s3Url, Option.getOrUndefined(o.s3Endpoint)).pipe(
      Effect.mapError((e) => new UserError({ message: e.message }))
    )
    return { out, s3Url, remote } satisfies ExportTarget
  })

/** What an export stopped by Ctrl-C says last: a rollback it left cut short (a local lake's), and that a rerun resumes. */
const stoppedLines = (out: string) => {
  const cut = isS3Url(out) ? undefined : rollbackCutShort(resolve(out))
  return cut ? `${cut}\n${INTERRUPTED}` : INTERRUPTED
}

/**
 * A rollback of the lake at `out` left unfinished (a run stopped during --on-reorg rollback, or
 * before it finished one cut short earlier), in a line: the datasets it cuts are not read until it is.
 */
export const rollbackCutShort = (out: string) => {
  const rollback = rollbackUnderWay(out)
  if (!rollback) return undefined
  const dropped = Object.entries(rollback.rows_dropped ?? {}).map(([dataset, rows]) => `${dataset} ${rows} rows`)
  return `the rollback of this lake to height ${rollback.to_height} was cut short${dropped.length > 0 ? ` (dropped so far: ${dropped.join(", ")})` : ""}: ${rollback.datasets.join(", ")} cannot be read until it is finished: ${toFinishRollback(out, rollback.to_height)}`
}

/**
 * What a run of the command is made of: its layer (each commit of an s3:// run uploaded as it
 * happens), and for a run stopped by Ctrl-C (exit 130) what it committed, said and (a local run)
 * reported; an s3:// run's work folder goes with it: its commits are uploaded, the report is not.
 */
const exportRun = (o: ExportFlags, target: ExportTarget, indexer: ServiceUrl) => {
  const { out, remote } = target
  const retries = retriesIn()
  const layer = exportLayer({
    retries,
    indexerUrl: indexer,
    out,
    limits: { concurrency: o.concurrency, rps: o.rps },
    maxPageMb: o.maxPageMb,
    memoryLimitBytes: parseMemorySize(o.memoryLimit)!,
    workers: o.workers,
    filesElsewhere: remote !== undefined,
    ...(remote ? { afterCommit: remote.afterCommit, fetchCommitted: remote.fetchCommitted } : {})
  })
  const startedAt = new Date().toISOString()
  const tally = commitTally()
  /**
   * What a run `ended` before its end (stopped, or failed) committed, said on stderr, with its
   * report in the lake where `write` can write it: a report that cannot be written (the disk that
   * failed the run) is said, and no longer takes the run's own error or exit with it.
   */
  const saidAndReported = (ended: "was stopped" | "failed", write: (committed: ReadonlyArray<CommittedToDataset>) => Promise<string>) =>
    Effect.promise(async () => {
      const committed = tally.committed()
      const where = target.s3Url
        ? ""
        : await write(committed).then(
            (path) => ` (report in ${path})`,
            (e: Error) => ` (its report could not be written: ${e.message})`
          )
      process.stderr.write(`committed by this run before it ${ended}: ${describeCommitted(committed)}${where}\n`)
      if (retriedTotal(retries.counts()) > 0) process.stderr.write(`${exportRetriedLine(retries.counts())}\n`)
    })
  const onStopped = Effect.onInterrupt(() =>
    saidAndReported("was stopped", (committed) =>
      writeStoppedExportReport(out, { startedAt, indexerUrl: indexer.baseUrl, committed, retried: retries.counts() })
    )
  )
  /** A run that fails after it committed something says what (the error's line follows), and reports it in the lake as a stopped one does. */
  const onFailed = <A, E extends { readonly message: string }, R>(run: Effect.Effect<A, E, R>) =>
    Effect.tapError(run, (e) =>
      tally.committed().length === 0
        ? Effect.void
        : saidAndReported("failed", (committed) =>
            writeFailedExportReport(out, { startedAt, indexerUrl: indexer.baseUrl, committed, error: e.message, retried: retries.counts() })
          )
    )
  return { layer, observe: tally.observe, onStopped, onFailed, retries }
}
type ExportRun = ReturnType<typeof exportRun>

/** The end of an s3:// run: its log entries read back (each must have been taken), and what went up. */
const uploaded = (remote: RemoteCommits, also: ReadonlyArray<string> = []) =>
  remote.finish(also).pipe(
    Effect.mapError((e) => new UserError({ message: `${e.message}: run the export again (it fetches what the remote lake lacks)` })),
    Effect.flatMap((files) => Console.log(`\nuploaded ${files} files and their commit-log entries to ${remote.url}`))
  )

/**
 * What --follow says: the first round catches up (it may take hours), with its plan and progress
 * as a plain export's; later rounds say one line each, and a chain that stops growing is said so
 * (the embedded devnet never grows: silence looked like a hang).
 */
const followLines = (o: ExportFlags, poll: Duration.Duration, pollText: string, retries: RetriesService) => {
  const catchUp = stderrProgress({ tty: false, names: Option.getOrUndefined(o.datasets), retried: retries.counts })
  const roundRetried = retriedSinceLast(retries)
  let caughtUp = false
  let saidWaiting = 0
  const observer: ExportObserver = {
    notice: (m) => process.stderr.write(m + "\n"),
    planned: (name, plan) => (caughtUp ? undefined : catchUp.observer.planned?.(name, plan)),
    fetched: (name, n) => (caughtUp ? undefined : catchUp.observer.fetched?.(name, n)),
    rows: (name, n) => (caughtUp ? undefined : catchUp.observer.rows?.(name, n)),
    done: (name, result) => (caughtUp ? undefined : catchUp.observer.done?.(name, result))
  }
  const onCompacted = (reports: ReadonlyArray<DatasetCompaction>) => {
    for (const r of reports) if (r.merged.length > 0) console.log(`${new Date().toISOString()} compacted ${compactionLine(r)}`)
  }
  const onWaiting = (tip: number, since: Date) => {
    // first after 5 s (or 5 polls) without a new block, then once a minute
    if (Date.now() - saidWaiting < 60_000 || Date.now() - since.getTime() < Math.max(5_000, 5 * Duration.toMillis(poll))) return
    saidWaiting = Date.now()
    console.error(`${new Date().toISOString()} at height ${tip}: no new blocks since ${since.toISOString()}, polling every ${pollText}`)
  }
  const onRound = (r: ExportReport) => {
    // the catching-up round's total line, once
    if (!caughtUp) catchUp.stop()
    caughtUp = true
    const rows = r.datasets.map((d) => `${d.dataset} +${d.rows}`).join(", ")
    // the height exported to: the tip, or --until-height below it (the line said the tip, past the height asked for)
    const until = Option.getOrUndefined(o.untilHeight)
    const reached = r.writtenTo ?? r.tip
    console.log(
      `${new Date().toISOString()} height ${until === undefined ? reached : Math.min(reached, until)}: ${rows}${retriedClause(roundRetried())}`
    )
  }
  return { observer, onCompacted, onWaiting, onRound }
}

/** The datasets' parameters the flags give (--denoms). */
const exportParams = (o: ExportFlags) => Option.match(o.denoms, { onNone: () => ({}), onSome: (denoms) => ({ denoms }) })

/** `export --follow`: rounds until stopped or --until-height. */
const follow = (o: ExportFlags, target: ExportTarget, run: ExportRun) =>
  Effect.gen(function* () {
    // (checked by validate)
    const pollText = Option.getOrElse(o.poll, () => "2s")
    const poll = parseEvery(pollText)!
    const { observer, ...say } = followLines(o, poll, pollText, run.retries)
    const last = yield* followExport(
      EXPORTED_DATASETS,
      {
        datasets: Option.getOrUndefined(o.datasets),
        params: exportParams(o),
        fromHeight: Option.getOrUndefined(o.fromHeight),
        pageSize: o.pageSize,
        concurrency: o.concurrency,
        onInvalid: o.onInvalid,
        adoptLake: o.adoptLake,
        onReorg: o.onReorg,
        observer: run.observe(observer)
      },
      {
        poll,
        untilHeight: Option.getOrUndefined(o.untilHeight),
        // an s3:// run's work folder holds no committed files to merge: `chain-lake compact` does that
        compactAfter: target.s3Url ? 0 : o.compactAfter,
        ...say
      }
    ).pipe(Effect.provide(run.layer), run.onStopped, Effect.mapError(exportFailure(o.onInvalid)), run.onFailed)
    // reached --until-height: read the commit log back, as a plain export does (a follow stopped by Ctrl-C is not)
    if (target.remote) yield* uploaded(target.remote)
    if (Option.isSome(o.untilHeight))
      yield* Console.error(
        `followed up to --until-height ${o.untilHeight.value}${last ? heldAbove(last, o.untilHeight.value) : ""} → ${o.out}`
      )
  })

/** The requests a run asked again after a transient failure, by why: a server that limits the run's rate slows it down. */
const exportRetriedLine = (retried: RetryCounts) =>
  retriedLine(retried, "the indexer limits the rate (429); a lower --rps or --concurrency may run as fast with fewer waits")

/** Said where the lake holds heights above those a run was asked for (it keeps them: a lower bound exports, never drops). */
const heldAbove = (report: ExportReport, upTo: number) => (report.heldTo > upTo ? ` (the lake holds up to ${report.heldTo})` : "")

/** A dry run's plan, and the Parquet schema of each dataset it would write. */
const printPlan = (report: ExportReport) =>
  Effect.gen(function* () {
    yield* Console.log(`Plan (dry run, nothing written) for ${report.chainId} at height ${report.tip}:`)
    for (const p of report.plans)
      yield* Console.log(
        `  ${p.dataset}: ${p.kind === "snapshot" ? `snapshot at ${p.watermark}` : `${p.todo} ${p.unit}s in ${p.shards} shards, ~${p.estimatedRequests} requests (${p.done} already committed)`}`
      )
    for (const d of EXPORTED_DATASETS.filter((d) => report.plans.some((p) => p.dataset === d.name))) {
      yield* Console.log(
        `\n${d.name} (${d.kind === "append" ? "partitioned by height_bucket" : "partitioned by snapshot_height"}): ${d.description}`
      )
      for (const c of d.columns) yield* Console.log(`  ${c.name.padEnd(26)} ${c.type.padEnd(14)} ${c.description}`)
    }
  })

/** The end of a plain export: its summary (a table, or one JSON object for a log reader), and for an s3:// run what went up. */
const printSummary = (
  o: ExportFlags,
  target: ExportTarget,
  report: ExportReport,
  run: { readonly report: string; readonly seconds: number; readonly retried: RetryCounts }
) =>
  Effect.gen(function* () {
    const { report: runReport, seconds, retried } = run
    const shown = target.s3Url ?? target.out
    if (logsAreJson()) {
      // the summary as one JSON object: what the run report holds, for a log reader
      yield* Console.log(
        JSON.stringify({
          time: new Date().toISOString(),
          level: "info",
          event: "summary",
          chain_id: report.chainId,
          tip: report.tip,
          held_to: report.heldTo,
          seconds,
          out: shown,
          run_report: runReport,
          retried,
          datasets: report.datasets
        })
      )
      if (target.remote) yield* uploaded(target.remote, [runReport])
      return
    }
    yield* Console.log(summaryTable(report.datasets, seconds))
    if (retriedTotal(retried) > 0) yield* Console.log(`\n${exportRetriedLine(retried)}`)
    if (target.remote) yield* uploaded(target.remote, [runReport])
    // the heights this run was asked for, not the chain's tip
    const reached = report.writtenTo ?? report.tip
    const upTo = Option.isSome(o.toHeight) ? Math.min(o.toHeight.value, reached) : reached
    const from = Option.getOrUndefined(o.fromHeight)
    // a range above the tip matched nothing: said as such, not as heights that count down
    const span =
      from === undefined
        ? `up to height ${upTo}${heldAbove(report, upTo)}`
        : from > upTo
          ? `nothing at heights ${from}${Option.isSome(o.toHeight) ? `..${o.toHeight.value}` : " and up"} (the tip is ${report.tip})`
          : `heights ${from}..${upTo}${heldAbove(report, upTo)}`
    // snapshots are of the watermark, whatever the heights asked for: said where a range was asked
    const ranged = from !== undefined || Option.isSome(o.toHeight)
    const snapshots = report.datasets.filter((d) => d.snapshotHeight !== undefined && d.rows > 0)
    const taken =
      ranged && snapshots.length > 0 ? `, ${snapshots.map((d) => `${d.dataset} snapshot at ${d.snapshotHeight}`).join(", ")}` : ""
    yield* Console.log(`\n${report.chainId} ${span}${taken} in ${seconds.toFixed(1)} s → ${shown} (run report in _runs/)`)
  })

export const exportCommand = Command.make("export", options, (o) =>
  Effect.gen(function* () {
    yield* validate(o)
    const target = yield* exportTarget(o)
    const devnet = o.devnet && { seed: Option.getOrElse(o.devnetSeed, () => 1), blocks: Option.getOrElse(o.devnetBlocks, () => 1000) }
    const indexer = yield* endpointOrDevnet("indexer", o.indexerUrl, o.header, "exporting", devnet)
    const run = exportRun(o, target, indexer)
    if (o.follow) return yield* follow(o, target, run)
    const progress = stderrProgress({ names: Option.getOrUndefined(o.datasets), retried: run.retries.counts })
    const started = Date.now()
    const report: ExportReport = yield* runExport(DATASETS, {
      datasets: Option.getOrUndefined(o.datasets),
      params: exportParams(o),
      fromHeight: Option.getOrUndefined(o.fromHeight),
      toHeight: Option.getOrUndefined(o.toHeight),
      pageSize: o.pageSize,
      concurrency: o.concurrency,
      onInvalid: o.onInvalid,
      dryRun: o.dryRun,
      adoptLake: o.adoptLake,
      onReorg: o.onReorg,
      observer: run.observe(progress.observer)
    }).pipe(
      Effect.provide(run.layer),
      Effect.ensuring(Effect.sync(() => progress.stop())),
      run.onStopped,
      Effect.mapError(exportFailure(o.onInvalid)),
      run.onFailed
    )
    const seconds = (Date.now() - started) / 1000
    if (o.dryRun) return yield* printPlan(report)
    const retried = run.retries.counts()
    const runReport = yield* writeExportReport(target.out, report, { indexerUrl: indexer.baseUrl, seconds, retried })
    yield* printSummary(o, target, report, { report: runReport, seconds, retried })
  }).pipe(
    Effect.scoped,
    Effect.onInterrupt(() => Console.error(stoppedLines(o.out)))
  )
).pipe(
  Command.withDescription(
    "Export indexer datasets to Parquet (resumable; rerun to continue or to catch up with the chain). Ctrl-C commits what was read, then exits 130; twice stops at once"
  )
)
