/**
 * nft_collections — GET /indexer/nft/v1/collections (offset keys), a snapshot taken at the tip
 * height. One row per collection; partition snapshot_height=…; deduplicated by object_addr.
 */
import { Effect } from "effect"
import { columnsOf, defineSnapshot } from "../engine/Dataset.js"
import type { NftCollection } from "../indexer/schemas.js"
import { collectionsList, validateCollection } from "./sources.js"

const col = columnsOf<NftCollection>()

export const nftCollections = defineSnapshot({
  name: "nft_collections",
  description: "NFT collections as of the snapshot height.",
  watermark: "height",
  probe: collectionsList,
  columns: [
    col("object_addr", "VARCHAR", "collection address", (c) => c.object_addr),
    col("name", "VARCHAR", "collection.name (API data: may hold any text)", (c) => c.collection.name),
    col("origin_name", "VARCHAR", "L1 name for bridged collections, else ''", (c) => c.collection.origin_name),
    col("creator", "VARCHAR", "collection.creator", (c) => c.collection.creator),
    col("nft_count", "INTEGER", "collection.nfts.length: live tokens", (c) => c.collection.nfts.length),
    col("height", "BIGINT", "creation height", (c) => c.height),
    col("timestamp", "TIMESTAMP", "creation time (UTC)", (c) => c.timestamp)
  ],
  key: ["object_addr"],
  sortKey: ["height", "object_addr"],
  stateHeight: "height",
  // its total is an estimate (reltuples) on the real indexer: completeness comes from the cursor walk
  lists: (_, row) => Effect.succeed([{ label: "collections", list: collectionsList, totalIsEstimate: true, validate: validateCollection, toRows: (c: NftCollection) => [row(c)] }])
})
