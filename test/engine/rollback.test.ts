/**
 * Rollbacks (issue 33): a lake whose indexer was rolled back and re-synced to another history
 * (a fork above some height, same chain id) is refused by default, naming the first height that
 * differs; `--on-reorg rollback` and `chain-lake rollback` cut the lake back to the last common
 * height in one commit per dataset, log it in `_lake.json`, and the lake then equals a clean
 * export of the new history. Real CLI processes, real loopback devnets, real Parquet and DuckDB.
 */
import { spawn } from "node:child_process"
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { planCut, positionCut } from "../../src/engine/rollback.js"
import { keptAnchors, type CommittedFile, type Manifest } from "../../src/lake/Manifests.js"
import { BIN, runCli, startCli } from "../support/cli.js"
import { expectLakeMatchesChain, withDuckDB } from "../support/chain-model.js"
import { scan } from "../support/lake.js"
import { startProxy, type HostileServer, type Reply } from "../support/hostile.js"
import { tempDirs } from "../support/tmp.js"

const { make: tmp, removeAll } = tempDirs("chain-lake-rollback-")
const DATASETS = ["blocks", "txs", "evm_txs", "evm_logs"]
const FORK = 100
/** the history the lake was exported from */
let before: Devnet
/** the same chain rolled back to 110 and re-synced to another history above FORK: its tip is below the lake's */
let behind: Devnet
/** the same fork, grown past the lake's tip */
let ahead: Devnet
/** a lake of `before`, exported once and copied for each test */
let lake: string

const exportArgs = (url: string, out: string, ...more: Array<string>) => [
  "export",
  "--indexer-url",
  url,
  "--out",
  out,
  "--datasets",
  DATASETS.join(","),
  ...more
]

beforeAll(async () => {
  before = await startDevnet({ seed: 1, blocks: 130 })
  behind = await startDevnet({ seed: 1, blocks: 110, fork: { height: FORK, seed: 2 } })
  ahead = await startDevnet({ seed: 1, blocks: 150, fork: { height: FORK, seed: 2 } })
  lake = tmp()
  const r = await runCli(exportArgs(before.indexerUrl, lake))
  expect(r.code, r.stderr).toBe(0)
})
afterAll(async () => {
  await Promise.all([before?.stop(), behind?.stop(), ahead?.stop()])
  removeAll()
})

/** Leaves the lake at `out` as a rollback to FORK of every dataset leaves it when stopped right after recording its intent. */
const cutShortAtFork = (out: string, by: "command" | "on-reorg") =>
  writeFileSync(
    join(out, "_lake.json"),
    JSON.stringify({ ...identity(out), rollback: { to_height: FORK, started_at: new Date().toISOString(), by, datasets: DATASETS } })
  )

const copyOfLake = () => {
  const out = tmp()
  cpSync(lake, out, { recursive: true })
  return out
}
/** `before`'s indexer, its block route answering 404 "block not found" (as the real one does) where `hidden` says, asked of each request's height */
const hidingBlocks = (hidden: (height: number) => boolean) =>
  startProxy(before.indexerUrl, (req, forward) => {
    const block = /^\/indexer\/block\/v1\/blocks\/(\d+)$/.exec(req.url.pathname)
    return block && hidden(Number(block[1]))
      ? Promise.resolve({ status: 404, headers: {}, body: "[NOT_FOUND] block not found" })
      : forward()
  })
/** A lake of `before`'s blocks to height 80 and its txs to 95, then to 120 (anchored at 80, 95 and 120). */
const blocksTo80TxsTo120 = async () => {
  const out = tmp()
  for (const [datasets, top] of [
    ["blocks", 80],
    ["txs", 95],
    ["txs", 120]
  ] as const) {
    const r = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", datasets, "--to-height", String(top)])
    expect(r.code, r.stderr).toBe(0)
  }
  return out
}

/** Drops the lake's anchors below `height`, as keptAnchors thins them in a lake of many commits. */
const thinAnchorsBelow = (out: string, height: number) => {
  const lakeJson = identity(out)
  writeFileSync(
    join(out, "_lake.json"),
    JSON.stringify({ ...lakeJson, anchors: lakeJson.anchors.filter((a: { height: number }) => a.height >= height) })
  )
  expect(identity(out).anchors.map((a: { height: number }) => a.height)).toEqual([height])
}
/** a copy of the lake at `out`, to run a second source against it */
const copyOf = (out: string) => {
  const copy = tmp()
  cpSync(out, copy, { recursive: true })
  return copy
}
const identity = (out: string) => JSON.parse(readFileSync(join(out, "_lake.json"), "utf8"))
const count = async (out: string, dataset: string, where = "true") =>
  withDuckDB(async (conn) =>
    Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${scan(out, dataset)} WHERE ${where}`)).getRowObjectsJson()[0].n)
  )

describe("an indexer rolled back and re-synced to another history (same chain id)", () => {
  it("below the lake's tip: refused in one line naming the first height that differs, nothing written; --on-reorg rollback leaves the lake equal to a clean export of the new history, logged", async () => {
    const out = copyOfLake()
    const manifests = () => DATASETS.map((d) => readFileSync(join(out, d, "_manifest.json"), "utf8"))
    const was = manifests()
    const refused = await runCli(exportArgs(behind.indexerUrl, out))
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n")).toHaveLength(1)
    expect(refused.stderr.trim()).toBe(
      `chain-lake: error: ${out} holds another history of chain lake-evm-1 from height ${FORK + 1} on (block ${FORK + 1} is ${before.chain.blockHash(FORK + 1)} there and ${behind.chain.blockHash(FORK + 1)} on this indexer; both hold the same block ${FORK}): a rolled-back, re-synced or reorganized indexer. --on-reorg rollback drops the lake's rows above ${FORK} and exports this indexer's history; or export into another --out (nothing was written)`
    )
    expect(manifests()).toEqual(was)

    const rolled = await runCli(exportArgs(behind.indexerUrl, out, "--on-reorg", "rollback"))
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stderr).toMatch(
      new RegExp(
        `this indexer's block ${FORK + 1} differs from the lake's: rolled .* back from height 130 to ${FORK}: dropped blocks 30 rows, txs \\d+ rows`
      )
    )
    await expectLakeMatchesChain(out, behind, DATASETS)
    const log = identity(out)
    expect(log.rollback).toBeUndefined()
    expect(log.reorgs).toEqual([
      {
        at: expect.any(String),
        to_height: FORK,
        from_height: 130,
        by: "on-reorg",
        differs: { height: FORK + 1, lake_hash: before.chain.blockHash(FORK + 1), source_hash: behind.chain.blockHash(FORK + 1) },
        rows_dropped: { blocks: 30, txs: expect.any(Number), evm_txs: expect.any(Number), evm_logs: expect.any(Number) },
        // the anchor the cut dropped, of the history the rows it kept were read under
        witness: { height: 130, hash: before.chain.blockHash(130) }
      }
    ])
    // every anchor is of the new history
    for (const a of log.anchors) expect(a.hash, `anchor ${a.height}`).toBe(behind.chain.blockHash(a.height))
    // a rerun has nothing to roll back or export
    const again = await runCli(exportArgs(behind.indexerUrl, out, "--on-reorg", "rollback"))
    expect(again.code, again.stderr).toBe(0)
    expect(identity(out).reorgs).toHaveLength(1)
  })

  it("chain-lake rollback --to-height cuts every dataset to the height (a dry run first changes nothing); an export of the fork then needs no flag and gives the new history", async () => {
    const out = copyOfLake()
    const dry = await runCli(["rollback", "--data", out, "--to-height", String(FORK), "--dry-run"])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toMatch(/^blocks: would drop 30 rows \(0 files dropped whole, 1 rewritten\)$/m)
    // each dataset's rows as the cut then drops them (it said the rows of the files it rewrites)
    const said = Object.fromEntries([...dry.stdout.matchAll(/^(\w+): would drop (\d+) rows/gm)].map((m) => [m[1], Number(m[2])]))
    expect(dry.stdout).toMatch(/dry run: nothing was changed/)
    expect(identity(out).reorgs).toBeUndefined()

    // a txs file holding heights on both sides of the cut goes whole: said, with the lowest height it held
    const txsFiles: Array<{ min_height: number; max_height: number }> = JSON.parse(
      readFileSync(join(out, "txs", "_manifest.json"), "utf8")
    ).files
    const spanning = txsFiles.find((f) => f.min_height <= FORK && f.max_height > FORK)!
    expect(spanning).toBeDefined()
    expect(dry.stdout).toMatch(new RegExp(`^txs: would drop \\d+ rows from height ${spanning.min_height} `, "m"))
    const r = await runCli(["rollback", "--data", out, "--to-height", String(FORK)])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(
      new RegExp(`^rolled ${out} back from height 130 to ${FORK}: dropped blocks 30 rows, txs \\d+ rows from height ${spanning.min_height}`)
    )
    expect(r.stdout).toMatch(
      new RegExp(
        `txs from height ${spanning.min_height}.*: files holding heights on both sides of ${FORK} went whole .* lack rows at or below ${FORK} until the next export reads them again`
      )
    )
    // nothing below the lowest height said is gone
    expect(await count(out, "txs", `height < ${spanning.min_height}`)).toBe(
      Array.from({ length: spanning.min_height - 1 }, (_, k) => before.chain.blockTxCount(k + 1)).reduce((a, b) => a + b, 0)
    )
    // blocks keep exactly 1..FORK; the tx families keep nothing above it
    expect(await count(out, "blocks")).toBe(FORK)
    expect(await count(out, "blocks", `height > ${FORK}`)).toBe(0)
    for (const [d, height] of [
      ["txs", "height"],
      ["evm_txs", "height"],
      ["evm_logs", "height"]
    ])
      expect(await count(out, d, `${height} > ${FORK}`), d).toBe(0)
    expect(identity(out).anchors).toEqual([{ height: FORK, hash: before.chain.blockHash(FORK) }])
    expect(identity(out).reorgs).toEqual([expect.objectContaining({ to_height: FORK, from_height: 130, by: "command" })])
    expect(identity(out).reorgs[0].rows_dropped).toEqual(said)
    // the dropped files left the dataset folders (kept in .chain-lake/retired until a compaction)
    const blocks = JSON.parse(readFileSync(join(out, "blocks", "_manifest.json"), "utf8"))
    expect(blocks.committed).toEqual([[1, FORK + 1]])

    const next = await runCli(exportArgs(ahead.indexerUrl, out))
    expect(next.code, next.stderr).toBe(0)
    await expectLakeMatchesChain(out, ahead, DATASETS)
    // a height above the lake's: nothing to do, nothing logged
    const nothing = await runCli(["rollback", "--data", out, "--to-height", "500"])
    expect(nothing.code, nothing.stderr).toBe(0)
    expect(nothing.stdout).toMatch(/holds nothing above height 500: nothing to roll back/)
    expect(identity(out).reorgs).toHaveLength(1)
    // below the first block, or below every row the lake holds: no cut of a lake (it would keep no anchor), refused as a usage error
    const everything = await runCli(["rollback", "--data", out, "--to-height", "0"])
    expect(everything.code).toBe(2)
    expect(everything.stderr.trim()).toBe(
      "chain-lake: error: --to-height must be at least 1 (heights start at 1), got 0: to start over, export into a new folder"
    )
    const later = tmp()
    const fromLater = await runCli(exportArgs(ahead.indexerUrl, later, "--from-height", "50"))
    expect(fromLater.code, fromLater.stderr).toBe(0)
    const belowAll = await runCli(["rollback", "--data", later, "--to-height", "10"])
    expect(belowAll.code).toBe(2)
    expect(belowAll.stderr.trim()).toBe(
      `chain-lake: error: ${later} holds rows from height 50 on: --to-height 10 would drop every one of them: to start over, export into a new folder`
    )
    expect(identity(out).reorgs).toHaveLength(1)
  })

  it("a follow whose indexer moves to the fork between rounds: --on-reorg rollback gives the new history, block times and all (none remembered from the old one, shard workers' neither)", async () => {
    for (const workers of ["0", "1"]) {
      const out = tmp()
      let upstream = before.indexerUrl
      const switching = await startProxy(before.indexerUrl, async (req) => {
        const res = await fetch(upstream + req.path, { headers: { "cache-control": "no-cache" } })
        return { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "text/plain" }, body: await res.text() }
      })
      try {
        const args = exportArgs(switching.url, out, "--follow", "--poll", "200ms", "--until-height", "150", "--on-reorg", "rollback")
        const { child, stdout } = await startCli([...args, "--workers", workers], /\n/)
        // the first round (up to `before`'s tip) is committed: the indexer is re-synced to the fork, grown past it
        const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
        expect(stdout()).toMatch(/\b130\b/)
        upstream = ahead.indexerUrl
        expect(await exited, `--workers ${workers}`).toBe(0)
      } finally {
        await switching.close()
      }
      await expectLakeMatchesChain(out, ahead, DATASETS)
      expect(identity(out).reorgs).toEqual([expect.objectContaining({ by: "on-reorg" })])
    }
  })

  it("a rollback cut short: readers of its datasets fail in one line until the next export finishes it", async () => {
    const out = copyOfLake()
    cutShortAtFork(out, "command")
    const q = await runCli(["query", "--data", out, "SELECT count(*) FROM txs"])
    expect(q.code).not.toBe(0)
    expect(q.stderr.trim()).toMatch(
      new RegExp(
        `^chain-lake: error: .*txs: a rollback of this lake to height ${FORK} is under way or was cut short: run chain-lake rollback --data ${out} --to-height ${FORK} \\(or the export\\) again to finish it`
      )
    )
    // nor is it compacted: merging what is about to go
    const c = await runCli(["compact", "--data", out])
    expect(c.code).not.toBe(0)
    expect(c.stderr.trim()).toMatch(
      new RegExp(
        `a rollback of ${out} to height ${FORK} is under way or was cut short: run chain-lake rollback --data ${out} --to-height ${FORK} \\(or the export\\) first`
      )
    )
    const r = await runCli(exportArgs(ahead.indexerUrl, out))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(new RegExp(`finishing a rollback to height ${FORK} that was cut short`))
    // the log counts what each dataset lost
    expect(identity(out).reorgs.at(-1).rows_dropped.blocks).toBe(130 - FORK)
    await expectLakeMatchesChain(out, ahead, DATASETS)
    expect(identity(out).rollback).toBeUndefined()
  })

  it("an export stopped (Ctrl-C) before it finished a rollback cut short says so: the rollback, and that running it again finishes it", async () => {
    const out = copyOfLake()
    cutShortAtFork(out, "on-reorg")
    // an indexer that takes every request and answers none: the run is stopped before it finishes the rollback
    const silent = await startProxy(ahead.indexerUrl, () => new Promise<never>(() => {}))
    try {
      const child = spawn(process.execPath, [BIN, ...exportArgs(silent.url, out, "--on-reorg", "rollback")], {
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      while (silent.requests.length === 0) await new Promise((r) => setTimeout(r, 10))
      child.kill("SIGINT")
      expect(await exited, stderr).toBe(130)
      expect(stderr).toMatch(
        new RegExp(
          `^the rollback of this lake to height ${FORK} was cut short: ${DATASETS.join(", ")} cannot be read until it is finished: run chain-lake rollback --data ${out} --to-height ${FORK} \\(or the export\\) again to finish it$`,
          "m"
        )
      )
    } finally {
      await silent.close()
    }
    const r = await runCli(exportArgs(ahead.indexerUrl, out, "--on-reorg", "rollback"))
    expect(r.code, r.stderr).toBe(0)
    await expectLakeMatchesChain(out, ahead, DATASETS)
  })

  it("chain-lake rollback stopped (Ctrl-C) while it waits for another writer's lock: it names the holder as it waits, then says what it dropped so far and how to finish; running it again finishes", async () => {
    const out = copyOfLake()
    // a live writer (this process) holds txs' manifest lock: blocks is cut, txs waits
    const lock = join(out, "txs", "_manifest.lock")
    writeFileSync(
      lock,
      JSON.stringify({ host: hostname(), pid: process.pid, writer: `${hostname()}-${process.pid}-holder`, at: new Date().toISOString() })
    )
    const child = spawn(process.execPath, [BIN, "rollback", "--data", out, "--to-height", String(FORK)], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    for (let i = 0; i < 600 && !/waiting for/.test(stderr); i++) await new Promise((r) => setTimeout(r, 50))
    expect(stderr).toMatch(new RegExp(`^chain-lake: waiting for ${lock}, held by pid ${process.pid} on \\S+ \\(since `, "m"))
    child.kill("SIGINT")
    expect(await exited, stderr).toBe(130)
    expect(stderr).toMatch(
      new RegExp(
        `^the rollback of this lake to height ${FORK} was cut short \\(dropped so far: blocks ${130 - FORK} rows\\): ${DATASETS.join(", ")} cannot be read until it is finished: run chain-lake rollback --data ${out} --to-height ${FORK} \\(or the export\\) again to finish it$`,
        "m"
      )
    )
    rmSync(lock)
    const again = await runCli(["rollback", "--data", out, "--to-height", String(FORK)])
    expect(again.code, again.stderr).toBe(0)
    expect(identity(out).rollback).toBeUndefined()
    expect(identity(out).reorgs.at(-1).rows_dropped.blocks).toBe(130 - FORK)
    const r = await runCli(exportArgs(ahead.indexerUrl, out))
    expect(r.code, r.stderr).toBe(0)
    await expectLakeMatchesChain(out, ahead, DATASETS)
  })

  it("a source that moves to the fork during the run: with --on-reorg rollback the run starts over, rolls back and exports the new history (exit 0)", async () => {
    const out = tmp()
    const first = await runCli(exportArgs(before.indexerUrl, out, "--to-height", "60"))
    expect(first.code, first.stderr).toBe(0)
    let requests = 0
    const proxy: HostileServer = await startProxy(before.indexerUrl, async (req, forward): Promise<Reply> => {
      if (++requests <= 30) return forward()
      const res = await fetch(ahead.indexerUrl + req.path)
      return { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "text/plain" }, body: await res.text() }
    })
    try {
      const r = await runCli(exportArgs(proxy.url, out, "--on-reorg", "rollback", "--page-size", "10", "--concurrency", "2"))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(/the indexer's history changed during the run: starting over/)
      await expectLakeMatchesChain(out, ahead, DATASETS)
    } finally {
      await proxy.close()
    }
  })
})

describe("an indexer that pruned its oldest blocks", () => {
  /** `behind` (the fork), serving no block by height below `lowest` */
  const pruned = (lowest: number) =>
    startProxy(behind.indexerUrl, async (req, forward): Promise<Reply> => {
      const m = /^\/indexer\/block\/v1\/blocks\/(\d+)$/.exec(req.url.pathname)
      if (m && Number(m[1]) < lowest)
        return { status: 404, headers: { "content-type": "application/json" }, body: '{"message":"not found"}' }
      return forward()
    })

  it("the fork is found among the heights it still serves, and --on-reorg rollback gives the new history", async () => {
    const out = copyOfLake()
    const proxy = await pruned(50)
    try {
      const refused = await runCli(exportArgs(proxy.url, out))
      expect(refused.code).toBe(1)
      expect(refused.stderr).toMatch(new RegExp(`from height ${FORK + 1} on .*both hold the same block ${FORK}\\)`))
      const rolled = await runCli(exportArgs(proxy.url, out, "--on-reorg", "rollback"))
      expect(rolled.code, rolled.stderr).toBe(0)
      await expectLakeMatchesChain(out, behind, DATASETS)
    } finally {
      await proxy.close()
    }
  })

  it("a fork at or below the lowest block it serves is refused in one line saying so, nothing written", async () => {
    const out = copyOfLake()
    const manifests = () => DATASETS.map((d) => readFileSync(join(out, d, "_manifest.json"), "utf8"))
    const was = manifests()
    const proxy = await pruned(105)
    try {
      const refused = await runCli(exportArgs(proxy.url, out, "--on-reorg", "rollback"))
      expect(refused.code).toBe(1)
      expect(refused.stderr.trim()).toBe(
        `chain-lake: error: ${out} holds another history of chain lake-evm-1 at and below height 105: block 105 is ${before.chain.blockHash(105)} there and ${behind.chain.blockHash(105)} on this indexer, which serves no block below it (pruned), so no block both hold can be found: export it into another --out (nothing was written)`
      )
      expect(manifests()).toEqual(was)
    } finally {
      await proxy.close()
    }
  })
})

describe("what the fork check reads besides the newest anchor", () => {
  it("the lake's own newest block: rows committed past the anchor checked (an anchor the source did not serve) still reveal a fork", async () => {
    const out = copyOfLake()
    // as a lake whose later runs could anchor nothing (their tip block not served): the newest anchor is below its top block
    writeFileSync(
      join(out, "_lake.json"),
      JSON.stringify({ ...identity(out), anchors: [{ height: 60, hash: before.chain.blockHash(60) }] })
    )
    const r = await runCli(exportArgs(ahead.indexerUrl, out))
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(
      new RegExp(`holds another history of chain lake-evm-1 from height ${FORK + 1} on .*both hold the same block ${FORK}\\)`)
    )
  })

  it("a lake without blocks anchors each commit's top block: a fork below its newest anchor finds a block in common, refused naming it, and --on-reorg rollback gives the new history", async () => {
    const out = tmp()
    const first = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "txs", "--concurrency", "4"])
    expect(first.code, first.stderr).toBe(0)
    const anchors: Array<{ height: number; hash: string }> = identity(out).anchors
    // (the run's tip, and the tops of the commits below it)
    expect(anchors.length).toBeGreaterThan(1)
    for (const a of anchors) expect(a.hash, `anchor ${a.height}`).toBe(before.chain.blockHash(a.height))
    const common = Math.max(...anchors.map((a) => a.height).filter((h) => h <= FORK))
    expect(common).toBeGreaterThan(0)
    const refused = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs"])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toMatch(
      new RegExp(
        `holds another history of chain lake-evm-1 from height \\d+ on .*both hold the same block ${common}\\).*--on-reorg rollback drops the lake's rows above ${common}`
      )
    )
    const rolled = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs", "--on-reorg", "rollback"])
    expect(rolled.code, rolled.stderr).toBe(0)
    await expectLakeMatchesChain(out, ahead, ["txs"])
  })

  it("a source that does not serve its tip block (a /status ahead of the block route) anchors the newest block it serves below it: a lake without blocks exported so still finds a later fork", async () => {
    const tip = before.chain.tip
    const hidden = await hidingBlocks((height) => height === tip)
    const out = tmp()
    try {
      const first = await runCli(["export", "--indexer-url", hidden.url, "--out", out, "--datasets", "txs"])
      expect(first.code, first.stderr).toBe(0)
    } finally {
      await hidden.close()
    }
    // (the run anchored block tip-1, and witnessed its commits below it)
    expect(identity(out).anchors).toContainEqual({ height: tip - 1, hash: before.chain.blockHash(tip - 1) })
    const refused = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs"])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toMatch(/holds another history of chain lake-evm-1/)
  })

  it("a source that does not serve its tip block: the run writes up to the block it anchors, not past it (rows there no anchor vouches for), so a fork at the tip is the next run's to read", async () => {
    const tip = before.chain.tip
    const hidden = await hidingBlocks((height) => height === tip)
    // the same chain re-synced to another history from the tip on
    const forkedAtTip = await startDevnet({ seed: 1, blocks: tip + 10, fork: { height: tip - 1, seed: 3 } })
    const out = tmp()
    try {
      // a snapshot of the tip, asked for by name, cannot be vouched for: the run fails in one line, nothing written
      const named = await runCli(["export", "--indexer-url", hidden.url, "--out", out, "--datasets", "txs,nft_tokens"])
      expect(named.code).toBe(1)
      expect(named.stderr.trim().split("\n").at(-1)).toBe(
        `chain-lake: error: nft_tokens cannot be exported from this source (its height ${tip} is above block ${tip - 1}, the newest this run can anchor: rerun once the indexer serves block ${tip})`
      )
      expect(existsSync(join(out, "txs"))).toBe(false)
      // a dry run plans what the run will write: up to that block
      const dry = await runCli(["export", "--indexer-url", hidden.url, "--out", join(tmp(), "dry"), "--datasets", "blocks", "--dry-run"])
      expect(dry.code, dry.stderr).toBe(0)
      expect(dry.stdout).toMatch(new RegExp(`\\bblocks: ${tip - 1} heights in `))
      const first = await runCli(["export", "--indexer-url", hidden.url, "--out", out, "--datasets", "txs"])
      expect(first.code, first.stderr).toBe(0)
      expect(first.stderr).toContain(
        `the indexer does not serve block ${tip} yet: this run writes up to block ${tip - 1}, the newest it can anchor`
      )
      expect(await count(out, "txs", `height >= ${tip}`)).toBe(0)
      const next = await runCli(["export", "--indexer-url", forkedAtTip.indexerUrl, "--out", out, "--datasets", "txs,nft_tokens"])
      expect(next.code, next.stderr).toBe(0)
      await expectLakeMatchesChain(out, forkedAtTip, ["txs"])
    } finally {
      await hidden.close()
      await forkedAtTip.stop()
    }
  })

  it("a follow to --until-height the tip, whose tip block the indexer serves only later: the round that wrote short of it is run again, and the follow ends with the tip's rows", async () => {
    const tip = before.chain.tip
    let hiddenFor = 6
    const late = await hidingBlocks((height) => height === tip && hiddenFor-- > 0)
    const out = tmp()
    try {
      const args = ["export", "--indexer-url", late.url, "--out", out, "--datasets", "txs", "--follow", "--poll", "100ms"]
      const r = await runCli([...args, "--until-height", String(tip)])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toContain(`this run writes up to block ${tip - 1}, the newest it can anchor`)
    } finally {
      await late.close()
    }
    await expectLakeMatchesChain(out, before, ["txs"])
    expect(await count(out, "txs", `height = ${tip}`)).toBeGreaterThan(0)
  })

  it("a source that serves none of the blocks at and just below its tip: nothing can anchor what a run would write, so a new lake's run fails in one line, nothing written; a lake anchored before writes up to that anchor", async () => {
    const tip = before.chain.tip
    const behindBy4 = await hidingBlocks((height) => height > tip - 4)
    try {
      const out = tmp()
      const fresh = await runCli(["export", "--indexer-url", behindBy4.url, "--out", out, "--datasets", "txs"])
      expect(fresh.code).toBe(1)
      expect(fresh.stderr.trim()).toBe(
        `chain-lake: error: the indexer serves none of blocks ${tip - 3}..${tip} yet, and the lake holds no anchor it serves: nothing anchors what this run would write to a history; rerun once it serves them`
      )
      expect(existsSync(join(out, "txs"))).toBe(false)
      const first = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "txs", "--to-height", "90"])
      expect(first.code, first.stderr).toBe(0)
      const next = await runCli(["export", "--indexer-url", behindBy4.url, "--out", out, "--datasets", "txs"])
      expect(next.code, next.stderr).toBe(0)
      expect(next.stderr).toContain(`this run writes up to block 90, the newest it can anchor`)
      expect(await count(out, "txs", "height > 90")).toBe(0)
    } finally {
      await behindBy4.close()
    }
  })

  it("a lake without blocks that a rollback left with no anchor: its rows are vouched for by the anchor the cut dropped (the block they were read under), so an indexer still serving it is exported from; one that does not is refused in one line, or taken with --adopt-lake", async () => {
    const out = tmp()
    const first = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "txs", "--to-height", "120"])
    expect(first.code, first.stderr).toBe(0)
    expect(await count(out, "txs", `height <= ${FORK - 10}`)).toBeGreaterThan(0)
    thinAnchorsBelow(out, 120)
    const rolled = await runCli(["rollback", "--data", out, "--to-height", String(FORK - 10)])
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(identity(out).anchors).toEqual([])
    expect(identity(out).reorgs.at(-1).witness.height).toBe(120)
    const was = copyOf(out)
    // `ahead` parts from `before` at FORK: its block 120 is not the one the lake's rows were read under
    const refused = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs"])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n")).toHaveLength(1)
    expect(refused.stderr.trim()).toMatch(
      /cannot check that .* holds this indexer's history: its rollback to height 90 left no anchor \(it holds no blocks\), and this indexer does not serve block 120 as [0-9A-F]+, the block its rows were read under; .*--adopt-lake takes this indexer's history on your word/
    )
    const adopted = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs", "--adopt-lake"])
    expect(adopted.code, adopted.stderr).toBe(0)
    await expectLakeMatchesChain(out, ahead, ["txs"])
    const vouched = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", was, "--datasets", "txs"])
    expect(vouched.code, vouched.stderr).toBe(0)
    expect(vouched.stderr).not.toContain("could not check")
    await expectLakeMatchesChain(was, before, ["txs"])
  })

  it("a lake whose rows a rollback took all of (a compacted file crossing the cut), with anchors above a fork left: the next export of the fork drops those anchors, as --on-reorg rollback would, and gives the new history", async () => {
    const out = tmp()
    for (const top of [90, 110, 130]) {
      const r = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "txs", "--to-height", String(top)])
      expect(r.code, r.stderr).toBe(0)
    }
    expect((await runCli(["compact", "--data", out])).code).toBe(0)
    const rolled = await runCli(["rollback", "--data", out, "--to-height", "120"])
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(JSON.parse(readFileSync(join(out, "txs", "_manifest.json"), "utf8")).files).toEqual([])
    const anchors = identity(out).anchors.map((a: { height: number }) => a.height)
    expect(anchors.some((h: number) => h > FORK)).toBe(true)
    expect(anchors.some((h: number) => h <= FORK)).toBe(true)
    const next = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs"])
    expect(next.code, next.stderr).toBe(0)
    expect(next.stderr).toMatch(/this indexer's block \d+ differs from the lake's: rolled .* no rows above it \(anchors dropped\)/)
    await expectLakeMatchesChain(out, ahead, ["txs"])
  })

  it("a rollback to a height the lake anchored, above its newest block, keeps that anchor beside the block's", async () => {
    const out = await blocksTo80TxsTo120()
    const at95 = identity(out).anchors.find((a: { height: number }) => a.height === 95)
    expect(at95).toBeDefined()
    const rolled = await runCli(["rollback", "--data", out, "--to-height", "95"])
    expect(rolled.code, rolled.stderr).toBe(0)
    const anchors = identity(out).anchors
    expect(anchors).toContainEqual(at95)
    expect(anchors.map((a: { height: number }) => a.height)).toContain(80)
  })

  it("a rollback to a height above the lake's newest block anchors that block, so the lake stays checkable: the rows above it are vouched for by the anchor the cut dropped, or refused where the indexer no longer serves that", async () => {
    const out = await blocksTo80TxsTo120()
    thinAnchorsBelow(out, 120)
    const rolled = await runCli(["rollback", "--data", out, "--to-height", String(FORK)])
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(await count(out, "txs", "height > 80")).toBeGreaterThan(0)
    const block80 = await withDuckDB(async (conn) =>
      String(
        (await conn.runAndReadAll(`SELECT block_hash FROM ${scan(out, "blocks")} WHERE height = 80`)).getRowObjectsJson()[0].block_hash
      )
    )
    expect(identity(out).anchors).toEqual([{ height: 80, hash: block80 }])
    const was = copyOf(out)
    const refused = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "blocks,txs"])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n")).toHaveLength(1)
    const top = await withDuckDB(async (conn) =>
      Number((await conn.runAndReadAll(`SELECT max(height) AS h FROM ${scan(out, "txs")}`)).getRowObjectsJson()[0].h)
    )
    expect(refused.stderr).toMatch(
      new RegExp(
        `cannot check that .* holds this indexer's history at heights 81-${top}: its rollback to height 100 kept rows there but no anchor above 80 .*--to-height 80 drops them`
      )
    )
    const vouched = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", was, "--datasets", "blocks,txs"])
    expect(vouched.code, vouched.stderr).toBe(0)
    await expectLakeMatchesChain(was, before, ["blocks", "txs"])
  })

  it("a run with --to-height below the tip anchors that height, not the tip: a fork above what the lake holds is no fork of the lake's, and the next run reads the new history", async () => {
    for (const datasets of [DATASETS, ["txs"]]) {
      const out = tmp()
      const args = (url: string) => ["export", "--indexer-url", url, "--out", out, "--datasets", datasets.join(",")]
      const first = await runCli([...args(before.indexerUrl), "--to-height", String(FORK - 10)])
      expect(first.code, first.stderr).toBe(0)
      expect(Math.max(...identity(out).anchors.map((a: { height: number }) => a.height))).toBe(FORK - 10)
      const next = await runCli(args(ahead.indexerUrl))
      expect(next.code, next.stderr).toBe(0)
      await expectLakeMatchesChain(out, ahead, datasets)
    }
  })

  it("a rollback of a lake without blocks to a height between two anchors keeps rows nothing vouches for: the next export refuses them in one line, and a cut to the anchor below gives the new history", async () => {
    const out = tmp()
    // commits ending at FORK-5, FORK+10, FORK+20 and the tip, each anchored
    for (const top of [FORK - 5, FORK + 10, FORK + 20, before.chain.tip]) {
      const r = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "txs", "--to-height", String(top)])
      expect(r.code, r.stderr).toBe(0)
    }
    const files: Array<CommittedFile> = JSON.parse(readFileSync(join(out, "txs", "_manifest.json"), "utf8")).files
    files.sort((a, b) => a.range![0] - b.range![0])
    // the first commit reaching above the fork, and the one after it
    const i = files.findIndex((f) => f.max_height! > FORK)
    const [crossing, after] = [files[i], files[i + 1]]
    expect(after.min_height!).toBeLessThan(after.max_height!)
    // a cut inside the next commit's heights drops that commit's file and keeps the crossing one: rows of `before` above
    // the fork; the anchors between the fork and the cut thinned away (as keptAnchors does in a lake of many commits)
    const cut = after.min_height!
    const top = crossing.max_height!
    const lakeJson = identity(out)
    const anchors = lakeJson.anchors.filter((a: { height: number }) => a.height <= FORK || a.height >= cut)
    writeFileSync(join(out, "_lake.json"), JSON.stringify({ ...lakeJson, anchors }))
    const kept = Math.max(...anchors.map((a: { height: number }) => a.height).filter((h: number) => h < cut))
    expect(kept).toBeLessThanOrEqual(FORK)
    const rolled = await runCli(["rollback", "--data", out, "--to-height", String(cut)])
    expect(rolled.code, rolled.stderr).toBe(0)
    // (the lake holds txs of `before` above the fork, which `ahead` does not have)
    expect(await count(out, "txs", `height > ${FORK}`)).toBeGreaterThan(0)
    expect(await count(out, "txs", `height > ${top}`)).toBe(0)
    const refused = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs"])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n")).toHaveLength(1)
    expect(refused.stderr).toMatch(
      new RegExp(
        `cannot check that .* holds this indexer's history at heights ${kept + 1}-${top}: its rollback to height ${cut} kept rows there but no anchor above ${kept} .*chain-lake rollback --data .* --to-height ${kept} drops them`
      )
    )
    const again = await runCli(["rollback", "--data", out, "--to-height", String(kept)])
    expect(again.code, again.stderr).toBe(0)
    const next = await runCli(["export", "--indexer-url", ahead.indexerUrl, "--out", out, "--datasets", "txs"])
    expect(next.code, next.stderr).toBe(0)
    await expectLakeMatchesChain(out, ahead, ["txs"])
  })
})

describe("what a rollback cuts (planCut)", () => {
  const file = (path: string, range: [number, number], heights: [number, number] | null, rows = 1): CommittedFile => ({
    path,
    rows,
    bytes: 1,
    sha256: "x",
    range,
    min_height: heights?.[0] ?? null,
    max_height: heights?.[1] ?? null,
    committed_at: ""
  })
  const manifest = (unit: Manifest["unit"], files: Array<CommittedFile>, committed: Array<[number, number]>): Manifest => ({
    dataset: "d",
    format_version: 1,
    unit,
    columns: [],
    files,
    committed,
    snapshots: []
  })

  it("height datasets: files above go, a file across the height is rewritten, committed ends after it", () => {
    const m = manifest(
      "height",
      [file("a", [1, 51], [1, 50]), file("b", [51, 101], [51, 100]), file("c", [101, 151], [101, 150])],
      [[1, 151]]
    )
    const cut = planCut(m, 75)
    expect(cut.drop.map((f) => f.path)).toEqual(["c"])
    expect(cut.trim.map((f) => f.path)).toEqual(["b"])
    expect(cut.committed).toEqual([[1, 76]])
  })

  it("position datasets: a file tells only its rows' heights (a record may have none), so the cut is the start of the last file starting at or below the height; nothing is cut where the lake never passed it", () => {
    // positions 0..29 (heights 1..40), a hole 30..39, 40..59 (heights 45..70), a hole 60..69, 70..79 (heights 90..99)
    const files = [file("a", [0, 30], [1, 40]), file("b", [40, 60], [45, 70]), file("c", [70, 80], [90, 99])]
    const m = manifest("position", files, [[0, 80]])
    // b starts with rows at 45 <= 60: every position before it is at or below 60; past its last row (70) records may be above
    expect(positionCut(m, 60)).toBe(40)
    // at 80 too: b is the last file starting at or below it, and the hole after it may hold records at 71..89
    expect(positionCut(m, 80)).toBe(40)
    expect(planCut(m, 80)).toMatchObject({ drop: [files[1], files[2]], committed: [[0, 40]] })
    // at 99: records past c's last row may be above it, unless the lake never reached past 99
    expect(positionCut(m, 99)).toBe(70)
    expect(positionCut(m, 99, 99)).toBe(Infinity)
    expect(planCut(m, 120, 99)).toMatchObject({ drop: [], committed: [[0, 80]] })
    // a file without rows (min/max null) proves nothing: the cut is at the last file that does
    const empty = manifest("position", [file("a", [0, 30], [1, 40]), file("e", [30, 40], null)], [[0, 40]])
    expect(positionCut(empty, 50)).toBe(0)
    // no row at or below the height: everything goes
    expect(positionCut(manifest("position", [file("z", [5, 10], [60, 70])], [[5, 10]]), 50)).toBe(0)
  })

  it("snapshots taken above the height, or read while the chain passed it, go whole", () => {
    const snap = (h: number, after: number) => ({
      snapshot_height: h,
      snapshot_time: "",
      consistency: "exact" as const,
      watermark_before: h,
      watermark_after: after,
      rows: 1,
      duplicates_dropped: 0,
      reads: 1,
      lists: []
    })
    const m: Manifest = {
      ...manifest(
        "snapshot",
        [{ ...file("snapshot_height=90/part-0.parquet", [0, 0], null) }, { ...file("snapshot_height=120/part-0.parquet", [0, 0], null) }],
        []
      ),
      snapshots: [snap(90, 90), snap(95, 130), snap(120, 120)]
    }
    const cut = planCut(m, 100)
    expect(cut.snapshots.map((s) => s.snapshot_height)).toEqual([90])
    expect(cut.drop.map((f) => f.path)).toEqual(["snapshot_height=120/part-0.parquet"])
  })
})

describe("the anchors a lake keeps", () => {
  it("the newest 8 and 8 older ones, the oldest always, spread out as the lake grows", () => {
    let anchors: Array<{ height: number }> = []
    for (let h = 1; h <= 1000; h++) anchors = keptAnchors([...anchors, { height: h * 10 }])
    const heights = anchors.map((a) => a.height)
    expect(heights).toHaveLength(16)
    expect(heights.slice(-8)).toEqual([9930, 9940, 9950, 9960, 9970, 9980, 9990, 10000])
    expect(heights[0]).toBe(10)
    // the older ones are spread over the history, not bunched by the newest
    const older = heights.slice(0, 8)
    for (let i = 1; i < older.length; i++) expect(older[i] - older[i - 1], `gap before ${older[i]}`).toBeGreaterThan(300)
  })
})
