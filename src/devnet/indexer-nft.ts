/**
 * The devnet indexer's NFT family (/indexer/nft/v1): collections (all, by account, by name, by
 * address), tokens by account or by collection in token_id or height order, and a token's txs.
 * Collections and tokens page by offset, with the real server's orderings.
 */
import { tokenKey, type Chain } from "./chain.js"
import { arrayList, cursorPage, offsetPage, parsePagination, type PageParams, type SeqList } from "./pagination.js"
import { collectionJson, tokenJson } from "./render.js"
import { txsPage } from "./indexer-txs.js"
import { COLLECTIONS_ANALYZE_LAG } from "./universe.js"
import { HttpError, json, parseAccount, parseCollectionAddr, type DevnetResponse, type EndpointRequest } from "./indexer-wire.js"

export const nft = (
  c: Chain,
  resource: string | undefined,
  { rest, q, filtered }: EndpointRequest,
  notFound: () => Error
): DevnetResponse => {
  const created = c.u.collections.filter((col) => c.collectionCreated(col))
  const collectionsPage = (indices: Array<number>, p: PageParams, total: string) => {
    // ORDER BY height only (no tie-breaker in the real server; ties by address here for determinism)
    let sorted = [...indices].sort((a, b) => {
      const d = c.u.collections[a].createdAt - c.u.collections[b].createdAt
      const byAddr = c.u.collections[a].address < c.u.collections[b].address ? -1 : 1
      return (d !== 0 ? d : byAddr) * (p.reverse ? -1 : 1)
    })
    let params = p
    if (p.key.type === "height") {
      const h = p.key.value
      sorted = sorted.filter((i) => (p.reverse ? c.u.collections[i].createdAt < h : c.u.collections[i].createdAt > h))
      params = { ...p, key: { type: "none" }, offset: 0 }
    }
    const page = offsetPage(sorted, params, total)
    return json({ collections: page.rows.map((i) => collectionJson(c, i)), pagination: page.pagination })
  }
  if (resource === "collections") {
    if (rest.length === 0) {
      const p = parsePagination(q)
      // pg_class.reltuples, as the real indexer counts this list: the count at the last ANALYZE
      // (stale), or -1 for a table never analyzed
      const analyzedAt = c.tip - COLLECTIONS_ANALYZE_LAG
      const estimate = created.filter((col) => col.createdAt <= analyzedAt).length
      return collectionsPage(
        created.map((x) => x.index),
        p,
        p.countTotal ? String(estimate > 0 ? estimate : -1) : "0"
      )
    }
    if (rest[0] === "by_account" && rest.length === 2) {
      const account = parseAccount(rest[1])
      const p = parsePagination(q)
      const owned = created.filter((col) => c.liveTokensOf(col.index).some((t) => c.accountOf(t.owner).hex === account)).map((x) => x.index)
      return collectionsPage(owned, p, filtered(owned.length))
    }
    if (rest[0] === "by_name" && rest.length === 2) {
      // letters, marks and numbers only, lower-cased (rollytics api/handler/nft/cache.go); the needle as Fiber hands it over, undecoded
      const norm = (s: string) => s.replace(/[^\p{L}\p{M}\p{N}]+/gu, "").toLowerCase()
      const needle = norm(rest[1])
      const p = parsePagination(q)
      const matches = created
        .filter((col) => norm(col.name).includes(needle) || (col.originName !== "" && norm(col.originName).includes(needle)))
        .map((x) => x.index)
      return collectionsPage(matches, p, String(matches.length))
    }
    if (rest.length === 1) {
      const addr = parseCollectionAddr(rest[0])
      const col = created.find((x) => x.address === addr)
      if (!col) throw new HttpError(404, "nft collection not found")
      return json({ collection: collectionJson(c, col.index) })
    }
    throw notFound()
  }
  if (resource === "tokens" && rest.length === 2 && (rest[0] === "by_account" || rest[0] === "by_collection")) {
    let tokens: ReturnType<typeof c.liveTokensOf>
    if (rest[0] === "by_account") {
      const account = parseAccount(rest[1])
      const given = q.get("collection_addr")
      const collFilter = given ? parseCollectionAddr(given) : undefined
      tokens = created
        .filter((col) => !collFilter || col.address === collFilter)
        .flatMap((col) => c.liveTokensOf(col.index))
        .filter((t) => c.accountOf(t.owner).hex === account)
    } else {
      const addr = parseCollectionAddr(rest[1])
      const col = created.find((x) => x.address === addr)
      tokens = col ? c.liveTokensOf(col.index) : []
    }
    // as normalizeOrderBy: trimmed and lowercased, empty means token_id
    const givenOrder = q.get("order_by") ?? ""
    const orderBy = givenOrder.trim().toLowerCase() || "token_id"
    if (orderBy !== "token_id" && orderBy !== "height")
      throw new HttpError(400, `invalid order_by value '${givenOrder}', must be one of: token_id, height`)
    const p = parsePagination(q)
    const tokenId = q.get("token_id")
    if (tokenId !== null && tokenId !== "") tokens = tokens.filter((t) => t.tokenId === tokenId)
    const dir = p.reverse ? -1 : 1
    const cmpText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
    tokens.sort((a, b) => {
      const byId = cmpText(a.tokenId, b.tokenId)
      const byHeight = a.height - b.height
      const primary = orderBy === "token_id" ? byId : byHeight
      const secondary = orderBy === "token_id" ? byHeight : byId
      return (primary !== 0 ? primary : secondary !== 0 ? secondary : a.collection - b.collection) * dir
    })
    let params = p
    if (p.key.type === "height_token") {
      const key = p.key
      tokens = tokens.filter((t) => {
        const cmp = t.height !== key.height ? t.height - key.height : cmpText(t.tokenId, key.tokenId)
        return p.reverse ? cmp < 0 : cmp > 0
      })
      params = { ...p, key: { type: "none" }, offset: 0 }
    }
    const page = offsetPage(tokens, params, filtered(tokens.length))
    return json({ tokens: page.rows.map((t) => tokenJson(c, t)), pagination: page.pagination })
  }
  if (resource === "txs" && rest.length === 2) {
    const addr = parseCollectionAddr(rest[0])
    const tokenId = rest[1]
    const col = c.u.collections.find((x) => x.address === addr)
    const token = col ? c.tokens.get(tokenKey(col.index, tokenId)) : undefined
    const p = parsePagination(q)
    const list: SeqList = arrayList(token ? token.txs : [])
    return txsPage(c, cursorPage(list, p, "sequence", filtered(list.length)))
  }
  throw notFound()
}
