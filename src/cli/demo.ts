/**
 * `chain-lake demo` (what `npm start` runs): the whole tool on the embedded devnet in seconds — a
 * tour through the typed client, every dataset exported, a round of route quotes, a transfer
 * bridged and tracked, three questions answered in SQL, the DuckDB catalog and the HTML report.
 */
import { Command, Options } from "@effect/cli"
import { join, resolve } from "node:path"
import { Console, Duration, Effect, Exit, Layer } from "effect"
import { DATASETS } from "../datasets/index.js"
import { runExport } from "../engine/export.js"
import { layerLake } from "../lake/writer.js"
import { Analytics, layerAnalytics } from "../analytics/Analytics.js"
import { describeRouterError, type RouterError } from "../router/errors.js"
import { RouterClient } from "../router/RouterClient.js"
import { loadPlan, sampleRound } from "../sampling/sampler.js"
import { trackTransfer } from "../sampling/tracker.js"
import { DEFAULT_PLAN } from "./sample.js"
import { writeCatalog } from "../analytics/catalog.js"
import { writeReport } from "../analytics/report.js"
import { describeIndexerError } from "../indexer/errors.js"
import { IndexerClient } from "../indexer/IndexerClient.js"
import { blocksOption, seedOption } from "./devnet.js"
import { UserError } from "./errors.js"
import { shellWord } from "./shellWord.js"
import { describeExportFailure } from "./export.js"
import { exportLayer, indexerLayer, routerLayer } from "./layers.js"
import { makeProgress, stderrIsTerminal, stderrProgress, summaryTable, table } from "./progress.js"
import { checkOutputFolder } from "./outputFolder.js"

const tour = Effect.gen(function* () {
  const indexer = yield* IndexerClient
  const status = yield* indexer.status
  yield* Console.log(
    `chain ${status.chain_id}: height ${status.height}, internal txs to ${status.internal_tx_height ?? "-"}, rich list at ${status.rich_list_height ?? "-"}\n`
  )
  const blocks = yield* indexer.blocks({ limit: 5, reverse: true })
  yield* Console.log("Latest blocks (GET /indexer/block/v1/blocks):")
  yield* Console.log(
    table(
      blocks.blocks.map((b) => ({
        height: b.height,
        time: b.timestamp,
        txs: b.tx_count,
        gas_used: b.gas_used,
        fee: b.total_fee.map((f) => `${f.amount}${f.denom.slice(0, 12)}`).join(" ") || "-"
      }))
    )
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
  yield* Console.log(
    table(
      collections.collections.map((c) => ({
        name: c.collection.name,
        address: c.object_addr,
        created: String(c.height),
        tokens: String(c.collection.nfts.length)
      }))
    )
  )
})

/** Three questions answered by the analytics views over the exported Parquet. */
const answers = Effect.gen(function* () {
  const a = yield* Analytics
  const rows = (sql: string) =>
    a
      .query(sql)
      .pipe(
        Effect.map((r) =>
          r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c.name, row[i] === null ? "-" : String(row[i])])))
        )
      )
  yield* Console.log("\n1. Which messages do people send, and how often do they fail? (msg_type_mix)")
  yield* Console.log(table(yield* rows('SELECT message_type, messages, round(100 * failure_rate, 1) AS "failed %" FROM msg_type_mix')))
  yield* Console.log("\n2. How concentrated are token holdings? (holder_concentration)")
  yield* Console.log(
    table(
      yield* rows(
        "SELECT left(denom, 24) AS denom, holders, round(top10_share, 3) AS top10_share, round(gini, 3) AS gini FROM holder_concentration"
      )
    )
  )
  yield* Console.log("\n3. How does a swap's price impact grow with the amount? (route_quote_stats, INIT → USDC on the L1)")
  yield* Console.log(
    table(
      yield* rows(
        "SELECT amount_in, availability, round(median_price_impact_percent, 2) AS \"impact %\", round(median_effective_rate, 4) AS rate FROM route_quote_stats WHERE variant = 'default' AND pair LIKE 'interwoven-1/uinit → interwoven-1/ibc/%' ORDER BY CAST(amount_in AS DOUBLE)"
      )
    )
  )
})

/** Addresses of the right shape on each devnet router chain, for the demo transfer. */
const DEMO_ADDRESSES: Record<string, string> = {
  "noble-1": "noble1qyqszqgpqyqszqgpqyqszqgpqyqszqgp2q8dz8",
  "interwoven-1": "init1qyqszqgpqyqszqgpqyqszqgpqyqszqgp2q8dz8",
  "lake-evm-1": "init1qyqszqgpqyqszqgpqyqszqgpqyqszqgp2q8dz8"
}

/** A round of route quotes, then one transfer bridged, broadcast (devnet only) and tracked to completion. */
const routerLeg = Effect.gen(function* () {
  const plan = yield* loadPlan(DEFAULT_PLAN)
  const round = yield* sampleRound(plan)
  const router = yield* RouterClient
  const route = yield* router.route({
    amount_in: "2500000",
    source_asset_chain_id: "noble-1",
    source_asset_denom: "uusdc",
    dest_asset_chain_id: "lake-evm-1",
    dest_asset_denom: "ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2"
  })
  const msgs = yield* router.msgs(route, { addresses: DEMO_ADDRESSES, slippageTolerancePercent: "1" })
  const sent = yield* router.devnetBroadcast(route.source_asset_chain_id, msgs.txs[0], "success")
  const fast = { slow: Duration.millis(200), near: Duration.millis(100), overdue: Duration.millis(50), nearWindow: Duration.seconds(1) }
  const tracked = yield* trackTransfer({
    txHash: sent.tx_hash,
    chainId: sent.chain_id,
    estimatedSeconds: route.estimated_route_duration_seconds ?? undefined,
    schedule: fast,
    onChange: (s, elapsed) => console.log(`   [${elapsed.toFixed(1)} s] ${s.state}`)
  })
  return { round, route, tracked }
})

export const demoCommand = Command.make(
  "demo",
  {
    seed: seedOption,
    blocks: blocksOption,
    out: Options.directory("out").pipe(Options.withDefault("data"), Options.withDescription("where the demo export goes"))
  },
  (o) =>
    Effect.gen(function* () {
      // Ctrl-C: say so, and that a rerun picks up where this one stopped (it exited 130 in silence)
      yield* Effect.addFinalizer((exit) =>
        Exit.isInterrupted(exit)
          ? Console.error(
              `\nstopped: what was committed in ${resolve(o.out)} stays; npm start (or chain-lake demo) again fetches only the rest`
            )
          : Effect.void
      )
      yield* checkOutputFolder("--out", o.out)
      const devnet = yield* Effect.acquireRelease(
        Effect.promise(async () => (await import("../devnet/index.js")).startDevnet({ seed: o.seed, blocks: o.blocks })),
        (d) => Effect.promise(() => d.stop())
      )
      yield* Console.log(`Embedded devnet: indexer ${devnet.indexerUrl}, router ${devnet.routerUrl} (seed ${o.seed}, ${o.blocks} blocks)\n`)
      yield* tour.pipe(
        Effect.provide(indexerLayer(devnet.indexerUrl)),
        Effect.mapError((e) => new UserError({ message: describeIndexerError(e) }))
      )
      const out = resolve(o.out)
      yield* Console.log(`\nExporting every dataset to ${out} (rerun: only what is new is fetched) …`)
      // bars on a terminal's stderr; elsewhere nothing, so that stdout reads as the README shows it
      const progress = stderrIsTerminal() ? stderrProgress({ tty: true }) : makeProgress({ tty: false, log: () => {} })
      const started = Date.now()
      const exported = yield* runExport(DATASETS, { observer: progress.observer }).pipe(
        Effect.provide(exportLayer({ indexerUrl: devnet.indexerUrl, out })),
        Effect.mapError(
          (e) =>
            new UserError({
              // a lake of another devnet (a demo run with other --seed or --blocks): its own history, which this one's export refuses
              message:
                e._tag === "LakeIdentityError"
                  ? `${out} holds a lake this devnet (seed ${o.seed}, ${o.blocks} blocks) did not write: a demo with another --seed or --blocks, or an export of another chain, wrote it. Give this demo a folder of its own (--out ${shellWord(`data-seed${o.seed}-${o.blocks}`)}), or delete ${shellWord(out)} if it holds nothing you need`
                  : describeExportFailure(e)
            })
        ),
        Effect.ensuring(Effect.sync(() => progress.stop()))
      )
      yield* Console.log("Sampling route quotes and bridging 2.5 USDC from Noble to the rollup (devnet broadcast), tracked to completion:")
      const leg = yield* routerLeg.pipe(
        Effect.provide(Layer.mergeAll(routerLayer(devnet.routerUrl), layerLake(out))),
        Effect.mapError(
          (e) =>
            new UserError({
              message:
                "_tag" in e && String(e._tag).startsWith("Router")
                  ? describeRouterError(e as RouterError)
                  : (e as { message: string }).message
            })
        )
      )
      yield* answers.pipe(
        Effect.provide(layerAnalytics({ dataDir: out })),
        Effect.mapError((e) => new UserError({ message: e.message }))
      )
      yield* Console.log("\nSummary:")
      yield* Console.log(summaryTable(exported.datasets, (Date.now() - started) / 1000))
      yield* Console.log(
        `route_quotes: ${leg.round.quotes} quotes in one round (${leg.round.ok} routes, ${leg.round.failed} failed quotes recorded as data)`
      )
      yield* Console.log(`transfers:    ${leg.tracked.status.state} via ${leg.route.chain_ids.join(" → ")}, each state change recorded`)
      const catalog = yield* writeCatalog({ dataDir: out }).pipe(Effect.mapError((e) => new UserError({ message: e.message })))
      const report = yield* writeReport(join(out, "report.html")).pipe(
        Effect.provide(layerAnalytics({ dataDir: out })),
        Effect.mapError((e) => new UserError({ message: e.message }))
      )
      yield* Console.log(`\nParquet files: ${out}/<dataset>/<partition>=<value>/*.parquet`)
      yield* Console.log(`Charts:       ${report.path} (open it in a browser)`)
      yield* Console.log(
        `DuckDB:       ${catalog.dbFile} (cd ${shellWord(out)} && duckdb chain-lake.duckdb), or \`npx chain-lake query${out === resolve("data") ? "" : ` --data ${shellWord(out)}`} "FROM msg_type_mix"\``
      )
      yield* Console.log(
        `Next: \`npx chain-lake export --indexer-url URL --out data-mychain\` for a real indexer (its own folder: a lake holds one chain); \`npx chain-lake devnet\` serves this devnet for your own tools.`
      )
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Start the embedded devnet in-process and show what it serves (what `npm start` runs)"))
