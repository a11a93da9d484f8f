/** When the newest source file was changed: dist/ is used only while it was built from at least that. */
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"

const newest = (dir) => {
  let time = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    time = Math.max(time, e.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return time
}

/** The newest change under src/ (and the build's own config), in ms. */
export const newestSourceTime = (root) =>
  Math.max(
    newest(join(root, "src")),
    ...["scripts/build.mjs", "scripts/bundle-options.cjs", "tsconfig.json", "tsconfig.build.json"].map(
      (f) => statSync(join(root, f)).mtimeMs
    )
  )

/** Whether a build made from sources as of `builtFrom` (dist/build.json's) is current: no source changed after it. */
export const isCurrentBuild = (root, builtFrom) => typeof builtFrom === "number" && builtFrom >= newestSourceTime(root)
