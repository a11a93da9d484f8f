/**
 * Route-quote sampling: asks the router for every (pair, amount, option variant) of a plan, once
 * or every so often, and appends one row per quote to the route_quotes dataset, failures
 * included. Each round is one Parquet file, committed atomically like every dataset.
 */
import { readFile } from "node:fs/promises"
import { Data, Duration, Effect, Either, Schema } from "effect"
import { routeQuotes, type QuoteAsked } from "../datasets/route_quotes.js"
import { routerAssets } from "../datasets/router_assets.js"
import { routerChains } from "../datasets/router_chains.js"
import type { SampleDataset } from "../engine/Dataset.js"
import { Manifests, type CommittedFile } from "../lake/Manifests.js"
import type { Row } from "../lake/columns.js"
import { decodeWithPath } from "../schema/decode.js"
import { RouterClient, type RouterClientService } from "../router/RouterClient.js"
import { ROUTER_ENDPOINTS, type RouterEndpoint } from "../router/endpoints.js"
import { describeRouterError, type RouterError, type RouterHttpError } from "../router/errors.js"
import { commitByDate } from "./datedFiles.js"

const AssetRef = Schema.Struct({ chain_id: Schema.String, denom: Schema.String })
export const SamplingPlan = Schema.Struct({
  description: Schema.optional(Schema.String),
  pairs: Schema.Array(
    Schema.Struct({
      from: AssetRef,
      to: AssetRef,
      // route_quotes keeps amounts as DECIMAL(38,0), and amount_in is part of its key
      amounts: Schema.Array(
        Schema.String.pipe(
          Schema.pattern(/^[0-9]+$/, { message: () => "a whole number of base units, in digits" }),
          Schema.maxLength(38, { message: () => "at most 38 digits (route_quotes keeps amounts as DECIMAL(38,0))" })
        )
      ).pipe(Schema.minItems(1))
    })
  ).pipe(Schema.minItems(1)),
  variants: Schema.Array(
    Schema.Struct({
      label: Schema.String,
      go_fast: Schema.optional(Schema.Boolean),
      allow_unsafe: Schema.optional(Schema.Boolean),
      is_op_withdraw: Schema.optional(Schema.Boolean)
    })
  ).pipe(Schema.minItems(1))
})
export type SamplingPlan = typeof SamplingPlan.Type

export class PlanError extends Data.TaggedError("PlanError")<{ readonly message: string }> {}

/** A round in which the router answered no ask at all (all 5xx, 429, timeouts or dropped connections): an outage, not market data. */
export class RouterUnavailableError extends Data.TaggedError("RouterUnavailableError")<{ readonly message: string }> {}

/** The router refused the round's requests for their credentials (401, 403): nothing of the round is stored, and the run fails. */
export class RouterRefusedError extends Data.TaggedError("RouterRefusedError")<{ readonly message: string }> {}

/**
 * A metadata dataset the user named (--datasets) that the router does not serve, or fails to
 * answer: the round's quotes are committed, the run fails.
 */
export class MetadataNotServedError extends Data.TaggedError("MetadataNotServedError")<{ readonly message: string }> {}

/** Whether the router refused the request itself (401, 403: the credentials), which says nothing of the route asked. */
const refused = (e: RouterError): boolean => e._tag === "RouterHttpError" && (e.status === 401 || e.status === 403)

/**
 * Whether a quote's failure is the router not answering, rather than an answer (no route, a bad
 * price, a malformed route): no answer in time or at all, a 5xx or 429, and what is no router's
 * answer: a body that is not a JSON object (a gateway's HTML or text page, `null`), or an error
 * without the router's JSON error body (a gateway's 404 page).
 */
const notAnswered = (e: RouterError): boolean =>
  e._tag === "RouterTimeout" ||
  e._tag === "RouterNetworkError" ||
  (e._tag === "RouterHttpError" && (e.status >= 500 || e.status === 429 || e.code === undefined)) ||
  (e._tag === "RouterDecodeError" && e.path === "")

export const loadPlan = (path: string) =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (e) => new PlanError({ message: `cannot read the plan ${path}: ${(e as Error).message}` })
    })
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new PlanError({ message: `the plan ${path} is not JSON: ${(e as Error).message}` })
    })
    const plan = decodeWithPath(SamplingPlan, json)
    if (Either.isLeft(plan))
      return yield* new PlanError({ message: `the plan ${path} is invalid at ${plan.left.path || "(root)"}: ${plan.left.message}` })
    const repeated = repeatedAsk(plan.right)
    if (repeated) return yield* new PlanError({ message: `the plan ${path} is invalid at ${repeated}` })
    return plan.right
  })

/** Where a plan asks the same quote twice (rows of one key in a round: route_quotes' key is round, pair, variant, amount). */
const repeatedAsk = (plan: SamplingPlan): string | undefined => {
  const labels = new Set<string>()
  for (const [i, v] of plan.variants.entries()) {
    if (labels.has(v.label)) return `variants[${i}].label: "${v.label}" is given twice`
    labels.add(v.label)
  }
  const pairs = new Set<string>()
  for (const [i, p] of plan.pairs.entries()) {
    const pair = JSON.stringify([p.from.chain_id, p.from.denom, p.to.chain_id, p.to.denom])
    if (pairs.has(pair)) return `pairs[${i}]: ${p.from.chain_id}:${p.from.denom} → ${p.to.chain_id}:${p.to.denom} is given twice`
    pairs.add(pair)
    const amounts = new Set<bigint>()
    for (const [j, a] of p.amounts.entries()) {
      if (amounts.has(BigInt(a))) return `pairs[${i}].amounts[${j}]: ${a} is given twice`
      amounts.add(BigInt(a))
    }
  }
  return undefined
}

/** What a run wants of a metadata dataset: named by the user (its absence fails the run), read where served, or not read. */
export type MetadataWant = "required" | "if-served" | "skip"
export interface MetadataWanted {
  readonly router_assets: MetadataWant
  readonly router_chains: MetadataWant
}
/** The default: both read where the router serves them. */
export const METADATA_IF_SERVED: MetadataWanted = { router_assets: "if-served", router_chains: "if-served" }

/** A metadata list not read: its endpoint not served (404, 501), or, where the user did not name it, failing otherwise (`failure`). */
export interface NotServed {
  readonly dataset: keyof MetadataWanted
  readonly endpoint: string
  readonly status?: number
  /** why it could not be read, where it is served */
  readonly failure?: string
}

export interface ReferenceResult {
  /** rows written to router_assets and router_chains (absent: not read) */
  readonly assets?: number
  readonly chains?: number
  readonly notServed: ReadonlyArray<NotServed>
}

export interface RoundResult {
  readonly roundId: string
  readonly quotes: number
  readonly ok: number
  readonly failed: number
  /** asks the router refused for the request's credentials (401, 403): not stored, they say nothing of a route */
  readonly refused?: { readonly asks: number; readonly why: string }
  /** the round's files, under route_quotes/: one per UTC day its quotes were asked on */
  readonly files: ReadonlyArray<string>
  /** router_assets and router_chains, when the round read them */
  readonly reference?: ReferenceResult
}

/** Told of a round as it goes: its start, then each quote once it is answered or failed for good (a progress line reads them). */
export interface RoundWatcher {
  readonly started?: (roundId: string, asks: number) => void
  /** `ok`: the router gave a route; `stored`: the quote is a row (not one the router refused for its credentials) */
  readonly quoted?: (ok: boolean, stored: boolean) => void
}

/** Commits `rows` of `dataset` as files named for `roundId`, one per UTC day of their sampled_at (datedFiles.ts). */
const commitRows = (
  dataset: Pick<SampleDataset<unknown>, "name" | "columns" | "key" | "sortKey" | "partition">,
  rows: ReadonlyArray<Row>,
  roundId: string,
  onCommitted: SampleCommitted | undefined
) =>
  Effect.gen(function* () {
    const kept = yield* oncePerKey(dataset, rows)
    yield* (yield* Manifests).open(dataset.name, "sample", dataset.columns)
    return yield* commitByDate(dataset, kept, roundId, onCommitted && ((files) => onCommitted(dataset.name, files)))
  })

/**
 * An answer that contradicts itself (one key twice with different values, an asset under another
 * chain's key): which part holds would be a guess, so none of it is stored.
 */
export class InconsistentAnswerError extends Data.TaggedError("InconsistentAnswerError")<{ readonly message: string }> {}

/** A row's values as text, bigints too. */
const textOf = (values: ReadonlyArray<unknown>) => JSON.stringify(values, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))

/**
 * `rows` of `dataset` with each key once: an answer that lists an entry twice as it is (a router's
 * assets list repeating one) gives one row; two rows of one key that differ fail (InconsistentAnswerError).
 */
const oncePerKey = (
  dataset: Pick<SampleDataset<unknown>, "name" | "columns" | "key">,
  rows: ReadonlyArray<Row>
): Effect.Effect<ReadonlyArray<Row>, InconsistentAnswerError> => {
  const keyAt = dataset.key.map((name) => dataset.columns.findIndex((c) => c.name === name))
  const seen = new Map<string, Row>()
  for (const row of rows) {
    const key = textOf(keyAt.map((i) => row[i]))
    const before = seen.get(key)
    if (before === undefined) seen.set(key, row)
    else if (textOf(before) !== textOf(row)) {
      // (the key's time columns are the read's: the same in every row of it)
      const named = keyAt.filter((i) => dataset.columns[i].type !== "TIMESTAMP").map((i) => `${dataset.columns[i].name} ${String(row[i])}`)
      const differs = dataset.columns.flatMap((c, i) =>
        textOf([before[i]]) === textOf([row[i]]) ? [] : [`${c.name} ${String(before[i])} and ${String(row[i])}`]
      )
      return Effect.fail(
        new InconsistentAnswerError({
          message: `${dataset.name}: the router's answer lists ${named.join(", ")} twice, with different values (${differs.join("; ")}): none of it is stored`
        })
      )
    }
  }
  return Effect.succeed(seen.size === rows.length ? rows : [...seen.values()])
}

/** Told of each commit of a round's datasets once it went through (engine/commit.ts OnCommitted): a stopped run's report counts it. */
export type SampleCommitted = (dataset: string, files: ReadonlyArray<CommittedFile>) => void

/**
 * Whether an endpoint is not served at all: 404 (or 501). /v2/fungible/assets and /v2/info/chains
 * are outside the documented route → msgs → track → status flow (issue 32), so a router may lack them.
 */
const notServed = (e: RouterError): e is RouterHttpError => e._tag === "RouterHttpError" && (e.status === 404 || e.status === 501)

/** The router endpoint each metadata dataset reads. */
const METADATA_ENDPOINTS: Record<keyof MetadataWanted, RouterEndpoint> = { router_assets: "assets", router_chains: "chains" }

/**
 * One metadata list as `want` says: not read (undefined), read, or not served (a NotServed); a
 * dataset the user named that is not served fails the run.
 */
const readMetadata = <A>(dataset: keyof MetadataWanted, want: MetadataWant, read: Effect.Effect<A, RouterError>) => {
  if (want === "skip") return Effect.succeed(undefined)
  const endpoint = ROUTER_ENDPOINTS[METADATA_ENDPOINTS[dataset]].path
  return read.pipe(
    Effect.map((value): { value: A } | NotServed => ({ value })),
    Effect.catchIf(
      notServed,
      (e): Effect.Effect<NotServed, MetadataNotServedError> =>
        want === "required"
          ? Effect.fail(
              new MetadataNotServedError({
                message: `${dataset} was asked for, but the router does not serve ${endpoint} (${e.status}); the round's quotes are committed`
              })
            )
          : Effect.succeed({ dataset, endpoint, status: e.status })
    ),
    // a list the user did not name does not stop the sampler it came with (quotes are what was asked): said, and read again next run
    Effect.catchAll((e) =>
      e instanceof MetadataNotServedError
        ? Effect.fail(e)
        : want === "required"
          ? Effect.fail(
              new MetadataNotServedError({
                message: `${dataset} was asked for, but reading ${endpoint} failed (${describeRouterError(e)}); the round's quotes are committed`
              })
            )
          : Effect.succeed<NotServed>({ dataset, endpoint, failure: describeRouterError(e) })
    )
  )
}

/**
 * The router's assets and chains (symbols, decimals, names), read once per sampling run, so that
 * quotes in base units can be read in whole tokens: router_assets and router_chains. Each is
 * written where the router serves it, and reported not served otherwise.
 */
export const sampleReference = (roundId: string, wanted: MetadataWanted = METADATA_IF_SERVED, onCommitted?: SampleCommitted) =>
  Effect.gen(function* () {
    const router = yield* RouterClient
    const at = new Date()
    const sampledAt = at.toISOString()
    const [assets, chains] = yield* Effect.all(
      [
        readMetadata("router_assets", wanted.router_assets, router.assets),
        readMetadata("router_chains", wanted.router_chains, router.chains)
      ],
      {
        concurrency: 2
      }
    )
    const result: { assets?: number; chains?: number; notServed: Array<NotServed> } = { notServed: [] }
    for (const read of [assets, chains]) if (read && !("value" in read)) result.notServed.push(read)
    if (assets && "value" in assets) {
      const map = assets.value.chain_to_assets_map
      const misplaced = Object.entries(map).flatMap(([chain, c]) =>
        c.assets.filter((a) => a.chain_id !== chain).map((a) => [chain, a] as const)
      )
      if (misplaced.length > 0) {
        const [chain, a] = misplaced[0]
        return yield* new InconsistentAnswerError({
          message: `router_assets: the router's answer lists ${a.chain_id}/${a.denom} among the assets of ${chain}: none of it is stored`
        })
      }
      const rows = Object.values(map).flatMap((c) => c.assets.map((asset) => routerAssets.toRow({ sampledAt, asset })))
      yield* commitRows(routerAssets, rows, roundId, onCommitted)
      result.assets = rows.length
    }
    if (chains && "value" in chains) {
      const rows = chains.value.chains.map((chain) => routerChains.toRow({ sampledAt, chain }))
      yield* commitRows(routerChains, rows, roundId, onCommitted)
      result.chains = rows.length
    }
    return result satisfies ReferenceResult
  })

/** Every ask of a round of `plan`: each pair's amounts, in each variant. */
const roundAsks = (plan: SamplingPlan, started: Date, roundId: string): Array<QuoteAsked> =>
  plan.pairs.flatMap((pair) =>
    pair.amounts.flatMap((amountIn) =>
      plan.variants.map((v) => ({
        sampledAt: started.toISOString(),
        roundId,
        source: pair.from,
        dest: pair.to,
        variant: v.label,
        goFast: v.go_fast,
        allowUnsafe: v.allow_unsafe,
        isOpWithdraw: v.is_op_withdraw,
        amountIn
      }))
    )
  )

/**
 * The router's answer to `q` as its one route_quotes row, a failed quote too, or none where the
 * router refused the request's credentials; a failure that is no answer is added to `unanswered`.
 */
const quoteRow = (router: RouterClientService, q: QuoteAsked, unanswered: Array<RouterError>) =>
  Effect.suspend(() => {
    const sampledAt = new Date().toISOString()
    return router
      .route({
        amount_in: q.amountIn,
        source_asset_chain_id: q.source.chain_id,
        source_asset_denom: q.source.denom,
        dest_asset_chain_id: q.dest.chain_id,
        dest_asset_denom: q.dest.denom,
        ...(q.goFast !== undefined ? { go_fast: q.goFast } : {}),
        ...(q.allowUnsafe !== undefined ? { allow_unsafe: q.allowUnsafe } : {}),
        ...(q.isOpWithdraw !== undefined ? { is_op_withdraw: q.isOpWithdraw } : {})
      })
      .pipe(
        // a failed quote is data, not a crash: every ask becomes exactly one row, but one refused
        // for the request's credentials (401, 403), which says nothing of the route asked
        Effect.either,
        Effect.tap((r) => void (Either.isLeft(r) && (notAnswered(r.left) || refused(r.left)) && unanswered.push(r.left))),
        Effect.map((r) =>
          Either.isLeft(r) && refused(r.left)
            ? undefined
            : routeQuotes.toRow({ asked: { ...q, sampledAt }, ...(Either.isRight(r) ? { route: r.right } : { error: r.left }) })
        )
      )
  })

/** One round: every quote of the plan, written as one committed file (and, `withReference`, the router's assets and chains: true reads those served). */
export const sampleRound = (
  plan: SamplingPlan,
  options: {
    readonly concurrency?: number
    readonly withReference?: boolean | MetadataWanted
    readonly onCommitted?: SampleCommitted
    readonly watcher?: RoundWatcher
  } = {}
) =>
  Effect.gen(function* () {
    const router = yield* RouterClient
    const started = new Date()
    const roundId = started.toISOString().replace(/[-:.]/g, "").replace("T", "-")
    const asks = roundAsks(plan, started, roundId)
    options.watcher?.started?.(roundId, asks.length)
    const okColumn = routeQuotes.columns.findIndex((c) => c.name === "ok")
    const unanswered: Array<RouterError> = []
    const answered = yield* Effect.forEach(
      asks,
      (q) =>
        quoteRow(router, q, unanswered).pipe(Effect.tap((row) => options.watcher?.quoted?.(row?.[okColumn] === true, row !== undefined))),
      { concurrency: options.concurrency ?? 8 }
    )
    const rows = answered.filter((row): row is Row => row !== undefined)
    // stored, a round of 503s read as every pair unavailable in route_quote_stats, with exit 0
    // stored, a round refused for its credentials read as routes unavailable; another round is refused alike: the run fails
    const denied = unanswered.find(refused)
    if (denied && asks.length > 0 && unanswered.length === asks.length)
      return yield* new RouterRefusedError({
        message: `the router refused the round's requests (${describeRouterError(denied)}): check its credentials (--header, or user:pass@ in --router-url); nothing of this round is stored; rounds before it are kept`
      })
    if (asks.length > 0 && unanswered.length === asks.length)
      return yield* new RouterUnavailableError({
        message: `the router answered none of the round's ${asks.length} asks (${describeRouterError(unanswered[0])}): nothing of this round is stored; rounds before it are kept`
      })
    const files = yield* commitRows(routeQuotes, rows, roundId, options.onCommitted)
    const ok = rows.filter((r) => r[okColumn] === true).length
    const wanted = options.withReference === true ? METADATA_IF_SERVED : options.withReference || undefined
    const reference = wanted ? yield* sampleReference(roundId, wanted, options.onCommitted) : undefined
    return {
      roundId,
      quotes: rows.length,
      ok,
      failed: rows.length - ok,
      ...(denied ? { refused: { asks: asks.length - rows.length, why: describeRouterError(denied) } } : {}),
      files,
      ...(reference ? { reference } : {})
    } satisfies RoundResult
  })

/**
 * Parses "500ms", "30s", "5m", "1h". A bare number is refused: read as milliseconds, `--every 5`
 * sampled the router back to back (30,000 requests in 10 minutes) where its user meant 5 seconds.
 */
export const parseEvery = (text: string): Duration.Duration | undefined => {
  const m = /^(\d+)(ms|s|m|h)$/.exec(text.trim())
  if (!m) return undefined
  const n = Number(m[1])
  const unit = m[2]
  return unit === "h" ? Duration.hours(n) : unit === "m" ? Duration.minutes(n) : unit === "s" ? Duration.seconds(n) : Duration.millis(n)
}

/** `rounds` rounds (Infinity: until interrupted), `every` apart; each round committed before the wait. */
export const sampleRoutes = (
  plan: SamplingPlan,
  options: {
    readonly rounds: number
    readonly every?: Duration.Duration
    readonly concurrency?: number
    /** router_assets and router_chains, read with the first stored round (default: where served) */
    readonly metadata?: MetadataWanted
    readonly onRound?: (r: RoundResult) => void
    readonly onSkipped?: (e: RouterUnavailableError) => void
    readonly watcher?: RoundWatcher
  }
) =>
  Effect.gen(function* () {
    const results: Array<RoundResult> = []
    let skipped: RouterUnavailableError | undefined
    // rounds start `every` apart (a round that takes longer is followed at once), not `every` after the last ended
    let started = 0
    for (let i = 0; i < options.rounds; i++) {
      if (i > 0 && options.every) yield* Effect.sleep(Math.max(0, started + Duration.toMillis(options.every) - Date.now()))
      started = Date.now()
      // the router's assets and chains with the run's first stored round
      const r = yield* sampleRound(plan, {
        concurrency: options.concurrency,
        withReference: results.length === 0 && (options.metadata ?? METADATA_IF_SERVED),
        ...(options.watcher ? { watcher: options.watcher } : {})
      }).pipe(
        // one round of an outage in a long sampling run is skipped, said, and the next round tried (a blip ended a sampler meant to run for days)
        Effect.catchTag("RouterUnavailableError", (e) =>
          options.rounds > 1
            ? Effect.sync(() => {
                skipped = e
                options.onSkipped?.(e)
                return undefined
              })
            : Effect.fail(e)
        )
      )
      if (r === undefined) continue
      options.onRound?.(r)
      results.push(r)
    }
    // every round an outage: nothing was sampled
    if (results.length === 0 && skipped) return yield* skipped
    return results
  })
