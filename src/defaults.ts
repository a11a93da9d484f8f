/**
 * The defaults of a run, defined once: the CLI's flags, pipelines and the library (runExport,
 * the clients' layers) all start from these.
 */
export const DEFAULTS = {
  /** requests in flight at once, shared by every dataset (and shards paging at once) */
  concurrency: 8,
  /** requests started per second at most; 0 = no limit */
  rps: 100,
  /** rows per request (the indexer accepts 1..1000) */
  pageSize: 500,
  /** heights per height_bucket folder */
  bucketWidth: 10_000,
  /** a writer starts a new file once it holds this many bytes of strings: DuckDB holds what a writer staged, so this bounds memory per shard in flight */
  flushBytes: 24 * 1024 * 1024,
  /** largest shard (heights or rows); shards are smaller when that keeps every worker busy */
  maxShardUnits: 100_000,
  /** the longest a shard holds what it read before committing it: a kill or a failure loses at most this much of a shard's work (Ctrl-C commits what it read) */
  checkpointMs: 60_000,
  /** the largest answer read from a service, in MB: a hostile or broken server cannot fill memory (a page of 1000 real txs is a few MB) */
  maxPageMb: 128,
  /** the memory a run may use: past the process base, DuckDB gets 40% (what writers stage lives in it) and Node the rest (lake/writer.ts) */
  memoryLimit: "1GB",
  /** a record that breaks its schema fails the run */
  onInvalid: "fail" as "fail" | "quarantine",
  /** retries of a transient failure: attempts, backoff (full jitter), give-up time, per-request timeout */
  retry: { maxRetries: 8, baseDelayMs: 100, maxDelayMs: 10_000, maxElapsedMs: 120_000, timeoutMs: 30_000 }
} as const
