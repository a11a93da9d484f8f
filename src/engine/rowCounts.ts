/**
 * The check of a dataset's rows per height against the column of another that counts them
 * (Dataset.RowsPerHeight: txs against blocks' tx_count), over what one run commits of both. Txs
 * carry nothing that ties them to a block hash, so a txs list answered from another history than
 * the blocks (two deployments behind one address, one of them forked or re-synced) would
 * otherwise be committed beside them unseen; its counts nearly always differ somewhere.
 *
 * Each commit's staged files are read before it: a counted dataset's rows per height, at the
 * heights the commit holds whole (those strictly between its lowest and highest: a position
 * range may start or end inside a height); the counting dataset's column at each of its heights.
 * Whichever of the two commits a height second sees both, and is refused where they differ.
 */
import { Effect } from "effect"
import type { CommittedFile } from "../lake/Manifests.js"
import { stagedPath } from "../lake/Manifests.js"
import type { ParquetSinkService, SinkError } from "../lake/ParquetSink.js"
import { CommitError } from "./commit.js"
import type { AppendDataset } from "./Dataset.js"

export interface RowCounts {
  /** Fails where the staged `files` of a commit of `dataset` disagree with what the run committed of its pair. */
  readonly check: (dataset: string, files: ReadonlyArray<CommittedFile>) => Effect.Effect<void, CommitError | SinkError>
}

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

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`
const heightName = (d: AppendDataset) => d.columns[d.heightColumn].name

/** The check for a run writing `datasets`, or undefined where it writes no counted dataset together with its counting one. */
export const makeRowCounts = (
  datasets: ReadonlyArray<AppendDataset>,
  staging: string,
  sink: ParquetSinkService,
  quarantinedIn: (dataset: string) => number
): RowCounts | undefined => {
  const pairs: Array<Pair> = datasets.flatMap((counted) => {
    const counting = datasets.find((d) => d.name === counted.rowsPerHeight?.dataset)
    return counting && counted.rowsPerHeight
      ? [{ counted, counting, column: counted.rowsPerHeight.column, rows: heightValues(), says: heightValues() }]
      : []
  })
  if (pairs.length === 0) return undefined

  /** `h` and `v` of each row of `SELECT {h}, {v} FROM <the files> {rest}` */
  const read = (dataset: string, files: ReadonlyArray<CommittedFile>, select: string, rest = "") => {
    const paths = files.map((f) => `'${stagedPath(staging, dataset, f.path).replaceAll("'", "''")}'`)
    return Effect.map(sink.query(`SELECT ${select} FROM read_parquet([${paths.join(", ")}]) ${rest}`), (rows) =>
      rows.map((r) => [Number(r.h), Number(r.v)] as const)
    )
  }

  /** Records `value` at `height` on one side of `pair`: the message where the other side said otherwise. */
  const record = (pair: Pair, side: "rows" | "says", height: number, value: number): string | undefined => {
    pair[side].set(height, value)
    const other = (side === "rows" ? pair.says : pair.rows).get(height)
    if (other === undefined || other === value) return undefined
    const [rows, says] = side === "rows" ? [value, other] : [other, value]
    return `${pair.counted.name} at height ${height}: ${rows} rows, but ${pair.counting.name}.${pair.column} is ${says} there: the indexer answers the two lists from different histories (two deployments behind one address?); not committed. Rows committed before may mix them: once it answers from one, roll back below the height where they part (chain-lake rollback --to-height)`
  }

  const counted = (pair: Pair, files: ReadonlyArray<CommittedFile>) =>
    Effect.map(read(pair.counted.name, files, `${ident(heightName(pair.counted))} AS h, count(*) AS v`, "GROUP BY 1"), (found) => {
      const byHeight = new Map(found)
      let [low, high] = [Infinity, -Infinity]
      for (const h of byHeight.keys()) [low, high] = [Math.min(low, h), Math.max(high, h)]
      for (let h = low + 1; h < high; h++) {
        const problem = record(pair, "rows", h, byHeight.get(h) ?? 0)
        if (problem) return problem
      }
      return undefined
    })

  const counting = (pair: Pair, files: ReadonlyArray<CommittedFile>) =>
    Effect.map(read(pair.counting.name, files, `${ident(heightName(pair.counting))} AS h, ${ident(pair.column)} AS v`), (found) => {
      for (const [h, v] of found) {
        const problem = record(pair, "says", h, v)
        if (problem) return problem
      }
      return undefined
    })

  return {
    check: (dataset, files) =>
      files.length === 0
        ? Effect.void
        : Effect.forEach(
            // (a dataset some of whose records were quarantined holds fewer rows than counted: not comparable)
            pairs.filter((p) => (p.counted.name === dataset || p.counting.name === dataset) && quarantinedIn(p.counted.name) === 0),
            (pair) =>
              Effect.flatMap(pair.counted.name === dataset ? counted(pair, files) : counting(pair, files), (problem) =>
                problem ? Effect.fail(new CommitError({ message: problem })) : Effect.void
              ),
            { discard: true }
          )
  }
}
