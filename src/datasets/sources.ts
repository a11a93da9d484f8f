/**
 * The list endpoints append-only datasets read. A source may feed several datasets (EVM receipts
 * feed both evm_txs and evm_logs); the engine fetches it once per run.
 * Hot-path record checks are compiled from the client's Effect Schemas, with the nested JSON the
 * datasets store verbatim (`tx`, `events`, `logs`) checked for shape only.
 */
import { Schema } from "effect"
import { compileValidator } from "../schema/fastValidate.js"
import type { AppendSource } from "../engine/Dataset.js"
import type { ListRef } from "../engine/Source.js"
import * as S from "../indexer/schemas.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const blocksSource: AppendSource<S.Block> = {
  id: "blocks",
  endpoint: "blocks",
  path: "/indexer/block/v1/blocks",
  arrayKey: "blocks",
  unit: "height",
  watermark: "height",
  validate: compileValidator(S.Block),
  heightOf: (b: S.Block) => Number(b.height),
  identityOf: (b: S.Block) => b.height,
  chainIdOf: (b: S.Block) => b.chain_id
}

export const txsSource: AppendSource<S.Tx> = {
  id: "txs",
  endpoint: "txs",
  path: "/indexer/tx/v1/txs",
  arrayKey: "txs",
  unit: "position",
  watermark: "height",
  validate: compileValidator(Schema.Struct({ ...S.Tx.fields, tx: JsonObject, events: Schema.NullOr(Schema.Array(Schema.Unknown)) })),
  heightOf: (t: S.Tx) => Number(t.height),
  identityOf: (t: S.Tx) => t.txhash,
}

export const evmTxsSource: AppendSource<S.EvmTx> = {
  id: "evm-txs",
  endpoint: "evm-txs",
  path: "/indexer/tx/v1/evm-txs",
  arrayKey: "txs",
  unit: "position",
  watermark: "height",
  validate: compileValidator(S.EvmTx),
  heightOf: (t: S.EvmTx) => Number.parseInt(t.blockNumber, 16),
  identityOf: (t: S.EvmTx) => t.transactionHash,
}

export const internalTxsSource: AppendSource<S.EvmInternalTx> = {
  id: "evm-internal-txs",
  endpoint: "evm-internal-txs",
  path: "/indexer/tx/v1/evm-internal-txs",
  arrayKey: "internal_txs",
  unit: "position",
  // internal txs are indexed by a separate extension that lags the tip
  watermark: "internal_tx_height",
  validate: compileValidator(S.EvmInternalTx),
  heightOf: (t: S.EvmInternalTx) => t.height,
  identityOf: (t: S.EvmInternalTx) => `${t.hash}/${t.index}`,
}

/** 0x-hex quantity → decimal string (exact at any size); "0x" (no bytes) → null. */
export const hexToDecimal = (hex: string | null | undefined): string | null => (hex && hex.length > 2 ? BigInt(hex).toString() : null)
/** 0x-hex quantity → number (gas, indices: well below 2^53). */
export const hexToNumber = (hex: string): number => Number.parseInt(hex, 16)

/** The NFT collections list (offset keys): the nft_collections snapshot, and the collections whose tokens nft_tokens reads. */
export const collectionsList: ListRef = { endpoint: "collections", path: "/indexer/nft/v1/collections", arrayKey: "collections", keys: "offset" }
export const validateCollection = compileValidator(S.NftCollection)
