/**
 * The devnet router's transfers: /devnet/broadcast (devnet-only) turns a tx issued by
 * /v2/fungible/msgs into a tx hash with an outcome, /v2/tx/track registers it once, and
 * /v2/tx/status walks it hop by hop through its bridges' states as time passes.
 *
 * As on the real router, a registered tx is "not found" (404, code 5) until the tracking service
 * has indexed it: the first `indexDelayMs` after track. A second track of the same tx (what the
 * Skip SDK's retry_track does when status keeps saying "tx not found") is accepted and changes
 * nothing.
 */
import { goJson } from "./encoding.js"
import type { DevnetReply } from "./http.js"
import { Rng, sha256Hex } from "./rng.js"
import { CHAINS } from "./router-graph.js"
import { operationKind } from "./router-operations.js"
import { invalid, ok, requireString, RouterError } from "./router-wire.js"

/** What broadcast needs of a tx /v2/fungible/msgs issued: its operations and the route's duration estimate. */
export interface Issued {
  readonly ops: ReadonlyArray<Record<string, unknown>>
  readonly estimatedSeconds: number
}

export interface Broadcast {
  readonly chainId: string
  readonly ops: ReadonlyArray<Record<string, unknown>>
  readonly outcome: "success" | "error" | "abandoned" | "unknown"
  tracked?: number
  readonly estimatedSeconds: number
}

/** Issued txs are found by their JSON, since a client hands the tx it got from msgs back to broadcast. */
export const issuedKey = (tx: unknown): string => goJson(tx)

/** The router state the transfer routes read and write; the RouterApi owns it. */
export interface Transfers {
  readonly options: { readonly seed: number; readonly transferTimeScale: number; readonly instance?: string; readonly indexDelayMs: number }
  readonly now: () => number
  /** operations of each msgs tx issued, by issuedKey */
  readonly issued: ReadonlyMap<string, Issued>
  /** broadcast txs by lowercase hash */
  readonly broadcasts: Map<string, Broadcast>
  /** numbers the broadcasts, so a tx broadcast twice gets two hashes */
  readonly nextBroadcast: () => number
}

export const broadcast = (transfers: Transfers, body: Record<string, unknown>): DevnetReply => {
  const chainId = requireString(body, "chain_id")
  const tx = body.tx
  const issued = tx && typeof tx === "object" ? transfers.issued.get(issuedKey(tx)) : undefined
  if (!issued) throw invalid("tx is invalid on chain: not a tx issued by /v2/fungible/msgs on this devnet")
  const isEvm = /^\d+$/.test(chainId)
  const n = transfers.nextBroadcast()
  const raw = sha256Hex(transfers.options.seed, "broadcast", transfers.options.instance ?? "", n, goJson(tx))
  const txHash = isEvm ? "0x" + raw : raw.toUpperCase()
  const asked = body.outcome
  const outcome =
    asked === "success" || asked === "error" || asked === "abandoned" || asked === "unknown"
      ? asked
      : new Rng(transfers.options.seed, "outcome", txHash).weighted<Broadcast["outcome"]>([
          ["success", 85],
          ["error", 10],
          ["abandoned", 5]
        ])
  transfers.broadcasts.set(txHash.toLowerCase(), { chainId, ops: issued.ops, outcome, estimatedSeconds: issued.estimatedSeconds })
  return ok({ tx_hash: txHash, chain_id: chainId }, false)
}

export const track = (transfers: Transfers, body: Record<string, unknown>): DevnetReply => {
  const txHash = requireString(body, "tx_hash")
  const chainId = requireString(body, "chain_id")
  if (!CHAINS.includes(chainId)) throw new RouterError(404, 5, "chain ID not supported")
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(txHash)) throw invalid("invalid tx hex encoding")
  const b = transfers.broadcasts.get(txHash.toLowerCase())
  if (!b || b.chainId !== chainId) throw invalid("tx is invalid on chain")
  // a tx registered again keeps its first registration
  b.tracked ??= transfers.now()
  return ok({ tx_hash: txHash, explorer_link: `https://explorer.devnet.invalid/${chainId}/txs/${txHash}` }, false)
}

export const status = (transfers: Transfers, q: URLSearchParams): DevnetReply => {
  const txHash = q.get("tx_hash")
  const chainId = q.get("chain_id")
  if (!txHash) throw invalid("tx_hash is required")
  if (!chainId) throw invalid("chain_id is required")
  const b = transfers.broadcasts.get(txHash.toLowerCase())
  if (!b || b.tracked === undefined || b.chainId !== chainId || transfers.now() - b.tracked < transfers.options.indexDelayMs)
    throw new RouterError(404, 5, "tx not found")
  return ok(transferStatus(transfers, txHash, b))
}

/**
 * Where a tracked transfer stands now: its bridge hops (swaps and sends ride inside them) finish
 * one after another over the route's estimate × transferTimeScale; an "error" outcome fails the
 * last hop, an "abandoned" one gives up halfway, and an "unknown" one (asked for by broadcast
 * only) loses track of the last hop: STATE_UNKNOWN, which the API's error-code docs say to treat
 * as an error.
 */
const transferStatus = (transfers: Transfers, txHash: string, b: Broadcast) => {
  // the transfer's clock starts when the tracking service indexed it (before, status is "tx not found")
  const elapsed = (transfers.now() - b.tracked! - transfers.options.indexDelayMs) / 1000
  const scale = transfers.options.transferTimeScale
  const hops = b.ops
    .map((op) => {
      const kind = operationKind(op)!
      return { kind, inner: op[kind] as Record<string, unknown> }
    })
    .filter((h) => h.kind !== "swap" && h.kind !== "evm_swap" && h.kind !== "bank_send")
  const submitted = 0.2
  const hopSeconds = Math.max(0.2, (b.estimatedSeconds * scale) / Math.max(1, hops.length))
  const link = (chain: string, tag: string) => {
    const h = sha256Hex(transfers.options.seed, tag, txHash)
    return {
      chain_id: chain,
      tx_hash: h.toUpperCase(),
      explorer_link: `https://explorer.devnet.invalid/${chain}/txs/${h}`,
      on_chain_at: new Date(b.tracked! + 1000).toISOString()
    }
  }
  const abandonAt = submitted + hopSeconds * hops.length * 0.5
  const failAt = hops.length - 1
  const events: Array<Record<string, unknown>> = []
  let state = elapsed < submitted ? "STATE_SUBMITTED" : "STATE_PENDING"
  let error: Record<string, unknown> | null = null
  let released = false
  let blockingIndex: number | null = elapsed < submitted ? 0 : null
  if (elapsed >= submitted) {
    for (let i = 0; i < hops.length; i++) {
      const doneAt = submitted + hopSeconds * (i + 1)
      const started = elapsed >= submitted + hopSeconds * i
      if (!started) break
      const finished = elapsed >= doneAt
      const failed = finished && b.outcome === "error" && i === failAt
      const lost = finished && b.outcome === "unknown" && i === failAt
      const h = hops[i]
      const from = String(h.inner.from_chain_id ?? h.inner.chain_id)
      const to = String(h.inner.to_chain_id ?? h.inner.chain_id)
      events.push(transferEvent(h.kind, from, to, finished && !lost, failed, link))
      if (lost) {
        state = "STATE_UNKNOWN"
        error = { type: "STATUS_ERROR_UNKNOWN", message: "the transfer's state could not be determined" }
        break
      }
      if (!finished) {
        blockingIndex = i
        break
      }
      if (failed) {
        state = "STATE_COMPLETED_ERROR"
        error = {
          type: "STATUS_ERROR_TRANSFER",
          message: "packet acknowledgement error",
          details: { code: 5, message: "insufficient funds on the destination relayer" }
        }
        break
      }
    }
    if (b.outcome === "abandoned" && elapsed >= abandonAt) state = "STATE_ABANDONED"
    else if (state === "STATE_PENDING" && elapsed >= submitted + hopSeconds * hops.length) {
      state = "STATE_COMPLETED_SUCCESS"
      released = true
    }
  }
  const last = b.ops[b.ops.length - 1]
  const lastKind = operationKind(last)!
  const lastInner = last[lastKind] as Record<string, unknown>
  const release = state.startsWith("STATE_COMPLETED")
    ? {
        chain_id: String(lastInner.to_chain_id ?? lastInner.chain_id),
        denom: String(lastInner.denom_out ?? lastInner.denom),
        amount: String(last.amount_out ?? ""),
        released
      }
    : null
  const transfer = {
    state,
    transfer_sequence: events,
    next_blocking_transfer: blockingIndex === null ? null : { transfer_sequence_index: blockingIndex },
    transfer_asset_release: release,
    error
  }
  return {
    transfers: [transfer],
    state,
    transfer_sequence: events,
    next_blocking_transfer: transfer.next_blocking_transfer,
    transfer_asset_release: release,
    error,
    status:
      state.startsWith("STATE_COMPLETED") || state === "STATE_ABANDONED" || state === "STATE_UNKNOWN" ? "STATE_COMPLETED" : "STATE_PENDING"
  }
}

type Link = (chain: string, tag: string) => Record<string, unknown>

/** One TransferEvent: exactly one wrapper key, with that bridge's state enum. */
const transferEvent = (kind: string, from: string, to: string, finished: boolean, failed: boolean, link: Link): Record<string, unknown> => {
  const base = { from_chain_id: from, to_chain_id: to, src_chain_id: from, dst_chain_id: to }
  const send = link(from, `send-${kind}-${from}`)
  const recv = finished && !failed ? link(to, `recv-${kind}-${to}`) : null
  switch (kind) {
    case "transfer":
    case "eureka_transfer":
      return {
        [kind === "transfer" ? "ibc_transfer" : kind]: {
          ...base,
          state: failed ? "TRANSFER_FAILURE" : finished ? "TRANSFER_SUCCESS" : "TRANSFER_PENDING",
          packet_txs: {
            send_tx: send,
            receive_tx: recv,
            acknowledge_tx: finished ? link(from, `ack-${from}`) : null,
            timeout_tx: null,
            error: failed ? { type: "PACKET_ERROR_ACKNOWLEDGEMENT", message: "acknowledgement error" } : null
          }
        }
      }
    case "op_init_transfer":
      return {
        op_init_transfer: {
          ...base,
          state: finished && !failed ? "OPINIT_TRANSFER_RECEIVED" : failed ? "OPINIT_TRANSFER_UNKNOWN" : "OPINIT_TRANSFER_SENT",
          txs: { send_tx: send, receive_tx: recv }
        }
      }
    case "go_fast_transfer":
      return {
        go_fast_transfer: {
          ...base,
          state: failed ? "GO_FAST_TRANSFER_REFUNDED" : finished ? "GO_FAST_TRANSFER_FILLED" : "GO_FAST_TRANSFER_SENT",
          txs: {
            order_submitted_tx: send,
            order_filled_tx: recv,
            order_refunded_tx: failed ? link(from, "refund") : null,
            order_timeout_tx: null
          }
        }
      }
    case "cctp_transfer":
    case "cctp_transfer_v2":
      // V2's status event has V1's shape (@skip-go/client 1.6.1 TransferEvent.cctpTransferV2: CCTPTransferInfo)
      return {
        [kind]: {
          ...base,
          state: failed ? "CCTP_TRANSFER_UNKNOWN" : finished ? "CCTP_TRANSFER_RECEIVED" : "CCTP_TRANSFER_PENDING_CONFIRMATION",
          txs: { send_tx: send, receive_tx: recv }
        }
      }
    case "hyperlane_transfer":
      return {
        hyperlane_transfer: {
          ...base,
          state: failed ? "HYPERLANE_TRANSFER_FAILED" : finished ? "HYPERLANE_TRANSFER_RECEIVED" : "HYPERLANE_TRANSFER_SENT",
          txs: { send_tx: send, receive_tx: recv }
        }
      }
    case "stargate_transfer":
      return {
        stargate_transfer: {
          ...base,
          state: failed ? "STARGATE_TRANSFER_FAILED" : finished ? "STARGATE_TRANSFER_RECEIVED" : "STARGATE_TRANSFER_SENT",
          txs: { send_tx: send, receive_tx: recv, error_tx: null }
        }
      }
    case "layer_zero_transfer":
      return {
        layer_zero_transfer: {
          ...base,
          state: failed ? "LAYER_ZERO_TRANSFER_FAILED" : finished ? "LAYER_ZERO_TRANSFER_RECEIVED" : "LAYER_ZERO_TRANSFER_SENT",
          txs: { send_tx: send, receive_tx: recv, compose_tx: null, error_tx: null }
        }
      }
    default:
      return {
        axelar_transfer: {
          ...base,
          type: "AXELAR_TRANSFER_SEND_TOKEN",
          state: failed ? "AXELAR_TRANSFER_FAILURE" : finished ? "AXELAR_TRANSFER_SUCCESS" : "AXELAR_TRANSFER_PENDING_CONFIRMATION",
          txs: { send_tx: send, confirm_tx: null, execute_tx: recv, error: null },
          axelar_scan_link: `https://axelarscan.devnet.invalid/${send.tx_hash}`
        }
      }
  }
}
