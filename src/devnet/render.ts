/**
 * Builds the wire objects of the indexer API from the chain model, with the real wire types:
 * strings for block and cosmos-tx numbers, integers for NFT/internal-tx heights, 0x-hex quantities
 * in EVM receipts. Field order follows the real server's Go structs.
 */
import type { Chain, NftToken, TxPlan } from "./chain.js"
import { hexBytes, hexQty, rfc3339Nano, rfc3339Seconds } from "./encoding.js"
import { hash32, Rng, sha256Hex } from "./rng.js"

const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
const ZERO_BLOOM = "0x" + "0".repeat(512)
const word = (hex: string) => "0x" + hex.replace(/^0x/, "").padStart(64, "0")

export const msgTypeOf = (chain: Chain, p: TxPlan): string => {
  switch (p.kind) {
    case "bank_send":
      return "/cosmos.bank.v1beta1.MsgSend"
    case "ibc_transfer":
      return "/ibc.applications.transfer.v1.MsgTransfer"
    case "evm_create":
      return "/minievm.evm.v1.MsgCreate"
    default:
      return chain.vm === "evm"
        ? "/minievm.evm.v1.MsgCall"
        : chain.vm === "move"
          ? "/initia.move.v1.MsgExecute"
          : "/cosmwasm.wasm.v1.MsgExecuteContract"
  }
}

/** Every message type the devnet can emit, for the `msgs` filter ("known types"). */
export const knownMsgTypes = (chain: Chain): ReadonlySet<string> =>
  new Set([
    "cosmos.bank.v1beta1.MsgSend",
    "ibc.applications.transfer.v1.MsgTransfer",
    ...(chain.vm === "evm"
      ? ["minievm.evm.v1.MsgCall", "minievm.evm.v1.MsgCreate"]
      : chain.vm === "move"
        ? ["initia.move.v1.MsgExecute"]
        : ["cosmwasm.wasm.v1.MsgExecuteContract"])
  ])

export const blockJson = (chain: Chain, height: number) => {
  const n = chain.blockTxCount(height)
  const { gasUsed, gasWanted, fees: feeSums } = chain.blockSums(height)
  const fees = new Map<string, bigint>()
  feeSums.forEach((amount, i) => {
    if (amount > 0) fees.set(chain.u.denoms[i].denom, BigInt(amount))
  })
  const prev = height === 1 ? 0 : chain.headerTimeMs(height - 1) * 1e6 + chain.headerExtraNanos(height - 1)
  const now = chain.headerTimeMs(height) * 1e6 + chain.headerExtraNanos(height)
  const proposer = chain.u.proposers[new Rng(chain.seedAt(height), "proposer", height).chance(0.9) ? 0 : 1]
  return {
    chain_id: chain.u.chainId,
    height: String(height),
    hash: chain.blockHash(height),
    block_time: height === 1 ? "0" : String(Math.floor((now - prev) / 1e6)),
    timestamp: rfc3339Seconds(chain.headerTimeMs(height)),
    gas_used: String(gasUsed),
    gas_wanted: String(gasWanted),
    tx_count: String(n),
    // sdk.Coins: sorted by denom, zero coins dropped
    total_fee: [...fees.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([denom, amount]) => ({ denom, amount: amount.toString() })),
    proposer: { moniker: proposer.moniker, identity: "", operator_address: proposer.operator_address }
  }
}

const attr = (key: string, value: string) => ({ key, value, index: true })

const responseData = (typeUrl: string): string => {
  const t = Buffer.from(typeUrl + "Response", "utf8")
  return Buffer.concat([Buffer.from([0x12, t.length + 2, 0x0a, t.length]), t])
    .toString("hex")
    .toUpperCase()
}

/** 1 MiB of base64 text drawn from the seed: payloads are slices of it (cheap to serve at any size, the same bytes every time) */
const PAYLOAD_POOL = 1024 * 1024
const payloadPools = new Map<number, string>()
const payloadPool = (seed: number): string => {
  let pool = payloadPools.get(seed)
  if (pool === undefined) {
    const parts: Array<Buffer> = []
    for (let i = 0, n = 0; n < (PAYLOAD_POOL * 3) / 4; i++, n += 32) parts.push(Buffer.from(sha256Hex(seed, "payload", i), "hex"))
    pool = Buffer.concat(parts).toString("base64").slice(0, PAYLOAD_POOL)
    payloadPools.set(seed, pool)
  }
  return pool
}
/** The payload of the tx at (height, index) on a chain with large records (ChainOptions.txPayloadBytes): that many bytes of base64 text. */
export const txPayload = (chain: Chain, height: number, index: number): string => {
  const size = chain.txPayloadBytes
  if (size === 0) return ""
  const pool = payloadPool(chain.seedAt(height))
  const at = hash32(chain.seedAt(height), "payload-at", height, index) % PAYLOAD_POOL
  let out = pool.slice(at, at + size)
  while (out.length < size) out += pool.slice(0, size - out.length)
  return out
}

/**
 * The memo of minievm's cosmos form of an Ethereum tx (`x/evm/types/txutils.go`
 * ConvertEthereumTxToCosmosTx): the Ethereum tx's type, fee caps and gas limit, as Go's
 * encoding/json writes its txMetadata (big integers as JSON numbers).
 */
const ethereumMemo = (p: TxPlan) => `{"type":2,"gas_fee_cap":15000000000000000,"gas_tip_cap":0,"gas_limit":${p.gasWanted}}`

/** The cosmos tx (list and by-hash shape). */
export const txJson = (chain: Chain, height: number, index: number) => {
  const p = chain.plan(height, index)
  const seq = chain.txSeqBefore(height) + index + 1
  const nft = chain.nftEvents.get(seq)
  const signer = chain.accountOf(chain.signerOf(p, seq))
  const recipient = chain.accountOf(nft ? nft.to : p.recipient)
  const typeUrl = msgTypeOf(chain, p)
  const denom = chain.u.denoms[p.denom].denom
  const feeDenom = chain.u.denoms[p.feeDenom].denom
  const r = new Rng(chain.seedAt(height), "txbody", height, index)
  const messages: Array<Record<string, unknown>> = []
  for (let m = 0; m < p.msgCount; m++) messages.push(messageJson(chain, p, typeUrl, signer.bech32, recipient, denom, nft, r))
  const note = r.chance(0.1) ? "devnet memo ✓ <ok>" : ""
  const ethereum = chain.isEvmTx(p)
  const payload = txPayload(chain, height, index)
  // (a large Ethereum tx's weight is its call data: its memo is its fees)
  if (ethereum && payload !== "") {
    const field = p.kind === "evm_create" ? "code" : "input"
    messages[0][field] = `${messages[0][field]}${Buffer.from(payload.slice(0, Math.ceil(payload.length / 2))).toString("hex")}`
  }
  const events: Array<{ type: string; attributes: Array<ReturnType<typeof attr>> }> = [
    { type: "coin_spent", attributes: [attr("spender", signer.bech32), attr("amount", `${p.feeAmount}${feeDenom}`)] },
    { type: "tx", attributes: [attr("fee", `${p.feeAmount}${feeDenom}`), attr("fee_payer", signer.bech32)] },
    { type: "tx", attributes: [attr("acc_seq", `${signer.bech32}/${Math.floor(seq / 7)}`)] },
    { type: "tx", attributes: [attr("signature", Buffer.from(sha256Hex(chain.seedAt(height), "sig", seq), "hex").toString("base64"))] }
  ]
  // each message's events, tagged with its msg_index (the SDK runs the messages one by one): a bank send of two messages moves coins twice
  // (a failed tx emits no events of its messages, and no logs: receiptLogs gives none)
  const logs = receiptLogs(chain, p, 0, nft)
  for (let m = 0; m < (p.failed ? 0 : p.msgCount); m++) {
    const msgIndex = attr("msg_index", String(m))
    events.push({
      type: "message",
      attributes: [attr("action", typeUrl), attr("sender", signer.bech32), attr("module", typeUrl.split(".")[0].slice(1)), msgIndex]
    })
    if (p.kind === "bank_send" || p.kind === "ibc_transfer") {
      const amount = `${p.amount}${denom}`
      events.push(
        { type: "coin_spent", attributes: [attr("spender", signer.bech32), attr("amount", amount), msgIndex] },
        { type: "coin_received", attributes: [attr("receiver", recipient.bech32), attr("amount", amount), msgIndex] },
        {
          type: "transfer",
          attributes: [attr("recipient", recipient.bech32), attr("sender", signer.bech32), attr("amount", amount), msgIndex]
        }
      )
    }
    if (p.kind === "ibc_transfer") {
      events.push({
        type: "send_packet",
        attributes: [
          attr("packet_src_port", "transfer"),
          attr("packet_src_channel", "channel-0"),
          attr("packet_sequence", String(seq)),
          msgIndex
        ]
      })
    }
    if (chain.isEvmTx(p)) events.push({ type: "call", attributes: [attr("contract", contractOf(chain, p, nft)), msgIndex] })
    // the logs minievm reads back into the receipt (indexer/utils.go extractLogsAndContractAddr): an EVM tx's, or the ERC-20
    // moves of a cosmos tx (a bank send's k-th coin move is its k-th message's)
    for (const log of p.kind === "bank_send" ? logs.slice(m, m + 1) : logs)
      events.push({
        type: "evm",
        attributes: [attr("log", JSON.stringify({ address: log.address, topics: log.topics, data: log.data })), msgIndex]
      })
  }
  const sequence = Math.floor(seq / 7)
  const failure = chain.failsInAnte(p)
    ? {
        codespace: "sdk",
        code: 32,
        raw_log: `account sequence mismatch, expected ${sequence + 1}, got ${sequence}: incorrect account sequence`
      }
    : p.kind === "evm_call" && chain.isEvm
      ? { codespace: "evm", code: 2, raw_log: "failed to execute message; message index: 0: execution reverted" }
      : {
          codespace: "sdk",
          code: 11,
          raw_log: `out of gas in location: WriteFlat; gasWanted: ${p.gasWanted}, gasUsed: ${p.gasUsed}: out of gas`
        }
  return {
    txhash: chain.txHash(height, index),
    height: String(height),
    codespace: p.failed ? failure.codespace : "",
    code: p.failed ? failure.code : 0,
    data: p.failed ? "" : responseData(typeUrl),
    raw_log: p.failed ? failure.raw_log : "",
    logs: [],
    info: "",
    gas_wanted: String(p.gasWanted),
    gas_used: String(p.gasUsed),
    tx: {
      body: {
        // (a chain with large records: the payload follows what the memo says otherwise)
        memo: ethereum ? ethereumMemo(p) : note + payload,
        messages,
        timeout_height: "0",
        extension_options: [],
        non_critical_extension_options: []
      },
      auth_info: {
        fee: { payer: "", amount: [{ denom: feeDenom, amount: String(p.feeAmount) }], granter: "", gas_limit: String(p.gasWanted) },
        tip: null,
        signer_infos: [
          {
            sequence: String(Math.floor(seq / 7)),
            // minievm's own sign mode for an Ethereum tx, 9999, no name in the SDK's enum: the REST gateway prints it as a number
            mode_info: { single: { mode: ethereum ? 9999 : "SIGN_MODE_DIRECT" } },
            public_key: {
              "@type": chain.isEvm ? "/initia.crypto.v1beta1.ethsecp256k1.PubKey" : "/cosmos.crypto.secp256k1.PubKey",
              key: Buffer.from("02" + sha256Hex(chain.seed, "pk", signer.index), "hex").toString("base64")
            }
          }
        ]
      },
      signatures: [
        Buffer.from(sha256Hex(chain.seedAt(height), "sig", seq) + sha256Hex(chain.seedAt(height), "sig2", seq), "hex").toString("base64")
      ]
    },
    timestamp: rfc3339Nano(chain.headerTimeMs(height), chain.headerExtraNanos(height)),
    // cometbft's JSON encoder writes the nil events of a tx failed in the ante handler as null
    events: chain.failsInAnte(p) ? null : events
  }
}

const contractOf = (chain: Chain, p: TxPlan, nft: ReturnType<Chain["nftEvents"]["get"]>): string =>
  nft ? chain.u.collections[nft.collection].address : p.kind === "evm_create" ? createdAddress(chain, p) : chain.u.contracts[p.contract]

const createdAddress = (chain: Chain, p: TxPlan) => "0x" + sha256Hex(chain.seedAt(p.height), "create", p.height, p.index).slice(0, 40)

const messageJson = (
  chain: Chain,
  p: TxPlan,
  typeUrl: string,
  sender: string,
  recipient: { bech32: string; evm: string; hex: string },
  denom: string,
  nft: ReturnType<Chain["nftEvents"]["get"]>,
  r: Rng
): Record<string, unknown> => {
  switch (p.kind) {
    case "bank_send":
      return { "@type": typeUrl, from_address: sender, to_address: recipient.bech32, amount: [{ denom, amount: p.amount.toString() }] }
    case "ibc_transfer":
      return {
        "@type": typeUrl,
        source_port: "transfer",
        source_channel: "channel-0",
        token: { denom, amount: p.amount.toString() },
        sender,
        receiver: "osmo1" + recipient.hex.slice(0, 38),
        timeout_height: { revision_number: "0", revision_height: "0" },
        timeout_timestamp: String((chain.headerTimeMs(p.height) + 600_000) * 1_000_000),
        memo: ""
      }
    case "evm_create":
      return {
        "@type": typeUrl,
        sender,
        code: "0x6080604052" + sha256Hex(chain.seedAt(p.height), "code", p.height, p.index),
        value: "0",
        access_list: []
      }
    default: {
      const target = contractOf(chain, p, nft)
      const input = nft
        ? "0x" + (nft.kind === "mint" ? "40c10f19" : nft.kind === "burn" ? "42966c68" : "23b872dd") + word(recipient.hex).slice(2)
        : "0xa9059cbb" + word(recipient.hex).slice(2) + word(r.int(1, 1e9).toString(16)).slice(2)
      if (chain.vm === "evm") return { "@type": typeUrl, sender, contract_addr: target, input, value: "0", access_list: [] }
      if (chain.vm === "move")
        return {
          "@type": typeUrl,
          sender,
          module_address: "0x1",
          module_name: nft ? "simple_nft" : "coin",
          function_name: nft ? nft.kind : "transfer",
          type_args: [],
          args: [Buffer.from(recipient.hex, "hex").toString("base64")]
        }
      return {
        "@type": typeUrl,
        sender,
        contract: target,
        msg: nft
          ? { [nft.kind]: { token_id: nft.tokenId, recipient: recipient.bech32 } }
          : { transfer: { recipient: recipient.bech32, amount: "1" } },
        funds: []
      }
    }
  }
}

/** The ERC-20 contract minievm keeps for a denom: an `evm/0x…` denom names it; the others are the devnet's own. */
const erc20Of = (chain: Chain, denom: number): string => {
  const d = chain.u.denoms[denom].denom
  return d.startsWith("evm/") ? d.slice(4).toLowerCase() : "0x" + sha256Hex(chain.seed, "erc20", denom).slice(0, 40)
}
/** the IBC transfer module's escrow account (its ERC-20 balance holds what was sent out) */
const escrowOf = (chain: Chain) => sha256Hex(chain.seed, "escrow").slice(0, 40)

const receiptLogs = (chain: Chain, p: TxPlan, firstLogIndex: number, nft: ReturnType<Chain["nftEvents"]["get"]>) => {
  const logs: Array<{ address: string; topics: Array<string>; data: string; logIndex: number }> = []
  // a cosmos tx's coin moves: one ERC-20 Transfer per coin moved (Chain.cosmosLogCount)
  const coinMoves = chain.cosmosLogCount(p)
  for (let k = 0; k < coinMoves; k++) {
    const to = p.kind === "ibc_transfer" ? escrowOf(chain) : chain.accountOf(p.recipient).hex
    logs.push({
      address: erc20Of(chain, p.denom),
      topics: [TRANSFER_TOPIC, word(chain.accountOf(p.signer).hex), word(to)],
      data: word(p.amount.toString(16)),
      logIndex: firstLogIndex + k
    })
  }
  const r = new Rng(chain.seedAt(p.height), "logs", p.height, p.index)
  for (let k = 0; k < p.logCount; k++) {
    if (nft) {
      const from = nft.kind === "mint" ? "0" : chain.accountOf(nft.from).hex
      const to = nft.kind === "burn" ? "0" : chain.accountOf(nft.to).hex
      // minievm's ERC-721 id of a cosmos token (x/evm/types/collection.go TokenIdToBigInt): the decimal id itself, or, in a class
      // bridged over IBC, the sha256 of the id (any text there) as a uint256: this devnet's collections with an origin or text ids
      const info = chain.u.collections[nft.collection]
      const bridged = info.originName !== "" || info.tokenPrefix !== ""
      const idNum = bridged ? BigInt(`0x${sha256Hex(nft.tokenId)}`) : BigInt(nft.tokenId)
      logs.push({
        address: info.address,
        topics: [TRANSFER_TOPIC, word(from), word(to), word(idNum.toString(16))],
        data: "0x",
        logIndex: firstLogIndex + k
      })
    } else {
      const from = chain.accountOf(p.signer).hex
      const to = chain.accountOf(r.int(0, chain.u.accounts.length - 1)).hex
      logs.push({
        address: chain.u.contracts[p.contract],
        topics: [TRANSFER_TOPIC, word(from), word(to)],
        data: word(BigInt(r.int(1, 1e9)).toString(16) + "000000000"),
        logIndex: firstLogIndex + k
      })
    }
  }
  return logs
}

const ZERO_ADDRESS = "0x" + "0".repeat(40)

/**
 * EVM receipts of one block, in block order, as eth_getBlockReceipts returns them (minievm
 * `jsonrpc/backend/tx.go` `marshalReceipt`) and Rollytics re-marshals them (`types/tx.go` `EvmTx`).
 * `transactionIndex` counts the block's receipts from 1 (minievm `indexer/abci.go`: `txIndex++`
 * before use). Logs are numbered per block, or per tx on a chain built with `logIndex: "per-tx"`.
 * A successful cosmos tx that emitted EVM logs gets minievm's synthetic receipt
 * (`indexer/utils.go` `extractEthTxInfo`): its legacy tx has no signature, so `from` is what
 * failed sender recovery leaves, the zero address; `to` nil prints as "" once re-marshalled into
 * Rollytics' string field; type 0, gas price 0, its gasUsed the cosmos tx's.
 */
export const evmReceiptsAt = (chain: Chain, height: number) => {
  const blockHash = "0x" + chain.blockHash(height).toLowerCase()
  let cumulativeGas = 0
  let logIndex = 0
  return chain.evmTxsAt(height).map(({ plan: p, evmSeq, traceSeqStart }, position) => {
    const seq = chain.txSeqBefore(height) + p.index + 1
    const nft = chain.nftEvents.get(seq)
    const synthetic = !chain.isEvmTx(p)
    const hash = chain.receiptHash(p)
    const txIndex = hexQty(position + 1)
    cumulativeGas += p.gasUsed
    if (chain.logIndex === "per-tx") logIndex = 0
    const logs = receiptLogs(chain, p, logIndex, nft).map((l) => ({
      address: l.address,
      topics: l.topics,
      data: l.data,
      blockNumber: hexQty(height),
      transactionHash: hash,
      transactionIndex: txIndex,
      blockHash,
      logIndex: hexQty(l.logIndex),
      removed: false
    }))
    logIndex += logs.length
    const signer = chain.accountOf(chain.signerOf(p, seq))
    const receipt = {
      blockHash,
      blockNumber: hexQty(height),
      contractAddress: p.kind === "evm_create" && !p.failed ? createdAddress(chain, p) : null,
      cumulativeGasUsed: hexQty(cumulativeGas),
      effectiveGasPrice: synthetic ? "0x0" : hexQty(new Rng(chain.seedAt(height), "gp", height).int(0, 3) * 1_000_000_000),
      from: synthetic ? ZERO_ADDRESS : signer.evm,
      gasUsed: hexQty(p.gasUsed),
      logs,
      logsBloom: ZERO_BLOOM,
      status: p.failed ? "0x0" : "0x1",
      to: p.kind === "evm_create" || synthetic ? "" : contractOf(chain, p, nft),
      transactionHash: hash,
      transactionIndex: txIndex,
      type: synthetic || p.index % 3 === 0 ? "0x0" : "0x2"
    }
    // the indexer's evm_tx_accounts: the receipt's `from` (the zero account on a synthetic one) and the addresses its logs name
    const accounts = synthetic
      ? [ZERO_ADDRESS.slice(2), signer.hex, p.kind === "ibc_transfer" ? escrowOf(chain) : chain.accountOf(p.recipient).hex]
      : [signer.hex, ...(nft ? [chain.accountOf(nft.to).hex] : [])]
    return { receipt, plan: p, evmSeq, traceSeqStart, synthetic, accounts }
  })
}

const CALL_TYPES = ["CALL", "STATICCALL", "DELEGATECALL", "CALL", "CREATE"] as const

/** Internal txs (call trace, DFS pre-order) of one block, with their internal sequences. */
export const internalTxsAt = (chain: Chain, height: number) => {
  const out: Array<{ seq: number; row: Record<string, unknown>; from: string; to: string }> = []
  for (const { receipt, plan: p, traceSeqStart } of evmReceiptsAt(chain, height)) {
    // synthetic receipts, and every tx of a height whose trace failed, have none
    if (chain.tracedSize(p) === 0) continue
    const r = new Rng(chain.seedAt(height), "trace", height, p.index)
    const parents: Array<number> = [-1]
    const addrs: Array<string> = [receipt.to || (receipt.contractAddress ?? "")]
    let gas = p.gasWanted
    for (let k = 0; k < p.traceSize; k++) {
      const parent = k === 0 ? -1 : r.int(0, k - 1)
      if (k > 0) parents.push(parent)
      const type = k === 0 ? (p.kind === "evm_create" ? "CREATE" : "CALL") : CALL_TYPES[r.int(0, CALL_TYPES.length - 1)]
      const from = k === 0 ? receipt.from : addrs[parent]
      const to = k === 0 ? addrs[0] : "0x" + sha256Hex(chain.seedAt(height), "callee", height, p.index, k).slice(0, 40)
      if (k > 0) addrs.push(to)
      gas = Math.max(2300, Math.floor(gas * (0.3 + r.next() * 0.6)))
      out.push({
        seq: traceSeqStart + k,
        from,
        to,
        row: {
          height,
          hash: receipt.transactionHash,
          parent_index: parent,
          index: k,
          type,
          from,
          to,
          input: "0x" + sha256Hex(chain.seedAt(height), "input", height, p.index, k).slice(0, 8 + 64 * r.int(0, 2)),
          output: k === 0 ? "0x" : type === "STATICCALL" ? word(r.int(0, 1e9).toString(16)) : "0x",
          value: type === "STATICCALL" || type === "DELEGATECALL" ? "0x" : hexBytes(r.chance(0.7) ? 0 : r.int(1, 1e9) * 1_000_000_000),
          gas: hexQty(gas),
          gasUsed: hexQty(Math.floor(gas * (0.1 + r.next() * 0.8)))
        }
      })
    }
  }
  return out
}

export const collectionJson = (chain: Chain, c: number) => {
  const info = chain.u.collections[c]
  const ms = chain.headerTimeMs(info.createdAt)
  return {
    object_addr: info.address,
    collection: {
      creator: info.creator.bech32,
      name: info.name,
      origin_name: info.originName,
      nfts: { handle: "", length: chain.liveTokensOf(c).length }
    },
    height: info.createdAt,
    // Postgres keeps microseconds
    timestamp: rfc3339Nano(Math.floor(ms), Math.floor(chain.headerExtraNanos(info.createdAt) / 1000) * 1000)
  }
}

export const tokenJson = (chain: Chain, t: NftToken) => {
  const info = chain.u.collections[t.collection]
  return {
    collection_addr: info.address,
    collection_name: info.name,
    collection_origin_name: info.originName,
    object_addr: chain.vm === "move" ? "0x" + sha256Hex(chain.seed, "nftobj", t.collection, t.tokenId).slice(0, 64) : "",
    owner: chain.accountOf(t.owner).bech32,
    nft: { token_id: t.tokenId, uri: info.uriBase + encodeURIComponent(t.tokenId) + ".json" },
    height: t.height,
    timestamp: rfc3339Nano(chain.headerTimeMs(t.height), Math.floor(chain.headerExtraNanos(t.height) / 1000) * 1000)
  }
}

/** Accounts a tx touches (the indexer's tx_accounts edges) and whether each signed. */
export const txAccounts = (chain: Chain, height: number, index: number): Array<{ hex: string; signer: boolean }> => {
  const p = chain.plan(height, index)
  const seq = chain.txSeqBefore(height) + index + 1
  const nft = chain.nftEvents.get(seq)
  const signer = chain.signerOf(p, seq)
  const out = [{ hex: chain.accountOf(signer).hex, signer: true }]
  const other = nft ? nft.to : p.kind === "bank_send" || p.kind === "evm_call" ? p.recipient : -1
  if (other >= 0 && other !== signer) out.push({ hex: chain.accountOf(other).hex, signer: false })
  return out
}
