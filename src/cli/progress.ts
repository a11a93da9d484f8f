/**
 * Renders export progress on stderr: the plan, then a line per dataset and a total line (elapsed
 * time, rows, rows/s), redrawn as bars on a terminal, logged otherwise (every 5 s, and each
 * dataset's last line when it is done); and the final summary table.
 *
 * A plan counts its source's records (txs, EVM receipts) or blocks, and a record gives any number
 * of rows (a receipt many logs, a tx none or several transfers): a line names both counts, each
 * with its unit, and its percentage is of the records planned, never rows against records.
 */
import type { DatasetCompaction } from "../lake/compaction.js"
import cliProgress from "cli-progress"
import { DATASETS, EXPORTED_DATASETS } from "../datasets/index.js"
import { logsAreJson } from "./output.js"
import { requestsCounted, retriedTotal, retriesText, type RetryCounts } from "../http/Retries.js"
import type { DatasetPlan, DatasetResult, ExportObserver } from "../engine/export.js"

export interface ProgressRenderer {
  readonly observer: ExportObserver
  readonly stop: () => void
}

/** What the observer has said of one planned dataset. */
export interface Tally {
  readonly name: string
  readonly plan: DatasetPlan
  /** what one unit of the plan is: "blocks", or its source's records ("txs", "evm txs") */
  readonly noun: string
  /** when it was planned (ms since the epoch): its rates count from there */
  readonly since: number
  fetched: number
  rows: number
  result?: DatasetResult
}

/** A piece of a line, and when it goes if the line is too wide: the highest `drop` first, 0 never. */
export interface Part {
  readonly text: string
  readonly drop: number
}

/** The names' column (padded to the longest name) and the columns a line may take. */
export interface Layout {
  readonly nameWidth: number
  readonly width: number
}

/** What a dataset's plan counts, from the registry: blocks for a height source, else the records of its source, named as its endpoint ("evm-txs": evm txs). */
export const unitNoun = (plan: DatasetPlan): string => {
  const d = DATASETS.find((x) => x.name === plan.dataset)
  if (d?.kind === "append" && d.list.unit === "position") return d.list.endpoint.replace(/-/g, " ")
  return plan.unit === "height" ? "blocks" : "records"
}

/** 131,617: thousands separated by commas whatever the locale (the lines are read, compared and grepped) */
export const count = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
/** "1 row", "131,617 rows" */
export const counted = (n: number, one: string) => `${count(n)} ${one}${Math.round(n) === 1 ? "" : "s"}`

/** seconds as mm:ss, or h:mm:ss from an hour on; undefined for what is no time (NaN, Infinity, negative), which is not shown */
export const clock = (seconds: number): string | undefined => {
  if (!Number.isFinite(seconds) || seconds < 0) return undefined
  const s = Math.round(seconds)
  const two = (n: number) => String(n).padStart(2, "0")
  const mmss = `${two(Math.floor(s / 60) % 60)}:${two(s % 60)}`
  return s < 3600 ? mmss : `${Math.floor(s / 3600)}:${mmss}`
}

/** the time `left` units take at `perSecond`, as clock() says it; undefined while there is no rate */
export const etaOf = (left: number, perSecond: number): string | undefined =>
  perSecond > 0 ? clock(Math.ceil(Math.max(0, left) / perSecond)) : undefined

/**
 * 100 once the dataset is done; before, the plan's units read, at most 99: units all read are not
 * yet written and committed. A snapshot has no units to count: 0 until done.
 */
export const percentOf = (t: Tally): number =>
  t.result ? 100 : t.plan.kind === "snapshot" || t.plan.todo <= 0 ? 0 : Math.min(99, Math.floor((100 * t.fetched) / t.plan.todo))

/** a bar narrower than this says little: none is drawn */
const MIN_BAR = 10
const MAX_BAR = 30
/** room a dataset's line keeps for its text after the bar: "100% · evm internal txs 115,848 of 115,848 · 131,617 rows · done" (longer text drops its bar) */
const LINE_TEXT = 63
/** the bar is dropped after the parts with a higher `drop` (files, the ETA, the rate), before the others */
const BAR_DROP = 1.5

/** The width of every bar of a layout, the same on each line so that the columns after it align; 0 where none fits. */
export const barSize = (layout: Layout): number => {
  const size = Math.min(MAX_BAR, layout.width - layout.nameWidth - LINE_TEXT - 3)
  return size < MIN_BAR ? 0 : size
}

/** a bar `size` wide, `progress` (0..1) of it full */
export const barOf = (progress: number, size: number): string => {
  const full = Math.round(Math.min(1, Math.max(0, progress)) * size)
  return `[${"█".repeat(full)}${"░".repeat(size - full)}]`
}

/**
 * `head`, then as many `parts` as fit in `width` columns (the highest `drop` dropped first); with
 * `bar`, the bar after the head while it fits. What never drops and still does not fit is cut,
 * ending in "…".
 */
export const fitLine = (head: string, parts: ReadonlyArray<Part>, width: number, bar?: string): string => {
  const levels = [...new Set([...parts.map((p) => p.drop), ...(bar ? [BAR_DROP] : [])])].sort((a, b) => b - a)
  for (const level of levels) {
    const line = `${head}${bar && level >= BAR_DROP ? ` ${bar}` : ""} ${joined(parts.filter((p) => p.drop <= level))}`
    if (displayWidth(line) <= width) return line
  }
  return cut(`${head} ${joined(parts.filter((p) => p.drop === 0))}`, width)
}
const joined = (parts: ReadonlyArray<Part>) => parts.map((p) => p.text).join(" · ")

/** `text` in at most `width` columns: cut, ending in "…", where it is wider */
export const cut = (text: string, width: number): string => {
  if (displayWidth(text) <= width) return text
  let out = ""
  for (const ch of text) {
    if (displayWidth(out + ch) > width - 1) break
    out += ch
  }
  return out + "…"
}

/** "txs 40 of 60" with the percentage, rows and, while it runs, rows/s and the ETA (hidden while unknown, "writing" once all is read); once done, files and "done". */
const datasetParts = (t: Tally, now: number): ReadonlyArray<Part> => {
  const r = t.result
  if (r?.skipped !== undefined) return [{ text: `skipped (${r.skipped})`, drop: 0 }]
  const what =
    t.plan.kind === "snapshot"
      ? `snapshot at ${r?.snapshotHeight ?? t.plan.watermark}`
      : `${t.noun} ${count(t.fetched)} of ${count(t.plan.todo)}`
  const lead = [
    { text: `${percentOf(t)}%`.padStart(4), drop: 0 },
    { text: what, drop: 0 }
  ]
  // a dataset done keeps "done" on the narrowest line: what it read goes first (its rows say it)
  if (r)
    return [
      lead[0],
      { text: what, drop: 1 },
      { text: counted(r.rows, "row"), drop: 0 },
      { text: counted(r.files, "file"), drop: 2 },
      { text: "done", drop: 0 }
    ]
  if (t.plan.kind === "snapshot") return lead
  const seconds = (now - t.since) / 1000
  const perSecond = (n: number) => (seconds > 0 ? n / seconds : 0)
  // all read: what is left is writing and committing, which no rate of reading times
  const left = etaOf(t.plan.todo - t.fetched, perSecond(t.fetched))
  const eta = t.fetched >= t.plan.todo ? "writing" : left && `ETA ${left}`
  return [
    ...lead,
    { text: counted(t.rows, "row"), drop: 0 },
    { text: `${count(perSecond(t.rows))} rows/s`, drop: 4 },
    ...(eta ? [{ text: eta, drop: 2 }] : [])
  ]
}

/** One dataset's line, at `now` (ms); with `bar`, a bar of its percentage where the width leaves room for one (barSize). */
export const datasetLine = (t: Tally, layout: Layout, now: number, bar = false): string => {
  const size = bar && t.result?.skipped === undefined ? barSize(layout) : 0
  return fitLine(
    t.name.padEnd(layout.nameWidth),
    datasetParts(t, now),
    layout.width,
    size > 0 ? barOf(percentOf(t) / 100, size) : undefined
  )
}

/** One dataset's plan: the units to fetch, named; then its heights, what is committed already (if any), its shards, as the width allows. */
export const planLine = (t: Tally, layout: Layout): string => {
  const { plan } = t
  const parts =
    plan.kind === "snapshot"
      ? [{ text: `snapshot at ${plan.watermark}`, drop: 0 }]
      : [
          { text: `${count(plan.todo)} ${t.noun} to fetch`, drop: 0 },
          ...(plan.heights ? [{ text: `heights ${plan.heights[0]}..${plan.heights[1]}`, drop: 2 }] : []),
          // (nothing committed before: the common case, not worth its columns)
          ...(plan.done > 0 ? [{ text: `${count(plan.done)} already committed`, drop: 1 }] : []),
          { text: `${plan.shards} shard${plan.shards === 1 ? "" : "s"}`, drop: 3 }
        ]
  return fitLine(`${t.name}:`.padEnd(layout.nameWidth + 1), parts, layout.width)
}

/**
 * The run's line: datasets done, rows, rows/s, the requests asked again after a transient failure
 * where there were any (a server's limits slow a run: said, not left to look like a hang), and the
 * time elapsed (`final`: the time the run took).
 */
export const totalLine = (
  tallies: ReadonlyArray<Tally>,
  layout: Layout,
  seconds: number,
  final: boolean,
  retried: RetryCounts = {}
): string => {
  const rows = tallies.reduce((n, t) => n + (t.result?.rows ?? t.rows), 0)
  const time = clock(seconds) ?? "00:00"
  const again = retriedTotal(retried)
  return fitLine(
    "total".padEnd(layout.nameWidth),
    [
      { text: `${tallies.filter((t) => t.result).length} of ${tallies.length} datasets done`, drop: 0 },
      { text: `${count(rows)} rows`, drop: 0 },
      { text: `${count(seconds > 0 ? rows / seconds : 0)} rows/s`, drop: 1 },
      ...(again > 0 ? [{ text: `${count(again)} asked again (${retriesText(retried)})`, drop: 2 }] : []),
      { text: final ? `in ${time}` : `${time} elapsed`, drop: 0 }
    ],
    layout.width
  )
}

export interface ProgressOptions {
  readonly tty: boolean
  /** events as JSON objects, one a line (--log-format json) */
  readonly json?: boolean
  readonly log: (line: string) => void
  /** the datasets the run may show: names are padded to the longest of these and of those planned */
  readonly names?: ReadonlyArray<string>
  /** the columns a line may take (default: stderr's, 80 where it is no terminal) */
  readonly columns?: () => number
  /** ms between two rounds of log lines (not on a terminal) */
  readonly every?: number
  /** the terminal the bars are drawn on (default: stderr) */
  readonly stream?: NodeJS.WritableStream
  /** the run's requests asked again so far, by why (Retries) */
  readonly retried?: () => RetryCounts
}

/** The columns of stderr's terminal; 80 where it is none (a log read in a terminal later). */
const stderrColumns = () => (process.stderr.isTTY && process.stderr.columns > 0 ? process.stderr.columns : 80)

/** The observer's events, kept per dataset, and the lines they make now. */
const tracker = (options: ProgressOptions) => {
  const started = Date.now()
  const tallies = new Map<string, Tally>()
  const layout = (): Layout => ({
    nameWidth: Math.max("total".length, ...(options.names ?? []).map((n) => n.length), ...[...tallies.keys()].map((n) => n.length)),
    width: (options.columns ?? stderrColumns)()
  })
  return {
    tallies,
    planned: (name: string, plan: DatasetPlan): Tally => {
      const t: Tally = { name, plan, noun: unitNoun(plan), since: Date.now(), fetched: 0, rows: 0 }
      tallies.set(name, t)
      return t
    },
    add: (name: string, key: "fetched" | "rows", n: number) => {
      const t = tallies.get(name)
      if (t) t[key] += n
    },
    done: (name: string, result: DatasetResult): Tally | undefined => {
      const t = tallies.get(name)
      if (t) t.result = result
      return t
    },
    /** whether anything ran (a dry run plans only) */
    ran: () => [...tallies.values()].some((t) => t.result !== undefined || t.fetched !== 0 || t.rows !== 0),
    planLine: (t: Tally) => planLine(t, layout()),
    line: (t: Tally, bar = false) => datasetLine(t, layout(), Date.now(), bar),
    total: (final: boolean) => totalLine([...tallies.values()], layout(), (Date.now() - started) / 1000, final, options.retried?.()),
    retried: (): RetryCounts => options.retried?.() ?? {}
  }
}
type Tracker = ReturnType<typeof tracker>

export const makeProgress = (options: ProgressOptions): ProgressRenderer => {
  const track = tracker(options)
  return options.json
    ? periodic(track, options, jsonLines(track))
    : options.tty
      ? bars(track, options)
      : periodic(track, options, textLines(track))
}

/** On a terminal: the plan above, the total line, then a bar per dataset, redrawn 10 times a second until stop. */
const bars = (track: Tracker, options: ProgressOptions): ProgressRenderer => {
  // each bar's line is read from the tally as it is drawn: cli-progress's own values, ETA and width are not used
  const multi = new cliProgress.MultiBar({
    format: (_o, _p, payload: { line: () => string }) => payload.line(),
    hideCursor: true,
    clearOnComplete: false,
    stopOnComplete: false,
    ...(options.stream ? { stream: options.stream } : {})
  })
  let drawing = false
  let stopped = false
  // a line logged before the first bar: cli-progress keeps logs until it draws, which it never does if the run fails before its plan
  const say = (line: string) => (drawing ? multi.log(line + "\n") : options.log(line))
  return {
    observer: {
      notice: say,
      planned: (name, plan) => {
        const t = track.planned(name, plan)
        if (!drawing) multi.create(1, 0, { line: () => track.total(stopped) })
        drawing = true
        say(track.planLine(t))
        multi.create(1, 0, { line: () => track.line(t, true) })
      },
      fetched: (name, n) => track.add(name, "fetched", n),
      rows: (name, n) => track.add(name, "rows", n),
      done: (name, result) => void track.done(name, result)
    },
    stop: () => {
      stopped = true
      // cli-progress prints logged lines at its next redraw, and stop() redraws the bars only: one redraw first, so that lines logged since the last are printed
      if (drawing) multi.update()
      multi.stop()
    }
  }
}

/** What a renderer that writes whole lines says, and when: each planned dataset, those under way (every `every` ms), each one done, the total. */
interface Lines {
  readonly planned: (t: Tally) => string
  readonly under: (t: Tally) => string
  readonly done: (t: Tally, result: DatasetResult) => string
  readonly total: (final: boolean) => string
}

/** Not on a terminal: the plan; every `every` ms the datasets under way and the total; each dataset's line when done; the total at stop. */
const periodic = (track: Tracker, options: ProgressOptions, lines: Lines): ProgressRenderer => {
  let lastLog = Date.now()
  // a log's total line is fitted to 80 columns, which leaves no room for them: the requests asked
  // again get a line of their own when more were (JSON lines carry them in the total's event)
  let saidRetried = 0
  const sayRetried = () => {
    const counts = track.retried()
    if (options.json || retriedTotal(counts) <= saidRetried) return
    saidRetried = retriedTotal(counts)
    options.log(`${requestsCounted(saidRetried)} asked again so far (${retriesText(counts)})`)
  }
  const tick = () => {
    if (Date.now() - lastLog < (options.every ?? 5000)) return
    lastLog = Date.now()
    for (const t of track.tallies.values()) if (!t.result && (t.fetched !== 0 || t.rows !== 0)) options.log(lines.under(t))
    options.log(lines.total(false))
    sayRetried()
  }
  return {
    observer: {
      notice: (m) => options.log(m),
      planned: (name, plan) => options.log(lines.planned(track.planned(name, plan))),
      fetched: (name, n) => {
        track.add(name, "fetched", n)
        tick()
      },
      rows: (name, n) => {
        track.add(name, "rows", n)
        tick()
      },
      done: (name, result) => {
        const t = track.done(name, result)
        if (t) options.log(lines.done(t, result))
      }
    },
    stop: () => {
      if (track.ran()) options.log(lines.total(true))
      sayRetried()
    }
  }
}

/** Log lines of text, fitted to the width (the same as the bars' lines). */
const textLines = (track: Tracker): Lines => ({
  planned: track.planLine,
  under: (t) => track.line(t),
  done: (t) => track.line(t),
  total: track.total
})

/** One event as a JSON line: time, level, what happened, and its fields. */
const event = (name: string, fields: Record<string, unknown>) =>
  JSON.stringify({ time: new Date().toISOString(), level: "info", event: name, ...fields })

/** A dataset's counts as an event's fields: records read of those planned (in the plan's unit) and rows written. */
const countsOf = (t: Tally) => ({
  dataset: t.name,
  unit: t.noun,
  fetched: t.fetched,
  todo: t.plan.todo,
  rows: t.rows,
  percent: percentOf(t)
})

/** `--log-format json`: the same moments as events, one JSON object a line. */
const jsonLines = (track: Tracker): Lines => {
  const started = Date.now()
  return {
    planned: (t) =>
      event("planned", {
        dataset: t.name,
        kind: t.plan.kind,
        unit: t.noun,
        todo: t.plan.todo,
        done: t.plan.done,
        heights: t.plan.heights,
        shards: t.plan.shards,
        estimated_requests: t.plan.estimatedRequests
      }),
    under: (t) => event("progress", countsOf(t)),
    done: (t, r) =>
      event("done", {
        ...countsOf(t),
        files: r.files,
        bytes: r.bytes,
        quarantined: r.quarantined,
        ...(r.skipped ? { skipped: r.skipped } : {})
      }),
    total: (final) => {
      const tallies = [...track.tallies.values()]
      const rows = tallies.reduce((sum, t) => sum + t.rows, 0)
      const seconds = (Date.now() - started) / 1000
      return event(final ? "finished" : "total", {
        datasets: tallies.length,
        done: tallies.filter((t) => t.result).length,
        rows,
        seconds,
        rows_per_second: seconds > 0 ? Math.round(rows / seconds) : 0,
        ...(retriedTotal(track.retried()) > 0 ? { retried: track.retried() } : {})
      })
    }
  }
}

/** Whether stderr is a terminal to draw bars on (not under CI). */
export const stderrIsTerminal = () => process.stderr.isTTY === true && process.env.CI === undefined

/** The progress a command shows on stderr: bars on a terminal (not under CI), log lines otherwise; names padded to the longest of `names` (default: every exported dataset). */
export const stderrProgress = (
  options: { readonly tty?: boolean; readonly names?: ReadonlyArray<string>; readonly retried?: () => RetryCounts } = {}
): ProgressRenderer =>
  makeProgress({
    tty: options.tty ?? stderrIsTerminal(),
    json: logsAreJson(),
    names: options.names ?? EXPORTED_DATASETS.map((d) => d.name),
    log: (line) => process.stderr.write(line + "\n"),
    ...(options.retried ? { retried: options.retried } : {})
  })

const human = (bytes: number) =>
  bytes > 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes > 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`

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
  0x231a, 0x231b, 0x2b50, 0x2b55, 0x1f004, 0x2614, 0x2615, 0x2648, 0x2649, 0x264a, 0x264b, 0x264c, 0x264d, 0x264e, 0x264f, 0x2650, 0x2651,
  0x2652, 0x2653, 0x267f, 0x2693, 0x26a1, 0x26aa, 0x26ab, 0x26bd, 0x26be, 0x26c4, 0x26c5, 0x26ce, 0x26d4, 0x26ea, 0x26f2, 0x26f3, 0x26f5,
  0x26fa, 0x26fd, 0x2705, 0x270a, 0x270b, 0x2728, 0x274c, 0x274e, 0x2753, 0x2754, 0x2755, 0x2757, 0x2795, 0x2796, 0x2797, 0x27b0, 0x27bf
])

export const table = (rows: ReadonlyArray<Record<string, string>>): string => {
  if (rows.length === 0) return "(no rows)"
  const cols = Object.keys(rows[0])
  // (a loop: a spread of 300,000 rows' widths as arguments overflowed the stack)
  const width = cols.map((c) => rows.reduce((w, r) => Math.max(w, displayWidth(r[c])), displayWidth(c)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => c + " ".repeat(Math.max(0, width[i] - displayWidth(c))))
      .join("  ")
      .trimEnd()
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
      note: r.skipped
        ? `skipped: ${r.skipped}`
        : r.snapshotHeight !== undefined
          ? `snapshot ${r.snapshotHeight} (${r.consistency})`
          : r.quarantined > 0
            ? `${r.quarantined} quarantined`
            : ""
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
  const extra = [
    r.deleted > 0 ? `${r.deleted} retired file(s) deleted` : "",
    r.skipped.length > 0 ? `${r.skipped.length} merge(s) left for later (${r.skipped[0]})` : ""
  ].filter(Boolean)
  return `${r.dataset}: ${what}; ${r.filesBefore} → ${r.filesAfter} files${extra.length > 0 ? `; ${extra.join("; ")}` : ""}`
}
