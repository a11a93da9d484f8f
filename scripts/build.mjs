/**
 * The build `npm install` runs (the `prepare` script): bundles the CLI (src/cli/main.ts and all it
 * imports) into dist/cli/ with esbuild, copies the SQL views beside it, and records in
 * dist/build.json when the build was made (the newest source file's time) and the CLI's answers
 * to `--version` and `--help`, each command's too, as the built CLI prints them.
 * bin/chain-lake.mjs runs dist/ while no source file is newer than that (otherwise src/ through
 * tsx, so an edit needs no rebuild), and answers those from build.json without loading the CLI.
 *
 * Why one bundle: importing `effect`'s and @effect/cli's modules one by one cost ~1 s of every
 * command's start (hundreds of files, each read, parsed and linked); bundled, tree-shaken and
 * minified, a command that fails at once takes ~0.4 s instead of ~1.5 s (bench/RESULTS.md). What
 * is loaded only where used stays outside, in its own package (DuckDB, vega, the AWS SDK, tsx) or
 * in its own chunk (the devnet). The bundle sits at dist/cli/, as deep as src/cli/, so the paths
 * modules build from `import.meta.url` (../../pipelines/, ./sql/) still land where they should.
 * Type checking is not part of it: `npm run typecheck` (CI runs it).
 */
import { execFile } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { build } from "esbuild"
import { newestSourceTime } from "../bin/freshness.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const builtFrom = newestSourceTime(root)

rmSync(dist, { recursive: true, force: true })
await build({
  entryPoints: [join(root, "src", "cli", "main.ts")],
  outdir: join(dist, "cli"),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  // a defect's stack trace can be read back with `node --enable-source-maps`
  sourcemap: "linked",
  // loaded where used, from their packages: native DuckDB, vega for report, the AWS SDK for s3://, tsx for pipeline files
  external: ["@duckdb/node-api", "vega", "vega-lite", "@aws-sdk/*", "tsx", "tsx/*"],
  // some bundled CommonJS packages call require(); an ES module has none of its own
  banner: { js: 'import { createRequire as __chainLakeRequire } from "node:module"; const require = __chainLakeRequire(import.meta.url);' },
  logLevel: "warning"
})
mkdirSync(join(dist, "cli", "sql"), { recursive: true })
for (const f of readdirSync(join(root, "src", "analytics", "sql"))) if (f.endsWith(".sql")) copyFileSync(join(root, "src", "analytics", "sql", f), join(dist, "cli", "sql", f))

// what the compiled CLI answers, in a pipe (80 columns, no colour), for the root and every command
const run = promisify(execFile)
const main = join(dist, "cli", "main.js")
const answer = async (args) => (await run(process.execPath, [main, ...args], { env: { ...process.env, NO_COLOR: "1" } })).stdout
const rootHelp = await answer(["--help"])
const commands = [...rootHelp.matchAll(/^ {2}([a-z][a-z-]+)$/gm)].map((m) => m[1])
if (commands.length < 5) throw new Error(`build: could not read the command list from --help:\n${rootHelp}`)
const help = Object.fromEntries(await Promise.all(["", ...commands].map(async (c) => [c, await answer(c ? [c, "--help"] : ["--help"])])))
const version = await answer(["--version"])
// written whole or not at all: bin/ reads it at every start
writeFileSync(join(dist, "build.json.tmp"), JSON.stringify({ builtFrom, version, help }, null, 1))
renameSync(join(dist, "build.json.tmp"), join(dist, "build.json"))
console.log(`built dist/ (${commands.length} commands' help recorded)`)
