/** The service layers the commands build from their flags, wired in src/pipelines/layers.ts (shard-worker.ts and the tests import them from here). */
export {
  exportLayer,
  indexerLayer,
  routerLayer,
  shardWorkerModule,
  smallestLimitForWorkers,
  type ShardWorkerConfig
} from "../pipelines/layers.js"
