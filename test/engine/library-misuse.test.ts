/**
 * The library refuses what the CLI refuses, before anything is asked or written: runExport's
 * options are checked as a schema (a caller in plain JavaScript passes a string for a list, a
 * height of 0, a misspelt option), and the lake's layer refuses a folder that cannot be one (an
 * empty `out` wrote into the working directory; a file in its place failed at the first commit).
 */
import { Effect, Either } from "effect"
import { existsSync, readdirSync, symlinkSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exportLayer } from "../../src/cli/layers.js"
import { DATASETS } from "../../src/datasets/index.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"
import { runExport, type ExportOptions } from "../../src/engine/export.js"
import { tempDirs } from "../support/tmp.js"

const dirs = tempDirs("chain-lake-misuse-")
let devnet: Devnet
beforeAll(async () => {
  devnet = await startDevnet({ seed: 3, blocks: 20 })
})
afterAll(async () => {
  await devnet.stop()
  dirs.removeAll()
})

const failure = (options: unknown, out: string) =>
  Effect.runPromise(
    Effect.either(runExport(DATASETS, options as ExportOptions).pipe(Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out }))))
  ).then((r) => (Either.isLeft(r) ? [r.left._tag, r.left.message] : ["exported", ""]))

describe("the library's export refuses, in one line, before it writes", () => {
  it("options of the wrong kind, out of range or misspelt", async () => {
    const out = dirs.make()
    for (const [options, said] of [
      [{ datasets: "blocks" }, 'the export\'s options: datasets: Expected ReadonlyArray<string>, actual "blocks"'],
      [{ toHeight: 0 }, "the export's options: toHeight: must be a whole number, at least 1 (heights start at 1), got 0"],
      [{ fromHeight: 2.5 }, "the export's options: fromHeight: Expected an integer, actual 2.5"],
      [{ toHeight: "100" }, 'the export\'s options: toHeight: Expected number, actual "100"'],
      [{ concurrency: 0 }, "the export's options: concurrency: must be a whole number, at least 1, got 0"],
      [{ onReorg: "drop" }, 'the export\'s options: onReorg: must be "refuse" or "rollback"'],
      [
        { toheight: 10 },
        'the export\'s options: toheight: is unexpected, expected: "datasets" | "params" | "fromHeight" | "toHeight" | "toHeightAhead" | "pageSize" | "concurrency" | "onInvalid" | "bucketWidth" | "flushBytes" | "maxShardUnits" | "checkpointMs" | "dryRun" | "adoptLake" | "onReorg" | "observer"'
      ]
    ] as const)
      expect(await failure(options, out), JSON.stringify(options)).toEqual(["ExportError", said])
    expect(readdirSync(out)).toEqual([])
  })

  it("options as they were checked: not an option inherited, nor a getter's second answer; no options object at all", async () => {
    const out = dirs.make()
    expect(await failure(null, out)).toEqual(["ExportError", "the export's options must be an object, got null"])
    // an inherited toHeight of 0 is no option: the export runs to the tip
    expect(await failure(Object.create({ toHeight: 0, datasets: ["blocks"] }), out)).toEqual(["exported", ""])
    let asked = 0
    const shifty = {
      datasets: ["blocks"],
      get toHeight() {
        return asked++ === 0 ? 5 : 0
      }
    }
    expect(await failure(shifty, dirs.make())).toEqual(["exported", ""])
    expect(asked).toBe(1)
  })

  it("an out of ~ is the working directory's folder named ~ for Node and DuckDB alike (DuckDB alone read it as the home folder)", async () => {
    const cwd = process.cwd()
    const here = dirs.make()
    const name = `chain-lake-tilde-${process.pid}`
    process.chdir(here)
    try {
      expect(await failure({ datasets: ["blocks"] }, `~/${name}`)).toEqual(["exported", ""])
    } finally {
      process.chdir(cwd)
    }
    expect(existsSync(join(here, "~", name, "blocks", "_manifest.json"))).toBe(true)
    expect(existsSync(join(homedir(), name))).toBe(false)
  })

  it("an out that is empty (the working directory), a file, or below a file", async () => {
    const dir = dirs.make()
    const file = join(dir, "a-file")
    writeFileSync(file, "mine")
    const dangling = join(dir, "dangling")
    symlinkSync(join(dir, "gone"), dangling)
    const before = readdirSync(process.cwd())
    for (const [out, said] of [
      ["", "out is empty: give a folder (it is made if missing)"],
      [file, `out ${file} is a file, not a folder: give a folder (it is made if missing)`],
      [join(file, "lake"), `out ${join(file, "lake")} cannot be made: ${file} is a file`],
      ["s3://bucket/lake", "out s3://bucket/lake looks like a URL, not a folder: give a local folder (out takes no URL)"],
      [dangling, `out ${dangling} cannot be made: ${dangling} is a link to ${join(dir, "gone")}, which is not there`],
      [null as unknown as string, "out must be a folder's path, a string; got null"]
    ])
      expect(await failure({ datasets: ["blocks"] }, out), out).toEqual(["ManifestError", said])
    expect(readdirSync(process.cwd())).toEqual(before)
    expect(existsSync(join(process.cwd(), "_lake.json"))).toBe(false)
  })
})
