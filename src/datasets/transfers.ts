/**
 * transfers — GET /v2/tx/status of a tracked tx (POST /v2/tx/track once before): one row per
 * state the tx reached, when first seen (one answered again after another is not recorded again), with the state of each transfer of the tx, the release and the error,
 * and estimated against actual duration. Partitioned by date of observed_at (src/sampling/tracker.ts).
 */
import { columnsOf, defineSample } from "../engine/Dataset.js"
import { date } from "../lake/layout.js"
import { outcomeOf, transferEventsOf, type TxStatusResponse } from "../router/schemas.js"

/** One observed state of a tracked tx. */
export interface TransferObservation {
  readonly tx: { readonly txHash: string; readonly chainId: string; readonly registeredAt: string; readonly estimatedSeconds?: number }
  readonly observedAt: Date
  readonly status: TxStatusResponse
}

/** NULL when the router sent no transfer events at all (`transfer_sequence` is deprecated and may be absent). */
const transferStates = (s: TxStatusResponse): Array<string> | undefined =>
  transferEventsOf(s)?.map((e) => {
    const kind = Object.keys(e)[0] ?? "unknown"
    const inner = e[kind] as { state?: string } | undefined
    return `${kind}:${inner?.state ?? "?"}`
  })

/**
 * Each hop: its kind and state, its chains, and its txs (packet_txs of IBC, txs of the other
 * bridges: send, receive, acknowledge, fill, …) with hash, explorer link and on_chain_at as the
 * router wrote it (nanoseconds kept: the text is exact), so per-hop timing can be read.
 */
const hopsOf = (s: TxStatusResponse) =>
  transferEventsOf(s)?.map((e) => {
    const kind = Object.keys(e)[0] ?? "unknown"
    const inner = (e[kind] ?? {}) as Record<string, unknown>
    const text = (v: unknown) => (typeof v === "string" ? v : null)
    const group = (inner.packet_txs ?? inner.txs ?? {}) as Record<string, unknown>
    const txs = Object.entries(group).flatMap(([role, v]) => {
      const t = v as Record<string, unknown> | null
      // (a string or number has no tx_hash: only an object passes)
      return t && typeof t.tx_hash === "string"
        ? [{ role, chain_id: text(t.chain_id), tx_hash: t.tx_hash, explorer_link: text(t.explorer_link), on_chain_at: text(t.on_chain_at) }]
        : []
    })
    return {
      kind,
      state: text(inner.state),
      from_chain_id: text(inner.from_chain_id ?? inner.src_chain_id),
      to_chain_id: text(inner.to_chain_id ?? inner.dst_chain_id),
      txs
    }
  })

const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v))
const col = columnsOf<TransferObservation>()

export const transfers = defineSample({
  name: "transfers",
  writtenBy: "track (or bridge)",
  description:
    "One row per state a tracked cross-chain transfer reached, when it was first seen (a state answered again after another is not recorded again).",
  columns: [
    col("tx_hash", "VARCHAR", "the tracked tx", (o) => o.tx.txHash),
    col("chain_id", "VARCHAR", "where it was submitted", (o) => o.tx.chainId),
    col("observed_at", "TIMESTAMP", "when this state was first seen (UTC)", (o) => o.observedAt.toISOString()),
    col("state", "VARCHAR", "STATE_SUBMITTED, STATE_PENDING, STATE_COMPLETED_SUCCESS, …", (o) => o.status.state),
    col(
      "outcome",
      "VARCHAR",
      "success, error (STATE_COMPLETED_ERROR, or STATE_UNKNOWN: the API's docs say treat as error) or abandoned; NULL while in flight",
      (o) => outcomeOf(o.status.state) ?? null
    ),
    col("transfer_states", "VARCHAR[]", "each transfer event as kind:STATE, in order (NULL when the router sent no events)", (o) =>
      json(transferStates(o.status))
    ),
    col(
      "hops",
      "JSON",
      "per hop: [{kind, state, from_chain_id, to_chain_id, txs: [{role, chain_id, tx_hash, explorer_link, on_chain_at (exact text)}]}] (NULL when the router sent no events)",
      (o) => json(hopsOf(o.status))
    ),
    col(
      "next_blocking_transfer",
      "INTEGER",
      "index of the transfer being waited on, or NULL",
      (o) => o.status.next_blocking_transfer?.transfer_sequence_index ?? null
    ),
    col("released", "BOOLEAN", "transfer_asset_release.released", (o) => o.status.transfer_asset_release?.released ?? null),
    col("release_chain_id", "VARCHAR", "where the funds landed", (o) => o.status.transfer_asset_release?.chain_id ?? null),
    col("release_denom", "VARCHAR", "the denom released", (o) => o.status.transfer_asset_release?.denom ?? null),
    col(
      "release_amount",
      "DECIMAL(38,0)",
      "the amount released, base units; NULL beyond 38 digits (release_amount_text is exact)",
      (o) => o.status.transfer_asset_release?.amount ?? null
    ),
    col(
      "release_amount_text",
      "VARCHAR",
      "the amount released as exact decimal text",
      (o) => o.status.transfer_asset_release?.amount ?? null
    ),
    col("error_type", "VARCHAR", "error.type, or NULL", (o) => o.status.error?.type ?? null),
    col("error_message", "VARCHAR", "error.message, or NULL", (o) => o.status.error?.message ?? null),
    col("registered_at", "TIMESTAMP", "when the tx was registered with /v2/tx/track (UTC)", (o) => o.tx.registeredAt),
    col("estimated_duration_s", "BIGINT", "the route's estimate, if given", (o) => o.tx.estimatedSeconds ?? null),
    col(
      "elapsed_s",
      "DOUBLE",
      "seconds from registration to this observation (the actual duration on a final state)",
      (o) => (o.observedAt.getTime() - Date.parse(o.tx.registeredAt)) / 1000
    )
  ],
  // a state is recorded once per transfer, even by runs at once on one folder or a rerun that lost
  // the registry: the tracker commits only the states the lake does not hold yet (tracker.ts)
  key: ["tx_hash", "chain_id", "state"],
  sortKey: ["observed_at"],
  partition: date("observed_at")
})
