/**
 * The run reports a lake keeps in `_runs/` (lake/layout.ts runReportFile): one per export (its
 * report, indexer and duration), one per export stopped before its end (what it committed until
 * then), one per pipeline run. Each is redacted here, where it leaves the process.
 */
import { rename, rm, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import type { RetryCounts } from "../http/Retries.js"
import type { ExportObserver, ExportReport } from "../engine/export.js"
import type { DatasetCompaction } from "../lake/compaction.js"
import { makeFolder } from "../lake/files.js"
import { runReportFile } from "../lake/layout.js"
import type { RoundResult } from "../sampling/sampler.js"
import { redactedJson } from "../secrets/redact.js"

/** What a run committed to one dataset. */
export interface CommittedToDataset {
  readonly dataset: string
  readonly rows: number
  readonly files: number
}

/** Writes `report` to the lake's path `rel`, making its folder. */
const writeReport = async (out: string, rel: string, report: unknown) => {
  await makeFolder(dirname(join(out, rel)))
  await writeFile(join(out, rel), redactedJson(report, 1))
}

/** Writes an export's run report into the lake at `out`; returns its path in the lake. */
export const writeExportReport = (
  out: string,
  report: ExportReport,
  run: { readonly indexerUrl: string; readonly seconds: number; readonly retried?: RetryCounts }
) =>
  Effect.promise(async () => {
    const rel = runReportFile(report.startedAt)
    await writeReport(out, rel, { ...report, ...run })
    return rel
  })

/** Writes the report of an export stopped before its end (Ctrl-C, SIGTERM) into the lake at `out`; returns its path in the lake. */
export const writeStoppedExportReport = async (
  out: string,
  run: {
    readonly startedAt: string
    readonly indexerUrl: string
    readonly committed: ReadonlyArray<CommittedToDataset>
    readonly retried?: RetryCounts
  }
) => {
  const rel = runReportFile(run.startedAt, "interrupted")
  await writeReport(out, rel, {
    startedAt: run.startedAt,
    stoppedAt: new Date().toISOString(),
    interrupted: true,
    indexerUrl: run.indexerUrl,
    committed: run.committed,
    ...(run.retried ? { retried: run.retried } : {})
  })
  return rel
}

/** Writes the report of an export that failed after it committed something (what, and why it failed) into the lake at `out`; returns its path there. */
export const writeFailedExportReport = async (
  out: string,
  run: {
    readonly startedAt: string
    readonly indexerUrl: string
    readonly committed: ReadonlyArray<CommittedToDataset>
    readonly error: string
    readonly retried?: RetryCounts
  }
) => {
  const rel = runReportFile(run.startedAt, "failed")
  await writeReport(out, rel, {
    startedAt: run.startedAt,
    stoppedAt: new Date().toISOString(),
    failed: run.error,
    indexerUrl: run.indexerUrl,
    committed: run.committed,
    ...(run.retried ? { retried: run.retried } : {})
  })
  return rel
}

/** What a run's compaction merged in one dataset: `merges` new files in place of `files`. */
export interface MergedInDataset {
  readonly dataset: string
  readonly merges: number
  readonly files: number
}

/** What a run committed, in words: "txs +230 rows in 6 files, blocks …; compacted txs 12 files into 2", or "nothing yet". */
export const describeCommitted = (committed: ReadonlyArray<CommittedToDataset>, merged: ReadonlyArray<MergedInDataset> = []) => {
  const added = committed.map((d) => `${d.dataset} +${d.rows} row${d.rows === 1 ? "" : "s"} in ${d.files} file${d.files === 1 ? "" : "s"}`)
  const compacted = merged.map((d) => `${d.dataset} ${d.files} files into ${d.merges}`)
  if (added.length === 0 && compacted.length === 0) return "nothing yet"
  return [added.join(", "), compacted.length > 0 ? `compacted ${compacted.join(", ")}` : ""].filter((p) => p !== "").join("; ")
}

/**
 * What a run commits, counted as it happens, for the report of a run that is stopped before its
 * end: the export's commits (`observe` wraps the run's observer), route sampling's (`sampled`) and
 * the compaction's merges (`merged`), each told inside its commit's uninterruptible step.
 */
export const commitTally = () => {
  const byDataset = new Map<string, { rows: number; files: number }>()
  const mergedIn = new Map<string, { merges: number; files: number }>()
  const add = (dataset: string, files: ReadonlyArray<{ readonly rows: number }>) => {
    const c = byDataset.get(dataset) ?? { rows: 0, files: 0 }
    byDataset.set(dataset, { rows: c.rows + files.reduce((s, f) => s + f.rows, 0), files: c.files + files.length })
  }
  return {
    observe: (observer: ExportObserver): ExportObserver => ({
      ...observer,
      committed: (dataset, file) => {
        observer.committed?.(dataset, file)
        add(dataset, [file])
      }
    }),
    sampled: add,
    merged: (dataset: string, files: ReadonlyArray<unknown>) => {
      const c = mergedIn.get(dataset) ?? { merges: 0, files: 0 }
      mergedIn.set(dataset, { merges: c.merges + 1, files: c.files + files.length })
    },
    committed: (): ReadonlyArray<CommittedToDataset> => [...byDataset].map(([dataset, c]) => ({ dataset, ...c })),
    compacted: (): ReadonlyArray<MergedInDataset> => [...mergedIn].map(([dataset, c]) => ({ dataset, ...c }))
  }
}

/** What a pipeline run did, or why it failed. */
export interface PipelineRunReport {
  readonly pipeline: string
  /** the lake the run wrote, in full (its `out` is relative to the working directory the run was started in) */
  readonly out: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly ok: boolean
  readonly error?: string
  /** stopped by Ctrl-C or SIGTERM (what it committed is kept; the next run goes on from there) */
  readonly interrupted?: boolean
  /** what a run stopped before its end committed: its export's and route sampling's new files */
  readonly committed?: ReadonlyArray<CommittedToDataset>
  /** what the compaction of a run stopped before its end merged */
  readonly merged?: ReadonlyArray<MergedInDataset>
  readonly export?: ExportReport
  readonly routeRound?: RoundResult
  /** snapshot heights deleted by keepSnapshots, per dataset */
  readonly pruned?: Readonly<Record<string, ReadonlyArray<number>>>
  /** what the compaction that ends each run merged and deleted, per dataset */
  readonly compacted?: ReadonlyArray<DatasetCompaction>
  /** the requests the run asked again after a transient failure, by why (none: absent) */
  readonly retried?: RetryCounts
}

/** The path in the lake of the report of pipeline `pipeline`'s run that started at `startedAt`. */
export const pipelineReportFile = (pipeline: string, startedAt: string) => runReportFile(startedAt, `pipeline-${pipeline}`)

/** Writes a pipeline run's report to `path`, whole or not at all (a full disk left 0-byte reports). */
export const writePipelineReport = (path: string, report: PipelineRunReport) =>
  Effect.tryPromise(async () => {
    await makeFolder(dirname(path))
    try {
      await writeFile(`${path}.tmp`, redactedJson(report, 1))
      await rename(`${path}.tmp`, path)
    } finally {
      await rm(`${path}.tmp`, { force: true })
    }
  })
