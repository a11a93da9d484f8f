/**
 * nft_collections — GET /indexer/nft/v1/collections (offset keys), a snapshot taken at the tip
 * height. One row per collection; partition snapshot_height=…; deduplicated by object_addr.
 */
import { Effect } from "effect"
import type { SnapshotDataset } from "../engine/Dataset.js"
import type { NftCollection } from "../indexer/schemas.js"

export const nftCollections: SnapshotDataset = {
  kind: "snapshot",
  name: "nft_collections",
  description: "NFT collections as of the snapshot height.",
  endpoints: ["/indexer/nft/v1/collections"],
  watermark: "height",
  evmOnly: false,
  needsDenoms: false,
  columns: [
    { name: "object_addr", type: "VARCHAR", description: "collection address" },
    { name: "name", type: "VARCHAR", description: "collection.name (API data: may hold any text)" },
    { name: "origin_name", type: "VARCHAR", description: "L1 name for bridged collections, else ''" },
    { name: "creator", type: "VARCHAR", description: "collection.creator" },
    { name: "nft_count", type: "INTEGER", description: "collection.nfts.length: live tokens" },
    { name: "height", type: "BIGINT", description: "creation height" },
    { name: "timestamp", type: "TIMESTAMP", description: "creation time (UTC)" },
    { name: "snapshot_time", type: "TIMESTAMP", description: "when the snapshot was read (UTC)" }
  ],
  sortKey: ["height", "object_addr"],
  keyOf: (row) => String(row[0]),
  lists: (ctx) =>
    Effect.succeed([
      {
        label: "collections",
        fetchPage: (page) => ctx.indexer.collections(page).pipe(Effect.map((r) => ({ items: r.collections, pagination: r.pagination }))),
        toRows: (c: NftCollection) => [[c.object_addr, c.collection.name, c.collection.origin_name, c.collection.creator, c.collection.nfts.length, c.height, c.timestamp]]
      }
    ])
}
