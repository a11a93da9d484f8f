/**
 * nft_tokens — the NFT ownership snapshot: GET /indexer/nft/v1/collections, then
 * GET /indexer/nft/v1/tokens/by_collection/{addr} for each (offset keys, order_by token_id).
 * One row per live token at the tip height; partition snapshot_height=…; deduplicated by
 * (collection_addr, token_id), since offset paging over a changing set can repeat rows.
 */
import { Effect } from "effect"
import { columnsOf, defineSnapshot } from "../engine/Dataset.js"
import type { Nft, NftCollection } from "../indexer/schemas.js"
import * as S from "../indexer/schemas.js"
import { compileValidator } from "../schema/fastValidate.js"
import { canonicalAddress } from "./addresses.js"
import { collectionsList, validateCollection } from "./sources.js"

const col = columnsOf<Nft>()
const validate = compileValidator(S.Nft)

export const nftTokens = defineSnapshot({
  name: "nft_tokens",
  description: "NFT ownership: every live token and its owner as of the snapshot height.",
  watermark: "height",
  probe: collectionsList,
  columns: [
    col("collection_addr", "VARCHAR", "collection address", (t) => t.collection_addr),
    col("collection_name", "VARCHAR", "collection name (API data)", (t) => t.collection_name),
    col("collection_origin_name", "VARCHAR", "L1 name for bridged collections", (t) => t.collection_origin_name),
    col("token_id", "VARCHAR", "nft.token_id", (t) => t.nft.token_id),
    col("uri", "VARCHAR", "nft.uri", (t) => t.nft.uri),
    col("owner", "VARCHAR", "current owner", (t) => t.owner),
    col("owner_hex", "VARCHAR", "owner, canonical: 0x + lowercase hex of the account bytes", (t) => canonicalAddress(t.owner)),
    col("object_addr", "VARCHAR", "token object (Move only, else '')", (t) => t.object_addr),
    col("height", "BIGINT", "height of the last mint or transfer", (t) => t.height),
    col("timestamp", "TIMESTAMP", "time of the last mint or transfer (UTC)", (t) => t.timestamp)
  ],
  key: ["collection_addr", "token_id"],
  sortKey: ["collection_addr", "token_id"],
  stateHeight: "height",
  lists: (input, row) =>
    Effect.gen(function* () {
      const collections = (yield* input.readAll(collectionsList, validateCollection)) as ReadonlyArray<NftCollection>
      const addresses = [...new Set(collections.map((c) => c.object_addr))]
      return addresses.map((address) => ({
        label: `tokens of ${address}`,
        list: { endpoint: "tokens/by_collection", path: `/indexer/nft/v1/tokens/by_collection/${encodeURIComponent(address)}`, arrayKey: "tokens", query: { order_by: "token_id" }, keys: "offset" },
        validate,
        toRows: (t: Nft) => [row(t)]
      }))
    })
})
