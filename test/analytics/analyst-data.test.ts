/**
 * Analyst-ready data (token and NFT transfers, canonical addresses, exact numbers, block times on
 * EVM rows) checked from outside: the devnet's pages are walked over HTTP and read with this
 * file's own code, and compared with what the views answer over the exported Parquet. Hostile
 * servers: a block list that lacks a height, transfer events in older and multi-coin shapes.
 */
import { Effect, Either } from "effect"
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Analytics, layerAnalytics } from "../../src/analytics/Analytics.js"
import { exportLayer } from "../../src/cli/layers.js"
import { accountBech32, bech32Bytes, bech32Of, canonicalAddress } from "../../src/datasets/addresses.js"
import { DATASETS } from "../../src/datasets/index.js"
import { bech32Encode } from "../../src/devnet/encoding.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runExport, type ExportOptions } from "../../src/engine/export.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { json, startProxy, type HostileServer } from "../support/hostile.js"
import { runCli } from "../support/cli.js"
import { hasDataset, queryLake } from "../support/lake.js"

const TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
const FAST_RETRY = { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 50, timeoutMs: 2_000, maxRetries: 3 }

let devnet: Devnet
let out: string
const dirs: Array<string> = []
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "chain-lake-analyst-"))
  dirs.push(d)
  return d
}
const exportFrom = (indexerUrl: string, to: string, options: ExportOptions = {}) =>
  Effect.runPromise(
    Effect.either(runExport(DATASETS, { pageSize: 100, ...options })).pipe(
      Effect.provide(exportLayer({ indexerUrl, out: to, limits: { concurrency: 4, rps: 0 }, retry: FAST_RETRY }))
    )
  )
const query = (sql: string): Promise<Array<Record<string, any>>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const a = yield* Analytics
      const r = yield* a.query(sql)
      return r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c.name, row[i]])))
    }).pipe(Effect.provide(layerAnalytics({ dataDir: out })), Effect.scoped)
  )

/** Every record of a list endpoint, walked by its cursor in ascending order. */
const walk = async (path: string, arrayKey: string): Promise<Array<any>> => {
  const rows: Array<any> = []
  let key: string | null = null
  do {
    const url = `${devnet.indexerUrl}${path}?pagination.limit=100&pagination.reverse=false${key ? `&pagination.key=${encodeURIComponent(key)}` : ""}`
    const page: any = await (await fetch(url)).json()
    rows.push(...page[arrayKey])
    key = page.pagination.next_key
  } while (key)
  return rows
}

const addSums = (sums: Map<string, bigint>, token: string, amount: bigint) => sums.set(token, (sums.get(token) ?? 0n) + amount)

beforeAll(async () => {
  devnet = await startDevnet({ seed: 23, blocks: 250 })
  out = tmp()
  const r = await exportFrom(devnet.indexerUrl, out)
  if (Either.isLeft(r)) throw new Error(JSON.stringify(r.left))
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe("token_transfers", () => {
  it("ERC-20 amounts sum exactly to the raw logs' uint256 data, per token, and each log is one row", async () => {
    const expected = new Map<string, bigint>()
    let logs = 0
    for (const receipt of await walk("/indexer/tx/v1/evm-txs", "txs"))
      for (const log of receipt.logs)
        if (log.topics.length === 3 && log.topics[0] === TRANSFER) {
          addSums(expected, log.address.toLowerCase(), BigInt(log.data))
          logs++
        }
    expect(logs).toBeGreaterThan(50)
    const got = await query(
      `SELECT token, sum(amount) AS total, sum(CAST(amount_text AS HUGEINT)) AS total_text, count(*) AS n FROM token_transfers WHERE source = 'evm' GROUP BY token`
    )
    expect(new Map(got.map((r) => [r.token, BigInt(r.total)]))).toEqual(expected)
    for (const r of got) expect(r.total_text).toBe(r.total)
    expect(got.reduce((n, r) => n + Number(r.n), 0)).toBe(logs)
  })

  it("cosmos rows match the txs' transfer events: one row per coin, per denom sums exact", async () => {
    const expected = new Map<string, bigint>()
    let coins = 0
    for (const tx of await walk("/indexer/tx/v1/txs", "txs"))
      for (const event of tx.events ?? [])
        if (event.type === "transfer") {
          const amount = event.attributes.find((a: any) => a.key === "amount").value as string
          for (const coin of amount.split(",")) {
            const [, value, denom] = /^(\d+)(.+)$/.exec(coin)!
            addSums(expected, denom, BigInt(value))
            coins++
          }
        }
    expect(coins).toBeGreaterThan(50)
    const got = await query(`SELECT token, sum(amount) AS total, count(*) AS n FROM token_transfers WHERE source = 'cosmos' GROUP BY token`)
    expect(new Map(got.map((r) => [r.token, BigInt(r.total)]))).toEqual(expected)
    expect(got.reduce((n, r) => n + Number(r.n), 0)).toBe(coins)
  })

  it("every address column of the new datasets and twins is canonical 0x-hex, and its bech32 twin is the same account", async () => {
    const hex = "regexp_full_match(%, '0x[0-9a-f]{40}')"
    const bad = await query(`
      SELECT 'token_transfers' AS t, count(*) FILTER (WHERE NOT (${hex.replace("%", "from_address")} AND ${hex.replace("%", "to_address")})) AS bad, count(*) AS n FROM token_transfers
      UNION ALL SELECT 'nft_transfers', count(*) FILTER (WHERE NOT (${hex.replace("%", "from_address")} AND ${hex.replace("%", "to_address")})), count(*) FROM nft_transfers
      UNION ALL SELECT 'txs', count(*) FILTER (WHERE NOT ${hex.replace("%", "sender_address")}), count(*) FROM txs
      UNION ALL SELECT 'holders', count(*) FILTER (WHERE NOT ${hex.replace("%", "account_address")}), count(*) FROM holders
      UNION ALL SELECT 'nft_tokens', count(*) FILTER (WHERE NOT ${hex.replace("%", "owner_address")}), count(*) FROM nft_tokens
      UNION ALL SELECT 'evm_txs', count(*) FILTER (WHERE NOT ${hex.replace("%", "from_address")}), count(*) FROM evm_txs WHERE NOT is_cosmos_tx`)
    for (const r of bad) {
      expect(Number(r.n), r.t).toBeGreaterThan(0)
      expect(r.bad, r.t).toBe("0")
    }
    // the devnet's own encoder names the accounts: the twins agree with it on both sides
    const pairs =
      await query(`SELECT DISTINCT from_address AS a, from_bech32 AS b FROM token_transfers UNION SELECT DISTINCT to_address, to_bech32 FROM token_transfers
      UNION SELECT DISTINCT sender_address, sender_bech32 FROM txs UNION SELECT DISTINCT account_address, account_bech32 FROM holders UNION SELECT DISTINCT owner_address, owner_bech32 FROM nft_tokens`)
    for (const { a, b } of pairs) expect(b).toBe(bech32Encode("init", Buffer.from(a.slice(2), "hex")))
    // an account active on both sides joins on one key: EVM senders are found among cosmos senders
    const [joined] = await query(
      `SELECT count(DISTINCT e.from_address) AS n FROM evm_txs e JOIN txs t ON t.sender_address = e.from_address`
    )
    expect(Number(joined.n)).toBeGreaterThan(0)
  })
})

describe("block times and flattened numbers", () => {
  it("evm_txs, evm_logs, token and NFT transfers carry their block's time", async () => {
    const [mismatch] = await query(`
      SELECT (SELECT count(*) FROM evm_txs e JOIN blocks b USING (height) WHERE e.timestamp IS DISTINCT FROM b.timestamp) AS txs,
             (SELECT count(*) FROM evm_logs l JOIN blocks b USING (height) WHERE l.timestamp IS DISTINCT FROM b.timestamp) AS logs,
             (SELECT count(*) FROM nft_transfers n JOIN blocks b USING (height) WHERE n.timestamp IS DISTINCT FROM b.timestamp) AS nfts,
             (SELECT count(*) FROM token_transfers_evm t JOIN blocks b USING (height) WHERE t.timestamp IS DISTINCT FROM b.timestamp) AS erc20,
             (SELECT count(*) FROM evm_txs WHERE timestamp IS NULL) AS untimed`)
    expect(mismatch).toEqual({ txs: "0", logs: "0", nfts: "0", erc20: "0", untimed: "0" })
  })
})

describe("a newcomer's questions, in plain SQL", () => {
  it("fees per denom: sum(amount) of block_fees equals the txs' fees (tx_fees) and the indexer's total_fee, for blocks paying in several denoms too", async () => {
    const expected = new Map<string, bigint>()
    let several = 0
    for (const b of await walk("/indexer/block/v1/blocks", "blocks")) {
      if (b.total_fee.length > 1) several++
      for (const f of b.total_fee) addSums(expected, f.denom, BigInt(f.amount))
    }
    expect(several).toBeGreaterThan(10)
    const perBlock = await query("SELECT denom, sum(amount) AS total FROM block_fees GROUP BY denom")
    const perTx = await query("SELECT denom, sum(amount) AS total FROM tx_fees GROUP BY denom")
    expect(new Map(perBlock.map((r) => [r.denom, BigInt(r.total)]))).toEqual(expected)
    expect(new Map(perTx.map((r) => [r.denom, BigInt(r.total)]))).toEqual(expected)
  })

  it("holders: sum(amount) and ORDER BY amount DESC are numeric, exact against the rich list", async () => {
    const [top] = await query("SELECT denom, count(*) AS n, sum(amount) AS total FROM holders GROUP BY denom ORDER BY n DESC LIMIT 1")
    const list = await walk(`/indexer/richlist/v1/${encodeURIComponent(top.denom)}`, "holders")
    expect(BigInt(top.total)).toBe(list.reduce((s, h) => s + BigInt(h.amount), 0n))
    const ranked = await query(`SELECT amount_text FROM holders WHERE denom = '${top.denom}' ORDER BY amount DESC`)
    const byValue = [...list].map((h) => BigInt(h.amount)).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
    expect(ranked.map((r) => BigInt(r.amount_text))).toEqual(byValue)
  })

  it("joins on tx_hash and addresses across cosmos and EVM rows: a cosmos tx's ERC-20 moves, and the EVM receipts of each sender", async () => {
    // a synthetic receipt names its cosmos tx; both sides' token moves of that tx join on it
    const [linked] = await query(
      `SELECT count(*) AS n FROM evm_txs e JOIN txs t ON t.tx_hash = e.cosmos_tx_hash JOIN token_transfers_evm m ON m.tx_hash = e.tx_hash WHERE e.is_cosmos_tx`
    )
    expect(Number(linked.n)).toBeGreaterThan(0)
    // each tx sent counts once: an Ethereum tx (a cosmos tx too) by its receipt, on the EVM side; every other cosmos tx on the cosmos side
    const txs = await walk("/indexer/tx/v1/txs", "txs")
    const receipts = (await walk("/indexer/tx/v1/evm-txs", "txs")).filter((r) => r.from !== "0x0000000000000000000000000000000000000000")
    const sent = await query(`SELECT side, count(*) AS n FROM account_activity WHERE action = 'sent a tx' GROUP BY side ORDER BY side`)
    expect(receipts.length).toBeGreaterThan(0)
    expect(sent.map((r) => [r.side, Number(r.n)])).toEqual([
      ["cosmos", txs.length - receipts.length],
      ["evm", receipts.length]
    ])
    // one address key on both sides: a sender's cosmos txs and EVM txs in one GROUP BY
    const both = await query(
      `SELECT account_address, count(*) FILTER (WHERE side = 'cosmos') AS cosmos, count(*) FILTER (WHERE side = 'evm') AS evm FROM account_activity WHERE action = 'sent a tx' GROUP BY 1 HAVING cosmos > 0 AND evm > 0`
    )
    expect(both.length).toBeGreaterThan(0)
    // no column needs quoting, and absent values are NULL: creations have no to_address
    const [creations] = await query(`SELECT count(*) AS n, count(to_address) AS with_to FROM evm_txs WHERE created_address IS NOT NULL`)
    expect(Number(creations.n)).toBeGreaterThan(0)
    expect(creations.with_to).toBe("0")
  })
})

describe("a lake written before a column was added", () => {
  it("an export into it says which columns its older files lack, instead of passing their NULLs off as data", async () => {
    const lake = tmp()
    const first = await exportFrom(devnet.indexerUrl, lake, { datasets: ["evm_txs"], toHeight: 100 })
    expect(Either.isRight(first)).toBe(true)
    const path = join(lake, "evm_txs", "_manifest.json")
    const manifest = JSON.parse(readFileSync(path, "utf8"))
    writeFileSync(path, JSON.stringify({ ...manifest, columns: manifest.columns.filter((c: any) => c.name !== "timestamp") }))
    const notices: Array<string> = []
    const second = await exportFrom(devnet.indexerUrl, lake, { datasets: ["evm_txs"], observer: { notice: (m) => notices.push(m) } })
    expect(Either.isRight(second)).toBe(true)
    expect(notices).toContain(
      "evm_txs: files committed earlier lack timestamp (added by a newer chain-lake); those rows read NULL there: export into a new folder to have it everywhere"
    )
  })
})

describe("a lake whose files all predate a column", () => {
  it("query and every view still work: the missing columns read NULL", async () => {
    const lake = tmp()
    cpSync(out, lake, { recursive: true })
    // rewrite every txs and evm_txs file as an older chain-lake wrote it: without the columns added since
    const manifestOf = (d: string) =>
      JSON.parse(readFileSync(join(lake, d, "_manifest.json"), "utf8")) as { files: Array<{ path: string }> }
    for (const [dataset, added] of [
      ["txs", "sender_address"],
      ["evm_txs", "timestamp"]
    ] as const)
      for (const f of manifestOf(dataset).files) {
        const path = join(lake, dataset, f.path)
        await queryLake(`COPY (SELECT * EXCLUDE (${added}) FROM read_parquet('${path}')) TO '${path}.old' (FORMAT PARQUET)`)
        renameSync(`${path}.old`, path)
      }
    const r = await runCli([
      "query",
      "--data",
      lake,
      "SELECT (SELECT count(*) FROM active_accounts) AS days, (SELECT count(sender_address) FROM txs) AS hex, (SELECT count(*) FROM txs) AS txs",
      "--format",
      "json"
    ])
    expect(r.code, r.stderr).toBe(0)
    const [row] = JSON.parse(r.stdout)
    expect(Number(row.days)).toBeGreaterThan(0)
    expect(row.hex).toBe("0")
    expect(Number(row.txs)).toBeGreaterThan(0)
  })
})

describe("nft_transfers", () => {
  it("mints come from the zero address, burns go to it, and ERC-721 logs are never token transfers", async () => {
    let expected = 0
    for (const receipt of await walk("/indexer/tx/v1/evm-txs", "txs"))
      for (const log of receipt.logs) if (log.topics.length === 4 && log.topics[0] === TRANSFER) expected++
    const rows = await query(
      `SELECT kind, count(*) AS n, count(*) FILTER (WHERE (kind = 'mint') = (from_address = '0x${"0".repeat(40)}') AND (kind = 'burn') = (to_address = '0x${"0".repeat(40)}')) AS consistent FROM nft_transfers GROUP BY kind ORDER BY kind`
    )
    expect(rows.map((r) => r.kind)).toEqual(["burn", "mint", "transfer"])
    for (const r of rows) expect(r.consistent).toBe(r.n)
    expect(rows.reduce((n, r) => n + Number(r.n), 0)).toBe(expected)
    const [overlap] = await query(
      `SELECT count(*) AS n FROM token_transfers t JOIN nft_transfers n ON t.tx_hash = n.tx_hash AND t.event_index = n.log_index`
    )
    expect(overlap.n).toBe("0")
  })
})

describe("the analyst views", () => {
  it("token_flows, top_tokens, active_accounts and nft_transfer_activity add up to the datasets", async () => {
    // per token, the flows add up to the transfers (volumes as DOUBLE: equal to 1e-9 relative)
    const flows = await query(`SELECT token, sum(transfers) AS n, sum(volume) AS v FROM token_flows GROUP BY token ORDER BY token`)
    const all = await query(
      `SELECT token, count(*) AS n, CAST(sum(amount) AS DOUBLE) AS v FROM token_transfers GROUP BY token ORDER BY token`
    )
    expect(flows.map((f) => [f.token, f.n])).toEqual(all.map((a) => [a.token, a.n]))
    for (const [i, f] of flows.entries()) expect(Math.abs(Number(f.v) - Number(all[i].v)) / Number(all[i].v)).toBeLessThan(1e-9)
    const top = await query(`SELECT token, source, transfers FROM top_tokens`)
    expect(top.length).toBeGreaterThan(2)
    expect(top.map((t) => Number(t.transfers))).toEqual(top.map((t) => Number(t.transfers)).sort((a, b) => b - a))
    // an account active on both sides is counted once a day
    const [active] = await query(`SELECT sum(active_accounts) AS a, sum(cosmos_accounts) AS c, sum(evm_accounts) AS e FROM active_accounts`)
    expect(Number(active.a)).toBeGreaterThan(0)
    expect(Number(active.a)).toBeLessThan(Number(active.c) + Number(active.e))
    const [nft] = await query(`SELECT sum(mints + transfers + burns) AS n FROM nft_transfer_activity`)
    const [nftRows] = await query(`SELECT count(*) AS n FROM nft_transfers`)
    expect(nft.n).toBe(nftRows.n)
  })
})

describe("hostile amounts", () => {
  it("a token whose Transfer amounts sum past DECIMAL(38,0) does not break the flow views", async () => {
    // 9·10^37 fits DECIMAL(38,0); two of them do not
    const huge = "0x" + (9n * 10n ** 37n).toString(16).padStart(64, "0")
    const proxy = await startProxy(devnet.indexerUrl, async (request, forward) => {
      const answer = await forward()
      if (request.url.pathname !== "/indexer/tx/v1/evm-txs") return answer
      const page = JSON.parse(answer.body!)
      // every ERC-20 Transfer moves 9·10^37 of its token
      for (const r of page.txs) for (const l of r.logs) if (l.topics.length === 3) l.data = huge
      return json(page)
    })
    try {
      const lake = tmp()
      const r = await exportFrom(proxy.url, lake, { datasets: ["token_transfers_evm"], toHeight: 120 })
      expect(Either.isRight(r)).toBe(true)
      const rows = await Effect.runPromise(
        Effect.gen(function* () {
          const a = yield* Analytics
          const flows = yield* a.query("SELECT count(*) AS n, max(volume) AS v FROM token_flows WHERE source = 'evm'")
          const top = yield* a.query("SELECT count(*) AS n FROM top_tokens")
          const exact = yield* a.query(
            "SELECT count(*) FILTER (WHERE CAST(amount AS VARCHAR) = amount_text AND amount_text = '90000000000000000000000000000000000000') AS same, count(*) AS n FROM token_transfers_evm"
          )
          return { flows: flows.rows[0], top: top.rows[0], exact: exact.rows[0] }
        }).pipe(Effect.provide(layerAnalytics({ dataDir: lake })), Effect.scoped)
      )
      expect(Number(rows.flows[0])).toBeGreaterThan(0)
      // a volume past DECIMAL(38,0) is NULL (the convention's exact amounts), never a wrong number
      expect(rows.flows[1]).toBeNull()
      expect(Number(rows.top[0])).toBeGreaterThan(0)
      // each amount exact in both columns
      expect(rows.exact[0]).toBe(rows.exact[1])
    } finally {
      await proxy.close()
    }
  })
})

describe("addresses", () => {
  it("bech32 round-trips against the devnet's independent encoder; a bad checksum or mixed case is not an address", () => {
    for (let i = 0; i < 200; i++) {
      const bytes = Buffer.from(Array.from({ length: i % 3 === 0 ? 32 : 20 }, (_, k) => (i * 31 + k * 7) & 255))
      const text = bech32Encode("init", bytes)
      expect(bech32Of("init", bytes)).toBe(text)
      expect(canonicalAddress(text)).toBe("0x" + bytes.toString("hex"))
      const flipped = text.slice(0, -1) + (text.endsWith("q") ? "p" : "q")
      expect(bech32Bytes(flipped)).toBeUndefined()
    }
    expect(canonicalAddress("0xABCDEFabcdefABCDEFabcdefABCDEFabcdefABCD")).toBe("0xabcdefabcdefabcdefabcdefabcdefabcdefabcd")
    expect(canonicalAddress("Init1" + "q".repeat(38))).toBeNull()
    expect(canonicalAddress("fee_collector")).toBeNull()
    expect(accountBech32("0x" + "00".repeat(20))).toBe(bech32Encode("init", new Uint8Array(20)))
  })
})

describe("hostile servers", () => {
  const servers: Array<HostileServer> = []
  afterAll(async () => {
    for (const s of servers) await s.close()
  })

  it("a block list that lacks a height with EVM rows fails those datasets clearly and commits nothing of them; the others are exported", async () => {
    const evmHeight = Number.parseInt((await walk("/indexer/tx/v1/evm-txs", "txs"))[0].blockNumber, 16)
    const proxy = await startProxy(devnet.indexerUrl, async (request, forward) => {
      const answer = await forward()
      if (request.url.pathname !== "/indexer/block/v1/blocks") return answer
      const page = JSON.parse(answer.body!)
      return json({ ...page, blocks: page.blocks.filter((b: any) => Number(b.height) !== evmHeight) })
    })
    servers.push(proxy)
    const lake = tmp()
    const r = await exportFrom(proxy.url, lake, { datasets: ["evm_txs", "token_transfers_evm", "evm_internal_txs"] })
    expect(Either.isLeft(r)).toBe(true)
    if (Either.isLeft(r)) expect(r.left.message).toMatch(new RegExp(`block ${evmHeight} is not in the block list`))
    // nothing of a dataset whose rows need that block's time was committed with it
    for (const dataset of ["evm_txs", "token_transfers_evm"]) {
      const manifest = hasDataset(lake, dataset) ? JSON.parse(readFileSync(join(lake, dataset, "_manifest.json"), "utf8")) : { files: [] }
      expect(
        manifest.files.filter((f: any) => f.min_height <= evmHeight && f.max_height >= evmHeight),
        dataset
      ).toEqual([])
    }
    expect(hasDataset(lake, "evm_internal_txs")).toBe(true)
  })

  it("transfer events in the older repeated-triple shape and with several coins give one row per coin; a non-coin amount is left out", async () => {
    const { tokenTransfersCosmos } = await import("../../src/datasets/token_transfers.js")
    const sender = bech32Encode("init", Buffer.alloc(20, 1))
    const recipient = bech32Encode("init", Buffer.alloc(32, 2))
    const attr = (key: string, value: string) => ({ key, value, index: true })
    const tx = {
      height: "7",
      txhash: "AB",
      timestamp: "2026-01-01T00:00:00.123456789Z",
      events: [
        { type: "coin_spent", attributes: [attr("spender", sender), attr("amount", "5uinit")] },
        {
          type: "transfer",
          attributes: [
            attr("recipient", recipient),
            attr("sender", sender),
            attr("amount", "10uinit,7ibc/ABC"),
            attr("recipient", sender),
            attr("sender", recipient),
            attr("amount", "3uusdc")
          ]
        },
        {
          type: "transfer",
          attributes: [attr("recipient", recipient), attr("sender", sender), attr("amount", "not-a-coin"), attr("msg_index", "0")]
        },
        {
          type: "transfer",
          attributes: [
            attr("recipient", "fee_collector"),
            attr("sender", sender),
            attr("amount", "99999999999999999999999999999999999999999uinit")
          ]
        }
      ]
    }
    const rows = tokenTransfersCosmos.toRows(tx, { blockTime: () => "unused", cosmosTxHashes: () => [] })
    const names = tokenTransfersCosmos.columns.map((c) => c.name)
    const objects = rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])))
    expect(objects.map((o) => [o.event_index, o.coin_index, o.token, o.amount_text, o.from_address, o.to_address])).toEqual([
      [1, 0, "uinit", "10", "0x" + "01".repeat(20), "0x" + "02".repeat(32)],
      [1, 1, "ibc/ABC", "7", "0x" + "01".repeat(20), "0x" + "02".repeat(32)],
      [1, 2, "uusdc", "3", "0x" + "02".repeat(32), "0x" + "01".repeat(20)],
      [3, 0, "uinit", "99999999999999999999999999999999999999999", "0x" + "01".repeat(20), null]
    ])
    expect(objects[3].to_bech32).toBe("fee_collector")
  })
})
