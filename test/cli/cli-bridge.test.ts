/** `chain-lake bridge`: route → op-hook when required → msgs as JSON; never signs or broadcasts. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { ASSETS } from "../../src/devnet/router-graph.js"
import { EXAMPLES } from "../../src/cli/help.js"
import { runCli } from "../support/cli.js"
import { addressFor } from "../support/router.js"
import { startProxy, text } from "../support/hostile.js"

let devnet: Devnet
let dir: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 41, blocks: 10 })
  dir = mkdtempSync(join(tmpdir(), "chain-lake-bridge-"))
})
afterAll(async () => {
  await devnet.stop()
  rmSync(dir, { recursive: true, force: true })
})

const flags = (src: { chainId: string; denom: string }, dst: { chainId: string; denom: string }, chains: Array<string>) => [
  "bridge",
  "--router-url",
  devnet.routerUrl,
  "--from",
  `${src.chainId}:${src.denom}`,
  "--to",
  `${dst.chainId}:${dst.denom}`,
  "--amount",
  "2000000",
  ...chains.flatMap((c) => ["--address", `${c}=${addressFor(c)}`])
]

describe("chain-lake bridge", () => {
  it("prints the route and the signable txs", async () => {
    const r = await runCli(flags(ASSETS.nobleUsdc, ASSETS.l2Usdc, ["noble-1", "interwoven-1", "lake-evm-1"]))
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.route.chain_ids).toEqual(["noble-1", "interwoven-1", "lake-evm-1"])
    expect(out.txs[0].cosmos_tx.msgs[0].msg_type_url).toBe("/ibc.applications.transfer.v1.MsgTransfer")
    expect(BigInt(out.min_amount_out)).toBeLessThan(2000000n)
  })

  it("says on stderr the requests it asked again, and prints the same txs", async () => {
    let routes = 0
    const flaky = await startProxy(devnet.routerUrl, (req, forward) =>
      req.url.pathname.endsWith("/route") && routes++ === 0 ? text(503, "Service Unavailable") : forward()
    )
    try {
      const args = flags(ASSETS.nobleUsdc, ASSETS.l2Usdc, ["noble-1", "interwoven-1", "lake-evm-1"])
      const r = await runCli(args.map((a) => (a === devnet.routerUrl ? flaky.url : a)))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toContain("1 request was asked again after a transient failure (503 ×1)\n")
      expect(JSON.parse(r.stdout).txs).toEqual(JSON.parse((await runCli(args)).stdout).txs)
    } finally {
      await flaky.close()
    }
  })

  it("stops at the op-hook when the route needs one, and goes on with --signed-op-hook", async () => {
    const chains = ["lake-evm-1", "interwoven-1", "osmosis-1"]
    // --op-withdraw forces the OPinit withdrawal, after which a hook forwards the funds to Osmosis
    const first = await runCli([...flags(ASSETS.l2Init, ASSETS.osmoInit, chains), "--op-withdraw"])
    expect(first.code).toBe(1)
    expect(first.stderr.trim()).toMatch(
      /^chain-lake: error: this route needs a signed op-hook: sign the hook printed above on interwoven-1/
    )
    const hook = JSON.parse(first.stdout).op_hook
    writeFileSync(
      join(dir, "signed.json"),
      JSON.stringify({ signer: addressFor("lake-evm-1"), hook: Buffer.from("signed:" + hook.hook[0].msg).toString("base64") })
    )
    const second = await runCli([
      ...flags(ASSETS.l2Init, ASSETS.osmoInit, chains),
      "--op-withdraw",
      "--signed-op-hook",
      join(dir, "signed.json")
    ])
    expect(second.code, second.stderr).toBe(0)
    expect(JSON.parse(second.stdout).txs[0].cosmos_tx.msgs[0].msg_type_url).toBe("/opinit.opchild.v1.MsgInitiateTokenWithdrawal")
  })

  it("a missing address for a required chain is a one-line error", async () => {
    const r = await runCli(flags(ASSETS.nobleUsdc, ASSETS.l2Usdc, ["noble-1"]))
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe(
      "chain-lake: error: the route needs an address on interwoven-1, lake-evm-1 (required_chain_addresses: noble-1, interwoven-1, lake-evm-1): give each with --address CHAIN=ADDR"
    )
  })

  it("an address given twice for one chain is a usage error naming the chain (the last was used, the first dropped in silence)", async () => {
    const r = await runCli([
      ...flags(ASSETS.nobleUsdc, ASSETS.l2Usdc, ["noble-1", "interwoven-1", "lake-evm-1"]),
      "--address",
      `interwoven-1=${addressFor("noble-1")}`
    ])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr.trim()).toBe("chain-lake: error: --address names chain interwoven-1 twice: give one address for each chain")
  })

  it("no route is one line naming the pair and the amount asked", async () => {
    const r = await runCli(flags(ASSETS.isolated, ASSETS.l1Init, []))
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toMatch(
      /^chain-lake: error: no routes found from isolated-1:uiso to interwoven-1:uinit for \d+: try another amount or pair/
    )
  })

  it("without --router-url (or CHAIN_LAKE_ROUTER_URL) refuses in one line: msgs of a simulated router are signed only when --devnet asks for them", async () => {
    const args = flags(ASSETS.nobleUsdc, ASSETS.l2Usdc, ["noble-1", "interwoven-1", "lake-evm-1"]).filter(
      (a, i, all) => a !== "--router-url" && all[i - 1] !== "--router-url"
    )
    const none = await runCli(args, { env: { CHAIN_LAKE_ROUTER_URL: "" } })
    expect([none.code, none.stdout, none.stderr.trim()]).toEqual([
      2,
      "",
      "chain-lake: error: no --router-url: give the router's URL (or set CHAIN_LAKE_ROUTER_URL); --devnet uses the embedded devnet's simulated chain instead"
    ])
    const fromEnv = await runCli(args, { env: { CHAIN_LAKE_ROUTER_URL: devnet.routerUrl } })
    expect(fromEnv.code, fromEnv.stderr).toBe(0)
    const both = await runCli([...args, "--devnet", "--router-url", devnet.routerUrl])
    expect([both.code, both.stderr.trim()]).toEqual([2, "chain-lake: error: --devnet and --router-url name two sources: give one"])
  })

  it("the example of bridge --help runs as printed against the devnet's router", async () => {
    const [example] = EXAMPLES.bridge
    const r = await runCli(example.split(" ").slice(1))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/using the embedded devnet at http:\/\/127\.0\.0\.1:\d+: simulated data/)
    expect(JSON.parse(r.stdout).route.chain_ids).toEqual(["noble-1", "interwoven-1"])
  })
})
