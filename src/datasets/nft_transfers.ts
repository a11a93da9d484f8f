/**
 * nft_transfers — ERC-721 `Transfer(address,address,uint256)` logs of GET /indexer/tx/v1/evm-txs
 * receipts (topic0 0xddf252ad…, exactly four topics: the token id is indexed; removed logs
 * skipped), fetched once with evm_txs. One row per log; mints come from and burns go to the zero
 * address, and `kind` names them. The time is the block's. Partitioned by height_bucket of height.
 *
 * EVM rollups only: Move and Wasm NFTs move by module calls whose events the indexer does not
 * normalise; their ownership is in the nft_tokens snapshots.
 */
import { columnsOf, defineAppend } from "../engine/Dataset.js"
import type { EvmTx } from "../indexer/schemas.js"
import { heightBucket } from "../lake/layout.js"
import { accountBech32, topicAddress } from "./addresses.js"
import { evmTxsList, hexToNumber } from "./lists.js"
import { TRANSFER_TOPIC } from "./token_transfers.js"

type EvmLog = EvmTx["logs"][number]
const ZERO = "0x" + "0".repeat(40)

interface NftTransfer {
  readonly log: EvmLog
  readonly from: string | null
  readonly to: string | null
}
const col = columnsOf<NftTransfer>()

const erc721Transfer = (log: EvmLog): NftTransfer | undefined =>
  !log.removed && log.topics.length === 4 && log.topics[0].toLowerCase() === TRANSFER_TOPIC && /^0x[0-9a-fA-F]{64}$/.test(log.topics[3])
    ? { log, from: topicAddress(log.topics[1]), to: topicAddress(log.topics[2]) }
    : undefined

export const nftTransfers = defineAppend({
  name: "nft_transfers",
  description: "One row per ERC-721 Transfer log: mints, transfers and burns.",
  list: evmTxsList,
  items: (r: EvmTx) => r.logs.flatMap((l) => erc721Transfer(l) ?? []),
  columns: [
    col("height", "BIGINT", "block height", (t) => hexToNumber(t.log.blockNumber)),
    col("timestamp", "TIMESTAMP", "block time (UTC)", (t, context) => context.blockTime(hexToNumber(t.log.blockNumber))),
    col("tx_hash", "VARCHAR", "EVM tx hash", (t) => t.log.transactionHash),
    col(
      "log_index",
      "INTEGER",
      "the log's logIndex (in its block; in its tx on receipts indexed before minievm's March 2026 fix: see evm_logs)",
      (t) => hexToNumber(t.log.logIndex)
    ),
    col("collection_address", "VARCHAR", "the ERC-721 contract, canonical: 0x + lowercase hex", (t) => t.log.address.toLowerCase()),
    col("token_id", "VARCHAR", "token id as exact decimal text (uint256)", (t) => BigInt(t.log.topics[3]).toString()),
    col("kind", "VARCHAR", "'mint' (from the zero address), 'burn' (to it) or 'transfer'", (t) =>
      t.from === ZERO ? "mint" : t.to === ZERO ? "burn" : "transfer"
    ),
    col("from_address", "VARCHAR", "previous owner, canonical: 0x + lowercase hex (zero address on mints)", (t) => t.from),
    col("to_address", "VARCHAR", "new owner, canonical (zero address on burns)", (t) => t.to),
    col("from_bech32", "VARCHAR", "previous owner in bech32 (init1…)", (t) => accountBech32(t.from)),
    col("to_bech32", "VARCHAR", "new owner in bech32 (init1…)", (t) => accountBech32(t.to))
  ],
  // (tx hash, log index): unique under both of minievm's log numberings (see evm_logs)
  key: ["tx_hash", "log_index"],
  sortKey: ["height", "tx_hash", "log_index"],
  partition: heightBucket("height"),
  blockTime: true
})
