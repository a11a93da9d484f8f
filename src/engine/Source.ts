/**
 * The engine's view of an API: what it needs from a source, and nothing of how the source speaks
 * HTTP. A source driver (src/drivers/) implements `Source` for one API: its watermarks, whether a
 * list is served, and one page of any paged list, parsed; and it names the errors the engine
 * raises on what the source sent, so they read as that API's errors.
 */
import { Context, type Effect } from "effect"
import type { FieldIssue } from "../schema/decode.js"

/** Where a driver finds a paged list (for the indexer: a path and the key of the records array). */
export interface ListRef {
  /** the list's name in messages (e.g. "txs", "richlist") */
  readonly endpoint: string
  readonly path: string
  readonly arrayKey: string
  /** extra query parameters of the list (filters) */
  readonly query?: Readonly<Record<string, string | ReadonlyArray<string> | boolean | undefined>>
  /**
   * how its keys read, which the driver alone encodes: "height" or "sequence" for a keyset list
   * (keyAfter makes a key from a height or a sequence), "offset" where next_key is an offset, set
   * only after a full page: a short page that names a next one was cut short, and the rows between
   * it and that offset are lost
   */
  readonly keys?: "height" | "sequence" | "offset"
}

/** The pagination parameters of one page (keys are the source's own, offsets count rows). */
export interface PageRequest {
  readonly key?: string | null
  readonly offset?: number
  readonly limit: number
  readonly reverse?: boolean
}

/** One page of a list: its records as parsed (not yet checked), the key of the next page and the source's total. */
export interface ListPage {
  readonly key: string | null
  readonly items: ReadonlyArray<unknown>
  readonly nextKey: string | null
  readonly total: string
  /** whether strings still need re-decoding as UTF-8 (see pageDecode.ts) */
  readonly latin1: boolean
  /** the size of the answer's body in bytes, where the driver knows it: pages in flight are budgeted by it (pageBudget.ts) */
  readonly bytes?: number
}

/** The chain id, the tip, and each watermark the source reports (undefined where it does not serve one). */
export interface SourceStatus {
  readonly chainId: string
  readonly tip: number
  readonly watermarks: Readonly<Record<string, number | undefined>>
}

/** What a driver fails with: a tagged error with a one-line message. */
export interface SourceFailure {
  readonly _tag: string
  readonly message: string
}

/** A record that breaks its schema: where it was (list, page key, field path) and what is wrong. */
export interface InvalidRecordFailure extends SourceFailure {
  readonly endpoint: string
  readonly key: string | null
  readonly path: string
}

export interface SourceService {
  readonly status: Effect.Effect<SourceStatus, SourceFailure>
  /** the chain's fingerprint at `height` (its block hash), or undefined where the source no longer (or not yet) serves that height */
  readonly blockHash: (height: number) => Effect.Effect<string | undefined, SourceFailure>
  /** the time (RFC 3339, UTC) of the block at each height; fails if the source serves no block at one of them */
  readonly blockTimes: (heights: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, string>, SourceFailure>
  /**
   * the hashes of the cosmos txs at each height, in block order, read in pages of at most
   * `pageSize` rows (the run's), fewer where the run's page budget says records are large
   */
  readonly cosmosTxHashes: (
    heights: ReadonlyArray<number>,
    pageSize: number
  ) => Effect.Effect<ReadonlyMap<number, ReadonlyArray<string>>, SourceFailure>
  /**
   * drops what blockTimes and cosmosTxHashes remember: a run starts with it, since the chain may
   * have moved to another history since the last run of the process (a follow's rounds, a run
   * started over after a fork), where the same heights hold other blocks
   */
  readonly forget: Effect.Effect<void>
  /** whether `list` is served here: false only when its endpoint itself says it is not (a documented 404) */
  readonly served: (list: ListRef) => Effect.Effect<boolean, SourceFailure>
  /**
   * `served`, answered by the page `request` asks of `list`, so that one request says whether a
   * list is served and where it starts or ends: the page, "not served" (a documented 404), or
   * "refused" (served, but it refused a parameter: a 400)
   */
  readonly probe: (list: ListRef, request: PageRequest) => Effect.Effect<ListPage | "not served" | "refused", SourceFailure>
  /**
   * the source's own words when `failure` is its answer that the list asked for does not exist
   * (a parameter it cannot resolve, such as a denom with no rich list), else undefined
   */
  readonly absent: (failure: SourceFailure) => string | undefined
  /** the key of the page of `list`'s rows after `after` (a height or a sequence: the list's keys); the engine never writes a key itself */
  readonly keyAfter: (list: ListRef, after: number) => string
  /** the height or sequence a key of `list` names (keyAfter's inverse), or undefined where it names none */
  readonly afterOfKey: (list: ListRef, key: string | null) => number | undefined
  /** the largest page the source serves (rows) */
  readonly maxPageSize: number
  /** one page of `list`, fetched and parsed in one retried step (a body cut short is fetched again) */
  readonly page: (list: ListRef, request: PageRequest) => Effect.Effect<ListPage, SourceFailure>
  /** the error for a record of `list` that breaks its schema (record `index` of the page of `key`) */
  readonly invalidRecord: (list: ListRef, key: string | null, index: number, issue: FieldIssue) => InvalidRecordFailure
  /** the error for pagination that cannot be trusted (a repeated key, rows that do not add up) */
  readonly untrustedPaging: (list: ListRef, key: string | null, message: string) => SourceFailure
}

export class Source extends Context.Tag("chain-lake/Source")<Source, SourceService>() {}
