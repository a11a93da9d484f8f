/** `chain-lake devnet`: serve the embedded devnet until killed. */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import { FaultSpecError } from "../devnet/faults.js"
import type { Vm } from "../devnet/index.js"
import { UserError } from "./errors.js"
import { integerOption } from "./integers.js"

export const seedOption = integerOption("seed").pipe(
  Options.withDefault(1),
  Options.withDescription("chain seed: the same seed serves the same bytes")
)
export const blocksOption = integerOption("blocks").pipe(
  Options.withDefault(1000),
  Options.withDescription("the chain starts with heights 1..N")
)

const options = {
  seed: seedOption,
  blocks: blocksOption,
  port: integerOption("port").pipe(
    Options.withDefault(0),
    Options.withDescription("indexer port (the router takes the next one); 0 picks free ports")
  ),
  blockTime: integerOption("block-time").pipe(
    Options.withDefault(0),
    Options.withDescription("milliseconds per new block while serving; 0 keeps the chain static")
  ),
  faults: Options.text("faults").pipe(
    Options.withDefault("none"),
    Options.withDescription(
      "none | light | heavy, or rates like 429=0.05,503=0.05,reset=0.02 (also truncate=, malformed= and the flag count-timeout)"
    )
  ),
  latencyMs: integerOption("latency-ms").pipe(
    Options.withDefault(0),
    Options.withDescription("milliseconds from each request to its response (the server's own work counts within it)")
  ),
  offsetRowUs: integerOption("offset-row-us").pipe(
    Options.withDefault(0),
    Options.withDescription(
      "microseconds each row skipped through pagination.offset adds to its answer, as the real indexer's SQL OFFSET scans them; 0 keeps offsets free"
    )
  ),
  vm: Options.choice("vm", ["evm", "move", "wasm"]).pipe(
    Options.withDefault("evm" as const),
    Options.withDescription("the rollup's VM: EVM routes exist on evm only; the rich list is served on every VM (bech32 accounts off evm)")
  ),
  txsPerBlock: integerOption("txs-per-block").pipe(
    Options.withDefault(4),
    Options.withDescription("mean txs per block (20% of blocks are empty)")
  ),
  feeDenom: Options.text("fee-denom").pipe(
    Options.optional,
    Options.withDescription(
      "the denom most fees are paid in, in place of uinit (an EVM rollup's own gas token; the rich list of uinit then answers 400)"
    )
  ),
  forkHeight: integerOption("fork-height").pipe(
    Options.optional,
    Options.withDescription(
      "another history above this height (as an indexer rolled back and re-synced, or a reorg): blocks up to it are the same as without the flag, those above are drawn from --fork-seed"
    )
  ),
  forkSeed: integerOption("fork-seed").pipe(
    Options.optional,
    Options.withDescription("with --fork-height: the seed of the history above it (default: --seed + 1)")
  ),
  txPayloadBytes: integerOption("tx-payload-bytes").pipe(
    Options.withDefault(0),
    Options.withDescription(
      "large records: each cosmos tx's memo carries a payload of this many bytes (deterministic text; an Ethereum tx's call data, as hex), so a txs page weighs page size × this; 0: none"
    )
  ),
  noRouterMetadata: Options.boolean("no-router-metadata").pipe(
    Options.withDescription(
      "a router with only the documented route, msgs, track and status: /v2/fungible/assets and /v2/info/chains answer 404"
    )
  ),
  noResponseCache: Options.boolean("no-response-cache").pipe(
    Options.withDescription(
      "the indexer answers every request afresh; by default it keeps its answers as the real one does (by URL: 1 s for /status and lists, 10 s for one object; Cache-Control: no-cache asks afresh)"
    )
  )
}

/** The most blocks a devnet is made with (5 million start in about a minute). */
const MAX_DEVNET_BLOCKS = 5_000_000

export const devnetCommand = Command.make("devnet", options, (o) =>
  Effect.gen(function* () {
    // usage errors: exit 2, as every other command's
    // (its chain is held in memory: 20 million blocks passed what a JavaScript Map holds)
    if (o.blocks < 1 || o.blocks > MAX_DEVNET_BLOCKS)
      return yield* new UserError({ message: `--blocks must be 1..${MAX_DEVNET_BLOCKS}, got ${o.blocks}`, exitCode: 2 })
    if (o.port < 0 || o.port > 65534)
      return yield* new UserError({ message: `--port must be between 0 and 65534, got ${o.port}`, exitCode: 2 })
    if (o.blockTime < 0 || o.latencyMs < 0 || o.offsetRowUs < 0 || o.txPayloadBytes < 0)
      return yield* new UserError({
        message: "--block-time, --latency-ms, --offset-row-us and --tx-payload-bytes cannot be negative",
        exitCode: 2
      })
    if (Option.isSome(o.forkSeed) && Option.isNone(o.forkHeight))
      return yield* new UserError({ message: "--fork-seed needs --fork-height", exitCode: 2 })
    if (Option.isSome(o.forkHeight) && o.forkHeight.value < 0)
      return yield* new UserError({ message: `--fork-height must be 0 or more, got ${o.forkHeight.value}`, exitCode: 2 })
    const fork = Option.map(o.forkHeight, (height) => ({ height, seed: Option.getOrElse(o.forkSeed, () => o.seed + 1) }))
    const devnet = yield* Effect.acquireRelease(
      Effect.tryPromise({
        // the devnet loads when it is asked for: other commands never pay for it
        try: async () =>
          (await import("../devnet/index.js")).startDevnet({
            seed: o.seed,
            blocks: o.blocks,
            port: o.port,
            routerPort: o.port === 0 ? 0 : o.port + 1,
            blockTimeMs: o.blockTime,
            faults: o.faults,
            latencyMs: o.latencyMs,
            offsetRowUs: o.offsetRowUs,
            vm: o.vm as Vm,
            txsPerBlock: o.txsPerBlock,
            txPayloadBytes: o.txPayloadBytes,
            routerMetadata: !o.noRouterMetadata,
            responseCache: !o.noResponseCache,
            ...(Option.isSome(o.feeDenom) ? { feeDenom: o.feeDenom.value } : {}),
            ...(Option.isSome(fork) ? { fork: fork.value } : {})
          }),
        catch: (e) =>
          new UserError({
            ...(e instanceof FaultSpecError ? { exitCode: 2 } : {}),
            message:
              e instanceof FaultSpecError
                ? `--faults: ${e.message}`
                : (e as NodeJS.ErrnoException).code === "EADDRINUSE"
                  ? `port ${o.port} or ${o.port + 1} is already in use: pick another --port, or 0 for free ports`
                  : `could not start the devnet: ${(e as Error).message}`
          })
      }),
      (d) => Effect.promise(() => d.stop())
    )
    yield* Console.log(`indexer_url=${devnet.indexerUrl}`)
    yield* Console.log(`router_url=${devnet.routerUrl}`)
    yield* Console.error(
      `devnet: seed ${o.seed}, ${devnet.chain.tip} blocks, ${devnet.chain.txTotal()} txs, vm ${o.vm}, faults ${o.faults}${o.txPayloadBytes > 0 ? `, a payload of ${o.txPayloadBytes} bytes in each tx` : ""}${Option.isSome(fork) ? `, another history above height ${fork.value.height} (seed ${fork.value.seed})` : ""}${o.noRouterMetadata ? ", router without metadata endpoints" : ""}${o.blockTime > 0 ? `, a block every ${o.blockTime} ms` : ""}; Ctrl-C stops it`
    )
    return yield* Effect.never
  }).pipe(Effect.scoped)
).pipe(Command.withDescription("Serve the embedded devnet (indexer and router APIs) on 127.0.0.1 until killed"))
