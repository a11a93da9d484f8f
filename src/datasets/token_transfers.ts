/**
 * token_transfers — one row per fungible token movement, from what the export already fetches
 * (no extra list requests). One table in two datasets, one per list it is read from, so that each
 * commits with the range of its own source; the `token_transfers` view is their union:
 *
 * - token_transfers_evm: ERC-20 `Transfer(address,address,uint256)` logs of GET
 *   /indexer/tx/v1/evm-txs receipts (topic0 0xddf252ad…, exactly three topics, one 32-byte data
 *   word; removed logs skipped). The time is the block's (receipts carry a height only).
 * - token_transfers_cosmos: `transfer` events of GET /indexer/tx/v1/txs (bank sends, IBC escrows,
 *   fee payments: every coin that moved), one row per coin of an event's `amount`.
 *
 * Addresses are canonical (`0x` + lowercase hex of the account bytes) whichever side they came
 * from, with their bech32 spelling beside them. Amounts are exact: DECIMAL(38,0) where they fit
 * and always as text. Partitioned by height_bucket of height.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { EvmTx, Tx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { accountBech32, canonicalAddress, topicAddress } from "./addresses.js"
import { evmTxsList, hexToNumber, txsList } from "./lists.js"

/** keccak256("Transfer(address,address,uint256)"): ERC-20 and ERC-721 share it; the topic count tells them apart */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

/** One token movement, from either side. */
export interface TokenTransfer {
  readonly height: number
  /** null: the block's time (EVM receipts carry none) */
  readonly timestamp: string | null
  readonly txHash: string
  readonly source: "evm" | "cosmos"
  readonly eventIndex: number
  readonly coinIndex: number
  readonly token: string
  readonly from: string | null
  readonly to: string | null
  readonly fromBech32: string | null
  readonly toBech32: string | null
  /** exact decimal text */
  readonly amount: string
}

const col = columnsOf<TokenTransfer>()

/** The columns, the time at its source's precision: the block list's seconds (evm), the txs list's nanoseconds (cosmos). */
const columnsTimed = (time: "TIMESTAMP" | "TIMESTAMP_NS") => [
  col("height", "BIGINT", "block height", (t) => t.height),
  col(
    "timestamp",
    time,
    time === "TIMESTAMP" ? "block time (UTC, seconds, from the block list)" : "block time (UTC, to the nanosecond, from the txs list)",
    (t, context) => t.timestamp ?? context.blockTime(t.height)
  ),
  col("tx_hash", "VARCHAR", "the tx: 0x-hex EVM tx hash (evm) or uppercase cosmos tx hash (cosmos)", (t) => t.txHash),
  col("source", "VARCHAR", "'evm' (an ERC-20 Transfer log) or 'cosmos' (a transfer event)", (t) => t.source),
  col(
    "event_index",
    "INTEGER",
    "evm: the log's logIndex (in its block; in its tx on receipts indexed before minievm's March 2026 fix: see evm_logs); cosmos: the event's index in its tx",
    (t) => t.eventIndex
  ),
  col("coin_index", "INTEGER", "cosmos: the coin's index in the event's amounts (an event may move several); evm: 0", (t) => t.coinIndex),
  col("token", "VARCHAR", "the ERC-20 contract (lowercase 0x-hex) or the denom", (t) => t.token),
  col("from_address", "VARCHAR", "sender, canonical: 0x + lowercase hex of the account bytes (NULL if not an account)", (t) => t.from),
  col("to_address", "VARCHAR", "recipient, canonical like from_address", (t) => t.to),
  col("from_bech32", "VARCHAR", "sender in bech32 (init1…)", (t) => t.fromBech32),
  col("to_bech32", "VARCHAR", "recipient in bech32 (init1…)", (t) => t.toBech32),
  col("amount", "DECIMAL(38,0)", "amount in base units; NULL beyond 38 digits (amount_text is always exact)", (t) => t.amount),
  col("amount_text", "VARCHAR", "amount in base units as exact decimal text", (t) => t.amount)
]
// the tx hash leads the key: an EVM log's index is unique within its tx under both of minievm's numberings (see evm_logs), not always within its block
const key = ["tx_hash", "event_index", "coin_index"]
const sortKey = ["height", "tx_hash", "event_index", "coin_index"]

type EvmLog = EvmTx["logs"][number]
const erc20Transfer = (log: EvmLog): TokenTransfer | undefined => {
  if (log.removed || log.topics.length !== 3 || log.topics[0].toLowerCase() !== TRANSFER_TOPIC || !/^0x[0-9a-fA-F]{64}$/.test(log.data))
    return undefined
  const from = topicAddress(log.topics[1])
  const to = topicAddress(log.topics[2])
  return {
    height: hexToNumber(log.blockNumber),
    timestamp: null,
    txHash: log.transactionHash,
    source: "evm",
    eventIndex: hexToNumber(log.logIndex),
    coinIndex: 0,
    token: log.address.toLowerCase(),
    from,
    to,
    fromBech32: accountBech32(from),
    toBech32: accountBech32(to),
    amount: BigInt(log.data).toString()
  }
}

export const tokenTransfersEvm = defineAppend({
  name: "token_transfers_evm",
  description: "ERC-20 Transfer logs as token movements (the evm half of the token_transfers view).",
  list: evmTxsList,
  items: (r: EvmTx) => r.logs.flatMap((l) => erc20Transfer(l) ?? []),
  columns: columnsTimed("TIMESTAMP"),
  key,
  sortKey,
  partition: heightBucket("height"),
  blockTime: true
})

/** "10uinit,5ibc/27A6…": a coin list as cosmos-sdk prints it (amount, then the denom) */
const COIN = /^(\d+)([a-zA-Z][a-zA-Z0-9/:._-]*)$/
const parseCoins = (text: string): Array<{ readonly amount: string; readonly denom: string }> | undefined => {
  const coins = []
  for (const part of text.split(",")) {
    const m = COIN.exec(part.trim())
    if (!m) return undefined
    coins.push({ amount: BigInt(m[1]).toString(), denom: m[2] })
  }
  return coins
}

type Attribute = { readonly key?: unknown; readonly value?: unknown }
type TxEvent = { readonly type?: unknown; readonly attributes?: ReadonlyArray<Attribute> }

/**
 * The transfers of one tx's events. An event holds one (sender, recipient, amount) triple on
 * current cosmos-sdk; older ones repeated the triple inside one event, read here in order. An
 * amount that is not a coin list is not guessed at: that triple is left out.
 */
const cosmosTransfers = (t: Tx): Array<TokenTransfer> => {
  const out: Array<TokenTransfer> = []
  const events = (t.events ?? []) as ReadonlyArray<TxEvent>
  // Stryker disable next-line EqualityOperator: one step past the end reads undefined, which is no transfer event
  for (let e = 0; e < events.length; e++) {
    const event = events[e]
    if (event?.type !== "transfer" || !Array.isArray(event.attributes)) continue
    let coinIndex = 0
    let triple: { sender?: string; recipient?: string; amount?: string } = {}
    const emit = () => {
      const coins = triple.amount === undefined ? undefined : parseCoins(triple.amount)
      if (coins) {
        const from = canonicalAddress(triple.sender)
        const to = canonicalAddress(triple.recipient)
        for (const coin of coins)
          out.push({
            height: Number(t.height),
            timestamp: t.timestamp,
            txHash: t.txhash,
            source: "cosmos",
            eventIndex: e,
            coinIndex: coinIndex++,
            token: coin.denom,
            from,
            to,
            fromBech32: triple.sender ?? null,
            toBech32: triple.recipient ?? null,
            amount: coin.amount
          })
      }
      triple = {}
    }
    for (const a of event.attributes) {
      const k: unknown = a?.key
      if ((k !== "sender" && k !== "recipient" && k !== "amount") || typeof a.value !== "string") continue
      if (triple[k] !== undefined) emit()
      triple[k] = a.value
    }
    emit()
  }
  return out
}

export const tokenTransfersCosmos = defineAppend({
  name: "token_transfers_cosmos",
  description: "Cosmos transfer events as token movements, one row per coin (the cosmos half of the token_transfers view).",
  list: txsList,
  items: cosmosTransfers,
  columns: columnsTimed("TIMESTAMP_NS"),
  key,
  sortKey,
  partition: heightBucket("height")
})
