/**
 * Route-quote sampling against the devnet router: every ask of the plan becomes exactly one row
 * (failures included, with their error kind), also under faults; route_quote_stats shows the
 * amount ladder; bad plans and flags fail with one line.
 */
import { Effect } from "effect"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Analytics, layerAnalytics } from "../../src/analytics/Analytics.js"
import { DEFAULT_PLAN } from "../../src/cli/sample.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { layerManifests } from "../../src/lake/Manifests.js"
import { layerParquetSink } from "../../src/lake/ParquetSink.js"
import { layerRequestLimiter } from "../../src/http/RequestLimiter.js"
import { DEFAULT_RETRY } from "../../src/http/retry.js"
import { layerHttpTransport } from "../../src/http/transport.js"
import { layerRouterClient } from "../../src/router/RouterClient.js"
import { loadPlan, sampleRoutes } from "../../src/sampling/sampler.js"
import { ASSETS } from "../../src/devnet/router-graph.js"
import { runCli, startCli } from "../support/cli.js"
import { postJson } from "../support/http.js"
import { addressFor, trackArgs } from "../support/router.js"
import { json, startProxy } from "../support/hostile.js"
import { queryLake, scan } from "../support/lake.js"
import { tempDirs } from "../support/tmp.js"

const { make: tmp, removeAll: removeTmpDirs } = tempDirs("chain-lake-rq-")
let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 37, blocks: 10 })
})
afterAll(async () => {
  await devnet.stop()
  removeTmpDirs()
})

const sample = (routerUrl: string, out: string, rounds = 1, maxRetries = 4) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const plan = yield* loadPlan(DEFAULT_PLAN)
      return yield* sampleRoutes(plan, { rounds })
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          layerRouterClient({
            baseUrl: routerUrl,
            retry: { ...DEFAULT_RETRY, baseDelayMs: 5, maxDelayMs: 50, timeoutMs: 1500, maxRetries }
          }).pipe(Layer.provide(Layer.mergeAll(layerHttpTransport(), layerRequestLimiter({ concurrency: 8, rps: 0 })))),
          layerParquetSink(),
          layerManifests(out)
        )
      )
    )
  )

/** `sql` over the lake at `out` through its analytics views. */
const viewQuery = (out: string, sql: string) =>
  Effect.runPromise(Effect.flatMap(Analytics, (a) => a.query(sql)).pipe(Effect.provide(layerAnalytics({ dataDir: out })), Effect.scoped))

describe("route sampling", () => {
  it("one row per ask of the shipped plan (≥ 3 pairs × 4 amounts), failures as data, and route_quote_stats shows the ladder", async () => {
    const out = tmp()
    const plan = await Effect.runPromise(loadPlan(DEFAULT_PLAN))
    expect(plan.pairs.length).toBeGreaterThanOrEqual(3)
    expect(plan.pairs.every((p) => p.amounts.length >= 4)).toBe(true)
    const [round] = await sample(devnet.routerUrl, out)
    const asks = plan.pairs.reduce((s, p) => s + p.amounts.length, 0) * plan.variants.length
    expect(round.quotes).toBe(asks)
    const [counts] = await queryLake(
      `SELECT count(*) n, count(*) FILTER (WHERE ok) ok, list(DISTINCT error_kind ORDER BY error_kind) FILTER (WHERE NOT ok) kinds FROM ${scan(out, "route_quotes")}`
    )
    expect(Number(counts.n)).toBe(asks)
    expect(Number(counts.ok)).toBe(round.ok)
    // unsafe big swaps refused with allow_unsafe=false, and is_op_withdraw where no withdrawal exists
    expect(counts.kinds).toEqual(["BadPriceError", "NoRouteError"])
    // the router's assets and chains, read with the first round: every asset and chain the router
    // serves (asked over HTTP here, independently), so base units read as whole tokens
    const served = (await (await fetch(`${devnet.routerUrl}/v2/fungible/assets`)).json()) as {
      chain_to_assets_map: Record<string, { assets: Array<{ denom: string; symbol: string; decimals: number }> }>
    }
    const servedAssets = Object.entries(served.chain_to_assets_map)
      .flatMap(([chain, c]) => c.assets.map((a) => `${chain} ${a.denom} ${a.symbol} ${a.decimals}`))
      .sort()
    const assets = await queryLake(
      `SELECT chain_id || ' ' || denom || ' ' || symbol || ' ' || decimals AS a FROM ${scan(out, "router_assets")} ORDER BY 1`
    )
    expect(assets.map((r) => r.a)).toEqual(servedAssets)
    const chains = await queryLake(`SELECT chain_id, chain_type FROM ${scan(out, "router_chains")} ORDER BY chain_id`)
    const servedChains = (
      (await (await fetch(`${devnet.routerUrl}/v2/info/chains`)).json()) as { chains: Array<{ chain_id: string; chain_type: string }> }
    ).chains
    expect(chains).toEqual(
      servedChains.map((c) => ({ chain_id: c.chain_id, chain_type: c.chain_type })).sort((x, y) => (x.chain_id < y.chain_id ? -1 : 1))
    )
    // a quote read in whole tokens through router_assets
    const [human] = await queryLake(
      `SELECT count(*) n FROM ${scan(out, "route_quotes")} q JOIN ${scan(out, "router_assets")} a ON a.chain_id = q.source_chain_id AND a.denom = q.source_denom WHERE q.amount_in / 10 ^ a.decimals > 0`
    )
    expect(Number(human.n)).toBe(asks)
    const ladder = await viewQuery(
      out,
      "SELECT amount_in, median_price_impact_percent AS impact, availability FROM route_quote_stats WHERE variant = 'default' AND pair LIKE 'interwoven-1/uinit → interwoven-1/ibc/%' ORDER BY CAST(amount_in AS DOUBLE)"
    )
    const impacts = ladder.rows.map((r) => Number(r[1]))
    expect(impacts.length).toBe(4)
    expect(impacts).toEqual([...impacts].sort((a, b) => a - b))
    expect(impacts[3]).toBeGreaterThan(impacts[0])
    expect(ladder.rows.every((r) => Number(r[2]) === 1)).toBe(true)
  })

  it("route_quote_stats over outputs past DECIMAL(38,0): median_amount_out is NULL (not the median of the rest), median_amount_out_text the exact middle output", async () => {
    const plan = await Effect.runPromise(loadPlan(DEFAULT_PLAN))
    const asks = plan.pairs.reduce((s, p) => s + p.amounts.length, 0) * plan.variants.length
    // from the second round on, every route's output is 10^40 times larger (a uint256 amount)
    let routes = 0
    const huge = await startProxy(devnet.routerUrl, async (req, forward) => {
      const res = await forward()
      if (req.url.pathname !== "/v2/fungible/route" || res.status !== 200 || routes++ < asks) return res
      const body = JSON.parse(res.body)
      return json({ ...body, amount_out: `${body.amount_out}${"0".repeat(40)}` })
    })
    const out = tmp()
    try {
      await sample(huge.url, out, 3)
    } finally {
      await huge.close()
    }
    const stats = await viewQuery(
      out,
      "SELECT pair, variant, amount_in::VARCHAR, median_amount_out::VARCHAR, median_amount_out_text FROM route_quote_stats WHERE availability > 0"
    )
    expect(stats.rows.length).toBeGreaterThan(0)
    for (const [pair, variant, amountIn, median, medianText] of stats.rows) {
      const outputs = (
        await queryLake(
          `SELECT amount_out_text FROM ${scan(out, "route_quotes")} WHERE ok AND pair = '${pair}' AND variant = '${variant}' AND amount_in = ${amountIn}`
        )
      )
        .map((r) => BigInt(String(r.amount_out_text)))
        .sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
      expect(outputs.some((o) => o >= 10n ** 38n)).toBe(true)
      expect(median).toBeNull()
      expect(medianText).toBe(String(outputs[Math.floor((outputs.length - 1) / 2)]))
    }
  })

  it("a router without /v2/fungible/assets and /v2/info/chains: the quotes are sampled, both metadata datasets reported not served, nothing written for them", async () => {
    const documentedOnly = await startDevnet({ seed: 37, blocks: 10, routerMetadata: false })
    const out = tmp()
    try {
      expect((await fetch(`${documentedOnly.routerUrl}/v2/fungible/assets`)).status).toBe(404)
      const [round] = await sample(documentedOnly.routerUrl, out)
      expect(round.ok).toBeGreaterThan(0)
      expect(round.reference).toEqual({
        notServed: [
          { dataset: "router_assets", endpoint: "/v2/fungible/assets", status: 404 },
          { dataset: "router_chains", endpoint: "/v2/info/chains", status: 404 }
        ]
      })
      const [n] = await queryLake(`SELECT count(*) n FROM ${scan(out, "route_quotes")}`)
      expect(Number(n.n)).toBe(round.quotes)
      expect(readdirSync(out).filter((f) => f.startsWith("router_"))).toEqual([])
    } finally {
      await documentedOnly.stop()
    }
    // one of the two missing (a proxy's plain-text 404): the other is written
    const half = await startProxy(devnet.routerUrl, (r, forward) =>
      r.url.pathname === "/v2/fungible/assets"
        ? { status: 404, headers: { "content-type": "text/html" }, body: "<h1>Not Found</h1>" }
        : forward()
    )
    const halfOut = tmp()
    try {
      const [round] = await sample(half.url, halfOut)
      expect(round.reference).toMatchObject({ notServed: [{ dataset: "router_assets", status: 404 }] })
      const [chains] = await queryLake(`SELECT count(*) n FROM ${scan(halfOut, "router_chains")}`)
      expect(Number(chains.n)).toBe(round.reference!.chains)
      expect(Number(chains.n)).toBeGreaterThan(0)
    } finally {
      await half.close()
    }
  })

  it("the router's lists that repeat an entry as it is store it once; one that lists a key twice with different values, or an asset under another chain's key, is refused in one line, nothing of it stored", async () => {
    type Assets = { chain_to_assets_map: Record<string, { assets: Array<Record<string, unknown>> }> }
    type Chains = { chains: Array<Record<string, unknown>> }
    const serving = (edit: (assets: Assets, chains: Chains) => void) =>
      startProxy(devnet.routerUrl, async (req, forward) => {
        const reply = await forward()
        if (reply.status !== 200 || reply.body === undefined) return reply
        if (req.url.pathname !== "/v2/fungible/assets" && req.url.pathname !== "/v2/info/chains") return reply
        const assets = (req.url.pathname === "/v2/fungible/assets" ? JSON.parse(reply.body) : { chain_to_assets_map: {} }) as Assets
        const chains = (req.url.pathname === "/v2/info/chains" ? JSON.parse(reply.body) : { chains: [] }) as Chains
        edit(assets, chains)
        return { ...reply, body: JSON.stringify(req.url.pathname === "/v2/fungible/assets" ? assets : chains) }
      })
    const noble = (a: Assets) => a.chain_to_assets_map["noble-1"]?.assets
    const cases: Array<[string, (assets: Assets, chains: Chains) => void, string | undefined]> = [
      [
        "repeated as they are",
        (a, c) => {
          noble(a)?.push({ ...noble(a)![0] })
          if (c.chains.length > 0) c.chains.push({ ...c.chains[0] })
        },
        undefined
      ],
      [
        "one key, two decimals",
        (a) => void noble(a)?.push({ ...noble(a)![0], decimals: 18, symbol: "FAKE" }),
        "chain-lake: error: router_assets: the router's answer lists chain_id noble-1, denom uusdc twice, with different values (symbol USDC and FAKE; decimals 6 and 18): none of it is stored"
      ],
      [
        "an asset under another chain",
        (a) => void noble(a)?.push({ ...noble(a)![0], chain_id: "osmosis-1", denom: "uosmo" }),
        "chain-lake: error: router_assets: the router's answer lists osmosis-1/uosmo among the assets of noble-1: none of it is stored"
      ]
    ]
    for (const [what, edit, refusal] of cases) {
      const proxy = await serving(edit)
      try {
        const out = tmp()
        const r = await runCli(["sample-routes", "--router-url", proxy.url, "--out", out])
        const assets = () => queryLake(`SELECT chain_id, denom, count(*) n FROM ${scan(out, "router_assets")} GROUP BY ALL HAVING n > 1`)
        if (refusal === undefined) {
          expect(r.code, `${what}: ${r.stderr}`).toBe(0)
          expect(await assets(), what).toEqual([])
          const [chains] = await queryLake(`SELECT count(*) - count(DISTINCT chain_id) AS twice FROM ${scan(out, "router_chains")}`)
          expect(Number(chains.twice), what).toBe(0)
        } else {
          expect(r.code, what).toBe(1)
          expect(r.stderr.trim().split("\n").at(-1), what).toBe(refusal)
          expect(
            existsSync(join(out, "router_assets")) && readdirSync(join(out, "router_assets")).some((f) => !f.startsWith("_")),
            what
          ).toBe(false)
        }
      } finally {
        await proxy.close()
      }
    }
  }, 60_000)

  it("an assets list the router fails to answer (403) does not stop a sampler that did not name it: a notice, every round and router_chains stored; named, it fails in one line that says the quotes were kept", async () => {
    const forbidding = await startProxy(devnet.routerUrl, (r, forward) =>
      r.url.pathname === "/v2/fungible/assets" ? json({ code: 7, message: "forbidden" }, 403) : forward()
    )
    try {
      const out = tmp()
      const r = await runCli(["sample-routes", "--router-url", forbidding.url, "--out", out, "--count", "2", "--every", "1s"])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr.split("\n").filter((l) => l.startsWith("notice:"))).toEqual([
        `notice: router_assets not read this run (router answered 403 (code 7) for ${forbidding.url}/v2/fungible/assets?include_evm_assets=true&include_cw20_assets=true: forbidden); the route quotes are sampled`
      ])
      expect(r.stdout.match(/^round \S+: \d+ quotes/gm)).toHaveLength(2)
      const [chains] = await queryLake(`SELECT count(*) AS n FROM ${scan(out, "router_chains")}`)
      expect(Number(chains.n)).toBeGreaterThan(0)
      const named = await runCli([
        "sample-routes",
        "--router-url",
        forbidding.url,
        "--out",
        out,
        "--datasets",
        "route_quotes,router_assets"
      ])
      expect(named.code).toBe(1)
      expect(named.stderr.trim().split("\n").at(-1)).toBe(
        `chain-lake: error: router_assets was asked for, but reading /v2/fungible/assets failed (router answered 403 (code 7) for ${forbidding.url}/v2/fungible/assets?include_evm_assets=true&include_cw20_assets=true: forbidden); the round's quotes are committed`
      )
    } finally {
      await forbidding.close()
    }
  }, 60_000)

  it("the CLI against `chain-lake devnet --no-router-metadata`: a notice and exit 0; router_assets named with --datasets fails with one line, the quotes kept; track completes", async () => {
    const { child, stdout } = await startCli(["devnet", "--seed", "5", "--blocks", "10", "--no-router-metadata"], /router_url=\S+\n/)
    const routerUrl = /router_url=(\S+)/.exec(stdout())![1]
    try {
      expect((await fetch(`${routerUrl}/v2/info/chains`)).status).toBe(404)
      const out = tmp()
      const r = await runCli(["sample-routes", "--router-url", routerUrl, "--out", out])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr.split("\n").filter((l) => l.startsWith("notice:"))).toEqual([
        "notice: the router does not serve /v2/fungible/assets (404) nor /v2/info/chains (404): router_assets and router_chains skipped (not served); the route quotes are sampled"
      ])
      expect(r.stdout).toMatch(/^round \S+: \d+ quotes, [1-9]\d* routes/m)
      const named = await runCli(["sample-routes", "--router-url", routerUrl, "--out", out, "--datasets", "route_quotes,router_assets"])
      expect(named.code).toBe(1)
      expect(
        named.stderr
          .trim()
          .split("\n")
          .filter((l) => l.startsWith("chain-lake: error:"))
      ).toHaveLength(1)
      expect(named.stderr.trim().split("\n").at(-1)).toBe(
        "chain-lake: error: router_assets was asked for, but the router does not serve /v2/fungible/assets (404); the round's quotes are committed"
      )
      const [rounds] = await queryLake(`SELECT count(DISTINCT round_id) n FROM ${scan(out, "route_quotes")}`)
      expect(Number(rounds.n)).toBe(2)
      // the documented flow still runs end to end: bridge, broadcast (devnet only), track
      const chains = ["noble-1", "interwoven-1", "lake-evm-1"]
      const b = await runCli([
        "bridge",
        "--router-url",
        routerUrl,
        "--from",
        "noble-1:uusdc",
        "--to",
        `lake-evm-1:${ASSETS.l2Usdc.denom}`,
        "--amount",
        "3000000",
        ...chains.flatMap((c) => ["--address", `${c}=${addressFor(c)}`])
      ])
      expect(b.code, b.stderr).toBe(0)
      const sent = await postJson(routerUrl + "/devnet/broadcast", {
        chain_id: "noble-1",
        tx: JSON.parse(b.stdout).txs[0],
        outcome: "success"
      })
      const t = await runCli(trackArgs(routerUrl, sent.json.tx_hash, out))
      expect(t.code, t.stderr).toBe(0)
    } finally {
      child.kill("SIGINT")
    }
  })

  it("--datasets: route_quotes alone reads no metadata; an unknown name is a usage error", async () => {
    const asked: Array<string> = []
    const counting = await startProxy(devnet.routerUrl, (r, forward) => {
      asked.push(r.url.pathname)
      return forward()
    })
    try {
      const r = await runCli(["sample-routes", "--router-url", counting.url, "--out", tmp(), "--datasets", "route_quotes"])
      expect(r.code, r.stderr).toBe(0)
      expect(asked.filter((p) => p === "/v2/fungible/assets" || p === "/v2/info/chains")).toEqual([])
      expect(asked).toContain("/v2/fungible/route")
    } finally {
      await counting.close()
    }
    const bad = await runCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", tmp(), "--datasets", "route_quotes,assets"])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toBe(
      'chain-lake: error: --datasets takes route_quotes, router_assets, router_chains, got "route_quotes,assets"'
    )
  })

  it("a round that spans midnight UTC files each quote under the day of its sampled_at (the round's start put the next day's under the day before)", async () => {
    const slow = await startProxy(devnet.routerUrl, async (r, forward) => {
      if (r.url.pathname.endsWith("/route")) await new Promise((resolve) => setTimeout(resolve, 500))
      return forward()
    })
    const plan = join(tmp(), "plan.json")
    const amounts = Array.from({ length: 16 }, (_, k) => String(1_000_000 * (k + 1)))
    writeFileSync(
      plan,
      JSON.stringify({
        pairs: [{ from: { chain_id: "noble-1", denom: "uusdc" }, to: { chain_id: "interwoven-1", denom: "uinit" }, amounts }],
        variants: [{ label: "x" }]
      })
    )
    const out = tmp()
    try {
      // (16 asks one at a time, 0.5 s each: the round runs about 8 s, across the midnight 5 s after the process starts,
      // however long its start takes on a loaded machine, up to 5 s)
      const r = await runCli(
        ["sample-routes", "--router-url", slow.url, "--plan", plan, "--out", out, "--concurrency", "1", "--datasets", "route_quotes"],
        {
          env: {
            NODE_OPTIONS: `--import ${join(import.meta.dirname, "../support/clock-near-midnight.mjs")}`,
            CLOCK_MIDNIGHT_IN_MS: "5000"
          }
        }
      )
      expect(r.code, r.stderr).toBe(0)
      const rows = await queryLake(
        `SELECT CAST(date AS VARCHAR) AS date, strftime(sampled_at, '%Y-%m-%d') AS day FROM ${scan(out, "route_quotes")}`
      )
      expect(rows).toHaveLength(16)
      expect(new Set(rows.map((row) => row.day)).size).toBe(2)
      for (const row of rows) expect(row.date).toBe(row.day)
    } finally {
      await slow.close()
    }
  })

  it("a round the router refuses for its credentials (401 on the route, its status served) is no market data: the run fails in one line, nothing of it stored, a later round not tried", async () => {
    let routes = 0
    const denying = await startProxy(devnet.routerUrl, (r, forward) => {
      if (!r.url.pathname.endsWith("/route")) return forward()
      routes++
      return json({ code: 16, message: "invalid api key", details: [] }, 401)
    })
    const out = tmp()
    try {
      const r = await runCli(["sample-routes", "--router-url", denying.url, "--out", out, "--count", "3", "--every", "10ms"])
      expect(r.code).toBe(1)
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(
        /^chain-lake: error: the router refused the round's requests \(router answered 401 \(code 16\) for .*invalid api key\): check its credentials .*nothing of this round is stored/
      )
      expect(
        existsSync(join(out, "route_quotes", "_manifest.json"))
          ? readdirSync(join(out, "route_quotes")).filter((f) => f.startsWith("date="))
          : []
      ).toEqual([])
      // one round's asks, not three rounds'
      const asks = routes
      expect(asks).toBeGreaterThan(0)
      expect(asks).toBeLessThanOrEqual(80 * 2)
    } finally {
      await denying.close()
    }
    // a router refusing some asks (a bot filter, a key revoked mid-round): those are no quotes, said so; the others stored
    let every = 0
    const someDenied = await startProxy(devnet.routerUrl, (r, forward) =>
      r.url.pathname.endsWith("/route") && every++ % 2 === 0 ? json({ code: 7, message: "forbidden", details: [] }, 403) : forward()
    )
    try {
      const partly = tmp()
      const r = await runCli(["sample-routes", "--router-url", someDenied.url, "--out", partly, "--datasets", "route_quotes"])
      expect(r.code, r.stderr).toBe(0)
      const refused = Number(/the router refused (\d+) of its asks for their credentials \(router answered 403/.exec(r.stderr)?.[1])
      expect(refused).toBeGreaterThan(0)
      const [stored] = await queryLake(
        `SELECT count(*) AS n, count(*) FILTER (WHERE error_message LIKE '%forbidden%') AS forbidden FROM ${scan(partly, "route_quotes")}`
      )
      const plan = await Effect.runPromise(loadPlan(DEFAULT_PLAN))
      const asks = plan.pairs.reduce((n, p) => n + p.amounts.length, 0) * plan.variants.length
      expect({ n: Number(stored.n), forbidden: Number(stored.forbidden) }).toEqual({ n: asks - refused, forbidden: 0 })
    } finally {
      await someDenied.close()
    }
  })

  it("a round the router answered not at all (every ask 503) is an outage: the run fails, and nothing of it is stored as quotes", async () => {
    const down = await startProxy(devnet.routerUrl, (r, forward) =>
      r.url.pathname.endsWith("/route") ? json({ code: 14, message: "upstream unavailable" }, 503) : forward()
    )
    const out = tmp()
    try {
      const failed = await sample(down.url, out, 1, 1).then(
        () => undefined,
        (e: unknown) => String(e)
      )
      expect(failed).toMatch(
        /RouterUnavailableError.*the router answered none of the round's \d+ asks \(router answered 503 \(code 14\) for .*upstream unavailable\): nothing of this round is stored; rounds before it are kept/
      )
      expect(readdirSync(out).filter((f) => f === "route_quotes")).toEqual([])
      // in a run of several rounds, an outage round is skipped and the next one sampled; all skipped fails
      expect(
        await sample(down.url, out, 2, 1).then(
          () => "ok",
          (e: unknown) => String(e)
        )
      ).toMatch(/RouterUnavailableError/)
      let failedAsks = 0
      const blip = await startProxy(devnet.routerUrl, (r, forward) =>
        // the first round's 80 asks, each asked twice (maxRetries 1), meet an outage
        r.url.pathname.endsWith("/route") && failedAsks++ < 160 ? json({ code: 14, message: "upstream unavailable" }, 503) : forward()
      )
      try {
        const rounds = await sample(blip.url, out, 2, 1)
        expect(rounds).toHaveLength(1)
        expect(rounds[0].ok).toBeGreaterThan(0)
      } finally {
        await blip.close()
      }
      // one ask answered (no route is an answer) and the round is data again, its 503s as failures
      let answered = 0
      const partly = await startProxy(devnet.routerUrl, (r, forward) =>
        r.url.pathname.endsWith("/route") && answered++ > 0 ? json({ code: 14, message: "upstream unavailable" }, 503) : forward()
      )
      try {
        const [round] = await sample(partly.url, out, 1, 1)
        expect(round.failed).toBe(round.quotes - round.ok)
        expect(round.quotes - round.failed).toBeLessThanOrEqual(1)
      } finally {
        await partly.close()
      }
    } finally {
      await down.close()
    }
  })

  it("a round of answers that are no router's (a gateway's HTML page with 200, a JSON null, {} or {\"error\"}, a text 404 page) is an outage too: nothing of it stored", async () => {
    const pages: Record<string, { status: number; type: string; body: string }> = {
      maintenance: { status: 200, type: "text/html", body: "<html><body>down for maintenance</body></html>" },
      nothing: { status: 200, type: "application/json", body: "null" },
      empty: { status: 200, type: "application/json", body: "{}" },
      upstream: { status: 200, type: "application/json", body: '{"error":"upstream connect error"}' },
      missing: { status: 404, type: "text/plain", body: "404 page not found" }
    }
    for (const [what, page] of Object.entries(pages)) {
      const gateway = await startProxy(devnet.routerUrl, (r, forward) =>
        r.url.pathname.endsWith("/route") ? { status: page.status, headers: { "content-type": page.type }, body: page.body } : forward()
      )
      const out = tmp()
      try {
        const failed = await sample(gateway.url, out, 1, 1).then(
          () => "stored",
          (e: unknown) => String(e)
        )
        expect(failed, what).toMatch(/RouterUnavailableError.*the router answered none of the round's \d+ asks/)
        expect(
          readdirSync(out).filter((f) => f === "route_quotes"),
          what
        ).toEqual([])
      } finally {
        await gateway.close()
      }
    }
  })

  it("under the heavy fault profile no sample is lost: the same routes and failures as a clean router", async () => {
    const faulty = await startDevnet({ seed: 37, blocks: 10, faults: "heavy,stall-ms=2000,retry-after=0" })
    const out = tmp()
    try {
      // a retry budget that transient faults cannot exhaust (≥ 20% fail, so 11 failures in a row are ~1e-7)
      const [round] = await sample(faulty.routerUrl, out, 1, 10)
      const cleanOut = tmp()
      const [clean] = await sample(devnet.routerUrl, cleanOut)
      expect([round.quotes, round.ok, round.failed]).toEqual([clean.quotes, clean.ok, clean.failed])
      // the same outcome per ask: what failed did so for a reason of the route, not of the transport
      const outcomes = (dir: string) =>
        queryLake(
          `SELECT pair, variant, amount_in::VARCHAR amount_in, ok, error_kind, amount_out::VARCHAR amount_out FROM ${scan(dir, "route_quotes")} ORDER BY ALL`
        )
      const [a, b] = await Promise.all([outcomes(out), outcomes(cleanOut)])
      expect(a).toEqual(b)
      expect(a.every((r) => r.ok || r.error_kind === "NoRouteError" || r.error_kind === "BadPriceError")).toBe(true)
    } finally {
      await faulty.stop()
    }
  })

  it("the CLI samples on a schedule and rejects bad plans and flags with one line", async () => {
    const out = tmp()
    const r = await runCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", out, "--every", "200ms", "--count", "2"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.match(/^round \S+: \d+ quotes, \d+ routes, \d+ failed/gm)?.length).toBe(2)
    // sampled datasets are the lake's like any other: compact merges the two rounds' files when asked by name
    const compacted = await runCli(["compact", "--data", out, "--datasets", "route_quotes", "--grace", "0s"])
    expect(compacted.code, compacted.stderr).toBe(0)
    expect(
      readdirSync(join(out, "route_quotes"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".parquet"))
    ).toHaveLength(1)
    const badPlan = join(tmp(), "plan.json")
    writeFileSync(
      badPlan,
      JSON.stringify({
        pairs: [{ from: { chain_id: "a", denom: "b" }, to: { chain_id: "c" }, amounts: ["1"] }],
        variants: [{ label: "x" }]
      })
    )
    const bad = await runCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", out, "--plan", badPlan])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toMatch(/^chain-lake: error: the plan \S+ is invalid at pairs\[0\]\.to\.denom: is missing$/)
    // a quote asked twice in a round (rows of one key): an amount written twice, a variant label reused
    const pair = { from: { chain_id: "noble-1", denom: "uusdc" }, to: { chain_id: "interwoven-1", denom: "uinit" } }
    for (const [plan, where] of [
      [
        { pairs: [{ ...pair, amounts: ["1000000", "01000000"] }], variants: [{ label: "x" }] },
        /invalid at pairs\[0\]\.amounts\[1\]: 01000000 is given twice$/
      ],
      // past DECIMAL(38,0) amount_in (a key column) was stored NULL: two such asks one row key
      [
        { pairs: [{ ...pair, amounts: ["1" + "0".repeat(38)] }], variants: [{ label: "x" }] },
        /invalid at pairs\[0\]\.amounts\[0\]: at most 38 digits \(route_quotes keeps amounts as DECIMAL\(38,0\)\)$/
      ],
      [
        {
          pairs: [{ ...pair, amounts: ["1"] }],
          variants: [
            { label: "x", go_fast: true },
            { label: "x", go_fast: false }
          ]
        },
        /invalid at variants\[1\]\.label: "x" is given twice$/
      ],
      [
        {
          pairs: [
            { ...pair, amounts: ["1"] },
            { ...pair, amounts: ["2"] }
          ],
          variants: [{ label: "x" }]
        },
        /invalid at pairs\[1\]: noble-1:uusdc → interwoven-1:uinit is given twice$/
      ]
    ] as const) {
      writeFileSync(badPlan, JSON.stringify(plan))
      const twice = await runCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", out, "--plan", badPlan])
      expect(twice.code).toBe(2)
      expect(twice.stderr.trim()).toMatch(where)
    }
    const every = await runCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", out, "--every", "soon"])
    expect(every.stderr.trim()).toBe('chain-lake: error: --every must look like 30s, 5m or 1h, got "soon"')
    const zero = await runCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", out, "--every", "0s"])
    expect([zero.code, zero.stderr.trim()]).toEqual([
      2,
      'chain-lake: error: --every must be more than 0 (each round asks the router for its whole plan), got "0s"'
    ])
    // Ctrl-C between rounds says what stays (it exited 130 without a word)
    const { child } = await startCli(["sample-routes", "--router-url", devnet.routerUrl, "--out", tmp(), "--every", "1h"], /^round \S+:/m)
    let stderr = ""
    child.stderr!.on("data", (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    child.kill("SIGINT")
    expect(await exited).toBe(130)
    expect(stderr.trim().split("\n").at(-1)).toBe(
      "chain-lake: interrupted: every round committed so far is kept; the round under way is not stored"
    )
  })
})
