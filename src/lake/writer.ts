/** What writing into a lake needs, as one layer: the Parquet sink (spilling inside the lake) and the lake's checkpoints. */
import { Layer } from "effect"
import { DEFAULTS } from "../defaults.js"
import { layerCheckpoints, scratchFolder, type CheckpointsOptions } from "./Checkpoints.js"
import { layerParquetSink } from "./ParquetSink.js"

const MB = 1024 * 1024

/** "400MB", "1.5GB", "512M", "2G" or plain bytes → bytes; undefined when it is none of those. */
export const parseMemorySize = (text: string): number | undefined => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$/i.exec(text)
  if (!m) return undefined
  const unit = (m[2] ?? "b").toLowerCase()[0]
  return Math.floor(Number(m[1]) * (unit === "g" ? 1024 * MB : unit === "m" ? MB : unit === "k" ? 1024 : 1))
}

/**
 * How a run's memory limit is shared. DuckDB gets 40% (its memory_limit: staged rows, COPY's
 * buffers); what all writers stage together is held to 15% (inside DuckDB's share, where staged
 * strings take more room than their text), and files are written (COPY) one per 64 MB of DuckDB's
 * share at a time, each building its row groups in what is left; the rest is Node's: pages in
 * flight (page size × concurrency), their parsing, and the runtime itself (bench/RESULTS.md).
 * (20% staged and COPYs without limit failed 2 runs of 3 at 400MB, 50k blocks, with DuckDB's
 * out-of-memory.)
 */
export const sinkMemory = (limitBytes: number) => {
  const duckdbMb = Math.max(64, Math.floor((limitBytes * 0.4) / MB))
  return { memoryLimit: `${duckdbMb}MiB`, stagingBudget: Math.floor(limitBytes * 0.15), copies: Math.max(1, Math.floor(duckdbMb / 64)) }
}

/** The sink and checkpoints of the lake at `out`, within `memoryLimitBytes` (default DEFAULTS.memoryLimit); DuckDB spills into `out/.chain-lake/tmp/`, never into the working directory. */
export const layerLakeWriter = (out: string, options: CheckpointsOptions & { readonly memoryLimitBytes?: number } = {}) =>
  Layer.mergeAll(
    layerParquetSink({ tempDirectory: scratchFolder(out), ...sinkMemory(options.memoryLimitBytes ?? parseMemorySize(DEFAULTS.memoryLimit)!) }),
    layerCheckpoints(out, options)
  )
