/**
 * The list endpoints append-only datasets read. A source may feed several datasets (EVM receipts
 * feed both evm_txs and evm_logs); the engine fetches it once per run.
 * Hot-path record checks are compiled from the client's Effect Schemas, with the nested JSON the
 * datasets store verbatim (`tx`, `events`, `logs`) checked for shape only.
 */
import { Schema } from "effect"
import { compileValidator } from "../schema/fastValidate.js"
import type { AppendList } from "../engine/Dataset.js"
import type { ListRef } from "../engine/Source.js"
import { INDEXER, listRef } from "../indexer/endpoints.js"
import * as S from "../indexer/schemas.js"
import { keccak256Hex } from "../evm/keccak.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const blocksList: AppendList<S.Block> = {
  id: "blocks",
  ...listRef(INDEXER.blocks),
  unit: "height",
  watermark: "height",
  validate: compileValidator(S.Block),
  heightOf: (b: S.Block) => Number(b.height),
  identityOf: (b: S.Block) => b.height,
  chainIdOf: (b: S.Block) => b.chain_id
}

export const txsList: AppendList<S.Tx> = {
  id: "txs",
  ...listRef(INDEXER.txs),
  unit: "position",
  watermark: "height",
  validate: compileValidator(Schema.Struct({ ...S.Tx.fields, tx: JsonObject, events: Schema.NullOr(Schema.Array(Schema.Unknown)) })),
  heightOf: (t: S.Tx) => Number(t.height),
  identityOf: (t: S.Tx) => t.txhash,
  countedBy: { list: blocksList, count: (b: S.Block) => Number(b.tx_count) }
}

export const evmTxsList: AppendList<S.EvmTx> = {
  id: "evm-txs",
  ...listRef(INDEXER.evmTxs),
  unit: "position",
  watermark: "height",
  validate: compileValidator(S.EvmTx),
  heightOf: (t: S.EvmTx) => Number.parseInt(t.blockNumber, 16),
  identityOf: (t: S.EvmTx) => t.transactionHash,
  // a receipt minievm built for a cosmos tx names it only through its hash: the block's cosmos txs are read to find it
  cosmosTx: {
    needed: (t: S.EvmTx) => standsForCosmosTx(t),
    of: (t: S.EvmTx, hashes) => syntheticLinks(hashes).get(t.transactionHash.toLowerCase())
  },
  countedBy: { list: txsList, count: (t: S.Tx) => (isEthereumTx(t) || emittedEvmLogs(t) ? 1 : 0) }
}

/**
 * Whether a cosmos tx has an EVM receipt for certain: minievm gives one to every Ethereum tx
 * (isEthereumTx), failed or not, and a synthetic one to every other successful tx that emitted
 * EVM logs, none to a failed one (`indexer/utils.go` `extractEthTxInfo`: logs are the result's
 * "evm" events' "log" attributes).
 */
export const emittedEvmLogs = (t: Pick<S.Tx, "code" | "events">): boolean =>
  t.code === 0 && (t.events ?? []).some((e) => e.type === "evm" && (e.attributes ?? []).some((a) => a.key === "log"))

/** the memo of a cosmos tx that carries an Ethereum tx: its fee fields, and nothing else (minievm `x/evm/types/txutils.go` txMetadata) */
const ETH_MEMO_KEYS = new Set(["type", "gas_fee_cap", "gas_tip_cap", "gas_limit"])
const ETH_TX_TYPES = new Set([0, 1, 2, 4])
/** sign modes of cosmos signatures: a signer in one of them signed no Ethereum tx */
const COSMOS_SIGN_MODE = /^SIGN_MODE_(DIRECT|DIRECT_AUX|TEXTUAL|LEGACY_AMINO_JSON|EIP_191|UNSPECIFIED)$/

/**
 * Whether a cosmos tx carries an Ethereum tx, as minievm's ConvertCosmosTxToEthereumTx tells
 * (`x/evm/types/txutils.go`): one MsgCall or MsgCreate, a memo that is exactly the Ethereum tx's
 * type and fee caps (JSON numbers), one signature, not in a cosmos sign mode. minievm gives such a
 * tx an EVM receipt whatever its result (a revert too), logs or none. (The account_activity view
 * tells them in SQL by the message and the memo's fee caps alone.)
 */
export const isEthereumTx = (t: Pick<S.Tx, "tx">): boolean => {
  const { body, auth_info, signatures } = t.tx as {
    body?: { messages?: ReadonlyArray<{ "@type"?: unknown }>; memo?: unknown }
    auth_info?: { signer_infos?: ReadonlyArray<{ mode_info?: { single?: { mode?: unknown } } }> }
    signatures?: ReadonlyArray<unknown>
  }
  const messages = body?.messages ?? []
  if (messages.length !== 1 || !["/minievm.evm.v1.MsgCall", "/minievm.evm.v1.MsgCreate"].includes(String(messages[0]["@type"])))
    return false
  if (typeof body?.memo !== "string" || signatures?.length !== 1) return false
  const mode = auth_info?.signer_infos?.[0]?.mode_info?.single?.mode
  if (typeof mode === "string" && COSMOS_SIGN_MODE.test(mode)) return false
  let memo: unknown
  try {
    memo = JSON.parse(body.memo)
  } catch {
    return false
  }
  if (typeof memo !== "object" || memo === null || Array.isArray(memo)) return false
  const fields = memo as Record<string, unknown>
  return (
    Object.keys(fields).every((k) => ETH_MEMO_KEYS.has(k)) &&
    typeof fields.gas_fee_cap === "number" &&
    typeof fields.gas_tip_cap === "number" &&
    ETH_TX_TYPES.has(Number(fields.type ?? 0))
  )
}

const ZERO_ADDRESS = "0x" + "0".repeat(40)

/**
 * Whether an EVM receipt stands for a cosmos tx. minievm gives every successful cosmos tx that
 * emitted EVM logs (a bank MsgSend moves an ERC-20, so it logs a Transfer) a synthetic legacy tx
 * with no signature (V = R = S = 0), `to` nil, input = the cosmos tx hash (minievm
 * `indexer/utils.go` `extractEthTxInfo`). eth_getBlockReceipts prints its `from` as what sender
 * recovery gives for it: recovery fails on R = 0 and the error is dropped, leaving the zero
 * address (`jsonrpc/types/tx.go` `NewRPCTransaction`, `jsonrpc/backend/tx.go` `marshalReceipt`).
 * No real tx is signed by the zero address (no key recovers to it), so `from` = 0x0…0 marks one.
 * Its `to` is "" (Rollytics re-marshals nil into a Go string, `types/tx.go` `EvmTx`) and
 * contractAddress null, like a failed contract creation: `to` alone cannot tell them apart.
 */
export const standsForCosmosTx = (t: Pick<S.EvmTx, "from">): boolean => t.from.toLowerCase() === ZERO_ADDRESS

/**
 * The hash minievm gives the synthetic tx of the cosmos tx `cosmosTxHash` (hex, as the txs list
 * spells it): keccak256 of the legacy tx's RLP [nonce 0, gasPrice 0, gas 0, to nil, value 0,
 * data = the 32 hash bytes, v 0, r 0, s 0] (go-ethereum `LegacyTx`; zero integers and nil encode as
 * 0x80, 32 bytes as 0xa0 + bytes, the 41-byte list as 0xe9 + payload). 0x + lowercase hex.
 */
export const syntheticTxHash = (cosmosTxHash: string): string => {
  const rlp = Buffer.concat([
    Buffer.from([0xe9, 0x80, 0x80, 0x80, 0x80, 0x80, 0xa0]),
    Buffer.from(cosmosTxHash, "hex"),
    Buffer.from([0x80, 0x80, 0x80])
  ])
  return "0x" + keccak256Hex(rlp)
}

/** synthetic tx hash → cosmos tx hash, per block's list of cosmos tx hashes (each list hashed once) */
const links = new WeakMap<ReadonlyArray<string>, ReadonlyMap<string, string>>()
const syntheticLinks = (hashes: ReadonlyArray<string>): ReadonlyMap<string, string> => {
  let link = links.get(hashes)
  if (!link) links.set(hashes, (link = new Map(hashes.filter((h) => /^[0-9a-fA-F]{64}$/.test(h)).map((h) => [syntheticTxHash(h), h]))))
  return link
}

export const internalTxsList: AppendList<S.EvmInternalTx> = {
  id: "evm-internal-txs",
  ...listRef(INDEXER.internalTxs),
  unit: "position",
  // internal txs are indexed by a separate extension that lags the tip
  watermark: "internal_tx_height",
  validate: compileValidator(S.EvmInternalTx),
  heightOf: (t: S.EvmInternalTx) => t.height,
  identityOf: (t: S.EvmInternalTx) => `${t.hash}/${t.index}`,
  // internal_tx_height is the newest height holding internal txs, or the tip where no block after
  // that one has txs (Rollytics status.go getInternalTxHeight): a block with txs between the
  // newest internal tx and it says the list is behind
  countedBy: {
    list: blocksList,
    count: (b: S.Block) => (Number(b.tx_count) > 0 ? 1 : 0),
    says: "holds txs, and internal_tx_height is the newest height holding internal txs (or the tip, past every block with txs)"
  }
}

/** 0x-hex quantity → decimal string (exact at any size); "0x" (no bytes) → null. */
export const hexToDecimal = (hex: string | null | undefined): string | null => (hex && hex.length > 2 ? BigInt(hex).toString() : null)
/** 0x-hex quantity → number (gas, indices: well below 2^53). */
export const hexToNumber = (hex: string): number => Number.parseInt(hex, 16)

/** The NFT collections list (offset keys): the nft_collections snapshot, and the collections whose tokens nft_tokens reads. */
export const collectionsList: ListRef = listRef(INDEXER.collections)
export const validateCollection = compileValidator(S.NftCollection)
