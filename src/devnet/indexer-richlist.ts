/**
 * The devnet indexer's rich list (/indexer/richlist/v1/{denom}), EVM chains only: a denom's
 * holders by balance, paged by offset.
 */
import type { Chain } from "./chain.js"
import { offsetPage, parsePagination } from "./pagination.js"
import { HttpError, json, type DevnetResponse } from "./indexer-wire.js"

export const richList = (c: Chain, rawDenom: string, q: URLSearchParams): DevnetResponse => {
  // Fiber hands the path parameter over undecoded: the handler turns "%2F" (only) into "/" and
  // lower-cases it, then resolves it to an ERC-20 through minievm (rollytics api/handler/richlist/richlist.go)
  const denom = rawDenom.replaceAll("%2F", "/").toLowerCase()
  const index = c.denomIndex(denom)
  // only EVM resolves the denom to a contract first (and fails on an unknown one); elsewhere an unknown denom has no holders
  // Rollytics' 400 with its querier's error: minievm's REST answer 404 with gRPC NotFound (util/querier/query.go executeHTTPRequest)
  if (index < 0 && c.isEvm)
    throw new HttpError(
      400,
      `[NETWORK_ERROR] network request to http://127.0.0.1:1317/minievm/evm/v1/contracts/by_denom?denom=${encodeURIComponent(denom)} failed: HTTP 404: {"code":5,"message":"collections: not found: key '${denom}' of type github.com/cosmos/gogoproto/types.BytesValue","details":[]}`
    )
  const p = parsePagination(q)
  const holders = index < 0 ? [] : c.holders(index)
  if (!p.reverse) holders.reverse()
  const page = offsetPage(holders, p, p.countTotal ? String(holders.length) : "0")
  // accounts as the VM writes them: 0x hex on EVM, bech32 (init1…) on Move and Wasm
  return json({
    holders: page.rows.map((h) => ({ account: c.isEvm ? h.account.evm : h.account.bech32, amount: h.amount.toString() })),
    pagination: page.pagination
  })
}
