/**
 * Shard workers: a run's shards paged, decoded and written in worker threads, so that the per-row
 * work (JSON, checks, rows, DuckDB's appender) uses the cores the run is given instead of its one
 * main thread. The main thread plans, schedules and commits: a worker's commit is a call to it
 * (ShardLake through the run's Manifests and history guard), and so is each pass through the
 * run's gates (its paging slots, its request limiter: a pass a shard may keep for its next
 * requests, shardWorker.ts GateKind), so that --concurrency and --rps hold for the run as a
 * whole. A worker's module builds its source and sink (serveShards); the engine knows no API and
 * no dataset of its own here either.
 */
import { Worker } from "node:worker_threads"
import { Cause, Context, Deferred, Effect, Exit, Fiber, FiberId, Option, Queue, type Scope } from "effect"
import type { Range } from "../lake/RangeSet.js"
import type { AppendDataset, AppendList, Dataset } from "./Dataset.js"
import type { FetchSlots, ShardEnd, ShardEvents, ShardSettings, WriteFailure } from "./shard.js"
import type { ShardLakeService } from "./ShardLake.js"
import { stopSignalOf, untilStopped } from "../stop/StopSignal.js"
import type { ShardWorkerData } from "./shardWorker.js"
import { type Call, failureFields, type FromWorker, RemoteFailure, type ToWorker } from "./workerProtocol.js"

/** A gate of the run that workers pass through (the CLI's request limiter). */
export type Gate = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

export interface ShardWorkersConfig<C = unknown> {
  /** how many worker threads (0: none, the shards run in the run's thread) */
  readonly count: number
  /** the module each worker runs (it calls serveShards), asked for once workers start */
  readonly module: () => URL
  /** what the module builds its source and sink from (cloned into each worker) */
  readonly config: (worker: number) => C
  /** the run's gates a worker's module passes through by name, besides "slots" (the paging slots) */
  readonly gates: Readonly<Record<string, Gate>>
  /**
   * the datasets the module serves (it finds a shard's datasets by name among them): a shard of
   * any other dataset (a library caller's own) runs in the run's thread
   */
  readonly datasets: ReadonlyArray<Dataset>
  /**
   * the workers' Node flags (new Worker's execArgv), less any Node refuses a worker (flags only a
   * process takes); absent, the process's own, as Node gives a worker by default
   */
  readonly execArgv?: ReadonlyArray<string>
}

/** Present where a run's shards go to worker threads (export --workers N); absent, they run in the run's thread. */
export class ShardWorkers extends Context.Tag("chain-lake/ShardWorkers")<ShardWorkers, ShardWorkersConfig>() {}

export interface ShardPool {
  /** runs a shard of `context`'s run (its settings, counts, commits and paging slots) on the least busy worker */
  readonly run: (
    list: AppendList,
    targets: ReadonlyArray<AppendDataset>,
    range: Range,
    context: ShardContext
  ) => Effect.Effect<ShardEnd, WriteFailure>
}

/**
 * Workers started once for several runs (a follow's rounds), each run's shards sent to them: where
 * present, a run uses these rather than starting its own.
 */
export class RunningShardWorkers extends Context.Tag("chain-lake/RunningShardWorkers")<RunningShardWorkers, ShardPool>() {}

/** What a shard of a run reports to and commits into: its settings, the run's counts, its lake and paging slots (as runShard takes them in the run's thread). */
export interface ShardContext {
  readonly settings: ShardSettings
  readonly events: ShardEvents
  readonly lake: ShardLakeService
  readonly fetchSlots: FetchSlots
}

interface Member {
  readonly worker: Worker
  /** shards running on it */
  busy: number
  /** closed by the run (its exit is no failure) */
  closing: boolean
  /** done once its layer is built (failed if it broke first) */
  readonly ready: Deferred.Deferred<void, WriteFailure>
  /** why it broke, once it has */
  broken?: string
}

/** How long a worker may take to close its shards' resources (DuckDB, its scratch folder) before it is terminated. */
const CLOSE_MS = 5_000

/** Asks the worker to close (its layer's finalizers run: DuckDB closed, scratch removed), terminating it if it has not within CLOSE_MS. */
const close = (member: Member) =>
  Effect.promise(async () => {
    member.closing = true
    if (member.broken !== undefined) return void (await member.worker.terminate())
    const exited = new Promise<void>((resolve) => member.worker.once("exit", () => resolve()))
    member.worker.postMessage({ type: "close" } satisfies ToWorker)
    const timer = setTimeout(() => void member.worker.terminate(), CLOSE_MS)
    await exited
    clearTimeout(timer)
  })

/**
 * Starts `config.count` workers writing into the lake at `lake`, a shard sent to its worker once
 * that one is ready (its layer built); they are terminated when the scope closes. A worker that
 * breaks fails the shards it was running or was given, and is sent no other.
 */
export const startShardWorkers = (
  config: ShardWorkersConfig,
  lake: { readonly root: string; readonly staging: string }
): Effect.Effect<ShardPool, never, Scope.Scope> =>
  Effect.gen(function* () {
    /** each running shard's inbox, by task, and the worker it runs on */
    const inboxes = new Map<number, { readonly inbox: Queue.Queue<FromWorker>; readonly member: Member }>()
    let tasks = 0
    const module = config.module()
    /*
     * A worker is terminated when the scope closes, from the moment it is made (a run stopped or
     * failed while workers start leaves none running); each shard waits for its worker's start
     * apart, interruptibly (run).
     */
    const start = (index: number) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const data: ShardWorkerData<unknown> = {
            config: config.config(index),
            lake: { root: lake.root, staging: lake.staging }
          }
          return listen(newWorker(module, data, config.execArgv))
        }),
        close
      )
    /** The worker's messages routed to the shards they are for; a worker that breaks fails the shards it runs, and is never sent another. */
    const listen = (worker: Worker): Member => {
      const member: Member = { worker, busy: 0, closing: false, ready: Deferred.unsafeMake(FiberId.none) }
      const broken = (message: string) => {
        if (member.broken !== undefined) return
        member.broken = message
        for (const { inbox, member: m } of inboxes.values()) if (m === member) Queue.unsafeOffer(inbox, { type: "broken", message })
        Deferred.unsafeDone(member.ready, Exit.fail(workerFailure(message)))
        void worker.terminate()
      }
      worker.on("message", (m: FromWorker) => {
        if (m.type === "ready") return Deferred.unsafeDone(member.ready, Exit.void)
        if (m.type === "broken") return broken(m.message)
        if ("task" in m) {
          const entry = inboxes.get(m.task)
          if (entry) Queue.unsafeOffer(entry.inbox, m)
        }
      })
      worker.on("error", (e) => broken(e.message.split("\n")[0]))
      worker.on("exit", (code) => {
        if (!member.closing) broken(`it exited (code ${code})`)
      })
      return member
    }
    // closed together when the scope closes (each takes its DuckDB's close, ~20 ms: one after
    // another, 9 workers held a 2 s run's end by 0.15 s)
    const members = yield* Effect.parallelFinalizers(
      Effect.forEach(
        Array.from({ length: config.count }, (_, i) => i),
        start
      )
    )
    const run = (
      list: AppendList,
      targets: ReadonlyArray<AppendDataset>,
      range: Range,
      context: ShardContext
    ): Effect.Effect<ShardEnd, WriteFailure> =>
      Effect.scoped(
        Effect.gen(function* () {
          const stop = yield* stopSignalOf
          const gates: Readonly<Record<string, Gate>> = { ...config.gates, slots: context.fetchSlots.withPermits(1) }
          /*
           * The shard's paging slot is taken here, before it goes to a worker: slots go in the
           * order the run starts its tasks (largest first; the semaphore serves its waiters first
           * come, first served), not in the order workers ask (the shards of the worker ready
           * first, small ones too, took them before the large ones of the others, which then paged
           * alone at the end); and the shard goes to the least busy worker when it can page.
           */
          // (a shard started once a stop is asked reads nothing, as in the run's thread: no slot, no worker)
          if (stop?.isAsked()) return "stopped" as const
          const slot = yield* heldSlot(context.fetchSlots)
          // the least busy worker of those that still run
          const working = members.filter((m) => m.broken === undefined)
          if (working.length === 0) return yield* Effect.fail(workerFailure(members[0]?.broken ?? "none runs"))
          const member = working.reduce((a, b) => (b.busy < a.busy ? b : a))
          member.busy++
          const send = (m: ToWorker) => member.worker.postMessage(m)
          // sent once its worker is ready, not when all are: workers started at once get ready over
          // a spread of ~0.1 s on 16 cores, which the shards of the first ready need not wait for
          const served = Effect.suspend(() => {
            // (broken after it was ready, before this shard resumed: its inbox was not there to be told)
            if (member.broken !== undefined) return Effect.fail(workerFailure(member.broken))
            const task = tasks++
            const inbox = Effect.runSync(Queue.unbounded<FromWorker>())
            inboxes.set(task, { inbox, member })
            send({ type: "run", task, source: list.id, targets: targets.map((d) => d.name), range, settings: context.settings })
            // a stop asked of the run is passed on: the worker's shard commits what it read and ends
            const stopPassed = stop
              ? Effect.forkScoped(
                  Effect.zipRight(
                    stop.asked,
                    Effect.sync(() => send({ type: "stop", task }))
                  )
                )
              : Effect.void
            return Effect.ensuring(
              Effect.zipRight(stopPassed, shardServer(task, inbox, send, list, context, gates, slot)),
              Effect.sync(() => inboxes.delete(task))
            )
          })
          // a stop asked while its worker gets ready: the shard reads nothing
          const ready = untilStopped(stop, Effect.as(Deferred.await(member.ready), true), Effect.succeed(false))
          return yield* Effect.flatMap(ready, (isReady) => (isReady ? served : Effect.succeed("stopped" as const))).pipe(
            Effect.ensuring(Effect.sync(() => member.busy--))
          )
        })
      )
    return { run }
  })

/**
 * A worker of `module` with the flags `execArgv` less those Node refuses a worker (flags only a
 * process takes, which its error names), or, where it names none of them, with the process's own
 * (ShardWorkersConfig.execArgv).
 */
const newWorker = (module: URL, workerData: unknown, execArgv: ReadonlyArray<string> | undefined) => {
  let flags = execArgv
  while (flags !== undefined)
    try {
      return new Worker(module, { workerData, execArgv: [...flags] })
    } catch (e) {
      const { code, message } = e as { code?: unknown; message: string }
      if (code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw e
      const refused = new Set(message.slice(message.indexOf(": ") + 2).split(", "))
      // (a refused flag's value given apart goes with it: left alone, Node would stop reading there)
      const value = (i: number) => i > 0 && refused.has(flags![i - 1]) && !flags![i - 1].includes("=") && !flags![i].startsWith("-")
      const left = flags.filter((f, i) => !refused.has(f) && !value(i))
      flags = left.length < flags.length ? left : undefined
    }
  return new Worker(module, { workerData })
}

/** Runs an effect with the run's shard workers (RunningShardWorkers), started (each shard waits for its own to be ready); or as it is, where it has none to start. */
export type WithShardWorkers = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | WriteFailure, R>

/** A run with no shard workers: each effect runs as it is. */
export const noShardWorkers: WithShardWorkers = (effect) => effect

/**
 * Starts the run's shard workers (ShardWorkers, count above 0) now, for the scope's time, so
 * that their start (their modules and layer: ~0.15–0.25 s each) overlaps what the run does before
 * its first shard (probes, plan); none where the run has none, or where workers are running for
 * it already (a follow's). A worker that breaks as it starts fails the shards it was given (and
 * the effect run with them); a run that never uses them closes them with its scope.
 */
export const startingShardWorkers = (lake: {
  readonly root: string
  readonly staging: string
}): Effect.Effect<WithShardWorkers, never, Scope.Scope> =>
  Effect.gen(function* () {
    const workers = yield* Effect.serviceOption(ShardWorkers)
    // workers already running for it (a follow's) are in its context as they are
    if (Option.isSome(yield* Effect.serviceOption(RunningShardWorkers))) return noShardWorkers
    if (Option.isNone(workers) || workers.value.count === 0) return noShardWorkers
    // (made at once: each shard waits for its own worker's start, run)
    const pool = yield* startShardWorkers(workers.value, lake)
    return (effect) => Effect.provideService(effect, RunningShardWorkers, pool)
  })

/** Runs `effect` with the run's shard workers started for its time (startingShardWorkers). */
export const withShardWorkers = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  lake: { readonly root: string; readonly staging: string }
): Effect.Effect<A, E | WriteFailure, R> => Effect.scoped(Effect.flatMap(startingShardWorkers(lake), (withWorkers) => withWorkers(effect)))

/**
 * One of `slots`, taken now and held until the returned Deferred is done (by the worker's leave of
 * the pass it is handed as, shardServer) or the scope closes: a fiber of the scope's holds it, so
 * that it goes back whatever ends the caller.
 */
const heldSlot = (slots: FetchSlots) =>
  Effect.gen(function* () {
    const taken = yield* Deferred.make<void>()
    const given = yield* Deferred.make<void>()
    yield* Effect.forkScoped(slots.withPermits(1)(Effect.zipRight(Deferred.succeed(taken, undefined), Deferred.await(given))))
    yield* Deferred.await(taken)
    return given
  })

const workerFailure = (message: string) => new RemoteFailure({ _tag: "ShardWorkerError", message: `a shard worker failed: ${message}` })

/**
 * The run's side of one shard in a worker: answers its calls (commits, gates) and passes on its
 * events until the worker says how the shard ended. Interrupted (another shard's failure, the run's),
 * it tells the worker to interrupt the shard (its writers closed), answers no more commits, and
 * waits for the shard to have ended.
 */
const shardServer = (
  task: number,
  inbox: Queue.Queue<FromWorker>,
  send: (m: ToWorker) => void,
  list: AppendList,
  context: ShardContext,
  gates: Readonly<Record<string, Gate>>,
  slot: Deferred.Deferred<void>
): Effect.Effect<ShardEnd, WriteFailure> => {
  /** the paging slot taken for the shard (heldSlot), the pass its first entry through "slots" gets at once */
  let firstSlot: Deferred.Deferred<void> | undefined = slot
  /** the gate passes held, each by a fiber of this shard's that waits for the worker's leave (or the shard's end) */
  const passes = new Map<number, Deferred.Deferred<void>>()
  /** the ticket of each pass granted, by the call that asked for it */
  const grantedTo = new Map<number, number>()
  /** calls the worker stopped waiting for before their pass was granted: given back at the grant */
  const abandoned = new Set<number>()
  /** the commits under way: the shard is over only once they are (each ends inside an uninterruptible step) */
  const commits = new Set<Fiber.RuntimeFiber<void>>()
  let tickets = 0
  let interrupting = false
  const reply = (call: number, exit: Exit.Exit<unknown, unknown>) =>
    send(
      Exit.isSuccess(exit)
        ? { type: "reply", call, ok: true, value: exit.value }
        : { type: "reply", call, ok: false, failure: failureFields(Cause.squash(exit.cause)) }
    )
  const answer = (call: number, request: Call): Effect.Effect<void> => {
    if (interrupting) return Effect.sync(() => reply(call, Exit.fail({ _tag: "ShardInterrupted", message: "the shard was interrupted" })))
    switch (request.method) {
      case "commit":
        // in a fiber of its own: the commit's history check may wait for a permit that this
        // shard's worker gives back meanwhile (a pass it kept: "leave" comes after the call)
        return Effect.flatMap(
          Effect.fork(
            Effect.flatMap(Effect.exit(context.lake.commit(request.dataset, request.files, request.range)), (exit) =>
              Effect.sync(() => reply(call, exit))
            )
          ),
          (fiber) => Effect.sync(() => commits.add(fiber))
        )
      case "enter":
        if (request.gate === "slots" && firstSlot)
          return Effect.sync(() => {
            const ticket = tickets++
            passes.set(ticket, firstSlot!)
            firstSlot = undefined
            grantedTo.set(call, ticket)
            reply(call, Exit.succeed(ticket))
          })
        return Effect.gen(function* () {
          const ticket = tickets++
          const leave = yield* Deferred.make<void>()
          passes.set(ticket, leave)
          const pass = Effect.suspend(() => {
            if (abandoned.delete(call)) return Effect.void
            grantedTo.set(call, ticket)
            return Effect.zipRight(
              Effect.sync(() => reply(call, Exit.succeed(ticket))),
              Deferred.await(leave)
            )
          })
          yield* Effect.fork(gates[request.gate](pass).pipe(Effect.ensuring(Effect.sync(() => passes.delete(ticket)))))
        })
    }
  }
  const leave = (ticket: number) => {
    const pass = passes.get(ticket)
    passes.delete(ticket)
    return pass ? Effect.asVoid(Deferred.succeed(pass, undefined)) : Effect.void
  }
  const serve: Effect.Effect<ShardEnd, WriteFailure> = Effect.gen(function* () {
    while (true) {
      const m = yield* Queue.take(inbox)
      switch (m.type) {
        case "call":
          yield* answer(m.call, m.request)
          break
        case "leave":
          yield* leave(m.ticket)
          break
        case "abandon": {
          // (a commit's call goes on: only a pass is given back)
          const ticket = grantedTo.get(m.call)
          if (ticket !== undefined) yield* leave(ticket)
          else abandoned.add(m.call)
          break
        }
        case "rows":
          context.events.rows(m.dataset, m.count)
          break
        case "fetched":
          context.events.fetched(m.dataset, m.count)
          break
        case "quarantined":
          context.events.quarantined(list)
          break
        case "notice":
          context.events.notice(m.message)
          break
        case "broken":
          return yield* Effect.fail(workerFailure(m.message))
        case "exit":
          if (m.outcome === "done" || m.outcome === "stopped") return m.outcome
          if (m.outcome === "failed") return yield* Effect.fail(new RemoteFailure(m.failure))
          if (m.outcome === "interrupted") return yield* Effect.interrupt
          return yield* Effect.die(new Error(`a shard died in its worker: ${m.message}`))
        case "ready":
          break
      }
    }
  })
  const interrupt = Effect.suspend(() => {
    interrupting = true
    send({ type: "interrupt", task })
    return Effect.exit(serve)
  })
  // a commit still under way when the shard ends (failed, or stopped) ends before it: the run's
  // staging folder goes with the run; the worker's passes are given back first (a commit's check may wait for one)
  const commitsEnded = Effect.suspend(() =>
    Effect.zipRight(
      Effect.forEach(passes.values(), (pass) => Deferred.succeed(pass, undefined), { discard: true }),
      Fiber.awaitAll([...commits])
    )
  )
  return Effect.ensuring(
    Effect.onInterrupt(serve, () => Effect.uninterruptible(interrupt)),
    commitsEnded
  )
}
