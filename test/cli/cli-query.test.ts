/** `chain-lake query` and `chain-lake catalog` as a user runs them, and the catalog from another DuckDB client. */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { analyticsViews } from "../../src/analytics/Analytics.js"
import { EXAMPLES } from "../../src/cli/help.js"
import { displayWidth, table } from "../../src/cli/progress.js"
import { tableCell } from "../../src/cli/resultFormats.js"
import { runCli } from "../support/cli.js"
import { queryLake } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

let devnet: Devnet
let data: string
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-q-")
beforeAll(async () => {
  devnet = await startDevnet({ seed: 19, blocks: 150 })
  data = tmp()
  const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", data])
  if (r.code !== 0) throw new Error(r.stderr)
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

/** `query --data DATA …args` with its stdout never read (paused), its stderr kept. */
const unreadQuery = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [join(process.cwd(), "bin", "chain-lake.mjs"), "query", "--data", data, ...args], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout.pause()
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d))
  const exited = new Promise<[number | null, string | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])))
  return { child, stderr: () => stderr, exited }
}

describe("chain-lake query", () => {
  it("binds an integer past 2^63 (amounts are) as HUGEINT", async () => {
    const r = await runCli([
      "query",
      "--data",
      data,
      "SELECT $p AS v, typeof($p) AS t",
      "--param",
      "p=12345678901234567890123",
      "--format",
      "csv"
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe("v,t\n12345678901234567890123,HUGEINT")
  })

  it("Ctrl-C while its answer waits on a reader that does not read: exit 130 with a line saying so, never 0 with the output cut", async () => {
    // stdout is never read: past the pipe's buffer, the answer waits in the process (its run has ended by then, or is about to)
    const { child, stderr, exited } = unreadQuery(["SELECT range, repeat('x', 40) AS pad FROM range(20000)"])
    await new Promise((r) => setTimeout(r, 5_000))
    child.kill("SIGINT")
    const [code, signal] = await exited
    child.stdout.destroy()
    expect(signal).toBeNull()
    expect(code, stderr()).toBe(130)
    // (stopped after its end, as a slow reader leaves it; or before, on a slow machine)
    expect(stderr()).toMatch(
      /^chain-lake: (stopped while its output was still being written \(a slow reader\): what it printed is cut short; the run itself had ended|stopping \(Ctrl-C again stops at once\))$/m
    )
  })

  it("writes csv, json, ndjson and markdown as the rows come: 300,000 rows whole to --output (no file beside it left), and a reader that stops early (| head) ends the query with exit 0", async () => {
    const dir = tmp()
    const out = join(dir, "answer.ndjson")
    const r = await runCli(["query", "--data", data, "--format", "ndjson", "--output", out, "SELECT range AS n FROM range(300000)"])
    expect(r.code, r.stderr).toBe(0)
    const lines = readFileSync(out, "utf8").split("\n")
    expect(lines).toHaveLength(300_001)
    expect([lines[0], lines[299_999], lines[300_000]]).toEqual(['{"n":"0"}', '{"n":"299999"}', ""])
    expect(readdirSync(dir)).toEqual(["answer.ndjson"])
    const child = spawn(
      process.execPath,
      [join(process.cwd(), "bin", "chain-lake.mjs"), "query", "--data", data, "--format", "csv", "SELECT range AS n FROM range(100000000)"],
      {
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    const first = await new Promise<string>((resolve) => child.stdout.once("data", (d) => resolve(String(d))))
    expect(first).toMatch(/^n\n0\n1\n/)
    child.stdout.destroy()
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on("exit", (c, s) => resolve([c, s])))
    expect([code, signal]).toEqual([0, null])
    // the table too (written whole at its end): the reader gone is no error, nor a stack trace
    const table = spawn(
      process.execPath,
      [join(process.cwd(), "bin", "chain-lake.mjs"), "query", "--data", data, "SELECT range AS n FROM range(200000)"],
      {
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let tableErr = ""
    table.stderr.on("data", (d) => (tableErr += d))
    await new Promise<void>((resolve) => table.stdout.once("data", () => resolve()))
    table.stdout.destroy()
    const [tableCode] = await new Promise<[number | null]>((resolve) => table.on("close", (c) => resolve([c])))
    expect(tableCode, tableErr).toBe(0)
    expect(tableErr).toBe("")
  })

  it.skipIf(!existsSync("/usr/bin/script"))(
    "the table shows a terminal an answer's first 10,000 rows, saying it has more; a pipe and --output get every row, 10,000 at a time, saying where later rows widened a column",
    async () => {
      const cli = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(process.cwd(), "bin", "chain-lake.mjs"))}`
      const command = `${cli} query --data ${JSON.stringify(data)} "SELECT range AS n FROM range(25000)"`
      // a terminal: `script` runs the command on a pseudo-terminal (its stdout and stderr both)
      const onTerminal = spawnSync("/usr/bin/script", ["-qec", command, "/dev/null"], { encoding: "utf8", timeout: 60_000 })
      const lines = onTerminal.stdout.split(/\r?\n/)
      expect(lines.filter((l) => /^\d+$/.test(l))).toHaveLength(10_000)
      expect(lines).toContain(
        "chain-lake: the table shows the first 10000 rows; the answer has more: --format csv, json or ndjson writes every row"
      )
      // an answer of exactly 10,000 rows has no more
      const whole = spawnSync("/usr/bin/script", ["-qec", command.replace("25000", "10000"), "/dev/null"], {
        encoding: "utf8",
        timeout: 60_000
      })
      expect(whole.stdout.split(/\r?\n/).filter((l) => /^\d+$/.test(l))).toHaveLength(10_000)
      expect(whole.stdout).not.toContain("has more")
      const piped = await runCli(["query", "--data", data, "SELECT range AS n FROM range(25000)"])
      expect(piped.code, piped.stderr).toBe(0)
      const rows = piped.stdout.split("\n")
      expect(rows.filter((l) => /^\d+$/.test(l))).toHaveLength(25_000)
      // the first block's column fits 9999 and its header; the next ones widen it for 10000 and up
      expect(rows.slice(0, 2)).toEqual(["n", "----"])
      expect(rows.slice(10_001, 10_003)).toEqual(["9999", "10000"])
      expect(piped.stderr).toBe(
        "chain-lake: the table is written 10000 rows at a time: later rows widen columns where their values are wider (--format csv or ndjson for a machine)\n"
      )
      const out = join(tmp(), "table.txt")
      const written = await runCli(["query", "--data", data, "--output", out, "SELECT range AS n FROM range(25000)"])
      expect(written.code, written.stderr).toBe(0)
      expect(readFileSync(out, "utf8")).toBe(piped.stdout)
      // an answer of one block is one table whose columns fit every row, and says nothing
      const one = await runCli(["query", "--data", data, "SELECT range AS n FROM range(10000)"])
      expect([one.stderr, one.stdout.split("\n").slice(0, 3)]).toEqual(["", ["n", "----", "0"]])
    }
  )

  it("a streamed answer: Ctrl-C while it waits on a reader that does not read ends it (130); --timeout counts not the reader's waits, and stops an endless answer to --output with no file left", async () => {
    const bin = join(process.cwd(), "bin", "chain-lake.mjs")
    const { child, stderr, exited } = unreadQuery(["--format", "csv", "SELECT range FROM range(1000000000000)"])
    await new Promise((r) => setTimeout(r, 2_000))
    child.kill("SIGINT")
    expect(await exited, stderr()).toEqual([130, null])
    child.stdout.destroy()
    // a reader that takes 10 s before it reads a 6 s query (~1 s of its own on a quiet machine, a
    // few under a loaded CI's): the query is not stopped
    const slow = spawn(
      process.execPath,
      [bin, "query", "--data", data, "--format", "csv", "--timeout", "6s", "SELECT range FROM range(200000)"],
      {
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    slow.stdout.pause()
    let slowErr = ""
    slow.stderr.on("data", (d) => (slowErr += d))
    let read = ""
    setTimeout(() => {
      slow.stdout.on("data", (d) => (read += d))
      slow.stdout.resume()
    }, 10_000)
    const [slowCode] = await new Promise<[number | null]>((resolve) => slow.on("close", (c) => resolve([c])))
    expect(slowCode, slowErr).toBe(0)
    expect(read.split("\n")).toHaveLength(200_002)
    const dir = tmp()
    const endless = await runCli([
      "query",
      "--data",
      data,
      "--format",
      "csv",
      "--timeout",
      "2s",
      "--output",
      join(dir, "all.csv"),
      "SELECT range FROM range(1000000000000)"
    ])
    expect(endless.code).toBe(1)
    expect(endless.stderr.trim()).toBe(
      "chain-lake: error: the query ran past --timeout 2s and was stopped: narrow it, or give a longer --timeout (0 for no limit)"
    )
    expect(readdirSync(dir)).toEqual([])
  })

  it("the part file of a query killed with -9 is removed by the next query to that --output; a running query's, and any other file, are left; parquet lands through one too, keeping the mode", async () => {
    const dir = tmp()
    const out = join(dir, "all.csv")
    const killed = spawn(
      process.execPath,
      [
        join(process.cwd(), "bin", "chain-lake.mjs"),
        "query",
        "--data",
        data,
        "--format",
        "csv",
        "--output",
        out,
        "SELECT range FROM range(1000000000000)"
      ],
      { stdio: "ignore" }
    )
    const part = `.all.csv.${hostname()}.${killed.pid}.part`
    for (let i = 0; i < 300 && !readdirSync(dir).includes(part); i++) await new Promise((r) => setTimeout(r, 100))
    killed.kill("SIGKILL")
    await new Promise((r) => killed.on("exit", r))
    expect(readdirSync(dir)).toEqual([part])
    // this test's process runs: a part file named for it is a running query's
    const running = `.all.csv.${hostname()}.${process.pid}.part`
    // (one of another host is judged there, not by a PID here)
    const kept = [
      running,
      ".all.csv.other-host.999999999.part",
      ".all.csv.x.part",
      `.other.csv.${hostname()}.999999999.part`,
      "all.csv.9.part"
    ]
    for (const other of kept) writeFileSync(join(dir, other), "kept")
    const next = await runCli(["query", "--data", data, "--format", "csv", "--output", out, "SELECT 1 AS one"])
    expect(next.code, next.stderr).toBe(0)
    expect(readFileSync(out, "utf8")).toBe("one\n1\n")
    expect(readdirSync(dir).sort()).toEqual([...kept, "all.csv"].sort())
    const pq = join(dir, "q.parquet")
    writeFileSync(pq, "old", { mode: 0o600 })
    writeFileSync(join(dir, `.q.parquet.${hostname()}.999999999.part`), "left by a killed query")
    const parquet = await runCli(["query", "--data", data, "--format", "parquet", "--output", pq, "SELECT 2 AS two"])
    expect(parquet.code, parquet.stderr).toBe(0)
    expect(await queryLake(`SELECT * FROM '${pq}'`)).toEqual([{ two: 2 }])
    expect(statSync(pq).mode & 0o777).toBe(0o600)
    expect(readdirSync(dir).filter((f) => f.startsWith(".q.parquet"))).toEqual([])
  })

  it("an answer that fails halfway (a lake file damaged inside) leaves no --output file, and exits 1", async () => {
    const damaged = tmp()
    cpSync(data, damaged, { recursive: true })
    const dir = join(damaged, "txs", "height_bucket=0")
    const files = readdirSync(dir)
      .filter((f) => f.endsWith(".parquet"))
      .sort()
    const last = join(dir, files[files.length - 1])
    const bytes = readFileSync(last)
    bytes.fill(0x41, Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 400)
    writeFileSync(last, bytes)
    const where = tmp()
    const r = await runCli([
      "query",
      "--data",
      damaged,
      "--format",
      "csv",
      "--output",
      join(where, "txs.csv"),
      "SELECT * FROM txs ORDER BY height"
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^chain-lake: error: .*cannot be read \(/)
    expect(readdirSync(where)).toEqual([])
  })

  it("answers over the views, with bound parameters, as a table", async () => {
    const r = await runCli(["query", "--data", data, "SELECT count(*) AS n FROM txs WHERE height <= $h", "--param", "h=100"])
    expect(r.code, r.stderr).toBe(0)
    const expected = Array.from({ length: 100 }, (_, i) => devnet.chain.blockTxCount(i + 1)).reduce((a, b) => a + b, 0)
    expect(r.stdout).toMatch(new RegExp(`^n\\n-+\\n${expected}$`, "m"))
  })

  it("the examples of query --help run as printed, in a shell, over a lake in ./data", async () => {
    const dir = tmp()
    symlinkSync(data, join(dir, "data"))
    // (the stdin example reads it)
    writeFileSync(join(dir, "q.sql"), "SELECT count(*) AS n FROM msg_type_mix")
    for (const example of EXAMPLES.query) {
      const command = example.replace(/^chain-lake /, `"${process.execPath}" "${join(process.cwd(), "bin", "chain-lake.mjs")}" `)
      const r = spawnSync("sh", ["-c", command], { cwd: dir, encoding: "utf8" })
      expect(r.status, `${example}\n${r.stderr}`).toBe(0)
    }
    expect(readFileSync(join(dir, "txs.csv"), "utf8").split("\n")[0]).toMatch(/^height,tx_hash,/)
  })

  it("reads the SQL from stdin with - or --file -, flags before or after the -; blank stdin is no SQL", async () => {
    const sql = "-- the first two blocks\nSELECT height, tx_count FROM blocks\nWHERE height <= 2 ORDER BY height"
    const expected = ["height,tx_count", ...[1, 2].map((h) => `${h},${devnet.chain.blockTxCount(h)}`)]
    for (const args of [
      ["-", "--format", "csv"],
      ["--format", "csv", "-"],
      ["--file", "-", "--format", "csv"]
    ]) {
      const r = await runCli(["query", "--data", data, ...args], { input: sql })
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0)
      expect(r.stdout.trim().split("\n"), args.join(" ")).toEqual(expected)
    }
    const blank = await runCli(["query", "--data", data, "-"], { input: " \n" })
    expect([blank.code, blank.stderr, blank.stdout]).toEqual([2, "chain-lake: error: no SQL: stdin is empty\n", ""])
    const both = await runCli(["query", "--data", data, "-", "--file", "-"], { input: sql })
    expect([both.code, both.stderr]).toEqual([2, "chain-lake: error: give the SQL as an argument or with --file, not both\n"])
  })

  it("never runs an option as SQL: an unknown one is a usage error in one line (a mistyped one gets the nearest); SQL that opens with a comment runs", async () => {
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [["--nope"], "Received unknown argument: '--nope' (chain-lake query --help lists the flags)"],
      [["--nope=1", "SELECT 1"], "Received unknown argument: '--nope=1' (chain-lake query --help lists the flags)"],
      [
        ["--formt", "csv", "SELECT 1"],
        "Received unknown argument: '--formt': did you mean --format? (chain-lake query --help lists the flags)"
      ],
      [["-x"], "Received unknown argument: '-x' (chain-lake query --help lists the flags)"]
    ]
    for (const [args, message] of cases) {
      const r = await runCli(["query", "--data", data, ...args])
      expect([r.code, r.stdout, r.stderr], args.join(" ")).toEqual([2, "", `chain-lake: error: ${message}\n`])
    }
    const commented = await runCli(["query", "--data", data, "--format", "csv", "-- the answer\nSELECT 42 AS n"])
    expect([commented.code, commented.stdout]).toEqual([0, "n\n42\n"])
  })

  it("--format ndjson is json's objects one a line (none for no rows); markdown is a table with | \\ and line breaks escaped, every value whole", async () => {
    const sql =
      "SELECT height, timestamp, total_fee, 'a|b\\c' AS s, 'x' || chr(10) || 'y' AS nl FROM blocks WHERE height <= 3 ORDER BY height"
    const [json, ndjson, markdown] = await Promise.all(
      ["json", "ndjson", "markdown"].map((format) => runCli(["query", "--data", data, sql, "--format", format]))
    )
    expect(ndjson.code, ndjson.stderr).toBe(0)
    expect(ndjson.stdout.endsWith("}\n")).toBe(true)
    expect(
      ndjson.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    ).toEqual(JSON.parse(json.stdout))
    expect(markdown.code, markdown.stderr).toBe(0)
    const lines = markdown.stdout.trim().split("\n")
    expect(lines.slice(0, 2)).toEqual(["| height | timestamp | total_fee | s | nl |", "| ---: | --- | --- | --- | --- |"])
    expect(lines).toHaveLength(5)
    const rows = JSON.parse(json.stdout)
    lines.slice(2).forEach((line, i) => {
      const fee = JSON.stringify(rows[i].total_fee).replace(/[\\|]/g, "\\$&")
      expect(line).toBe(`| ${rows[i].height} | ${rows[i].timestamp} | ${fee} | a\\|b\\\\c | x<br>y |`)
    })
    for (const [format, out] of [
      ["ndjson", ""],
      ["markdown", "| n |\n| ---: |\n"]
    ]) {
      const none = await runCli(["query", "--data", data, "SELECT 1 AS n WHERE false", "--format", format])
      expect([none.code, none.stdout], format).toEqual([0, out])
    }
  })

  it("query --help lists every view with the question it answers, and the datasets' views", async () => {
    const help = await runCli(["query", "--help"])
    // each view and the question it answers on one line, for the comparison
    const views = `\n${help.stdout
      .split("\nViews:\n")[1]
      .split("\n\n")[0]
      .replace(/\n {6}/g, " ")}\n`
    for (const v of analyticsViews()) expect(views, v.name).toContain(`\n  ${v.name} ${v.question}\n`)
    expect(views).toMatch(/^\n {2}one per dataset blocks, txs, /)
    expect(views).toContain("\n  snapshots How was each snapshot read?\n")
  })

  it("binds values, never splices them: an injection attempt is just a string", async () => {
    const r = await runCli([
      "query",
      "--data",
      data,
      "SELECT count(*) AS n FROM blocks WHERE block_hash = $h",
      "--param",
      "h:text=x' OR '1'='1",
      "--format",
      "json"
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual([{ n: "0" }])
  })

  it("the table cuts wide values and says so, csv and json print them whole; JSON columns are JSON in json output; times say UTC", async () => {
    const sql = "SELECT tx_hash, timestamp, fee, events FROM txs ORDER BY height, tx_hash LIMIT 3"
    const whole = await queryLake(
      `SELECT tx_hash, strftime(timestamp, '%Y-%m-%dT%H:%M:%S.%n') || 'Z' AS t, CAST(fee AS VARCHAR) AS fee, CAST(events AS VARCHAR) AS events FROM read_parquet('${join(data, "txs").replace(/'/g, "''")}/**/*.parquet') ORDER BY height, tx_hash LIMIT 3`
    )
    const table = await runCli(["query", "--data", data, sql])
    expect(table.code, table.stderr).toBe(0)
    const lines = table.stdout.trim().split("\n")
    expect(lines.at(-1)).toBe("(values wider than 48 columns are cut with …: --format csv or json prints them whole)")
    for (const line of lines.slice(2, -1)) for (const cell of line.split(/ {2,}/)) expect(displayWidth(cell)).toBeLessThanOrEqual(48)
    expect(table.stdout).toContain(String(whole[0].events).slice(0, 47) + "…")
    const json = await runCli(["query", "--data", data, sql, "--format", "json"])
    const rows = JSON.parse(json.stdout)
    expect(rows.map((r: any) => [r.tx_hash, r.timestamp, r.fee, r.events])).toEqual(
      whole.map((w) => [
        w.tx_hash,
        w.t.replace(/\.000000000Z$/, "Z").replace(/(\.\d*?)0+Z$/, "$1Z"),
        JSON.parse(w.fee),
        JSON.parse(w.events)
      ])
    )
    const csv = await runCli(["query", "--data", data, sql, "--format", "csv"])
    expect(csv.stdout).toContain(`"${String(whole[0].events).replace(/"/g, '""')}"`)
    expect(csv.stdout.split("\n")[1]).toMatch(/^[0-9A-F]{64},\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z,/)
  })

  it("every time type prints as UTC ISO 8601 (TIMESTAMPTZ, _S, _MS too) in any TZ; infinity and a year BC stay DuckDB's text; a line break alone is not called a cut", async () => {
    const sql = `SELECT TIMESTAMPTZ '2020-01-01 10:00:00+05:30' AS tz, TIMESTAMP_MS '2020-01-01 10:00:00.5' AS ms, TIMESTAMP_S '2020-01-01 10:00:00' AS s,
      TIMESTAMP '2020-01-01 10:00:00.123456' AS us, 'infinity'::TIMESTAMP AS inf, '0044-03-15 (BC)'::TIMESTAMP AS bc`
    // the same in any zone the process runs in (DuckDB's node-api writes a TIMESTAMPTZ in the process's zone)
    for (const TZ of ["UTC", "Asia/Kolkata", "America/St_Johns"]) {
      const csv = await runCli(["query", "--data", data, sql, "--format", "csv"], { env: { TZ } })
      expect(csv.code, csv.stderr).toBe(0)
      expect(csv.stdout.trim().split("\n")[1], TZ).toBe(
        "2020-01-01T04:30:00Z,2020-01-01T10:00:00.5Z,2020-01-01T10:00:00Z,2020-01-01T10:00:00.123456Z,infinity,0044-03-15 (BC) 00:00:00"
      )
    }
    const table = await runCli(["query", "--data", data, "SELECT 'a' || chr(10) || 'b' AS x, 'nan'::DOUBLE AS y"])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout.trim().split("\n")).toEqual(["x    y", "---  ---", "a↵b  NaN"])
  })

  it("reads the committed files only: a Parquet file someone put in a dataset's folder is not data, in query and in the catalog, whose views read the manifest at each query", async () => {
    const lake = tmp()
    cpSync(data, lake, { recursive: true })
    const manifest = JSON.parse(readFileSync(join(lake, "blocks", "_manifest.json"), "utf8"))
    const committed = join(lake, "blocks", manifest.files[0].path)
    cpSync(committed, join(lake, "blocks", "height_bucket=0", "part-my-own-copy.parquet"))
    // and a backup of a whole partition folder, kept inside the dataset's folder
    cpSync(join(lake, "blocks", "height_bucket=0"), join(lake, "blocks", "backup", "height_bucket=0"), { recursive: true })
    // and one whose path ends as the committed files' do (the catalog matched the last three parts: twice the rows)
    cpSync(join(lake, "blocks", "height_bucket=0"), join(lake, "blocks", "old", "blocks", "height_bucket=0"), { recursive: true })
    // and files that are no Parquet at all, named .parquet (the catalog's views read every one: each query failed)
    writeFileSync(join(lake, "blocks", "height_bucket=0", "scratch.parquet"), "my notes")
    mkdirSync(join(lake, "blocks", "extra"))
    writeFileSync(join(lake, "blocks", "extra", "x.parquet"), "my notes")
    const r = await runCli(["query", "--data", lake, "SELECT count(*) AS n, count(DISTINCT height) AS d FROM blocks", "--format", "json"])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual([{ n: "150", d: "150" }])
    // a listed file that is not there is never skipped (fewer rows, exit 0): the query fails, saying so (unfinished-commit.test.ts)
    const listed = manifest.files.length + 1
    writeFileSync(
      join(lake, "blocks", "_manifest.json"),
      JSON.stringify({ ...manifest, files: [...manifest.files, { ...manifest.files[0], path: "height_bucket=0/not-renamed-yet.parquet" }] })
    )
    const during = await runCli(["query", "--data", lake, "SELECT count(*) AS n FROM blocks", "--format", "json"])
    // a fault of the lake, not of the query: 1
    expect(during.code).toBe(1)
    expect(during.stderr).toBe(
      `chain-lake: error: blocks: 1 of the ${listed} files its _manifest.json lists is missing and no export staged it: the lake lost committed files; restore them from a copy, or export into a new --out\n`
    )
    writeFileSync(join(lake, "blocks", "_manifest.json"), JSON.stringify(manifest))
    const c = await runCli(["catalog", "--data", lake])
    expect(c.code, c.stderr).toBe(0)
    const catalogCount = async () =>
      Number(
        (
          await queryLake(
            `ATTACH '${join(lake, "chain-lake.duckdb")}' AS cat (READ_ONLY); SET file_search_path = '${lake}'; SELECT count(*) AS n FROM cat.blocks`
          )
        )[0].n
      )
    expect(await catalogCount()).toBe(150)
    // the manifest now lists the copy instead of the original, which is gone (as a compaction swaps files): the catalog follows
    writeFileSync(
      join(lake, "blocks", "_manifest.json"),
      JSON.stringify({
        ...manifest,
        files: [{ ...manifest.files[0], path: "height_bucket=0/part-my-own-copy.parquet" }, ...manifest.files.slice(1)]
      })
    )
    rmSync(committed)
    expect(await catalogCount()).toBe(150)
  })

  it("writes csv, json and parquet (--file and --output)", async () => {
    const dir = tmp()
    writeFileSync(join(dir, "q.sql"), "SELECT height, tx_count FROM blocks WHERE height <= 3 ORDER BY height")
    const csv = await runCli(["query", "--data", data, "--file", join(dir, "q.sql"), "--format", "csv"])
    expect(csv.stdout.trim().split("\n")).toEqual(["height,tx_count", ...[1, 2, 3].map((h) => `${h},${devnet.chain.blockTxCount(h)}`)])
    const json = await runCli(["query", "--data", data, "--file", join(dir, "q.sql"), "--format", "json", "--output", join(dir, "q.json")])
    expect(json.code).toBe(0)
    expect(JSON.parse(readFileSync(join(dir, "q.json"), "utf8"))[0]).toEqual({ height: "1", tx_count: devnet.chain.blockTxCount(1) })
    const pq = await runCli([
      "query",
      "--data",
      data,
      "--file",
      join(dir, "q.sql"),
      "--format",
      "parquet",
      "--output",
      join(dir, "q.parquet")
    ])
    expect(pq.code, pq.stderr).toBe(0)
    expect(await queryLake(`SELECT count(*) n FROM '${join(dir, "q.parquet")}'`)).toEqual([{ n: 3n }])
    // a parquet --output that is there already is written over, as csv and json are (DuckDB wrote it
    // through a tmp_ file beside it: its sandbox refused that, "is outside the lake"), and a file of
    // the user's named as that tmp_ file is left as it is
    writeFileSync(join(dir, "tmp_q.parquet"), "the user's")
    const again = await runCli(["query", "--data", data, "--format", "parquet", "--output", join(dir, "q.parquet"), "SELECT 1 AS one"])
    expect(again.code, again.stderr).toBe(0)
    expect(await queryLake(`SELECT * FROM '${join(dir, "q.parquet")}'`)).toEqual([{ one: 1 }])
    expect(readFileSync(join(dir, "tmp_q.parquet"), "utf8")).toBe("the user's")
  })

  it.each([
    [["SELEC 1"], 2, /^chain-lake: error: Parser Error: syntax error at or near "SELEC" \(LINE 1: SELEC 1\)\n$/],
    [
      ["SELECT * FROM nosuch"],
      2,
      /^chain-lake: error: no view or table named nosuch in the lake: SHOW TABLES lists them \(README, chain-lake query, says what each view holds\)\n$/
    ],
    [["SELECT * FROM block"], 2, /^chain-lake: error: no view or table named block in the lake \(did you mean blocks\?\): SHOW TABLES/],
    [["  "], 2, /^chain-lake: error: no SQL: the argument is empty\n$/],
    [["SELECT $x"], 2, /no value for parameter \$x/],
    // queries read: a COPY over a committed file rewrote the lake
    [
      ["COPY (SELECT 1 AS height) TO 'blocks/over.parquet' (FORMAT PARQUET)"],
      2,
      /^chain-lake: error: only statements that read are run here \(SELECT, WITH, DESCRIBE, SUMMARIZE …\), not COPY: to write a result, use --format csv or json, or --format parquet --output FILE$/m
    ],
    [["ATTACH 'x.duckdb'"], 2, /only statements that read are run here .*, not ATTACH/],
    // EXPLAIN ANALYZE runs what it explains
    [
      ["EXPLAIN ANALYZE COPY (SELECT 1 AS height) TO 'blocks/over.parquet' (FORMAT PARQUET)"],
      2,
      /only statements that read are run here .*, not EXPLAIN/
    ],
    [["SELECT $h", "--param", "h=1", "--param", "h=2"], 2, /^chain-lake: error: --param h is given twice: give each parameter once$/m],
    [["SELECT $h", "--param", "h=1", "--param", "h:text=2"], 2, /--param h is given twice/],
    [["SELECT 1", "--param", "1x:text=2"], 2, /--param name "1x" must be a SQL identifier/],
    [
      ["SELECT $p AS v", "--param", `p=${"9".repeat(40)}`],
      2,
      /^chain-lake: error: --param p: 9{40} is past what DuckDB's integers hold \(2\^127\): pass it as text \(p:text=…\) and compare it as text or CAST it to a DECIMAL$/m
    ],
    [["SELECT 1", "--format", "parquet"], 2, /--format parquet needs --output FILE/],
    [[], 2, /no SQL: pass it as an argument/]
  ])("%j exits %i with DuckDB's or our one message", async (args, code, message) => {
    const r = await runCli(["query", "--data", data, ...args])
    expect(r.code).toBe(code)
    expect(r.stderr).toMatch(message)
    expect(r.stdout).toBe("")
  })
})

describe("chain-lake catalog", () => {
  it("what a user can get wrong is one line and a non-zero exit: no lake at --data, an output path that cannot be written", async () => {
    const missing = join(tmp(), "mistyped")
    const noLake = await runCli(["query", "--data", missing, "SELECT count(*) FROM blocks"])
    expect(noLake.code).toBe(2)
    expect(noLake.stderr.trim()).toBe(`chain-lake: error: ${missing} does not exist: give --data the folder an export wrote`)
    // verify and publish say the same, with the same exit; an s3:// lake is named as one, not read as a folder "s3:"
    for (const args of [
      ["verify", "--data", missing],
      ["publish", "--data", missing, "--to", tmp(), "--name", "x", "--version", "1"]
    ]) {
      const r = await runCli(args)
      expect([r.code, r.stderr.trim()]).toEqual([2, `chain-lake: error: ${missing} does not exist: give --data the folder an export wrote`])
    }
    // run from inside a lake (as the demo's hints lead), the default --data is one level too deep
    const inside = await runCli(["query", "SELECT count(*) FROM blocks"], { cwd: data })
    expect([inside.code, inside.stderr.trim()]).toEqual([
      2,
      `chain-lake: error: ${join(data, "data")} does not exist: this folder is a lake itself: give --data .`
    ])
    for (const command of ["query", "verify", "report", "catalog"]) {
      const r = await runCli([command, "--data", "s3://bucket/lake", ...(command === "query" ? ["SELECT 1"] : [])])
      expect([r.code, r.stderr.trim()], command).toEqual([
        2,
        "chain-lake: error: --data s3://bucket/lake: this command reads a local lake; copy it down first (e.g. aws s3 sync s3://bucket/lake DIR) and give --data DIR"
      ])
    }
    const file = join(tmp(), "FILE")
    writeFileSync(file, "x")
    for (const args of [
      ["report", "--data", data, "--out", join(file, "r.html")],
      ["catalog", "--data", data, "--db", join(file, "x.duckdb")],
      ["query", "--data", data, "--output", join(file, "x.csv"), "SELECT 1"]
    ]) {
      const r = await runCli(args)
      expect(r.code, args[0]).toBe(1)
      expect(r.stdout, args[0]).toBe("")
      const lines = r.stderr.trim().split("\n")
      expect(lines, args[0]).toHaveLength(1)
      expect(lines[0], args[0]).toMatch(
        new RegExp(`^chain-lake: error: .*${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}.*not a directory`)
      )
    }
  })

  it("writes a .duckdb file that another client, opened in a copied data folder, queries", async () => {
    const r = await runCli(["catalog", "--data", data])
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(join(data, "chain-lake.duckdb"))).toBe(true)
    // move the whole folder: views use paths relative to it
    const moved = join(tmp(), "copied-lake")
    cpSync(data, moved, { recursive: true })
    const script = `
      const { DuckDBInstance } = await import(${JSON.stringify(join(process.cwd(), "node_modules/@duckdb/node-api/lib/index.js"))});
      const i = await DuckDBInstance.create("chain-lake.duckdb", { access_mode: "READ_ONLY" });
      const c = await i.connect();
      const r = await c.runAndReadAll("SELECT (SELECT count(*) FROM blocks) AS blocks, (SELECT count(*) FROM msg_type_mix) AS types, (SELECT sum(txs) FROM daily_activity) AS txs");
      console.log(JSON.stringify(r.getRowObjectsJson()));`
    const outText = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: moved, encoding: "utf8" })
    const [row] = JSON.parse(outText)
    expect(row.blocks).toBe("150")
    expect(Number(row.types)).toBeGreaterThan(2)
    expect(row.txs).toBe(String(devnet.chain.txTotal()))
  })
})

describe("chain-lake catalog --db onto a file that is there", () => {
  it("replaces a catalog it wrote, and leaves any other file as it is (a text file, a user's DuckDB file with a table or a view of its own): one line, exit 1", async () => {
    const dir = tmp()
    const notes = join(dir, "notes.txt")
    writeFileSync(notes, "my notes")
    const own = join(dir, "own.duckdb")
    const user = (sql: string) =>
      execFileSync(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const { DuckDBInstance } = await import(${JSON.stringify(join(process.cwd(), "node_modules/@duckdb/node-api/lib/index.js"))});
           const i = await DuckDBInstance.create(${JSON.stringify(own)}); const c = await i.connect();
           const r = await c.runAndReadAll(${JSON.stringify(sql)}); console.log(JSON.stringify(r.getRowsJson())); c.closeSync(); i.closeSync();`
        ],
        { encoding: "utf8" }
      ).trim()
    user("CREATE TABLE precious AS SELECT 42 AS x")
    for (const [file, why] of [
      [notes, "it is no DuckDB file"],
      [own, "it holds table precious"]
    ]) {
      const r = await runCli(["catalog", "--data", data, "--db", file])
      expect([r.code, r.stdout, r.stderr.trim()]).toEqual([
        1,
        "",
        `chain-lake: error: ${file} exists and is no chain-lake catalog (${why}): it is left as it is; give the catalog another file (--db)`
      ])
    }
    expect(readFileSync(notes, "utf8")).toBe("my notes")
    expect(user("SELECT x FROM precious")).toBe("[[42]]")
    // views only, but one the analytics do not make: the user's too
    user("DROP TABLE precious; CREATE VIEW mine AS SELECT 1 AS x")
    const view = await runCli(["catalog", "--data", data, "--db", own])
    expect([view.code, view.stderr.trim()]).toEqual([
      1,
      `chain-lake: error: ${own} exists and is no chain-lake catalog (it holds view mine): it is left as it is; give the catalog another file (--db)`
    ])
    // a catalog it wrote is written again (views of datasets exported since are picked up); the
    // command it suggests runs in a shell as printed, whatever the path holds
    const odd = join(dir, "we'ird $x;")
    mkdirSync(odd)
    const catalog = join(odd, "lake.duckdb")
    for (let i = 0; i < 2; i++) {
      const r = await runCli(["catalog", "--data", data, "--db", catalog])
      expect(r.code, r.stderr).toBe(0)
      const hint = r.stdout.trim().split("\n").at(-1)!
      const command = hint.slice(hint.indexOf("cd ")).replace("&& duckdb ", "&& test -f ")
      expect(spawnSync("sh", ["-c", command]).status, command).toBe(0)
    }
    // held open by another DuckDB client (the hint's duckdb): said so, not called foreign
    const holder = spawn(process.execPath, [
      "--input-type=module",
      "-e",
      `const { DuckDBInstance } = await import(${JSON.stringify(join(process.cwd(), "node_modules/@duckdb/node-api/lib/index.js"))});
       const i = await DuckDBInstance.create(${JSON.stringify(catalog)}); await i.connect(); console.log("held"); setTimeout(() => {}, 60_000)`
    ])
    try {
      await new Promise<void>((resolve) => holder.stdout.on("data", () => resolve()))
      const held = await runCli(["catalog", "--data", data, "--db", catalog])
      expect([held.code, held.stderr.trim()]).toEqual([
        1,
        expect.stringMatching(
          /^chain-lake: error: .*lake\.duckdb is open in another DuckDB client \(.*\): close it, and write the catalog again$/
        )
      ])
    } finally {
      holder.kill()
    }
  })
})

describe("a lake whose manifest is damaged or gone", () => {
  it("query, verify and publish say so in one line and exit non-zero (the dataset was read as empty, exit 0); other datasets still answer", async () => {
    const damaged = tmp()
    cpSync(data, damaged, { recursive: true })
    writeFileSync(join(damaged, "blocks", "_manifest.json"), "{")
    const gone = tmp()
    cpSync(data, gone, { recursive: true })
    rmSync(join(gone, "blocks", "_manifest.json"))
    const outside = tmp()
    cpSync(data, outside, { recursive: true })
    const m = JSON.parse(readFileSync(join(outside, "blocks", "_manifest.json"), "utf8")) as { files: Array<{ path: string }> }
    m.files[0].path = `../txs/${m.files[0].path}`
    writeFileSync(join(outside, "blocks", "_manifest.json"), JSON.stringify(m))
    for (const [lake, problem] of [
      [damaged, /blocks\/_manifest\.json is damaged \(not JSON .*\): restore it, or export blocks again into a new folder$/],
      [
        gone,
        /blocks holds Parquet files but no _manifest\.json, which says which of them are data: restore it, or export blocks again into a new folder$/
      ],
      [
        outside,
        /blocks\/_manifest\.json is damaged \(files\[0\]\.path: a path inside the dataset folder .*\): restore it, or export blocks again into a new folder$/
      ]
    ] as const) {
      const q = await runCli(["query", "--data", lake, "SELECT count(*) AS n FROM blocks"])
      // a damaged lake, not a mistake in the query (which exits 2)
      expect(q.code, q.stdout).toBe(1)
      expect(q.stderr.trim().split("\n")).toHaveLength(1)
      expect(q.stderr.trim()).toMatch(problem)
      const other = await runCli(["query", "--data", lake, "SELECT count(*) AS n FROM txs", "--format", "csv"])
      expect(other.code, other.stderr).toBe(0)
      expect(other.stdout.trim()).toBe(`n\n${devnet.chain.txTotal()}`)
      const verify = await runCli(["verify", "--data", lake])
      expect(verify.code).toBe(1)
      const publish = await runCli(["publish", "--data", lake, "--to", tmp(), "--name", "x", "--version", "1"])
      expect(publish.code).toBe(1)
      expect(publish.stderr.trim().split("\n")).toHaveLength(1)
    }
    // a file the query itself names that is not there is the query's mistake: exit 2
    const typo = await runCli(["query", "--data", damaged, `SELECT * FROM read_parquet('${join(damaged, "nope.parquet")}')`])
    expect([typo.code, typo.stderr]).toEqual([2, expect.stringMatching(/^chain-lake: error: .*nope\.parquet/)])
  })
})

describe("the query table", () => {
  it("pads by the columns a terminal draws: wide CJK and emoji take two, combining marks none", () => {
    expect([
      displayWidth("abc"),
      displayWidth("日本の風景"),
      displayWidth("Café ☕ Club"),
      displayWidth("e\u0301"),
      displayWidth("🚀")
    ]).toEqual([3, 10, 12, 1, 2])
    const lines = table([
      { name: "日本の風景", n: "60" },
      { name: "Lake Frogs", n: "71" },
      { name: "Café ☕ Club", n: "61" }
    ]).split("\n")
    // every value of the second column starts at the same terminal column
    expect(lines.slice(2).map((l) => displayWidth(l.slice(0, l.lastIndexOf(" ") + 1)))).toEqual([14, 14, 14])
  })

  it("cuts a cell at 48 terminal columns, not 48 chars: 30 wide chars are 60 columns", () => {
    const wide = "日".repeat(30)
    expect(tableCell(wide)).toBe("日".repeat(23) + "…")
    expect(displayWidth(tableCell(wide))).toBe(47)
    expect(tableCell("x".repeat(48))).toBe("x".repeat(48))
    expect(tableCell("x".repeat(49))).toBe("x".repeat(47) + "…")
    expect(tableCell("a\nb")).toBe("a↵b")
  })

  it("holds 300,000 rows (their widths once overflowed the stack as a spread's arguments)", () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => ({ n: String(i) }))
    const lines = table(rows).split("\n")
    expect(lines).toHaveLength(300_002)
    expect(lines[1]).toBe("------")
  })
})
