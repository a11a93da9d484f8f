/**
 * Gentle on the real indexer (issue 36). It serves pagination.offset with SQL OFFSET, scanning
 * every row it skips, and a sequence cursor with an index seek: an export of blocks and the tx
 * families pages every list by cursor, so the devnet (which counts the rows its offsets skip, as
 * the real server would scan them) skips none; a rerun with everything committed asks a handful
 * of requests; and a round after the chain grew (what each --follow round runs) asks the tx
 * families from the sequence its lake's rows end at, not from the start.
 */
import { Effect, Either } from "effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import type { Devnet } from "../../src/devnet/index.js"
import { runExport, type ExportOptions } from "../../src/engine/export.js"
import type { Manifest } from "../../src/lake/Manifests.js"
import { expectLakeMatchesChain } from "../support/chain-model.js"
import { runCli } from "../support/cli.js"
import { proxiedDevnet, type HostileServer } from "../support/hostile.js"
import { tempDirs } from "../support/tmp.js"

const EXPORTED = ["blocks", "txs", "evm_txs", "evm_internal_txs"]
/** each tx family's list and the dataset whose manifest records its committed positions */
const FAMILIES = [
  { path: "/indexer/tx/v1/txs", dataset: "txs" },
  { path: "/indexer/tx/v1/evm-txs", dataset: "evm_txs" },
  { path: "/indexer/tx/v1/evm-internal-txs", dataset: "evm_internal_txs" }
]

const dirs = tempDirs("chain-lake-gentle-")
let devnet: Devnet
const { proxy } = proxiedDevnet({ seed: 36, blocks: 120 }, (d) => (devnet = d))
const recorder = () => proxy((_, forward) => forward())

// several shards per source at 20 rows a page
const exportVia = async (server: HostileServer, out: string, options: ExportOptions = {}) => {
  const r = await Effect.runPromise(
    Effect.either(runExport(DATASETS, { datasets: EXPORTED, pageSize: 20, concurrency: 4, ...options })).pipe(
      Effect.provide(exportLayer({ indexerUrl: server.url, out, limits: { concurrency: 4, rps: 0 } }))
    )
  )
  if (Either.isLeft(r)) throw new Error(`export failed: ${String(r.left)}`)
  return r.right
}
const urlsOf = (server: HostileServer) => server.requests.map((r) => new URL(r.path, server.url))
/** the sequence a request's cursor names, or undefined */
const sequenceOf = (u: URL) => {
  const key = u.searchParams.get("pagination.key")
  return key ? (JSON.parse(Buffer.from(key, "base64").toString("utf8")).sequence as number | undefined) : undefined
}
const committedEnd = (out: string, dataset: string) =>
  (JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")) as Manifest).committed.at(-1)![1]

describe("an export gentle on the indexer", () => {
  const out = dirs.make()

  it("reads no row through an offset (the devnet counts them), matches the chain, and a rerun with everything committed asks at most 10 requests", async () => {
    const c = devnet.chain
    const skippedBefore = devnet.stats().offsetRowsSkipped
    const first = await recorder()
    await exportVia(first, out)
    // the bound the issue sets is one table's length (every skip counted, the probes' too); none is needed
    const skipped = devnet.stats().offsetRowsSkipped - skippedBefore
    expect(skipped).toBeLessThanOrEqual(Math.min(c.txTotal(), c.evmTotal(), c.traceTotal()))
    expect(skipped).toBe(0)
    expect(
      urlsOf(first)
        .filter((u) => u.searchParams.has("pagination.offset"))
        .map(String)
    ).toEqual([])
    await expectLakeMatchesChain(out, devnet, EXPORTED)

    // the CLI, as a user reruns it: /status, one probe per list, the lake's anchor; no search, no page
    const rerun = await recorder()
    const r = await runCli(["export", "--indexer-url", rerun.url, "--out", out, "--datasets", EXPORTED.join(","), "--page-size", "20"])
    expect(r.code, r.stderr).toBe(0)
    expect(rerun.requests.length, rerun.requests.map((q) => q.path).join("\n")).toBeLessThanOrEqual(10)
    expect(devnet.stats().offsetRowsSkipped).toBe(skippedBefore)
  })

  it("a round after the chain grew (as each --follow round) asks each tx family from its last committed sequence, even where a search is needed", async () => {
    const c = devnet.chain
    const ends = new Map(FAMILIES.map((f) => [f.path, committedEnd(out, f.dataset)]))
    c.extendTo(c.tip + 30)
    // heights below the tip: each family's newest row is past them, so where they end is searched for
    const round = await recorder()
    await exportVia(round, out, { toHeight: c.tip - 10 })
    for (const { path } of FAMILIES) {
      const keyed = urlsOf(round).filter((u) => u.pathname === path && sequenceOf(u) !== undefined)
      expect(keyed.length, path).toBeGreaterThan(0)
      // the probe of the row before the lake's end is the lowest any request asks
      expect(Math.min(...keyed.map(sequenceOf).map(Number)), path).toBe(ends.get(path)! - 1)
    }
    const rest = await recorder()
    await exportVia(rest, out)
    expect(urlsOf(rest).some((u) => u.searchParams.has("pagination.offset"))).toBe(false)
    await expectLakeMatchesChain(out, devnet, EXPORTED)
    expect(devnet.stats().offsetRowsSkipped).toBe(0)
  })
})
