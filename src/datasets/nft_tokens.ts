/**
 * nft_tokens — the NFT ownership snapshot: GET /indexer/nft/v1/collections, then
 * GET /indexer/nft/v1/tokens/by_collection/{addr} for each (offset keys, order_by token_id).
 * One row per live token at the tip height; partition snapshot_height=…; deduplicated by
 * (collection_addr, token_id), since offset paging over a changing set can repeat rows.
 */
import { Effect } from "effect"
import type { SnapshotDataset } from "../engine/Dataset.js"
import type { Nft, NftCollection } from "../indexer/schemas.js"

export const nftTokens: SnapshotDataset = {
  kind: "snapshot",
  name: "nft_tokens",
  description: "NFT ownership: every live token and its owner as of the snapshot height.",
  endpoints: ["/indexer/nft/v1/collections", "/indexer/nft/v1/tokens/by_collection/{collection_addr}"],
  watermark: "height",
  evmOnly: false,
  needsDenoms: false,
  columns: [
    { name: "collection_addr", type: "VARCHAR", description: "collection address" },
    { name: "collection_name", type: "VARCHAR", description: "collection name (API data)" },
    { name: "collection_origin_name", type: "VARCHAR", description: "L1 name for bridged collections" },
    { name: "token_id", type: "VARCHAR", description: "nft.token_id" },
    { name: "uri", type: "VARCHAR", description: "nft.uri" },
    { name: "owner", type: "VARCHAR", description: "current owner" },
    { name: "object_addr", type: "VARCHAR", description: "token object (Move only, else '')" },
    { name: "height", type: "BIGINT", description: "height of the last mint or transfer" },
    { name: "timestamp", type: "TIMESTAMP", description: "time of the last mint or transfer (UTC)" },
    { name: "snapshot_time", type: "TIMESTAMP", description: "when the snapshot was read (UTC)" }
  ],
  sortKey: ["collection_addr", "token_id"],
  keyOf: (row) => `${row[0]}\u0000${row[3]}`,
  lists: (ctx) =>
    Effect.gen(function* () {
      const collections: Array<NftCollection> = []
      let key: string | null = null
      do {
        const page: { collections: ReadonlyArray<NftCollection>; pagination: { next_key: string | null } } = yield* ctx.indexer.collections({ key, limit: 1000, reverse: false })
        collections.push(...page.collections)
        key = page.collections.length === 1000 ? page.pagination.next_key : null
      } while (key !== null)
      const unique = [...new Map(collections.map((c) => [c.object_addr, c])).values()]
      return unique.map((c) => ({
        label: `tokens of ${c.object_addr}`,
        fetchPage: (page: Parameters<typeof ctx.indexer.tokensByCollection>[1]) =>
          ctx.indexer.tokensByCollection(c.object_addr, page, { orderBy: "token_id" }).pipe(Effect.map((r) => ({ items: r.tokens, pagination: r.pagination }))),
        toRows: (t: Nft) => [[t.collection_addr, t.collection_name, t.collection_origin_name, t.nft.token_id, t.nft.uri, t.owner, t.object_addr, t.height, t.timestamp]]
      }))
    })
}
