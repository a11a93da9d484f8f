/**
 * Transfer tracking: register a tx once (remembered in OUT/transfers/_tracked.json, so a rerun
 * resumes polling without registering again), then poll its status until a final state with
 * the cadence production wallets use: slow while the ETA is far, faster near it, every second
 * once overdue. Every state change becomes a row of the transfers dataset.
 *
 * Several runs may track on one folder at once (the same tx or others): the registry and the
 * rows are changed only under OUT/transfers/_tracked.lock (lock.ts, as manifests are locked), so
 * - a registry change is a read-modify-write of the file as it is on disk then: no run's entry is
 *   lost, and a tx is registered with the router by the first run only (the others resume it);
 * - before rows are committed, the states the lake holds for the tx are read back (under the
 *   dataset's manifest lock, so a compaction swapping files is not read halfway) and only the
 *   others are committed: a state is recorded once per transfer (the dataset's key, tx_hash,
 *   chain_id and state), its row the one of the run that committed it first, and a rerun, even one
 *   whose registry was lost, adds nothing the lake already has.
 */
import { readFile, rename, writeFile } from "node:fs/promises"
import { Data, Duration, Effect, Either } from "effect"
import { transfers } from "../datasets/transfers.js"
import { Manifests, MANIFEST_LOCK } from "../lake/Manifests.js"
import type { Row } from "../lake/columns.js"
import { ParquetSink } from "../lake/ParquetSink.js"
import { sqlString, sqlStringList } from "../lake/sql.js"
import { RouterFlowError, type RouterError } from "../router/errors.js"
import { RouterClient } from "../router/RouterClient.js"
import { isFinalState, type TxStatusResponse } from "../router/schemas.js"
import { datasetPath } from "../lake/layout.js"
import { commitByDate } from "./datedFiles.js"
import { makeFolder } from "../lake/files.js"
import { withLockFile } from "../lake/lock.js"

export interface PollSchedule {
  /** while the ETA is further than `nearWindow` */
  readonly slow: Duration.Duration
  /** within `nearWindow` of the ETA */
  readonly near: Duration.Duration
  /** once the ETA has passed */
  readonly overdue: Duration.Duration
  readonly nearWindow: Duration.Duration
}

/** How long a registered tx may stay "not found" before tracking stops: the tracking service indexes within seconds. */
export const NOT_FOUND_FOR_MS = 120_000

/** status's 404 "tx not found" (code 5), as opposed to an unsupported chain or a server that is not a router. */
const isTxNotFound = (e: RouterError): boolean => e._tag === "RouterHttpError" && e.status === 404 && /tx not found/i.test(e.body)

/** interwovenkit's cadence: 60 s, 5 s within 5 min of the ETA, 1 s once overdue. */
export const WALLET_POLLING: PollSchedule = {
  slow: Duration.seconds(60),
  near: Duration.seconds(5),
  overdue: Duration.seconds(1),
  nearWindow: Duration.minutes(5)
}

/** The wait before the next status poll. Without an estimate the ETA is unknown: poll at the `near` pace. */
export const nextPollDelay = (now: number, eta: number | undefined, s: PollSchedule): Duration.Duration => {
  if (eta === undefined) return s.near
  if (now >= eta) return s.overdue
  return eta - now > Duration.toMillis(s.nearWindow) ? s.slow : s.near
}

interface TrackedTx {
  readonly txHash: string
  readonly chainId: string
  readonly registeredAt: string
  readonly estimatedSeconds?: number
  readonly lastState?: string
}

const registryPath = (root: string) => datasetPath(root, transfers.name, "_tracked.json")
/** The overall deadline passed with the tx not in a final state: what was observed is kept, a rerun goes on. */
export class TrackTimeoutError extends Data.TaggedError("TrackTimeoutError")<{
  readonly message: string
  readonly pending: ReadonlyArray<{ readonly txHash: string; readonly chainId: string; readonly state?: string }>
}> {}

/**
 * The default overall deadline: the route's estimate plus 30 minutes (the router itself abandons a
 * transfer stalled for more than 10 minutes, router-openapi.yaml STATE_ABANDONED), or 30 minutes
 * without an estimate.
 */
export const defaultTrackTimeoutMs = (estimatedSeconds?: number) => (estimatedSeconds ?? 0) * 1000 + 30 * 60_000

/** The registry of tracked txs is there but cannot be read. */
export class TrackRegistryError extends Data.TaggedError("TrackRegistryError")<{ readonly message: string }> {}

/** The registry of registered txs; none yet is empty, but a damaged one is not (read as empty, every tx in it was registered again). */
const readRegistry = (root: string) =>
  Effect.tryPromise({
    try: async () => {
      const text = await readFile(registryPath(root), "utf8").catch((e: NodeJS.ErrnoException) => {
        if (e.code === "ENOENT") return undefined
        throw e
      })
      if (text === undefined) return {} as Record<string, TrackedTx>
      const registry: unknown = JSON.parse(text)
      if (typeof registry !== "object" || registry === null || Array.isArray(registry)) throw new Error("not a JSON object")
      return registry as Record<string, TrackedTx>
    },
    catch: (e) =>
      new TrackRegistryError({
        message: `${registryPath(root)} cannot be read (${(e as Error).message}): restore it, or remove it to register its txs with the router again`
      })
  })
const writeRegistry = (root: string, registry: Record<string, TrackedTx>) =>
  Effect.tryPromise({
    try: async () => {
      await makeFolder(datasetPath(root, transfers.name))
      // the temp name is fixed: the registry is written only under its lock
      await writeFile(registryPath(root) + ".tmp", JSON.stringify(registry, null, 1))
      await rename(registryPath(root) + ".tmp", registryPath(root))
    },
    catch: (e) => new TrackRegistryError({ message: `cannot write ${registryPath(root)}: ${(e as Error).message}` })
  })

/** The lock every change of the registry, and every commit of transfers rows, holds (see the top of this file). */
const registryLock = (root: string) => datasetPath(root, transfers.name, "_tracked.lock")

/**
 * Runs `self` holding the registry's lock as `writer`, for a registration (one router call) or a
 * commit of rows: each reads the registry as it is on disk right before writing it.
 */
const holdingRegistry = <A, E, R>(root: string, writer: string, self: Effect.Effect<A, E, R>) =>
  Effect.tryPromise({
    try: () => makeFolder(datasetPath(root, transfers.name)),
    catch: (e) => new TrackRegistryError({ message: `cannot make ${datasetPath(root, transfers.name)}: ${(e as Error).message}` })
  }).pipe(Effect.zipRight(withLockFile(registryLock(root), writer, self)))

/**
 * The states the lake holds for `tx`: read from the committed files under the dataset's manifest
 * lock, so that a compaction swapping files meanwhile is seen before or after, never halfway
 * (a file listed, then moved away, would be skipped and its states recorded again). The hash is
 * compared in lower case, as the registry's key is.
 */
const recordedStates = (tx: TrackedTx) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    const sink = yield* ParquetSink
    const rows = yield* withLockFile(
      datasetPath(manifests.root, transfers.name, MANIFEST_LOCK),
      manifests.writer,
      manifests.withCommittedFiles(transfers.name, (paths) =>
        sink.query(
          `SELECT DISTINCT state FROM read_parquet(${sqlStringList(paths)}, union_by_name = true) WHERE chain_id = ${sqlString(tx.chainId)} AND lower(tx_hash) = ${sqlString(tx.txHash.toLowerCase())}`
        )
      )
    )
    return new Set(rows.map((r) => String(r.state)))
  })

export interface TrackOptions {
  readonly txHash: string
  readonly chainId: string
  readonly estimatedSeconds?: number
  readonly schedule?: PollSchedule
  /** how long status may answer "tx not found" before tracking gives up (default 2 min) */
  readonly notFoundForMs?: number
  /** how long this run polls before giving up (default: defaultTrackTimeoutMs of the estimate); the state changes seen are kept */
  readonly timeoutMs?: number
  readonly onChange?: (status: TxStatusResponse, elapsedSeconds: number, resumed: boolean) => void
}

/** What a run has seen of its tx: the state changes not committed yet, and the last state. */
interface Observed {
  readonly changes: Array<{ readonly state: string; readonly row: Row }>
  last: string | undefined
}

/**
 * The tx of `options` registered, or resumed: read from the registry as it is on disk, under its
 * lock, so that a tx another run registered (before, or just now at once with this one) is resumed,
 * not registered again, and no run's entry is lost.
 */
const registerOrResume = (options: TrackOptions, key: string) =>
  Effect.gen(function* () {
    const router = yield* RouterClient
    const manifests = yield* Manifests
    const root = manifests.root
    return yield* holdingRegistry(
      root,
      manifests.writer,
      Effect.gen(function* () {
        const registry = yield* readRegistry(root)
        const known = registry[key]
        if (known) {
          router.markTracked(options.txHash, options.chainId)
          return { tx: known, resumed: true }
        }
        yield* router.track(options.txHash, options.chainId)
        const tx: TrackedTx = {
          txHash: options.txHash,
          chainId: options.chainId,
          registeredAt: new Date().toISOString(),
          estimatedSeconds: options.estimatedSeconds
        }
        // read again after the router call: what another run wrote meanwhile (had this run's lock
        // been taken over, see lock.ts) is kept, its entry too
        const now = yield* readRegistry(root)
        if (now[key]) return { tx: now[key], resumed: false }
        yield* writeRegistry(root, { ...now, [key]: tx })
        return { tx, resumed: false }
      })
    )
  })

/** `rows` of `tx` as committed files of transfers, named for the time of writing and the tx, one per UTC day of their observed_at. */
const commitTransferRows = (tx: TrackedTx, rows: ReadonlyArray<Row>) => {
  const stamp = new Date().toISOString()
  return commitByDate(transfers, rows, `${stamp.replace(/[-:.]/g, "")}-${tx.txHash.slice(0, 16).replace(/[^0-9A-Za-z]/g, "")}`)
}

/**
 * Writes the rows observed so far (also when the run is interrupted). Under the registry's lock
 * (which every run's commit of transfers rows holds): the states the lake holds for the tx are
 * read back and only the others are committed, the first row of each (a state is recorded once
 * per transfer, the dataset's key); then the registry entry, as it is on disk, gets the last
 * state (a final state another run recorded stays).
 */
const flushObserved = (tx: TrackedTx, key: string, observed: Observed) =>
  Effect.gen(function* () {
    if (observed.changes.length === 0) return
    const manifests = yield* Manifests
    const root = manifests.root
    yield* holdingRegistry(
      root,
      manifests.writer,
      Effect.gen(function* () {
        const have = yield* recordedStates(tx)
        const fresh = observed.changes.filter((o) => {
          if (have.has(o.state)) return false
          have.add(o.state)
          return true
        })
        if (fresh.length > 0)
          yield* commitTransferRows(
            tx,
            fresh.map((o) => o.row)
          )
        const registry = yield* readRegistry(root)
        const entry = registry[key] ?? tx
        const lastState = entry.lastState !== undefined && isFinalState(entry.lastState) ? entry.lastState : observed.last
        yield* writeRegistry(root, { ...registry, [key]: { ...entry, lastState } })
      })
    )
    observed.changes.length = 0
  })

/**
 * Polls the status of `tx` until a final state, each state change added to `observed` (and told
 * to onChange), at the cadence of the schedule. A registered tx is "tx not found" (404) until the
 * router's tracking service has indexed it: polled through for a bounded time, with one
 * re-registration along the way (as the Skip SDK's retry_track), then a clear error (a wrong hash
 * or chain id looks the same from here).
 */
const pollUntilFinal = <E, R>(
  options: TrackOptions,
  tx: TrackedTx,
  resumed: boolean,
  observed: Observed,
  save: Effect.Effect<void, E, R>
) =>
  Effect.gen(function* () {
    const router = yield* RouterClient
    const schedule = options.schedule ?? WALLET_POLLING
    const eta = tx.estimatedSeconds !== undefined ? Date.parse(tx.registeredAt) + tx.estimatedSeconds * 1000 : undefined
    const notFoundFor = options.notFoundForMs ?? NOT_FOUND_FOR_MS
    let notFoundSince: number | undefined
    let retracked = false
    for (;;) {
      const polled = yield* router.status(options.txHash, options.chainId).pipe(
        Effect.map(Either.right),
        Effect.catchIf(isTxNotFound, (e) => Effect.succeed(Either.left(e)))
      )
      if (Either.isLeft(polled)) {
        const at = Date.now()
        notFoundSince ??= at
        if (at - notFoundSince >= notFoundFor)
          return yield* new RouterFlowError({
            rule: "tx_not_found",
            message: `the router still answers "tx not found" for ${options.txHash} on ${options.chainId} after ${Math.round((at - notFoundSince) / 1000)} s (re-registered once): check --tx-hash and --chain-id, and that the tx was broadcast`
          })
        if (!retracked && at - notFoundSince >= notFoundFor / 4) {
          retracked = true
          yield* router.retrack(options.txHash, options.chainId)
        }
        yield* Effect.sleep(schedule.overdue)
        continue
      }
      notFoundSince = undefined
      const status: TxStatusResponse = polled.right
      const now = new Date()
      if (status.state !== observed.last) {
        observed.changes.push({ state: status.state, row: transfers.toRow({ tx, observedAt: now, status }) })
        observed.last = status.state
        // committed as it is seen: the router tells only the current state, so one lost (a kill -9) is lost for good
        yield* save
        options.onChange?.(status, (now.getTime() - Date.parse(tx.registeredAt)) / 1000, resumed)
      }
      if (isFinalState(status.state)) return status
      yield* Effect.sleep(nextPollDelay(now.getTime(), eta, schedule))
    }
  })

/**
 * A tx whose final state the lake holds already: asked once more, the router must answer that
 * state (a final state does not change); one that answers another is refused, nothing recorded,
 * rather than a second outcome beside the first.
 */
const endedBefore = (options: TrackOptions, tx: TrackedTx) =>
  Effect.gen(function* () {
    const router = yield* RouterClient
    const status = yield* router.status(options.txHash, options.chainId)
    if (status.state !== tx.lastState)
      return yield* new RouterFlowError({
        rule: "final_state",
        message: `${options.txHash} on ${options.chainId} reached ${tx.lastState} (recorded in the lake), but the router now answers ${status.state}: a final state does not change; nothing recorded`
      })
    return { status, resumed: true, registeredAt: tx.registeredAt }
  })

export const trackTransfer = (options: TrackOptions) =>
  Effect.gen(function* () {
    const manifests = yield* Manifests
    yield* manifests.open(transfers.name, "sample", transfers.columns)
    const key = `${options.chainId}/${options.txHash.toLowerCase()}`
    const { tx, resumed } = yield* registerOrResume(options, key)
    if (tx.lastState !== undefined && isFinalState(tx.lastState)) return yield* endedBefore(options, tx)
    const observed: Observed = { changes: [], last: tx.lastState }
    const flush = flushObserved(tx, key, observed)
    const timeoutMs = options.timeoutMs ?? defaultTrackTimeoutMs(tx.estimatedSeconds)
    const gaveUp = () =>
      new TrackTimeoutError({
        message: `gave up after ${+(timeoutMs / 1000).toFixed(1)} s (--timeout): ${options.txHash} on ${options.chainId} still ${observed.last ?? "not found by the router"}; the state changes seen are kept, run the same command again to go on tracking`,
        pending: [{ txHash: options.txHash, chainId: options.chainId, ...(observed.last ? { state: observed.last } : {}) }]
      })
    // a flush that fails (the lock held by another run past its wait, a full disk) fails the run
    // with its own one line, in place of the poll's outcome: the states seen were not recorded
    const unsaved: { error?: Effect.Effect.Error<typeof flush> } = {}
    const final = yield* pollUntilFinal(options, tx, resumed, observed, flush).pipe(
      Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: gaveUp }),
      Effect.ensuring(flush.pipe(Effect.catchAll((e) => Effect.sync(() => void (unsaved.error = e))))),
      Effect.catchAll((e) => Effect.fail(unsaved.error ?? e))
    )
    if (unsaved.error) return yield* Effect.fail(unsaved.error)
    return { status: final, resumed, registeredAt: tx.registeredAt }
  })
