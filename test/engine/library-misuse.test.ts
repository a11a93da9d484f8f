/**
 * The library refuses what the CLI refuses, before anything is asked or written: runExport's
 * options are checked as a schema (a caller in plain JavaScript passes a string for a list, a
 * height of 0, a misspelt option), and the lake's layer refuses a folder that cannot be one (an
 * empty `out` wrote into the working directory; a file in its place failed at the first commit).
 */
import { Effect, Either } from "effect"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
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

  it("an out that is empty (the working directory), a file, or below a file", async () => {
    const dir = dirs.make()
    const file = join(dir, "a-file")
    writeFileSync(file, "mine")
    const before = readdirSync(process.cwd())
    for (const [out, said] of [
      ["", "out is empty: give a folder (it is made if missing)"],
      [file, `out ${file} is a file, not a folder: give a folder (it is made if missing)`],
      [join(file, "lake"), `out ${join(file, "lake")} cannot be made: ${file} is a file`],
      ["s3://bucket/lake", "out s3://bucket/lake looks like a URL, not a folder: give a local folder (out takes no URL)"]
    ])
      expect(await failure({ datasets: ["blocks"] }, out), out).toEqual(["ManifestError", said])
    expect(readdirSync(process.cwd())).toEqual(before)
    expect(existsSync(join(process.cwd(), "_lake.json"))).toBe(false)
  })
})
