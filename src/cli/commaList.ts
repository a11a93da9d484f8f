/**
 * Every flag that takes a comma-separated list (`--datasets blocks,txs`, `--denoms`) is read here,
 * one way: items trimmed, and an empty item (`blocks,,txs`, a comma at an end) refused, since it
 * is most often a name left out (an unset shell variable), not one meant to be dropped.
 */
import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect } from "effect"

/** The items `text` lists (none where it is blank), or a one-line reason it holds an empty one. */
export const parseCommaList = (text: string): ReadonlyArray<string> | string => {
  // (none at all: the command says what it needs)
  if (text.trim() === "") return []
  const items = text.split(",").map((item) => item.trim())
  return items.includes("") ? `'${text}' holds an empty item (two commas in a row, or one at an end)` : items
}

/** A comma-separated list flag (`--name A,B`), read with parseCommaList. */
export const commaListOption = (name: string): Options.Options<ReadonlyArray<string>> =>
  Options.text(name).pipe(
    Options.mapEffect((text) => {
      const items = parseCommaList(text)
      return typeof items === "string" ? Effect.fail(ValidationError.invalidValue(HelpDoc.p(items))) : Effect.succeed(items)
    })
  )
