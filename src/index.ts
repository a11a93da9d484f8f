/**
 * chain-lake's public API: what `import … from "chain-lake"` gives. Everything else under src/ is
 * internal and may change without notice; a name is public when it is exported here.
 *
 * Built by scripts/build.mjs into dist/lib/index.js (the project's own code bundled, every
 * dependency imported from its package, so an application's `effect` is the one these services are
 * built with) and dist/types/index.d.ts. Pipeline files run by `chain-lake run` get the CLI's own
 * copy of this module (src/pipelines/load.ts), wherever they are.
 */

// the typed API clients, and their layers over undici with the shared request limits and retries
export { IndexerClient, layerIndexerClient, type IndexerClientConfig, type IndexerClientService } from "./indexer/IndexerClient.js"
export {
  describeIndexerError,
  IndexerAnswerTooLarge,
  IndexerDecodeError,
  IndexerHttpError,
  IndexerNetworkError,
  IndexerPagingError,
  IndexerRequestError,
  IndexerTimeout,
  IndexerTruncatedBody,
  type IndexerError
} from "./indexer/errors.js"
export {
  layerRouterClient,
  RouterClient,
  type MsgsOptions,
  type RouterClientConfig,
  type RouterClientService
} from "./router/RouterClient.js"
// what the router's endpoints take and answer (the types the client's methods are written in)
export type {
  AssetsResponse,
  ChainsResponse,
  MsgsResponse,
  MsgsTx,
  OpHookResponse,
  RouteRequest,
  RouteResponse,
  TxStatusResponse
} from "./router/schemas.js"
export {
  describeRouterError,
  NoRouteError,
  RouterDecodeError,
  RouterFlowError,
  RouterHttpError,
  RouterNetworkError,
  RouterTimeout,
  type RouterError
} from "./router/errors.js"
export { exportLayer, indexerLayer, routerLayer } from "./pipelines/layers.js"
export { layerRetries, Retries, retriesIn, type RetriesService, type RetryCounts, type RetryReason } from "./http/Retries.js"

// the export engine and the dataset registry it exports
export { DATASETS } from "./datasets/index.js"
export type { Dataset } from "./engine/Dataset.js"
export { ExportError, runExport, type ExportObserver, type ExportOptions, type ExportReport } from "./engine/export.js"
export { followExport, type FollowOptions } from "./engine/follow.js"
export { makeStopSignal, StopSignal, type StopSignalService } from "./stop/StopSignal.js"
export { RollbackError, rollbackLake, type RollbackOptions, type RollbackReport } from "./engine/rollback.js"
export { layerLake } from "./lake/writer.js"
/** @deprecated the same layer, named `layerLake` since 0.1 (a writer is a process writing a lake) */
export { layerLake as layerLakeWriter } from "./lake/writer.js"
export { ManifestError } from "./lake/manifests/errors.js"
export { SinkError } from "./lake/sinkTypes.js"
// the router's samplers (`chain-lake sample-routes`, `chain-lake track`)
export {
  loadPlan,
  MetadataNotServedError,
  InconsistentAnswerError,
  PlanError,
  RouterRefusedError,
  RouterUnavailableError,
  sampleRound,
  sampleRoutes,
  SamplingPlan,
  type MetadataWanted,
  type RoundResult,
  type RoundWatcher
} from "./sampling/sampler.js"
export {
  TrackRegistryError,
  TrackTimeoutError,
  trackTransfer,
  WALLET_POLLING,
  type PollSchedule,
  type TrackOptions
} from "./sampling/tracker.js"

// reading the lake
export {
  Analytics,
  AnalyticsError,
  layerAnalytics,
  SqlError,
  type AnalyticsOptions,
  type AnalyticsService,
  type ParamValue,
  type QueryResult,
  type ShownRows
} from "./analytics/Analytics.js"
export { lakeSchema, UnknownSchemaName, type SchemaColumn, type SchemaEntry } from "./analytics/schema.js"

// pipelines (`chain-lake run FILE`)
export { definePipeline, PipelineError, type PipelineDefinition } from "./pipelines/definePipeline.js"

// the embedded devnet
export { startDevnet, type Devnet, type DevnetOptions } from "./devnet/index.js"
