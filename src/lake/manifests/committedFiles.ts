/**
 * A dataset's committed files for a reader of the lake, as local paths, wherever they live: in the
 * lake folder, or elsewhere (an S3 export's work folder mirrors only the manifests; the service's
 * `fetchCommitted` brings each file).
 */
import { randomUUID } from "node:crypto"
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { exists, makeFolder } from "../files.js"
import { datasetPath, scratchFolderOf } from "../layout.js"
import { missingFilesProblem, stagedBy } from "../listed.js"
import { fail, ManifestError } from "./errors.js"
import type { LakeWriter } from "./lakeWriter.js"
import { read } from "./manifestFile.js"
import type { CommittedFile } from "../manifest.js"

/**
 * Runs `use` over every committed file of `dataset` (those `which` takes): the files in the lake folder all in one call;
 * each file that lives elsewhere alone, in a copy deleted right after, so local disk holds one at a
 * time. Returns the calls' results, concatenated (ManifestsService.withCommittedFiles). A listed
 * file of a local lake not in place fails it, or with `missing: "skip"` is left out (a check that
 * races another writer's commit or a compaction's swap, where what it reads is a sample).
 */
export const withCommittedFiles = <A, E>(
  lake: LakeWriter,
  dataset: string,
  use: (paths: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>, E>,
  which: (file: CommittedFile) => boolean = () => true,
  missing: "fail" | "skip" = "fail"
) =>
  Effect.gen(function* () {
    const files = ((yield* read(lake, dataset))?.files ?? [])
      .filter(which)
      .map((f) => ({ path: f.path, at: datasetPath(lake.root, dataset, f.path) }))
    const present = yield* Effect.promise(() => Promise.all(files.map((f) => exists(f.at))))
    const here = files.filter((_, i) => present[i]).map((f) => f.at)
    const fetch = lake.options.fetchCommitted
    // a listed file not here is an unfinished commit (or a lost file): its rows are not left out
    const absent = files.filter((_, i) => !present[i]).map((f) => f.path)
    if (!fetch && absent.length > 0 && missing === "fail")
      return yield* new ManifestError({
        message: missingFilesProblem(
          dataset,
          absent.length,
          files.length,
          absent.every((p) => stagedBy(lake.root, dataset, p).length > 0)
        )
      })
    const results: Array<A> = here.length > 0 ? [...(yield* use(here))] : []
    if (!fetch) return results
    const scratch = scratchFolderOf(lake.root, lake.writer)
    for (const [i, f] of files.entries()) {
      if (present[i]) continue
      // a copy of its own: callers run at once (each commit's check), and a shared name was read while another wrote it
      const copy = join(scratch, `committed-${randomUUID()}.parquet`)
      const rows = yield* Effect.acquireUseRelease(
        Effect.tryPromise({ try: () => makeFolder(scratch), catch: fail }).pipe(Effect.zipRight(fetch(dataset, f.path, copy))),
        () => use([copy]),
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: the copy it removes exists
        () => Effect.promise(() => rm(copy, { force: true }))
      )
      results.push(...rows)
    }
    return results
  })
