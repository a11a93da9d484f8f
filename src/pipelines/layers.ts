/**
 * The one place services are wired into layers: HTTP (undici) with each service's credentials,
 * the shared request limiter, the API clients, the indexer as the engine's source, the lake's sink
 * and manifests, and shard workers. The CLI and the public API (src/index.ts) re-export these;
 * runPipeline builds its services from them.
 */
import { DATASETS } from "../datasets/index.js"
import { createHash, randomUUID } from "node:crypto"
import { existsSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from "node:fs"
import { createRequire } from "node:module"
import { threadId } from "node:worker_threads"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Effect, Layer } from "effect"
import { ShardWorkers } from "../engine/workers.js"
import { defaultMemoryLimit, layerLake, MIN_MEMORY_LIMIT_BYTES, parseMemorySize, PROCESS_BASE_BYTES } from "../lake/writer.js"
import type { ManifestsOptions } from "../lake/Manifests.js"
import { DEFAULT_LIMITS, layerRequestLimiter, RequestLimiter, type LimiterConfig } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, type RetryPolicy } from "../http/retry.js"
import { Retries, retriesIn, type RetriesService } from "../http/Retries.js"
import { plainServiceUrl, type ServiceUrl } from "../http/serviceUrl.js"
import { layerHttpTransport } from "../http/transport.js"
import { layerIndexerClient } from "../indexer/IndexerClient.js"
import { layerRouterClient } from "../router/RouterClient.js"
import { layerIndexerSource } from "../drivers/indexer.js"

/** A service URL as given: a plain URL (the devnet, tests) has no credentials. */
const serviceUrlOf = (url: ServiceUrl | string): ServiceUrl => (typeof url === "string" ? plainServiceUrl(url) : url)

/** Limits as given: a limiter's settings (a limiter of its own), or a limiter layer shared with other clients. */
const limiterOf = (limits: LimiterConfig | Layer.Layer<RequestLimiter>): Layer.Layer<RequestLimiter> =>
  Layer.isLayer(limits) ? (limits as Layer.Layer<RequestLimiter>) : layerRequestLimiter(limits as LimiterConfig)

/** A client's dependencies, with the tally it counts its requests asked again into where one is given. */
const countingInto = <A>(needs: Layer.Layer<A>, retries: RetriesService | undefined) =>
  retries ? Layer.merge(needs, Layer.succeed(Retries, retries)) : needs

/** The indexer client for `endpoint` (a plain URL for the devnet and tests), over its own transport carrying the endpoint's credentials. */
export const indexerLayer = (
  endpoint: ServiceUrl | string,
  limits: LimiterConfig | Layer.Layer<RequestLimiter> = DEFAULT_LIMITS,
  retry: RetryPolicy = DEFAULT_RETRY,
  maxPageMb?: number,
  /** where its requests asked again are counted (none: not counted) */
  retries?: RetriesService
) => {
  const e = serviceUrlOf(endpoint)
  const needs = Layer.mergeAll(layerHttpTransport(e, { maxPageMb }), limiterOf(limits))
  return layerIndexerClient({ baseUrl: e.baseUrl, retry }).pipe(Layer.provide(countingInto(needs, retries)))
}

/** The router client for `endpoint` (a plain URL for the devnet and tests), over its own transport carrying the endpoint's credentials. */
export const routerLayer = (
  endpoint: ServiceUrl | string,
  limits: LimiterConfig | Layer.Layer<RequestLimiter> = DEFAULT_LIMITS,
  retry: RetryPolicy = DEFAULT_RETRY,
  /** where its requests asked again are counted (none: not counted) */
  retries?: RetriesService
) => {
  const e = serviceUrlOf(endpoint)
  const needs = Layer.mergeAll(layerHttpTransport(e), limiterOf(limits))
  return layerRouterClient({ baseUrl: e.baseUrl, retry }).pipe(Layer.provide(countingInto(needs, retries)))
}

/** What a shard worker builds its source and sink from (src/cli/shard-worker.ts): plain data, cloned into the worker. */
export interface ShardWorkerConfig {
  readonly endpoint: ServiceUrl
  readonly limits?: LimiterConfig
  readonly retry?: RetryPolicy
  readonly maxPageMb?: number
  /** the run's tally of requests asked again (Retries' shared memory): the worker counts into it (none: a tally of its own) */
  readonly retries?: SharedArrayBuffer
  readonly out: string
  /** the worker's share of the run's --memory-limit: its sink and its pages in flight are sized by it */
  readonly memoryLimitBytes: number
  /** the run's whole --memory-limit: the process's RSS, which every thread's counts in, is measured against it */
  readonly runMemoryLimitBytes: number
}

/**
 * A shard worker's share of the run's memory limit, as the limit its sink is sized by (sinkMemory):
 * what the process base leaves, shared by the workers and the run's own thread alike.
 */
export const workerMemoryBytes = (limitBytes: number, workers: number) =>
  PROCESS_BASE_BYTES + Math.floor(Math.max(0, limitBytes - PROCESS_BASE_BYTES) / (workers + 1))

/** The smallest --memory-limit that gives each of `workers` workers (and the run's thread) a share an export fits in (MIN_MEMORY_LIMIT_BYTES). */
export const smallestLimitForWorkers = (workers: number) =>
  PROCESS_BASE_BYTES + (workers + 1) * (MIN_MEMORY_LIMIT_BYTES - PROCESS_BASE_BYTES)

/**
 * The module shard workers run (src/cli/shard-worker.ts, an entry of its own): built beside the
 * CLI and the library (scripts/build.mjs: every chunk of a bundle sits in one folder), or bundled
 * from the sources on first use.
 */
export const shardWorkerModule = (): URL => {
  const built = new URL("./shard-worker.js", import.meta.url)
  if (existsSync(fileURLToPath(built))) return built
  devBundle ??= bundleShardWorker()
  return devBundle
}

/**
 * src/cli/shard-worker.ts bundled with its dependencies but for those loaded where used, as the
 * built CLI's worker has them (scripts/build.mjs, scripts/bundle-options.cjs): ready in ~0.35 s,
 * where importing them module by module took ~0.6 s. Bundling takes 0.4–1.7 s, so the bundle is
 * kept in the project's node_modules/.cache/chain-lake (there its imports of packages resolve),
 * named by what it is made of (the sources' files and times, the bundle options' and installed
 * packages' times): made once per state of the sources, and shared by every process run from
 * them; one not used for a week is removed.
 */
const bundleShardWorker = (): URL => {
  const source = fileURLToPath(new URL("../cli/shard-worker.ts", import.meta.url))
  const root = join(dirname(source), "..", "..")
  const folder = join(root, "node_modules", ".cache", "chain-lake")
  const options = join(root, "scripts", "bundle-options.cjs")
  const made = [root, filesAndTimes(join(root, "src")), timeOf(options), timeOf(join(root, "node_modules", ".package-lock.json"))]
  const out = join(folder, `shard-worker-${createHash("sha256").update(JSON.stringify(made)).digest("hex").slice(0, 16)}.mjs`)
  const now = new Date()
  if (existsSync(out)) {
    utimesSync(out, now, now)
    return pathToFileURL(out)
  }
  // written whole or not at all: other processes may be reading the folder
  const partial = `${out}.${process.pid}-${threadId}-${randomUUID()}.tmp`
  // required here, not imported by the module: a built CLI and its workers never bundle, and
  // loading esbuild's package (and Node's scan of its CommonJS for named exports) cost every
  // start ~20 ms
  const { buildSync } = createRequire(import.meta.url)("esbuild") as typeof import("esbuild")
  const bundleOptions = createRequire(import.meta.url)(options) as {
    readonly external: Array<string>
    readonly requireBanner: string
  }
  buildSync({
    entryPoints: [source],
    outfile: partial,
    bundle: true,
    format: "esm",
    platform: "node",
    // as scripts/build.mjs bundles the CLI's
    external: bundleOptions.external,
    banner: { js: bundleOptions.requireBanner },
    logLevel: "error"
  })
  renameSync(partial, out)
  for (const f of readdirSync(folder))
    if (f.startsWith("shard-worker-") && now.getTime() - timeOf(join(folder, f)) > UNUSED_BUNDLE_MS)
      rmSync(join(folder, f), { force: true })
  return pathToFileURL(out)
}

const UNUSED_BUNDLE_MS = 7 * 24 * 3600 * 1000

/** The files under `folder`: how many, and the sum and the newest of their change times. */
const filesAndTimes = (folder: string): [number, number, number] => {
  const all: [number, number, number] = [0, 0, 0]
  for (const e of readdirSync(folder, { withFileTypes: true, recursive: true }))
    if (e.isFile()) {
      const t = timeOf(join(e.parentPath, e.name))
      all[0]++
      all[1] += t
      all[2] = Math.max(all[2], t)
    }
  return all
}

/** A file's change time in ms; 0 where it is missing. */
const timeOf = (path: string) => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0

let devBundle: URL | undefined

/** a TypeScript loader's package, as `--import`, `--require` or `--loader` name it */
const TYPESCRIPT_LOADER = /^(tsx|ts-node|@swc-node\/register|esbuild-register)(\/|$)/
const LOADER_FLAGS = new Set(["--import", "--require", "-r", "--loader", "--experimental-loader"])

/**
 * The process's Node flags a shard worker takes: all but the TypeScript loader the process may run
 * under (`node --import tsx`, as the bench and a library caller's TypeScript do), and
 * `--input-type`. The worker's module is plain JavaScript (built or bundled): the loader, which a
 * worker takes from its process by default, cost each worker's start 0.8–0.9 s on Node 22 and 24 (0.07 s
 * on 20); `--input-type` speaks of the process's `-e` script, and a worker given it fails to start.
 * Undefined where there is none to leave out (the worker takes the process's flags as Node gives them).
 */
export const workerFlags = (execArgv: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const kept: Array<string> = []
  for (let i = 0; i < execArgv.length; i++) {
    const joined = execArgv[i].includes("=")
    const [flag, value] = joined ? execArgv[i].split(/=(.*)/s) : [execArgv[i], execArgv[i + 1]]
    const loader = LOADER_FLAGS.has(flag) && value !== undefined && TYPESCRIPT_LOADER.test(value)
    if (flag === "--input-type" || loader) i += joined ? 0 : 1
    else kept.push(execArgv[i])
  }
  return kept.length < execArgv.length ? kept : undefined
}

/**
 * Shard workers for an export (--workers N; 0: the shards run in the run's thread): each with its
 * share of the memory limit, passing through `limiter` (the run's request limiter) for every
 * request it makes.
 */
export const layerShardWorkers = (
  count: number,
  options: Omit<ShardWorkerConfig, "endpoint" | "memoryLimitBytes" | "runMemoryLimitBytes" | "retries"> & {
    readonly indexerUrl: ServiceUrl | string
    readonly memoryLimitBytes: number
  },
  limiter: Layer.Layer<RequestLimiter>,
  /** the run's tally of requests asked again, which the workers count into (none: not counted) */
  retries?: RetriesService
) =>
  Layer.effect(
    ShardWorkers,
    Effect.map(RequestLimiter, (requests) => {
      const endpoint = serviceUrlOf(options.indexerUrl)
      const config = (): ShardWorkerConfig => ({
        endpoint,
        limits: options.limits,
        retry: options.retry,
        maxPageMb: options.maxPageMb,
        ...(retries ? { retries: retries.buffer } : {}),
        // absolute, as the run's own lake (lake/writer.ts layerLake): a worker's DuckDB read "~/lake" as the home folder's
        out: resolve(options.out),
        memoryLimitBytes: workerMemoryBytes(options.memoryLimitBytes, count),
        runMemoryLimitBytes: options.memoryLimitBytes
      })
      return {
        count,
        module: shardWorkerModule,
        config,
        gates: { requests: requests.run },
        datasets: DATASETS,
        execArgv: workerFlags(process.execArgv)
      }
    })
  ).pipe(Layer.provide(limiter))

/** Everything `runExport` needs: the indexer as its Source (and its client), the Parquet sink and the manifests of `out`. */
export const exportLayer = (
  options: {
    indexerUrl: ServiceUrl | string
    out: string
    limits?: LimiterConfig
    retry?: RetryPolicy
    maxPageMb?: number
    memoryLimitBytes?: number
    /** shard workers (threads) to run the shards in; none: the run's own thread */
    workers?: number
    /** where the run counts its requests asked again (default: a tally of its own, among the layer's services) */
    retries?: RetriesService
  } & ManifestsOptions
) => {
  // one limiter and one memory limit for the run's thread and its shard workers
  const limiter = layerRequestLimiter(options.limits ?? DEFAULT_LIMITS)
  // one tally of the requests asked again, the workers' too (Retries is among what the layer gives)
  const retries = options.retries ?? retriesIn()
  const memoryLimitBytes = options.memoryLimitBytes ?? parseMemorySize(defaultMemoryLimit())!
  return Layer.mergeAll(
    layerIndexerSource.pipe(Layer.provideMerge(indexerLayer(options.indexerUrl, limiter, options.retry, options.maxPageMb, retries))),
    layerLake(options.out, { ...options, memoryLimitBytes }),
    layerShardWorkers(options.workers ?? 0, { ...options, memoryLimitBytes }, limiter, retries),
    Layer.succeed(Retries, retries)
  )
}

/**
 * What a pipeline run needs: the indexer as the export's source, the router client and the lake of
 * `out`; each service over its own transport (its credentials go to it alone), both through one
 * request limiter.
 */
export const pipelineLayer = (options: {
  readonly indexerUrl: ServiceUrl | string
  readonly routerUrl: ServiceUrl | string
  readonly out: string
  /** where both clients count their requests asked again (none: not counted) */
  readonly retries?: RetriesService
}) => {
  const limiter = layerRequestLimiter()
  return Layer.mergeAll(
    layerIndexerSource.pipe(Layer.provide(indexerLayer(options.indexerUrl, limiter, DEFAULT_RETRY, undefined, options.retries))),
    routerLayer(options.routerUrl, limiter, DEFAULT_RETRY, options.retries),
    layerLake(options.out)
  )
}
