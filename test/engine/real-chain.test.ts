/**
 * A default export survives a real EVM rollup (issue 32): the rich list answers 400 for a denom it
 * cannot map to an ERC-20 contract (rollytics api/handler/richlist/richlist.go), whatever the
 * denom, and failed txs carry `"events": null` (cometbft's JSON encoder). Real CLI processes over
 * loopback HTTP, the lake read back with DuckDB.
 */
import { existsSync, readdirSync, readFileSync, renameSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { txJson } from "../../src/devnet/render.js"
import { runCli } from "../support/cli.js"
import { startProxy, text, type HostileRequest, type HostileServer, type Reply } from "../support/hostile.js"
import { expectLakeMatchesChain, selectRows as scan } from "../support/chain-model.js"
import { tempDirs } from "../support/tmp.js"
import { queryLake, scan as lakeScan } from "../support/lake.js"
import { Effect } from "effect"
import { DATASETS, exportLayer, runExport } from "../../src/index.js"

/** a tx of a txs page, as the proxies below read and change it */
type TxOnPage = Record<string, unknown> & { readonly height: string; readonly events: ReadonlyArray<{ readonly type: string }> | null }

const { make: tmp, removeAll } = tempDirs("chain-lake-real-chain-")
/** an EVM rollup's own gas token: uinit is no denom of this chain */
const GAS = "GAS"
let devnet: Devnet

beforeAll(async () => {
  devnet = await startDevnet({ seed: 5, blocks: 80, feeDenom: GAS })
})
afterAll(async () => {
  await devnet?.stop()
  removeAll()
})

const snapshots = (out: string) =>
  JSON.parse(readFileSync(join(out, "holders", "_manifest.json"), "utf8")).snapshots as ReadonlyArray<{
    lists: ReadonlyArray<string>
    absent?: ReadonlyArray<string>
  }>
const allTxs = (d: Devnet) =>
  Array.from({ length: d.chain.tip }, (_, k) => k + 1).flatMap((h) =>
    Array.from({ length: d.chain.blockTxCount(h) }, (_, i) => txJson(d.chain, h, i))
  )

describe("a real EVM rollup", () => {
  it("the devnet answers as the real indexer: 400 for the rich list of a denom the chain lacks, null events on txs failed in the ante handler", async () => {
    const uinit = await fetch(`${devnet.indexerUrl}/indexer/richlist/v1/uinit`)
    expect(uinit.status).toBe(400)
    expect(await uinit.text()).toMatch(/uinit/)
    expect((await fetch(`${devnet.indexerUrl}/indexer/richlist/v1/${GAS}`)).status).toBe(200)
    expect(allTxs(devnet).some((t) => t.events === null && t.code !== 0)).toBe(true)
  })

  it("a default export exits 0 with every tx (events null stored as []) and the rich list of every fee denom", async () => {
    const out = tmp()
    const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks,txs,holders"])
    expect(r.code, r.stderr).toBe(0)
    const txs = await scan(out, "txs", "tx_hash, CAST(events AS VARCHAR) AS events")
    const wire = allTxs(devnet)
    expect(txs.length).toBe(wire.length)
    const emptied = new Set(wire.filter((t) => t.events === null).map((t) => t.txhash))
    expect(emptied.size).toBeGreaterThan(0)
    for (const t of txs) if (emptied.has(String(t.txhash))) expect(t.events).toBe("[]")
    const denoms = (await scan(out, "holders", "DISTINCT denom")).map((h) => String(h.denom)).sort()
    expect(denoms).toEqual([GAS, "ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2"].sort())
  })

  it("a denom the user names that has no rich list fails the run in one line, after the other denoms are committed", async () => {
    const out = tmp()
    const r = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      out,
      "--datasets",
      "holders",
      "--denoms",
      `uinit,${GAS}`
    ])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(/^chain-lake: error: holders: the source has no holders of uinit \(.*uinit.*\)/)
    expect(snapshots(out).flatMap((s) => s.lists)).toEqual([`holders of ${GAS}`])
    expect((await scan(out, "holders", "DISTINCT denom")).map((h) => h.denom)).toEqual([GAS])
    // a rerun reads only what is missing, and fails the same way
    const again = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      out,
      "--datasets",
      "holders",
      "--denoms",
      `uinit,${GAS}`
    ])
    expect(again.code).toBe(1)
    expect(snapshots(out).flatMap((s) => s.lists)).toEqual([`holders of ${GAS}`])
  })

  it("an indexer older than Rollytics v1.0.36 (offset keys everywhere, by its /status version) is refused in one line naming it, nothing written; a dev build is read", async () => {
    for (const [version, refused] of [
      ["v1.0.30", true],
      ["1.0.35", true],
      ["v1.0.36", false],
      ["dev", false]
    ] as const) {
      const proxy = await startProxy(devnet.indexerUrl, async (req, forward) => {
        const reply = await forward()
        return req.path === "/status" ? { ...reply, body: JSON.stringify({ ...JSON.parse(reply.body), version }) } : reply
      })
      try {
        const out = tmp()
        const r = await runCli(["export", "--indexer-url", proxy.url, "--out", out, "--datasets", "blocks", "--to-height", "5"])
        if (!refused) {
          expect(r.code, r.stderr).toBe(0)
          continue
        }
        expect(r.code).toBe(1)
        expect(r.stderr.trim().split("\n").at(-1)).toBe(
          `chain-lake: error: the indexer runs Rollytics ${version}, older than v1.0.36: its lists page by offset keys only (the cursors chain-lake reads came with v1.0.36); upgrade the indexer`
        )
        expect(readdirSync(out).filter((f) => !f.startsWith("."))).toEqual([])
      } finally {
        await proxy.close()
      }
    }
  })

  it("a fee denom the rich list refuses (400) is a notice, recorded as absent; the other denoms are exported and the run exits 0", async () => {
    // an indexer whose ERC-20 map lacks the ibc denom
    let proxy: HostileServer | undefined
    try {
      proxy = await startProxy(devnet.indexerUrl, (req, forward) =>
        /\/indexer\/richlist\/v1\/ibc/i.test(req.path)
          ? text(
              400,
              `[NETWORK_ERROR] network request to http://node:1317/minievm/evm/v1/contracts/by_denom?denom=ibc failed: HTTP 404: {"code":5,"message":"collections: not found: key '${decodeURIComponent(req.url.pathname.split("/").at(-1)!)}' of type github.com/cosmos/gogoproto/types.BytesValue","details":[]}`
            )
          : forward()
      )
      const out = tmp()
      const r = await runCli(["export", "--indexer-url", proxy.url, "--out", out, "--datasets", "blocks,holders"])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(
        /holders: the source has no holders of ibc\/27394FB0\w+ \(.*collections: not found.*\); recorded as absent in the snapshot/
      )
      const [snapshot] = snapshots(out)
      expect(snapshot.absent).toEqual([expect.stringMatching(/^holders of ibc\//)])
      expect((await scan(out, "holders", "DISTINCT denom")).map((h) => h.denom)).toEqual([GAS])
      // a rerun at the same height reads nothing again
      const again = await runCli(["export", "--indexer-url", proxy.url, "--out", out, "--datasets", "holders"])
      expect(again.code, again.stderr).toBe(0)
      expect(again.stderr).toMatch(/already committed/)
    } finally {
      await proxy?.close()
    }
  })

  it.each([
    ["the node timed out", `Get "http://minievm:1317/minievm/evm/v1/contracts/by_denom?denom=GAS": context deadline exceeded`],
    ["a lack named beside a timeout", `lookup failed: context deadline exceeded (last answer: collections: not found: key 'GAS')`]
  ])(
    "a 400 whose lookup error is no lack of a contract for certain (%s: the handler answers 400 with any error) is no absent denom: the run fails in one line, no holders snapshot committed",
    async (_why, body) => {
      let proxy: HostileServer | undefined
      try {
        proxy = await startProxy(devnet.indexerUrl, (req, forward) =>
          /\/indexer\/richlist\/v1\//i.test(req.path) ? text(400, body) : forward()
        )
        const out = tmp()
        const r = await runCli(["export", "--indexer-url", proxy.url, "--out", out, "--datasets", "blocks,holders"])
        expect(r.code).toBe(1)
        expect(r.stderr.trim().split("\n").at(-1)).toMatch(
          /^chain-lake: error: indexer answered 400 for .*richlist.*context deadline exceeded/
        )
        expect(existsSync(join(out, "holders", "_manifest.json")) ? snapshots(out) : []).toEqual([])
      } finally {
        await proxy?.close()
      }
    }
  )

  it("a 404 for a denom's rich list (a route or gateway not there) is no absent denom: the run fails; a blocks file missing from the lake is no fewer default denoms", async () => {
    let proxy: HostileServer | undefined
    try {
      proxy = await startProxy(devnet.indexerUrl, (req, forward) =>
        /\/indexer\/richlist\/v1\/ibc/i.test(req.path) ? text(404, "Cannot GET " + req.url.pathname) : forward()
      )
      const out = tmp()
      const r = await runCli(["export", "--indexer-url", proxy.url, "--out", out, "--datasets", "blocks,holders"])
      expect(r.code).toBe(1)
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(/^chain-lake: error: indexer answered 404 for .*richlist/)
      // a committed blocks file gone (an unfinished commit, or a lost file): the default denoms are not read from fewer blocks
      const manifest = JSON.parse(readFileSync(join(out, "blocks", "_manifest.json"), "utf8")) as { files: ReadonlyArray<{ path: string }> }
      renameSync(join(out, "blocks", manifest.files[0].path), join(out, "moved.parquet"))
      const short = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "holders"])
      expect(short.code).toBe(1)
      expect(short.stderr.trim().split("\n").at(-1)).toMatch(
        /blocks: 1 of the \d+ files? its _manifest\.json lists is missing and no export staged it: the lake lost committed files/
      )
    } finally {
      await proxy?.close()
    }
  })

  it("block times in the indexer's local zone (RFC3339 with an offset, as a server outside UTC writes them) are stored as the UTC instants they name: blocks, evm_txs, evm_logs", async () => {
    // the devnet's block list and blocks by height, their times written at +09:00
    const local = (utc: string) => {
      const t = new Date(Date.parse(utc) + 9 * 3600_000).toISOString().slice(0, 19)
      return `${t}+09:00`
    }
    const tokyo = await startProxy(devnet.indexerUrl, async (request, forward) => {
      const reply = await forward()
      if (!request.path.startsWith("/indexer/block/v1/blocks")) return reply
      return { ...reply, body: reply.body.replace(/"timestamp":"([0-9T:-]+)Z"/g, (_, t: string) => `"timestamp":"${local(`${t}Z`)}"`) }
    })
    try {
      const probe = (await (await fetch(`${tokyo.url}/indexer/block/v1/blocks/1`)).json()) as { block: { timestamp: string } }
      expect(probe.block.timestamp).toMatch(/\+09:00$/)
      const out = tmp()
      const r = await runCli(["export", "--indexer-url", tokyo.url, "--out", out, "--datasets", "blocks,evm_txs,evm_logs"])
      expect(r.code, r.stderr).toBe(0)
      const utc = new Map(
        (
          (await (await fetch(`${devnet.indexerUrl}/indexer/block/v1/blocks?pagination.limit=1000`)).json()) as {
            blocks: Array<{ height: string; timestamp: string }>
          }
        ).blocks.map((b: { height: string; timestamp: string }) => [Number(b.height), new Date(b.timestamp).toISOString()])
      )
      for (const dataset of ["blocks", "evm_txs", "evm_logs"]) {
        const rows = await scan(out, dataset, "height, strftime(timestamp, '%Y-%m-%dT%H:%M:%S.%gZ') AS t")
        expect(rows.length, dataset).toBeGreaterThan(0)
        for (const row of rows) expect(row.t, `${dataset} at ${row.height}`).toBe(utc.get(Number(row.height)))
      }
    } finally {
      await tokyo.close()
    }
  })
})

describe("a plan read at a growing tip", () => {
  it("an export at a growing tip, beside a dashboard that keeps the newest tx's page cached, holds every tx of every block up to the tip it names: its /status and probes are read afresh, the probes after the status", async () => {
    // a block every 150 ms; the page a probe asks, asked every 100 ms by another client, is kept a second
    const growing = await startDevnet({ seed: 13, blocks: 60, blockTimeMs: 150 })
    const newest = `${growing.indexerUrl}/indexer/tx/v1/txs?pagination.limit=1&pagination.reverse=true`
    // (one still asking when the devnet stops is no failure of the test)
    const dashboard = setInterval(() => {
      void fetch(newest)
        .then((r) => r.text())
        .catch(() => undefined)
    }, 100)
    try {
      for (let run = 0; run < 3; run++) {
        await new Promise((resolve) => setTimeout(resolve, 400))
        const out = tmp()
        const report = await Effect.runPromise(
          runExport(DATASETS, { datasets: ["txs"], pageSize: 100 }).pipe(
            Effect.provide(exportLayer({ indexerUrl: growing.indexerUrl, out }))
          )
        )
        const counts = await queryLake(`SELECT height, count(*) AS n FROM ${lakeScan(out, "txs")} GROUP BY height`)
        const byHeight = new Map(counts.map((c) => [Number(c.height), Number(c.n)]))
        const missing = Array.from({ length: report.tip }, (_, k) => k + 1).filter(
          (h) => (byHeight.get(h) ?? 0) !== growing.chain.blockTxCount(h)
        )
        expect({ run, tip: report.tip, missing }).toEqual({ run, tip: report.tip, missing: [] })
      }
    } finally {
      clearInterval(dashboard)
      await growing.stop()
    }
  }, 60_000)

  /** A request for the newest row of the list at `path` (no cursor): the list's probe. */
  const probeOf = (path: string) => (request: HostileRequest) =>
    request.path.startsWith(`${path}?`) && !request.url.searchParams.has("pagination.key")

  /**
   * Two deployments of chain `seed`, one `lag` blocks behind the other (`full`), behind one
   * address: the requests `fromBehind` picks are answered by the one behind, the others by `full`,
   * whose answers `rewrite` may change. `use` is given the address and both devnets.
   */
  const throughReplicas = async <A>(
    o: { readonly seed: number; readonly blocks: number; readonly lag: number; readonly txsPerBlock?: number },
    fromBehind: (request: HostileRequest) => boolean,
    use: (url: string, full: Devnet, behind: Devnet) => Promise<A>,
    rewrite?: (request: HostileRequest, reply: Reply & { readonly body: string }) => Reply
  ): Promise<A> => {
    const shape = o.txsPerBlock === undefined ? {} : { txsPerBlock: o.txsPerBlock }
    const full = await startDevnet({ seed: o.seed, blocks: o.blocks, ...shape })
    const behind = await startDevnet({ seed: o.seed, blocks: o.blocks - o.lag, ...shape })
    const replicas = await startProxy(full.indexerUrl, async (request, forward) => {
      if (!fromBehind(request)) return rewrite ? rewrite(request, await forward()) : forward()
      const res = await fetch(behind.indexerUrl + request.path)
      return { status: res.status, headers: { "content-type": "application/json" }, body: await res.text() }
    })
    try {
      return await use(replicas.url, full, behind)
    } finally {
      await replicas.close()
      await behind.stop()
      await full.stop()
    }
  }

  /** An export of `datasets` from `url` refused with a last line matching `line`, nothing written. */
  const refusedBeforeWriting = async (url: string, datasets: string, line: RegExp) => {
    const out = tmp()
    const r = await runCli(["export", "--indexer-url", url, "--out", out, "--datasets", datasets])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(line)
    expect(readdirSync(out).filter((f) => !f.startsWith("."))).toEqual([])
  }

  /** A txs page with each tx `change` gives (undefined: as it was). */
  const txsPage = (
    reply: Reply & { readonly body: string },
    change: (tx: TxOnPage, page: ReadonlyArray<TxOnPage>) => TxOnPage | undefined
  ) => {
    const page = JSON.parse(reply.body) as { txs: Array<TxOnPage> }
    const txs = page.txs
    page.txs = txs.map((tx) => change(tx, txs) ?? tx)
    return { ...reply, body: JSON.stringify(page) }
  }
  /** the same tx, its "evm" events gone (as if it emitted no EVM logs) */
  const quiet = (tx: TxOnPage): TxOnPage => ({ ...tx, events: (tx.events ?? []).filter((e) => e.type !== "evm") })

  it("a newest-tx probe behind /status (a replica two blocks behind) is refused in one line before anything is written: the tip's blocks count txs the probe did not see", () =>
    throughReplicas({ seed: 15, blocks: 60, lag: 2 }, probeOf("/indexer/tx/v1/txs"), async (url, full) => {
      expect(full.chain.blockTxCount(59) + full.chain.blockTxCount(60)).toBeGreaterThan(0)
      await refusedBeforeWriting(
        url,
        "txs",
        /^chain-lake: error: .*its newest record is at height 58, but block 59 \(of the 60 that \/status names\) counts \d+ of them: the indexer's answers disagree/
      )
    }))

  it("a newest-EVM-receipt probe behind /status is refused before anything is written: the tip's cosmos txs emitted EVM logs the probe's receipts do not reach; a txs list behind too is held to the blocks' counts", async () => {
    const receipts = (full: Devnet, from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, k) => from + k).reduce((n, h) => n + full.chain.evmTxsAt(h).length, 0)
    for (const [paths, failing] of [
      [["/indexer/tx/v1/evm-txs"], "evm-txs"],
      [["/indexer/tx/v1/evm-txs", "/indexer/tx/v1/txs"], "txs"]
    ] as const)
      await throughReplicas(
        { seed: 15, blocks: 60, lag: 2 },
        (request) => paths.some((p) => probeOf(p)(request)),
        async (url, full) => {
          expect(receipts(full, 59, 60)).toBeGreaterThan(0)
          await refusedBeforeWriting(
            url,
            "evm_txs,evm_logs",
            new RegExp(
              `^chain-lake: error: pagination of ${failing} cannot be trusted: its newest record is at height 58, but block (59|60) \\(of the 60 that /status names\\) counts \\d+ of them: the indexer's answers disagree`
            )
          )
          // answered in full, the same export holds every receipt up to the tip
          const out = tmp()
          const r = await runCli(["export", "--indexer-url", full.indexerUrl, "--out", out, "--datasets", "evm_txs"])
          expect(r.code, r.stderr).toBe(0)
          expect((await scan(out, "evm_txs", "height")).length).toBe(receipts(full, 1, 60))
        }
      )
  })

  /**
   * An export of evm_txs whose receipts' probe is answered by a replica `lag` blocks behind a chain
   * of `blocks`, where the txs list shows no EVM logs from height `quietFrom` up (the heights a replica
   * between the two serves without them): more than a page of txs there, and receipts between the
   * probe and them, which the run must find by reading the txs back down to the probe's height.
   */
  const receiptsBehindQuietTxs = (o: { seed: number; blocks: number; lag: number; txsPerBlock: number; quietFrom: number }) =>
    throughReplicas(
      o,
      probeOf("/indexer/tx/v1/evm-txs"),
      async (url, full) => {
        const heights = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k)
        expect(heights(o.quietFrom, o.blocks).reduce((n, h) => n + full.chain.blockTxCount(h), 0)).toBeGreaterThan(100)
        expect(heights(o.blocks - o.lag + 1, o.quietFrom - 1).reduce((n, h) => n + full.chain.evmTxsAt(h).length, 0)).toBeGreaterThan(0)
        return runCli(["export", "--indexer-url", url, "--out", tmp(), "--datasets", "evm_txs"])
      },
      (request, reply) =>
        request.path.startsWith("/indexer/tx/v1/txs?")
          ? txsPage(reply, (tx) => (Number(tx.height) >= o.quietFrom ? quiet(tx) : undefined))
          : reply
    )

  it("a newest-EVM-receipt probe behind /status, where the txs above it emitted no EVM logs but one is an Ethereum tx that reverted (a receipt all the same): refused, nothing written", () => {
    const ethereumTx = (tx: TxOnPage): TxOnPage => ({
      ...tx,
      code: 5,
      tx: {
        body: {
          messages: [
            {
              "@type": "/minievm.evm.v1.MsgCall",
              sender: "init1zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3ny8w8h",
              contract_addr: "0x1",
              input: "0x",
              value: "0",
              access_list: []
            }
          ],
          memo: '{"type":2,"gas_fee_cap":1000000000,"gas_tip_cap":0,"gas_limit":210000}',
          timeout_height: "0",
          extension_options: [],
          non_critical_extension_options: []
        },
        auth_info: {
          signer_infos: [{ mode_info: { single: { mode: "SIGN_MODE_ETHEREUM" } }, sequence: "3" }],
          fee: { amount: [], gas_limit: "210000" }
        },
        signatures: ["c2ln"]
      }
    })
    // above the replica's receipts: no EVM logs, no Ethereum tx (a memo that is none's: the devnet's MsgCalls carry them),
    // but the tip's first tx, an Ethereum tx that reverted
    const cosmosOnly = (tx: TxOnPage): TxOnPage => {
      const body = (tx.tx as { body: Record<string, unknown> }).body
      return { ...quiet(tx), tx: { ...(tx.tx as object), body: { ...body, memo: "" } } }
    }
    // one tx of block 60 (the first one a page showed), whatever pages the run asks
    let reverted: string | undefined
    const rewritten = (tx: TxOnPage) =>
      Number(tx.height) <= 58
        ? undefined
        : Number(tx.height) === 60 && (reverted ??= String(tx.txhash)) === tx.txhash
          ? ethereumTx(quiet(tx))
          : cosmosOnly(tx)
    return throughReplicas(
      { seed: 15, blocks: 60, lag: 2 },
      probeOf("/indexer/tx/v1/evm-txs"),
      async (url, full) => {
        expect(full.chain.blockTxCount(60)).toBeGreaterThan(0)
        await refusedBeforeWriting(
          url,
          "evm_txs",
          /^chain-lake: error: pagination of evm-txs cannot be trusted: its newest record is at height 58, but block 60 \(of the 60 that \/status names\) counts 1 of them/
        )
      },
      (request, reply) => (request.path.startsWith("/indexer/tx/v1/txs?") ? txsPage(reply, rewritten) : reply)
    )
  })

  it("an internal txs list behind /status's internal_tx_height (its newest record below it, a block with txs between): refused, nothing written", () =>
    throughReplicas(
      { seed: 15, blocks: 60, lag: 8 },
      (request) => request.path.startsWith("/indexer/tx/v1/evm-internal-txs?"),
      async (url, full, behind) => {
        const watermark = full.chain.internalTxHeight
        expect(watermark).toBeGreaterThan(behind.chain.internalTxHeight)
        await refusedBeforeWriting(
          url,
          "evm_internal_txs",
          new RegExp(
            `^chain-lake: error: pagination of evm-internal-txs cannot be trusted: its newest record is at height \\d+, but block \\d+ \\(of the ${watermark} that /status names\\) holds txs, and internal_tx_height is the newest height holding internal txs`
          )
        )
        // answered by one deployment, the same export passes
        const whole = await runCli(["export", "--indexer-url", full.indexerUrl, "--out", tmp(), "--datasets", "evm_internal_txs"])
        expect(whole.code, whole.stderr).toBe(0)
      }
    ))

  it("replicas two blocks apart, /status and the internal txs' position probes answered by the one behind, the newest internal tx by the other: the plan's search meets a position the newest row says is held but the replica lacks, and is refused before writing (it read it as past the end, and committed internal txs above the heights asked at exit 0)", () =>
    throughReplicas(
      { seed: 15, blocks: 60, lag: 2 },
      (request) =>
        request.path.startsWith("/status") ||
        (request.path.startsWith("/indexer/tx/v1/evm-internal-txs?") &&
          request.url.searchParams.has("pagination.key") &&
          request.url.searchParams.get("pagination.limit") === "1"),
      async (url, full, behind) => {
        expect(full.chain.traceTotal()).toBeGreaterThan(behind.chain.traceTotal())
        await refusedBeforeWriting(
          url,
          "evm_internal_txs",
          /^chain-lake: error: pagination of evm-internal-txs cannot be trusted \(page key [^)]+\): no row follows sequence \d+, yet the list's newest row is sequence \d+: the indexer's answers disagree/
        )
      }
    ))

  it("a block's cosmos txs read from a replica two blocks behind (its txs pages and by_height answer no tx at the tip's heights): a synthetic receipt there whose cosmos tx is not found is refused, not committed with no link", () =>
    throughReplicas(
      { seed: 15, blocks: 60, lag: 2 },
      (request) =>
        request.path.startsWith("/indexer/tx/v1/txs/by_height/") ||
        (request.path.startsWith("/indexer/tx/v1/txs?") && request.url.searchParams.has("pagination.key")),
      async (url, full) => {
        const tip = full.chain.tip
        const synthetic = [tip - 1, tip].filter((h) => full.chain.evmTxsAt(h).some((t) => !full.chain.isEvmTx(t.plan)))
        expect(synthetic.length).toBeGreaterThan(0)
        const out = tmp()
        const r = await runCli(["export", "--indexer-url", url, "--out", out, "--datasets", "evm_txs"])
        expect(r.code, r.stderr).toBe(1)
        expect(r.stderr.trim().split("\n").at(-1)).toMatch(
          new RegExp(
            `^chain-lake: error: pagination of evm-txs cannot be trusted .*0x[0-9a-f]{64} at height (${synthetic.join("|")}) stands for a cosmos tx, but none of the 0 txs the indexer lists at that height is it: the indexer's answers disagree`
          )
        )
        // no receipt of those heights was committed, linked or not
        const files: Array<{ max_height: number }> = JSON.parse(readFileSync(join(out, "evm_txs", "_manifest.json"), "utf8")).files
        expect(files.filter((f) => f.max_height >= Math.min(...synthetic))).toEqual([])
        // evm_logs alone reads no link: it neither asks for the blocks' cosmos txs nor is refused for them
        const logs = tmp()
        const l = await runCli(["export", "--indexer-url", url, "--out", logs, "--datasets", "evm_logs"])
        expect(l.code, l.stderr).toBe(0)
        await expectLakeMatchesChain(logs, full, ["evm_logs"])
      }
    ))

  /**
   * An export of `datasets` (and `args`) through replicas two blocks apart where only the `nth`
   * request `matching` is answered by the one behind: exit 0, every row of the chain (the run asked
   * again past that answer).
   */
  const passesWithOneAnswerBehind = async (
    matching: (request: HostileRequest) => boolean,
    nth: number,
    datasets: ReadonlyArray<string>,
    args: ReadonlyArray<string> = []
  ) => {
    let seen = 0
    await throughReplicas(
      { seed: 15, blocks: 60, lag: 2 },
      (request) => matching(request) && ++seen === nth,
      async (url, full) => {
        const out = tmp()
        const r = await runCli(["export", "--indexer-url", url, "--out", out, "--datasets", datasets.join(","), ...args])
        expect(r.code, r.stderr).toBe(0)
        expect(seen).toBeGreaterThan(nth)
        await expectLakeMatchesChain(out, full, datasets)
      }
    )
  }

  it("a commit's check of the anchored block answered by a replica two blocks behind (a 404: it does not serve the tip yet) asks again, and the run ends with every block (it failed saying the history changed, the block gone)", () =>
    // the first read of block 60 anchors the run; the second is the first commit's check
    passesWithOneAnswerBehind((request) => request.path.startsWith("/indexer/block/v1/blocks/60"), 2, ["blocks"]))

  it("a follow to --until-height whose round reads /status from a replica two blocks behind (its poll from the other): the round planned short of the height is run again, and the follow ends with every block and tx up to it (it ended at exit 0 two blocks short)", () =>
    // the run's first /status is its preflight, the second the follow's poll, the third its round's
    passesWithOneAnswerBehind(
      (request) => request.path.startsWith("/status"),
      3,
      ["blocks", "txs"],
      ["--follow", "--poll", "100ms", "--until-height", "60"]
    ))

  it("a follow whose receipts probe is answered by a replica two blocks behind, for its first rounds: each such round is tried again at the next poll, and the follow ends with every receipt", () => {
    let lagging = 2
    return throughReplicas(
      { seed: 15, blocks: 60, lag: 2 },
      (request) => probeOf("/indexer/tx/v1/evm-txs")(request) && lagging-- > 0,
      async (url, full) => {
        const out = tmp()
        const args = ["--out", out, "--datasets", "evm_txs", "--follow", "--poll", "100ms", "--until-height", "60"]
        const r = await runCli(["export", "--indexer-url", url, ...args])
        expect(r.code, r.stderr).toBe(0)
        expect(r.stderr).toMatch(/its newest record is at height 58, .*\(following: trying again at the next poll, 1 of 20\)/)
        await expectLakeMatchesChain(out, full, ["evm_txs"])
      }
    )
  })

  it("a newest-EVM-receipt probe ten blocks behind, where the newest 100 txs emitted no EVM logs but older ones above it did: the txs are read back down to the probe's height, and the run is refused", async () => {
    const r = await receiptsBehindQuietTxs({ seed: 16, blocks: 60, lag: 10, txsPerBlock: 40, quietFrom: 57 })
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      /pagination of evm-txs cannot be trusted: its newest record is at height 50, but block 5\d/
    )
  })

  it("a newest-EVM-receipt probe forty blocks behind, where the newest 100 txs and more emitted no EVM logs but older ones above it did: the txs are read back down to the probe's height (up to 100 heights), and the run is refused", async () => {
    const r = await receiptsBehindQuietTxs({ seed: 17, blocks: 100, lag: 40, txsPerBlock: 4, quietFrom: 70 })
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      /pagination of evm-txs cannot be trusted: its newest record is at height 60, but block 6\d/
    )
  })

  it("a /status read later than the probes (a slow status: 200 ms, a block every 150 ms) plans no tip the probes had not seen: they are asked once it has answered", async () => {
    const growing = await startDevnet({ seed: 14, blocks: 60, blockTimeMs: 150 })
    const slowStatus = await startProxy(growing.indexerUrl, async (request, forward) => {
      if (request.path === "/status") await new Promise((resolve) => setTimeout(resolve, 200))
      return forward()
    })
    try {
      const out = tmp()
      const report = await Effect.runPromise(
        runExport(DATASETS, { datasets: ["txs"], pageSize: 100 }).pipe(Effect.provide(exportLayer({ indexerUrl: slowStatus.url, out })))
      )
      const counts = await queryLake(`SELECT height, count(*) AS n FROM ${lakeScan(out, "txs")} GROUP BY height`)
      const byHeight = new Map(counts.map((c) => [Number(c.height), Number(c.n)]))
      const missing = Array.from({ length: report.tip }, (_, k) => k + 1).filter(
        (h) => (byHeight.get(h) ?? 0) !== growing.chain.blockTxCount(h)
      )
      expect({ tip: report.tip, missing }).toEqual({ tip: report.tip, missing: [] })
    } finally {
      await slowStatus.close()
      await growing.stop()
    }
  })
})
