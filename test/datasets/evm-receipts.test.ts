/**
 * EVM rows mean what minievm means (issue 32): receipts standing for cosmos txs are marked and
 * joined to their cosmos tx, never read as contract creations; transactionIndex counts receipts
 * from 1; logs numbered per tx (receipts indexed before minievm's March 2026 fix) export whole under
 * a key that holds; heights whose trace failed hold no internal txs and are not waited for.
 * Real loopback HTTP to the devnet, real Parquet, DuckDB; expected values from the chain model.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DATASETS } from "../../src/datasets/index.js"
import { isEthereumTx } from "../../src/datasets/lists.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { evmReceiptsAt, internalTxsAt } from "../../src/devnet/render.js"
import { keccak256Hex } from "../../src/evm/keccak.js"
import { internalTxRows } from "../support/chain-model.js"
import { runCli } from "../support/cli.js"
import { startProxy } from "../support/hostile.js"
import { queryLake, scan } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const { make: tmp, removeAll } = tempDirs("chain-lake-evm-receipts-")
let devnet: Devnet
let perTx: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 32, blocks: 150 })
  perTx = await startDevnet({ seed: 33, blocks: 150, logIndex: "per-tx" })
})
afterAll(async () => {
  await Promise.all([devnet.stop(), perTx.stop()])
  removeAll()
})

const receipts = (d: Devnet) => Array.from({ length: d.chain.tip }, (_, k) => evmReceiptsAt(d.chain, k + 1)).flat()
const keyOf = (name: string) =>
  DATASETS.find((d) => d.name === name)!
    .key.map((c) => `"${c}"`)
    .join(", ")

describe("keccak256", () => {
  it("gives Ethereum's hashes (original Keccak padding, not SHA3-256's)", () => {
    const of = (s: string) => keccak256Hex(new TextEncoder().encode(s))
    expect(of("")).toBe("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
    expect(of("Transfer(address,address,uint256)")).toBe("ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
  })
})

describe("receipts standing for cosmos txs", () => {
  it("are marked, carry no sender or recipient, never count as creations, and join txs by their cosmos tx hash", async () => {
    const out = tmp()
    const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks,txs,evm_txs,evm_logs"], {
      timeoutMs: 120_000
    })
    expect(r.code, r.stderr).toBe(0)
    const all = receipts(devnet)
    const synthetic = all.filter((x) => x.synthetic)
    const creations = all.filter((x) => x.plan.kind === "evm_create")
    // the chain has both kinds (bank sends and IBC transfers that succeeded), and a creation or more
    expect(synthetic.length).toBeGreaterThan(10)
    expect(creations.length).toBeGreaterThan(0)
    // on the wire such a receipt looks like a failed creation from the zero address
    expect(
      synthetic.every(
        (x) =>
          x.receipt.from === "0x" + "0".repeat(40) && x.receipt.to === "" && x.receipt.contractAddress === null && x.receipt.type === "0x0"
      )
    ).toBe(true)

    const [counts] =
      await queryLake(`SELECT count(*) FILTER (WHERE is_cosmos_tx) AS cosmos, count(*) FILTER (WHERE to_address IS NULL AND NOT is_cosmos_tx) AS creations,
      count(*) FILTER (WHERE is_cosmos_tx AND (from_address IS NOT NULL OR to_address IS NOT NULL OR created_address IS NOT NULL)) AS with_party, count(*) AS n FROM ${scan(out, "evm_txs")}`)
    expect([Number(counts.cosmos), Number(counts.creations), Number(counts.with_party), Number(counts.n)]).toEqual([
      synthetic.length,
      creations.length,
      0,
      all.length
    ])

    // each joins the cosmos tx it stands for: a successful bank send or IBC transfer of the same block
    const joined =
      await queryLake(`SELECT e.tx_hash AS evm_tx_hash, t.tx_hash, t.height, e.height AS evm_height, t.code, t.message_types[1] AS type
      FROM ${scan(out, "evm_txs")} e JOIN ${scan(out, "txs")} t ON t.tx_hash = e.cosmos_tx_hash WHERE e.is_cosmos_tx ORDER BY e.height, e.tx_index`)
    expect(joined.map((j) => [j.evm_tx_hash, j.tx_hash])).toEqual(
      synthetic.map((x) => [x.receipt.transactionHash.toLowerCase(), devnet.chain.txHash(x.plan.height, x.plan.index)])
    )
    expect(
      joined.every((j) => Number(j.code) === 0 && String(j.height) === String(j.evm_height) && /MsgSend|MsgTransfer/.test(String(j.type)))
    ).toBe(true)
    // no cosmos tx that failed has one (minievm builds none for it)
    const [failed] = await queryLake(
      `SELECT count(*) AS n FROM ${scan(out, "txs")} t JOIN ${scan(out, "evm_txs")} e ON e.cosmos_tx_hash = t.tx_hash WHERE t.code <> 0`
    )
    expect(Number(failed.n)).toBe(0)

    // transactionIndex: 1..n over each block's receipts, synthetic ones included
    const blocks = await queryLake(
      `SELECT height, min(tx_index) lo, max(tx_index) hi, count(*) n, count(DISTINCT tx_index) d FROM ${scan(out, "evm_txs")} GROUP BY 1`
    )
    expect(blocks.every((b) => Number(b.lo) === 1 && Number(b.hi) === Number(b.n) && Number(b.d) === Number(b.n))).toBe(true)
  })
})

describe("the cosmos txs a block's synthetic receipts stand for", () => {
  it("are read by walking the txs list (a page of txs holds several blocks' hashes: fewer requests than blocks), each link kept; a server serving fewer rows than asked has them read by height, walked on past its short pages", async () => {
    const byHeight = (path: string) => /^\/indexer\/tx\/v1\/txs\/by_height\/\d+/.test(path)
    const txsList = (path: string) => /^\/indexer\/tx\/v1\/txs\?/.test(path)
    const counting = await startProxy(devnet.indexerUrl, (_req, forward) => forward())
    // at most 2 rows a page, whatever was asked, by height and in the txs list: a walk no longer pays
    const capping = await startProxy(devnet.indexerUrl, async (req, forward) =>
      byHeight(req.path) || txsList(req.path)
        ? forward(req.path.replace(/pagination\.limit=\d+/, (m) => (m === "pagination.limit=1" ? m : "pagination.limit=2")))
        : forward()
    )
    try {
      const linked = `SELECT count(*) FILTER (WHERE is_cosmos_tx) AS cosmos, count(*) FILTER (WHERE is_cosmos_tx AND cosmos_tx_hash IS NULL) AS unlinked, count(DISTINCT height) FILTER (WHERE is_cosmos_tx) AS heights`
      const synthetic = receipts(devnet).filter((x) => x.synthetic)
      for (const server of [counting, capping]) {
        const out = tmp()
        const r = await runCli(["export", "--indexer-url", server.url, "--out", out, "--datasets", "evm_txs"], { timeoutMs: 120_000 })
        expect(r.code, r.stderr).toBe(0)
        const [counts] = await queryLake(`${linked} FROM ${scan(out, "evm_txs")}`)
        expect({ cosmos: Number(counts.cosmos), unlinked: Number(counts.unlinked) }).toEqual({ cosmos: synthetic.length, unlinked: 0 })
        const asked = server.requests.filter((q) => byHeight(q.path) || txsList(q.path)).length
        // (a block by height costs one request: the walk's pages and probes cost fewer than a third of that)
        if (server === counting) expect(asked).toBeLessThan(Number(counts.heights) / 3)
        else expect(server.requests.filter((q) => byHeight(q.path)).length).toBeGreaterThan(Number(counts.heights) / 2)
      }
    } finally {
      await Promise.all([counting.close(), capping.close()])
    }
  })
})

describe("logs numbered per tx (receipts indexed before minievm's March 2026 fix)", () => {
  it("export whole, each row named by the datasets' keys, where (block, log index) repeats", async () => {
    const out = tmp()
    const r = await runCli(
      [
        "export",
        "--indexer-url",
        perTx.indexerUrl,
        "--out",
        out,
        "--datasets",
        "blocks,evm_txs,evm_logs,token_transfers_evm,nft_transfers"
      ],
      { timeoutMs: 120_000 }
    )
    expect(r.code, r.stderr).toBe(0)
    const logs = receipts(perTx).flatMap((x) => x.receipt.logs)
    // every receipt's logs start at 0
    expect(receipts(perTx).every((x) => x.receipt.logs.every((l, k) => l.logIndex === "0x" + k.toString(16)))).toBe(true)
    const [e] = await queryLake(
      `SELECT count(*) n, count(DISTINCT (${keyOf("evm_logs")})) k, count(DISTINCT (height, log_index)) b FROM ${scan(out, "evm_logs")}`
    )
    expect(Number(e.n)).toBe(logs.length)
    expect(Number(e.k)).toBe(logs.length)
    // the old key would have named two logs alike
    expect(Number(e.b)).toBeLessThan(logs.length)
    for (const name of ["token_transfers_evm", "nft_transfers"]) {
      const [t] = await queryLake(`SELECT count(*) n, count(DISTINCT (${keyOf(name)})) k FROM ${scan(out, name)}`)
      expect(Number(t.n), name).toBeGreaterThan(0)
      expect(Number(t.k), name).toBe(Number(t.n))
    }
    const v = await runCli(["verify", "--data", out])
    expect(v.code, v.stdout).toBe(0)
  })
})

describe("heights whose trace failed", () => {
  it("hold no internal txs, and internal_tx_height is the highest height holding some", async () => {
    const c = devnet.chain
    const failed = Array.from({ length: c.internalTxHeight }, (_, k) => k + 1).filter(
      (h) => c.traceFailed(h) && c.evmTxsAt(h).some(({ plan }) => plan.traceSize > 0)
    )
    expect(failed.length).toBeGreaterThan(0)
    for (const h of failed) {
      expect(internalTxsAt(c, h)).toEqual([])
      const page = (await (await fetch(`${devnet.indexerUrl}/indexer/tx/v1/evm-internal-txs/by_height/${h}`)).json()) as {
        internal_txs: Array<unknown>
      }
      expect(page.internal_txs).toEqual([])
    }
    const status = (await (await fetch(`${devnet.indexerUrl}/status`)).json()) as { height: number; internal_tx_height: number }
    const rows = internalTxRows(c, 1)
    expect(status.internal_tx_height).toBe(c.internalTxHeight)
    expect(Math.max(...rows.map((row) => Number(row.height)))).toBe(status.internal_tx_height)
  })

  it("follow --until-height past internal_tx_height on a chain that holds still: ends with exit 1 naming the heights it cannot vouch for, with every internal tx there is", async () => {
    const c = devnet.chain
    // the devnet chain does not grow: the mark stays below the tip (later blocks hold txs but no traces yet, or failed ones)
    expect(c.internalTxHeight).toBeLessThan(c.tip)
    const out = tmp()
    const r = await runCli(
      [
        "export",
        "--indexer-url",
        devnet.indexerUrl,
        "--out",
        out,
        "--follow",
        "--poll",
        "50ms",
        "--until-height",
        String(c.tip),
        "--datasets",
        "evm_internal_txs"
      ],
      { timeoutMs: 60_000 }
    )
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      new RegExp(
        `^chain-lake: error: internal_tx_height stayed at ${c.internalTxHeight} for \\d+ polls with the tip at ${c.tip}: heights ${c.internalTxHeight + 1}\\.\\.${c.tip} of its datasets are not exported`
      )
    )
    const [i] = await queryLake(`SELECT count(*) n FROM ${scan(out, "evm_internal_txs")}`)
    expect(Number(i.n)).toBe(internalTxRows(c, 1).length)
  })
})

describe("which cosmos txs carry an Ethereum tx (isEthereumTx: minievm gives each a receipt, reverted or not)", () => {
  const tx = (o: { type?: string; memo?: string; mode?: string; signatures?: number; messages?: number }) => ({
    tx: {
      body: {
        messages: Array.from({ length: o.messages ?? 1 }, () => ({ "@type": o.type ?? "/minievm.evm.v1.MsgCall" })),
        memo: o.memo ?? '{"type":2,"gas_fee_cap":1000000000,"gas_tip_cap":0,"gas_limit":21000}'
      },
      auth_info: { signer_infos: [{ mode_info: { single: { mode: o.mode ?? "SIGN_MODE_ETHEREUM" } } }] },
      signatures: Array.from({ length: o.signatures ?? 1 }, () => "c2ln")
    }
  })
  it.each([
    ["an Ethereum tx's shape", {}, true],
    ["a contract creation", { type: "/minievm.evm.v1.MsgCreate" }, true],
    ["a sign mode rendered as a number", { mode: "9999" }, true],
    ["a legacy tx (type 0, no gas_limit)", { memo: '{"type":0,"gas_fee_cap":1,"gas_tip_cap":1}' }, true],
    ["a cosmos sign mode", { mode: "SIGN_MODE_DIRECT" }, false],
    ["a memo with another key", { memo: '{"type":2,"gas_fee_cap":1,"gas_tip_cap":0,"note":"x"}' }, false],
    ["fee caps as strings (the legacy memo minievm does not take here)", { memo: '{"type":2,"gas_fee_cap":"1","gas_tip_cap":"0"}' }, false],
    ["an unknown tx type", { memo: '{"type":3,"gas_fee_cap":1,"gas_tip_cap":0}' }, false],
    ["a memo that is no JSON", { memo: "gm" }, false],
    ["two messages", { messages: 2 }, false],
    ["two signatures", { signatures: 2 }, false],
    ["another message", { type: "/cosmos.bank.v1beta1.MsgSend" }, false]
  ] as const)("%s", (_what, o, expected) => {
    expect(isEthereumTx(tx(o) as never)).toBe(expected)
  })
})
