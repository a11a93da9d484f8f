/**
 * Planning, as pure functions: which ranges of a source the selected datasets still lack, how they
 * are cut into shards, and what the plan of each dataset says. The engine (export.ts) runs what
 * these return; planning.test proves them on their own.
 */
import { normalize, split, subtract, total, type Range } from "../lake/RangeSet.js"

export interface ShardSizing {
  readonly concurrency: number
  readonly pageSize: number
  /** largest shard (heights or rows) */
  readonly maxShardUnits: number
}

/**
 * Planning holds every shard of a run at once, so their number is bounded whatever the range: a
 * /status claiming height 1e15 planned 10^10 shards and ran V8 out of memory. Past this many,
 * shards grow beyond maxShardUnits (a shard is walked by cursor, one page in memory at a time).
 */
export const MAX_SHARDS = 10_000

/**
 * The shards of `range` that some dataset of a source still lacks, given each dataset's committed
 * ranges. Shards are cut at every committed boundary, so each is wanted by a fixed set of
 * datasets; they come in a multiple of `concurrency` of equal size (at least a page), so that every
 * round of shards keeps every worker busy to the end.
 */
export const planShards = (range: Range, committed: ReadonlyArray<ReadonlyArray<Range>>, sizing: ShardSizing): Array<Range> => {
  const wanted = normalize(committed.flatMap((c) => subtract(range, c)))
  const cuts = committed.flatMap((c) => c.flat())
  const todo = total(wanted)
  const rounds = Math.min(
    Math.max(1, Math.ceil(todo / (sizing.maxShardUnits * sizing.concurrency))),
    Math.max(1, Math.floor(MAX_SHARDS / sizing.concurrency))
  )
  const shardCount = sizing.concurrency * rounds
  const shardSize = Math.max(sizing.pageSize, Math.ceil(todo / shardCount))
  return split(wanted, shardSize, cuts)
}

/** Units of `range` to fetch for a dataset with `committed` ranges, and units already committed. */
export const progressOf = (range: Range, committed: ReadonlyArray<Range>) => {
  const todo = total(subtract(range, committed))
  return { todo, done: total([range]) - todo }
}

/** Requests a set of shards takes at `pageSize` rows a page. */
export const requestsFor = (shards: ReadonlyArray<Range>, pageSize: number) =>
  shards.reduce((s, [a, b]) => s + Math.ceil((b - a) / pageSize), 0)

/** The heights to export: the asked bounds, clipped to what the source serves ([lowest, watermark]). */
export const heightBounds = (asked: { readonly fromHeight?: number; readonly toHeight?: number }, lowest: number, watermark: number) => ({
  from: Math.max(asked.fromHeight ?? lowest, lowest),
  to: Math.min(asked.toHeight ?? watermark, watermark),
  // Stryker disable next-line ConditionalExpression: undefined > watermark is false too
  clipped: asked.toHeight !== undefined && asked.toHeight > watermark
})
