/**
 * What a page's rows read beside their records (RowContext): the block time of each height, for
 * datasets whose records carry a height but no time (EVM receipts), and the cosmos tx hashes of
 * the blocks whose records need them (AppendList.cosmosTx). Asked of the source for the
 * page's heights, in a few requests per page, before the page's rows are made; a record whose
 * cosmos tx is not among its block's fails the page (cosmosTxNotFound).
 */
import { Effect } from "effect"
import { NO_CONTEXT, type AppendDataset, type AppendList, type RowContext } from "./Dataset.js"
import { cosmosTxNotFound } from "./pagingRules.js"
import type { ListPage, SourceFailure, SourceService } from "./Source.js"

/** A row asked for the time of a height its record did not name. */
export class MissingBlockTime {
  constructor(readonly height: number) {}
}

/** The heights of a page's records, and its records that need their block's cosmos txs, with their heights. */
const heightsOf = (list: AppendList, page: ListPage) => {
  const heights = new Set<number>()
  const linking: Array<{ readonly item: unknown; readonly height: number }> = []
  for (const item of page.items) {
    // a record that breaks its schema fails (or is quarantined) when decoded; its height is not asked for
    let h = Number.NaN
    let link = false
    try {
      h = list.heightOf(item)
      link = list.cosmosTx?.needed(item) === true
    } catch {}
    // Stryker disable next-line all: a record with no usable height fails its schema in decodeRecord before any row asks for a time
    if (Number.isSafeInteger(h) && h > 0) {
      heights.add(h)
      if (link) linking.push({ item, height: h })
    }
  }
  return { heights, linking }
}

/** The first of `linking` whose cosmos tx is not among its block's `cosmos` hashes, as cosmosTxNotFound says it; else undefined. */
const unlinked = (
  list: AppendList,
  linking: ReadonlyArray<{ readonly item: unknown; readonly height: number }>,
  cosmos: ReadonlyMap<number, ReadonlyArray<string>>
): string | undefined => {
  for (const { item, height } of linking) {
    const hashes = cosmos.get(height) ?? []
    // (a record that breaks its schema fails, or is quarantined, when decoded)
    try {
      if (list.cosmosTx!.of(item, hashes) === undefined) return cosmosTxNotFound(list.identityOf(item), height, hashes.length)
    } catch {}
  }
  return undefined
}

/** The context of each page of `list` for `targets`, what it reads of other lists in pages of at most `pageSize` rows. */
export const pageContextOf = (
  source: SourceService,
  list: AppendList,
  targets: ReadonlyArray<AppendDataset>,
  pageSize: number
): ((page: ListPage) => Effect.Effect<RowContext, SourceFailure>) => {
  // Stryker disable next-line MethodExpression: every list's datasets agree on blockTime (evm_txs' four carry it, txs' two do not), so some = every here
  const timed = targets.some((d) => d.blockTime)
  // (the datasets of a list that read no link, evm_logs alone, neither ask for it nor are refused for it)
  const linked = list.cosmosTx !== undefined && targets.some((d) => d.cosmosTx)
  if (!timed && !linked) return () => Effect.succeed(NO_CONTEXT)
  return (page) => {
    const { heights, linking } = heightsOf(list, page)
    return Effect.all([
      timed ? source.blockTimes([...heights]) : Effect.succeed(new Map<number, string>()),
      linked && linking.length > 0
        ? source.cosmosTxHashes([...new Set(linking.map((l) => l.height))], pageSize)
        : Effect.succeed(new Map<number, ReadonlyArray<string>>())
    ]).pipe(
      Effect.tap(([, cosmos]) => {
        const problem = linked ? unlinked(list, linking, cosmos) : undefined
        return problem ? Effect.fail(source.untrustedPaging(list, page.key, problem)) : Effect.void
      }),
      Effect.map(([times, cosmos]) => ({
        blockTime: timed
          ? (height: number) => {
              const time = times.get(height)
              // Stryker disable next-line ConditionalExpression: unreachable today (every row's height is its record's, whose time was asked for); a guard for a dataset that breaks that
              if (time === undefined) throw new MissingBlockTime(height)
              return time
            }
          : NO_CONTEXT.blockTime,
        // a block not asked for (its records need no link) has none to give
        cosmosTxHashes: (height: number) => cosmos.get(height) ?? []
      }))
    )
  }
}
