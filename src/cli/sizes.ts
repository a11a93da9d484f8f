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
  if (/^\s*[\d.]+\s*$/.test(text)) return `${flag} ${text.trim()} has no unit (it would be bytes): did you mean ${text.trim()}MB?`
  return options.atLeast && bytes < parseMemorySize(options.atLeast)! ? must : bytes
}
