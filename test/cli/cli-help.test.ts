/** Every command's `--help`, as a person reads it: in 80 columns, no colour codes, each flag described, defaults shown, examples given. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import module from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
// @ts-expect-error: plain JavaScript (bin/ runs before any build), no declarations
import { newestSourceTime } from "../../bin/freshness.mjs"
import { DEFAULTS } from "../../src/defaults.js"
import { runCli } from "../support/cli.js"

const COMMANDS = [
  "run",
  "export",
  "sample-routes",
  "bridge",
  "track",
  "query",
  "schema",
  "catalog",
  "report",
  "verify",
  "publish",
  "validate",
  "devnet",
  "demo"
]

/** The Options section: each flag's term and the description lines under it. */
const optionsOf = (help: string): Map<string, string> => {
  const section = help.split("\nOptions:\n")[1]?.split("\n\n")[0] ?? ""
  const flags = new Map<string, string>()
  let current: string | undefined
  for (const line of section.split("\n")) {
    if (/^ {2}\S/.test(line)) flags.set((current = line.trim()), "")
    else if (current && /^ {6}\S/.test(line)) flags.set(current, `${flags.get(current)} ${line.trim()}`.trim())
  }
  return flags
}

/** Whether dist/ holds a build of the sources as they are (bin/chain-lake.mjs then runs it). */
const builtFresh = (): boolean => {
  const build = new URL("../../dist/build.json", import.meta.url)
  return (
    existsSync(build) &&
    JSON.parse(readFileSync(build, "utf8")).builtFrom >= newestSourceTime(fileURLToPath(new URL("../..", import.meta.url)))
  )
}

describe("start-up", () => {
  it("--help and --version answered from the build print exactly what the CLI prints when loaded (CI runs the build, as npm install does)", async () => {
    const fresh = builtFresh()
    if (process.env.CI) expect(fresh, "dist/ is missing or older than src/: npm ci should have built it (the prepare script)").toBe(true)
    for (const args of [
      ["--help"],
      ["--version"],
      [],
      ["export", "--help"],
      ["query", "-h"],
      ["track", "--router-url", "x", "--help"],
      ["--out", "x", "--help"]
    ]) {
      const [recorded, loaded] = await Promise.all([runCli(args), runCli(args, { env: { CHAIN_LAKE_FROM_SOURCE: "1" } })])
      expect(recorded.code, args.join(" ")).toBe(loaded.code)
      expect(recorded.stdout, args.join(" ")).toBe(loaded.stdout)
    }
  })
})

describe("compile cache", () => {
  it("a command run from the build keeps V8's code in Node's compile cache where Node has one (22.1+): in the OS's temp folder, none with NODE_DISABLE_COMPILE_CACHE=1; Node 20 writes none", async () => {
    const fresh = builtFresh()
    const [on, off] = [mkdtempSync(join(tmpdir(), "chain-lake-ncc-")), mkdtempSync(join(tmpdir(), "chain-lake-ncc-"))]
    try {
      // a command line refused: the CLI's bundle is loaded, nothing else is touched
      const args = ["schema", "blocks"]
      const [kept, disabled] = await Promise.all([
        runCli(args, { env: { TMPDIR: on } }),
        runCli(args, { env: { TMPDIR: off, NODE_DISABLE_COMPILE_CACHE: "1" } })
      ])
      expect([kept.code, disabled.code]).toEqual([2, 2])
      const nodeHasOne = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === "function"
      const cache = join(on, "node-compile-cache")
      expect(
        existsSync(cache) && readdirSync(cache, { recursive: true }).length > 0,
        `Node ${process.version}, build fresh: ${fresh}`
      ).toBe(nodeHasOne && fresh)
      expect(readdirSync(off)).toEqual([])
    } finally {
      for (const d of [on, off]) rmSync(d, { recursive: true, force: true })
    }
  })
})

describe("--help", () => {
  it("every command's help fits 80 columns, has no ANSI codes, names itself as typed, describes every flag and gives an example", async () => {
    // NO_COLOR unset and a pipe for stdout: plain text all the same
    const helps = await Promise.all(
      ["", ...COMMANDS].map(async (c) => ({ c, r: await runCli([...(c ? [c] : []), "--help"], { env: { NO_COLOR: "" } }) }))
    )
    for (const { c, r } of helps) {
      expect(r.code, `${c} --help: ${r.stderr}`).toBe(0)
      const out = r.stdout
      expect(out, c).not.toMatch(/\x1b\[/)
      for (const line of out.split("\n")) expect(line.length, `${c}: "${line}"`).toBeLessThanOrEqual(80)
      expect(out, c).not.toMatch(/A user-defined piece of text|This setting is optional|An integer\./)
      expect(out.startsWith(`chain-lake${c ? ` ${c}` : ""} — `), c).toBe(true)
      expect(out, c).toMatch(new RegExp(`\\nUsage:\\n  chain-lake${c ? ` ${c}` : ""}\\b`))
      expect(out, c).toMatch(/\nExamples:\n {2}\S/)
      const flags = optionsOf(out)
      expect(flags.size, c).toBeGreaterThanOrEqual(2)
      // a description of its own, not only "(default: …)"
      for (const [flag, text] of flags)
        expect(text.replace(/\((default|required|repeatable)[^)]*\)$/, "").trim(), `${c} ${flag} has no description`).not.toBe("")
    }
    const root = helps.find((h) => h.c === "")!.r.stdout
    for (const c of COMMANDS) expect(root).toMatch(new RegExp(`\\n  ${c}\\n {6}\\S`))
  })

  it("a command line that cannot be parsed is one line on stderr naming the flag, exit 2, and nothing on stdout", async () => {
    const cases: Array<[ReadonlyArray<string>, RegExp]> = [
      [
        ["export", "--page-size", "abc"],
        /^chain-lake: error: --page-size: 'abc' is not an integer \(chain-lake export --help lists the flags\)$/
      ],
      [["export", "--nope"], /^chain-lake: error: Received unknown argument: '--nope' \(chain-lake export --help lists the flags\)$/],
      // where a command takes an argument too (it was taken for the SQL)
      [["query", "--nope"], /^chain-lake: error: Received unknown argument: '--nope' \(chain-lake query --help lists the flags\)$/],
      [["validate", "--nope"], /^chain-lake: error: Received unknown argument: '--nope' \(chain-lake validate --help lists the flags\)$/],
      // publish's own --version, first and without its value (chain-lake's version was printed, exit 0)
      [
        ["publish", "--version"],
        /^chain-lake: error: Expected a value following option: '--version' \(chain-lake publish --help lists the flags\)$/
      ],
      [
        ["export", "--on-invalid", "maybe"],
        /^chain-lake: error: --on-invalid "maybe": Expected one of the following cases: fail, quarantine \(chain-lake export --help lists the flags\)$/
      ],
      // a folder given to a FILE flag and a DIR flag: the FILE flag is named (--data, given first, was)
      [
        ["query", "--data", tmpdir(), "--output", tmpdir(), "SELECT 1"],
        /^chain-lake: error: --output: Expected path '.*' to be a regular file \(chain-lake query --help lists the flags\)$/
      ],
      [["track"], /^chain-lake: error: Expected to find option: '--tx-hash'; .* \(chain-lake track --help lists the flags\)$/],
      [["exprt"], /^chain-lake: error: no command "exprt": did you mean export\? \(chain-lake --help lists the commands\)$/],
      [["expor"], /^chain-lake: error: no command "expor": did you mean export\? \(chain-lake --help lists the commands\)$/],
      [["frobnicate"], /^chain-lake: error: no command "frobnicate" \(chain-lake --help lists the commands\)$/],
      // a duration without its unit is refused (read as milliseconds, "5" sampled the router back to back)
      [["sample-routes", "--every", "5"], /^chain-lake: error: --every must look like 30s, 5m or 1h, got "5"/],
      [["export", "--follow", "--poll", "2"], /^chain-lake: error: --poll must look like 500ms, 2s or 1m, got "2"/],
      [["compact", "--datasets", ""], /^chain-lake: error: no dataset named; known: blocks, /],
      // an empty item in a list is refused (it was dropped: "blocks,$MISSING,txs" ran as blocks,txs)
      [
        ["export", "--datasets", "blocks,,txs"],
        /^chain-lake: error: --datasets: 'blocks,,txs' holds an empty item \(two commas in a row, or one at an end\) \(chain-lake export --help lists the flags\)$/
      ],
      [
        ["sample-routes", "--devnet", "--datasets", "route_quotes,"],
        /^chain-lake: error: --datasets: 'route_quotes,' holds an empty item \(two commas in a row, or one at an end\) \(chain-lake sample-routes --help lists the flags\)$/
      ],
      // a flag that applies with another only is refused without it (it was taken and did nothing)
      [["export", "--poll", "5s"], /^chain-lake: error: --poll applies with --follow only$/],
      [["export", "--until-height", "50"], /^chain-lake: error: --until-height applies with --follow only/],
      [["run", "demo", "--max-runs", "2"], /^chain-lake: error: --max-runs applies with --schedule only$/],
      // (0 and -1 ran once and exited 0)
      [["run", "demo", "--schedule", "--max-runs", "0"], /^chain-lake: error: --max-runs must be 1 or more, got 0$/],
      // a mistyped flag gets the command's nearest one
      [
        ["export", "--dataset", "blocks"],
        /^chain-lake: error: Received unknown argument: '--dataset': did you mean --datasets\? \(chain-lake export --help lists the flags\)$/
      ],
      // one given twice is said so (it read "unknown argument '--datasets': did you mean --datasets?")
      [
        ["export", "--datasets", "blocks", "--datasets", "txs"],
        /^chain-lake: error: --datasets is given more than once: give it once \(chain-lake export --help lists the flags\)$/
      ],
      // a flag of another command, which this one's help names in its prose, is no flag of it
      [
        ["compact", "--data", "/tmp", "--follow"],
        /^chain-lake: error: Received unknown argument: '--follow' \(chain-lake compact --help lists the flags\)$/
      ],
      // (where the parser names the value after the second: it read "--data: Received unknown argument: '/tmp/b'")
      [
        ["query", "--data", "/tmp/a", "--data", "/tmp/b", "SELECT 1"],
        /^chain-lake: error: --data is given more than once: give it once \(chain-lake query --help lists the flags\)$/
      ],
      [
        ["export", "--devnet", "--devnet-blocks", "5", "--devnet-blocks", "6"],
        /^chain-lake: error: --devnet-blocks is given more than once: give it once \(chain-lake export --help lists the flags\)$/
      ],
      // a release name or version that cannot be a folder name is a usage error (it exited 1)
      [
        ["publish", "--to", "/tmp", "--name", "my lake", "--version", "1"],
        /^chain-lake: error: --name must be 1-64 of letters, digits, \. _ - \(it becomes a folder name\), got "my lake"$/
      ],
      [
        ["publish", "--to", "/tmp", "--name", "lake", "--version", "../x"],
        /^chain-lake: error: --version must be 1-64 of letters, digits, \. _ - \(it becomes a folder name\), got "\.\.\/x"$/
      ]
    ]
    const results = await Promise.all(cases.map(([args]) => runCli(args)))
    results.forEach((r, i) => {
      expect(r.code, cases[i][0].join(" ")).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr.trim().split("\n").length, r.stderr).toBe(1)
      expect(r.stderr.trim()).toMatch(cases[i][1])
    })
  })

  it("shows defaults, marks what is required or repeatable, and never calls an optional flag required", async () => {
    const exportHelp = optionsOf((await runCli(["export", "--help"])).stdout)
    expect(exportHelp.get("--concurrency N")).toMatch(new RegExp(`\\(default: ${DEFAULTS.concurrency}\\)$`))
    expect(exportHelp.get("--page-size N")).toMatch(new RegExp(`\\(default: ${DEFAULTS.pageSize}\\)$`))
    expect(exportHelp.get("--out TEXT")).toMatch(/\(default: data\)$/)
    expect(exportHelp.get("--on-invalid fail|quarantine")).toMatch(/\(default: fail\)$/)
    expect(exportHelp.get("--header 'NAME: VALUE'")).toMatch(/repeatable/)
    const queryHelp = optionsOf((await runCli(["query", "--help"])).stdout)
    expect(queryHelp.get("--param TEXT")).not.toMatch(/required/)
    const trackHelp = optionsOf((await runCli(["track", "--help"])).stdout)
    expect(trackHelp.get("--tx-hash TEXT")).toMatch(/\(required\)$/)
    expect(trackHelp.get("--out DIR")).toMatch(/\(default: data\)$/)
    // publish's own --version (the release's; its second name is how it reaches @effect/cli) is listed, required; chain-lake's is not (it was the other way round)
    const publishHelp = optionsOf((await runCli(["publish", "--help"])).stdout)
    expect(publishHelp.get("--version, --release-version TEXT")).toMatch(/^release version .*\(required\)$/)
    expect(publishHelp.has("--version")).toBe(false)
    expect(exportHelp.get("--version")).toBe("print chain-lake's version")
  })
})
