/**
 * `chain-lake demo` (what `npm start` runs): starts the embedded devnet in-process and reads it
 * back through the typed IndexerClient, so a fresh clone shows real data in seconds.
 */
import { Command, Options } from "@effect/cli"
import { join, resolve } from "node:path"
import { Console, Effect } from "effect"
import { ALL_DATASETS } from "../datasets/index.js"
import { runExport } from "../engine/export.js"
import { ParquetSink } from "../engine/ParquetSink.js"
import { layerAnalytics } from "../analytics/Analytics.js"
import { writeCatalog } from "../analytics/catalog.js"
import { writeReport } from "../analytics/report.js"
import { startDevnet } from "../devnet/index.js"
import { describeIndexerError } from "../indexer/errors.js"
import { IndexerClient } from "../indexer/IndexerClient.js"
import { blocksOption, seedOption } from "./devnet.js"
import { UserError } from "./errors.js"
import { describeExportFailure } from "./export.js"
import { exportLayer, indexerLayer } from "./layers.js"
import { makeProgress, summaryTable, table } from "./progress.js"

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
  yield* Console.log(table(holders.holders.map((h) => ({ account: h.account, amount: h.amount ?? "-" }))))
  const collections = yield* indexer.collections({ limit: 10, reverse: false })
  yield* Console.log(`\nNFT collections (GET /indexer/nft/v1/collections):`)
  yield* Console.log(table(collections.collections.map((c) => ({ name: c.collection.name, address: c.object_addr, created: String(c.height), tokens: String(c.collection.nfts.length) }))))
})

/** A few answers straight from the exported Parquet, to show the lake is queryable. */
const answers = (out: string) =>
  Effect.gen(function* () {
    const sink = yield* ParquetSink
    const scan = (d: string) => `read_parquet('${out.replace(/'/g, "''")}/${d}/**/*.parquet', hive_partitioning = true)`
    const busiest = yield* sink.query(
      `SELECT height::VARCHAR AS height, tx_count::VARCHAR AS txs, gas_used::VARCHAR AS gas_used FROM ${scan("blocks")} ORDER BY tx_count DESC, height LIMIT 3`
    )
    yield* Console.log("\nBusiest blocks (SQL over blocks/**/*.parquet):")
    yield* Console.log(table(busiest.map((r) => ({ height: String(r.height), txs: String(r.txs), gas_used: String(r.gas_used) }))))
    const mix = yield* sink.query(
      `SELECT m AS message_type, count(*)::VARCHAR AS messages, round(100.0 * avg(CASE WHEN code = 0 THEN 1 ELSE 0 END), 1)::VARCHAR AS ok_pct FROM (SELECT unnest(message_types) AS m, code FROM ${scan("txs")}) GROUP BY m ORDER BY count(*) DESC`
    )
    yield* Console.log("\nMessage mix (SQL over txs/**/*.parquet):")
    yield* Console.log(table(mix.map((r) => ({ message_type: String(r.message_type), messages: String(r.messages), "success %": String(r.ok_pct) }))))
  })

export const demoCommand = Command.make("demo", { seed: seedOption, blocks: blocksOption, out: Options.directory("out").pipe(Options.withDefault("data"), Options.withDescription("where the demo export goes")) }, (o) =>
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
    const out = resolve(o.out)
    yield* Console.log(`\nExporting every dataset to ${out} (rerun: only what is new is fetched) …`)
    const progress = makeProgress({ tty: false, log: () => {} })
    const started = Date.now()
    const exported = yield* Effect.gen(function* () {
      const r = yield* runExport(ALL_DATASETS, { observer: progress.observer })
      yield* answers(out)
      return r
    }).pipe(
      Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out })),
      Effect.mapError((e) => new UserError({ message: describeExportFailure(e) }))
    )
    yield* Console.log("\nExport summary:")
    yield* Console.log(summaryTable(exported.datasets, (Date.now() - started) / 1000))
    const catalog = yield* writeCatalog({ dataDir: out }).pipe(Effect.mapError((e) => new UserError({ message: e.message })))
    const report = yield* writeReport(join(out, "report.html")).pipe(
      Effect.provide(layerAnalytics({ dataDir: out })),
      Effect.mapError((e) => new UserError({ message: e.message }))
    )
    yield* Console.log(`\nParquet files: ${out}/<dataset>/<partition>=<value>/*.parquet`)
    yield* Console.log(`Charts:       ${report.path} (open it in a browser)`)
    yield* Console.log(`DuckDB:       ${catalog.dbFile} (cd ${out} && duckdb chain-lake.duckdb), or \`npx chain-lake query "FROM msg_type_mix"\``)
    yield* Console.log(`Next: \`npx chain-lake export --indexer-url URL\` for a real indexer; \`npx chain-lake devnet\` serves this devnet for your own tools.`)
  }).pipe(Effect.scoped)
).pipe(Command.withDescription("Start the embedded devnet in-process and show what it serves (what `npm start` runs)"))
