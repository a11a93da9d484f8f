/**
 * The package as a user gets it: `npm pack`'s tarball installed into a folder outside the
 * repository, where a TypeScript program is type-checked against the shipped declarations and run
 * (the public API: the devnet started, its blocks exported, the lake queried), and the installed
 * CLI answers and runs a pipeline file of that folder.
 *
 * The install is `npm ci --offline` of a lockfile made from this repository's own (the tarball's
 * dependencies are this package's, already in npm's cache since CI's `npm ci`), so it needs no
 * network and takes seconds; `--ignore-scripts` since no dependency this package uses needs its
 * install script (esbuild and DuckDB come as prebuilt platform packages). It packs the dist/ that
 * `npm ci` built (the prepare script): in CI that build must be fresh, elsewhere a stale one skips
 * these tests (`npm run build` first).
 */
import { execFile, type ExecFileOptions } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
// @ts-expect-error: plain JavaScript (bin/ runs before any build), no declarations
import { newestSourceTime } from "../bin/freshness.mjs"
import { underMutation } from "./support/mutation.js"
import { tempDirs } from "./support/tmp.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const BUILD = join(ROOT, "dist", "build.json")
const fresh = existsSync(BUILD) && JSON.parse(readFileSync(BUILD, "utf8")).builtFrom >= newestSourceTime(ROOT)
const run = promisify(execFile)
/** A command's stdout; a failure rejects with its output */
const sh = async (file: string, args: ReadonlyArray<string>, options: ExecFileOptions = {}): Promise<string> =>
  String(
    (await run(file, args, { maxBuffer: 64 * 1024 * 1024, ...options, env: { ...process.env, NO_COLOR: "1", ...options.env } })).stdout
  )

it("dist/ is built from the sources (CI: npm ci runs the prepare script)", () => {
  if (process.env.CI) expect(fresh, "dist/ is missing or older than src/: npm ci should have built it").toBe(true)
})

/**
 * The consumer's lockfile: the tarball, and every entry of this repository's lockfile that is not
 * a development dependency (hoisted as npm hoists them when chain-lake is the only dependency).
 */
const consumerLock = (tarball: string) => {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"))
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
  const own = lock.packages[""]
  const deps = Object.entries(lock.packages as Record<string, { dev?: boolean }>).filter(([path, e]) => path !== "" && !e.dev)
  return {
    name: "consumer",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "consumer", dependencies: { "chain-lake": `file:${tarball}` } },
      "node_modules/chain-lake": {
        version: pkg.version,
        resolved: `file:${tarball}`,
        license: pkg.license,
        dependencies: own.dependencies,
        bin: pkg.bin,
        engines: pkg.engines
      },
      ...Object.fromEntries(deps)
    }
  }
}

/** A program a user would write against the package: every kind of thing it exports, used (the export in a shard worker: the package's worker module). */
const PROGRAM = `
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { Analytics, DATASETS, definePipeline, exportLayer, IndexerClient, indexerLayer, lakeSchema, layerAnalytics, layerLake, routerLayer, runExport, sampleRound, startDevnet, type ExportReport, type ParamValue, type SamplingPlan } from "chain-lake"

const devnet = await startDevnet({ seed: 5, blocks: 60 })
const out = mkdtempSync(join(tmpdir(), "consumer-lake-"))
try {
  const latest = Effect.gen(function* () {
    const indexer = yield* IndexerClient
    return (yield* indexer.blocks({ limit: 1 })).blocks[0].height
  })
  const tip = await Effect.runPromise(latest.pipe(Effect.provide(indexerLayer(devnet.indexerUrl))))
  const report: ExportReport = await Effect.runPromise(runExport(DATASETS, { datasets: ["blocks"] }).pipe(Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out, workers: 1 }))))
  const count = Effect.flatMap(Analytics, (a) => a.query("SELECT count(*) AS n, max(height) AS top FROM blocks"))
  const rows = await Effect.runPromise(count.pipe(Effect.provide(layerAnalytics({ dataDir: out }))))
  // the router's sampler: one round of a plan, into the same lake
  const plan: SamplingPlan = {
    pairs: [{ from: { chain_id: "lake-evm-1", denom: "uinit" }, to: { chain_id: "interwoven-1", denom: "uinit" }, amounts: ["1000000", "2000000"] }],
    variants: [{ label: "plain" }]
  }
  const round = await Effect.runPromise(sampleRound(plan).pipe(Effect.provide(Layer.mergeAll(routerLayer(devnet.routerUrl), layerLake(out)))))
  const params: Record<string, ParamValue> = { round: round.roundId }
  const quotes = Effect.flatMap(Analytics, (a) => a.query("SELECT count(*) FROM route_quotes WHERE round_id = $round", params))
  const sampled = await Effect.runPromise(quotes.pipe(Effect.provide(layerAnalytics({ dataDir: out }))))
  const [schema] = await Effect.runPromise(lakeSchema("blocks"))
  // the declarations are real types, not any: a schedule is a string
  // @ts-expect-error
  const wrong = () => definePipeline({ name: "x", description: "y", schedule: 5 })
  const pipeline = definePipeline({ name: "mine", description: "d", schedule: "0 * * * *" })
  console.log(JSON.stringify({ tip, exported: report.datasets.map((d) => [d.dataset, d.rows]), lake: rows.rows[0], columns: schema.columns.length > 3, pipeline: pipeline.name, checks: typeof wrong, quotes: [round.quotes, sampled.rows[0][0]] }))
} finally {
  await devnet.stop()
  rmSync(out, { recursive: true, force: true })
}
`

const TSCONFIG = (typeRoots: string) => ({
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    outDir: "out",
    skipLibCheck: true,
    types: ["node"],
    typeRoots: [typeRoots]
  },
  files: ["main.ts"]
})

// a child process sees no mutant (support/mutation.ts)
describe.skipIf(underMutation || (!fresh && !process.env.CI))("installed from npm pack's tarball, outside the repository", () => {
  const { make: tmp, removeAll } = tempDirs("chain-lake-package-")
  let home: string
  let packed: ReadonlyArray<string>
  beforeAll(async () => {
    home = tmp()
    const [info] = JSON.parse(await sh("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", home], { cwd: ROOT }))
    packed = info.files.map((f: { path: string }) => f.path)
    writeFileSync(
      join(home, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module", dependencies: { "chain-lake": `file:${info.filename}` } })
    )
    writeFileSync(join(home, "package-lock.json"), JSON.stringify(consumerLock(info.filename)))
    await sh("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: home })
  }, 180_000)
  afterAll(removeAll)

  it("ships the built code, its declarations, the CLI, the shipped pipelines and the license; no sources, tests or benchmarks", () => {
    for (const f of [
      "bin/chain-lake.mjs",
      "dist/build.json",
      "dist/cli/main.js",
      "dist/lib/index.js",
      "dist/types/index.d.ts",
      "pipelines/demo.ts",
      "pipelines/route-quotes.json",
      "package.json",
      "LICENSE"
    ])
      expect(packed).toContain(f)
    expect(packed.filter((f) => /^(src|test|bench|scripts|docs|data)\//.test(f))).toEqual([])
  })

  it("takes the user's effect: a peer dependency on Effect 3 (against which npm refuses effect 4), one copy shared with the user's program", () => {
    const installed = JSON.parse(readFileSync(join(home, "node_modules", "chain-lake", "package.json"), "utf8"))
    expect(installed.peerDependencies).toEqual({ effect: expect.stringMatching(/^\^3\./) })
    expect(installed.dependencies.effect).toBeUndefined()
    // the one copy: a layer of chain-lake's is provided with the user's Effect (two copies failed: "self.build is not a function")
    expect(existsSync(join(home, "node_modules", "chain-lake", "node_modules", "effect"))).toBe(false)
    expect(existsSync(join(home, "node_modules", "effect", "package.json"))).toBe(true)
  })

  it('a TypeScript program imports the public API from "chain-lake", type-checks, starts the devnet and exports its blocks in a shard worker', async () => {
    writeFileSync(join(home, "main.ts"), PROGRAM)
    writeFileSync(join(home, "tsconfig.json"), JSON.stringify(TSCONFIG(join(ROOT, "node_modules", "@types"))))
    await sh(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: home }).catch(
      (e) => {
        throw new Error(`tsc: ${e.stdout}${e.stderr}`)
      }
    )
    expect(JSON.parse(await sh(process.execPath, [join(home, "out", "main.js")], { cwd: home }))).toEqual({
      tip: "60",
      exported: [["blocks", 60]],
      lake: ["60", "60"],
      columns: true,
      pipeline: "mine",
      checks: "function",
      quotes: [2, "2"]
    })
  })

  it("the installed CLI runs the built code: --help from the build's record, a pipeline file of the user's folder importing \"chain-lake\"", async () => {
    const bin = join(home, "node_modules", ".bin", "chain-lake")
    const started = performance.now()
    const help = await sh(bin, ["--help"], { cwd: home })
    const helpMs = performance.now() - started
    expect(help).toBe(JSON.parse(readFileSync(BUILD, "utf8")).help[""])
    const npx = performance.now()
    expect((await sh("npx", ["--offline", "chain-lake", "--version"], { cwd: home })).trim()).toBe(
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version
    )
    // reported, not asserted (timings on a shared machine): bench/RESULTS.md
    console.log(
      `installed chain-lake --help: ${helpMs.toFixed(0)} ms; npx chain-lake --version: ${(performance.now() - npx).toFixed(0)} ms`
    )

    writeFileSync(
      join(home, "blocks.ts"),
      `import { definePipeline } from "chain-lake"\nexport default definePipeline({ name: "blocks", description: "blocks", datasets: ["blocks"], sources: "devnet", schedule: "0 * * * *", out: "lake" })\n`
    )
    expect(await sh(bin, ["run", "./blocks.ts"], { cwd: home })).toMatch(/blocks: ok — blocks \+1000/)
    expect(existsSync(join(home, "lake", "blocks", "_manifest.json"))).toBe(true)
  })
})
