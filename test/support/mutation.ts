/**
 * Under mutation testing (`npm run mutate`, which sets CHAIN_LAKE_MUTATION) a test whose subject
 * runs in a child process cannot see the mutant planted in this process, yet it still covers
 * whatever it runs in-process to set up (an export, a read-back), so it would run, slowly and in
 * vain, for each of those mutants. Such tests are declared with `describeCli`, which skips them
 * there and runs them everywhere else.
 */
import { describe } from "vitest"

export const underMutation = process.env.CHAIN_LAKE_MUTATION === "1"

/** `describe` for tests of the CLI in child processes: skipped under mutation testing. */
export const describeCli = describe.skipIf(underMutation)
