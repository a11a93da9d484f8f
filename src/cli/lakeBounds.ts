/**
 * Output paths never land in a lake's own files. `query --output`, `report --out` and
 * `catalog --db` overwrote a committed Parquet file, a dataset manifest and `_lake.json` with
 * exit 0 (`catalog --db` pointed at a Parquet file cut it to 12 KB): `verify` then failed, or
 * worse, a reader read the damage. The lake's own files are, under any folder that holds a lake:
 * its dataset folders (a known dataset's name, or any folder holding a `_manifest.json`), its
 * identity and lock (`_lake.json`, `_lake.lock`), its run reports (`_runs/`), its quarantined
 * records (`_quarantine/`), its pipeline lock (`.chain-lake.lock`) and its working folder
 * (`.chain-lake/`: staging, scratch, locks). The lake's top folder itself stays open to
 * outputs (report.html and chain-lake.duckdb are written there by default).
 *
 * The path is judged where the write would land: through `..` and symlinks, the file's own link
 * included (a link in the lake's top folder to a manifest), and a link that points nowhere yet
 * (writing through it creates its target).
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs"
import { dirname, isAbsolute, join, relative, sep } from "node:path"
import { Effect } from "effect"
import { isLake, LAKE_DATASETS, realPathOf } from "../analytics/Analytics.js"
import { pipelineLockFile } from "../lake/layout.js"
import { MANIFEST_FILE } from "../lake/manifest.js"
import { UserError } from "./errors.js"

/** The lake's own top-level names, beside its dataset folders: the quarantined records are the only copy of what a run skipped, and a pipeline's lock keeps its runs from overlapping. */
const LAKE_OWN = new Set(["_lake.json", "_lake.lock", "_runs", ".chain-lake", "_quarantine", pipelineLockFile()])
const DATASET_NAMES = new Set(LAKE_DATASETS.map((d) => d.name))

/**
 * Where writing `path` lands, as the kernel walks it: each part in turn, a symlink replaced by its
 * target (one that points nowhere yet too: writing through it creates the target), and `..` taken
 * from where the walk is, not from the text (`link/../x` is beside the link's target, where
 * path.resolve put it beside the link). At most 40 links, as the kernel allows.
 */
export const landingPath = (path: string): string => {
  let hops = 40
  const walk = (from: string, text: string): string => {
    let at = from
    for (const part of text.split(sep)) {
      if (part === "" || part === ".") continue
      if (part === "..") {
        at = dirname(at)
        continue
      }
      const next = at === sep ? sep + part : at + sep + part
      let link: string | undefined
      try {
        link = lstatSync(next).isSymbolicLink() ? readlinkSync(next) : undefined
      } catch {
        // not there (yet): the walk goes on by name
      }
      at = link !== undefined && hops-- > 0 ? walk(isAbsolute(link) ? sep : at, link) : next
    }
    return at
  }
  return walk(sep, isAbsolute(path) ? path : realPathOf(process.cwd()) + sep + path)
}

/** The lake `path` would write into, and the part of it, or undefined when it is outside every lake's own files. */
export const insideLake = (path: string): { readonly lake: string; readonly part: string } | undefined => {
  const target = landingPath(path)
  for (let dir = dirname(target); ; dir = dirname(dir)) {
    if (isLake(dir)) {
      const first = relative(dir, target).split(sep)[0]
      if (LAKE_OWN.has(first) || DATASET_NAMES.has(first) || existsSync(join(dir, first, MANIFEST_FILE))) return { lake: dir, part: first }
    }
    if (dirname(dir) === dir) return undefined
  }
}

/**
 * Fails with a usage error (exit 2), before anything is written, when `path` (given by `flag`)
 * is empty or lands in a lake's own files; `extra` are files written beside it (a database's
 * `.wal`). The lake given by `--data` is named when it is the one concerned.
 */
export const refuseInsideLake = (
  flag: string,
  path: string,
  data: string,
  extra: ReadonlyArray<string> = []
): Effect.Effect<void, UserError> =>
  Effect.suspend(() => {
    if (path.trim() === "") return Effect.fail(new UserError({ message: `${flag} is empty: give a file name`, exitCode: 2 }))
    for (const p of [path, ...extra]) {
      const hit = insideLake(p)
      if (hit === undefined) continue
      const which = hit.lake === landingPath(data) ? "the lake" : "a lake"
      const shown = isAbsolute(path) ? path : `${path} (${landingPath(p)})`
      return Effect.fail(
        new UserError({
          message: `${flag} ${shown} is inside ${which} at ${hit.lake} (${hit.part}): a command never writes over the lake's own files; give a path outside them`,
          exitCode: 2
        })
      )
    }
    return Effect.void
  })
