/**
 * The messages between the thread that runs an export and its shard workers (workers.ts,
 * shardWorker.ts). A worker runs whole shards (paging, decoding, rows, Parquet files); everything
 * that is the run's, not the shard's, stays with the run's thread and is asked for by a call: each
 * commit, and a pass through each of the run's gates (its paging slots, its request limiter).
 */
import type { CommittedFile } from "../lake/Manifests.js"
import type { Range } from "../lake/RangeSet.js"
import type { ShardSettings } from "./shard.js"

/** A failure as it crosses threads: its fields (`_tag`, `message` and the rest), plain data. */
export type FailureFields = Readonly<Record<string, unknown>>

export type Call =
  | { readonly method: "commit"; readonly dataset: string; readonly files: ReadonlyArray<CommittedFile>; readonly range: Range }
  /** waits until the gate lets the worker through; answered with the pass's ticket, which a "leave" message gives back */
  | { readonly method: "enter"; readonly gate: string }

export type ToWorker =
  | {
      readonly type: "run"
      readonly task: number
      readonly source: string
      readonly targets: ReadonlyArray<string>
      readonly range: Range
      readonly settings: ShardSettings
    }
  | { readonly type: "interrupt"; readonly task: number }
  /** a stop is asked of the run (StopSignal): the shard commits what it has read and ends, "stopped" */
  | { readonly type: "stop"; readonly task: number }
  /** the run is over: close the layer (DuckDB, scratch) and end */
  | { readonly type: "close" }
  | { readonly type: "reply"; readonly call: number; readonly ok: true; readonly value: unknown }
  | { readonly type: "reply"; readonly call: number; readonly ok: false; readonly failure: FailureFields }

export type Outcome =
  | { readonly outcome: "done" }
  | { readonly outcome: "stopped" }
  | { readonly outcome: "failed"; readonly failure: FailureFields }
  | { readonly outcome: "interrupted" }
  | { readonly outcome: "defect"; readonly message: string }

export type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "broken"; readonly message: string }
  | { readonly type: "call"; readonly task: number; readonly call: number; readonly request: Call }
  | { readonly type: "leave"; readonly task: number; readonly ticket: number }
  /** the worker no longer waits for call's answer (the wait was interrupted): a pass it grants is given back at once */
  | { readonly type: "abandon"; readonly task: number; readonly call: number }
  | { readonly type: "rows" | "fetched"; readonly task: number; readonly dataset: string; readonly count: number }
  | { readonly type: "quarantined"; readonly task: number }
  | { readonly type: "notice"; readonly task: number; readonly message: string }
  | ({ readonly type: "exit"; readonly task: number } & Outcome)

/** A failure's fields, to send: its own enumerable ones that can be cloned (data, not functions), `_tag` and `message` always. */
export const failureFields = (failure: unknown): FailureFields => {
  if (typeof failure !== "object" || failure === null) return { _tag: "UnknownFailure", message: String(failure) }
  const e = failure as { readonly _tag?: unknown; readonly message?: unknown }
  const fields: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(failure)) {
    try {
      fields[k] = structuredClone(v)
    } catch {
      // a function or a handle: not the failure's data
    }
  }
  // its text too: some failures say more in toString() than in message (the indexer's name where and what)
  return { ...fields, _tag: String(e._tag ?? "UnknownFailure"), message: String(e.message ?? ""), text: String(failure) }
}

/** A failure received from the other thread: an Error with the fields it was sent with (its `_tag` too, which is what handlers match) and its text. */
export class RemoteFailure extends Error {
  readonly _tag: string
  readonly text: string
  constructor(fields: FailureFields) {
    super(String(fields.message ?? ""))
    this._tag = String(fields._tag)
    this.text = String(fields.text ?? `${this._tag}: ${this.message}`)
    Object.assign(this, fields)
  }
  override toString() {
    return this.text
  }
}
