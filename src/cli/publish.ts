/** `chain-lake publish` and `chain-lake validate`. */
import { Args, Command, Options } from "@effect/cli"
import { resolve } from "node:path"
import { Console, Effect, Option } from "effect"
import { layerManifests } from "../lake/Manifests.js"
import { describeRanges } from "../lake/held.js"
import { publish, quarantinedNote, releaseNameProblem } from "../publish/publish.js"
import { validateRelease } from "../publish/validate.js"
import { isS3Url } from "../s3/s3.js"
import { pullRelease, pushRelease, removeDir } from "../s3/sync.js"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { UserError } from "./errors.js"
import { checkOutputFolder } from "./outputFolder.js"
import { requireLake } from "./query.js"

export const publishCommand = Command.make(
  "publish",
  {
    data: Options.directory("data").pipe(Options.withDefault("data"), Options.withDescription("the export folder")),
    to: Options.text("to").pipe(Options.withDescription("where releases go: DEST/NAME/VERSION/ (a folder or s3://bucket/prefix)")),
    s3Endpoint: Options.text("s3-endpoint").pipe(Options.optional, Options.withDescription("S3-compatible endpoint URL (default: AWS)")),
    name: Options.text("name").pipe(Options.withDescription("dataset name")),
    // its second name is how the CLI hands it to @effect/cli, whose own --version would win (argv.ts, ownFlags)
    version: Options.text("version").pipe(
      Options.withAlias("release-version"),
      Options.withDescription("release version (never overwritten)")
    ),
    license: Options.text("license").pipe(Options.optional, Options.withDescription("license, e.g. CC-BY-4.0"))
  },
  (o) =>
    Effect.gen(function* () {
      // a usage error like any other bad flag (it exited 1)
      const badName = releaseNameProblem(o.name, o.version)
      if (badName) return yield* new UserError({ message: badName, exitCode: 2 })
      const s3 = isS3Url(o.to)
      if (!s3) {
        yield* checkOutputFolder("--to", o.to, true)
        // the release's own folder too: --to LAKE --name txs wrote the release into the lake's txs folder
        yield* checkOutputFolder("the release folder (--to/--name/--version)", join(o.to, o.name, o.version))
      }
      yield* requireLake(o.data)
      const localTo = s3 ? yield* Effect.promise(() => mkdtemp(join(tmpdir(), "chain-lake-publish-"))) : o.to
      const published = yield* publish({ to: localTo, name: o.name, version: o.version, license: Option.getOrUndefined(o.license) }).pipe(
        Effect.provide(layerManifests(resolve(o.data))),
        Effect.mapError((e) => new UserError({ message: e.message }))
      )
      const { manifest } = published
      const path = s3
        ? yield* pushRelease(published.path, o.to, o.name, o.version, Option.getOrUndefined(o.s3Endpoint)).pipe(
            Effect.mapError((e) => new UserError({ message: e.message })),
            Effect.ensuring(removeDir(localTo))
          )
        : published.path
      const files = manifest.datasets.reduce((s, d) => s + d.files.length, 0)
      yield* Console.log(`published ${manifest.datasets.length} datasets (${files} files) to ${path}`)
      // a release of part of a chain is said to be one here too, not only in its README
      for (const d of manifest.datasets) {
        if (d.coverage && d.coverage.missing_heights.length > 0)
          yield* Console.error(
            `chain-lake: notice: ${d.name} does not hold heights ${describeRanges(d.coverage.missing_heights, 3)} (not exported yet): the release's README and manifest.json say so`
          )
        if ((d.coverage?.quarantined ?? 0) > 0)
          yield* Console.error(
            `chain-lake: notice: ${d.name} lacks the rows of ${d.coverage!.quarantined} records: ${quarantinedNote}; the release's README and manifest.json say so`
          )
      }
    })
).pipe(Command.withDescription("Publish the committed files as a versioned release with manifest.json, datapackage.json and a README"))

export const validateCommand = Command.make(
  "validate",
  {
    dir: Args.text({ name: "DEST" }).pipe(Args.withDescription("a published version folder, or s3://bucket/prefix/NAME/VERSION")),
    s3Endpoint: Options.text("s3-endpoint").pipe(Options.optional, Options.withDescription("S3-compatible endpoint URL (default: AWS)"))
  },
  (o) =>
    Effect.gen(function* () {
      const dir = isS3Url(o.dir)
        ? yield* pullRelease(o.dir, Option.getOrUndefined(o.s3Endpoint)).pipe(Effect.mapError((e) => new UserError({ message: e.message })))
        : o.dir
      const { manifest, problems } = yield* validateRelease(dir).pipe(
        Effect.mapError((e) => new UserError({ message: e.message })),
        Effect.ensuring(isS3Url(o.dir) ? removeDir(dir) : Effect.void)
      )
      if (problems.length > 0) {
        for (const p of problems) yield* Console.error(`mismatch: ${p}`)
        return yield* new UserError({
          message: `${problems.length} mismatch${problems.length > 1 ? "es" : ""} in ${manifest.name} ${manifest.version}`
        })
      }
      const files = manifest.datasets.reduce((s, d) => s + d.files.length, 0)
      yield* Console.log(`${manifest.name} ${manifest.version}: ${files} files, checksums, row counts and schemas all match`)
    })
).pipe(Command.withDescription("Re-check a published release: checksums, row counts and schemas"))
