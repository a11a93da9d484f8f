/**
 * The check that a position list's rows keep chain order across commits. Its records are numbered
 * in chain order (the tx families' sequence), so a dataset's files taken by position never go
 * down in height: a file's highest height is at most the lowest height of any file after it (two
 * files share a height only where a range ends inside one). A commit that breaks this holds rows
 * the source numbered otherwise than the rows beside it (two deployments behind one address, one
 * re-synced from another height): each file alone is whole and in order, and only the order
 * between them shows the rows missing from one place and doubled in another.
 *
 * Each commit's files are compared with the lake's committed files (as read at the run's first
 * commit of the dataset) and with every file of the run checked before it, committed or not (what
 * the source said in this run). A break refuses the commit. Which of the two is misplaced is not
 * known; the one committed stands at an edge of the lake's committed positions (the refused one's
 * positions are not committed), where the next export checks it against the source before it
 * reads beside it (probe.ts, checkEdges).
 */
import { Effect } from "effect"
import type { CommittedFile, Manifest, ManifestError } from "../lake/Manifests.js"
import type { Range } from "../lake/RangeSet.js"
import { CommitError } from "./commit.js"
import type { CommitCheck } from "./ShardLake.js"

/** A file's positions, the heights of its rows, and how many there are. */
export interface Placed {
  readonly range: Range
  readonly min: number
  readonly max: number
  readonly rows: number
}

/** The files that name their positions and hold rows (heights), as Placed. */
export const placed = (files: ReadonlyArray<CommittedFile>): Array<Placed> =>
  files.flatMap((f) =>
    f.range && typeof f.min_height === "number" && typeof f.max_height === "number"
      ? [{ range: f.range, min: f.min_height, max: f.max_height, rows: f.rows }]
      : []
  )

/** Two files out of order: the earlier by position holds a height above the later's lowest. */
const outOfOrder = (a: Placed, b: Placed): [Placed, Placed] | undefined => {
  const [first, second] = a.range[1] <= b.range[0] ? [a, b] : b.range[1] <= a.range[0] ? [b, a] : [undefined, undefined]
  return first && second && first.max > second.min ? [first, second] : undefined
}

export interface PositionOrderContext {
  /** the datasets whose list is addressed by position */
  readonly positioned: ReadonlySet<string>
  readonly manifest: (dataset: string) => Effect.Effect<Manifest | undefined, ManifestError>
}

/** The check for a run: it fails where a commit's staged files break position order with the lake's files or the run's. */
export const makePositionOrder = (c: PositionOrderContext): CommitCheck => {
  const known = new Map<string, Array<Placed>>()
  const filesOf = (dataset: string) =>
    known.has(dataset)
      ? Effect.succeed(known.get(dataset)!)
      : Effect.map(c.manifest(dataset), (m) => {
          // (two commits checked at once both read the manifest: the first to come back keeps the list)
          const files = known.get(dataset) ?? placed(m?.files ?? [])
          known.set(dataset, files)
          return files
        })
  return {
    check: (dataset, staged) =>
      !c.positioned.has(dataset)
        ? Effect.void
        : Effect.flatMap(filesOf(dataset), (files) => {
            const adding = placed(staged)
            for (const [i, file] of adding.entries())
              for (const other of [...files, ...adding.slice(0, i)]) {
                const broken = outOfOrder(file, other)
                if (!broken) continue
                const [first, second] = broken
                return Effect.fail(
                  new CommitError({
                    message: `${dataset}: the indexer numbered its records otherwise in two answers: positions ${first.range[0]}..${first.range[1] - 1} came at heights ${first.min}-${first.max}, and the later positions ${second.range[0]}..${second.range[1] - 1} at heights ${second.min}-${second.max} (two deployments behind one address, or one re-synced from another height?): rows would be missing in one place and doubled in another; not committed (the next export checks what the lake holds against the indexer first)`
                  })
                )
              }
            files.push(...adding)
            return Effect.void
          })
  }
}
