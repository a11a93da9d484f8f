/** The router client layer (undici HTTP, shared limits) for commands and tests. */
import { Layer } from "effect"
import { DEFAULT_LIMITS, layerRequestLimiter, type LimiterConfig } from "../http/RequestLimiter.js"
import { DEFAULT_RETRY, type RetryPolicy } from "../http/retry.js"
import { plainServiceUrl, type ServiceUrl } from "../http/serviceUrl.js"
import { layerHttpTransport } from "../http/transport.js"
import { layerRouterClient } from "../router/RouterClient.js"

/** The router client for `endpoint` (a plain URL for the devnet and tests), over its own transport carrying the endpoint's credentials. */
export const routerLayer = (endpoint: ServiceUrl | string, limits: LimiterConfig = DEFAULT_LIMITS, retry: RetryPolicy = DEFAULT_RETRY) => {
  const e = typeof endpoint === "string" ? plainServiceUrl(endpoint) : endpoint
  return layerRouterClient({ baseUrl: e.baseUrl, retry }).pipe(
    Layer.provide(Layer.mergeAll(layerHttpTransport(e), layerRequestLimiter(limits)))
  )
}
