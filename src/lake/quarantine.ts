/**
 * The records a list's exports quarantined (`_quarantine/<list id>.ndjson`, shard.ts): each line
 * where a record was (endpoint, page key, field path) and what was wrong. A record counts once,
 * however many runs met it (a rerun after a stopped one quarantines it again).
 */
import { readFile } from "node:fs/promises"
import { quarantineFile } from "./layout.js"

/** How many distinct records the lake at `root` quarantined of list `listId` (0 where none). */
export const quarantinedRecords = async (root: string, listId: string): Promise<number> => {
  const text = await readFile(quarantineFile(root, listId), "utf8").catch(() => "")
  const records = new Set<string>()
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    try {
      const { endpoint, key, path } = JSON.parse(line) as { endpoint?: unknown; key?: unknown; path?: unknown }
      records.add(JSON.stringify([endpoint, key, path]))
    } catch {
      // a line cut short by a kill: a record all the same
      records.add(line)
    }
  }
  return records.size
}
