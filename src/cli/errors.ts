/** The one error type the CLI prints: a one-line message saying what was wrong and what to do. */
import { Data } from "effect"

export class UserError extends Data.TaggedError("UserError")<{ readonly message: string; readonly exitCode?: number }> {}
