/**
 * A small --memory-limit is a slower run, not a failed one: DuckDB's share has a floor that leaves
 * a COPY of txs room beside what the writers stage, and when DuckDB does run out of memory the
 * user reads one line (not DuckDB's page of advice about SET commands they cannot type). A limit
 * below what an export needs at all is refused before anything starts, naming the smallest.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { describeExportFailure } from "../../src/cli/export.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { ParquetSink, layerParquetSink } from "../../src/lake/ParquetSink.js"
import { containerMemoryBytes, defaultMemoryLimit } from "../../src/lake/writer.js"
import { runCli } from "../support/cli.js"
import { tempDirs } from "../support/tmp.js"

let devnet: Devnet
const temp = tempDirs("chain-lake-memory-")
beforeAll(async () => {
  // ~31k txs: enough for the first file of a shard to stage the whole budget of a 250MB run
  devnet = await startDevnet({ seed: 7, blocks: 8000 })
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  temp.removeAll()
})

describe("--memory-limit", () => {
  it("a txs export at the smallest limit (368MB), page 1000, one worker, exits 0 with every tx (a 64 MiB share for DuckDB ran out of memory at its first file, every time)", async () => {
    const out = temp.make()
    const r = await runCli(
      [
        "export",
        "--indexer-url",
        devnet.indexerUrl,
        "--out",
        out,
        "--datasets",
        "txs",
        "--page-size",
        "1000",
        "--concurrency",
        "1",
        "--memory-limit",
        "368MB"
      ],
      { timeoutMs: 120_000 }
    )
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^txs\\s+${devnet.chain.txTotal()}\\s+`, "m"))
    // the files hold each tx once
    const counted = await Effect.runPromise(
      Effect.flatMap(ParquetSink, (s) =>
        s.query(`SELECT count(*) AS n, count(DISTINCT tx_hash) AS distinct_txs FROM read_parquet('${out}/txs/**/*.parquet')`)
      ).pipe(Effect.provide(layerParquetSink()), Effect.scoped)
    )
    expect(counted).toEqual([{ n: BigInt(devnet.chain.txTotal()), distinct_txs: BigInt(devnet.chain.txTotal()) }])
  }, 150_000)

  it("a limit below what an export needs at all is refused with one line naming the smallest that works (exit 2), before a server is asked anything", async () => {
    const out = temp.make()
    for (const limit of ["250MB", "367MB", "128MB"]) {
      const r = await runCli(["export", "--indexer-url", "http://127.0.0.1:9", "--out", out, "--datasets", "txs", "--memory-limit", limit])
      expect(r.code, r.stderr).toBe(2)
      const lines = r.stderr.trim().split("\n")
      expect(lines.at(-1)).toBe(
        `chain-lake: error: --memory-limit ${limit} is below what an export needs at all: the smallest that works is 368MB (~100 MB for the runtime and code, 107 MB for DuckDB, ~160 MB for Node's heap and the pages in flight)`
      )
    }
    // one that is no size says so
    const r = await runCli(["export", "--indexer-url", "http://127.0.0.1:9", "--out", out, "--memory-limit", "lots"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`--memory-limit must be a size (e.g. 512MB, 2GB), got "lots"`)
    // a bare number would be bytes: taken for a slip of megabytes, in every command with a size flag
    for (const [command, flag] of [
      ["export", "--memory-limit"],
      ["query", "--memory-limit"],
      ["compact", "--memory-limit"],
      ["compact", "--target-size"]
    ]) {
      const args = command === "export" ? ["--indexer-url", "http://127.0.0.1:9", "--out", out] : ["--data", out]
      const bare = await runCli([command, ...args, flag, "512", ...(command === "query" ? ["SELECT 1"] : [])])
      expect(bare.code).toBe(2)
      expect(bare.stderr.trim().split("\n").at(-1)).toBe(
        `chain-lake: error: ${flag} 512 has no unit (it would be bytes): did you mean 512MB?`
      )
    }
    // one that in megabytes would be below the least a flag takes is not offered as what was meant
    const small = await runCli(["query", "--data", out, "--memory-limit", "1", "SELECT 1"])
    expect(small.code).toBe(2)
    expect(small.stderr.trim().split("\n").at(-1)).toBe(
      "chain-lake: error: --memory-limit 1 has no unit (it would be bytes), and it must be a size of at least 128MB (e.g. 512MB, 2GB)"
    )
    // terabytes are a size
    const tb = await runCli(["export", "--indexer-url", "http://127.0.0.1:9", "--out", out, "--memory-limit", "1TB", "--dry-run"])
    expect(tb.stderr).not.toContain("must be a size")
  }, 60_000)

  it("DuckDB's out-of-memory reads as one line that names the flag to change", async () => {
    // a real DuckDB error: a sort far past a 16 MiB limit with nowhere to spill
    const error = await Effect.runPromise(
      Effect.flip(
        Effect.flatMap(ParquetSink, (s) =>
          s.query("SELECT count(*) FROM (SELECT md5(x::varchar) AS h FROM range(3000000) t(x) ORDER BY h)")
        )
      ).pipe(Effect.provide(layerParquetSink({ memoryLimit: "16MiB" })), Effect.scoped)
    )
    // DuckDB's own text goes on for lines ("Possible solutions: … SET threads=X")
    expect(error.message.split("\n").length).toBeGreaterThan(1)
    const line = describeExportFailure(error)
    expect(line).not.toContain("\n")
    expect(line).toMatch(
      /^writing Parquet failed: DuckDB ran out of memory \(Out of Memory Error: .+\): raise --memory-limit, or lower --concurrency$/
    )
  })
})

describe("the default --memory-limit follows the container", () => {
  const cgroup = (files: Record<string, string>) => {
    const root = temp.make()
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name)), { recursive: true })
      writeFileSync(join(root, name), text)
    }
    return root
  }
  it("cgroup v2 memory.max or v1 memory.limit_in_bytes, 80% of it (368MB at least: the smallest an export stays within); none set, or unlimited: 1GB", () => {
    expect(defaultMemoryLimit(cgroup({ "memory.max": "2147483648\n" }))).toBe("1638MB")
    expect(defaultMemoryLimit(cgroup({ "memory/memory.limit_in_bytes": "1073741824\n" }))).toBe("819MB")
    expect(defaultMemoryLimit(cgroup({ "memory.max": "134217728\n" }))).toBe("368MB")
    // unlimited: v2 says "max", v1 a number past the machine's memory
    expect(defaultMemoryLimit(cgroup({ "memory.max": "max\n" }))).toBe("1GB")
    expect(defaultMemoryLimit(cgroup({ "memory/memory.limit_in_bytes": "9223372036854771712\n" }))).toBe("1GB")
    expect(defaultMemoryLimit(cgroup({}))).toBe("1GB")
    expect(containerMemoryBytes(cgroup({ "memory.max": "2147483648" }))).toBe(2147483648)
  })
})
