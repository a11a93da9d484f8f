/**
 * txs — GET /indexer/tx/v1/txs (cosmos txs), sharded by row position (first page by offset,
 * then the sequence cursor). One row per tx; partitioned by height_bucket; sorted by height then
 * chain order. `tx`, `events` and `logs` are kept verbatim as JSON; message types, sender and
 * fee are flattened because they are cheap and asked for often.
 */
import type { AppendDataset } from "../engine/Dataset.js"
import type { Tx } from "../indexer/schemas.js"
import { txsSource } from "./sources.js"

const senderOf = (messages: ReadonlyArray<Record<string, unknown>>): string | null => {
  const m = messages[0]
  if (!m) return null
  const s = m.sender ?? m.from_address ?? m.signer
  return typeof s === "string" ? s : null
}

export const txs: AppendDataset = {
  kind: "append",
  name: "txs",
  description: "One row per cosmos tx, with its messages, events and result.",
  source: txsSource,
  columns: [
    { name: "height", type: "BIGINT", description: "block height" },
    { name: "txhash", type: "VARCHAR", description: "tx hash (uppercase hex, no 0x)" },
    { name: "timestamp", type: "TIMESTAMP", description: "block time (UTC, microseconds)" },
    { name: "code", type: "INTEGER", description: "result code; 0 = success" },
    { name: "codespace", type: "VARCHAR", description: "error codespace ('' on success)" },
    { name: "gas_wanted", type: "BIGINT", description: "gas limit" },
    { name: "gas_used", type: "BIGINT", description: "gas used" },
    { name: "message_types", type: "VARCHAR[]", description: "the @type of each message, in order" },
    { name: "sender", type: "VARCHAR", description: "the first message's sender (sender / from_address / signer)" },
    { name: "fee", type: "JSON", description: "auth_info.fee.amount: [{denom, amount}]" },
    { name: "memo", type: "VARCHAR", description: "tx body memo" },
    { name: "data", type: "VARCHAR", description: "ABCI result data (uppercase hex)" },
    { name: "raw_log", type: "VARCHAR", description: "raw log (the error text on failure)" },
    { name: "info", type: "VARCHAR", description: "info" },
    { name: "tx", type: "JSON", description: "the tx: {body, auth_info, signatures}" },
    { name: "events", type: "JSON", description: "ABCI events [{type, attributes:[{key, value, index}]}]" },
    { name: "logs", type: "JSON", description: "ABCI message logs (usually [])" }
  ],
  sortKey: ["height"],
  heightColumn: 0,
  toRows: (t: Tx) => {
    const body = t.tx.body as { messages?: Array<Record<string, unknown>>; memo?: string }
    const messages = Array.isArray(body.messages) ? body.messages : []
    const fee = (t.tx.auth_info as { fee?: { amount?: unknown } }).fee?.amount ?? []
    return [
      [
        t.height,
        t.txhash,
        t.timestamp,
        t.code,
        t.codespace,
        t.gas_wanted,
        t.gas_used,
        JSON.stringify(messages.map((m) => String(m["@type"] ?? ""))),
        senderOf(messages),
        JSON.stringify(fee),
        typeof body.memo === "string" ? body.memo : null,
        t.data,
        t.raw_log,
        t.info,
        JSON.stringify(t.tx),
        JSON.stringify(t.events),
        JSON.stringify(t.logs)
      ]
    ]
  }
}
