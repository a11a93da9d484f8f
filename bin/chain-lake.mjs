#!/usr/bin/env node
// V8's default young generation (16 MB semi-spaces). 32 MB ones once saved GC time when whole
// pages were decoded and buffered (session 3); since rows are made just before they are appended,
// they cost the same CPU per tx (60–80 µs either way) and more peak RSS: ~20 MB at --memory-limit
// 400MB, ~70 MB at the default (bench/RESULTS.md, session 13).
//
// Runs the compiled CLI in dist/ (built by `npm install`, scripts/build.mjs) while no source file
// is newer than the build; otherwise the TypeScript in src/ through tsx's loader, so a fresh
// clone needs no build step and an edit needs no rebuild. An installed package (npm pack's
// tarball) ships dist/ and no src/: it always runs dist/. `--version` and `--help` are answered
// from what the build recorded, without loading the CLI (start-up, bench/RESULTS.md).
import { existsSync, readFileSync } from "node:fs"
import module from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isCurrentBuild } from "./freshness.mjs"

/**
 * A signal while the CLI loads (before src/cli/runMain.ts takes the signals over) ends it at once:
 * it has done nothing yet. Said, and 130 as any stopped run, rather than a silent death by signal.
 */
const whileStarting = (signal) => {
  process.stderr.write(`chain-lake: stopped (${signal}) while starting: nothing was done\n`)
  process.exit(130)
}
process.once("SIGINT", whileStarting)
process.once("SIGTERM", whileStarting)
globalThis[Symbol.for("chain-lake/whileStarting")] = whileStarting
// (tests only: says when these are in place, so that a test's signal lands while the CLI loads)
if (process.env.CHAIN_LAKE_TEST_SAY_LOADING) process.stderr.write("chain-lake: loading\n")

const root = fileURLToPath(new URL("..", import.meta.url))
const buildFile = new URL("../dist/build.json", import.meta.url)
/** a checkout, not an installed package: src/ can run */
const hasSource = existsSync(new URL("../src/cli/main.ts", import.meta.url))
/** what the build recorded, or undefined (no build, a forced source run, or a record that cannot be read: then src/ runs) */
const readBuild = () => {
  if (!existsSync(buildFile) || (process.env.CHAIN_LAKE_FROM_SOURCE && hasSource)) return undefined
  try {
    const b = JSON.parse(readFileSync(buildFile, "utf8"))
    return typeof b?.builtFrom === "number" &&
      typeof b.version === "string" &&
      typeof b.help === "object" &&
      b.help !== null &&
      typeof b.help[""] === "string"
      ? b
      : undefined
  } catch {
    return undefined
  }
}
const build = readBuild()

/** What the build recorded for these arguments, if they only ask for the version or help (as src/cli/main.ts decides). */
const recorded = (args) => {
  if (args.length === 1 && args[0] === "--version") return build.version
  const flags = args.includes("--") ? args.slice(0, args.indexOf("--")) : args
  if (args.length > 0 && !flags.includes("--help") && !flags.includes("-h")) return undefined
  // help is 80 columns; a narrower terminal gets it rendered to its width
  if (process.stdout.isTTY && process.stdout.columns < 80) return undefined
  return Object.hasOwn(build.help, args[0] ?? "") ? build.help[args[0] ?? ""] : build.help[""]
}

if (!hasSource || (build && isCurrentBuild(root, build.builtFrom))) {
  const text = build && recorded(process.argv.slice(2))
  if (text !== undefined) process.stdout.write(text)
  else {
    // Node 22.1+: V8's code for the CLI's bundle and its shard workers' is kept in Node's compile
    // cache (NODE_COMPILE_CACHE, else node-compile-cache in the OS's temp folder, as npm's own CLI
    // has it), not compiled again at every start; the workers find it in the environment they
    // inherit (bench/RESULTS.md)
    if (module.enableCompileCache) {
      process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), "node-compile-cache")
      module.enableCompileCache()
    }
    await import("../dist/cli/main.js")
  }
} else {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/cli/main.ts")
}
