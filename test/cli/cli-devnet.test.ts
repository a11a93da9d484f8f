/** The `chain-lake devnet` and `demo` commands as a user runs them. */
import { describe, expect, it } from "vitest"
import { join } from "node:path"
import { haveChromium, renderInChromium } from "../support/browser.js"
import { runCli, startCli } from "../support/cli.js"

describe("chain-lake devnet", () => {
  it("prints indexer_url and router_url, serves both, and stops cleanly on SIGINT", async () => {
    const { child, stdout } = await startCli(["devnet", "--seed", "4", "--blocks", "30", "--vm", "evm"], /router_url=\S+\n/)
    const urls = Object.fromEntries(
      stdout()
        .trim()
        .split("\n")
        .map((l) => l.split("="))
    )
    expect(urls.indexer_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(urls.router_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const status = (await (await fetch(urls.indexer_url + "/status")).json()) as { height: number }
    expect(status.height).toBe(30)
    const route = await fetch(urls.router_url + "/v2/fungible/route", { method: "POST", body: "{}" })
    expect(route.status).toBe(400)
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    child.kill("SIGINT")
    expect(await exited).not.toBeNull()
  })

  it("--tx-payload-bytes N: each tx carries a payload of N bytes in its memo, an Ethereum tx in its call data (large records); a negative N is refused", async () => {
    const { child, stdout } = await startCli(["devnet", "--seed", "4", "--blocks", "30", "--tx-payload-bytes", "5000"], /router_url=\S+\n/)
    try {
      const url = /indexer_url=(\S+)/.exec(stdout())![1]
      const body = (await (await fetch(`${url}/indexer/tx/v1/txs?pagination.limit=5`)).json()) as {
        txs: Array<{ tx: { body: { memo: string } } }>
      }
      expect(body.txs.length).toBe(5)
      for (const t of body.txs) expect(JSON.stringify(t.tx).length).toBeGreaterThanOrEqual(5000)
    } finally {
      const exited = new Promise((resolve) => child.on("exit", resolve))
      child.kill("SIGINT")
      await exited
    }
    const negative = await runCli(["devnet", "--tx-payload-bytes", "-1"])
    expect([negative.code, negative.stderr.trim()]).toEqual([
      2,
      "chain-lake: error: --block-time, --latency-ms, --offset-row-us and --tx-payload-bytes cannot be negative"
    ])
  })

  it("rejects bad flags with a one-line error and exit 2 (a usage error, as in every command)", async () => {
    const badFault = await runCli(["devnet", "--faults", "teapot=1"])
    expect(badFault.code).toBe(2)
    expect(badFault.stderr.trim()).toBe(
      'chain-lake: error: --faults: unknown fault "teapot" (names: 429, 500, 502, 503, reset, truncate, stall, malformed, stall-ms, retry-after, count-timeout)'
    )
    const badBlocks = await runCli(["devnet", "--blocks", "0"])
    expect([badBlocks.code, badBlocks.stderr.trim()]).toEqual([2, "chain-lake: error: --blocks must be 1..5000000, got 0"])
    const tooMany = await runCli(["devnet", "--blocks", "9999999999"])
    expect([tooMany.code, tooMany.stderr.trim()]).toEqual([2, "chain-lake: error: --blocks must be 1..5000000, got 9999999999"])
    const notANumber = await runCli(["devnet", "--blocks", "many"])
    expect(notANumber.code).toBe(2)
    expect(notANumber.stderr.trim()).toBe(
      "chain-lake: error: --blocks: 'many' is not an integer (chain-lake devnet --help lists the flags)"
    )
  })
})

describe("chain-lake demo (npm start)", () => {
  it("stopped with Ctrl-C, it says what stays and how to go on, and exits 130", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs")
    const out = mkdtempSync((await import("node:os")).tmpdir() + "/chain-lake-demo-stop-")
    try {
      const { child } = await startCli(["demo", "--blocks", "60", "--out", out], /Embedded devnet: /)
      let stderr = ""
      child.stderr!.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      child.kill("SIGINT")
      expect(await exited).toBe(130)
      expect(stderr).toContain(`stopped: what was committed in ${out} stays; npm start (or chain-lake demo) again fetches only the rest`)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })

  it("tours the client, exports every dataset, samples routes, tracks a transfer, answers three questions, and reruns cleanly", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs")
    const out = mkdtempSync((await import("node:os")).tmpdir() + "/chain-lake-demo-")
    try {
      const r = await runCli(["demo", "--blocks", "120", "--seed", "2", "--out", out])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/chain lake-evm-1: height 120/)
      expect(r.stdout).toMatch(/^120\s+2026-/m)
      expect(r.stdout).toMatch(/\.\.\/\.\.\/etc/)
      expect(r.stdout).toMatch(/\[\d+\.\d s\] STATE_COMPLETED_SUCCESS/)
      expect(r.stdout).toMatch(/^1\. Which messages/m)
      expect(r.stdout).toMatch(/^2\. How concentrated/m)
      expect(r.stdout).toMatch(/^3\. How does a swap's price impact grow/m)
      expect(r.stdout).toMatch(/^blocks\s+120\s+/m)
      expect(r.stdout).toMatch(/^route_quotes: 80 quotes in one round/m)
      expect(r.stdout).toMatch(/^transfers: +STATE_COMPLETED_SUCCESS via noble-1 → interwoven-1 → lake-evm-1/m)
      expect(r.stdout).toMatch(/^Charts: +\S+report\.html/m)
      // its query hint reads this lake, not the default folder's
      expect(r.stdout).toContain(`npx chain-lake query --data ${out} "FROM msg_type_mix"`)
      if (haveChromium || process.env.CI) {
        const page = await renderInChromium(join(out, "report.html"))
        expect(page.errors).toEqual([])
        expect(page.charts.length).toBeGreaterThanOrEqual(7)
        for (const c of page.charts) expect(c.marks, c.id).toBeGreaterThan(5)
      }
      // a second run on the same folder: nothing new to export, a new round and a new transfer
      const again = await runCli(["demo", "--blocks", "120", "--seed", "2", "--out", out])
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout).toMatch(/^blocks\s+0\s+/m)
      expect(again.stdout).toMatch(/^transfers: +STATE_COMPLETED_SUCCESS/m)
      // a demo of another devnet on that folder (fewer blocks: the lake is ahead of it) says to give it its own, not to roll back
      const other = await runCli(["demo", "--blocks", "100", "--seed", "2", "--out", out])
      expect([other.code, other.stderr.trim().split("\n").at(-1)]).toEqual([
        1,
        `chain-lake: error: ${out} holds a lake this devnet (seed 2, 100 blocks) did not write: a demo with another --seed or --blocks, or an export of another chain, wrote it. Give this demo a folder of its own (--out data-seed2-100), or delete ${out} if it holds nothing you need`
      ])
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })
})
