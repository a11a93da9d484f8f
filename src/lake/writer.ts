/** What writing into a lake needs, as one layer: the Parquet sink (spilling inside the lake) and the lake's manifests. */
import { readFileSync } from "node:fs"
import { totalmem } from "node:os"
import { join, resolve } from "node:path"
import { Context, Effect, Layer } from "effect"
import { DEFAULTS } from "../defaults.js"
import { layerManifests, scratchFolder, type ManifestsOptions } from "./Manifests.js"
import { layerParquetSink } from "./ParquetSink.js"
import { ManifestError } from "./manifests/errors.js"
import { outputFolderProblem } from "./outputFolder.js"

const MB = 1024 * 1024

/** "400MB", "1.5GB", "512M", "2G", "1TB" or plain bytes → bytes; undefined when it is none of those. */
export const parseMemorySize = (text: string): number | undefined => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib|t|tb|tib)?\s*$/i.exec(text)
  if (!m) return undefined
  const unit = (m[2] ?? "b").toLowerCase()[0]
  const scale = { b: 1, k: 1024, m: MB, g: 1024 * MB, t: 1024 * 1024 * MB }[unit as "b" | "k" | "m" | "g" | "t"]
  return Math.floor(Number(m[1]) * scale)
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
 * the limit is what the kernel kills at), never below the smallest an export stays within
 * (MIN_MEMORY_LIMIT_BYTES); else DEFAULTS.memoryLimit.
 */
export const defaultMemoryLimit = (root?: string): string => {
  const container = containerMemoryBytes(root)
  return container === undefined ? DEFAULTS.memoryLimit : `${Math.max(MIN_MEMORY_LIMIT_BYTES / MB, Math.floor((container * 0.8) / MB))}MB`
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
const DUCKDB_FLOOR_MB = 96

/** DuckDB's share of a run's memory limit, in MiB (see sinkMemory). */
const duckdbShareMb = (limitBytes: number) =>
  Math.max(DUCKDB_FLOOR_MB, Math.floor((Math.max(0, limitBytes - PROCESS_BASE_BYTES) * 0.4) / MB))

/**
 * The share of what is left to Node (the limit less the process base and DuckDB's share) that the
 * bodies of pages in flight may hold at once: 15 MB at 512MB, 33 MB at the default 1GB. Each body
 * byte is held again as the text it is read as, the records JSON.parse makes of it and their rows,
 * and what pages leave waits for the GC, so the rest of Node's share is theirs and the heap's.
 * Measured (txs of 50 kB at 512MB, concurrency 4 and 16): at 25% peaks of 565–570 MB on a quiet
 * machine and 530–584 MB on a loaded one, at 12% 443–459 MB on a quiet one, at 6% 401–436 MB on
 * a loaded one (bench/RESULTS.md).
 */
const PAGE_SHARE = 0.06
/** the page budget is never less (a limit past what the process needs leaves it ~10 MB; one below, given to the library, is not refused there) */
const PAGE_FLOOR_BYTES = 4 * MB

/** What a run's memory limit leaves Node, in bytes: the limit less the process base and DuckDB's share (never below 0). */
export const nodeShareBytes = (limitBytes: number) => Math.max(0, limitBytes - PROCESS_BASE_BYTES - duckdbShareMb(limitBytes) * MB)

/**
 * What Node holds of an export whatever its pages: V8's heap with the run's code and state (~70 MB
 * at its start, ~100–120 at a peak), external memory between collections, and a page budget of a
 * few MB. Measured (txs at page 1000, concurrency 4 and 16, ordinary and 50 kB records): peaks
 * stayed under limits of 352MB and more, and passed 320MB by up to 4 MB (bench/RESULTS.md).
 */
export const NODE_FLOOR_BYTES = 160 * MB
/**
 * The smallest --memory-limit an export stays within: the process base, DuckDB's share (its floor
 * at least) and Node's floor, in steps of 16 MB (368MB). A smaller one is refused (`chain-lake
 * export` says so and names this).
 */
export const MIN_MEMORY_LIMIT_BYTES = (() => {
  let limit = 0
  while (nodeShareBytes(limit) < NODE_FLOOR_BYTES) limit += 16 * MB
  return limit
})()

/** A run's memory limit, and the bytes of response bodies its pages in flight may hold at once (the engine's page budget, engine/pageBudget.ts). */
export interface RunMemoryService {
  /** the whole process's: its RSS is measured against it */
  readonly limitBytes: number
  readonly pageBytes: number
}
export class RunMemory extends Context.Tag("chain-lake/RunMemory")<RunMemory, RunMemoryService>() {}
/** A run's memory as `limitBytes` gives it: its pages budgeted from `shareBytes` of it (a shard worker's share; the whole by default). */
export const runMemory = (limitBytes: number, shareBytes = limitBytes): RunMemoryService => ({
  limitBytes,
  pageBytes: Math.max(PAGE_FLOOR_BYTES, Math.floor(nodeShareBytes(shareBytes) * PAGE_SHARE))
})

/**
 * How a run's memory limit is shared, once the process base is set aside. DuckDB gets 40% of the
 * rest (its memory_limit: staged rows, COPY's buffers; DUCKDB_FLOOR_MB at least); what all
 * writers stage together is held to a third of that 40%, and to half of what a COPY leaves of
 * DuckDB's share (DuckDB holds staged text at 1.1–1.6× its size, measured); files are written
 * (COPY) as many at a time as COPY_FIXED_MB each fits beside what is staged, and a writer of
 * rows so large that its COPY would need more than that writes its file at once (`copyBytes`);
 * the rest is Node's (runMemory: the pages in flight are budgeted in bytes). At 512MB: DuckDB
 * 164 MB, 54 MB staged; peaks of a txs export at page 1000 × concurrency 4 and 16 are 409–466 MB,
 * ordinary txs or txs of 20–50 kB (bench/RESULTS.md).
 */
export const sinkMemory = (limitBytes: number) => {
  const shareMb = (Math.max(0, limitBytes - PROCESS_BASE_BYTES) * 0.4) / MB
  const duckdbMb = duckdbShareMb(limitBytes)
  // a third of the share, and never more than half of what a COPY leaves of DuckDB's memory
  const stagingMb = Math.min(shareMb / 3, (duckdbMb - COPY_FIXED_MB) / 2)
  // as many COPYs at once as their fixed share fits beside what is staged
  return {
    memoryLimit: `${duckdbMb}MiB`,
    stagingBudget: Math.floor(stagingMb * MB),
    // a writer of large rows writes its file before its COPY would need more than that
    copyBytes: COPY_FIXED_MB * MB,
    copies: Math.max(1, Math.floor((duckdbMb - Math.max(0, stagingMb)) / COPY_FIXED_MB))
  }
}

/**
 * The sink and manifests of the lake at `out`, within `memoryLimitBytes` (default
 * defaultMemoryLimit()); DuckDB spills into `out/.chain-lake/tmp/`, never into the working
 * directory. An `out` that cannot be a lake's folder (empty: the working directory; a file, or
 * below one; a URL) fails the layer, a ManifestError, before anything is asked or written.
 */
export const layerLake = (out: string, options: ManifestsOptions & { readonly memoryLimitBytes?: number } = {}) =>
  Layer.unwrapEffect(
    Effect.suspend(() => {
      // not probed for writing: a dry run over a read-only lake writes nothing
      const problem = outputFolderProblem("out", out, { probe: false })
      if (problem) return Effect.fail(new ManifestError({ message: problem }))
      // absolute for Node and DuckDB alike: DuckDB reads "~/lake" as the home folder's, Node as the working directory's
      const root = resolve(out)
      const limit = options.memoryLimitBytes ?? parseMemorySize(defaultMemoryLimit())!
      return Effect.succeed(
        Layer.mergeAll(
          layerParquetSink({ tempDirectory: scratchFolder(root), ...sinkMemory(limit) }),
          layerManifests(root, options),
          Layer.succeed(RunMemory, runMemory(limit))
        )
      )
    })
  )
