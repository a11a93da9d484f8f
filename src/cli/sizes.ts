/** Size flags (--memory-limit, --target-size), read one way. */
import { parseMemorySize } from "../lake/writer.js"

/**
 * The bytes a size flag's `text` says (`512MB`, `2GB`, `1.5G`, `1TB`), or the one line that
 * refuses it: not a size, less than `atLeast`, or a bare number, which would be bytes and which no
 * one means (`512` is a slip of `512MB`).
 */
export const readSize = (
  flag: string,
  text: string,
  options: { readonly atLeast?: string; readonly examples: string }
): number | string => {
  const bytes = parseMemorySize(text)
  const must = `${flag} must be a size${options.atLeast ? ` of at least ${options.atLeast}` : ""} (e.g. ${options.examples}), got "${text}"`
  if (bytes === undefined) return must
  const least = options.atLeast ? parseMemorySize(options.atLeast)! : 0
  if (/^\s*[\d.]+\s*$/.test(text)) {
    const megabytes = `${text.trim()}MB`
    // (a guess below the least it takes would be refused in turn)
    return parseMemorySize(megabytes)! >= least
      ? `${flag} ${text.trim()} has no unit (it would be bytes): did you mean ${megabytes}?`
      : `${flag} ${text.trim()} has no unit (it would be bytes), and it must be a size of at least ${options.atLeast} (e.g. ${options.examples})`
  }
  return bytes < least ? must : bytes
}
