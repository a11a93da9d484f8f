/**
 * transfers — GET /v2/tx/status of a tracked tx (POST /v2/tx/track once before): one row per
 * observed state change, with the state of each transfer of the tx, the release and the error,
 * and estimated against actual duration. Partitioned by date=YYYY-MM-DD of observed_at.
 */
import type { Column, Row } from "../engine/Dataset.js"
import type { TxStatusResponse } from "../router/schemas.js"

export const TRANSFERS = "transfers"

export const transferColumns: ReadonlyArray<Column> = [
  { name: "tx_hash", type: "VARCHAR", description: "the tracked tx" },
  { name: "chain_id", type: "VARCHAR", description: "where it was submitted" },
  { name: "observed_at", type: "TIMESTAMP", description: "when this state was first seen (UTC)" },
  { name: "state", type: "VARCHAR", description: "STATE_SUBMITTED, STATE_PENDING, STATE_COMPLETED_SUCCESS, …" },
  { name: "transfer_states", type: "VARCHAR[]", description: "each transfer event as kind:STATE, in order" },
  { name: "next_blocking_transfer", type: "INTEGER", description: "index of the transfer being waited on, or NULL" },
  { name: "released", type: "BOOLEAN", description: "transfer_asset_release.released" },
  { name: "release_chain_id", type: "VARCHAR", description: "where the funds landed" },
  { name: "release_denom", type: "VARCHAR", description: "the denom released" },
  { name: "release_amount", type: "VARCHAR", description: "the amount released (exact)" },
  { name: "error_type", type: "VARCHAR", description: "error.type, or NULL" },
  { name: "error_message", type: "VARCHAR", description: "error.message, or NULL" },
  { name: "registered_at", type: "TIMESTAMP", description: "when the tx was registered with /v2/tx/track (UTC)" },
  { name: "estimated_duration_s", type: "BIGINT", description: "the route's estimate, if given" },
  { name: "elapsed_s", type: "DOUBLE", description: "seconds from registration to this observation (the actual duration on a final state)" }
]

export const transferRow = (
  tx: { readonly txHash: string; readonly chainId: string; readonly registeredAt: string; readonly estimatedSeconds?: number },
  observedAt: Date,
  s: TxStatusResponse
): Row => {
  const events = s.transfers?.[0]?.transfer_sequence ?? s.transfer_sequence
  const transferStates = events.map((e) => {
    const kind = Object.keys(e)[0] ?? "unknown"
    const inner = e[kind] as { state?: string } | undefined
    return `${kind}:${inner?.state ?? "?"}`
  })
  const release = s.transfer_asset_release ?? null
  return [
    tx.txHash,
    tx.chainId,
    observedAt.toISOString(),
    s.state,
    JSON.stringify(transferStates),
    s.next_blocking_transfer?.transfer_sequence_index ?? null,
    release?.released ?? null,
    release?.chain_id ?? null,
    release?.denom ?? null,
    release?.amount ?? null,
    s.error?.type ?? null,
    s.error?.message ?? null,
    tx.registeredAt,
    tx.estimatedSeconds ?? null,
    (observedAt.getTime() - Date.parse(tx.registeredAt)) / 1000
  ]
}
