/**
 * The worker's side of shard workers (workers.ts is the run's): runs the shards it is sent, each
 * with its own source and Parquet sink (the layer the worker's module builds), and makes each
 * commit and each pass through the run's gates by a call to the run's thread.
 */
import { parentPort, workerData } from "node:worker_threads"
import { Cause, Effect, Exit, Fiber, FiberRef, type Layer, ManagedRuntime } from "effect"
import type { ParquetSink } from "../lake/ParquetSink.js"
import type { PageBudget } from "./pageBudget.js"
import type { AppendDataset, AppendList, Dataset } from "./Dataset.js"
import { runShard, type FetchSlots, type ShardEnd, type ShardEvents } from "./shard.js"
import { ShardLake, type ShardLakeService } from "./ShardLake.js"
import { Source } from "./Source.js"
import { makeStopSignal, StopSignal } from "../stop/StopSignal.js"
import { type Call, failureFields, type FromWorker, RemoteFailure, type ToWorker } from "./workerProtocol.js"

/** What the run's thread hands each worker (workerData): its module's own config, and the run's lake. */
export interface ShardWorkerData<C> {
  readonly config: C
  readonly lake: { readonly root: string; readonly staging: string }
}

/** A gate of the run's thread, passed through by calls: the worker's module builds its request limiter on "requests". */
export type RemoteGate = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * How a worker passes a gate of the run's thread: "each" asks the run's thread for every pass;
 * "kept" keeps a pass once its effect is done, for the shard's next pass through the same gate
 * (its next page asked once its page has come: no call to the run's thread, which answers a
 * busy worker late), right only for a gate that is a count of permits (a request limiter without
 * a rate, which a kept pass would skip). A kept pass goes back once it has been idle KEPT_IDLE_MS,
 * when it is done after KEPT_MS since it was granted (others waiting at the gate get their turn),
 * or at once while another of the shard's fibers waits at the gate (keptGate).
 */
export type GateKind = "each" | "kept"

/** the longest a pass is kept unused for the shard's next pass */
const KEPT_IDLE_MS = 10
/** the longest a pass is reused from its grant: then it goes back to the gate's queue */
const KEPT_MS = 250

/** The task the running fiber belongs to: calls it makes are the task's (the run's thread frees what a task left). */
const currentTask = FiberRef.unsafeMake(-1)

/*
 * Messages to the run's thread. Counts (rows, records read) are summed and sent once per turn of
 * the event loop, not once per record (a message each cost the run's thread more than the rows it
 * was spared); any other message sends them first, so that they arrive before the commit or the
 * end they precede.
 */
const messenger = (port: NonNullable<typeof parentPort>) => {
  const counts = new Map<string, { type: "rows" | "fetched"; task: number; dataset: string; count: number }>()
  let flushing = false
  const flush = () => {
    flushing = false
    for (const c of counts.values()) port.postMessage(c)
    counts.clear()
  }
  const send = (message: FromWorker) => {
    flush()
    port.postMessage(message)
  }
  const count = (type: "rows" | "fetched", task: number, dataset: string, n: number) => {
    const key = `${type} ${task} ${dataset}`
    const c = counts.get(key)
    if (c) c.count += n
    else counts.set(key, { type, task, dataset, count: n })
    if (!flushing) {
      flushing = true
      setImmediate(flush)
    }
  }
  return { send, count }
}

/** A pass through a gate kept by a worker's task (GateKind "kept"): its ticket, when it was granted, and the timer that gives it back unused. */
interface KeptPass {
  readonly ticket: number
  readonly granted: number
  idle?: ReturnType<typeof setTimeout>
}

/**
 * A gate whose passes a task keeps (GateKind "kept"): a pass taken from the task's own when one is
 * free, else asked of the run's thread by `enter`; given back by `leave` once idle or old, or at
 * once while another of the task's fibers waits for one at the run's thread (a page's block times
 * asked while the next page is on its way): kept, it would wait idle while they wait there.
 */
const keptGate = (enter: (name: string) => Effect.Effect<number>, leave: (task: number, ticket: number) => void) => {
  /** each task's free passes, by gate; a task's passes end with it on the run's thread (it lets them go when the shard ends) */
  const free = new Map<string, Array<KeptPass>>()
  /** a free pass of the task's, taken at once (no wait: nothing can interrupt it between the list and its use) */
  const takeFree = (key: string): KeptPass | undefined => {
    const passes = free.get(key)
    const pass = passes?.pop()
    if (passes?.length === 0) free.delete(key)
    if (pass) clearTimeout(pass.idle)
    return pass
  }
  /** the task's fibers waiting at the run's thread for a pass, by gate */
  const waiting = new Map<string, number>()
  const wait = (key: string, by: number) => {
    const n = (waiting.get(key) ?? 0) + by
    if (n === 0) waiting.delete(key)
    else waiting.set(key, n)
  }
  const enterKept = (key: string, name: string) =>
    Effect.acquireUseRelease(
      Effect.sync(() => wait(key, 1)),
      () => Effect.map(enter(name), (ticket): KeptPass => ({ ticket, granted: Date.now() })),
      () => Effect.sync(() => wait(key, -1))
    )
  /** a pass done with: kept for the task's next pass, unless it is old or another of the task's fibers waits at the run's thread (it goes back there at once) */
  const giveBack = (key: string, task: number, pass: KeptPass) =>
    Effect.sync(() => {
      if (Date.now() - pass.granted >= KEPT_MS || waiting.has(key)) return leave(task, pass.ticket)
      const passes = free.get(key) ?? []
      free.set(key, passes)
      passes.push(pass)
      pass.idle = setTimeout(() => {
        passes.splice(passes.indexOf(pass), 1)
        if (passes.length === 0) free.delete(key)
        leave(task, pass.ticket)
      }, KEPT_IDLE_MS)
    })
  return (name: string): RemoteGate =>
    (effect) =>
      Effect.flatMap(FiberRef.get(currentTask), (task) => {
        const key = `${task} ${name}`
        return Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(
            Effect.suspend(() => {
              const pass = takeFree(key)
              return pass ? Effect.succeed(pass) : restore(enterKept(key, name))
            }),
            (pass) => restore(effect).pipe(Effect.ensuring(giveBack(key, task, pass)))
          )
        )
      })
}

/** Calls to the run's thread (a commit, a pass through a gate), each answered by a "reply" message. */
const remoteCalls = (send: (message: FromWorker) => void) => {
  const replies = new Map<number, (exit: Exit.Exit<unknown, RemoteFailure>) => void>()
  let calls = 0
  const call = (request: Call): Effect.Effect<unknown, RemoteFailure> =>
    Effect.flatMap(FiberRef.get(currentTask), (task) =>
      Effect.async<unknown, RemoteFailure>((resume) => {
        const id = calls++
        replies.set(id, (exit) => resume(exit))
        send({ type: "call", task, call: id, request })
        // an answer that comes after the wait was interrupted is not waited for, and a pass it
        // would grant is not held for the shard (the run's thread gives it back)
        return Effect.sync(() => {
          replies.delete(id)
          send({ type: "abandon", task, call: id })
        })
      })
    )
  const sendLeave = (task: number, ticket: number) => send({ type: "leave", task, ticket })
  const leave = (ticket: number) => Effect.flatMap(FiberRef.get(currentTask), (task) => Effect.sync(() => sendLeave(task, ticket)))
  /*
   * The wait for the gate stays interruptible (the run's thread may hold its slots for shards that
   * are being stopped too): a pass granted after the wait was interrupted is let go by the run's
   * thread when the shard ends.
   */
  const enter = (name: string) => Effect.map(Effect.orDie(call({ method: "enter", gate: name })), (ticket) => ticket as number)
  const each =
    (name: string): RemoteGate =>
    (effect) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(enter(name)), (ticket) => restore(effect).pipe(Effect.ensuring(leave(ticket))))
      )
  const kept = keptGate(enter, sendLeave)
  const gate = (name: string, kind: GateKind = "each"): RemoteGate => (kind === "kept" ? kept(name) : each(name))
  const reply = (message: Extract<ToWorker, { type: "reply" }>) => {
    const resume = replies.get(message.call)
    replies.delete(message.call)
    resume?.(message.ok ? Exit.succeed(message.value) : Exit.fail(new RemoteFailure(message.failure)))
  }
  return { call, gate, reply }
}

/**
 * Serves the shards the run's thread sends: call it from a worker module, with the datasets the
 * run may name and the layer (source and sink) built from the module's config.
 */
export const serveShards = <C, E>(options: {
  readonly datasets: ReadonlyArray<Dataset>
  readonly layer: (config: C, gate: (name: string, kind?: GateKind) => RemoteGate) => Layer.Layer<Source | ParquetSink | PageBudget, E>
}) => {
  const port = parentPort
  if (!port) throw new Error("serveShards runs in a worker thread")
  const data = workerData as ShardWorkerData<C>
  const { send, count } = messenger(port)
  const { call, gate, reply } = remoteCalls(send)
  const runtime = ManagedRuntime.make(options.layer(data.config, gate))
  const appendDatasets = options.datasets.filter((d): d is AppendDataset => d.kind === "append")
  const slots: FetchSlots = { withPermits: () => gate("slots") }
  const running = new Map<number, { readonly fiber: Fiber.RuntimeFiber<ShardEnd, unknown>; readonly stop: () => boolean }>()
  /** the run whose shards this worker serves: a worker kept for several (a follow's rounds) forgets its source's blocks between them */
  let served: string | undefined

  const run = (message: Extract<ToWorker, { type: "run" }>) => {
    const { task } = message
    if (served !== message.settings.run) {
      served = message.settings.run
      runtime.runSync(Effect.flatMap(Source, (source) => source.forget))
    }
    const targets = message.targets.map((n) => appendDatasets.find((d) => d.name === n)!)
    const list: AppendList = targets[0].list
    const events: ShardEvents = {
      rows: (dataset, n) => count("rows", task, dataset, n),
      fetched: (dataset, n) => count("fetched", task, dataset, n),
      quarantined: () => send({ type: "quarantined", task }),
      notice: (text) => send({ type: "notice", task, message: text })
    }
    const lake: ShardLakeService = {
      ...data.lake,
      commit: (dataset, files, range) => Effect.map(call({ method: "commit", dataset, files, range }), (outcome) => outcome as never)
    }
    const { signal, ask } = makeStopSignal()
    const shard = runShard(list, targets, message.range, message.settings, events, slots).pipe(
      Effect.provideService(ShardLake, lake),
      Effect.provideService(StopSignal, signal),
      Effect.locally(currentTask, task)
    )
    const fiber = runtime.runFork(shard)
    running.set(task, { fiber, stop: ask })
    fiber.addObserver((exit) => {
      running.delete(task)
      send({ type: "exit", task, ...outcomeOf(exit) })
    })
  }

  port.on("message", (message: ToWorker) => {
    switch (message.type) {
      case "run":
        return run(message)
      case "interrupt": {
        const shard = running.get(message.task)
        if (shard) runtime.runFork(Fiber.interrupt(shard.fiber))
        return
      }
      case "stop":
        return void running.get(message.task)?.stop()
      case "close":
        // (a shard still running is interrupted by the disposal)
        return void runtime.dispose().finally(() => process.exit(0))
      case "reply":
        return reply(message)
    }
  })
  // ready once the layer is built (DuckDB opened, the source's client made), or broken, saying why
  runtime.runtime().then(
    () => send({ type: "ready" }),
    (e: unknown) => {
      // (the run's thread terminates a broken worker)
      send({ type: "broken", message: (e instanceof Error ? e.message : String(e)).split("\n")[0] })
    }
  )
}

/** How a shard's fiber ended, to send. */
const outcomeOf = (exit: Exit.Exit<ShardEnd, unknown>) => {
  if (Exit.isSuccess(exit)) return { outcome: exit.value } as const
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") return { outcome: "failed", failure: failureFields(failure.value) } as const
  if (Cause.isInterruptedOnly(exit.cause)) return { outcome: "interrupted" } as const
  return { outcome: "defect", message: Cause.pretty(exit.cause) } as const
}
