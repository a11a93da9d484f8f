/**
 * History you can trust (issue 33): an indexer that moves to another history of the same chain id
 * during a run (a re-sync, a load balancer switching deployments, a reset devnet) fails the run at
 * its next commit, and the lake keeps one history: real CLI processes, real loopback servers.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { selectRows as scan } from "../support/chain-model.js"
import { startProxy, type HostileServer, type Reply } from "../support/hostile.js"
import { tempDirs } from "../support/tmp.js"

const { make: tmp, removeAll } = tempDirs("chain-lake-history-")
let before: Devnet
let after: Devnet

beforeAll(async () => {
  // one chain id, two histories
  before = await startDevnet({ seed: 1, blocks: 300 })
  after = await startDevnet({ seed: 2, blocks: 300 })
})
afterAll(async () => {
  await before?.stop()
  await after?.stop()
  removeAll()
})

/** A proxy answering from `before` for the first `switchAt` requests, then from `after`. */
const switching = (switchAt: number): Promise<HostileServer> => {
  let requests = 0
  return startProxy(before.indexerUrl, async (req, forward): Promise<Reply> => {
    if (++requests <= switchAt) return forward()
    const res = await fetch(after.indexerUrl + req.path)
    return { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "text/plain" }, body: await res.text() }
  })
}

/** Exports through a proxy that switches history after `switchAt` requests; every committed row must be of the first history. */
const exportAcrossSwitch = async (switchAt: number, datasets: string) => {
  const proxy = await switching(switchAt)
  try {
    const out = tmp()
    // the lake holds the first history's heights 1..150 before the run that meets the switch
    const first = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", datasets, "--to-height", "150"])
    expect(first.code, first.stderr).toBe(0)
    const r = await runCli([
      "export",
      "--indexer-url",
      proxy.url,
      "--out",
      out,
      "--datasets",
      datasets,
      "--page-size",
      "10",
      "--concurrency",
      "2"
    ])
    // (a dataset nothing was committed to has no manifest, and no rows to check)
    const committed = (dataset: string) =>
      existsSync(join(out, dataset, "_manifest.json")) &&
      JSON.parse(readFileSync(join(out, dataset, "_manifest.json"), "utf8")).files.length > 0
    const blocks = committed("blocks") ? await scan(out, "blocks", "height, block_hash AS hash") : []
    for (const b of blocks) expect(b.hash, `block ${b.height}`).toBe(before.chain.blockHash(Number(b.height)))
    const txs = committed("txs") ? await scan(out, "txs", "tx_hash") : []
    for (const t of txs) expect(before.chain.lookupTxHash(String(t.tx_hash)), `tx ${t.tx_hash}`).toBeDefined()
    expect(new Set(txs.map((t) => String(t.tx_hash))).size).toBe(txs.length)
    return { r, out, blocks }
  } finally {
    await proxy.close()
  }
}

describe("a source that changes history during a run", () => {
  it("blocks, whose pages cannot tell: the next commit checks the anchored block, fails the run in one line, and nothing read after the switch is committed", async () => {
    const { r, out } = await exportAcrossSwitch(12, "blocks")
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      /^chain-lake: error: the indexer's history changed during the run: block 300 was [0-9A-F]{64} when it started and is [0-9A-F]{64} now \(.*\); nothing read after the change was committed to /
    )
    // said once: the check's own finding is not explained again as what failed
    expect(r.stderr.match(/history changed during the run/g)).toHaveLength(1)
    // a rerun against the new history is refused before anything is written
    const again = await runCli(["export", "--indexer-url", after.indexerUrl, "--out", out, "--datasets", "blocks"])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/holds another history of chain lake-evm-1/)
  })

  it("into an empty folder, switching before the first commit: exit 1, the folder holds no identity and no data, and a run against the new history completes it", async () => {
    const proxy = await switching(8)
    try {
      const out = tmp()
      const args = ["--out", out, "--datasets", "blocks", "--page-size", "10", "--concurrency", "2"]
      const r = await runCli(["export", "--indexer-url", proxy.url, ...args])
      expect(r.code).toBe(1)
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(/^chain-lake: error: the indexer's history changed during the run: block 300 /)
      // (the run's anchor is recorded by its first commit: none came)
      expect(existsSync(join(out, "_lake.json"))).toBe(false)
      const again = await runCli(["export", "--indexer-url", after.indexerUrl, ...args])
      expect(again.code, again.stderr).toBe(0)
      const blocks = await scan(out, "blocks", "height, block_hash AS hash")
      expect(blocks.length).toBe(300)
      for (const b of blocks) expect(b.hash, `block ${b.height}`).toBe(after.chain.blockHash(Number(b.height)))
      expect(JSON.parse(readFileSync(join(out, "_lake.json"), "utf8")).anchors).toEqual([{ height: 300, hash: after.chain.blockHash(300) }])
    } finally {
      await proxy.close()
    }
  })

  it.each([40, 90])(
    "blocks and txs, switching after %i requests: exit 1 saying the history changed (whatever failed first: a commit's check, or txs pages that disagree), every committed block and tx of the first history",
    async (switchAt) => {
      const { r, blocks } = await exportAcrossSwitch(switchAt, "blocks,txs")
      expect(blocks.length).toBeGreaterThanOrEqual(150)
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(
        /^chain-lake: error: the indexer's history changed during the run: block 300 .*; nothing read after the change was committed to .*(\(what failed: .*\))?$/
      )
    }
  )
})

describe("two deployments behind one address, answering from different histories", () => {
  // `before`'s history to height 100, another above it: where the lake ends (100) the two number the txs alike
  let forked: Devnet
  beforeAll(async () => {
    forked = await startDevnet({ seed: 1, blocks: 300, fork: { height: 100, seed: 2 } })
  })
  afterAll(() => forked.stop())
  /** blocks and /status from `before`, the txs list from `forked` (a balancer that sends each list to another deployment) */
  const txsElsewhere = () =>
    startProxy(before.indexerUrl, async (req, forward): Promise<Reply> => {
      if (!req.path.startsWith("/indexer/tx/v1/txs")) return forward()
      const res = await fetch(forked.indexerUrl + req.path)
      return { status: res.status, headers: { "content-type": "application/json" }, body: await res.text() }
    })

  it.each([
    ["in the run's thread", []],
    ["in shard workers", ["--workers", "2"]]
  ])(
    "blocks and txs exported together (%s): the txs per height that blocks' tx_count denies fail the commit that shows it, in one line; the lake is refused (again, or for txs alone) until a rollback below what that run committed, after which it holds one history",
    async (_where, workers) => {
      const proxy = await txsElsewhere()
      try {
        const out = tmp()
        // the lake holds heights 1..100 of `before`, exported from it alone
        const clean = ["--out", out, "--datasets", "blocks,txs", "--page-size", "20", "--concurrency", "2", ...workers]
        const first = await runCli(["export", "--indexer-url", before.indexerUrl, ...clean, "--to-height", "100"])
        expect(first.code, first.stderr).toBe(0)
        const r = await runCli(["export", "--indexer-url", proxy.url, ...clean, "--to-height", "250"])
        expect(r.code, r.stderr).toBe(1)
        const line = r.stderr.trim().split("\n").at(-1)!
        const refused =
          /^chain-lake: error: txs at height \d+: \d+ rows, but blocks\.tx_count is \d+ there: the indexer answers the two lists from different histories \(two deployments behind one address\?\); not committed\. What this run committed from height (\d+) on may mix them: the lake is refused until a rollback below it$/
        expect(line).toMatch(refused)
        const from = Number(refused.exec(line)![1])
        expect(from).toBeGreaterThan(1)
        // run again, or for txs alone (its blocks committed: this run would commit none to check them by): refused until the rollback.
        // The lake names the lowest height of what the run's checked commits hold: a commit under way in the other
        // worker when the first failed may have been checked too, from below the height the error line named
        let recorded = from
        for (const datasets of ["blocks,txs", "txs"]) {
          const again = await runCli(["export", "--indexer-url", proxy.url, ...clean.map((a) => (a === "blocks,txs" ? datasets : a))])
          expect(again.code, again.stderr).toBe(1)
          const refusal =
            /^chain-lake: error: an export into \S+ found its txs and blocks disagree at height \d+ .*: what it committed from height (\d+) on may mix the two: chain-lake rollback --data \S+ --to-height (\d+) drops it/.exec(
              again.stderr.trim().split("\n").at(-1)!
            )
          expect(refusal, again.stderr).not.toBeNull()
          recorded = Number(refusal![1])
          expect([recorded <= from, Number(refusal![2])]).toEqual([true, recorded - 1])
        }
        const rolled = await runCli(["rollback", "--data", out, "--to-height", String(recorded - 1)])
        expect(rolled.code, rolled.stderr).toBe(0)
        const whole = await runCli(["export", "--indexer-url", before.indexerUrl, ...clean, "--to-height", "250"])
        expect(whole.code, whole.stderr).toBe(0)
        const txs = await scan(out, "txs", "tx_hash")
        for (const t of txs) expect(before.chain.lookupTxHash(String(t.tx_hash)), `tx ${t.tx_hash}`).toBeDefined()
        expect(txs.length).toBe(before.chain.txTotal(250))
      } finally {
        await proxy.close()
      }
    }
  )
})

describe("a disagreement recorded where the lake holds nothing", () => {
  it("(the run that found it had its commit refused, as a worker's race can leave it) is cleared by a rollback below it, which the export then accepts", async () => {
    const out = tmp()
    const clean = ["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "blocks,txs", "--page-size", "50"]
    expect((await runCli([...clean, "--to-height", "100"])).code).toBe(0)
    const lakeFile = join(out, "_lake.json")
    const identity = JSON.parse(readFileSync(lakeFile, "utf8")) as Record<string, unknown>
    writeFileSync(lakeFile, JSON.stringify({ ...identity, disagreed: { at: 172, from: 101, found_at: new Date().toISOString() } }))
    const refused = await runCli([...clean, "--to-height", "200"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/chain-lake rollback --data \S+ --to-height 100 drops it/)
    const rolled = await runCli(["rollback", "--data", out, "--to-height", "100"])
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stdout).toMatch(
      /: no rows above it; the txs\/blocks disagreement recorded from height 101 is cleared; logged in _lake\.json/
    )
    const whole = await runCli([...clean, "--to-height", "200"])
    expect(whole.code, whole.stderr).toBe(0)
    expect((await scan(out, "txs", "tx_hash")).length).toBe(before.chain.txTotal(200))
  })
})

describe("the check before each commit", () => {
  it("is shared by commits that ask while one runs, each getting a check begun after it asked: fewer checks than commits, and a switch still fails the run", async () => {
    // the anchored block's answer slowed, so that shards ending together ask during one another's check
    const slowAnchor = (switchAt: number) => {
      let anchorRequests = 0
      return {
        count: () => anchorRequests,
        server: startProxy(before.indexerUrl, async (req, forward) => {
          if (req.path !== "/indexer/block/v1/blocks/300") return forward()
          await new Promise((resolve) => setTimeout(resolve, 150))
          if (++anchorRequests <= switchAt) return forward()
          const res = await fetch(after.indexerUrl + req.path)
          return { status: res.status, headers: { "content-type": "application/json" }, body: await res.text() }
        })
      }
    }
    const exportThrough = async (proxy: HostileServer) =>
      runCli(["export", "--indexer-url", proxy.url, "--out", tmp(), "--datasets", "blocks,txs", "--page-size", "10", "--concurrency", "8"])
    const steady = slowAnchor(Infinity)
    const proxy = await steady.server
    try {
      const r = await exportThrough(proxy)
      expect(r.code, r.stderr).toBe(0)
      // 8 shards of each dataset, each committing once at least; its run start asks for the anchor too
      expect(steady.count()).toBeGreaterThan(0)
      expect(steady.count(), "anchor asks").toBeLessThanOrEqual(8)
    } finally {
      await proxy.close()
    }
    // the anchor's answer changes after the run's first two asks (the run's start): every commit's check sees it
    const switching = slowAnchor(2)
    const switched = await switching.server
    try {
      const r = await exportThrough(switched)
      expect(r.code).toBe(1)
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(/^chain-lake: error: the indexer's history changed during the run: block 300 /)
    } finally {
      await switched.close()
    }
  })
})

describe("a lake whose identity file is gone (or an older lake)", () => {
  it("is refused in one line; --adopt-lake takes it only where its newest block is the indexer's", async () => {
    const out = tmp()
    const first = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "blocks", "--to-height", "120"])
    expect(first.code, first.stderr).toBe(0)
    rmSync(join(out, "_lake.json"))
    const refused = await runCli(["export", "--indexer-url", after.indexerUrl, "--out", out, "--datasets", "blocks"])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim().split("\n").at(-1)).toMatch(
      /^chain-lake: error: .* holds blocks but no _lake\.json naming its chain .*--adopt-lake checks its newest block/
    )
    const wrong = await runCli(["export", "--indexer-url", after.indexerUrl, "--out", out, "--datasets", "blocks", "--adopt-lake"])
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(
      /cannot be adopted for chain lake-evm-1: its newest block 120 is [0-9A-F]{64} of chain lake-evm-1, and this indexer has [0-9A-F]{64}/
    )
    expect(existsSync(join(out, "_lake.json"))).toBe(false)
    const adopted = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "blocks", "--adopt-lake"])
    expect(adopted.code, adopted.stderr).toBe(0)
    expect(adopted.stderr).toMatch(/adopted for chain lake-evm-1 \(its newest block, 120, is this indexer's\)/)
    expect(existsSync(join(out, "_lake.json"))).toBe(true)
    expect(Number((await scan(out, "blocks", "count(*) AS n"))[0].n)).toBe(300)
    // adopted by a run that commits nothing (the lake holds all it asks): named all the same, so
    // the next run needs no --adopt-lake
    rmSync(join(out, "_lake.json"))
    const idle = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "blocks", "--adopt-lake"])
    expect(idle.code, idle.stderr).toBe(0)
    expect(existsSync(join(out, "_lake.json"))).toBe(true)
    const next = await runCli(["export", "--indexer-url", before.indexerUrl, "--out", out, "--datasets", "blocks"])
    expect(next.code, next.stderr).toBe(0)
  })
})
