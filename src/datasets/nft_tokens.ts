/**
 * nft_tokens — the NFT ownership snapshot: GET /indexer/nft/v1/collections, then
 * GET /indexer/nft/v1/tokens/by_collection/{addr} for each (offset keys, order_by token_id).
 * One row per live token at the tip height; partition snapshot_height=…; deduplicated by
 * (collection_address, token_id), since offset paging over a changing set can repeat rows.
 */
import { Effect } from "effect"
import { columnsOf, defineSnapshot } from "../engine/Dataset.js"
import { INDEXER, listRef } from "../indexer/endpoints.js"
import type { Nft, NftCollection } from "../indexer/schemas.js"
import * as S from "../indexer/schemas.js"
import { compileValidator } from "../schema/fastValidate.js"
import { accountBech32, canonicalAddress } from "./addresses.js"
import { collectionsList, validateCollection } from "./lists.js"

const col = columnsOf<Nft>()
const validate = compileValidator(S.Nft)

export const nftTokens = defineSnapshot({
  name: "nft_tokens",
  description: "NFT ownership: every live token and its owner as of the snapshot height.",
  watermark: "height",
  probe: collectionsList,
  columns: [
    col(
      "collection_address",
      "VARCHAR",
      "the collection, canonical: 0x + lowercase hex",
      (t) => canonicalAddress(t.collection_addr) ?? t.collection_addr
    ),
    col("collection_name", "VARCHAR", "collection name (API data)", (t) => t.collection_name),
    col("collection_origin_name", "VARCHAR", "L1 name for bridged collections, else NULL", (t) => t.collection_origin_name || null),
    col("token_id", "VARCHAR", "nft.token_id", (t) => t.nft.token_id),
    col("uri", "VARCHAR", "nft.uri", (t) => t.nft.uri),
    col("owner_address", "VARCHAR", "current owner, canonical: 0x + lowercase hex of the account bytes", (t) => canonicalAddress(t.owner)),
    col("owner_bech32", "VARCHAR", "current owner in bech32 (init1…)", (t) => accountBech32(canonicalAddress(t.owner))),
    col("object_address", "VARCHAR", "the token's object, canonical: 0x + lowercase hex (Move only, else NULL)", (t) =>
      canonicalAddress(t.object_addr)
    ),
    col("updated_height", "BIGINT", "the height of its last mint or transfer", (t) => t.height),
    col("updated_at", "TIMESTAMP", "the time of its last mint or transfer (UTC)", (t) => t.timestamp)
  ],
  key: ["collection_address", "token_id"],
  sortKey: ["collection_address", "token_id"],
  stateHeight: "updated_height",
  lists: (input, row) =>
    Effect.gen(function* () {
      const collections = (yield* input.readAll(collectionsList, validateCollection)) as ReadonlyArray<NftCollection>
      const addresses = [...new Set(collections.map((c) => c.object_addr))]
      return addresses.map((address) => ({
        label: `tokens of ${address}`,
        list: { ...listRef(INDEXER.tokensByCollection, address), query: { order_by: "token_id" } },
        validate,
        toRows: (t: Nft) => [row(t)]
      }))
    })
})
