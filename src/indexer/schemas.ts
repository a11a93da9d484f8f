/**
 * Effect Schemas of every indexer API response, with the wire types of the real indexer:
 * heights, gas and amounts are decimal strings on blocks and cosmos txs, integers on /status,
 * NFT and internal-tx rows, and 0x-hex quantities on EVM receipts. `total` is a string and
 * may be "-1" (count timed out). Nullable where the server prints null.
 *
 * Written from the API contract and the reference notes, independently of src/devnet.
 */
import { Schema } from "effect"

/** A base-10 integer carried as a string (may exceed 2^53; never parsed to a double); negative only where the API says so (`total`: "-1"). */
export const DecimalString = Schema.String.pipe(Schema.pattern(/^-?[0-9]+$/), Schema.brand("DecimalString"))
/** A count, height or gas amount carried as a string: never negative ("-1" transactions in a block was stored as -1). */
export const UintString = Schema.String.pipe(Schema.pattern(/^[0-9]+$/), Schema.brand("UintString"))
/** A 0x-hex quantity as EVM JSON-RPC prints it. */
export const HexQuantity = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]+$/))
/** RFC3339 timestamp (second or nanosecond precision). */
export const Rfc3339 = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/))

export const Pagination = Schema.Struct({
  previous_key: Schema.NullOr(Schema.String),
  next_key: Schema.NullOr(Schema.String),
  /** exact count, MAX(sequence), latest height or an estimate depending on the endpoint; "-1" = unknown */
  total: DecimalString
})
export type Pagination = typeof Pagination.Type

export const Status = Schema.Struct({
  version: Schema.String,
  commit_hash: Schema.String,
  chain_id: Schema.String,
  height: Schema.NonNegativeInt,
  // omitempty on the server: absent when zero or not enabled
  internal_tx_height: Schema.optional(Schema.NonNegativeInt),
  rich_list_height: Schema.optional(Schema.NonNegativeInt),
  evm_ret_cleanup_height: Schema.optional(Schema.NonNegativeInt),
  // -1 while the cleanup has never run
  tx_account_cleanup_sequence: Schema.optional(Schema.Int),
  tx_account_cleanup_deleted: Schema.optional(Schema.Int),
  tx_account_cleanup_inserted: Schema.optional(Schema.Int)
})
export type Status = typeof Status.Type

export const AvgBlockTime = Schema.Struct({ avg_block_time: Schema.Number })

/**
 * An amount in base units; an empty string (seen for unpriced or missing values) decodes as absent.
 * A rich-list balance may be negative (the devnet serves such balances, and an indexer that derives
 * balances from the transfers it has seen can too), so a sign is not taken for a corrupt record.
 */
export const Amount = Schema.transform(Schema.String.pipe(Schema.pattern(/^(-?[0-9]+)?$/)), Schema.UndefinedOr(Schema.String), {
  strict: true,
  decode: (s) => (s === "" ? undefined : s),
  encode: (s) => s ?? ""
})

export const Coin = Schema.Struct({ denom: Schema.String, amount: Amount })

export const Block = Schema.Struct({
  chain_id: Schema.String,
  height: UintString,
  hash: Schema.String,
  /** milliseconds since the previous block; "0" for the first indexed block */
  block_time: UintString,
  timestamp: Rfc3339,
  gas_used: UintString,
  gas_wanted: UintString,
  tx_count: UintString,
  total_fee: Schema.Array(Coin),
  proposer: Schema.Struct({ moniker: Schema.String, identity: Schema.String, operator_address: Schema.String })
})
export type Block = typeof Block.Type
export const BlocksResponse = Schema.Struct({ blocks: Schema.Array(Block), pagination: Pagination })
export const BlockResponse = Schema.Struct({ block: Block })

export const Event = Schema.Struct({
  type: Schema.String,
  attributes: Schema.optional(
    Schema.Array(Schema.Struct({ key: Schema.String, value: Schema.optional(Schema.String), index: Schema.optional(Schema.Boolean) }))
  )
})
const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const Tx = Schema.Struct({
  txhash: Schema.String,
  height: UintString,
  codespace: Schema.String,
  code: Schema.Int,
  data: Schema.String,
  raw_log: Schema.String,
  logs: Schema.Array(Schema.Unknown),
  info: Schema.String,
  gas_wanted: UintString,
  gas_used: UintString,
  /** {body, auth_info, signatures}; no top-level "@type" */
  tx: Schema.Struct({ body: JsonObject, auth_info: JsonObject, signatures: Schema.Array(Schema.String) }),
  timestamp: Rfc3339,
  /** null for a tx result without events: the indexer stores them with cometbft's JSON encoder, which writes a nil list so (rollytics indexer/collector/tx/collect.go) */
  events: Schema.NullOr(Schema.Array(Event))
})
export type Tx = typeof Tx.Type
export const TxsResponse = Schema.Struct({ txs: Schema.Array(Tx), pagination: Pagination })
export const TxResponse = Schema.Struct({ tx: Tx })

export const EvmLog = Schema.Struct({
  address: Schema.String,
  topics: Schema.Array(Schema.String),
  data: Schema.String,
  blockNumber: HexQuantity,
  transactionHash: Schema.String,
  transactionIndex: HexQuantity,
  blockHash: Schema.String,
  logIndex: HexQuantity,
  removed: Schema.Boolean
})
/** An EVM receipt (eth_getBlockReceipts); camelCase on the wire. */
export const EvmTx = Schema.Struct({
  blockHash: Schema.String,
  blockNumber: HexQuantity,
  contractAddress: Schema.NullOr(Schema.String),
  cumulativeGasUsed: HexQuantity,
  effectiveGasPrice: HexQuantity,
  from: Schema.String,
  gasUsed: HexQuantity,
  logs: Schema.Array(EvmLog),
  logsBloom: Schema.String,
  status: HexQuantity,
  /** "" on contract creation */
  to: Schema.String,
  transactionHash: Schema.String,
  transactionIndex: HexQuantity,
  type: HexQuantity
})
export type EvmTx = typeof EvmTx.Type
export const EvmTxsResponse = Schema.Struct({ txs: Schema.Array(EvmTx), pagination: Pagination })
export const EvmTxResponse = Schema.Struct({ tx: EvmTx })

export const EvmInternalTx = Schema.Struct({
  height: Schema.NonNegativeInt,
  hash: Schema.String,
  /** -1 for the top-level call */
  parent_index: Schema.Int,
  /** DFS pre-order within the tx */
  index: Schema.NonNegativeInt,
  type: Schema.String,
  from: Schema.String,
  to: Schema.String,
  input: Schema.String,
  output: Schema.String,
  value: Schema.String,
  gas: Schema.String,
  gasUsed: Schema.String
})
export type EvmInternalTx = typeof EvmInternalTx.Type
export const EvmInternalTxsResponse = Schema.Struct({ internal_txs: Schema.Array(EvmInternalTx), pagination: Pagination })

export const NftCollection = Schema.Struct({
  object_addr: Schema.String,
  collection: Schema.Struct({
    creator: Schema.String,
    name: Schema.String,
    origin_name: Schema.String,
    nfts: Schema.Struct({ handle: Schema.String, length: Schema.NonNegativeInt })
  }),
  /** creation height */
  height: Schema.NonNegativeInt,
  timestamp: Rfc3339
})
export type NftCollection = typeof NftCollection.Type
export const CollectionsResponse = Schema.Struct({ collections: Schema.Array(NftCollection), pagination: Pagination })
export const CollectionResponse = Schema.Struct({ collection: NftCollection })

export const Nft = Schema.Struct({
  collection_addr: Schema.String,
  collection_name: Schema.String,
  collection_origin_name: Schema.String,
  /** Move only, else "" */
  object_addr: Schema.String,
  owner: Schema.String,
  nft: Schema.Struct({ token_id: Schema.String, uri: Schema.String }),
  /** last mint or transfer */
  height: Schema.NonNegativeInt,
  timestamp: Rfc3339
})
export type Nft = typeof Nft.Type
export const NftsResponse = Schema.Struct({ tokens: Schema.Array(Nft), pagination: Pagination })

export const TokenHolder = Schema.Struct({ account: Schema.String, amount: Amount })
export type TokenHolder = typeof TokenHolder.Type
export const TokenHoldersResponse = Schema.Struct({ holders: Schema.Array(TokenHolder), pagination: Pagination })
