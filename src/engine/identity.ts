/**
 * Which chain a lake holds. Before a run writes anything, the lake's chain id must be the
 * source's, and the newest block the lake anchored (height and hash) that the source still
 * serves must have the same hash there: a devnet reset with another seed, or another network
 * under the same chain id, has other hashes. A run then anchors the source's tip, so a later run
 * finds an anchor even on an indexer that prunes old heights. A source whose tip is below the
 * lake's highest anchor is refused: the lake holds history that source does not (yet) have.
 */
import { Context, Data, Effect } from "effect"
import { Checkpoints } from "../lake/Checkpoints.js"
import { IDENTITY_FILE } from "../lake/manifest.js"
import { ParquetSink, sqlString } from "../lake/ParquetSink.js"
import { Source, type SourceFailure, type SourceStatus } from "./Source.js"

export class LakeIdentityError extends Data.TaggedError("LakeIdentityError")<{ readonly message: string }> {}

/**
 * A lake holding data but no identity (an older lake, or one whose `_lake.json` was lost) names no
 * chain: it is refused, unless the user adopts it, and then only if its newest committed block
 * is this source's (chain id and hash); a lake without blocks is adopted on the user's word.
 */
const adopt = (status: SourceStatus, datasets: ReadonlyArray<string>, adopting: boolean, notice: (m: string) => void) =>
  Effect.gen(function* () {
    const source = yield* Source
    const checkpoints = yield* Checkpoints
    const sink = yield* ParquetSink
    const held: Array<string> = []
    for (const d of datasets) if (((yield* checkpoints.get(d))?.files.length ?? 0) > 0) held.push(d)
    if (held.length === 0) return
    if (!adopting)
      return yield* new LakeIdentityError({
        message: `${checkpoints.root} holds ${held.join(", ")} but no ${IDENTITY_FILE} naming its chain (a lake of an older chain-lake, or its identity file was lost): --adopt-lake checks its newest block against this indexer and adopts it; or export into another --out`
      })
    const newest = held.includes("blocks")
      ? (yield* checkpoints.withCommittedFiles("blocks", (paths) => sink.query(`SELECT height, hash, chain_id FROM read_parquet([${paths.map(sqlString).join(", ")}]) ORDER BY height DESC LIMIT 1`)))
          .map((b) => ({ height: Number(b.height), hash: String(b.hash), chainId: String(b.chain_id) }))
          .sort((x, y) => y.height - x.height)[0]
      : undefined
    if (!newest) return notice(`${checkpoints.root}: adopted for chain ${status.chainId} on your word (it holds no blocks to check against the indexer)`)
    const hash = newest.height <= status.tip ? yield* source.blockHash(newest.height) : undefined
    if (newest.chainId !== status.chainId || hash !== newest.hash)
      return yield* new LakeIdentityError({
        message: `${checkpoints.root} cannot be adopted for chain ${status.chainId}: its newest block ${newest.height} is ${newest.hash} of chain ${newest.chainId}, and this indexer has ${hash ?? "no such block"}: export into another --out`
      })
    notice(`${checkpoints.root}: adopted for chain ${status.chainId} (its newest block, ${newest.height}, is this indexer's)`)
  })

/** Checks the lake's chain against the source's, writing nothing; calls `notice` when it cannot tell. */
export const checkIdentity = (status: SourceStatus, notice: (m: string) => void, adoption: { readonly datasets: ReadonlyArray<string>; readonly adopt: boolean } = { datasets: [], adopt: false }) =>
  Effect.gen(function* () {
    const source = yield* Source
    const checkpoints = yield* Checkpoints
    const lake = yield* checkpoints.identity
    if (!lake) yield* adopt(status, adoption.datasets, adoption.adopt, notice)
    else {
      if (lake.chain_id !== status.chainId)
        return yield* new LakeIdentityError({
          message: `${checkpoints.root} holds chain ${lake.chain_id}, but this indexer serves chain ${status.chainId}: export it into another --out`
        })
      // a source behind what the lake anchored is rolled back, re-synced or lagging: which, it cannot tell
      const held = Math.max(0, ...lake.anchors.map((a) => a.height))
      if (status.tip < held)
        return yield* new LakeIdentityError({
          message: `${checkpoints.root} holds chain ${lake.chain_id} to height ${held}, but this indexer's tip is ${status.tip}: a rolled-back or re-synced indexer, or one still catching up (rerun once its tip passes ${held}); nothing was written`
        })
      let checked = false
      for (const anchor of [...lake.anchors].sort((a, b) => b.height - a.height)) {
        if (anchor.height > status.tip) continue
        const hash = yield* source.blockHash(anchor.height)
        if (hash === undefined) continue
        if (hash !== anchor.hash)
          return yield* new LakeIdentityError({
            message: `${checkpoints.root} holds another history of chain ${lake.chain_id}: block ${anchor.height} is ${anchor.hash} there and ${hash} on this indexer (a reset chain, or another network under the same id): export it into another --out`
          })
        checked = true
        break
      }
      if (!checked) notice(`could not check that ${checkpoints.root} holds this chain's history: the indexer serves none of the heights it anchored`)
    }
  })

/**
 * Records the source's chain in the lake, anchored at its tip: done by a run about to write.
 * Returns the anchor (undefined where the source does not serve its tip block), which the run's
 * commits check again (historyGuard).
 */
export const anchorIdentity = (status: SourceStatus) =>
  Effect.gen(function* () {
    const source = yield* Source
    const checkpoints = yield* Checkpoints
    const known = (yield* checkpoints.identity)?.anchors.find((a) => a.height === status.tip)
    // a rerun at the same tip: checkIdentity has just verified that anchor
    if (known) return known
    const tipHash = yield* source.blockHash(status.tip)
    if (tipHash === undefined) return undefined
    const anchor = { height: status.tip, hash: tipHash }
    yield* checkpoints.recordIdentity(status.chainId, anchor)
    return anchor
  })

/** A check every commit of a run makes first: the source still serves the history the run started on. */
export class HistoryGuard extends Context.Tag("chain-lake/HistoryGuard")<HistoryGuard, { readonly check: Effect.Effect<void, LakeIdentityError | SourceFailure> }>() {}

/**
 * The guard of a run anchored at `anchor`: the source must still give the anchored block its hash.
 * A source that changes history under a run (an indexer re-synced, a load balancer moving to
 * another deployment, a reset devnet) fails the run at its next commit, so nothing read after
 * the change is committed; what was committed before it is of the history the lake holds.
 */
export const historyGuard = (anchor: { readonly height: number; readonly hash: string }, root: string) =>
  Effect.map(Source, (source) => ({
    check: Effect.flatMap(source.blockHash(anchor.height), (hash) =>
      hash === anchor.hash
        ? Effect.void
        : Effect.fail(
            new LakeIdentityError({
              message: `the indexer's history changed during the run: block ${anchor.height} was ${anchor.hash} when it started and is ${hash ?? "gone"} now (a re-synced or reset indexer, or a load balancer moving between deployments); nothing read after the change was committed to ${root}: rerun once the indexer is stable`
            })
          )
    )
  }))
