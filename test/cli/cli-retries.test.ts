/**
 * `chain-lake export` says how many requests it asked again after a transient failure, and why:
 * a proxy in front of the devnet fails list pages in known ways (503, 429, a dropped connection,
 * a body cut short) and counts what it did; the run's summary, its JSON log and its run report
 * must say the same counts, whether the shards run in the run's thread or in workers (which
 * count into the run's tally through shared memory).
 */
import { spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { Devnet } from "../../src/devnet/index.js"
import { BIN, runCli } from "../support/cli.js"
import { proxiedDevnet, RESET, startProxy, text, type Answer, type HostileRequest, type Forward } from "../support/hostile.js"
import { tempDirs } from "../support/tmp.js"

const dirs = tempDirs("chain-lake-retries-")
let devnet: Devnet
const { proxy, track } = proxiedDevnet({ seed: 23, blocks: 120 }, (d) => (devnet = d))

/** Fails every third list page (its first asking only) with the next of these, round and round, up to `faults` in all. */
const KINDS = ["503", "429", "connection lost", "body not JSON"] as const
const failingProxy = (faults: number) => {
  const done: Record<string, number> = {}
  const failed = new Set<string>()
  let pages = 0
  let given = 0
  const handler = async (req: HostileRequest, forward: Forward): Promise<Answer> => {
    if (!req.url.searchParams.has("pagination.limit") || failed.has(req.path) || given >= faults || pages++ % 3 !== 0) return forward()
    failed.add(req.path)
    const kind = KINDS[given++ % KINDS.length]
    done[kind] = (done[kind] ?? 0) + 1
    if (kind === "503") return text(503, "Service Unavailable")
    if (kind === "429") return text(429, "Too Many Requests", { "retry-after": "0" })
    if (kind === "connection lost") return RESET
    const whole = await forward()
    return { status: 200, headers: { "content-type": "application/json" }, body: whole.body.slice(0, Math.floor(whole.body.length / 2)) }
  }
  return { handler, done }
}

describe("requests asked again", () => {
  for (const workers of ["0", "2"])
    it(`are counted by why and said in the summary, the JSON log and the run report (--workers ${workers})`, async () => {
      const { handler, done } = failingProxy(10)
      const server = await proxy(handler)
      const out = dirs.make()
      const args = ["export", "--indexer-url", server.url, "--out", out, "--workers", workers, "--page-size", "20"]
      const r = await runCli(args)
      expect(r.code, r.stderr).toBe(0)
      expect(Object.values(done).reduce((a, b) => a + b, 0)).toBe(10)
      const said = r.stdout.split("\n").find((l) => l.includes("asked again"))
      expect(said).toMatch(/^10 requests were asked again after a transient failure \(.+\): the indexer limits the rate \(429\)/)
      for (const [kind, n] of Object.entries(done)) expect(said).toContain(`${kind} ×${n}`)
      const [report] = readdirSync(join(out, "_runs")).map((f) => JSON.parse(readFileSync(join(out, "_runs", f), "utf8")))
      expect(report.retried).toEqual(done)
      // a log's progress (stderr is no terminal here) says them on a line of their own: its total line is fitted to 80 columns
      expect(r.stderr).toMatch(/^10 requests asked again so far \(.+\)$/m)
      // a run with nothing asked again says nothing of it
      const clean = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--out", dirs.make(), "--workers", workers])
      expect(clean.code, clean.stderr).toBe(0)
      expect(clean.stdout + clean.stderr).not.toContain("asked again")
    })

  it("each round of --follow and of sample-routes says what it asked again", async () => {
    const { handler, done } = failingProxy(4)
    const server = await proxy(handler)
    const followed = await runCli(["export", "--indexer-url", server.url, "--out", dirs.make(), "--follow", "--until-height", "110"])
    expect(followed.code, followed.stderr).toBe(0)
    const round = followed.stdout.split("\n").find((l) => / height 110: /.test(l))
    expect(round).toMatch(/, 4 requests asked again \(.+\)$/)
    for (const [kind, n] of Object.entries(done)) expect(round).toContain(`${kind} ×${n}`)
    // the router's quotes: the first three asked answer 503
    let routes = 0
    const router = track(
      await startProxy(devnet.routerUrl, (r, forward) =>
        r.url.pathname.endsWith("/route") && routes++ < 3 ? text(503, "Service Unavailable") : forward()
      )
    )
    const sampled = await runCli(["sample-routes", "--router-url", router.url, "--out", dirs.make(), "--datasets", "route_quotes"])
    expect(sampled.code, sampled.stderr).toBe(0)
    expect(sampled.stdout).toMatch(/^round \S+: \d+ quotes, \d+ routes, \d+ failed, 3 requests asked again \(503 ×3\) → /m)
  })

  it("sample-routes stopped mid-round says what the round it does not store asked again", async () => {
    let routes = 0
    let stalled = () => {}
    const seenStall = new Promise<void>((resolve) => (stalled = resolve))
    const router = track(
      await startProxy(devnet.routerUrl, async (r, forward) => {
        if (!r.url.pathname.endsWith("/route")) return forward()
        if (routes++ < 3) return text(503, "Service Unavailable")
        stalled()
        await new Promise((resolve) => setTimeout(resolve, 20_000))
        return forward()
      })
    )
    const child = spawn(
      process.execPath,
      [BIN, "sample-routes", "--router-url", router.url, "--out", dirs.make(), "--datasets", "route_quotes"],
      {
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    await seenStall
    child.kill("SIGINT")
    const code = await new Promise((resolve) => child.on("exit", resolve))
    expect(code, stderr).toBe(130)
    expect(stderr).toContain("the round under way asked 3 requests again (503 ×3)\n")
  })

  it("sample-routes says how far a round is while the router is slow to answer it (a log: every 10 s of the round)", async () => {
    let routes = 0
    const router = track(
      await startProxy(devnet.routerUrl, async (r, forward) => {
        if (r.url.pathname.endsWith("/route") && routes++ === 0) await new Promise((resolve) => setTimeout(resolve, 11_500))
        return forward()
      })
    )
    const r = await runCli(["sample-routes", "--router-url", router.url, "--out", dirs.make(), "--datasets", "route_quotes"])
    expect(r.code, r.stderr).toBe(0)
    const underWay = /^round \S+ under way: (\d+) of (\d+) quotes back(?: \(\d+ failed\))? after 00:1\d$/m.exec(r.stderr)
    expect(underWay, r.stderr).not.toBeNull()
    // one line for the round's 11.5 s: the first comes 10 s into it
    expect(r.stderr.match(/ under way: /g)).toHaveLength(1)
    const [, back, asks] = underWay ?? []
    expect(Number(back)).toBe(Number(asks) - 1)
    expect(r.stdout).toMatch(new RegExp(`^round \\S+: ${asks} quotes, `, "m"))
  })

  it.skipIf(!existsSync("/usr/bin/script") || !existsSync("/usr/bin/timeout"))(
    "sample-routes on a terminal redraws the round under way in place, and Ctrl-C's line starts on a cleared line",
    async () => {
      const router = track(
        await startProxy(devnet.routerUrl, async (r, forward) => {
          if (r.url.pathname.endsWith("/route")) await new Promise((resolve) => setTimeout(resolve, 20_000))
          return forward()
        })
      )
      const cli = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} sample-routes --router-url ${router.url} --out ${dirs.make()} --datasets route_quotes`
      // `script` runs it on a pseudo-terminal; Ctrl-C is typed into it once the round's line is drawn
      const child = spawn("/usr/bin/script", ["-qec", cli, "/dev/null"], {
        stdio: ["pipe", "pipe", "pipe"],
        // (a terminal under CI gets log lines: the tests run under CI there)
        env: Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "CI"))
      })
      let screen = ""
      let typed = false
      child.stdout.on("data", (d) => {
        screen += d
        if (!typed && /under way: 0 of 80/.test(screen)) {
          typed = true
          child.stdin.write("\x03")
        }
      })
      const code = await new Promise((resolve) => child.on("exit", resolve))
      expect(code, screen).toBe(130)
      expect(screen).toMatch(/\r\x1b\[Kround under way: 0 of 80 quotes back after 00:0\d/)
      expect(screen).toContain("\r\x1b[Kchain-lake: stopping (Ctrl-C again stops at once)")
    }
  )

  it("the JSON log's total and summary carry the counts", async () => {
    const { handler, done } = failingProxy(4)
    const server = await proxy(handler)
    const r = await runCli(["export", "--indexer-url", server.url, "--out", dirs.make(), "--log-format", "json", "--page-size", "20"])
    expect(r.code, r.stderr).toBe(0)
    const events = r.stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    expect(events.filter((e) => e.event === "finished").at(-1).retried).toEqual(done)
    expect(JSON.parse(r.stdout.trim()).retried).toEqual(done)
  })
})
