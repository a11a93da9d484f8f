/**
 * nft_collections — GET /indexer/nft/v1/collections (offset keys), a snapshot taken at the tip
 * height. One row per collection; partition snapshot_height=…; deduplicated by collection_address.
 */
import { Effect } from "effect"
import { columnsOf, defineSnapshot } from "../engine/Dataset.js"
import type { NftCollection } from "../indexer/schemas.js"
import { accountBech32, canonicalAddress } from "./addresses.js"
import { collectionsList, validateCollection } from "./lists.js"

const col = columnsOf<NftCollection>()

export const nftCollections = defineSnapshot({
  name: "nft_collections",
  description: "NFT collections as of the snapshot height.",
  watermark: "height",
  probe: collectionsList,
  columns: [
    col(
      "collection_address",
      "VARCHAR",
      "the collection (object_addr), canonical: 0x + lowercase hex",
      (c) => canonicalAddress(c.object_addr) ?? c.object_addr
    ),
    col("name", "VARCHAR", "collection.name (API data: may hold any text)", (c) => c.collection.name),
    col("origin_name", "VARCHAR", "L1 name for bridged collections, else NULL", (c) => c.collection.origin_name || null),
    col("creator_address", "VARCHAR", "collection.creator, canonical: 0x + lowercase hex", (c) => canonicalAddress(c.collection.creator)),
    col("creator_bech32", "VARCHAR", "collection.creator in bech32 (init1…)", (c) => accountBech32(canonicalAddress(c.collection.creator))),
    col("nft_count", "INTEGER", "collection.nfts.length: live tokens", (c) => c.collection.nfts.length),
    col("created_height", "BIGINT", "the height it was created at", (c) => c.height),
    col("created_at", "TIMESTAMP", "the time it was created (UTC)", (c) => c.timestamp)
  ],
  key: ["collection_address"],
  sortKey: ["created_height", "collection_address"],
  stateHeight: "created_height",
  // its total is an estimate (reltuples) on the real indexer: completeness comes from the cursor walk
  lists: (_, row) =>
    Effect.succeed([
      {
        label: "collections",
        list: collectionsList,
        totalIsEstimate: true,
        validate: validateCollection,
        toRows: (c: NftCollection) => [row(c)]
      }
    ])
})
