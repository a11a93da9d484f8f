/** File helpers shared by the sink, the checkpoints and publishing. */
import { createHash } from "node:crypto"
import { createReadStream } from "node:fs"
import { readdir } from "node:fs/promises"
import { join } from "node:path"

/** Hex sha256 of a file, streamed. */
export const sha256File = (path: string) =>
  new Promise<string>((resolve, reject) => {
    const h = createHash("sha256")
    createReadStream(path)
      .on("data", (d) => h.update(d))
      .on("end", () => resolve(h.digest("hex")))
      .on("error", reject)
  })

/** Every file below `dir`, relative, with forward slashes; a missing folder has none. */
export const listFiles = async (dir: string, prefix = ""): Promise<Array<string>> => {
  const out: Array<string> = []
  const entries = await readdir(join(dir, prefix), { withFileTypes: true }).catch(() => [])
  for (const e of entries) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name
    if (e.isDirectory()) out.push(...(await listFiles(dir, rel)))
    else out.push(rel)
  }
  return out
}
