/**
 * The rows every exported dataset should hold, built from the devnet's chain model alone: its
 * plans (status, gas, signers, counts), hashes, replayed NFT ownership and balances, and, for the
 * values only the devnet's renderers define (memo, gas price, log data, call trees, proposer),
 * the renderers' wire objects converted here with this file's own code; and the comparison of an
 * export folder with them (`expectLakeMatchesChain`), read back with DuckDB as a user would.
 *
 * Nothing here imports src/datasets or src/indexer: a mapping bug in the exporter cannot be
 * copied into the expectation, which is the point of comparing against this.
 *
 * Values are in the form `getRowObjectsJson()` gives them back from DuckDB: BIGINT and DECIMAL
 * as decimal strings, INTEGER as numbers, lists as arrays, TIMESTAMP as
 * 'YYYY-MM-DD HH:MM:SS.ffffff' (the reader formats timestamps with all six digits), JSON as a
 * `JsonCell` compared as parsed JSON.
 */
import { scan } from "./lake.js"
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api"
import { expect } from "vitest"
import type { Chain, NftToken } from "../../src/devnet/chain.js"
import { DENOMS, type Devnet } from "../../src/devnet/index.js"
import { bech32Decode, bech32Encode, hexToBytes } from "../../src/devnet/encoding.js"
import { blockJson, evmReceiptsAt, internalTxsAt, msgTypeOf, tokenJson, txJson } from "../../src/devnet/render.js"

/** A JSON column's expected value: compared parsed, since key order and spacing carry no meaning. */
export class JsonCell {
  constructor(readonly value: unknown) {}
}

export type Cell = string | number | boolean | null | ReadonlyArray<string> | JsonCell
export type ExpectedRow = Readonly<Record<string, Cell>>

/** A column as DuckDB describes it when reading the Parquet files back. */
export interface ColumnSpec {
  readonly name: string
  readonly type: string
}

export interface ExpectedDataset {
  readonly name: string
  /** every column the files hold (the hive partition column included, snapshot_time excluded) */
  readonly columns: ReadonlyArray<ColumnSpec>
  /** columns naming one row: no two rows may share them */
  readonly key: ReadonlyArray<string>
  readonly partition: "height_bucket" | "snapshot_height"
  readonly rows: ReadonlyArray<ExpectedRow>
}

// ---------------------------------------------------------------- conversions (own code)

const MICROS_PER_SECOND = 1_000_000n

/** An epoch time counted in units of which `digits` make a second, as DuckDB's strftime prints it with that many digits of fraction. */
const epochText = (epoch: bigint, digits: number): string => {
  const perSecond = 10n ** BigInt(digits)
  const seconds = epoch / perSecond
  return (
    new Date(Number(seconds) * 1000).toISOString().slice(0, 19).replace("T", " ") + "." + String(epoch % perSecond).padStart(digits, "0")
  )
}

/** Epoch microseconds as DuckDB's strftime '%Y-%m-%d %H:%M:%S.%f' prints a TIMESTAMP. */
export const timestampText = (epochMicros: bigint): string => epochText(epochMicros, 6)

/** Epoch nanoseconds as DuckDB's strftime '%Y-%m-%d %H:%M:%S.%n' prints a TIMESTAMP_NS. */
export const timestampNsText = (epochNanos: bigint): string => epochText(epochNanos, 9)

/** A block's time as the txs endpoint prints it (RFC3339Nano): every nanosecond of the header. */
export const txTimeNanos = (chain: Chain, height: number): bigint =>
  BigInt(chain.headerTimeMs(height)) * 1_000_000n + BigInt(chain.headerExtraNanos(height))

/**
 * A block's time as the txs endpoint prints it (RFC3339Nano) kept to the microsecond, the
 * fraction below it dropped: truncation, as the indexer's Postgres-backed NFT endpoints print
 * the same block times, so that times of one block agree across datasets and never move into a
 * later second.
 */
export const txTimeMicros = (chain: Chain, height: number): bigint =>
  BigInt(chain.headerTimeMs(height)) * 1000n + BigInt(Math.floor(chain.headerExtraNanos(height) / 1000))

/** A block's time as the blocks endpoint prints it: whole seconds (the header's milliseconds dropped). */
export const blockTimeMicros = (chain: Chain, height: number): bigint => (BigInt(chain.headerTimeMs(height)) / 1000n) * MICROS_PER_SECOND

/** 0x-hex quantity → exact decimal string. */
const hexDecimal = (hex: string): string => BigInt(hex).toString()
/** 0x-hex bytes → decimal string; "0x" (no bytes at all) is no value. */
const hexBytesDecimal = (hex: string): string | null => (hex === "0x" ? null : BigInt(hex).toString())
const hexInt = (hex: string): number => Number(BigInt(hex))

/** What DECIMAL(38,0) holds: the exact value, or NULL when it has more than 38 digits. */
const decimal38 = (n: bigint): string | null => (n.toString().replace("-", "").length <= 38 ? n.toString() : null)

/** An account as the lake's address columns spell it: 0x and lowercase hex of its bytes. */
const canonicalHex = (hex: string): string => "0x" + hex.replace(/^0x/, "").toLowerCase()
/** Its bech32 twin, by the devnet's own encoder (the exporter has its own). */
const bech32Of = (hex: string): string => bech32Encode("init", hexToBytes(hex.replace(/^0x/, "")))
/** The canonical 0x-hex of a bech32 address (any prefix). */
const bech32ToHex = (text: string): string => "0x" + Buffer.from(bech32Decode(text)!.bytes).toString("hex")
const ZERO_ACCOUNT = "0x" + "0".repeat(40)

const bucketOf = (height: number, bucketWidth: number): string => String(Math.floor(height / bucketWidth) * bucketWidth)

const heights = (from: number, to: number): Array<number> => Array.from({ length: Math.max(0, to - from + 1) }, (_, k) => from + k)

// ---------------------------------------------------------------- append-only datasets

export const blockRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  heights(1, chain.tip).map((h) => {
    const wire = blockJson(chain, h)
    const sums = chain.blockSums(h)
    // sdk.Coins: the fee denoms actually paid, sorted by denom
    const totalFee = DENOMS.map((d, i) => ({ denom: d.denom, amount: sums.fees[i] ?? 0 }))
      .filter((f) => f.amount > 0)
      .sort((a, b) => (a.denom < b.denom ? -1 : 1))
      .map((f) => ({ denom: f.denom, amount: String(f.amount) }))
    return {
      height: String(h),
      block_hash: chain.blockHash(h),
      chain_id: chain.u.chainId,
      timestamp: timestampText(blockTimeMicros(chain, h)),
      // the first indexed block's 0 is no interval
      block_interval_ms: Number(wire.block_time) === 0 ? null : String(Number(wire.block_time)),
      gas_used: String(sums.gasUsed),
      gas_wanted: String(sums.gasWanted),
      tx_count: chain.blockTxCount(h),
      total_fee: new JsonCell(totalFee),
      proposer_moniker: wire.proposer.moniker,
      proposer_bech32: wire.proposer.operator_address,
      proposer_address: bech32ToHex(wire.proposer.operator_address),
      height_bucket: bucketOf(h, bucketWidth)
    }
  })

export const txRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  heights(1, chain.tip).flatMap((h) =>
    Array.from({ length: chain.blockTxCount(h) }, (_, i) => {
      const plan = chain.plan(h, i)
      const seq = chain.txSeqBefore(h) + i + 1
      const wire = txJson(chain, h, i)
      return {
        height: String(h),
        tx_hash: chain.txHash(h, i),
        timestamp: timestampNsText(txTimeNanos(chain, h)),
        code: wire.code,
        codespace: wire.codespace || null,
        gas_wanted: String(plan.gasWanted),
        gas_used: String(plan.gasUsed),
        message_types: Array.from({ length: plan.msgCount }, () => msgTypeOf(chain, plan)),
        // every message of a tx is signed by the same account
        sender_address: canonicalHex(chain.accountOf(chain.signerOf(plan, seq)).hex),
        sender_bech32: chain.accountOf(chain.signerOf(plan, seq)).bech32,
        fee: new JsonCell([{ denom: DENOMS[plan.feeDenom].denom, amount: String(plan.feeAmount) }]),
        memo: wire.tx.body.memo,
        data: wire.data,
        raw_log: wire.raw_log,
        info: wire.info,
        tx: new JsonCell(wire.tx),
        // a tx without events (the wire's null) is stored as an empty list
        events: new JsonCell(wire.events ?? []),
        logs: new JsonCell(wire.logs),
        height_bucket: bucketOf(h, bucketWidth)
      }
    })
  )

/**
 * One row per receipt: transactionIndex counts the block's receipts from 1; a receipt standing for
 * a cosmos tx (minievm's synthetic one) has no sender or recipient and names its cosmos tx.
 */
export const evmTxRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  heights(1, chain.tip).flatMap((h) => {
    let cumulativeGas = 0
    return evmReceiptsAt(chain, h).map(({ receipt, plan }, position) => {
      cumulativeGas += plan.gasUsed
      const seq = chain.txSeqBefore(h) + plan.index + 1
      const cosmos = !chain.isEvmTx(plan)
      return {
        height: String(h),
        evm_block_hash: "0x" + chain.blockHash(h).toLowerCase(),
        tx_hash: chain.receiptHash(plan).toLowerCase(),
        tx_index: position + 1,
        timestamp: timestampText(blockTimeMicros(chain, h)),
        from_address: cosmos ? null : chain.accountOf(chain.signerOf(plan, seq)).evm.toLowerCase(),
        to_address: cosmos || !receipt.to ? null : receipt.to.toLowerCase(),
        created_address: receipt.contractAddress ? receipt.contractAddress.toLowerCase() : null,
        status: plan.failed ? 0 : 1,
        type: hexInt(receipt.type),
        gas_used: String(plan.gasUsed),
        cumulative_gas_used: String(cumulativeGas),
        effective_gas_price: hexDecimal(receipt.effectiveGasPrice),
        log_count: plan.logCount + chain.cosmosLogCount(plan),
        logs_bloom: receipt.logsBloom,
        is_cosmos_tx: cosmos,
        cosmos_tx_hash: cosmos ? chain.txHash(h, plan.index) : null,
        height_bucket: bucketOf(h, bucketWidth)
      }
    })
  })

/** Every EVM log of blocks 1..tip with its tx's plan and receipt position; log indices run over the whole block, or restart at each receipt on a per-tx chain. */
const chainLogs = (chain: Chain) =>
  heights(1, chain.tip).flatMap((h) => {
    let logIndex = 0
    return evmReceiptsAt(chain, h).flatMap(({ plan, receipt }, position) => {
      if (chain.logIndex === "per-tx") logIndex = 0
      return receipt.logs.map((log) => ({ h, plan, position, log, logIndex: logIndex++ }))
    })
  })

export const evmLogRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  chainLogs(chain).map(({ h, plan, position, log, logIndex }) => ({
    height: String(h),
    evm_block_hash: "0x" + chain.blockHash(h).toLowerCase(),
    tx_hash: chain.receiptHash(plan).toLowerCase(),
    tx_index: position + 1,
    log_index: logIndex,
    timestamp: timestampText(blockTimeMicros(chain, h)),
    contract_address: log.address.toLowerCase(),
    topic0: log.topics[0] ?? null,
    topic1: log.topics[1] ?? null,
    topic2: log.topics[2] ?? null,
    topic3: log.topics[3] ?? null,
    topics: [...log.topics],
    data: log.data,
    removed: false,
    height_bucket: bucketOf(h, bucketWidth)
  }))

/** ERC-20 Transfer logs (three topics: the amount is the data word), one token_transfers_evm row each. */
export const evmTokenTransferRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  chainLogs(chain).flatMap(({ h, plan, log, logIndex }) => {
    if (log.topics.length !== 3) return []
    const from = canonicalHex(log.topics[1].slice(-40))
    const to = canonicalHex(log.topics[2].slice(-40))
    const amount = BigInt(log.data).toString()
    return [
      {
        height: String(h),
        timestamp: timestampText(blockTimeMicros(chain, h)),
        tx_hash: chain.receiptHash(plan),
        source: "evm",
        event_index: logIndex,
        coin_index: 0,
        token: log.address.toLowerCase(),
        from_address: from,
        to_address: to,
        from_bech32: bech32Of(from),
        to_bech32: bech32Of(to),
        amount,
        amount_text: amount,
        height_bucket: bucketOf(h, bucketWidth)
      }
    ]
  })

/** Bank sends and IBC transfers that succeeded move their amount from the signer to the recipient: one token_transfers_cosmos row per message (a transfer event each). */
export const cosmosTokenTransferRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  heights(1, chain.tip).flatMap((h) =>
    Array.from({ length: chain.blockTxCount(h) }, (_, i) => chain.plan(h, i)).flatMap((plan) => {
      if (plan.failed || (plan.kind !== "bank_send" && plan.kind !== "ibc_transfer")) return []
      const seq = chain.txSeqBefore(h) + plan.index + 1
      const signer = chain.accountOf(chain.signerOf(plan, seq))
      const recipient = chain.accountOf(plan.recipient)
      // where the events sit among the tx's events is the renderer's choice
      // (a tx that succeeded has events)
      const events = txJson(chain, h, plan.index).events!
      const eventIndexes = events.flatMap((e, i) => (e.type === "transfer" ? [i] : []))
      expect(eventIndexes.length).toBe(plan.msgCount)
      return eventIndexes.map((eventIndex) => ({
        height: String(h),
        timestamp: timestampNsText(txTimeNanos(chain, h)),
        tx_hash: chain.txHash(h, plan.index),
        source: "cosmos",
        event_index: eventIndex,
        coin_index: 0,
        token: DENOMS[plan.denom].denom,
        from_address: canonicalHex(signer.hex),
        to_address: canonicalHex(recipient.hex),
        from_bech32: signer.bech32,
        to_bech32: recipient.bech32,
        amount: String(plan.amount),
        amount_text: String(plan.amount),
        height_bucket: bucketOf(h, bucketWidth)
      }))
    })
  )

/** Each NFT mint, transfer and burn of the chain's NFT events, once per Transfer log its tx emits. */
export const nftTransferRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  chainLogs(chain).flatMap(({ h, plan, log, logIndex }) => {
    const nft = chain.nftEvents.get(chain.txSeqBefore(h) + plan.index + 1)
    if (!nft) return []
    const from = nft.kind === "mint" ? ZERO_ACCOUNT : canonicalHex(chain.accountOf(nft.from).hex)
    const to = nft.kind === "burn" ? ZERO_ACCOUNT : canonicalHex(chain.accountOf(nft.to).hex)
    return [
      {
        height: String(h),
        timestamp: timestampText(blockTimeMicros(chain, h)),
        tx_hash: chain.receiptHash(plan),
        log_index: logIndex,
        collection_address: chain.u.collections[nft.collection].address.toLowerCase(),
        token_id: BigInt(log.topics[3]).toString(),
        kind: nft.kind,
        from_address: from,
        to_address: to,
        from_bech32: bech32Of(from),
        to_bech32: bech32Of(to),
        height_bucket: bucketOf(h, bucketWidth)
      }
    ]
  })

/** Internal txs stop at internal_tx_height: the tracing extension lags the tip. */
export const internalTxRows = (chain: Chain, bucketWidth: number): Array<ExpectedRow> =>
  heights(1, chain.internalTxHeight).flatMap((h) =>
    internalTxsAt(chain, h).map(({ row }) => {
      const value = hexBytesDecimal(String(row.value))
      const address = (a: unknown) => (String(a) === "" ? null : String(a).toLowerCase())
      return {
        height: String(h),
        tx_hash: String(row.hash).toLowerCase(),
        call_index: Number(row.index),
        parent_call_index: Number(row.parent_index),
        type: String(row.type),
        from_address: address(row.from),
        to_address: address(row.to),
        input: String(row.input),
        output: String(row.output),
        value,
        value_text: value,
        gas: hexDecimal(String(row.gas)),
        gas_used: hexDecimal(String(row.gasUsed)),
        height_bucket: bucketOf(h, bucketWidth)
      }
    })
  )

// ---------------------------------------------------------------- snapshots

const createdCollections = (chain: Chain) => chain.u.collections.filter((c) => c.createdAt <= chain.tip)

/** Collections as of the tip (the snapshot height of nft_collections). */
export const collectionRows = (chain: Chain): Array<ExpectedRow> =>
  createdCollections(chain).map((c) => ({
    collection_address: c.address.toLowerCase(),
    name: c.name,
    origin_name: c.originName || null,
    creator_address: canonicalHex(c.creator.hex),
    creator_bech32: c.creator.bech32,
    nft_count: chain.liveTokensOf(c.index).length,
    created_height: String(c.createdAt),
    created_at: timestampText(txTimeMicros(chain, c.createdAt)),
    snapshot_height: String(chain.tip)
  }))

/** Live tokens as of the tip, with their owners (burned tokens are gone). */
export const tokenRows = (chain: Chain): Array<ExpectedRow> =>
  createdCollections(chain).flatMap((c) =>
    chain.liveTokensOf(c.index).map((t: NftToken) => {
      const wire = tokenJson(chain, t)
      return {
        collection_address: c.address.toLowerCase(),
        collection_name: c.name,
        collection_origin_name: c.originName || null,
        token_id: t.tokenId,
        uri: wire.nft.uri,
        owner_address: canonicalHex(chain.accountOf(t.owner).hex),
        owner_bech32: chain.accountOf(t.owner).bech32,
        object_address: wire.object_addr ? wire.object_addr.toLowerCase() : null,
        updated_height: String(t.height),
        updated_at: timestampText(txTimeMicros(chain, t.height)),
        snapshot_height: String(chain.tip)
      }
    })
  )

/** The denoms holders defaults to: those paid as fees in blocks 1..tip (each block's total_fee). */
export const feeDenomIndices = (chain: Chain): Array<number> =>
  DENOMS.map((_, i) => i).filter((i) => heights(1, chain.tip).some((h) => (chain.blockSums(h).fees[i] ?? 0) > 0))

/** The rich list of each default denom at rich_list_height; amounts exact. */
export const holderRows = (chain: Chain): Array<ExpectedRow> =>
  feeDenomIndices(chain).flatMap((i) =>
    chain.holders(i).map((h) => ({
      denom: DENOMS[i].denom,
      account_address: canonicalHex(h.account.hex),
      account_bech32: h.account.bech32,
      amount: decimal38(h.amount),
      amount_text: h.amount.toString(),
      snapshot_height: String(chain.richListHeight)
    }))
  )

// ---------------------------------------------------------------- the whole lake

const cols = (spec: string): Array<ColumnSpec> =>
  spec
    .trim()
    .split(/\s*,\s*(?![^(]*\))/)
    .map((c) => {
      const [name, ...type] = c.split(/\s+/)
      return { name, type: type.join(" ") }
    })

/** Every dataset of a full export of `chain` with height buckets `bucketWidth` wide. */
export const expectedLake = (chain: Chain, bucketWidth: number): Array<ExpectedDataset> => [
  {
    name: "blocks",
    columns: cols(
      "height BIGINT, block_hash VARCHAR, chain_id VARCHAR, timestamp TIMESTAMP, block_interval_ms BIGINT, gas_used BIGINT, gas_wanted BIGINT, tx_count INTEGER, total_fee JSON, proposer_moniker VARCHAR, proposer_bech32 VARCHAR, proposer_address VARCHAR, height_bucket BIGINT"
    ),
    key: ["height"],
    partition: "height_bucket",
    rows: blockRows(chain, bucketWidth)
  },
  {
    name: "txs",
    columns: cols(
      "height BIGINT, tx_hash VARCHAR, timestamp TIMESTAMP_NS, code INTEGER, codespace VARCHAR, gas_wanted BIGINT, gas_used BIGINT, message_types VARCHAR[], sender_address VARCHAR, sender_bech32 VARCHAR, fee JSON, memo VARCHAR, data VARCHAR, raw_log VARCHAR, info VARCHAR, tx JSON, events JSON, logs JSON, height_bucket BIGINT"
    ),
    key: ["tx_hash"],
    partition: "height_bucket",
    rows: txRows(chain, bucketWidth)
  },
  {
    name: "evm_txs",
    columns: cols(
      "height BIGINT, evm_block_hash VARCHAR, tx_hash VARCHAR, tx_index INTEGER, timestamp TIMESTAMP, from_address VARCHAR, to_address VARCHAR, created_address VARCHAR, status INTEGER, type INTEGER, gas_used BIGINT, cumulative_gas_used BIGINT, effective_gas_price DECIMAL(38,0), log_count INTEGER, logs_bloom VARCHAR, is_cosmos_tx BOOLEAN, cosmos_tx_hash VARCHAR, height_bucket BIGINT"
    ),
    key: ["tx_hash"],
    partition: "height_bucket",
    rows: evmTxRows(chain, bucketWidth)
  },
  {
    name: "evm_logs",
    columns: cols(
      "height BIGINT, evm_block_hash VARCHAR, tx_hash VARCHAR, tx_index INTEGER, log_index INTEGER, timestamp TIMESTAMP, contract_address VARCHAR, topic0 VARCHAR, topic1 VARCHAR, topic2 VARCHAR, topic3 VARCHAR, topics VARCHAR[], data VARCHAR, removed BOOLEAN, height_bucket BIGINT"
    ),
    key: ["tx_hash", "log_index"],
    partition: "height_bucket",
    rows: evmLogRows(chain, bucketWidth)
  },
  {
    name: "evm_internal_txs",
    columns: cols(
      "height BIGINT, tx_hash VARCHAR, call_index INTEGER, parent_call_index INTEGER, type VARCHAR, from_address VARCHAR, to_address VARCHAR, input VARCHAR, output VARCHAR, value DECIMAL(38,0), value_text VARCHAR, gas BIGINT, gas_used BIGINT, height_bucket BIGINT"
    ),
    key: ["tx_hash", "call_index"],
    partition: "height_bucket",
    rows: internalTxRows(chain, bucketWidth)
  },
  ...(["evm", "cosmos"] as const).map((side) => ({
    name: `token_transfers_${side}`,
    columns: cols(
      `height BIGINT, timestamp ${side === "evm" ? "TIMESTAMP" : "TIMESTAMP_NS"}, tx_hash VARCHAR, source VARCHAR, event_index INTEGER, coin_index INTEGER, token VARCHAR, from_address VARCHAR, to_address VARCHAR, from_bech32 VARCHAR, to_bech32 VARCHAR, amount DECIMAL(38,0), amount_text VARCHAR, height_bucket BIGINT`
    ),
    key: ["tx_hash", "event_index", "coin_index"],
    partition: "height_bucket" as const,
    rows: side === "evm" ? evmTokenTransferRows(chain, bucketWidth) : cosmosTokenTransferRows(chain, bucketWidth)
  })),
  {
    name: "nft_transfers",
    columns: cols(
      "height BIGINT, timestamp TIMESTAMP, tx_hash VARCHAR, log_index INTEGER, collection_address VARCHAR, token_id VARCHAR, kind VARCHAR, from_address VARCHAR, to_address VARCHAR, from_bech32 VARCHAR, to_bech32 VARCHAR, height_bucket BIGINT"
    ),
    key: ["tx_hash", "log_index"],
    partition: "height_bucket",
    rows: nftTransferRows(chain, bucketWidth)
  },
  {
    name: "nft_collections",
    columns: cols(
      "collection_address VARCHAR, name VARCHAR, origin_name VARCHAR, creator_address VARCHAR, creator_bech32 VARCHAR, nft_count INTEGER, created_height BIGINT, created_at TIMESTAMP, snapshot_height BIGINT"
    ),
    key: ["collection_address"],
    partition: "snapshot_height",
    rows: collectionRows(chain)
  },
  {
    name: "nft_tokens",
    columns: cols(
      "collection_address VARCHAR, collection_name VARCHAR, collection_origin_name VARCHAR, token_id VARCHAR, uri VARCHAR, owner_address VARCHAR, owner_bech32 VARCHAR, object_address VARCHAR, updated_height BIGINT, updated_at TIMESTAMP, snapshot_height BIGINT"
    ),
    key: ["collection_address", "token_id"],
    partition: "snapshot_height",
    rows: tokenRows(chain)
  },
  {
    name: "holders",
    columns: cols(
      "denom VARCHAR, account_address VARCHAR, account_bech32 VARCHAR, amount DECIMAL(38,0), amount_text VARCHAR, snapshot_height BIGINT"
    ),
    key: ["denom", "account_address"],
    partition: "snapshot_height",
    rows: holderRows(chain)
  }
]

// ---------------------------------------------------------------- comparing a lake with the model

/** The engine's default bucket width (ExportOptions.bucketWidth), what the CLI exports with. */
const DEFAULT_BUCKET_WIDTH = 10_000
/** Differences listed per dataset before the rest are only counted. */
const MAX_REPORTED = 25

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`

const query = async (conn: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> =>
  (await conn.runAndReadAll(sql)).getRowObjectsJson() as Array<Record<string, unknown>>

/** `SELECT select` over a dataset's committed Parquet files, as JSON values. */
export const selectRows = (out: string, dataset: string, select: string) =>
  withDuckDB(
    async (conn) =>
      (await conn.runAndReadAll(`SELECT ${select} FROM ${scan(out, dataset)}`)).getRowObjectsJson() as Array<Record<string, unknown>>
  )

/** Runs `f` with a fresh in-memory DuckDB connection, closed afterwards. */
export const withDuckDB = async <A>(f: (conn: DuckDBConnection) => Promise<A>): Promise<A> => {
  const instance = await DuckDBInstance.create(":memory:")
  const conn = await instance.connect()
  try {
    return await f(conn)
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

/** JSON with object keys sorted: two documents are equal iff their canonical texts are. */
const canonical = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(",")}]`
    : v !== null && typeof v === "object"
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
          .join(",")}}`
      : JSON.stringify(v)

const show = (v: unknown): string => {
  const text = v instanceof JsonCell ? canonical(v.value) : JSON.stringify(v)
  return text === undefined ? "undefined" : text.length > 160 ? `${text.slice(0, 160)}… (${text.length} chars)` : text
}

const sameCell = (expected: Cell, actual: unknown): boolean => {
  if (expected instanceof JsonCell) {
    if (typeof actual !== "string") return false
    try {
      return canonical(JSON.parse(actual)) === canonical(expected.value)
    } catch {
      return false
    }
  }
  if (Array.isArray(expected)) return Array.isArray(actual) && JSON.stringify(actual) === JSON.stringify(expected)
  // strict: a BIGINT must come back as its decimal string, an INTEGER as a number, NULL as null
  return actual === expected
}

/** Every difference between the expected and actual rows, one line each: dataset, key, column, expected, actual. */
export const differences = (d: ExpectedDataset, actual: ReadonlyArray<Readonly<Record<string, unknown>>>): Array<string> => {
  const keyOf = (row: Readonly<Record<string, unknown>>) => d.key.map((k) => String(row[k])).join(" | ")
  const problems: Array<string> = []
  const byKey = new Map<string, Readonly<Record<string, unknown>>>()
  for (const row of actual) {
    const key = keyOf(row)
    if (byKey.has(key)) problems.push(`${d.name} [${key}]: duplicate row`)
    byKey.set(key, row)
  }
  for (const want of d.rows) {
    const key = keyOf(want)
    const got = byKey.get(key)
    if (!got) {
      problems.push(`${d.name} [${key}]: missing row`)
      continue
    }
    byKey.delete(key)
    for (const column of d.columns) {
      const expected = want[column.name]
      if (!sameCell(expected, got[column.name]))
        problems.push(`${d.name} [${key}] ${column.name}: expected ${show(expected)}, actual ${show(got[column.name])}`)
    }
  }
  for (const key of byKey.keys()) problems.push(`${d.name} [${key}]: unexpected row (not in the chain model)`)
  return problems.length > MAX_REPORTED ? [...problems.slice(0, MAX_REPORTED), `… and ${problems.length - MAX_REPORTED} more`] : problems
}

/**
 * One dataset of the export folder `out` is exactly `d`: the documented columns with their types
 * (snapshot_time, checked only for being set, before the hive partition column DuckDB appends),
 * every expected row once, no other row, and every column of every row equal.
 */
export const expectDatasetMatches = (out: string, d: ExpectedDataset): Promise<void> =>
  withDuckDB(async (conn) => {
    const columns = (await query(conn, `DESCRIBE SELECT * FROM ${scan(out, d.name)}`)).map(
      (r): ColumnSpec => ({ name: String(r.column_name), type: String(r.column_type) })
    )
    const snapshot = d.partition === "snapshot_height"
    const expectedColumns = snapshot
      ? [...d.columns.slice(0, -1), { name: "snapshot_time", type: "TIMESTAMP" }, d.columns[d.columns.length - 1]]
      : d.columns
    expect(columns, `${d.name}: columns and types`).toEqual(expectedColumns)
    // timestamps with all six (nine) fractional digits: getRowObjectsJson trims trailing zeros
    const timestamps = d.columns
      .filter((c) => c.type === "TIMESTAMP" || c.type === "TIMESTAMP_NS")
      .map((c) => `strftime(${ident(c.name)}, '%Y-%m-%d %H:%M:%S.${c.type === "TIMESTAMP" ? "%f" : "%n"}') AS ${ident(c.name)}`)
    const replace = timestamps.length > 0 ? ` REPLACE (${timestamps.join(", ")})` : ""
    const rows = await query(conn, `SELECT *${snapshot ? " EXCLUDE (snapshot_time)" : ""}${replace} FROM ${scan(out, d.name)}`)
    expect(differences(d, rows), `${d.name}: rows that differ from the chain model`).toEqual([])
    // no row dropped or repeated: the model's count, and the model has no two rows with one key
    expect(rows.length, `${d.name}: row count`).toBe(d.rows.length)
    if (snapshot) {
      const [times] = await query(conn, `SELECT count(*) FILTER (WHERE snapshot_time IS NULL) AS unset FROM ${scan(out, d.name)}`)
      expect(times.unset, `${d.name}: rows without snapshot_time`).toBe("0")
    }
  })

/**
 * The named datasets of the export folder `out` hold exactly the chain of `devnet` (a full export
 * to the tip, height buckets `bucketWidth` wide), column by column and row by row.
 */
export const expectLakeMatchesChain = async (
  out: string,
  devnet: Devnet,
  datasets: ReadonlyArray<string>,
  options: { readonly bucketWidth?: number } = {}
): Promise<void> => {
  const lake = new Map(expectedLake(devnet.chain, options.bucketWidth ?? DEFAULT_BUCKET_WIDTH).map((d) => [d.name, d]))
  for (const name of datasets) {
    const d = lake.get(name)
    if (!d) throw new Error(`no chain model for dataset ${name}`)
    await expectDatasetMatches(out, d)
  }
}
