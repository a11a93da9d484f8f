/** The errors of the Manifests service (../Manifests.ts). */
import { Data } from "effect"

export class ManifestError extends Data.TaggedError("ManifestError")<{ readonly message: string }> {}

/** A failure of the file system, as a ManifestError saying what it said of the lake. */
export const fail = (e: unknown) => new ManifestError({ message: `the lake: ${(e as Error).message}` })
