/**
 * The build `npm install` runs (the `prepare` script), into dist/:
 *
 * - dist/cli/: the CLI (src/cli/main.ts and all it imports) bundled with esbuild, the SQL views
 *   beside it, and a second entry, index.js: the public API (src/index.ts) made of the same chunks,
 *   which pipeline files that `chain-lake run` loads import as "chain-lake" (src/pipelines/load.ts),
 *   so that they reuse the modules the CLI already loaded;
 * - dist/cli/shard-worker.js: the module shard workers run (export --workers), and
 *   dist/lib/shard-worker.js, which imports it, beside the library that starts them too
 *   (src/pipelines/layers.ts shardWorkerModule): a worker is a thread of its own, sharing no
 *   `effect` with an application, and bundled with its dependencies it is ready in ~0.35 s
 *   instead of ~0.6 s (hundreds of modules read one by one); minified, as the CLI is (a defect
 *   in a worker is read back with `node --enable-source-maps`);
 * - dist/lib/: the public API for applications (`import … from "chain-lake"`, package.json
 *   "exports"): the project's own code bundled, every dependency left to be imported from its
 *   package, so that an application's `effect` is the very one these services and errors are made
 *   with (a second copy of effect inside would not share its runtime), not minified (stack traces
 *   an application's developer reads);
 * - dist/types/: the declarations of that API (tsc, tsconfig.build.json);
 * - dist/build.json: when the build was made (the newest source file's time) and the CLI's answers
 *   to `--version` and `--help`, each command's too, as the built CLI prints them.
 *
 * bin/chain-lake.mjs runs dist/cli/ while no source file is newer than the build (otherwise src/
 * through tsx, so an edit needs no rebuild; an installed package has no src/), and answers help
 * and version from build.json without loading the CLI.
 *
 * Why one bundle for the CLI: importing `effect`'s and @effect/cli's modules one by one cost ~1 s
 * of every command's start (hundreds of files, each read, parsed and linked); bundled, tree-shaken
 * and minified, a command that fails at once takes ~0.4 s instead of ~1.5 s (bench/RESULTS.md).
 * What is loaded only where used stays outside, in its own package (DuckDB, vega, the AWS SDK,
 * esbuild) or in its own chunk (the devnet). Each bundle's files sit in one folder as deep as
 * src/<folder>/, so the paths modules build from `import.meta.url` (../../pipelines/, ./sql/)
 * land where they should from any chunk. Type checking is not part of it: `npm run typecheck` (CI
 * runs it); tsconfig.build.json only writes declarations.
 */
import { execFile } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import bundleOptions from "./bundle-options.cjs"
import { build } from "esbuild"
import { newestSourceTime } from "../bin/freshness.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const src = (...path) => join(root, "src", ...path)
const run = promisify(execFile)
const builtFrom = newestSourceTime(root)

const common = { bundle: true, splitting: true, format: "esm", platform: "node", target: "node20", logLevel: "warning" }

/** The CLI, minified, with its dependencies inside but for those loaded where used. */
const buildCli = () =>
  build({
    ...common,
    entryPoints: { main: src("cli", "main.ts"), index: src("index.ts"), "shard-worker": src("cli", "shard-worker.ts") },
    outdir: join(dist, "cli"),
    minify: true,
    // a defect's stack trace can be read back with `node --enable-source-maps`
    sourcemap: "linked",
    // (the packages loaded where used, and a require() for bundled CommonJS: scripts/bundle-options.cjs)
    external: bundleOptions.external,
    banner: { js: bundleOptions.requireBanner }
  })

/** The library: this project's code only, readable. */
const buildLib = () =>
  build({
    ...common,
    entryPoints: { index: src("index.ts") },
    outdir: join(dist, "lib"),
    packages: "external",
    sourcemap: "linked"
  })

/** The SQL views, read at run time from ./sql/ beside the bundle that holds Analytics. */
const copySql = (folder) => {
  mkdirSync(join(dist, folder, "sql"), { recursive: true })
  for (const f of readdirSync(src("analytics", "sql")))
    if (f.endsWith(".sql")) copyFileSync(src("analytics", "sql", f), join(dist, folder, "sql", f))
}

/** What the compiled CLI answers, in a pipe (80 columns, no colour), for the root and every command. */
const recordAnswers = async () => {
  const answer = async (args) =>
    (await run(process.execPath, [join(dist, "cli", "main.js"), ...args], { env: { ...process.env, NO_COLOR: "1" } })).stdout
  const rootHelp = await answer(["--help"])
  const commands = [...rootHelp.matchAll(/^ {2}([a-z][a-z-]+)$/gm)].map((m) => m[1])
  if (commands.length < 5) throw new Error(`build: could not read the command list from --help:\n${rootHelp}`)
  const help = Object.fromEntries(await Promise.all(["", ...commands].map(async (c) => [c, await answer(c ? [c, "--help"] : ["--help"])])))
  return { commands, version: await answer(["--version"]), help }
}

rmSync(dist, { recursive: true, force: true })
// tsc takes the longest (~15 s): it runs beside the bundling and the recording of answers
const types = run(process.execPath, [
  join(root, "node_modules", "typescript", "bin", "tsc"),
  "-p",
  join(root, "tsconfig.build.json")
]).catch((e) => {
  throw new Error(`build: tsc could not write the declarations:\n${e.stdout}${e.stderr}`)
})
await Promise.all([buildCli(), buildLib()])
copySql("cli")
copySql("lib")
writeFileSync(
  join(dist, "lib", "shard-worker.js"),
  '// the CLI\'s shard worker, its dependencies bundled (scripts/build.mjs)\nimport "../cli/shard-worker.js"\n'
)
const [{ commands, version, help }] = await Promise.all([recordAnswers(), types])
// written whole or not at all, and last: bin/ reads it at every start, and takes dist/ as built once it is there
writeFileSync(join(dist, "build.json.tmp"), JSON.stringify({ builtFrom, version, help }, null, 1))
renameSync(join(dist, "build.json.tmp"), join(dist, "build.json"))
console.log(`built dist/ (the CLI with ${commands.length} commands' help recorded, the library and its declarations)`)
