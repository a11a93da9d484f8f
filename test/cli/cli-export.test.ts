/** `chain-lake export` as a user runs it: defaults, dry run, and one-line errors. */
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runCli } from "../support/cli.js"
import { json, startProxy } from "../support/hostile.js"
import { hashTree, queryLake, scan } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

let devnet: Devnet
let closedPort = 0
const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-cli-")
beforeAll(async () => {
  devnet = await startDevnet({ seed: 4, blocks: 200 })
  // a port nothing listens on
  const { createServer } = await import("node:net")
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  closedPort = (server.address() as { port: number }).port
  await new Promise((r) => server.close(r))
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

describe("chain-lake export", () => {
  it("exports every dataset, prints a summary table and writes a run report", async () => {
    const out = tmp()
    const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^blocks\s+200\s+/m)
    expect(r.stdout).toMatch(new RegExp(`^txs\\s+${devnet.chain.txTotal()}\\s+`, "m"))
    expect(r.stdout).toMatch(/^holders\s+\d+\s+1\s+.*snapshot 195 \(exact\)/m)
    expect(readdirSync(join(out, "_runs")).length).toBe(1)
    expect(r.stderr).toMatch(/^blocks: +200 blocks to fetch · heights 1\.\.200\b/m)
    // progress (issue 35), as a log read later sees it (not a terminal: 80 columns): each dataset's
    // last line says 100% and done, counting its source's records and its own rows apart (one
    // receipt gives many logs, a tx none or some transfers); the total line sums the rows
    const rows = async (dataset: string) => Number((await queryLake(`SELECT count(*) AS n FROM ${scan(out, dataset)}`))[0].n)
    const [logs, transfers, receipts, txs] = [
      await rows("evm_logs"),
      await rows("token_transfers_cosmos"),
      devnet.chain.evmTotal(),
      devnet.chain.txTotal()
    ]
    expect(logs).not.toBe(receipts)
    const n = (x: number) => x.toLocaleString("en-US")
    expect(r.stderr).toMatch(
      new RegExp(`^evm_logs +100% · evm txs ${n(receipts)} of ${n(receipts)} · ${n(logs)} rows · (\\d+ files? · )?done$`, "m")
    )
    expect(r.stderr).toMatch(
      new RegExp(`^token_transfers_cosmos 100% · txs ${n(txs)} of ${n(txs)} · ${n(transfers)} rows · (\\d+ files? · )?done$`, "m")
    )
    const summed = [...r.stdout.matchAll(/^[a-z_]+ +(\d+) /gm)].reduce((s, m) => s + Number(m[1]), 0)
    expect(r.stderr).toMatch(new RegExp(`^total +11 of 11 datasets done · ${n(summed)} rows · ([\\d,]+ rows/s · )?in \\d\\d:\\d\\d$`, "m"))
    // (the plan's 11 lines, the last ones of 11 datasets, the total; more if the run took 5 s)
    const progressLines = r.stderr.split("\n").filter((l) => /^([a-z_]+: +(\d|snapshot)|[a-z_]+ +\d+%|total )/.test(l))
    expect(progressLines.length).toBeGreaterThanOrEqual(23)
    for (const line of progressLines) expect(line.length, line).toBeLessThanOrEqual(80)
  })

  it("without --indexer-url refuses in one line and writes nothing; --devnet exports the embedded devnet's simulated chain", async () => {
    const out = join(tmp(), "lake")
    const none = await runCli(["export", "--out", out, "--datasets", "blocks"], { env: { CHAIN_LAKE_INDEXER_URL: "" } })
    expect(none.code).toBe(2)
    expect(none.stderr.trim()).toBe(
      "chain-lake: error: no --indexer-url: give the indexer's URL (or set CHAIN_LAKE_INDEXER_URL); --devnet uses the embedded devnet's simulated chain instead"
    )
    expect(existsSync(out)).toBe(false)
    const seedAlone = await runCli(["export", "--out", out, "--devnet-blocks", "60"])
    expect([seedAlone.code, seedAlone.stderr.trim()]).toEqual([2, "chain-lake: error: --devnet-blocks applies with --devnet only"])
    const r = await runCli(["export", "--devnet", "--out", out, "--devnet-blocks", "60", "--datasets", "blocks"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/exporting the embedded devnet \(seed 1, 60 blocks\) at http:\/\/127\.0\.0\.1:\d+: simulated data/)
    expect(r.stdout).toMatch(/^blocks\s+60\s+/m)
  })

  it("--devnet is not overridden by CHAIN_LAKE_INDEXER_URL (a real chain into a folder meant for simulated data)", async () => {
    const r = await runCli(["export", "--devnet", "--devnet-blocks", "30", "--out", tmp(), "--datasets", "blocks"], {
      env: { CHAIN_LAKE_INDEXER_URL: `http://127.0.0.1:${closedPort}` }
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/exporting the embedded devnet \(seed 1, 30 blocks\)/)
  })

  it("CHAIN_LAKE_INDEXER_URL names the indexer when --indexer-url is not given", async () => {
    const r = await runCli(["export", "--out", tmp(), "--datasets", "blocks", "--to-height", "30"], {
      env: { CHAIN_LAKE_INDEXER_URL: devnet.indexerUrl }
    })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^blocks\s+30\s+/m)
  })

  it("--dry-run prints the plan and the Parquet schemas and writes, renames and deletes nothing", async () => {
    const never = join(tmp(), "never")
    const fresh = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", never, "--dry-run", "--datasets", "blocks,txs"])
    expect(fresh.code, fresh.stderr).toBe(0)
    expect(fresh.stdout).toMatch(/blocks: 200 heights in \d+ shards, ~\d+ requests \(0 already committed\)/)
    expect(fresh.stdout).toMatch(/^\s+tx_hash\s+VARCHAR/m)
    expect(existsSync(never)).toBe(false)
    // a snapshot the run could not take (holders with no denoms: no blocks in the lake or the run) fails the dry run as it fails the run
    const noDenoms = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", never, "--dry-run", "--datasets", "holders"])
    expect(noDenoms.code).toBe(1)
    expect(noDenoms.stderr.trim().split("\n").at(-1)).toBe(
      "chain-lake: error: holders cannot be exported: no denoms: pass --denoms, or export blocks first (their total_fee denoms are the default)"
    )
    const withBlocks = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      never,
      "--dry-run",
      "--datasets",
      "blocks,holders"
    ])
    expect(withBlocks.code, withBlocks.stderr).toBe(0)
    expect(withBlocks.stdout).toMatch(/holders: snapshot at/)
    expect(existsSync(never)).toBe(false)
    // a lake with committed data, a stray Parquet file no manifest lists and a file of the user's
    const out = tmp()
    const partial = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      out,
      "--datasets",
      "blocks,txs,nft_collections",
      "--to-height",
      "120"
    ])
    expect(partial.code, partial.stderr).toBe(0)
    const committed = readdirSync(join(out, "blocks", "height_bucket=0")).find((f) => f.endsWith(".parquet"))!
    copyFileSync(join(out, "blocks", "height_bucket=0", committed), join(out, "blocks", "height_bucket=0", "mine.parquet"))
    writeFileSync(join(out, "txs", "notes.txt"), "the user's")
    const before = hashTree(out)
    const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--dry-run"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/blocks: 80 heights in \d+ shards, ~\d+ requests \(120 already committed\)/)
    expect(hashTree(out)).toEqual(before)
  })

  it("the closing line names the heights asked for, not the chain's tip, and the lake's top where it holds more", async () => {
    const into = (...flags: ReadonlyArray<string>) => runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", tmp(), ...flags])
    const r = await into("--datasets", "blocks", "--from-height", "11", "--to-height", "60")
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/\nlake-evm-1 heights 11\.\.60 in [\d.]+ s → /)
    const upTo = await into("--datasets", "blocks", "--to-height", "5000")
    expect(upTo.stdout).toMatch(/\nlake-evm-1 up to height 200 in /)
    // a snapshot committed by a ranged run is of its watermark, not of the range: the line says so
    const ranged = await into("--datasets", "blocks,holders", "--to-height", "60")
    expect(ranged.code, ranged.stderr).toBe(0)
    expect(ranged.stdout).toMatch(/\nlake-evm-1 up to height 60, holders snapshot at \d+ in /)
    // heights the lake held already above those asked for stay: the line says so, not that the lake ends there
    const out = tmp()
    expect((await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks"])).code).toBe(0)
    const below = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", out, "--datasets", "blocks", "--to-height", "60"])
    expect(below.code, below.stderr).toBe(0)
    expect(below.stdout).toMatch(/\nlake-evm-1 up to height 60 \(the lake holds up to 200\) in /)
  })

  it("a dataset typo fails at once with exit 2: no devnet started, nothing written", async () => {
    const out = join(tmp(), "new")
    const r = await runCli(["export", "--out", out, "--datasets", "blokcs"])
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe(
      "chain-lake: error: unknown dataset blokcs; known: blocks, txs, evm_txs, evm_logs, evm_internal_txs, token_transfers_evm, token_transfers_cosmos, nft_transfers, nft_collections, nft_tokens, holders"
    )
    expect(existsSync(out)).toBe(false)
  })

  it("a run that fails after it committed something says what, before its error, and reports it in _runs/ as a stopped one does", async () => {
    const out = tmp()
    const r = await runCli([
      "export",
      "--indexer-url",
      devnet.indexerUrl,
      "--out",
      out,
      "--datasets",
      "blocks,holders",
      "--denoms",
      "uinit,nosuch"
    ])
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split("\n")
    const [report] = readdirSync(join(out, "_runs"))
    expect(report).toMatch(/-failed\.json$/)
    // (the rich list of uinit is committed before nosuch's is asked)
    const [, holders] =
      /^committed by this run before it failed: blocks \+\d+ rows in 1 file, holders \+(\d+) rows in 1 file \(report in _runs\/(.+)\)$/.exec(
        lines.slice(-2)[0]
      ) ?? []
    expect(lines.slice(-2)[0]).toBe(
      `committed by this run before it failed: blocks +${devnet.chain.tip} rows in 1 file, holders +${holders} rows in 1 file (report in _runs/${report})`
    )
    expect(lines.at(-1)).toMatch(/^chain-lake: error: holders: the source has no holders of nosuch/)
    const written = JSON.parse(readFileSync(join(out, "_runs", report), "utf8"))
    expect(written).toMatchObject({
      indexerUrl: devnet.indexerUrl,
      committed: [
        { dataset: "blocks", rows: devnet.chain.tip, files: 1 },
        { dataset: "holders", rows: Number(holders), files: 1 }
      ],
      failed: expect.stringMatching(/^holders: the source has no holders of nosuch/)
    })
  })

  it("what a rerun cannot fix is not called resumable: a denom the indexer refuses (400), a record that breaks its schema", async () => {
    const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", tmp(), "--datasets", "holders", "--denoms", "nosuch"])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      /^chain-lake: error: holders: the source has no holders of nosuch \(.*nosuch.*collections: not found.*\)/
    )
    // having committed nothing, it says nothing of commits and reports nothing in the lake
    expect(r.stderr).not.toContain("committed by this run")
    const bad = await startDevnet({ seed: 19, blocks: 40, faults: "malformed=1" })
    try {
      const m = await runCli(["export", "--indexer-url", bad.indexerUrl, "--out", tmp(), "--datasets", "blocks"])
      expect(m.code).toBe(1)
      expect(m.stderr.trim().split("\n").at(-1)).toMatch(
        /\. Committed files are untouched; --on-invalid quarantine sets such records aside and exports the rest\.$/
      )
    } finally {
      await bad.stop()
    }
  })

  it("paging the server gets wrong is not called resumable as such: the line says when a rerun helps and when it cannot", async () => {
    // every blocks page names the first next page again: the listing goes round in a loop
    let firstNext: string | null = null
    const server = await startProxy(devnet.indexerUrl, async (req, forward) => {
      if (!req.url.pathname.endsWith("/blocks")) return forward()
      const page = await forward()
      const body = JSON.parse(page.body) as { pagination: { next_key: string | null } }
      firstNext ??= body.pagination.next_key
      return json({ ...body, pagination: { ...body.pagination, next_key: firstNext } })
    })
    try {
      const r = await runCli([
        "export",
        "--indexer-url",
        server.url,
        "--out",
        tmp(),
        "--datasets",
        "blocks",
        "--page-size",
        "20",
        "--concurrency",
        "1"
      ])
      expect(r.code).toBe(1)
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(
        /^chain-lake: error: pagination of blocks cannot be trusted .*\. Committed files are untouched; a rerun resumes if the list was changing, but if it fails the same way the server's paging is wrong \(check any proxy or gateway in front of it\)\.$/
      )
    } finally {
      await server.close()
    }
  })

  it("an --out that is a file, or inside one, a mistyped URL or a dataset folder of a lake fails at once with exit 2 saying so; publish --to and sample-routes --out too", async () => {
    const file = join(tmp(), "afile")
    writeFileSync(file, "mine")
    const lake = tmp()
    writeFileSync(join(lake, "_lake.json"), "{}")
    const here = tmp()
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [
        ["export", "--indexer-url", `http://127.0.0.1:${closedPort}`, "--out", "s3:/bucket/lake", "--datasets", "blocks"],
        "--out s3:/bucket/lake looks like a URL, not a folder: give a local folder or an s3://bucket/prefix URL (lower-case s3, two slashes)"
      ],
      [
        ["sample-routes", "--devnet", "--out", "S3://bucket/quotes"],
        "--out S3://bucket/quotes looks like a URL, not a folder: give a local folder (--out takes no URL)"
      ],
      [
        ["export", "--indexer-url", `http://127.0.0.1:${closedPort}`, "--out", join(lake, "blocks"), "--datasets", "blocks"],
        `--out ${join(lake, "blocks")} is inside the lake at ${lake} (blocks), among its own files: give a folder outside them`
      ],
      [
        ["publish", "--data", tmp(), "--to", join(lake, "txs"), "--name", "x", "--version", "1"],
        `--to ${join(lake, "txs")} is inside the lake at ${lake} (txs), among its own files: give a folder outside them`
      ],
      [
        ["export", "--indexer-url", `http://127.0.0.1:${closedPort}`, "--out", file, "--datasets", "blocks"],
        `--out ${file} is a file, not a folder: give a folder (it is made if missing)`
      ],
      [
        ["export", "--indexer-url", `http://127.0.0.1:${closedPort}`, "--out", join(file, "lake"), "--datasets", "blocks"],
        `--out ${join(file, "lake")} cannot be made: ${file} is a file`
      ],
      [
        ["publish", "--data", tmp(), "--to", file, "--name", "x", "--version", "1"],
        `--to ${file} is a file, not a folder: give a folder (it is made if missing)`
      ]
    ]
    for (const [args, message] of cases) {
      const r = await runCli(args, { cwd: here })
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr.trim()).toBe(`chain-lake: error: ${message}`)
      expect(r.stdout).not.toMatch(/devnet/)
    }
    expect(readFileSync(file, "utf8")).toBe("mine")
    expect(readdirSync(here)).toEqual([])
    expect(readdirSync(lake)).toEqual(["_lake.json"])
  })

  it("an --out the kernel will not make (/proc/…, though root may write there by its permissions) is refused before the run with one line, exit 2 (Node's own recursive mkdir spun there, busy and deaf to SIGTERM)", async () => {
    if (!existsSync("/proc/self")) return
    const r = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", "/proc/chain-lake-nope", "--datasets", "blocks"], {
      timeoutMs: 30_000
    })
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toMatch(
      /^chain-lake: error: --out \/proc\/chain-lake-nope cannot be made: \/proc (takes no new folder \(\w+\)|is not writable)$/
    )
  })

  it.each([
    [["--indexer-url", "ftp://x"], /--indexer-url must be an http\(s\) URL/],
    [["--indexer-url", "http://127.0.0.1:CLOSED"], /cannot reach http:\/\/127\.0\.0\.1:\d+ \(--indexer-url\): ECONNREFUSED; check the URL/],
    [["--page-size", "5000"], /--page-size must be 1\.\.1000/],
    [["--datasets", "blocks,nope"], /unknown dataset nope; known: blocks, txs/],
    [
      ["--datasets", "token_transfers"],
      /unknown dataset token_transfers \(did you mean token_transfers_evm, token_transfers_cosmos\?\); known: blocks, txs/
    ],
    [["--datasets", ""], /no dataset named; known: blocks, txs/],
    [["--from-height", "50", "--to-height", "10"], /--from-height 50 is above --to-height 10/]
  ])("%j fails with a one-line error", async (flags, message) => {
    const out = tmp()
    const needsUrl = !flags.includes("--indexer-url")
    const r = await runCli([
      "export",
      "--out",
      out,
      ...(needsUrl ? ["--indexer-url", devnet.indexerUrl] : []),
      ...flags.map((f) => f.replace("CLOSED", String(closedPort)))
    ])
    expect(r.code).not.toBe(0)
    const lines = r.stderr
      .trim()
      .split("\n")
      .filter((l) => l.startsWith("chain-lake: error:"))
    expect(lines.length).toBe(1)
    expect(lines[0]).toMatch(message)
  })
})
