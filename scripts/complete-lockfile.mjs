#!/usr/bin/env node
/**
 * Adds lockfile entries for other platforms' optional binaries (darwin, win32, arm64, …).
 *
 * Why: the npm registry reachable here does not serve every platform's binary package, so
 * `npm install` leaves them out of package-lock.json, and `npm ci` then refuses the lockfile
 * ("Missing: @duckdb/node-bindings-darwin-arm64@ from lock file"). An entry with `os`/`cpu`
 * lets `npm ci` see the package and skip it on this platform without fetching it.
 * Run after any `npm install` that changes the lockfile: `node scripts/complete-lockfile.mjs`.
 */
import { readFileSync, writeFileSync } from "node:fs"

const OS = ["darwin", "linux", "win32", "android", "freebsd", "openbsd", "netbsd", "sunos", "aix", "openharmony"]
const CPU = ["x64", "arm64", "arm", "ia32", "riscv64", "ppc64", "s390x", "loong64", "mips64el", "wasm32"]

const path = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(path, "utf8"))
const packages = lock.packages
let added = 0

const platformOf = (name) => {
  const base = name.split("/").pop()
  const os =
    OS.find((o) => base.includes(o === "win32" ? "win32" : o)) ??
    (base.includes("windows") ? "win32" : base.includes("macos") ? "darwin" : undefined)
  const cpu =
    CPU.find((c) => new RegExp(`(^|-)${c}(-|$)`).test(base)) ??
    (base.includes("x86_64") || base.includes("amd64") ? "x64" : base.includes("aarch64") ? "arm64" : undefined)
  const libc = base.includes("musl") ? "musl" : base.includes("gnu") ? "glibc" : undefined
  return { os, cpu, libc }
}

for (const [location, entry] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const here = `${location ? location + "/" : ""}node_modules/${dep}`
    if (packages[here] || packages[`node_modules/${dep}`]) continue
    const { os, cpu, libc } = platformOf(dep)
    if (!os && !cpu) continue // not a platform package: leave it to npm
    if (!/^\d+\.\d+\.\d+/.test(spec)) {
      console.warn(`skipping ${dep}@${spec}: not an exact version`)
      continue
    }
    packages[`node_modules/${dep}`] = {
      version: spec,
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      ...(os ? { os: [os] } : {})
    }
    added++
  }
}
// in the order npm writes them (localeCompare in "en"), so that a later `npm install` moves nothing
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b, "en"))))
writeFileSync(path, JSON.stringify(lock, null, 2) + "\n")
console.log(`complete-lockfile: added ${added} platform entries`)
