/**
 * The module each shard worker runs (export --workers N): the indexer as its source, through the
 * run's request limiter (a gate of the run's thread), and a Parquet sink of its own, with its share
 * of the run's memory, spilling inside the lake.
 */
import { Layer } from "effect"
import { DATASETS } from "../datasets/index.js"
import { serveShards } from "../engine/shardWorker.js"
import { DEFAULT_LIMITS, RequestLimiter } from "../http/RequestLimiter.js"
import { scratchFolder } from "../lake/Checkpoints.js"
import { layerParquetSink } from "../lake/ParquetSink.js"
import { sinkMemory } from "../lake/writer.js"
import { indexerLayer, type ShardWorkerConfig } from "./layers.js"
import { layerIndexerSource } from "../sources/indexer.js"

serveShards<ShardWorkerConfig, unknown>({
  datasets: DATASETS,
  layer: (config, gate) =>
    Layer.mergeAll(
      layerIndexerSource.pipe(
        Layer.provide(
          indexerLayer(
            config.endpoint,
            Layer.succeed(RequestLimiter, { config: config.limits ?? DEFAULT_LIMITS, run: gate("requests") }),
            config.retry,
            config.maxPageMb
          )
        )
      ),
      layerParquetSink({ tempDirectory: scratchFolder(config.out), ...sinkMemory(config.memoryLimitBytes) })
    )
})
