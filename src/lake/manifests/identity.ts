/** The chain a lake holds (`_lake.json` at its root): its chain id, anchors (heights and their block hashes) and a rollback's intent and log. */
import { Effect } from "effect"
import { identityLockPath, identityPath, identityTmpPath } from "../layout.js"
import { toFinishRollback } from "../listed.js"
import { LakeIdentity } from "../manifest.js"
import { ManifestError } from "./errors.js"
import { Damaged, readJson, writeJson } from "./jsonFiles.js"
import type { LakeWriter } from "./lakeWriter.js"
import { holding } from "./locks.js"

/**
 * Why the lake at `root` may hold two histories: an export found its txs and blocks disagree at
 * `disagreed.at`; what it committed from `disagreed.from` on may mix them (every reader of the
 * lake as a whole: export, verify, publish, says this).
 */
export const disagreedProblem = (root: string, disagreed: NonNullable<LakeIdentity["disagreed"]>) =>
  `an export into ${root} found its txs and blocks disagree at height ${disagreed.at} (a txs list answered from another history than the blocks): what it committed from height ${disagreed.from} on may mix the two: ${disagreed.from > 1 ? `chain-lake rollback --data ${root} --to-height ${disagreed.from - 1} drops it (the next export reads it again)` : "export into another --out"}, once the indexer answers from one history`

/**
 * What keeps the lake at `root` from being read as a whole (verified, published), its identity
 * being `identity`, or undefined: no identity naming its chain while it holds exported data, a rollback
 * under way or cut short (datasets cut and others not yet), a disagreement recorded.
 */
export const identityProblem = (root: string, identity: LakeIdentity | undefined, holdsData: boolean): string | undefined =>
  identity === undefined
    ? holdsData
      ? `${root} holds data but no _lake.json naming its chain (a lake of an older chain-lake, or its identity file was lost): export --adopt-lake checks its newest block against the indexer and adopts it`
      : undefined
    : identity.rollback
      ? `a rollback of ${root} to height ${identity.rollback.to_height} is under way or was cut short: ${toFinishRollback(root, identity.rollback.to_height)}`
      : identity.disagreed
        ? disagreedProblem(root, identity.disagreed)
        : undefined

/** How many of the newest anchors a lake keeps: enough that a pruning indexer still serves one of them. */
const ANCHORS_KEPT = 8
/** How many older anchors it keeps besides, spread over its history: a fork deeper than the newest runs still finds a block in common (engine/identity.ts findFork). */
const OLDER_ANCHORS_KEPT = 8

/**
 * The anchors a lake keeps, ascending: the newest ANCHORS_KEPT, and OLDER_ANCHORS_KEPT of the
 * others, the oldest always, then those farthest from their neighbours (each time the one
 * closest to the anchor before it goes), so the kept ones spread out as the lake grows.
 */
export const keptAnchors = <A extends { readonly height: number }>(anchors: ReadonlyArray<A>): Array<A> => {
  const sorted = [...anchors].sort((a, b) => a.height - b.height)
  const newest = sorted.slice(-ANCHORS_KEPT)
  const older = sorted.slice(0, Math.max(0, sorted.length - ANCHORS_KEPT))
  while (older.length > OLDER_ANCHORS_KEPT) {
    let closest = 1
    for (let i = 2; i < older.length; i++)
      if (older[i].height - older[i - 1].height < older[closest].height - older[closest - 1].height) closest = i
    older.splice(closest, 1)
  }
  return [...older, ...newest]
}

/** The chain this lake holds, or undefined for a lake that never recorded one (ManifestsService.identity). */
export const readIdentity = (lake: LakeWriter) =>
  Effect.tryPromise({
    try: () => readJson(lake.known, identityPath(lake.root), LakeIdentity),
    catch: (e) =>
      new ManifestError({
        message: `cannot read ${identityPath(lake.root)}: ${e instanceof Damaged ? `damaged at ${e.issue}` : (e as Error).message}; restore it, or export into a new --out`
      })
  })

/** Changes the lake's identity under its lock; `change` gets it as it is on disk, and may refuse (nothing is written then) (ManifestsService.updateIdentity). */
export const updateIdentity = (lake: LakeWriter, change: (prior: LakeIdentity | undefined) => LakeIdentity | ManifestError) =>
  holding(
    lake,
    identityLockPath(lake.root),
    Effect.gen(function* () {
      const identity = change(yield* readIdentity(lake))
      if (identity instanceof ManifestError) return yield* identity
      yield* writeJson(identityPath(lake.root), identityTmpPath(lake.root, lake.writer), identity)
      return identity
    })
  )

/**
 * Records the lake's chain and one more anchor (ManifestsService.recordIdentity). The chain is
 * checked under the lock: two writers of different chains into a new lake cannot both anchor.
 */
export const recordIdentity = (lake: LakeWriter, chainId: string, anchor: { readonly height: number; readonly hash: string }) =>
  Effect.asVoid(
    updateIdentity(lake, (prior) =>
      prior && prior.chain_id !== chainId
        ? new ManifestError({ message: `${lake.root} holds chain ${prior.chain_id}, not ${chainId}` })
        : {
            ...(prior ?? { format_version: 1, chain_id: chainId }),
            anchors: keptAnchors([...(prior?.anchors ?? []).filter((a) => a.height !== anchor.height), anchor])
          }
    )
  )
