/**
 * Which chain a lake holds. Before a run writes anything, the lake's chain id must be the
 * source's, and the newest block the lake anchored (height and hash) that the source still
 * serves must have the same hash there: a devnet reset with another seed, or another network
 * under the same chain id, has other hashes. A run then anchors the source's tip, so a later run
 * finds an anchor even on an indexer that prunes old heights. A source whose tip is below the
 * lake's highest anchor is refused: the lake holds history that source does not (yet) have.
 */
import { Data, Effect } from "effect"
import { Checkpoints } from "../lake/Checkpoints.js"
import { Source, type SourceStatus } from "./Source.js"

export class LakeIdentityError extends Data.TaggedError("LakeIdentityError")<{ readonly message: string }> {}

/** Checks the lake's chain against the source's, writing nothing; calls `notice` when it cannot tell. */
export const checkIdentity = (status: SourceStatus, notice: (m: string) => void) =>
  Effect.gen(function* () {
    const source = yield* Source
    const checkpoints = yield* Checkpoints
    const lake = yield* checkpoints.identity
    if (lake) {
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

/** Records the source's chain in the lake, anchored at its tip: done by a run about to write. */
export const anchorIdentity = (status: SourceStatus) =>
  Effect.gen(function* () {
    const source = yield* Source
    const checkpoints = yield* Checkpoints
    // a rerun at the same tip: checkIdentity has just verified that anchor
    if ((yield* checkpoints.identity)?.anchors.some((a) => a.height === status.tip)) return
    const tipHash = yield* source.blockHash(status.tip)
    if (tipHash !== undefined) yield* checkpoints.recordIdentity(status.chainId, { height: status.tip, hash: tipHash })
  })
