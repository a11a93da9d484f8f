/** Builds the service layers the commands need from flags: HTTP (undici), limits, clients, sink. */
import { Layer } from "effect"
import type { CheckpointsOptions } from "../lake/Checkpoints.js"
import { layerLakeWriter } from "../lake/writer.js"
import { DEFAULT_LIMITS, layerRequestLimiter, type LimiterConfig } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, type RetryPolicy } from "../http/retry.js"
import { plainEndpoint, type ServiceEndpoint } from "../http/endpoint.js"
import { layerHttpTransport } from "../http/transport.js"
import { layerIndexerClient } from "../indexer/IndexerClient.js"
import { layerIndexerSource } from "../sources/indexer.js"

/** The indexer client for `endpoint` (a plain URL for the devnet and tests), over its own transport carrying the endpoint's credentials. */
export const indexerLayer = (
  endpoint: ServiceEndpoint | string,
  limits: LimiterConfig = DEFAULT_LIMITS,
  retry: RetryPolicy = DEFAULT_RETRY,
  maxPageMb?: number
) => {
  const e = typeof endpoint === "string" ? plainEndpoint(endpoint) : endpoint
  return layerIndexerClient({ baseUrl: e.baseUrl, retry }).pipe(
    Layer.provide(Layer.mergeAll(layerHttpTransport(e, { maxPageMb }), layerRequestLimiter(limits)))
  )
}

/** Everything `runExport` needs: the indexer as its Source (and its client), the Parquet sink and the checkpoints of `out`. */
export const exportLayer = (
  options: {
    indexerUrl: ServiceEndpoint | string
    out: string
    limits?: LimiterConfig
    retry?: RetryPolicy
    maxPageMb?: number
    memoryLimitBytes?: number
  } & CheckpointsOptions
) =>
  Layer.mergeAll(
    layerIndexerSource.pipe(Layer.provideMerge(indexerLayer(options.indexerUrl, options.limits, options.retry, options.maxPageMb))),
    layerLakeWriter(options.out, options)
  )
