/**
 * holders — the rich list: GET /indexer/richlist/v1/{denom} for each denom (offset keys, amount
 * descending), a snapshot at /status rich_list_height (the extension lags the tip). One row per
 * (denom, account); partition snapshot_height=…; deduplicated by (denom, account). EVM chains only.
 * Amounts stay exact: `amount` as the wire's decimal string, `amount_decimal` where it fits.
 */
import { Effect } from "effect"
import type { SnapshotDataset } from "../engine/Dataset.js"
import type { TokenHolder } from "../indexer/schemas.js"

export const holders: SnapshotDataset = {
  kind: "snapshot",
  name: "holders",
  description: "Token holders (rich list) per denom as of the rich list height.",
  endpoints: ["/indexer/richlist/v1/{denom}"],
  watermark: "rich_list_height",
  evmOnly: true,
  needsDenoms: true,
  columns: [
    { name: "denom", type: "VARCHAR", description: "token denomination as asked for" },
    { name: "account", type: "VARCHAR", description: "holder address" },
    { name: "amount", type: "VARCHAR", description: "balance in base units, exact" },
    { name: "amount_decimal", type: "DECIMAL(38,0)", description: "balance as DECIMAL(38,0); NULL beyond 38 digits" },
    { name: "snapshot_time", type: "TIMESTAMP", description: "when the snapshot was read (UTC)" }
  ],
  sortKey: ["denom", "amount_decimal DESC", "account"],
  keyOf: (row) => `${row[0]}\u0000${row[1]}`,
  lists: (ctx) =>
    Effect.succeed(
      ctx.denoms.map((denom) => ({
        label: `holders of ${denom}`,
        fetchPage: (page: Parameters<typeof ctx.indexer.richList>[1]) => ctx.indexer.richList(denom, page).pipe(Effect.map((r) => ({ items: r.holders, pagination: r.pagination }))),
        toRows: (h: TokenHolder) => [[denom, h.account, h.amount ?? null, h.amount ?? null]]
      }))
    )
}
