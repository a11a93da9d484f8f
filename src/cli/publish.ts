/** `chain-lake publish` and `chain-lake validate`. */
import { Args, Command, Options } from "@effect/cli"
import { resolve } from "node:path"
import { Console, Effect, Option } from "effect"
import { layerCheckpoints } from "../engine/Checkpoints.js"
import { publish } from "../publish/publish.js"
import { validateRelease } from "../publish/validate.js"
import { UserError } from "./errors.js"

export const publishCommand = Command.make(
  "publish",
  {
    data: Options.directory("data").pipe(Options.withDefault("data"), Options.withDescription("the export folder")),
    to: Options.directory("to").pipe(Options.withDescription("where releases go: DEST/NAME/VERSION/")),
    name: Options.text("name").pipe(Options.withDescription("dataset name")),
    version: Options.text("version").pipe(Options.withDescription("release version (never overwritten)")),
    license: Options.text("license").pipe(Options.optional, Options.withDescription("license, e.g. CC-BY-4.0"))
  },
  (o) =>
    Effect.gen(function* () {
      const { path, manifest } = yield* publish({ to: o.to, name: o.name, version: o.version, license: Option.getOrUndefined(o.license) }).pipe(
        Effect.provide(layerCheckpoints(resolve(o.data))),
        Effect.mapError((e) => new UserError({ message: e.message }))
      )
      const files = manifest.datasets.reduce((s, d) => s + d.files.length, 0)
      yield* Console.log(`published ${manifest.datasets.length} datasets (${files} files) to ${path}`)
    })
).pipe(Command.withDescription("Publish the committed files as a versioned release with manifest.json, datapackage.json and a README"))

export const validateCommand = Command.make("validate", { dir: Args.directory({ name: "DEST" }).pipe(Args.withDescription("a published version folder")) }, (o) =>
  Effect.gen(function* () {
    const { manifest, problems } = yield* validateRelease(o.dir).pipe(Effect.mapError((e) => new UserError({ message: e.message })))
    if (problems.length > 0) {
      for (const p of problems) yield* Console.error(`mismatch: ${p}`)
      return yield* new UserError({ message: `${problems.length} mismatch${problems.length > 1 ? "es" : ""} in ${manifest.name} ${manifest.version}` })
    }
    const files = manifest.datasets.reduce((s, d) => s + d.files.length, 0)
    yield* Console.log(`${manifest.name} ${manifest.version}: ${files} files, checksums, row counts and schemas all match`)
  })
).pipe(Command.withDescription("Re-check a published release: checksums, row counts and schemas"))
