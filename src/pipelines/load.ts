/**
 * Loading a pipeline file, wherever it is: a name of pipelines/ or a path to any `.ts` (or `.js`)
 * file exporting a definition as default.
 *
 * The file is bundled with esbuild and imported from memory, with `"chain-lake"` pointing at the
 * public API of the very CLI that runs it (src/index.ts from source, the CLI bundle's index.js
 * from dist/). So a file in a folder with no package.json and no node_modules, or one whose folder
 * has another copy of chain-lake, loads the same way and is checked by the same rules; and a file
 * outside any package is still read as an ES module (Node took such a `.ts` file for CommonJS).
 * Its own relative imports are bundled in; the packages it imports are loaded by Node from where
 * its folder finds them.
 */
import { readdir, stat } from "node:fs/promises"
import { isBuiltin } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Plugin } from "esbuild"
import { Data, Effect, Either } from "effect"
import { decodePipeline, type PipelineDefinition } from "./definePipeline.js"

export class PipelineLoadError extends Data.TaggedError("PipelineLoadError")<{ readonly message: string }> {}

export const PIPELINES_DIR = fileURLToPath(new URL("../../pipelines/", import.meta.url))

/** The public API of this CLI: from source its entry module; bundled, the index.js entry beside this chunk (scripts/build.mjs). */
const OWN_API = new URL(import.meta.url.endsWith(".ts") ? "../index.ts" : "./index.js", import.meta.url).href

/** The file a pipeline argument names: a shipped pipeline's name, or a path. */
const pipelineFile = async (nameOrPath: string): Promise<string> => {
  const byName = /^[a-z0-9][a-z0-9-]*$/.test(nameOrPath)
  const file = byName ? join(PIPELINES_DIR, `${nameOrPath}.ts`) : resolve(nameOrPath)
  if (
    await stat(file).then(
      (i) => i.isFile(),
      () => false
    )
  )
    return file
  const wanted = byName ? `no pipeline "${nameOrPath}"` : `no pipeline file ${file}`
  const names = (await readdir(PIPELINES_DIR).catch(() => [] as Array<string>)).filter((f) => f.endsWith(".ts")).map((f) => f.slice(0, -3))
  throw new Error(`${wanted}: give a file exporting definePipeline(...) as default, or a pipeline's name (${names.sort().join(", ")})`)
}

/**
 * How the file's imports are found: "chain-lake" is this CLI's own API; any other package is
 * found from the importing file's folder (as Node would) and left to Node to load, by its absolute
 * location, since the bundle itself is imported from a data: URL, which has no folder to search
 * from (and a package may hold what cannot be bundled: a native addon such as DuckDB's).
 */
const importsPlugin: Plugin = {
  name: "chain-lake-imports",
  setup: (b) => {
    b.onResolve({ filter: /^chain-lake$/ }, () => ({ path: OWN_API, external: true }))
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === "inner" || isBuiltin(args.path)) return undefined
      const found = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: "inner" })
      if (found.errors.length > 0) return { errors: found.errors }
      // an ES import takes a URL; a bundled CommonJS require() a path
      return { path: args.kind === "require-call" ? found.path : pathToFileURL(found.path).href, external: true }
    })
  }
}

/** The file's module, bundled with its own relative imports (see importsPlugin for the others), as a data: URL. */
const bundle = async (file: string): Promise<string> => {
  const { build } = await import("esbuild")
  const result = await build({
    entryPoints: [file],
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    target: "node20",
    // the entries Node itself picks in a package's exports (not the bundlers' "module")
    conditions: [],
    logLevel: "silent",
    // a bundled CommonJS module may call require(); an ES module has none of its own (and one from a data: URL no base to make it from but the file's)
    banner: {
      js: `import { createRequire as __pipelineRequire } from "node:module"; const require = __pipelineRequire(${JSON.stringify(file)});`
    },
    plugins: [importsPlugin]
  })
  return `data:text/javascript;base64,${Buffer.from(result.outputFiles[0].contents).toString("base64")}`
}

/** esbuild's failures ("Could not resolve …", syntax errors) as one line each, with where. */
const buildMessage = (e: unknown): string => {
  const errors = (e as { errors?: ReadonlyArray<{ text: string; location?: { file: string; line: number; column: number } | null }> })
    .errors
  if (!errors?.length) return (e as Error).message
  return errors.map((x) => (x.location ? `${x.location.file}:${x.location.line}:${x.location.column}: ${x.text}` : x.text)).join("; ")
}

/**
 * A pipeline by name or path, decoded; its route plan made absolute, relative to the file's folder
 * (the shipped pipelines' plans sit beside them in pipelines/). Every failure is the user's to
 * mend: a missing file, one that does not build, or a definition the schema refuses.
 */
export const loadPipeline = (nameOrPath: string): Effect.Effect<PipelineDefinition, PipelineLoadError> =>
  Effect.tryPromise({
    try: async () => {
      const file = await pipelineFile(nameOrPath)
      const url = await bundle(file).catch((e) => Promise.reject(new Error(`${file} cannot be loaded: ${buildMessage(e)}`)))
      // a definePipeline that refuses its definition throws as the module runs
      const { default: exported } = (await import(url).catch((e) => Promise.reject(new Error(`${file}: ${(e as Error).message}`)))) as {
        default?: unknown
      }
      if (typeof exported !== "object" || exported === null)
        throw new Error(
          `${file} does not export a pipeline as default (export default definePipeline({...}))${exported === undefined ? "" : `; its default export is ${String(exported)}`}`
        )
      const decoded = decodePipeline(exported)
      if (Either.isLeft(decoded)) throw new Error(`${file}: ${decoded.left}`)
      const def = decoded.right
      return def.routePlan === undefined ? def : { ...def, routePlan: resolve(dirname(file), def.routePlan) }
    },
    catch: (e) => new PipelineLoadError({ message: (e as Error).message })
  })
