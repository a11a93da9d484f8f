/**
 * The module each shard worker runs (export --workers N): the indexer as its source, through the
 * run's request limiter (a gate of the run's thread: without a rate, a count of permits, whose
 * passes a shard keeps for its next requests), and a Parquet sink and a page budget of its own,
 * sized by its share of the run's memory, spilling inside the lake.
 */
import { Layer } from "effect"
import { DATASETS } from "../datasets/index.js"
import { serveShards } from "../engine/shardWorker.js"
import { DEFAULT_LIMITS, RequestLimiter } from "../http/RequestLimiter.js"
import { retriesIn } from "../http/Retries.js"
import { scratchFolder } from "../lake/Manifests.js"
import { layerParquetSink } from "../lake/ParquetSink.js"
import { RunMemory, runMemory, sinkMemory } from "../lake/writer.js"
import { PageBudget, runPageBudget } from "../engine/pageBudget.js"
import { indexerLayer, type ShardWorkerConfig } from "./layers.js"
import { layerIndexerSource } from "../drivers/indexer.js"

serveShards<ShardWorkerConfig, unknown>({
  datasets: DATASETS,
  layer: (config, gate) => {
    const limits = config.limits ?? DEFAULT_LIMITS
    return Layer.mergeAll(
      layerIndexerSource.pipe(
        Layer.provide(
          indexerLayer(
            config.endpoint,
            Layer.succeed(RequestLimiter, { config: limits, run: gate("requests", limits.rps > 0 ? "each" : "kept") }),
            config.retry,
            config.maxPageMb,
            retriesIn(config.retries)
          )
        )
      ),
      layerParquetSink({ tempDirectory: scratchFolder(config.out), ...sinkMemory(config.memoryLimitBytes) }),
      Layer.effect(PageBudget, runPageBudget(limits.concurrency)).pipe(
        // (RSS is the process's: measured against the run's whole limit, not this worker's share)
        Layer.provide(Layer.succeed(RunMemory, runMemory(config.runMemoryLimitBytes, config.memoryLimitBytes)))
      )
    )
  }
})
