/**
 * `chain-lake report` writes one self-contained HTML file; headless Chromium opens it, every
 * chart has rendered marks, and the console stays clean. Chromium comes from Debian's package
 * (.ci/run installs it); outside CI the browser check is skipped when it is missing.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CHARTS } from "../../src/analytics/report.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { CHROMIUM, haveChromium, renderInChromium } from "../support/browser.js"
import { runCli } from "../support/cli.js"

let devnet: Devnet
let data: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 23, blocks: 300 })
  data = mkdtempSync(join(tmpdir(), "chain-lake-report-"))
  const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", data])
  if (r.code !== 0) throw new Error(r.stderr)
  const q = await runCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", data])
  if (q.code !== 0) throw new Error(q.stderr)
}, 120_000)
afterAll(async () => {
  await devnet.stop()
  rmSync(data, { recursive: true, force: true })
})

describe("chain-lake report", () => {
  it("writes a self-contained HTML file with one SVG chart per view", async () => {
    const r = await runCli(["report", "--data", data])
    expect(r.code, r.stderr).toBe(0)
    const html = readFileSync(join(data, "report.html"), "utf8")
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/)
    for (const chart of CHARTS)
      expect(html).toMatch(
        new RegExp(`<figure class="chart" id="${chart.id}" data-rows="[1-9]\\d*"><h2>[^<]+</h2><p class="question">[^<]+</p><svg`)
      )
    // --out in a folder not made yet: made (it was a raw ENOENT)
    const root = mkdtempSync(join(tmpdir(), "chain-lake-report-out-"))
    const elsewhere = join(root, "new", "folder", "r.html")
    const made = await runCli(["report", "--data", data, "--out", elsewhere])
    expect(made.code, made.stderr).toBe(0)
    expect(readFileSync(elsewhere, "utf8")).toMatch(/^<!doctype html>/)
    // a report written before is replaced; a file of that name someone else put there is left as it is, the run refused in one line
    expect((await runCli(["report", "--data", data, "--out", elsewhere])).code).toBe(0)
    writeFileSync(elsewhere, "<html>my notes</html>")
    const refused = await runCli(["report", "--data", data, "--out", elsewhere])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toBe(
      `chain-lake: error: ${elsewhere} exists and is no chain-lake report: it is left as it is; give the report another file (--out)`
    )
    expect(readFileSync(elsewhere, "utf8")).toBe("<html>my notes</html>")
    rmSync(root, { recursive: true, force: true })
  })

  it("a chart with no data names the datasets to export (through the views it reads)", async () => {
    const only = mkdtempSync(join(tmpdir(), "chain-lake-report-blocks-"))
    try {
      const e = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", only, "--datasets", "blocks"])
      expect(e.code, e.stderr).toBe(0)
      const r = await runCli(["report", "--data", only])
      expect(r.code, r.stderr).toBe(0)
      const html = readFileSync(join(only, "report.html"), "utf8")
      const empty = [...html.matchAll(/<p class="empty">No data yet: ([^<]+)\.<\/p>/g)].map((m) => m[1])
      expect(empty.length).toBeGreaterThan(0)
      // each names the datasets the lake lacks, with the command that writes them: blocks it holds
      for (const hint of empty) expect(hint).toMatch(/^(chain-lake export --datasets [a-z_,]+|[a-z_, ]+: chain-lake [a-z-]+.*)(; .*)?$/)
      expect(empty.some((hint) => /export --datasets (\S+,)?txs\b/.test(hint))).toBe(true)
      expect(empty.some((hint) => /route_quotes(, \w+)*: chain-lake sample-routes/.test(hint))).toBe(true)
      expect(empty.some((hint) => /(--datasets |,)blocks\b/.test(hint))).toBe(false)
      expect(empty.some((hint) => /--datasets \S*route_quotes/.test(hint))).toBe(false)
    } finally {
      rmSync(only, { recursive: true, force: true })
    }
  })

  it.runIf(haveChromium || process.env.CI).each([1280, 760])(
    "renders every chart in headless Chromium %i px wide with no console errors",
    async (width) => {
      expect(haveChromium, `${CHROMIUM} is missing: apt-get install chromium`).toBe(true)
      const page = await renderInChromium(join(data, "report.html"), width)
      expect(page.charts.map((c) => c.id)).toEqual(CHARTS.map((c) => c.id))
      for (const c of page.charts) {
        expect(c.width, c.id).toBeGreaterThan(100)
        expect(c.height, c.id).toBeGreaterThan(100)
        // rendered marks: bars, lines or points drawn inside the chart
        expect(c.marks, c.id).toBeGreaterThan(5)
        // nothing, legends included, passes the card's edge
        expect(c.overflow, c.id).toBeLessThan(1)
      }
      expect(page.errors).toEqual([])
    }
  )

  it("charts over time leave out the buckets the lake covers only in part; NFT charts name collections and give tokens and owners their own scales", async () => {
    if (!existsSync(join(data, "report.html"))) expect((await runCli(["report", "--data", data])).code).toBe(0)
    const html = readFileSync(join(data, "report.html"), "utf8")
    expect(html).toMatch(/<figure class="chart" id="activity-over-time"[^>]*>.*buckets the lake covers only in part/s)
    const byId = new Map(CHARTS.map((c) => [c.id, c]))
    const q = await runCli([
      "query",
      "--data",
      data,
      "--format",
      "json",
      `SELECT max(t) AS last, min(t) AS first, any_value(grain_seconds) AS s, (SELECT max(timestamp) FROM blocks) AS tip_time, (SELECT min(timestamp) FROM blocks) AS first_time FROM (${byId.get("activity-over-time")!.sql})`
    ])
    expect(q.code, q.stderr).toBe(0)
    const [b] = JSON.parse(q.stdout)
    expect(Date.parse(b.last) + Number(b.s) * 1000).toBeLessThanOrEqual(Date.parse(b.tip_time))
    expect(Date.parse(b.first)).toBeGreaterThanOrEqual(Date.parse(b.first_time))
    // the NFT ownership chart: two panels, each with its own x scale
    const ownership = byId.get("nft-ownership")!.spec([{ collection_name: "a", tokens: 2000, owners: 40 }]) as {
      hconcat?: Array<{ encoding: { x: { field: string } } }>
    }
    expect(ownership.hconcat?.map((p) => p.encoding.x.field)).toEqual(["tokens", "owners"])
    // names, not addresses, where the lake has them: every devnet collection has a name
    const names = devnet.chain.u.collections.map((c) => c.name)
    const activity = /<figure class="chart" id="nft-transfer-activity"[^>]*>(.*?)<\/figure>/s.exec(html)![1]
    expect(names.some((n) => activity.includes(n.replace(/&/g, "&amp;").replace(/</g, "&lt;")))).toBe(true)
  })
})
