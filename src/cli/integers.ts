/**
 * Every integer flag (heights, counts, sizes, ports, seeds) is read here, one way: plain decimal
 * digits, with a leading `-` allowed so that a command's own check can say why a negative value is
 * refused. @effect/cli's integer read its text as JavaScript's Number does: `1e15`, `0x10` (16),
 * `+5`, ` 5` and `5.0` were taken as integers the help never promised, and a typo became a
 * height. A value past 2^53 is refused too: it cannot be held exactly.
 */
import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect } from "effect"

/** The integer `text` spells in plain decimal, or a one-line reason it does not. */
export const parseInteger = (text: string): number | string => {
  // text JavaScript would read as a number is told what is read instead
  if (!/^-?[0-9]+$/.test(text))
    return `'${text}' is not an integer${text.trim() !== "" && Number.isFinite(Number(text)) ? ": only plain decimal digits are read (no exponent, hex, fraction, + or spaces)" : ""}`
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : `'${text}' is too large (at most ${Number.MAX_SAFE_INTEGER})`
}

/** An integer flag (`--name N` in the help), read with parseInteger. */
export const integerOption = (name: string): Options.Options<number> =>
  Options.text(name).pipe(
    Options.withPseudoName("integer"),
    Options.mapEffect((text) => {
      const n = parseInteger(text)
      return typeof n === "number" ? Effect.succeed(n) : Effect.fail(ValidationError.invalidValue(HelpDoc.p(n)))
    })
  )
