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

/** What a run needs whatever its limit: the runtime and the code of Node and DuckDB (~100 MB: the CLI loaded peaks at ~96 MB, `query` with DuckDB at ~126 MB). No share of the limit goes to it. */
export const PROCESS_BASE_BYTES = 100 * MB

/**
 * How a run's memory limit is shared, once the process base is set aside. DuckDB gets 40% of the
 * rest (its memory_limit: staged rows, COPY's buffers; 64 MB at least); what all writers stage
 * together is held to a third of that 40% (DuckDB holds staged text at 1.1–1.6× its size,
 * measured, which leaves room for the COPYs; below ~260MB, where DuckDB keeps its floor, less than
 * a third of the floor), and files are written (COPY) one per 64 MB of DuckDB's share at a time,
 * each building its row groups in what is left; the rest is meant for Node: pages in flight (page
 * size × concurrency) and their parsing. At 400MB: DuckDB 120 MB, 40 MB staged, and peaks of
 * 461–492 MB at 50k blocks (past that limit), 15 runs of 15 (40% and 15% of the whole limit:
 * 523–540 MB; DuckDB at 64 MB failed 1 run in 5 with its out-of-memory; bench/RESULTS.md, session 13).
 */
export const sinkMemory = (limitBytes: number) => {
  const duckdbBytes = Math.max(0, limitBytes - PROCESS_BASE_BYTES) * 0.4
  const duckdbMb = Math.max(64, Math.floor(duckdbBytes / MB))
  return { memoryLimit: `${duckdbMb}MiB`, stagingBudget: Math.floor(duckdbBytes / 3), copies: Math.max(1, Math.floor(duckdbMb / 64)) }
}

/** The sink and checkpoints of the lake at `out`, within `memoryLimitBytes` (default DEFAULTS.memoryLimit); DuckDB spills into `out/.chain-lake/tmp/`, never into the working directory. */
export const layerLakeWriter = (out: string, options: CheckpointsOptions & { readonly memoryLimitBytes?: number } = {}) =>
  Layer.mergeAll(
    layerParquetSink({ tempDirectory: scratchFolder(out), ...sinkMemory(options.memoryLimitBytes ?? parseMemorySize(DEFAULTS.memoryLimit)!) }),
    layerCheckpoints(out, options)
  )
