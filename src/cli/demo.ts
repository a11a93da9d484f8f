/**
 * `chain-lake demo` (what `npm start` runs): starts the embedded devnet in-process and reads it
 * back through the typed IndexerClient, so a fresh clone shows real data in seconds.
 */
import { Command } from "@effect/cli"
import { Console, Effect } from "effect"
import { startDevnet } from "../devnet/index.js"
import { describeIndexerError } from "../indexer/errors.js"
import { IndexerClient } from "../indexer/IndexerClient.js"
import { blocksOption, seedOption } from "./devnet.js"
import { UserError } from "./errors.js"
import { indexerLayer } from "./layers.js"
import { table } from "./progress.js"

const tour = Effect.gen(function* () {
  const indexer = yield* IndexerClient
  const status = yield* indexer.status
  yield* Console.log(`chain ${status.chain_id}: height ${status.height}, internal txs to ${status.internal_tx_height ?? "-"}, rich list at ${status.rich_list_height ?? "-"}\n`)
  const blocks = yield* indexer.blocks({ limit: 5, reverse: true })
  yield* Console.log("Latest blocks (GET /indexer/block/v1/blocks):")
  yield* Console.log(
    table(blocks.blocks.map((b) => ({ height: b.height, time: b.timestamp, txs: b.tx_count, gas_used: b.gas_used, fee: b.total_fee.map((f) => `${f.amount}${f.denom.slice(0, 12)}`).join(" ") || "-" })))
  )
  const txs = yield* indexer.txs({ limit: 5, reverse: true })
  yield* Console.log(`\n${txs.pagination.total} txs in all; the latest (GET /indexer/tx/v1/txs):`)
  yield* Console.log(
    table(
      txs.txs.map((t) => ({
        txhash: t.txhash.slice(0, 16) + "…",
        height: t.height,
        code: String(t.code),
        message: String((t.tx.body.messages as Array<Record<string, unknown>>)[0]?.["@type"] ?? "")
      }))
    )
  )
  const holders = yield* indexer.richList("uinit", { limit: 5 })
  yield* Console.log(`\nTop uinit holders (GET /indexer/richlist/v1/uinit, ${holders.pagination.total} holders):`)
  yield* Console.log(table(holders.holders.map((h) => ({ account: h.account, amount: h.amount }))))
  const collections = yield* indexer.collections({ limit: 10, reverse: false })
  yield* Console.log(`\nNFT collections (GET /indexer/nft/v1/collections):`)
  yield* Console.log(table(collections.collections.map((c) => ({ name: c.collection.name, address: c.object_addr, created: String(c.height), tokens: String(c.collection.nfts.length) }))))
})

export const demoCommand = Command.make("demo", { seed: seedOption, blocks: blocksOption }, (o) =>
  Effect.gen(function* () {
    const devnet = yield* Effect.acquireRelease(
      Effect.promise(() => startDevnet({ seed: o.seed, blocks: o.blocks })),
      (d) => Effect.promise(() => d.stop())
    )
    yield* Console.log(`Embedded devnet: indexer ${devnet.indexerUrl}, router ${devnet.routerUrl} (seed ${o.seed}, ${o.blocks} blocks)\n`)
    yield* tour.pipe(
      Effect.provide(indexerLayer(devnet.indexerUrl)),
      Effect.mapError((e) => new UserError({ message: describeIndexerError(e) }))
    )
    yield* Console.log(`\nNext: \`npx chain-lake devnet --blocks 5000\` serves this devnet for your own tools.`)
  }).pipe(Effect.scoped)
).pipe(Command.withDescription("Start the embedded devnet in-process and show what it serves (what `npm start` runs)"))
