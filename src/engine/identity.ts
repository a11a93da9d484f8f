/**
 * Which chain a lake holds. Before a run writes anything, the lake's chain id must be the
 * source's, and the newest block the lake anchored (height and hash) that the source still
 * serves must have the same hash there: a devnet reset with another seed, or another network
 * under the same chain id, has other hashes. A run then anchors the source's tip, so a later run
 * finds an anchor even on an indexer that prunes old heights. A source whose tip is below the
 * lake's highest anchor is refused: the lake holds history that source does not (yet) have.
 */
import { Context, Data, Effect, type Exit } from "effect"
import { disagreedProblem, Manifests, type ManifestError } from "../lake/Manifests.js"
import { highestHeight, IDENTITY_FILE, type Reorg } from "../lake/manifest.js"
import { ParquetSink, type SinkError } from "../lake/ParquetSink.js"
import { sqlStringList } from "../lake/sql.js"
import { below, normalize, total, type Range } from "../lake/RangeSet.js"
import { Source, type SourceFailure, type SourceStatus } from "./Source.js"

export class LakeIdentityError extends Data.TaggedError("LakeIdentityError")<{
  readonly message: string
  /** the source moved to another history during the run (the history guard's finding) */
  readonly duringRun?: boolean
  /** the source serves the lake's history but not yet up to the lake's anchors (a replica catching up, or rolled back): its tip */
  readonly behindAt?: number
}> {}

/**
 * A lake holding data but no identity (an older lake, or one whose `_lake.json` was lost) names no
 * chain: it is refused, unless the user adopts it, and then only if its newest committed block
 * is this source's (chain id and hash); a lake without blocks is adopted on the user's word.
 */
const adopt = (status: SourceStatus, datasets: ReadonlyArray<string>, adopting: boolean, notice: (m: string) => void) =>
  Effect.gen(function* () {
    const source = yield* Source
    const manifests = yield* Manifests
    const sink = yield* ParquetSink
    const held: Array<string> = []
    for (const d of datasets) if (((yield* manifests.get(d))?.files.length ?? 0) > 0) held.push(d)
    if (held.length === 0) return false
    if (!adopting)
      return yield* new LakeIdentityError({
        message: `${manifests.root} holds ${held.join(", ")} but no ${IDENTITY_FILE} naming its chain (a lake of an older chain-lake, or its identity file was lost): --adopt-lake checks its newest block against this indexer and adopts it; or export into another --out`
      })
    const newest = held.includes("blocks")
      ? (yield* manifests.withCommittedFiles("blocks", (paths) =>
          sink.query(`SELECT height, block_hash AS hash, chain_id FROM read_parquet(${sqlStringList(paths)}) ORDER BY height DESC LIMIT 1`)
        ))
          .map((b) => ({ height: Number(b.height), hash: String(b.hash), chainId: String(b.chain_id) }))
          .sort((x, y) => y.height - x.height)[0]
      : undefined
    if (!newest) {
      notice(`${manifests.root}: adopted for chain ${status.chainId} on your word (it holds no blocks to check against the indexer)`)
      return true
    }
    const hash = newest.height <= status.tip ? yield* source.blockHash(newest.height) : undefined
    if (newest.chainId !== status.chainId || hash !== newest.hash)
      return yield* new LakeIdentityError({
        message: `${manifests.root} cannot be adopted for chain ${status.chainId}: its newest block ${newest.height} is ${newest.hash} of chain ${newest.chainId}, and this indexer has ${hash ?? "no such block"}: export into another --out`
      })
    notice(`${manifests.root}: adopted for chain ${status.chainId} (its newest block, ${newest.height}, is this indexer's)`)
    return true
  })

/** Where a source's history parts from the lake's: the last height both hold the same block at, and the first one found to differ. */
export interface Fork {
  readonly common: number
  /** the lowest height the source still serves, where it serves none of the lake's heights below it (pruned) and already differs there */
  readonly prunedBelow?: number
  readonly differs: { readonly height: number; readonly lakeHash: string; readonly sourceHash: string | undefined }
}

/** The lake's newest committed block matching `where` (SQL over `height`), with its hash; undefined where it holds none. */
const newestLakeBlock = (where: string) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const sink = yield* ParquetSink
    if (!(yield* manifests.get("blocks"))) return undefined
    const rows = yield* manifests.withCommittedFiles("blocks", (paths) =>
      sink.query(`SELECT height, block_hash FROM read_parquet(${sqlStringList(paths)}) WHERE ${where} ORDER BY height DESC LIMIT 1`)
    )
    // (one answer per file where the files live elsewhere)
    const top = rows.reduce<(typeof rows)[number] | undefined>((a, r) => (a && Number(a.height) >= Number(r.height) ? a : r), undefined)
    return top ? { height: Number(top.height), hash: String(top.block_hash) } : undefined
  })

/** The hash the lake's committed blocks give `height`, when it holds that block. */
export const lakeBlockHash = (height: number) => Effect.map(newestLakeBlock(`height = ${height}`), (block) => block?.hash)

/** The lake's highest committed block at or below `height`, with its hash; undefined where it holds none. */
export const lakeBlockAtOrBelow = (height: number) => newestLakeBlock(`height <= ${height}`)

/** What the lake says block `height` is: an anchor's hash, else its committed block's. */
const lakeHashAt = (anchors: ReadonlyArray<{ readonly height: number; readonly hash: string }>, height: number) =>
  Effect.suspend(() => {
    const anchored = anchors.find((a) => a.height === height)
    return anchored ? Effect.succeed<string | undefined>(anchored.hash) : lakeBlockHash(height)
  })

/** The i-th height of sorted disjoint ranges, counted across them. */
const nth = (ranges: ReadonlyArray<Range>, i: number) => {
  for (const [a, b] of ranges) {
    if (i < b - a) return a + i
    i -= b - a
  }
  return NaN
}

/**
 * Where the source's history parts from the lake's, among the heights up to `tip` the lake knows a
 * hash of (its committed blocks and its anchors): a binary search, since histories that part stay
 * apart (each block names its parent). Undefined when every such height matches. `common` is 0
 * when none does. A height the source does not serve (pruned) cannot be compared: the search
 * fails rather than guess.
 */
export const findFork = (tip: number) =>
  Effect.gen(function* () {
    const source = yield* Source
    const manifests = yield* Manifests
    const anchors = (yield* manifests.identity)?.anchors ?? []
    const blocks = (yield* manifests.get("blocks"))?.committed ?? []
    const known = normalize([
      ...below(blocks, tip + 1),
      ...anchors.filter((a) => a.height <= tip).map((a): Range => [a.height, a.height + 1])
    ])
    const count = total(known)
    if (count === 0) return undefined
    const probe = (i: number) =>
      Effect.gen(function* () {
        const height = nth(known, i)
        const [lakeHash, sourceHash] = yield* Effect.all([lakeHashAt(anchors, height), source.blockHash(height)], {
          concurrency: "unbounded"
        })
        return sourceHash === undefined ? undefined : { height, lakeHash: lakeHash ?? "", sourceHash, same: lakeHash === sourceHash }
      })
    const unknowable = (i: number) =>
      new LakeIdentityError({
        message: `cannot tell where this indexer's history parts from ${manifests.root}'s: it does not serve block ${nth(known, i)}`
      })
    const last = yield* probe(count - 1)
    if (last === undefined) return yield* unknowable(count - 1)
    if (last.same) return undefined
    // an indexer that pruned its oldest blocks serves only the newest of the lake's heights: the search starts at the lowest it serves
    let lo = 0
    let first = yield* probe(0)
    if (first === undefined) {
      let unserved = 0
      lo = count - 1
      while (lo - unserved > 1) {
        const mid = (unserved + lo) >>> 1
        if ((yield* probe(mid)) === undefined) unserved = mid
        else lo = mid
      }
      first = (yield* probe(lo))!
      if (!first.same) return { common: 0, differs: first, prunedBelow: first.height } satisfies Fork
    } else if (!first.same) return { common: 0, differs: first } satisfies Fork
    // probe(lo) is the same, probe(hi) differs
    let hi = count - 1
    let differs = last
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1
      const at = yield* probe(mid)
      // (every height above one it serves is served, unless the indexer has holes)
      if (at === undefined) return yield* unknowable(mid)
      if (at.same) lo = mid
      else {
        hi = mid
        differs = at
      }
    }
    return { common: nth(known, lo), differs } satisfies Fork
  })

/** The line a fork is refused with, or the hint a rollback of it gives. */
const forkProblem = (root: string, chainId: string, fork: Fork, blockless: boolean) =>
  fork.prunedBelow !== undefined
    ? `${root} holds another history of chain ${chainId} at and below height ${fork.prunedBelow}: block ${fork.prunedBelow} is ${fork.differs.lakeHash} there and ${fork.differs.sourceHash} on this indexer, which serves no block below it (pruned), so no block both hold can be found: export it into another --out (nothing was written)`
    : fork.common === 0
      ? `${root} holds another history of chain ${chainId}: block ${fork.differs.height} is ${fork.differs.lakeHash} there and ${fork.differs.sourceHash} on this indexer (a reset chain, or another network under the same id): export it into another --out${
          // a lake without blocks knows only the hashes it anchored: a fork below the lowest looks like another chain
          blockless
            ? `; or, if the indexer was rolled back below height ${fork.differs.height}, chain-lake rollback --data ${root} --to-height H (H: where it was rolled back to), then export with --adopt-lake`
            : ""
        }`
      : `${root} holds another history of chain ${chainId} from height ${fork.differs.height} on (block ${fork.differs.height} is ${fork.differs.lakeHash} there and ${fork.differs.sourceHash} on this indexer; both hold the same block ${fork.common}): a rolled-back, re-synced or reorganized indexer. --on-reorg rollback drops the lake's rows above ${fork.common} and exports this indexer's history; or export into another --out (nothing was written)`

/** What to do with a lake whose history a source does not share above some height: refuse (default), or return the fork for the caller to roll back. */
export type OnReorg = "refuse" | "rollback"

/**
 * Checks the lake's chain against the source's, writing nothing; calls `notice` when it cannot
 * tell. A source on another history above some height the lake holds fails the check, unless
 * `onReorg` is "rollback": then the fork is returned, for the caller to roll the lake back to its
 * last common height (a history that shares no block with the lake is refused either way).
 */
export const checkIdentity = (
  status: SourceStatus,
  notice: (m: string) => void,
  adoption: { readonly datasets: ReadonlyArray<string>; readonly adopt: boolean } = { datasets: [], adopt: false },
  onReorg: OnReorg = "refuse"
) =>
  Effect.gen(function* (): Effect.fn.Return<
    IdentityVerdict,
    LakeIdentityError | SourceFailure | ManifestError | SinkError,
    Source | Manifests | ParquetSink
  > {
    const source = yield* Source
    const manifests = yield* Manifests
    const lake = yield* manifests.identity
    if (!lake) return (yield* adopt(status, adoption.datasets, adoption.adopt, notice)) ? { adopted: true } : {}
    if (lake.disagreed)
      return yield* new LakeIdentityError({
        message: disagreedProblem(manifests.root, lake.disagreed)
      })
    if (lake.chain_id !== status.chainId)
      return yield* new LakeIdentityError({
        message: `${manifests.root} holds chain ${lake.chain_id}, but this indexer serves chain ${status.chainId}: export it into another --out`
      })
    const blockless = ((yield* manifests.get("blocks"))?.files.length ?? 0) === 0
    // a lake holding no row above the last common height keeps nothing of the other history but anchors: rolled back as if asked
    const forked = (fork: Fork): Effect.Effect<IdentityVerdict, LakeIdentityError | ManifestError, Manifests> =>
      Effect.gen(function* () {
        if (fork.common > 0 && (onReorg === "rollback" || (yield* highestHeld(adoption.datasets)) <= fork.common)) return { fork }
        return yield* new LakeIdentityError({ message: forkProblem(manifests.root, lake.chain_id, fork, blockless) })
      })
    // a source behind what the lake anchored is rolled back, re-synced or lagging: the heights it serves tell which, if they differ
    const held = Math.max(0, ...lake.anchors.map((a) => a.height))
    if (status.tip < held) {
      const fork = yield* findFork(status.tip)
      if (fork) return yield* forked(fork)
      return yield* new LakeIdentityError({
        behindAt: status.tip,
        message: `${manifests.root} holds chain ${lake.chain_id} to height ${held}, but this indexer's tip is ${status.tip}, and the blocks both hold are the same: an indexer still catching up (rerun once its tip passes ${held}), or one rolled back to ${status.tip} (chain-lake rollback --to-height ${status.tip} drops the lake's rows above it); nothing was written`
      })
    }
    for (const anchor of [...lake.anchors].sort((a, b) => b.height - a.height)) {
      const hash = yield* source.blockHash(anchor.height)
      if (hash === undefined) continue
      if (hash !== anchor.hash) {
        const fork = yield* findFork(status.tip)
        // no block in common: the anchor found to differ is named
        return yield* forked(
          fork && (fork.common > 0 || fork.prunedBelow !== undefined)
            ? fork
            : { common: 0, differs: { height: anchor.height, lakeHash: anchor.hash, sourceHash: hash } }
        )
      }
      // the lake's own newest block too: rows may have been committed past the anchor (an anchor the source did not serve, another run's)
      const top = yield* topBlockDiffers(status.tip, anchor.height)
      if (top) return yield* forked((yield* findFork(status.tip)) ?? top)
      const cut = unvouchedCut(lake, anchor.height)
      const held = cut === undefined || adoption.adopt ? 0 : yield* highestHeld(adoption.datasets)
      if (cut !== undefined && held > anchor.height && !(yield* witnessServed(lake)))
        return yield* new LakeIdentityError({
          message: `cannot check that ${manifests.root} holds this indexer's history at heights ${anchor.height + 1}-${Math.min(cut, held)}: its rollback to height ${cut} kept rows there but no anchor above ${anchor.height} (it holds no blocks there), and rows of another history would stay beside this one: chain-lake rollback --data ${manifests.root} --to-height ${anchor.height} drops them (the next export reads them again), or --adopt-lake takes them as this indexer's on your word`
        })
      return { verified: anchor }
    }
    // a rollback that left no anchor (a lake without blocks): nothing tells this history from another one
    if (lake.anchors.length === 0 && (lake.reorgs ?? []).length > 0 && !adoption.adopt) {
      if (yield* witnessServed(lake)) return {}
      const { to_height, witness } = lake.reorgs!.at(-1)!
      return yield* new LakeIdentityError({
        message: `cannot check that ${manifests.root} holds this indexer's history: its rollback to height ${to_height} left no anchor (it holds no blocks)${witness ? `, and this indexer does not serve block ${witness.height} as ${witness.hash}, the block its rows were read under` : ""}; an export on top of another history would mix the two: --adopt-lake takes this indexer's history on your word, or export into another --out`
      })
    }
    notice(`could not check that ${manifests.root} holds this chain's history: the indexer serves none of the heights it anchored`)
    return {}
  })

/**
 * The height a rollback cut the lake to, where the rows it kept above `verified` (the newest anchor
 * the source confirmed) are vouched for by nothing: a lake without blocks there knows its history
 * only by anchors, and a cut between two of them keeps rows a fork below the cut changed (the
 * cut's anchor is recorded only where the lake holds that block). Undefined once a run anchored
 * above the cut.
 */
const unvouchedCut = (
  lake: { readonly anchors: ReadonlyArray<{ readonly height: number }>; readonly reorgs?: ReadonlyArray<Reorg> | undefined },
  verified: number
) => {
  const cut = lake.reorgs?.at(-1)?.to_height
  return cut !== undefined && cut > verified && !lake.anchors.some((a) => a.height >= cut) ? cut : undefined
}

/** Whether the source serves the block that vouches for the rows the lake's last rollback kept (Reorg.witness) with its hash. */
const witnessServed = (lake: { readonly reorgs?: ReadonlyArray<Reorg> | undefined }) =>
  Effect.gen(function* () {
    const witness = lake.reorgs?.at(-1)?.witness
    return witness !== undefined && (yield* (yield* Source).blockHash(witness.height)) === witness.hash
  })

/** The highest height the lake's `datasets` hold a row or a snapshot of. */
export const highestHeld = (datasets: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    let held = 0
    for (const d of datasets) {
      const m = yield* manifests.get(d)
      if (m) held = Math.max(held, highestHeight(m))
    }
    return held
  })

/** What checkIdentity found: a fork for the caller to roll back (onReorg "rollback"), or the anchor it checked. */
export interface IdentityVerdict {
  readonly fork?: Fork
  /** the newest anchor the source still serves with the lake's hash */
  readonly verified?: { readonly height: number; readonly hash: string }
  /** a lake holding data but no identity, adopted (--adopt-lake): the run records its anchor at once, commit or not */
  readonly adopted?: true
}

/**
 * Whether the lake's newest committed block (above `checked`, at or below the source's tip) has
 * another hash on the source: the fork it shows, with no common height yet, or undefined.
 */
const topBlockDiffers = (tip: number, checked: number) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const source = yield* Source
    const ranges = (yield* manifests.get("blocks"))?.committed ?? []
    const top = Math.min(tip, Math.max(0, ...ranges.map(([, b]) => b - 1)))
    if (top <= checked || !ranges.some(([a, b]) => top >= a && top < b)) return undefined
    const [lakeHash, sourceHash] = yield* Effect.all([lakeBlockHash(top), source.blockHash(top)], { concurrency: "unbounded" })
    return lakeHash !== undefined && sourceHash !== undefined && lakeHash !== sourceHash
      ? ({ common: 0, differs: { height: top, lakeHash, sourceHash } } satisfies Fork)
      : undefined
  })

/** how far below its tip a run looks for a block the source serves, to anchor (anchorIdentity) */
export const ANCHOR_BELOW_TIP = 3

/**
 * The source's chain anchored at `top` (its tip, or the height a run reads up to: a fork above
 * that changes nothing the run writes), for a run about to write: the anchor the lake holds at
 * that height already, or one read now, which the run's first commit records (historyGuard), so
 * that a run that commits nothing leaves the lake's identity as it was (an anchor of a history
 * that changed under the run would refuse every later run of a lake that holds none of it).
 * Where the source does not serve its tip block (a /status a block or two ahead of its block
 * route), the newest block it serves within ANCHOR_BELOW_TIP below it: a run anchored at an older
 * one only could witness nothing above that (HistoryGuard.witness), and a lake without blocks would
 * then hold rows no anchor vouches for. Undefined where it serves none of them.
 */
export const anchorIdentity = (top: number, read?: { readonly height: number; readonly hash: string | undefined }) =>
  Effect.gen(function* () {
    const source = yield* Source
    const manifests = yield* Manifests
    const anchors = (yield* manifests.identity)?.anchors ?? []
    for (let height = top; height >= Math.max(1, top - ANCHOR_BELOW_TIP); height--) {
      const known = anchors.find((a) => a.height === height)
      // a rerun at the same tip: checkIdentity has just verified that anchor (or a newer one of its history)
      if (known) return { anchor: known, recorded: true }
      // (`read`: the block read with the plan's probes)
      const hash = read?.height === height ? read.hash : yield* source.blockHash(height)
      if (hash !== undefined) return { anchor: { height, hash }, recorded: false }
    }
    return undefined
  })

/** how long a failed run asks whether its source moved to another history (HistoryGuard.moved) */
const MOVE_ASK_MS = 5_000
/** how many times a commit's check asks for an anchored block the source does not serve, and the pause between (HistoryGuard.check) */
const UNSERVED_ASKS = 5
const UNSERVED_PAUSE = "300 millis"

/**
 * `effect` under the run's `guard`: a failure while the source moved to another history is said as
 * the move (HistoryGuard.moved): pages that disagree, records that fail, a plan's probes.
 */
export const explainedByMove = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  guard: Context.Tag.Service<typeof HistoryGuard> | undefined
): Effect.Effect<A, E | LakeIdentityError, R> =>
  guard
    ? Effect.catchAll(effect, (failure) =>
        Effect.flatMap(guard.moved(failure as { readonly message?: string }), (moved) => Effect.fail(moved ?? failure))
      )
    : effect

/** A check every commit of a run makes first: the source still serves the history the run started on. */
export class HistoryGuard extends Context.Tag("chain-lake/HistoryGuard")<
  HistoryGuard,
  {
    readonly check: Effect.Effect<void, LakeIdentityError | SourceFailure | ManifestError>
    /**
     * For a run that failed with `failure`: the error naming the move where the source gives the
     * anchored block another hash now (the move explains what went wrong, whose words it keeps, and
     * a run with --on-reorg rollback starts over on it), else undefined. Unlike `check`, a block
     * not served is no move here (a replica behind: the failure says more), and the block is asked
     * for at most MOVE_ASK_MS (a source that is down does not hold the failure back); records nothing.
     */
    readonly moved: (failure: { readonly message?: string }) => Effect.Effect<LakeIdentityError | undefined>
    /**
     * Where the lake holds no blocks (its anchors are all it knows of its history): the block at a
     * commit's top height, read before the commit's check, and the step that records it as an
     * anchor once the commit went through. A fork below the newest anchor then finds a block in
     * common near it (findFork), not only at an older run's tip.
     */
    readonly witness?: (height: number) => Effect.Effect<Effect.Effect<void, ManifestError>, SourceFailure>
    /**
     * For a snapshot of a height above the run's anchor (its watermark moved on while it was read,
     * and it was planned anew there): the block at that height, read before the commit's check,
     * and the step that records it as an anchor once the snapshot is committed, so that a later
     * fork below it is seen (the run's anchor is older than what the snapshot holds). Where the
     * source does not serve that block, the snapshot is not committed (the run fails, saying so).
     */
    readonly vouch: (height: number) => Effect.Effect<Effect.Effect<void, ManifestError>, SourceFailure>
  }
>() {}

/**
 * The guard of a run anchored at `anchor`: the source must still give the anchored block its hash.
 * A source that changes history under a run (an indexer re-synced, a load balancer moving to
 * another deployment, a reset devnet) fails the run at its next commit, so nothing read after
 * the change is committed; what was committed before it is of the history the lake holds. With
 * `chainId`, the first check that passes records the anchor in the lake's identity (before the
 * commit it guards: a lake with data names its chain and the history it was read from).
 */
export const historyGuard = (
  anchor: { readonly height: number; readonly hash: string },
  root: string,
  chain: { readonly id: string; readonly unrecorded: boolean; readonly witnessing: boolean }
) =>
  Effect.gen(function* () {
    const source = yield* Source
    const manifests = yield* Manifests
    const rollbacks = ((yield* manifests.identity)?.reorgs ?? []).length
    const changed = (hash: string | undefined) =>
      new LakeIdentityError({
        duringRun: true,
        message: `the indexer's history changed during the run: block ${anchor.height} was ${anchor.hash} when it started and is ${hash ?? "gone"} now (a re-synced or reset indexer, or a load balancer moving between deployments); nothing read after the change was committed to ${root}: rerun once the indexer is stable`
      })
    // a `chain-lake rollback` of the lake while this run reads: what it read may be above the cut
    const rolledBack = new LakeIdentityError({
      message: `${root} was rolled back during this run (chain-lake rollback): nothing more of it was committed; run the export again`
    })
    let unrecorded = chain.unrecorded ? chain.id : undefined
    const moved = (failure: { readonly message?: string }): Effect.Effect<LakeIdentityError | undefined> =>
      // the move is what failed (a commit's check found it): said as it is, not explained by itself
      failure instanceof LakeIdentityError && failure.duringRun
        ? Effect.succeed(undefined)
        : Effect.match(Effect.timeoutFail(source.blockHash(anchor.height), { duration: MOVE_ASK_MS, onTimeout: () => undefined }), {
            onFailure: () => undefined,
            onSuccess: (hash) =>
              hash === undefined || hash === anchor.hash
                ? undefined
                : new LakeIdentityError({
                    duringRun: true,
                    message: `${changed(hash).message} (what failed: ${failure.message ?? "the run"})`
                  })
          })
    const servedHash = (asks: number): Effect.Effect<string | undefined, SourceFailure> =>
      Effect.flatMap(source.blockHash(anchor.height), (hash) =>
        hash !== undefined || asks <= 1 ? Effect.succeed(hash) : Effect.zipRight(Effect.sleep(UNSERVED_PAUSE), servedHash(asks - 1))
      )
    const check = Effect.gen(function* () {
      // a block not served is asked again a few times: behind a load balancer, a replica a block or
      // two behind does not serve the tip the run anchored, and the next answer is often another's
      const hash = yield* servedHash(UNSERVED_ASKS)
      if (hash !== anchor.hash) return yield* Effect.fail(changed(hash))
      const now = yield* manifests.identity
      if (now?.rollback || (now?.reorgs ?? []).length > rollbacks) return yield* Effect.fail(rolledBack)
      if (unrecorded === undefined) return
      yield* manifests.recordIdentity(unrecorded, anchor)
      unrecorded = undefined
    })
    // read before the check that follows it: the anchor still the run's then, a block at or below it is of the run's history too
    // (one above it, where the run's anchor is an older one the source still serves, is not witnessed)
    /** the block at `height` read now, and the step that records it as an anchor; `unserved` where the source does not serve it */
    const anchoring = (height: number, unserved: Effect.Effect<Effect.Effect<void, ManifestError>, LakeIdentityError>) =>
      Effect.flatMap(source.blockHash(height), (hash) =>
        hash === undefined ? unserved : Effect.succeed(manifests.recordIdentity(chain.id, { height, hash }))
      )
    const nothing = Effect.succeed(Effect.void)
    const witness = (height: number) => (height > anchor.height ? nothing : anchoring(height, nothing))
    // a snapshot no anchor can vouch for is not committed: a fork below it would go unseen
    const unvouched = (height: number) =>
      new LakeIdentityError({
        message: `a snapshot of height ${height} (its watermark moved on while it was read) cannot be anchored: the indexer does not serve block ${height} yet; it was not committed to ${root}: run the export again`
      })
    const vouch = (height: number) => (height <= anchor.height ? nothing : anchoring(height, Effect.fail(unvouched(height))))
    return { check: yield* sharedAfterAsking(check), moved, vouch, ...(chain.witnessing ? { witness } : {}) }
  })

/**
 * `check` shared by the callers that ask while one runs: a caller gets the outcome of the first
 * check that began after it asked, so what it read before asking is covered as if it had checked
 * alone. Shards of equal size end together: each of their commits asked the indexer on its own,
 * behind the run's page requests (16 checks of 0.3–0.8 s each at the end of a run of 16 shards);
 * now the ones that ask during a check share the next.
 */
const sharedAfterAsking = <E>(check: Effect.Effect<void, E>) =>
  Effect.map(Effect.makeSemaphore(1), (one) => {
    let begun = 0
    let last: { readonly number: number; readonly exit: Exit.Exit<void, E> } | undefined
    return Effect.suspend(() => {
      const asked = begun
      return one.withPermits(1)(
        Effect.suspend(() => {
          if (last && last.number > asked) return last.exit
          const number = ++begun
          return Effect.flatten(Effect.tap(Effect.exit(check), (exit) => Effect.sync(() => (last = { number, exit }))))
        })
      )
    })
  })
