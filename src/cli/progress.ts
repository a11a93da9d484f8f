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
        // the ETA from the dataset's rate since the start: cli-progress's own, from its last updates, read 1 s where 7 were left (rows come in bursts)
        format: " {dataset} |{bar}| {value}/{total} {unit} | {rate}/s | ETA {eta}",
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
          bars.set(name, multi.create(Math.max(1, plan.unit === "snapshot" ? 1 : plan.todo), 0, { dataset: name.padEnd(16), unit, rate: 0, eta: "?" }))
        },
        rows: (name, n) => {
          rows.set(name, (rows.get(name) ?? 0) + n)
          const plan = plans.get(name)
          const bar = bars.get(name)
          if (bar && plan && plan.unit !== "snapshot") {
            const done = Math.min(plan.todo, rows.get(name)!)
            bar.update(done, { rate: rate(name), eta: etaOf(plan.todo - done, rate(name)) })
          }
        },
        done: (name, result) => {
          const bar = bars.get(name)
          if (bar) bar.update(bar.getTotal(), { rate: rate(name), eta: "0s" })
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
          options.log(`progress: ${[...rows.entries()].map(([k, v]) => `${k} ${ofTotal(v, plans.get(k))}`).join(", ")}`)
        }
      },
      done: (name, result) => options.log(`${name}: ${result.skipped ? `skipped (${result.skipped})` : `${result.rows} rows in ${result.files} files`}`)
    },
    stop: () => {}
  }
}

/** "35501/80593 (44%)" for a ranged plan; a snapshot's rows have no total ahead of time */
const ofTotal = (rows: number, plan: DatasetPlan | undefined): string =>
  plan && plan.kind !== "snapshot" && plan.todo > 0 ? `${Math.min(rows, plan.todo)}/${plan.todo} (${Math.floor((100 * Math.min(rows, plan.todo)) / plan.todo)}%)` : String(rows)
/** seconds left at `perSecond`, as 45s, 3m05s or 2h10m */
export const etaOf = (left: number, perSecond: number): string => {
  if (perSecond <= 0) return "?"
  const s = Math.ceil(left / perSecond)
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
}

/** The progress a command shows on stderr: bars on a terminal (not under CI), log lines otherwise. */
export const stderrProgress = (tty = process.stderr.isTTY === true && process.env.CI === undefined): ProgressRenderer =>
  makeProgress({ tty, log: (line) => process.stderr.write(line + "\n") })

const human = (bytes: number) => (bytes > 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes > 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`)

/**
 * Columns `text` takes in a terminal: East Asian wide and fullwidth chars and most emoji take two,
 * combining marks and zero-width chars none (a table padded by length misaligned "日本の風景").
 */
export const displayWidth = (text: string): number => {
  let width = 0
  for (const ch of text) {
    const c = ch.codePointAt(0)!
    if ((c >= 0x300 && c <= 0x36f) || (c >= 0x200b && c <= 0x200f) || c === 0xfe0f) continue
    width += isWide(c) ? 2 : 1
  }
  return width
}
const isWide = (c: number): boolean =>
  WIDE_SYMBOLS.has(c) ||
  (c >= 0x1100 && c <= 0x115f) ||
  (c >= 0x1f7e0 && c <= 0x1f7eb) ||
  (c >= 0x2e80 && c <= 0xa4cf && c !== 0x303f) ||
  (c >= 0xac00 && c <= 0xd7a3) ||
  (c >= 0xf900 && c <= 0xfaff) ||
  (c >= 0xfe30 && c <= 0xfe4f) ||
  (c >= 0xff00 && c <= 0xff60) ||
  (c >= 0xffe0 && c <= 0xffe6) ||
  (c >= 0x1f300 && c <= 0x1f64f) ||
  (c >= 0x1f680 && c <= 0x1f6ff) ||
  (c >= 0x1f900 && c <= 0x1faff) ||
  (c >= 0x20000 && c <= 0x3fffd)
/** symbols outside the wide blocks that terminals draw two columns wide (Unicode's East Asian Width "W"): ⌚ ⌛ ☕ ♈…♓ ⭐ ⭕ 🀄 and others */
const WIDE_SYMBOLS = new Set([
  0x231a, 0x231b, 0x2b50, 0x2b55, 0x1f004, 0x2614, 0x2615, 0x2648, 0x2649, 0x264a, 0x264b, 0x264c, 0x264d, 0x264e, 0x264f, 0x2650, 0x2651, 0x2652, 0x2653, 0x267f, 0x2693, 0x26a1, 0x26aa, 0x26ab, 0x26bd,
  0x26be, 0x26c4, 0x26c5, 0x26ce, 0x26d4, 0x26ea, 0x26f2, 0x26f3, 0x26f5, 0x26fa, 0x26fd, 0x2705, 0x270a, 0x270b, 0x2728, 0x274c, 0x274e, 0x2753, 0x2754, 0x2755,
  0x2757, 0x2795, 0x2796, 0x2797, 0x27b0, 0x27bf
])

export const table = (rows: ReadonlyArray<Record<string, string>>): string => {
  if (rows.length === 0) return "(no rows)"
  const cols = Object.keys(rows[0])
  const width = cols.map((c) => Math.max(displayWidth(c), ...rows.map((r) => displayWidth(r[c]))))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c + " ".repeat(Math.max(0, width[i] - displayWidth(c)))).join("  ").trimEnd()
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
