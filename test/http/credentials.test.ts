/**
 * Services behind gateways: basic auth in the URL, headers from flags and the environment, an API
 * key in the URL's query. Every request carries them, and no secret appears in anything the tool
 * prints or writes.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { Devnet } from "../../src/devnet/index.js"
import { parseServiceUrl, parseHeaderLines, redact, redactUrl, rememberSecrets } from "../../src/http/serviceUrl.js"
import { rememberSecret, rememberUrlSecrets } from "../../src/secrets/redact.js"
import { runCli } from "../support/cli.js"
import { json, proxiedDevnet, RESET, startProxy, text, type HostileRequest } from "../support/hostile.js"
import { queryLake } from "../support/lake.js"
import { bridgeAndBroadcast, trackArgs } from "../support/router.js"
import { tempDirs } from "../support/tmp.js"

let devnet: Devnet
const servers = proxiedDevnet({ seed: 83, blocks: 60 }, (d) => (devnet = d))
const { make: tmp } = tempDirs("chain-lake-credentials-")

const PASSWORD = "s3cret-Pa55word"
const API_KEY = "k3y-0f-the-gateway-123"
const QUERY_KEY = "q-key-987654"

/** Every file under `dir`, as text. */
const allText = (dir: string): string =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((rel) => join(dir, rel))
    .filter((p) => statSync(p).isFile())
    .map((p) => readFileSync(p, "latin1"))
    .join("\n")

/** A gateway in front of the devnet's indexer: 401 unless `allowed` says the request carries the credentials. */
const gateway = (allowed: (r: HostileRequest) => boolean) =>
  servers.proxy((r, forward) => (allowed(r) ? forward(r.path) : text(401, "unauthorized")))

describe("credentials for services behind a gateway", () => {
  it("basic auth from the URL: every request carries it, the export is whole, and the password is nowhere in output or lake", async () => {
    const basic = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString("base64")}`
    const server = await gateway((r) => r.headers.authorization === basic)
    const out = tmp()
    const url = server.url.replace("http://", `http://alice:${PASSWORD}@`)
    const r = await runCli(["export", "--indexer-url", url, "--datasets", "blocks", "--out", out])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/blocks\s+\|?\s*60\b/)
    expect(server.requests.length).toBeGreaterThan(1)
    expect(server.requests.every((q) => q.headers.authorization === basic)).toBe(true)
    for (const where of [r.stdout, r.stderr, allText(out)]) {
      expect(where).not.toContain(PASSWORD)
      expect(where).not.toContain(basic.slice(6))
    }
    // the run report names the service, without its credentials
    const report = readdirSync(join(out, "_runs"))[0]
    expect(JSON.parse(readFileSync(join(out, "_runs", report), "utf8")).indexerUrl).toBe(server.url)
  })

  it("headers from the environment and --header, and a key in the URL's query, go with every request", async () => {
    const server = await gateway(
      (r) => r.headers["x-api-key"] === API_KEY && r.headers["x-team"] === "data" && r.url.searchParams.get("apikey") === QUERY_KEY
    )
    const out = tmp()
    const r = await runCli(
      [
        "export",
        "--indexer-url",
        `${server.url}/?apikey=${QUERY_KEY}`,
        "--header",
        "X-Team: data",
        "--datasets",
        "blocks,txs",
        "--out",
        out
      ],
      {
        env: { CHAIN_LAKE_INDEXER_HEADERS: `x-api-key: ${API_KEY}` }
      }
    )
    expect(r.code, r.stderr).toBe(0)
    // paging still works with the key appended (the client's own query comes first)
    const queries = server.requests.map((q) => new URL(q.path, "http://x").searchParams)
    expect(queries.some((q) => q.has("pagination.limit") && q.get("apikey") === QUERY_KEY)).toBe(true)
    expect(server.requests.every((q) => q.headers["x-api-key"] === API_KEY)).toBe(true)
    for (const where of [r.stdout, r.stderr, allText(out)]) {
      expect(where).not.toContain(API_KEY)
      expect(where).not.toContain(QUERY_KEY)
    }
  })

  it("wrong credentials: one line saying the service wants credentials (not 'cannot reach'), exit 1, no secret printed", async () => {
    const server = await gateway(() => false)
    const out = tmp()
    const r = await runCli(["export", "--indexer-url", server.url.replace("http://", `http://bob:${PASSWORD}@`), "--out", out])
    expect(r.code).toBe(1)
    const lines = r.stderr.trim().split("\n")
    expect(lines.length, r.stderr).toBe(1)
    expect(lines[0]).toMatch(
      /^chain-lake: error: http:\/\/127\.0\.0\.1:\d+ \(--indexer-url\): \/status answered 401 Unauthorized: the service wants credentials/
    )
    expect(r.stderr + r.stdout).not.toContain(PASSWORD)
    expect(readdirSync(out)).toEqual([])
  })

  it("a gateway that echoes the request (its line URL-encoded, a header in base64) in a 400 gets no secret printed, in any of those forms", async () => {
    const key = "Q+Key/1=9"
    const header = "HDR+SECRET/99"
    const server = await servers.proxy((r) =>
      text(
        400,
        `bad request: ${r.method} ${r.path} x-api-key=${encodeURIComponent(String(r.headers["x-api-key"]))} raw=${Buffer.from(String(r.headers["x-api-key"])).toString("base64")}`
      )
    )
    const r = await runCli([
      "export",
      "--indexer-url",
      `${server.url}/?api_key=${encodeURIComponent(key)}`,
      "--header",
      `x-api-key: ${header}`,
      "--out",
      tmp()
    ])
    expect(r.code).toBe(1)
    // the echo reached the message (else this test proves nothing)
    expect(r.stderr).toContain("bad request: GET /status")
    for (const secret of [key, header])
      for (const form of [
        secret,
        encodeURIComponent(secret),
        new URLSearchParams({ s: secret }).toString().slice(2),
        Buffer.from(secret).toString("base64")
      ])
        expect(r.stderr + r.stdout, form).not.toContain(form)
  })

  it("a router that echoes the request's key and credentials into its errors: route_quotes stores them redacted", async () => {
    const echo = await startProxy(devnet.routerUrl, (r, forward) =>
      r.url.pathname.endsWith("/route")
        ? json(
            {
              code: 3,
              message: `invalid request: url=${r.path} auth=${String(r.headers.authorization)} key=${String(r.headers["x-api-key"])}`
            },
            400
          )
        : forward()
    )
    try {
      const out = tmp()
      const url = echo.url.replace("http://", `http://alice:${PASSWORD}@`) + `/?apikey=${QUERY_KEY}`
      const r = await runCli(["sample-routes", "--router-url", url, "--header", `X-Api-Key: ${API_KEY}`, "--out", out])
      expect(r.code, r.stderr).toBe(0)
      const rows = await queryLake(
        `SELECT error_message FROM read_parquet('${out}/route_quotes/**/*.parquet') WHERE error_message IS NOT NULL`
      )
      expect(rows.length).toBeGreaterThan(0)
      // the echo reached the rows (else this test proves nothing), with every secret starred
      expect(String(rows[0].error_message)).toMatch(/invalid request: url=.*apikey=\*\*\*.* auth=(Basic )?\*\*\* key=\*\*\*/)
      const stored = rows.map((q) => String(q.error_message)).join("\n")
      for (const secret of [PASSWORD, API_KEY, QUERY_KEY, Buffer.from(`alice:${PASSWORD}`).toString("base64")])
        expect(stored).not.toContain(secret)
    } finally {
      await echo.close()
    }
  })

  it("a router that echoes the request's key into a route's warning and a transfer's explorer links: no text column of route_quotes or transfers holds it", async () => {
    /** `text` with the request's key in it, as a router might echo it */
    const echoed = (r: HostileRequest) => `see https://explorer.example/tx?key=${String(r.headers["x-api-key"])}`
    const echo = await startProxy(devnet.routerUrl, async (r, forward) => {
      const reply = await forward()
      if (reply.status !== 200 || reply.body === undefined) return reply
      const body = JSON.parse(reply.body) as Record<string, unknown>
      if (r.url.pathname.endsWith("/route")) body.warning = { type: "LOW_INFO_WARNING", message: echoed(r) }
      // every tx a transfer event names gets an explorer link carrying the key
      if (r.url.pathname === "/v2/tx/status")
        JSON.stringify(body, (_k, v: unknown) => {
          if (v && typeof v === "object" && typeof (v as { tx_hash?: unknown }).tx_hash === "string")
            (v as Record<string, unknown>).explorer_link = echoed(r)
          return v
        })
      return { ...reply, body: JSON.stringify(body) }
    })
    try {
      const out = tmp()
      const quotes = await runCli(["sample-routes", "--router-url", echo.url, "--header", `X-Api-Key: ${API_KEY}`, "--out", out])
      expect(quotes.code, quotes.stderr).toBe(0)
      const { txHash } = await bridgeAndBroadcast(devnet.routerUrl, "success")
      const tracked = await runCli(trackArgs(echo.url, txHash, out, "--header", `X-Api-Key: ${API_KEY}`))
      expect(tracked.code, tracked.stderr).toBe(0)
      const warnings = await queryLake(
        `SELECT warning_message FROM read_parquet('${out}/route_quotes/**/*.parquet') WHERE warning_message IS NOT NULL`
      )
      const hops = await queryLake(`SELECT hops FROM read_parquet('${out}/transfers/**/*.parquet') WHERE hops IS NOT NULL`)
      // the echo reached the rows (else this test proves nothing), the key starred
      expect(warnings.length).toBeGreaterThan(0)
      expect(String(warnings[0].warning_message)).toBe("see https://explorer.example/tx?key=***")
      expect(hops.map((h) => String(h.hops)).join("\n")).toContain("key=***")
      const rows = [
        ...(await queryLake(`SELECT * FROM read_parquet('${out}/route_quotes/**/*.parquet')`)),
        ...(await queryLake(`SELECT * FROM read_parquet('${out}/transfers/**/*.parquet')`))
      ]
      expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(API_KEY)
    } finally {
      await echo.close()
    }
  }, 60_000)

  it("a gateway that drops the first connection (a flaky one) is asked again: the export runs, and only a service that stays down is 'cannot reach'", async () => {
    const flaky = await servers.proxy((r, forward) => (r.index < 2 ? RESET : forward(r.path)))
    const out = tmp()
    const r = await runCli(["export", "--indexer-url", flaky.url, "--out", out, "--datasets", "blocks"])
    expect(r.code, r.stderr).toBe(0)
    expect(flaky.requests.slice(0, 3).map((q) => q.path)).toEqual(["/status", "/status", "/status"])
    const down = await servers.proxy(() => RESET)
    const failed = await runCli(["export", "--indexer-url", down.url, "--out", tmp(), "--datasets", "blocks"])
    expect(failed.code).toBe(1)
    expect(failed.stderr.trim()).toMatch(
      /^chain-lake: error: cannot reach http:\/\/127\.0\.0\.1:\d+ \(--indexer-url\): \w+; check the URL and that the service is up$/
    )
    expect(down.requests.length).toBe(3)
  })

  it("a login page in front of the service (200, HTML) fails the command before it asks anything more: sample-routes stores no round of 'not JSON' quotes", async () => {
    const login = await servers.proxy(() => text(200, "<!doctype html><html><body>Sign in</body></html>", { "content-type": "text/html" }))
    const out = tmp()
    const r = await runCli(["sample-routes", "--router-url", login.url, "--out", out])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(
      /^chain-lake: error: http:\/\/127\.0\.0\.1:\d+ \(--router-url\): \/v2\/tx\/status answered 200 with an HTML page, not JSON: is this the router's URL \(or is a login or gateway page in front of it\)\?$/
    )
    expect(login.requests.length).toBe(1)
    expect(readdirSync(out)).toEqual([])
    // an answer in an encoding it cannot read came from a service that is up: not "cannot reach"
    const zstd = await servers.proxy(async (r, forward) => ({
      ...(await forward(r.path)),
      headers: { "content-type": "application/json", "content-encoding": "zstd" }
    }))
    const z = await runCli(["export", "--indexer-url", zstd.url, "--out", tmp(), "--datasets", "blocks"])
    expect([z.code, z.stderr.trim()]).toEqual([
      1,
      `chain-lake: error: ${zstd.url} (--indexer-url): /status: its body came with content-encoding zstd, which chain-lake cannot read (gzip, br and deflate it can)`
    ])
  })

  it("a node's RPC (its /status is JSON, but not an indexer's) is named as such, before anything is asked of it", async () => {
    const rpc = await servers.proxy(() =>
      json({ jsonrpc: "2.0", id: -1, result: { node_info: { network: "x-1" }, sync_info: { latest_block_height: "5" } } })
    )
    const r = await runCli(["export", "--indexer-url", rpc.url, "--out", tmp(), "--datasets", "blocks"])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe(
      `chain-lake: error: ${rpc.url} (--indexer-url): /status answered JSON that is not an indexer's status (no chain_id and height; it looks like a node's RPC, which answers /status too): is this the indexer's URL?`
    )
    expect(rpc.requests.length).toBe(1)
  })

  it("a server that answers, but not as the indexer (404), is named as such, not as unreachable", async () => {
    const server = await servers.proxy(() => text(404, "no such route"))
    const r = await runCli(["export", "--indexer-url", server.url, "--out", tmp()])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(/^chain-lake: error: .*\/status answered 404 Not Found: is this the right service/)
    expect(r.stderr).not.toMatch(/cannot reach/)
  })

  it("a malformed header or URL is a usage error (exit 2) that repeats no secret", async () => {
    const bad = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--header", `Authorization Bearer ${API_KEY}`, "--out", tmp()])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toMatch(/^chain-lake: error: indexer headers: a header must look like "Name: value"/)
    expect(bad.stderr).not.toContain(API_KEY)
    expect(bad.stderr).not.toContain(API_KEY.slice(0, 8))
    // a plain word of a malformed line is no key: masked, it garbled the message that holds it
    const plain = await runCli(["export", "--indexer-url", devnet.indexerUrl, "--header", "Bad header", "--out", tmp()])
    expect(plain.code).toBe(2)
    expect(plain.stderr.trim()).toMatch(/^chain-lake: error: indexer headers: a header must look like "Name: value"/)
    const ftp = await runCli(["export", "--indexer-url", `ftp://carol:${PASSWORD}@host/`, "--out", tmp()])
    expect(ftp.code).toBe(2)
    expect(ftp.stderr.trim()).toMatch(/^chain-lake: error: --indexer-url must be an http\(s\) URL .*ftp:\/\/\*\*\*@host/)
    expect(ftp.stderr).not.toContain(PASSWORD)
  })
})

/** A pipeline file in a fresh folder (no package.json around it) exporting definePipeline(definition). */
const pipelineFile = (definition: object): string => {
  const file = join(tmp(), "leaky.ts")
  writeFileSync(
    file,
    `import { definePipeline } from ${JSON.stringify(resolve("src/pipelines/definePipeline.ts"))}\nexport default definePipeline(${JSON.stringify(definition)})\n`
  )
  return file
}

/** The forms a hostile server echoes a secret in. */
const encodedForms = (secret: string): Record<string, string> => {
  const bytes = Buffer.from(secret)
  return {
    raw: secret,
    hex: bytes.toString("hex"),
    HEX: bytes.toString("hex").toUpperCase(),
    b64: bytes.toString("base64"),
    b64url: bytes.toString("base64url"),
    pct: encodeURIComponent(secret)
  }
}

describe("secrets in every form, on every way out", () => {
  const PW = "s3cret/Pa55+w=rd"
  const KEY = "k3y~gateway/42+x"
  const QKEY = "q-key-987654"

  it("chain-lake run: a pipeline whose URL holds user:pass and a key fails at a server echoing them encoded; no form is in stdout, stderr or any file under --out", async () => {
    const echo = (label: string, secret: string) => Object.entries(encodedForms(secret)).map(([form, value]) => `${label}.${form}=${value}`)
    const echoes = (r: HostileRequest) => {
      const pw = Buffer.from(String(r.headers.authorization).split(" ")[1], "base64").toString().split(":").slice(1).join(":")
      return [
        ...echo("pw", pw),
        ...echo("key", String(r.headers["x-api-key"])),
        ...echo("q", String(r.url.searchParams.get("apikey")))
      ].join(" ")
    }
    // the first run: /status answers, its first page is refused with the request's secrets echoed in
    // the error body; the second: /status is malformed, its height the echo (a decode error quotes it,
    // no error body in between)
    let refused = false
    const server = await servers.proxy((r, forward) => {
      if (r.url.pathname !== "/status") return ((refused = true), text(400, `rejected: ${echoes(r)}`))
      return refused ? json({ version: "v1", commit_hash: "x", chain_id: "c-1", height: echoes(r) }) : forward(r.path)
    })
    const url = server.url.replace("http://", `http://alice:${encodeURIComponent(PW)}@`) + `/?apikey=${QKEY}`
    const file = pipelineFile({
      name: "leaky",
      description: "test",
      datasets: ["blocks"],
      schedule: "* * * * * *",
      sources: { indexerUrl: url }
    })
    const out = tmp()
    const r = await runCli(["run", file, "--schedule", "--max-runs", "2", "--out", out], {
      env: { CHAIN_LAKE_INDEXER_URL: "", CHAIN_LAKE_INDEXER_HEADERS: `X-Api-Key: ${KEY}` }
    })
    expect(r.code).toBe(1)
    const lines = r.stdout.trim().split("\n")
    expect(lines.map((l) => /leaky: FAILED — (indexer answered 400|Expected number)/.exec(l)?.[1])).toEqual([
      "indexer answered 400",
      "Expected number"
    ])
    const reports = readdirSync(join(out, "_runs")).map(
      (f) => (JSON.parse(readFileSync(join(out, "_runs", f), "utf8")) as { error: string }).error
    )
    expect(reports.length).toBe(2)
    // every echo reached each run's line and report (else this test proves nothing), starred
    const labels = ["pw", "key", "q"].flatMap((l) => Object.keys(encodedForms("x")).map((f) => `${l}.${f}`))
    for (const where of [...lines, ...reports]) for (const label of labels) expect(where, label).toContain(`${label}=***`)
    const everything = [r.stdout, r.stderr, allText(out)].join("\n")
    for (const secret of [PW, KEY, QKEY])
      for (const form of Object.values(encodedForms(secret))) expect(everything, form).not.toContain(form)
  })

  it("a URL with no scheme, a broken scheme, or a password with an unencoded '/', from a flag or the environment: exit 2, one line, no password", async () => {
    const PASS = "Pa55-w0rd-xyz"
    const urls = [
      `user:${PASS}@host`,
      `htp:/user:${PASS}@x`,
      `//user:${PASS}@host`,
      `http://user:12/${PASS}@127.0.0.1:9`,
      `http://user:${PASS}@ho st/`
    ]
    const file = pipelineFile({ name: "leaky", description: "test", datasets: ["blocks"], schedule: "0 0 * * *" })
    const results = await Promise.all([
      ...urls.map((url) => runCli(["export", "--indexer-url", url, "--out", tmp()])),
      runCli(["run", file, "--out", tmp()], { env: { CHAIN_LAKE_INDEXER_URL: `//user:${PASS}@host` } }),
      runCli(["sample-routes", "--out", tmp()], { env: { CHAIN_LAKE_ROUTER_URL: `user:${PASS}@host` } })
    ])
    for (const r of results) {
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr.trim().split("\n").length, r.stderr).toBe(1)
      expect(r.stderr).toMatch(/(must be an http\(s\) URL|has an "@" in its path).*\*\*\*@/)
      expect(r.stderr + r.stdout).not.toContain(PASS)
    }
  })
})

describe("endpoint parsing and redaction", () => {
  it("takes user:pass out of the URL into a basic-auth header, keeps the query apart, and redacts what it was given", () => {
    const e = Either.getOrThrow(parseServiceUrl("https://u%40x:p%3Aw@idx.example.com/api/?apikey=abcd1234", { "x-api-key": "zzzz9999" }))
    expect(e.baseUrl).toBe("https://idx.example.com/api")
    expect(e.headers).toEqual({ authorization: `Basic ${Buffer.from("u@x:p:w").toString("base64")}`, "x-api-key": "zzzz9999" })
    expect(e.query).toEqual([["apikey", "abcd1234"]])
    rememberSecrets(e, "https://u%40x:p%3Aw@idx.example.com/api/?apikey=abcd1234")
    expect(redact("got zzzz9999 and abcd1234 from https://u:pw@h/x")).toBe("got *** and *** from https://***@h/x")
    expect(redactUrl("http://a:b@c@h:1/p?key=v&x=y")).toBe("http://***@h:1/p?key=***&x=***")
    expect(Either.isLeft(parseHeaderLines(["no-colon-here"]))).toBe(true)
    expect(parseHeaderLines(["A: 1\nB:  two words "])).toEqual(Either.right({ a: "1", b: "two words" }))
  })

  it("a URL's user-info is hidden whatever its form, and a malformed URL's password is remembered", () => {
    expect(redactUrl("user:pw@host")).toBe("user:***@host")
    expect(redactUrl("htp:/u:p@x/y?k=v")).toBe("htp:/***@x/y?k=***")
    expect(redactUrl("//u:p@h")).toBe("//***@h")
    expect(redactUrl("http://u:12/34@h")).toBe("http://***@h")
    rememberUrlSecrets("htp:/bob:Hunter-22@x")
    rememberUrlSecrets("carol:Swordfish-7@host")
    expect(redact("said Hunter-22 and Swordfish-7")).toBe("said *** and ***")
  })

  it("a remembered secret is hidden in each form a server may echo it in, and inside a longer text encoded whole", () => {
    const secret = "Zq9/k+ey=!x&y"
    rememberSecret(secret)
    const forms = [
      ...Object.values(encodedForms(secret)),
      new URLSearchParams({ s: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1)
    ]
    for (const form of forms) expect(redact(`<${form}>`), form).toBe("<***>")
    // at each of base64's 3 offsets: what is left after *** is the last group, which mixes in padding
    for (const pad of ["", "a", "ab"]) expect(redact(Buffer.from(`${pad}x-api-key: ${secret}`).toString("base64"))).toMatch(/\*\*\*.{0,4}$/)
    // too short to hide
    rememberSecret("abc")
    expect(redact("abc")).toBe("abc")
  })
})
