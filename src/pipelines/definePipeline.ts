/**
 * Pipelines: a declared, repeatable job — which datasets, from which services, which denoms and
 * route plan, on which schedule, into which folder. `definePipeline` only checks and returns the
 * definition; `runPipeline` (run.ts) carries it out.
 */
import { Cron, Either } from "effect"

export interface PipelineDefinition {
  readonly name: string
  readonly description: string
  /** datasets to export; default: every dataset the chain serves */
  readonly datasets?: ReadonlyArray<string>
  /**
   * Service URLs; --indexer-url/--router-url and env CHAIN_LAKE_INDEXER_URL / CHAIN_LAKE_ROUTER_URL
   * override them. "devnet" runs on the embedded devnet (simulated data) when no URL is given; a
   * pipeline that names no URL runs on it only with `run --devnet`, never by default, so that a
   * forgotten URL cannot fill a real lake with simulated rows.
   */
  readonly sources?: "devnet" | { readonly indexerUrl?: string; readonly routerUrl?: string }
  readonly denoms?: ReadonlyArray<string>
  /** route-quote sampling plan (a path relative to pipelines/), sampled once per run */
  readonly routePlan?: string
  /** cron expression for `run --schedule` (5 fields, or 6 with seconds first) */
  readonly schedule: string
  /** output folder (relative to the working directory) */
  readonly out?: string
  /** how many snapshot heights to keep per snapshot dataset; older ones are deleted after each run */
  readonly keepSnapshots?: number
  readonly fromHeight?: number
  readonly toHeight?: number
}

export class PipelineError extends Error {}

export const definePipeline = (definition: PipelineDefinition): PipelineDefinition => {
  if (typeof definition !== "object" || definition === null || typeof definition.name !== "string" || typeof definition.schedule !== "string")
    throw new PipelineError("a pipeline is an object with at least a name and a schedule")
  if (!/^[a-z0-9][a-z0-9-]*$/.test(definition.name)) throw new PipelineError(`pipeline name "${definition.name}" must be lowercase letters, digits and dashes`)
  if (Either.isLeft(Cron.parse(definition.schedule))) throw new PipelineError(`pipeline ${definition.name}: schedule "${definition.schedule}" is not a cron expression`)
  if (definition.keepSnapshots !== undefined && (!Number.isInteger(definition.keepSnapshots) || definition.keepSnapshots < 1))
    throw new PipelineError(`pipeline ${definition.name}: keepSnapshots must be a whole number of at least 1`)
  return definition
}
