/** The router client layer (undici HTTP, shared limits) for commands and tests. */
import { Layer } from "effect"
import { DEFAULT_LIMITS, layerRequestLimiter, type LimiterConfig } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, type RetryPolicy } from "../http/retry.js"
import { layerHttpTransport } from "../http/transport.js"
import { layerRouterClient } from "../router/RouterClient.js"

export const routerLayer = (baseUrl: string, limits: LimiterConfig = DEFAULT_LIMITS, retry: RetryPolicy = DEFAULT_RETRY) =>
  layerRouterClient({ baseUrl, retry }).pipe(Layer.provide(Layer.mergeAll(layerHttpTransport(), layerRequestLimiter(limits))))
