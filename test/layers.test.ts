/**
 * src/'s folders stand in layers: no folder imports another that imports it back, directly or
 * round a longer loop, and the engine imports none of the API, dataset, devnet or CLI folders.
 * Read from the sources' import lines, as a newcomer would read them.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { describe, expect, it } from "vitest"

const SRC = join(process.cwd(), "src")
/** `import … from`, over several lines too; `export … from`; a bare `import "…"`; `import("…")` */
const IMPORTS =
  /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*\{[^}]*\})?)\s+from\s+["'](\.[^"']+)["']|(?:^|\n)\s*import\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g

/** folder → the other folders of src/ its files import */
const folderImports = (): Map<string, Set<string>> => {
  const edges = new Map<string, Set<string>>()
  for (const rel of readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))) {
    const from = rel.split(/[\\/]/)[0]
    if (!rel.includes("/") && !rel.includes("\\")) continue
    const text = readFileSync(join(SRC, rel), "utf8")
    const imports = new RegExp(IMPORTS.source, "g")
    for (const m of text.matchAll(imports)) {
      const target = relative(SRC, normalize(join(SRC, dirname(rel), m[1] ?? m[2] ?? m[3])))
      const to = target.split(/[\\/]/)[0]
      if (target.startsWith("..") || to === from || !target.includes("/")) continue
      if (!edges.has(from)) edges.set(from, new Set())
      edges.get(from)!.add(to)
    }
  }
  return edges
}

/** a loop of folders, if there is one */
const findCycle = (edges: Map<string, Set<string>>): Array<string> | undefined => {
  const state = new Map<string, "open" | "done">()
  const path: Array<string> = []
  const visit = (n: string): Array<string> | undefined => {
    if (state.get(n) === "done") return undefined
    if (state.get(n) === "open") return [...path.slice(path.indexOf(n)), n]
    state.set(n, "open")
    path.push(n)
    for (const m of edges.get(n) ?? []) {
      const found = visit(m)
      if (found) return found
    }
    path.pop()
    state.set(n, "done")
    return undefined
  }
  for (const n of edges.keys()) {
    const found = visit(n)
    if (found) return found
  }
  return undefined
}

describe("src/ folders stand in layers", () => {
  const edges = folderImports()
  it("no folder imports one that imports it back, round any loop", () => {
    expect(edges.size).toBeGreaterThan(8)
    expect(findCycle(edges)).toBeUndefined()
    // every import form is read
    const sample =
      'import {\n  a,\n  type B\n} from "../x/a.js"\nimport "../y/b.js"\nexport * from "../z/c.js"\nconst d = await import("../w/d.js")\nimport e, { f } from "../v/e.js"'
    expect([...sample.matchAll(new RegExp(IMPORTS.source, "g"))].map((m) => m[1] ?? m[2] ?? m[3])).toEqual([
      "../x/a.js",
      "../y/b.js",
      "../z/c.js",
      "../w/d.js",
      "../v/e.js"
    ])
    // the check finds a loop where there is one
    expect(
      findCycle(
        new Map([
          ["a", new Set(["b"])],
          ["b", new Set(["c"])],
          ["c", new Set(["a"])]
        ])
      )
    ).toEqual(["a", "b", "c", "a"])
  })

  it("the engine imports no API client, dataset, driver, devnet or CLI folder; the devnet no client schemas", () => {
    expect(
      [...(edges.get("engine") ?? [])].filter((f) => ["indexer", "router", "datasets", "drivers", "devnet", "cli", "pipelines"].includes(f))
    ).toEqual([])
    expect([...(edges.get("devnet") ?? [])].filter((f) => ["indexer", "router"].includes(f))).toEqual([])
    for (const client of ["indexer", "router"]) expect(edges.get(client)?.has("devnet") ?? false, client).toBe(false)
  })

  it("each API path is written in one module, its client's endpoint catalogue, and the engine writes no page key", () => {
    const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts") && !f.startsWith("devnet"))
    // a path in a string or template literal; comments and messages name paths too, so the quote is required
    const writing = (pattern: RegExp) => files.filter((f) => pattern.test(readFileSync(join(SRC, f), "utf8"))).sort()
    expect(writing(/["`]\/indexer\//)).toEqual([join("indexer", "endpoints.ts")])
    expect(writing(/["`]\/v2\//)).toEqual([join("router", "endpoints.ts")])
    expect(
      files.filter(
        (f) => f.startsWith("engine") && /base64|JSON\.stringify\(\{ *(height|sequence)/.test(readFileSync(join(SRC, f), "utf8"))
      )
    ).toEqual([])
  })
})
