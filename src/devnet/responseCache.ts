/**
 * The real indexer's response cache (Rollytics api/cache/cache.go: Fiber's cache middleware, in
 * memory), kept by method, path and raw query: 1 s for lists and /status, 10 s for one object,
 * avg_blocktime and the rich list. Only answers of 200 are kept (an error returns before the
 * middleware stores). A request with `Cache-Control: no-cache` is answered afresh, and that answer
 * kept; `no-store` passes by the cache. Each answer says `X-Cache: hit` or `miss`.
 */
import type { DevnetReply } from "./http.js"

/** how long an answer at `path` is kept, in ms */
const keptMs = (path: string): number => {
  if (path === "/status") return 1_000
  // /indexer/{family}/v1/{resource}/…
  const [, , , , resource, ...rest] = path.split("/")
  if (resource === "avg_blocktime" || path.startsWith("/indexer/richlist/")) return 10_000
  // one object (a block by height, a tx by hash, a collection by address) or a list (blocks, txs by account or height, …)
  return rest.length === 1 ? 10_000 : 1_000
}

export const responseCache = (now: () => number = Date.now) => {
  const kept = new Map<string, { readonly reply: DevnetReply; readonly until: number }>()
  let answered = 0
  return (
    req: { readonly method: string; readonly url: URL; readonly cacheControl?: string },
    answer: () => DevnetReply
  ): DevnetReply & { readonly cache?: "hit" | "miss" } => {
    const directives = (req.cacheControl ?? "").toLowerCase()
    if (/\bno-store\b/.test(directives)) return answer()
    const key = `${req.method}:${req.url.pathname}${req.url.search}`
    const entry = kept.get(key)
    // (a hit costs the server none of the answer's work)
    if (entry && entry.until > now() && !/\bno-cache\b/.test(directives)) return { ...entry.reply, workMs: 0, cache: "hit" }
    const reply = answer()
    if (reply.status === 200) kept.set(key, { reply, until: now() + keptMs(req.url.pathname) })
    // expired entries go once every thousand answers
    if (++answered % 1_000 === 0) for (const [k, e] of kept) if (e.until <= now()) kept.delete(k)
    return { ...reply, cache: "miss" }
  }
}
