/**
 * `--log-format json` (and CHAIN_LAKE_LOG_FORMAT=json): a machine reads the logs of scheduled and
 * containerised runs, so every stderr line is one JSON object (time, level, and a message or an
 * event with its counts) and stdout's summary is one JSON object. Real CLI processes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { tempDirs } from "../support/tmp.js"

const { make: tmp, removeAll } = tempDirs("chain-lake-logs-")
let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 5, blocks: 40 })
})
afterAll(async () => {
  await devnet.stop()
  removeAll()
})

const jsonLines = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, any>)

describe("--log-format json", () => {
  it("stderr is one JSON object a line (the plan, each dataset's end with its counts, the total); stdout's summary is one object that agrees", async () => {
    const out = tmp()
    const r = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      out,
      "--datasets",
      "blocks,txs,evm_logs",
      "--log-format",
      "json"
    ])
    expect(r.code, r.stderr).toBe(0)
    const logs = jsonLines(r.stderr)
    for (const l of logs)
      expect(Number.isNaN(Date.parse(l.time)) || !["info", "warn", "error"].includes(l.level), JSON.stringify(l)).toBe(false)
    const done = new Map(logs.filter((l) => l.event === "done").map((l) => [l.dataset, l]))
    expect([...done.keys()].sort()).toEqual(["blocks", "evm_logs", "txs"])
    expect(
      logs
        .filter((l) => l.event === "planned")
        .map((l) => l.dataset)
        .sort()
    ).toEqual(["blocks", "evm_logs", "txs"])
    expect(done.get("blocks")).toMatchObject({ unit: "blocks", fetched: 40, todo: 40, rows: 40, percent: 100 })
    expect(done.get("txs")).toMatchObject({ rows: devnet.chain.txTotal(), percent: 100 })
    const [summary] = jsonLines(r.stdout)
    expect(summary).toMatchObject({ event: "summary", chain_id: "lake-evm-1", tip: 40 })
    for (const d of summary.datasets) expect(d.rows, d.dataset).toBe(done.get(d.dataset)!.rows)
    expect(logs.at(-1)).toMatchObject({
      event: "finished",
      done: 3,
      rows: summary.datasets.reduce((s: number, d: { rows: number }) => s + d.rows, 0)
    })
  })

  it("an error is a JSON line with level error, the exit code unchanged; the environment variable turns it on for any command", async () => {
    const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", tmp(), "--datasets", "nope", "--log-format", "json"])
    expect(r.code).toBe(2)
    expect(jsonLines(r.stderr)).toEqual([
      { time: expect.any(String), level: "error", message: expect.stringMatching(/^unknown dataset nope; known: blocks, /) }
    ])
    const q = await runCli(["query", "--data", tmp(), "SELECT 1"], { env: { CHAIN_LAKE_LOG_FORMAT: "json" } })
    expect(q.code).not.toBe(0)
    expect(jsonLines(q.stderr)).toEqual([{ time: expect.any(String), level: "error", message: expect.stringMatching(/holds no lake/) }])
  })
})
