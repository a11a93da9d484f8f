/**
 * Whether the indexer serves a list, from its answers: only a 404 says a route is not served (the
 * real indexer answers 404 on routes it does not serve: EVM routes on Move/Wasm rollups). A
 * handler that refuses its path parameter (the rich list of a denom it cannot map to an ERC-20
 * contract answers 400 with the lookup's error: rollytics api/handler/richlist/richlist.go) is a
 * route that is served, and its words say what the list asked for lacks.
 */
import { Effect } from "effect"
import type { ListPage, ListRef, PageRequest, SourceFailure } from "../../engine/Source.js"
import { bodyExcerpt } from "../../http/body.js"
import type { IndexerError } from "../../indexer/errors.js"
import type { PageReader } from "./pages.js"

/** The indexer answered 404: a route it does not serve, or a thing (a block) it does not hold. */
export const isNotFound = (e: IndexerError) => e._tag === "IndexerHttpError" && e.status === 404

/** The indexer answered 400: a served route that refused its parameter. */
const isRefused = (e: IndexerError) => e._tag === "IndexerHttpError" && e.status === 400

/** The page `request` asks of `list`, "not served" (a 404) or "refused" (a 400). */
export const probeWith =
  (page: PageReader) =>
  (list: ListRef, request: PageRequest): Effect.Effect<ListPage | "not served" | "refused", IndexerError> =>
    page(list, request).pipe(
      Effect.map((p): ListPage | "not served" | "refused" => p),
      Effect.catchIf(isNotFound, () => Effect.succeed("not served" as const)),
      Effect.catchIf(isRefused, () => Effect.succeed("refused" as const))
    )

/**
 * What a refused parameter lacks, in the lookup's words: minievm's "collections: not found" (no
 * ERC-20 contract for the denom: x/evm ContractAddrByDenom's NotFound) or Rollytics' "empty
 * contract address returned". The handler answers 400 with any error of its lookup, a node timed
 * out or down too ("context deadline exceeded", a gateway's "404 page not found"): no answer.
 */
const LACKS = /collections: not found|empty contract address/i
/** words of a lookup that got no answer, beside which a lack named too (a retried lookup's errors joined) says nothing for certain */
const NO_ANSWER =
  /deadline exceeded|\btime(d)? ?out\b|\bunavailable\b|connection (refused|reset)|\bEOF\b|page not found|\bcancell?ed\b|too many requests/i

/** The indexer's words when `failure` refused a parameter for lack of what it names (a 400 only: a 404 is a route, or a gateway, that is not there). */
export const absentWords = (failure: SourceFailure): string | undefined => {
  const e = failure as IndexerError
  if (e._tag !== "IndexerHttpError" || !isRefused(e)) return undefined
  const words = bodyExcerpt(e.body)
  return LACKS.test(words) && !NO_ANSWER.test(words) ? words : undefined
}
