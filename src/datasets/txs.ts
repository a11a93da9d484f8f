/**
 * txs — GET /indexer/tx/v1/txs (cosmos txs), sharded by row position (first page by offset,
 * then the sequence cursor). One row per tx; partitioned by height_bucket; sorted by height then
 * chain order. `tx`, `events` and `logs` are kept verbatim as JSON; message types, sender (also
 * as canonical hex) are flattened because they are cheap and asked for often.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { Tx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { accountBech32, canonicalAddress } from "./addresses.js"
import { txsList } from "./lists.js"

/** A tx with the parts of its body several columns read. */
interface TxView {
  readonly t: Tx
  readonly messages: ReadonlyArray<Record<string, unknown>>
  readonly memo: unknown
  readonly sender: string | null
  /** auth_info.fee.amount as sent */
  readonly fee: unknown
}
const view = (t: Tx): TxView => {
  const body = t.tx.body as { messages?: Array<Record<string, unknown>>; memo?: unknown }
  const messages = Array.isArray(body.messages) ? body.messages : []
  const fee = (t.tx.auth_info as { fee?: { amount?: unknown } } | undefined)?.fee?.amount ?? []
  return { t, messages, memo: body.memo, sender: senderOf(messages), fee }
}

const senderOf = (messages: ReadonlyArray<Record<string, unknown>>): string | null => {
  const m = messages[0]
  if (!m) return null
  const s = m.sender ?? m.from_address ?? m.signer
  return typeof s === "string" ? s : null
}

const col = columnsOf<TxView>()

export const txs = defineAppend({
  name: "txs",
  description: "One row per cosmos tx, with its messages, events and result.",
  list: txsList,
  view: (t: Tx) => view(t),
  columns: [
    col("height", "BIGINT", "block height", (v) => v.t.height),
    col("tx_hash", "VARCHAR", "tx hash (uppercase hex, no 0x, as the chain shows it)", (v) => v.t.txhash),
    col("timestamp", "TIMESTAMP_NS", "block time (UTC, to the nanosecond, as the txs list gives it)", (v) => v.t.timestamp),
    col("code", "INTEGER", "result code; 0 = success", (v) => v.t.code),
    col("codespace", "VARCHAR", "error codespace (NULL on success)", (v) => v.t.codespace || null),
    col("gas_wanted", "BIGINT", "gas limit", (v) => v.t.gas_wanted),
    col("gas_used", "BIGINT", "gas used", (v) => v.t.gas_used),
    col("message_types", "VARCHAR[]", "the @type of each message, in order", (v) =>
      JSON.stringify(v.messages.map((m) => String(m["@type"] ?? "")))
    ),
    col(
      "sender_address",
      "VARCHAR",
      "the first message's sender, canonical: 0x + lowercase hex of the account bytes (joins with EVM addresses)",
      (v) => canonicalAddress(v.sender)
    ),
    col(
      "sender_bech32",
      "VARCHAR",
      "the first message's sender (sender / from_address / signer) in bech32 (init1…); NULL when it is no account",
      (v) => accountBech32(canonicalAddress(v.sender))
    ),
    col("fee", "JSON", "auth_info.fee.amount: [{denom, amount}] (one row per coin: the tx_fees view)", (v) => JSON.stringify(v.fee)),
    col("memo", "VARCHAR", "tx body memo", (v) => (typeof v.memo === "string" ? v.memo : null)),
    col("data", "VARCHAR", "ABCI result data (uppercase hex)", (v) => v.t.data),
    col("raw_log", "VARCHAR", "raw log (the error text on failure)", (v) => v.t.raw_log),
    col("info", "VARCHAR", "info", (v) => v.t.info),
    col("tx", "JSON", "the tx: {body, auth_info, signatures}", (v) => JSON.stringify(v.t.tx)),
    col("events", "JSON", "ABCI events [{type, attributes:[{key, value, index}]}]; [] where the indexer has none (its null)", (v) =>
      JSON.stringify(v.t.events ?? [])
    ),
    col("logs", "JSON", "ABCI message logs (usually [])", (v) => JSON.stringify(v.t.logs))
  ],
  key: ["tx_hash"],
  sortKey: ["height"],
  partition: heightBucket("height"),
  // the indexer keeps every tx of a block (Rollytics' tx collector walks block.Txs; tx_count is their number)
  rowsPerHeight: { dataset: "blocks", column: "tx_count" }
})
