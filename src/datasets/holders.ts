/**
 * holders — the rich list: GET /indexer/richlist/v1/{denom} for each denom (offset keys, amount
 * descending), a snapshot at /status rich_list_height (the extension lags the tip). One row per
 * (denom, account_address); partition snapshot_height=…; deduplicated by (denom, account_address). Denoms: the
 * export's `denoms` parameter, else those in the committed blocks' total_fee. Amounts stay exact:
 * `amount` as DECIMAL(38,0) where it fits, `amount_text` the wire's exact decimal string.
 */
import { Effect } from "effect"
import { columnsOf, defineSnapshot } from "../engine/Dataset.js"
import type { ListRef } from "../engine/Source.js"
import { INDEXER, listRef } from "../indexer/endpoints.js"
import type { TokenHolder } from "../indexer/schemas.js"
import * as S from "../indexer/schemas.js"
import { compileValidator } from "../schema/fastValidate.js"
import { accountBech32, canonicalAddress } from "./addresses.js"

interface Holding {
  readonly denom: string
  readonly holder: TokenHolder
}
const col = columnsOf<Holding>()
const richList = (denom: string): ListRef => listRef(INDEXER.richList, denom)
const validate = compileValidator(S.TokenHolder)
/** "" is how the wire says "no amount" */
const amountOf = (h: Holding) => (h.holder.amount === undefined || h.holder.amount === "" ? null : h.holder.amount)

export const holders = defineSnapshot({
  name: "holders",
  description: "Token holders (rich list) per denom as of the rich list height.",
  watermark: "rich_list_height",
  // any denom: an indexer that does not serve the rich list answers 404 for the route itself, while
  // the real one answers 400 for a denom it cannot map to an ERC-20 contract (EVM), which still says the route is served
  probe: richList("uinit"),
  // the default denoms are the committed blocks' fee denoms
  after: ["blocks"],
  columns: [
    col("denom", "VARCHAR", "token denomination as asked for", (h) => h.denom),
    col("account_address", "VARCHAR", "holder, canonical: 0x + lowercase hex of the account bytes (joins across VMs)", (h) =>
      canonicalAddress(h.holder.account)
    ),
    col("account_bech32", "VARCHAR", "holder in bech32 (init1…)", (h) => accountBech32(canonicalAddress(h.holder.account))),
    col("amount", "DECIMAL(38,0)", "balance in base units; NULL beyond 38 digits (amount_text is always exact)", amountOf),
    col("amount_text", "VARCHAR", "balance in base units as exact decimal text", amountOf)
  ],
  key: ["denom", "account_address"],
  sortKey: ["denom", "amount DESC", "account_address"],
  lists: (input, row) =>
    Effect.gen(function* () {
      const given = input.params.denoms ?? []
      const named = given.length > 0
      const denoms = named
        ? given
        : // distinct per batch of files (readCommitted), then across them
          [
            ...new Set(
              (yield* input.readCommitted(
                "blocks",
                `SELECT DISTINCT f.denom AS denom FROM (SELECT unnest(from_json(total_fee, '[{"denom":"VARCHAR","amount":"VARCHAR"}]')) AS f FROM committed)`
              )).map((r) => String(r.denom))
            )
          ].sort()
      if (denoms.length === 0)
        return { skip: "no denoms", hint: "pass --denoms, or export blocks first (their total_fee denoms are the default)" }
      return denoms.map((denom) => ({
        label: `holders of ${denom}`,
        list: richList(denom),
        // largest holders first, as the rich list is read
        reverse: true,
        // on EVM the indexer answers 400 for a denom it cannot map to an ERC-20 contract
        // (rollytics api/handler/richlist/richlist.go): no rich list for it; an error only if the user named it
        whenAbsent: named ? ("fail" as const) : ("empty" as const),
        validate,
        toRows: (holder: TokenHolder) => [row({ denom, holder })]
      }))
    })
})
