/**
 * The devnet router's /v2/fungible/msgs: checks a route's operations against the flow rules
 * (address_list per required chain, the signed op-hook when one is needed) and builds the tx to
 * sign, an evm_tx from an EVM chain and a cosmos_tx elsewhere.
 */
import type { DevnetReply } from "./http.js"
import { sha256Hex } from "./rng.js"
import { EDGES, L1, ROLLUP } from "./router-graph.js"
import { needsOpHook, operationKind } from "./router-operations.js"
import type { Issued } from "./router-transfers.js"
import { addressOk, invalid, isAmount, ok, requireString } from "./router-wire.js"
import {
  depositValue,
  evmCallValue,
  executeContractValue,
  MSG_DEPOSIT,
  MSG_EVM_CALL,
  MSG_EXECUTE_CONTRACT,
  MSG_TRANSFER,
  MSG_WITHDRAWAL,
  transferValue,
  withdrawalValue
} from "./router-amino.js"
import { bech32Encode, hexToBytes } from "./encoding.js"

/** The reply, and the tx it issued with what /devnet/broadcast will need of it (the caller remembers both). */
export interface Msgs {
  readonly reply: DevnetReply
  readonly tx: Record<string, unknown>
  readonly issued: Issued
}

export const msgs = (body: Record<string, unknown>): Msgs => {
  for (const f of ["source_asset_denom", "source_asset_chain_id", "dest_asset_denom", "dest_asset_chain_id"]) requireString(body, f)
  if (!isAmount(body.amount_in)) throw invalid("invalid amount_in")
  if (!isAmount(body.amount_out)) throw invalid("invalid amount_out")
  const slippage = body.slippage_tolerance_percent
  if (typeof slippage !== "string" || !/^\d+(\.\d+)?$/.test(slippage) || Number(slippage) > 100)
    throw invalid("invalid slippage_tolerance_percent")
  const ops = body.operations
  if (!Array.isArray(ops) || ops.length === 0) throw invalid("operations is required")
  const parsed = ops.map((op, i) => {
    if (typeof op !== "object" || op === null) throw invalid(`operations[${i}] must be an object`)
    const kind = operationKind(op)
    const inner = kind ? ((op as Record<string, unknown>)[kind] as Record<string, unknown>) : undefined
    if (!kind || typeof inner !== "object" || inner === null) throw invalid(`operations[${i}] has no operation`)
    const from = String(inner.from_chain_id ?? inner.chain_id ?? "")
    const to = String(inner.to_chain_id ?? inner.chain_id ?? from)
    return { kind, from, to, withdraw: kind === "op_init_transfer" && from === ROLLUP && to === L1 }
  })
  // Rule 3: address_list is required_chain_addresses, one address per chain, in order
  const required: Array<string> = [parsed[0].from]
  for (const p of parsed) if (required[required.length - 1] !== p.to) required.push(p.to)
  const addresses = body.address_list
  if (!Array.isArray(addresses) || addresses.some((x) => typeof x !== "string"))
    throw invalid("address_list is required: one address per chain of required_chain_addresses")
  if (addresses.length !== required.length)
    throw invalid(
      `address_list must have ${required.length} addresses (one per required chain: ${required.join(", ")}), got ${addresses.length}`
    )
  addresses.forEach((addr, i) => {
    if (!addressOk(required[i], addr as string)) throw invalid(`address_list[${i}] is not an address on ${required[i]}: ${addr}`)
  })
  // Rule 1: a route that needs an op-hook needs its signed hook before msgs
  if (needsOpHook(parsed)) {
    const hook = body.signed_op_hook as Record<string, unknown> | undefined
    if (!hook || typeof hook !== "object" || typeof hook.signer !== "string" || typeof hook.hook !== "string" || hook.hook === "")
      throw invalid(
        "signed_op_hook is required for this route (required_op_hook is true): sign the /op-hook payload and send {signer, hook}"
      )
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(hook.hook)) throw invalid("signed_op_hook.hook must be base64 encoded")
  }
  const amountOut = BigInt(body.amount_out as string)
  const minOut = (amountOut * BigInt(Math.round((100 - Number(slippage)) * 1000))) / 100_000n
  const first = parsed[0]
  const sender = addresses[0] as string
  const srcChain = body.source_asset_chain_id as string
  let tx: Record<string, unknown>
  if (/^\d+$/.test(srcChain)) {
    tx = {
      evm_tx: {
        chain_id: srcChain,
        to: "0x" + sha256Hex("entry", srcChain).slice(0, 40),
        value: "0",
        data: sha256Hex("calldata", body.amount_in as string, sender),
        signer_address: sender,
        required_erc20_approvals: [
          { amount: body.amount_in, spender: "0x" + sha256Hex("entry", srcChain).slice(0, 40), token_contract: body.source_asset_denom }
        ]
      },
      operations_indices: parsed.map((_, i) => i)
    }
  } else {
    const receiver = addresses[addresses.length - 1] as string
    const coin = { denom: body.source_asset_denom as string, amount: body.amount_in as string }
    // what the hops after the first need, carried the way each message can (IBC memo, OPinit data, the contract's msg)
    const forward = parsed.length > 1 ? JSON.stringify({ forward: required.slice(1), receiver }) : ""
    const typeUrl =
      first.kind === "op_init_transfer"
        ? first.withdraw
          ? MSG_WITHDRAWAL
          : MSG_DEPOSIT
        : first.kind === "transfer"
          ? MSG_TRANSFER
          : first.kind === "evm_swap"
            ? MSG_EVM_CALL
            : MSG_EXECUTE_CONTRACT
    const contract = (tag: string) => sha256Hex("contract", tag, srcChain)
    const msg =
      typeUrl === MSG_WITHDRAWAL
        ? withdrawalValue({ sender, to: receiver, amount: coin })
        : typeUrl === MSG_DEPOSIT
          ? depositValue({
              sender,
              bridgeId: String(1 + (Number.parseInt(sha256Hex("bridge", first.to).slice(0, 4), 16) % 64)),
              to: receiver,
              amount: coin,
              data: forward ? Buffer.from(forward).toString("base64") : ""
            })
          : typeUrl === MSG_TRANSFER
            ? transferValue({ sender, receiver, token: coin, channel: "channel-0", memo: forward })
            : typeUrl === MSG_EVM_CALL
              ? evmCallValue({
                  sender,
                  contractAddr: "0x" + contract("evm").slice(0, 40),
                  input: sha256Hex("input", body.amount_in as string, sender),
                  value: "0"
                })
              : executeContractValue({
                  sender,
                  contract: bech32Encode("init", hexToBytes(contract("wasm"))),
                  msg: { swap_and_action: { min_amount_out: minOut.toString(), forward: forward || null } },
                  funds: [coin]
                })
    tx = {
      cosmos_tx: {
        chain_id: srcChain,
        path: required,
        signer_address: sender,
        msgs: [{ msg: JSON.stringify(msg), msg_type_url: typeUrl }]
      },
      operations_indices: parsed.map((_, i) => i)
    }
  }
  // the same estimate the route gave: each hop's bridge duration
  const estimatedSeconds = parsed.reduce(
    (s, p) => s + (EDGES.find((e) => e.kind === p.kind && e.from.chainId === p.from && e.to.chainId === p.to)?.durationS ?? 0),
    0
  )
  const legacy =
    "evm_tx" in tx
      ? { evm_tx: tx.evm_tx }
      : {
          multi_chain_msg: {
            chain_id: srcChain,
            path: required,
            msg: (tx.cosmos_tx as { msgs: Array<{ msg: string }> }).msgs[0].msg,
            msg_type_url: (tx.cosmos_tx as { msgs: Array<{ msg_type_url: string }> }).msgs[0].msg_type_url
          }
        }
  return {
    reply: ok({ txs: [tx], msgs: [legacy], min_amount_out: minOut.toString(), estimated_fees: [] }),
    tx,
    issued: { ops: ops as Array<Record<string, unknown>>, estimatedSeconds }
  }
}
