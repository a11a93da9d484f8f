/**
 * The build `npm install` runs (the `prepare` script): compiles src/ to dist/ with tsc, copies the
 * SQL views beside their module, and records in dist/build.json when the build was made (the
 * newest source file's time) and the CLI's answers to `--version` and `--help`, each command's
 * too, as the compiled CLI prints them. bin/chain-lake.mjs runs dist/ while no source file is
 * newer than that (otherwise src/ through tsx, so an edit needs no rebuild), and answers those
 * from build.json without loading the CLI: the same text, at a fraction of the start-up.
 */
import { execFile, execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { newestSourceTime } from "../bin/freshness.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const builtFrom = newestSourceTime(root)

rmSync(dist, { recursive: true, force: true })
execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" })
mkdirSync(join(dist, "analytics", "sql"), { recursive: true })
for (const f of readdirSync(join(root, "src", "analytics", "sql"))) if (f.endsWith(".sql")) copyFileSync(join(root, "src", "analytics", "sql", f), join(dist, "analytics", "sql", f))

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
