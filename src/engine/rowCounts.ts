/**
 * The check of a dataset's rows per height against the column of another that counts them
 * (Dataset.RowsPerHeight: txs against blocks' tx_count). Txs carry nothing that ties them to a
 * block hash, so a txs list answered from another history than the blocks (two deployments behind
 * one address, one of them forked or re-synced) would otherwise be committed beside them unseen;
 * its counts nearly always differ somewhere.
 *
 * Each commit's staged files are read before it: a counted dataset's rows per height, at the
 * heights the commit holds whole (those strictly between its lowest and highest: a position
 * range may start or end inside a height); the counting dataset's column at each of its heights.
 * A counted commit is compared with what the run committed of the counting dataset and, at the
 * heights it did not, with the lake folder's committed files of it (an earlier run's blocks); a
 * counting commit with what the run committed of the counted one. A difference refuses the commit
 * and is recorded (`disagreed`), which refuses the lake until a rollback.
 */
import { Effect } from "effect"
import { stagedPath, type CommittedFile, type ManifestError, type ManifestsService } from "../lake/Manifests.js"
import type { ParquetSinkService } from "../lake/ParquetSink.js"
import { quoteIdent, sqlStringList } from "../lake/sql.js"
import { CommitError } from "./commit.js"
import type { AppendDataset } from "./Dataset.js"
import type { CommitCheck } from "./ShardLake.js"

/** A dataset whose rows are counted, the one that counts them, and by which column. */
interface Pair {
  readonly counted: AppendDataset
  readonly counting: AppendDataset
  readonly column: string
  /** what each side said, by height */
  readonly rows: HeightValues
  readonly says: HeightValues
}

const UNKNOWN = 0xffff
const CHUNK = 65_536

/** A small count per height (0..65534), in chunks of heights allocated as heights come: 2 bytes a height, whatever the run's length. */
const heightValues = () => {
  const chunks = new Map<number, Uint16Array>()
  return {
    get: (h: number): number | undefined => {
      const v = chunks.get(Math.floor(h / CHUNK))?.[h % CHUNK]
      return v === undefined || v === UNKNOWN ? undefined : v
    },
    set: (h: number, v: number) => {
      if (!Number.isSafeInteger(v) || v < 0 || v >= UNKNOWN) return
      const key = Math.floor(h / CHUNK)
      let chunk = chunks.get(key)
      if (!chunk) chunks.set(key, (chunk = new Uint16Array(CHUNK).fill(UNKNOWN)))
      chunk[h % CHUNK] = v
    }
  }
}
type HeightValues = ReturnType<typeof heightValues>

const heightName = (d: AppendDataset) => quoteIdent(d.columns[d.heightColumn].name)

/** Where a run's row counts are read: its staged files, and the lake's committed ones. */
export interface RowCountsContext {
  /** the append datasets the run writes */
  readonly live: ReadonlyArray<AppendDataset>
  /** every append dataset (a counting one the run does not write is read from the lake) */
  readonly catalog: ReadonlyArray<AppendDataset>
  readonly staging: string
  readonly sink: ParquetSinkService
  /** the lake's committed files of a dataset, read wherever they live (Manifests' withCommittedFiles) */
  readonly committedFiles: ManifestsService["withCommittedFiles"]
  /** how many of a dataset's records the run quarantined so far */
  readonly quarantinedIn: (dataset: string) => number
  /** records in the lake that the two disagree at height `at`, and what the run committed of them from height `from` on */
  readonly disagreed: (at: number, from: number) => Effect.Effect<void, ManifestError>
}

/**
 * The check for a run: it fails where a commit's staged files disagree with what the run or the
 * lake committed of their pair; undefined where the run writes no dataset another counts.
 */
export const makeRowCounts = (c: RowCountsContext): CommitCheck | undefined => {
  const pairs: Array<Pair> = c.live.flatMap((counted) => {
    const counting = c.catalog.find((d) => d.name === counted.rowsPerHeight?.dataset)
    return counting && counted.rowsPerHeight
      ? [{ counted, counting, column: counted.rowsPerHeight.column, rows: heightValues(), says: heightValues() }]
      : []
  })
  if (pairs.length === 0) return undefined

  /** `h` and `v` of each row of `SELECT {h}, {v} FROM read_parquet(paths) {rest}` */
  const readPaths = (paths: ReadonlyArray<string>, select: string, rest = "") =>
    Effect.map(c.sink.query(`SELECT ${select} FROM read_parquet(${sqlStringList(paths)}) ${rest}`), (rows) =>
      rows.map((r) => [Number(r.h), Number(r.v)] as const)
    )
  const read = (dataset: string, files: ReadonlyArray<CommittedFile>, select: string, rest = "") =>
    readPaths(
      files.map((f) => stagedPath(c.staging, dataset, f.path)),
      select,
      rest
    )

  /**
   * What the lake's committed files of the counting dataset say at heights low..high (exclusive):
   * an earlier run's blocks count this run's txs too (a rerun after a refusal commits no blocks
   * there), wherever they live (an S3 lake's are fetched, one at a time).
   */
  const lakeSays = (pair: Pair, low: number, high: number) =>
    Effect.gen(function* () {
      const h = heightName(pair.counting)
      const said = yield* c.committedFiles(
        pair.counting.name,
        (paths) => readPaths(paths, `${h} AS h, ${quoteIdent(pair.column)} AS v`, `WHERE ${h} > ${low} AND ${h} < ${high}`),
        (f) => (f.min_height ?? Infinity) < high && (f.max_height ?? -Infinity) > low,
        // a file another writer's commit has listed but not yet moved in, or a compaction moved out: those heights go unchecked
        "skip"
      )
      for (const [height, value] of said) pair.says.set(height, value)
    })

  /** the lowest height of the pairs' files checked this run: what the run may have committed of a mix starts there */
  let lowest = Infinity
  /** Records `value` at `height` on one side of `pair`: the disagreement where the other side said otherwise. */
  const record = (pair: Pair, side: "rows" | "says", height: number, value: number) => {
    pair[side].set(height, value)
    const other = (side === "rows" ? pair.says : pair.rows).get(height)
    if (other === undefined || other === value) return undefined
    const [rows, says] = side === "rows" ? [value, other] : [other, value]
    return {
      at: height,
      message: `${pair.counted.name} at height ${height}: ${rows} rows, but ${pair.counting.name}.${pair.column} is ${says} there: the indexer answers the two lists from different histories (two deployments behind one address?); not committed. What this run committed from height ${lowest} on may mix them: the lake is refused until a rollback below it`
    }
  }

  const counted = (pair: Pair, files: ReadonlyArray<CommittedFile>) =>
    Effect.gen(function* () {
      const found = yield* read(pair.counted.name, files, `${heightName(pair.counted)} AS h, count(*) AS v`, "GROUP BY 1")
      const byHeight = new Map(found)
      let [low, high] = [Infinity, -Infinity]
      for (const h of byHeight.keys()) [low, high] = [Math.min(low, h), Math.max(high, h)]
      if (high - low < 2) return undefined
      // (where this run's own commits say every height, the lake is not read)
      let unknown = false
      for (let h = low + 1; h < high && !unknown; h++) unknown = pair.says.get(h) === undefined
      if (unknown) yield* lakeSays(pair, low, high)
      for (let h = low + 1; h < high; h++) {
        const problem = record(pair, "rows", h, byHeight.get(h) ?? 0)
        if (problem) return problem
      }
      return undefined
    })

  const counting = (pair: Pair, files: ReadonlyArray<CommittedFile>) =>
    Effect.map(read(pair.counting.name, files, `${heightName(pair.counting)} AS h, ${quoteIdent(pair.column)} AS v`), (found) => {
      for (const [h, v] of found) {
        const problem = record(pair, "says", h, v)
        if (problem) return problem
      }
      return undefined
    })

  return {
    check: (dataset, files) => {
      // (a dataset some of whose records were quarantined holds fewer rows than counted: not comparable)
      const checked = pairs.filter(
        (p) => (p.counted.name === dataset || p.counting.name === dataset) && c.quarantinedIn(p.counted.name) === 0
      )
      if (files.length === 0 || checked.length === 0) return Effect.void
      for (const f of files) lowest = Math.min(lowest, f.min_height ?? Infinity)
      return Effect.forEach(
        checked,
        (pair) =>
          Effect.flatMap(pair.counted.name === dataset ? counted(pair, files) : counting(pair, files), (problem) =>
            problem
              ? Effect.zipRight(c.disagreed(problem.at, lowest), Effect.fail(new CommitError({ message: problem.message })))
              : Effect.void
          ),
        { discard: true }
      )
    }
  }
}
