/** An output folder a command is about to write, checked before anything is fetched (lake/outputFolder.ts), and never among a lake's own files. */
import { Effect } from "effect"
import { outputFolderProblem } from "../lake/outputFolder.js"
import { UserError } from "./errors.js"
import { insideLake } from "./lakeBounds.js"

/** What is wrong with writing into `path` (given by `flag`), or undefined; `s3`: the flag takes an s3:// URL too. */
export const outputFolderOutsideLakesProblem = (flag: string, path: string, s3 = false): string | undefined =>
  outputFolderProblem(flag, path, {
    s3,
    // a dataset folder of another lake: its reader (and verify) would meet files no manifest of its lists
    refused: (p) => {
      const lake = insideLake(p)
      return lake && `${flag} ${p} is inside the lake at ${lake.lake} (${lake.part}), among its own files: give a folder outside them`
    }
  })

/** Fails with a usage error (exit 2) when `path` (given by `flag`) cannot be written as an output folder. */
export const checkOutputFolder = (flag: string, path: string, s3 = false): Effect.Effect<void, UserError> =>
  Effect.suspend(() => {
    const problem = outputFolderOutsideLakesProblem(flag, path, s3)
    return problem ? Effect.fail(new UserError({ message: problem, exitCode: 2 })) : Effect.void
  })
