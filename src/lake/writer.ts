/** What writing into a lake needs, as one layer: the Parquet sink (spilling inside the lake) and the lake's checkpoints. */
import { readFileSync } from "node:fs"
import { totalmem } from "node:os"
import { join } from "node:path"
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
 * The memory limit of the container (cgroup) this process runs in, in bytes, or undefined where
 * none is set: cgroup v2's `memory.max` ("max": none), else v1's `memory/memory.limit_in_bytes`
 * (a value past the machine's memory: none). `root` is where cgroups are mounted.
 */
export const containerMemoryBytes = (root = "/sys/fs/cgroup"): number | undefined => {
  for (const file of ["memory.max", "memory/memory.limit_in_bytes"]) {
    let text: string
    try {
      text = readFileSync(join(root, file), "utf8").trim()
    } catch {
      continue
    }
    const bytes = Number(text)
    return Number.isSafeInteger(bytes) && bytes > 0 && bytes < totalmem() ? bytes : undefined
  }
  return undefined
}

/**
 * The default --memory-limit: 80% of the container's limit where one is set (the rest is headroom:
 * the limit is what the kernel kills at, and chain-lake's is a target it may pass by a little),
 * never below 256MB; else DEFAULTS.memoryLimit.
 */
export const defaultMemoryLimit = (root?: string): string => {
  const container = containerMemoryBytes(root)
  return container === undefined ? DEFAULTS.memoryLimit : `${Math.max(256, Math.floor((container * 0.8) / MB))}MB`
}

/** What a run needs whatever its limit: the runtime and the code of Node and DuckDB (~100 MB: the CLI loaded peaks at ~96 MB, `query` with DuckDB at ~126 MB). No share of the limit goes to it. */
export const PROCESS_BASE_BYTES = 100 * MB

/**
 * What a COPY of txs rows to Parquet holds in DuckDB beside the staged table, whatever the
 * table's size (its JSON casts and row groups): at a 64 MiB limit a 12 MB table copied and a
 * 14.5 MB one ran out of memory; at 80 MiB a 31 MB one copied (one thread; bench/RESULTS.md).
 */
const COPY_FIXED_MB = 56
/** DuckDB's share is never less: at 64 MiB a txs export at page 1000 failed with its out-of-memory even at --concurrency 1. */
export const DUCKDB_FLOOR_MB = 96

/**
 * How a run's memory limit is shared, once the process base is set aside. DuckDB gets 40% of the
 * rest (its memory_limit: staged rows, COPY's buffers; DUCKDB_FLOOR_MB at least); what all
 * writers stage together is held to a third of that 40%, and to half of what a COPY leaves of
 * DuckDB's share (DuckDB holds staged text at 1.1–1.6× its size, measured); files are written
 * (COPY) as many at a time as COPY_FIXED_MB each fits beside what is staged;
 * the rest is meant for Node: pages in flight (page size × concurrency) and their parsing. At
 * 400MB: DuckDB 120 MB, 32 MB staged; peaks of a txs export at page 1000 × concurrency 16 are
 * ~440–480 MB at 50k blocks, past that limit (bench/RESULTS.md).
 */
export const sinkMemory = (limitBytes: number) => {
  const shareMb = (Math.max(0, limitBytes - PROCESS_BASE_BYTES) * 0.4) / MB
  const duckdbMb = Math.max(DUCKDB_FLOOR_MB, Math.floor(shareMb))
  // a third of the share, and never more than half of what a COPY leaves of DuckDB's memory
  const stagingMb = Math.min(shareMb / 3, (duckdbMb - COPY_FIXED_MB) / 2)
  // as many COPYs at once as their fixed share fits beside what is staged
  return {
    memoryLimit: `${duckdbMb}MiB`,
    stagingBudget: Math.floor(stagingMb * MB),
    copies: Math.max(1, Math.floor((duckdbMb - Math.max(0, stagingMb)) / COPY_FIXED_MB))
  }
}

/** The sink and checkpoints of the lake at `out`, within `memoryLimitBytes` (default defaultMemoryLimit()); DuckDB spills into `out/.chain-lake/tmp/`, never into the working directory. */
export const layerLakeWriter = (out: string, options: CheckpointsOptions & { readonly memoryLimitBytes?: number } = {}) =>
  Layer.mergeAll(
    layerParquetSink({
      tempDirectory: scratchFolder(out),
      ...sinkMemory(options.memoryLimitBytes ?? parseMemorySize(defaultMemoryLimit())!)
    }),
    layerCheckpoints(out, options)
  )
