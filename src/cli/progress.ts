/**
 * Renders export progress: one bar per dataset on a TTY (rows, rate, ETA from the API's
 * totals), plain log lines otherwise; and the final summary table.
 */
import type { DatasetCompaction } from "../lake/compaction.js"
import cliProgress from "cli-progress"
import type { DatasetPlan, DatasetResult, ExportObserver } from "../engine/export.js"

export interface ProgressRenderer {
  readonly observer: ExportObserver
  readonly stop: () => void
}

export const makeProgress = (options: { tty: boolean; log: (line: string) => void }): ProgressRenderer => {
  const started = Date.now()
  const rows = new Map<string, number>()
  const plans = new Map<string, DatasetPlan>()
  if (options.tty) {
    const multi = new cliProgress.MultiBar(
      {
        format: " {dataset} |{bar}| {value}/{total} {unit} | {rate}/s | ETA {eta_formatted}",
        hideCursor: true,
        clearOnComplete: false,
        stopOnComplete: false,
        etaBuffer: 50
      },
      cliProgress.Presets.shades_classic
    )
    const bars = new Map<string, cliProgress.SingleBar>()
    const rate = (name: string) => Math.round((rows.get(name) ?? 0) / Math.max(0.001, (Date.now() - started) / 1000))
    return {
      observer: {
        notice: (m) => multi.log(m + "\n"),
        planned: (name, plan) => {
          plans.set(name, plan)
          const unit = plan.unit === "snapshot" ? "rows" : plan.unit === "height" ? "blocks" : "rows"
          bars.set(name, multi.create(Math.max(1, plan.unit === "snapshot" ? 1 : plan.todo), 0, { dataset: name.padEnd(16), unit, rate: 0 }))
        },
        rows: (name, n) => {
          rows.set(name, (rows.get(name) ?? 0) + n)
          const plan = plans.get(name)
          const bar = bars.get(name)
          if (bar && plan && plan.unit !== "snapshot") bar.update(Math.min(plan.todo, rows.get(name)!), { rate: rate(name) })
        },
        done: (name, result) => {
          const bar = bars.get(name)
          if (bar) bar.update(bar.getTotal(), { rate: rate(name) })
          void result
        }
      },
      stop: () => multi.stop()
    }
  }
  let lastLog = Date.now()
  return {
    observer: {
      notice: (m) => options.log(m),
      planned: (name, plan) => {
        plans.set(name, plan)
        options.log(
          plan.kind === "snapshot"
            ? `${name}: snapshot at ${plan.watermark}`
            : `${name}: ${plan.todo} ${plan.unit === "height" ? "blocks" : "rows"} to fetch${plan.heights ? ` (heights ${plan.heights[0]}..${plan.heights[1]})` : ""}, ${plan.done} already committed, ${plan.shards} shards`
        )
      },
      rows: (name, n) => {
        rows.set(name, (rows.get(name) ?? 0) + n)
        const now = Date.now()
        if (now - lastLog > 5000) {
          lastLog = now
          options.log(`progress: ${[...rows.entries()].map(([k, v]) => `${k} ${v}`).join(", ")}`)
        }
      },
      done: (name, result) => options.log(`${name}: ${result.skipped ? `skipped (${result.skipped})` : `${result.rows} rows in ${result.files} files`}`)
    },
    stop: () => {}
  }
}

const human = (bytes: number) => (bytes > 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes > 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`)

export const table = (rows: ReadonlyArray<Record<string, string>>): string => {
  if (rows.length === 0) return "(no rows)"
  const cols = Object.keys(rows[0])
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => [...r[c]].length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(width[i])).join("  ").trimEnd()
  return [line(cols), line(width.map((w) => "-".repeat(w))), ...rows.map((r) => line(cols.map((c) => r[c])))].join("\n")
}

export const summaryTable = (results: ReadonlyArray<DatasetResult>, seconds: number): string =>
  table(
    results.map((r) => ({
      dataset: r.dataset,
      rows: String(r.rows),
      files: String(r.files),
      size: human(r.bytes),
      "rows/s": seconds > 0 ? String(Math.round(r.rows / seconds)) : "-",
      note: r.skipped ? `skipped: ${r.skipped}` : r.snapshotHeight !== undefined ? `snapshot ${r.snapshotHeight} (${r.consistency})` : r.quarantined > 0 ? `${r.quarantined} quarantined` : ""
    }))
  )

/** One dataset's compaction in a line: what was merged, what was deleted, what was left for later. */
export const compactionLine = (r: DatasetCompaction, dryRun = false): string => {
  const files = r.merged.reduce((s, m) => s + m.files, 0)
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`
  const before = r.merged.reduce((s, m) => s + m.bytesBefore, 0)
  const after = r.merged.reduce((s, m) => s + m.bytesAfter, 0)
  const what =
    r.merged.length === 0
      ? "nothing to merge"
      : dryRun
        ? `would merge ${files} files (${mb(before)}) into ${r.merged.length} in ${new Set(r.merged.map((m) => m.partition)).size} partition(s)`
        : `${files} files (${mb(before)}) into ${r.merged.length} (${mb(after)}) in ${new Set(r.merged.map((m) => m.partition)).size} partition(s)`
  const extra = [r.deleted > 0 ? `${r.deleted} retired file(s) deleted` : "", r.skipped.length > 0 ? `${r.skipped.length} merge(s) left for later (${r.skipped[0]})` : ""].filter(Boolean)
  return `${r.dataset}: ${what}; ${r.filesBefore} → ${r.filesAfter} files${extra.length > 0 ? `; ${extra.join("; ")}` : ""}`
}
