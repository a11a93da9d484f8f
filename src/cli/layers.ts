/** Builds the service layers the commands need from flags: HTTP (undici), limits, clients. */
import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { layerRequestLimiter, type LimiterConfig, DEFAULT_LIMITS } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, type RetryPolicy } from "../http/retry.js"
import { layerIndexerClient } from "../indexer/IndexerClient.js"

export const indexerLayer = (baseUrl: string, limits: LimiterConfig = DEFAULT_LIMITS, retry: RetryPolicy = DEFAULT_RETRY) =>
  layerIndexerClient({ baseUrl, retry }).pipe(Layer.provide(Layer.mergeAll(NodeHttpClient.layerUndici, layerRequestLimiter(limits))))
