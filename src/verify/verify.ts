/**
 * verify: reconciles the lake with itself and, when an indexer is given, with the API. Each
 * check says what it compared and whether it held; any failure is a mismatch (exit 1).
 */
import { join } from "node:path"
import { type Context, Effect, Either, Layer } from "effect"
import { listFiles, sha256File } from "../lake/files.js"
import { quarantinedRecords } from "../lake/quarantine.js"
import { Analytics, LAKE_DATASETS, layerAnalytics } from "../analytics/Analytics.js"
import { vanished, VERIFY_NAMES_IT } from "../analytics/views.js"
import { identityProblem, layerManifests, Manifests } from "../lake/Manifests.js"
import type { Manifest } from "../lake/manifest.js"
import { listedFiles, notInPlace, type ListedFiles } from "../lake/listed.js"
import { quoteIdent } from "../lake/sql.js"
import { covers, intersect, normalize, total, type Range } from "../lake/RangeSet.js"
import { describeRanges, inRanges, missingHeights, wholeHeights } from "../lake/held.js"
import { DATASETS } from "../datasets/index.js"
import { IndexerClient } from "../indexer/IndexerClient.js"

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

const one = (rows: ReadonlyArray<ReadonlyArray<unknown>>) => rows[0] ?? []

type QueryError = Effect.Effect.Error<ReturnType<Context.Tag.Service<typeof Analytics>["query"]>>

/** What the lake's checks share: a query of its views, the manifests the views were made of, the Manifests, and the list checks are added to. */
interface LakeChecks {
  readonly q: (sql: string) => Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, QueryError>
  readonly add: (name: string, ok: boolean, detail: string) => void
  /** the manifest of `dataset` that listed the files its view reads (pinned), if the lake holds one it can read (a damaged one is fileChecks' to name) */
  readonly manifest: (dataset: string) => Manifest | undefined
  readonly manifests: Context.Tag.Service<typeof Manifests>
}

/**
 * The files of every dataset the lake holds, found once (listedFiles: each listed file in place),
 * with the manifest that lists them: the views of the checks are made of these (Analytics
 * `pinned`), and the checks compare the views with these manifests, so that a writer committing
 * while verify reads (an export, a compaction) does not set a view's rows against a later manifest.
 */
export const pinManifests = (root: string): Promise<ReadonlyMap<string, ListedFiles>> =>
  Promise.all(LAKE_DATASETS.map(async (d) => [d.name, await listedFiles(root, d.name, d.columns)] as const)).then((e) => new Map(e))

/**
 * verifyLake of the lake at `root`, its files pinned first (pinManifests), or the one line saying
 * which listed files are not in place. A compaction that swaps files while the checks read them
 * moves the pinned ones away: the checks start again from the manifests as they are then (3 tries).
 */
export const verifyLakeAt = (root: string, attempts = 3): Effect.Effect<ReadonlyArray<Check>, { readonly message: string }> =>
  Effect.gen(function* () {
    const pinned = yield* Effect.promise(() => pinManifests(root))
    // listed files not in place: the checks would count rows of a lake that is not whole
    const unfinished = notInPlace([...pinned.values()])
    if (unfinished !== undefined) return yield* Effect.fail({ message: unfinished })
    return yield* verifyLake(pinned).pipe(
      Effect.provide(Layer.mergeAll(layerAnalytics({ dataDir: root, pinned }), layerManifests(root))),
      Effect.catchIf(
        // a file verify had found listed is gone: a compaction swapped files while verify read
        (e) => attempts > 1 && vanished(e),
        () => verifyLakeAt(root, attempts - 1)
      )
    )
  })

/** Checks of the lake against itself: no duplicates; datasets against each other where both hold every row (held.ts); a row per list position; manifests vs files. */
export const verifyLake = (pinned: ReadonlyMap<string, ListedFiles>) =>
  Effect.gen(function* () {
    const a = yield* Analytics
    const checks: Array<Check> = []
    const c: LakeChecks = {
      q: (sql) => a.query(sql).pipe(Effect.map((r) => r.rows)),
      add: (name, ok, detail) => checks.push({ name, ok, detail }),
      manifest: (dataset) => {
        const listed = pinned.get(dataset)
        return listed !== undefined && "manifest" in listed ? listed.manifest : undefined
      },
      manifests: yield* Manifests
    }
    yield* identityCheck(
      c,
      DATASETS.some((d) => d.kind !== "sample" && (c.manifest(d.name)?.files.length ?? 0) > 0)
    )
    // what the manifests promise against what the folders and files hold, first: a file damaged inside fails the reads of its rows
    for (const d of DATASETS) yield* fileChecks(c, d.name)
    yield* rowChecks(c).pipe(
      Effect.catchIf(
        (e) => e.lake === true,
        (e) =>
          Effect.sync(() =>
            c.add("the lake's rows can be read", false, e.message.replace(VERIFY_NAMES_IT, "the sha256 checks above name it"))
          )
      )
    )
    return checks
  })

/**
 * The lake's identity (`_lake.json`) reads and names its chain, and leaves it whole: no rollback
 * under way, no disagreement recorded. Exports refuse such a lake; verify passed it, and publish
 * published it.
 */
const identityCheck = (c: LakeChecks, holdsData: boolean) =>
  Effect.gen(function* () {
    const read = yield* Effect.either(c.manifests.identity)
    const identity = Either.getOrUndefined(read)
    // an empty lake names no chain yet
    if (Either.isRight(read) && identity === undefined && !holdsData) return
    const problem = Either.isLeft(read) ? read.left.message : identityProblem(c.manifests.root, identity, holdsData)
    c.add(
      "the lake's identity (_lake.json): its chain, no rollback under way",
      problem === undefined,
      problem ?? `chain ${identity?.chain_id}`
    )
  })

/** The checks that read the lake's rows: the first file that cannot be read ends them all (its view fails every query). */
const rowChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    yield* blockChecks(c)
    yield* txChecks(c)
    yield* evmChecks(c)
    yield* positionRowChecks(c)
    yield* snapshotKeyChecks(c)
    yield* holeNotes(c)
    for (const d of DATASETS) yield* rowCountCheck(c, d.name)
  })

/** Where a dataset's manifest lists stretches not committed between its committed ones: said, not failed (a stopped run, or one from a later height). */
const holeNotes = (c: LakeChecks) =>
  Effect.gen(function* () {
    for (const d of DATASETS.filter((d) => d.kind === "append")) {
      const m = c.manifest(d.name)
      const gaps = m ? missingHeights(m) : []
      if (gaps.length > 0)
        c.add(
          `${d.name}: heights not exported yet`,
          true,
          `${describeRanges(gaps)}${m!.unit === "position" ? " (the first and last of each in part)" : ""}: between what its manifest lists as committed (a stopped run, or one from a later height); the next export over them reads them`
        )
    }
  })

/** Blocks: each height its manifest committed held once, none other, all of the lake's chain. */
const blockChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    const { q, add } = c
    const m = c.manifest("blocks")
    const [blocks, distinct] = one(yield* q("SELECT count(*), count(DISTINCT height) FROM blocks")).map((v) => Number(v ?? 0))
    if (blocks === 0) return
    add("blocks: no duplicate heights", blocks === distinct, `${blocks} rows, ${distinct} distinct heights`)
    if (m) {
      const committed = normalize(m.committed)
      const [held, outside] = one(
        yield* q(
          `SELECT count(DISTINCT height) FILTER (WHERE ${inRanges("height", committed)}), count(*) FILTER (WHERE NOT ${inRanges("height", committed)}) FROM blocks`
        )
      ).map((v) => Number(v ?? 0))
      add(
        "blocks: every committed height, no other",
        held === total(committed) && outside === 0,
        `heights ${describeRanges(committed)}: ${total(committed)} committed, ${held} held${outside > 0 ? `, and ${outside} row(s) at heights not committed` : ""}`
      )
    }
    // blocks of another chain (a proxy mixing networks) are foreign data, whatever else holds
    const lake = yield* c.manifests.identity.pipe(Effect.orElseSucceed(() => undefined))
    const chains = (yield* q("SELECT chain_id, count(*) FROM blocks GROUP BY 1 ORDER BY 2 DESC")).map(
      ([c, n]) => [String(c), Number(n)] as const
    )
    const foreign = chains.filter(([c]) => c !== (lake?.chain_id ?? chains[0][0]))
    add(
      "blocks: all of the lake's chain",
      foreign.length === 0,
      foreign.length === 0
        ? `${chains[0][0]}`
        : `${foreign.reduce((n, [, k]) => n + k, 0)} block(s) of ${foreign.map(([c]) => c).join(", ")}, the lake's chain is ${lake?.chain_id ?? chains[0][0]}`
    )
  })

/**
 * Txs: no duplicate hashes; as many per block as its tx_count at every height both hold whole
 * (wholeHeights), no more at the ends of what txs committed, where a height may be held in part.
 */
const txChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    const { q, add } = c
    const [txRows, txDistinct] = one(yield* q("SELECT count(*), count(DISTINCT tx_hash) FROM txs")).map((v) => Number(v ?? 0))
    if (txRows === 0) return
    add("txs: no duplicate tx_hash", txRows === txDistinct, `${txRows} rows, ${txDistinct} distinct`)
    const [txs, blocks] = [c.manifest("txs"), c.manifest("blocks")]
    if (!txs || !blocks || blocks.committed.length === 0) return
    const held = wholeHeights(txs)
    const whole = intersect(held.whole, blocks.committed)
    const edges = held.edges.map((h): Range => [h, h + 1]).filter((e) => covers(blocks.committed, e))
    const bad =
      yield* q(`SELECT b.height, b.tx_count, coalesce(t.n, 0) FROM blocks b LEFT JOIN (SELECT height, count(*) n FROM txs GROUP BY height) t USING (height)
      WHERE (${inRanges("b.height", whole)} AND coalesce(t.n, 0) <> b.tx_count) OR (${inRanges("b.height", edges)} AND coalesce(t.n, 0) > b.tx_count) ORDER BY 1 LIMIT 5`)
    add(
      "txs per block equal tx_count",
      bad.length === 0,
      bad.length > 0
        ? `e.g. height ${bad[0][0]}: tx_count ${bad[0][1]}, ${bad[0][2]} txs`
        : whole.length + edges.length === 0
          ? "no height both hold yet"
          : `${total(whole)} heights equal${edges.length > 0 ? `; at ${describeRanges(edges)}, where what txs committed starts or ends (maybe inside the height), no more than tx_count` : ""}`
    )
  })

/**
 * EVM receipts and logs (one list: the same positions): no duplicates; over the positions both
 * committed, each receipt's log_count is its rows in evm_logs, and each log row's receipt is held.
 */
const evmChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    const { q, add } = c
    const [evmRows, evmDistinct] = one(yield* q("SELECT count(*), count(DISTINCT tx_hash) FROM evm_txs")).map((v) => Number(v ?? 0))
    if (evmRows > 0) add("evm_txs: no duplicate tx_hash", evmRows === evmDistinct, `${evmRows} rows, ${evmDistinct} distinct`)
    const [logs, logKeys] = one(yield* q("SELECT count(*), count(DISTINCT (tx_hash, log_index)) FROM evm_logs")).map((v) => Number(v ?? 0))
    // a log's index is unique within its tx only (per tx on receipts indexed before minievm's March 2026 fix)
    if (logs > 0) add("evm_logs: no duplicate (tx_hash, log_index)", logKeys === logs, `${logs} rows, ${logKeys} distinct`)
    if (evmRows > 0 && logs > 0) yield* receiptLogChecks(c)
    const [itx, itxDistinct] = one(yield* q("SELECT count(*), count(DISTINCT (tx_hash, call_index)) FROM evm_internal_txs")).map((v) =>
      Number(v ?? 0)
    )
    if (itx > 0) add("evm_internal_txs: no duplicate (tx_hash, call_index)", itx === itxDistinct, `${itx} rows, ${itxDistinct} distinct`)
    if (evmRows > 0 && itx > 0) yield* internalTxChecks(c)
  })

/**
 * evm_internal_txs against evm_txs, at the heights both hold whole: the calls are of the lake's
 * txs (another chain's or history's, copied in or served by another deployment, passed every other
 * check). Failed only where no call's tx is a receipt the lake holds at the call's height: a
 * traced tx may have no receipt (a quarantined one; a cosmos tx minievm gave none), said, not failed.
 */
const internalTxChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    const [receipts, calls] = [c.manifest("evm_txs"), c.manifest("evm_internal_txs")]
    if (!receipts || !calls) return
    const both = intersect(wholeHeights(receipts).whole, wholeHeights(calls).whole)
    if (both.length === 0) return
    const [compared, orphans, example] = one(
      yield* c.q(`SELECT count(*), count(*) FILTER (WHERE r.tx_hash IS NULL), min(i.tx_hash) FILTER (WHERE r.tx_hash IS NULL)
        FROM evm_internal_txs i LEFT JOIN (SELECT DISTINCT tx_hash, height FROM evm_txs) r ON r.tx_hash = i.tx_hash AND r.height = i.height
        WHERE ${inRanges("i.height", both)}`)
    )
    c.add(
      "evm_internal_txs: the calls are of txs evm_txs holds at their height",
      Number(compared) === 0 || Number(orphans) < Number(compared),
      Number(orphans) === Number(compared) && Number(compared) > 0
        ? `none of ${compared} call rows is of a tx evm_txs holds at its height (another chain's or history's calls?), e.g. ${example}`
        : `${compared} calls at heights ${describeRanges(both)}${Number(orphans) > 0 ? `; ${orphans} of txs without a receipt in evm_txs, e.g. ${example}` : ""}`
    )
  })

/**
 * evm_logs against the receipts' log_count, at the heights both hold whole (wholeHeights: the
 * same list, but a compacted file of one may reach past what the other committed).
 */
const receiptLogChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    const [receipts, logs] = [c.manifest("evm_txs"), c.manifest("evm_logs")]
    if (!receipts || !logs) return
    const receiptHeights = wholeHeights(receipts).whole
    const both = intersect(receiptHeights, wholeHeights(logs).whole)
    const [compared, counted, wrong, example] = one(
      yield* c.q(`SELECT count(*), coalesce(sum(r.log_count), 0), count(*) FILTER (WHERE coalesce(l.n, 0) <> r.log_count),
        min(r.tx_hash || ': log_count ' || r.log_count || ', ' || coalesce(l.n, 0) || ' rows') FILTER (WHERE coalesce(l.n, 0) <> r.log_count)
        FROM evm_txs r LEFT JOIN (SELECT tx_hash, count(*) n FROM evm_logs GROUP BY 1) l USING (tx_hash) WHERE ${inRanges("r.height", both)}`)
    )
    const [orphans] = one(
      yield* c.q(`SELECT count(*) FROM evm_logs WHERE ${inRanges("height", both)} AND tx_hash NOT IN (SELECT tx_hash FROM evm_txs)`)
    )
    const partial = both.length !== 1 || total(both) < total(receiptHeights)
    c.add(
      "evm_logs: one row per receipt log",
      Number(wrong) === 0 && Number(orphans) === 0,
      Number(wrong) > 0
        ? `${wrong} receipt(s) whose log rows differ, e.g. ${example}`
        : Number(orphans) > 0
          ? `${orphans} log row(s) whose receipt evm_txs does not hold`
          : both.length === 0
            ? "no height both hold whole yet"
            : `${compared} receipts, ${counted} logs at heights ${describeRanges(both)}${partial ? " (those both hold whole)" : ""}`
    )
  })

/**
 * Each list position a dataset of one row per record committed holds one row (the list's pages
 * are contiguous: pagingRules misplacedPositionPage), but those of records it quarantined: a row
 * lost at the top of a list, where no other dataset counts it, shows here.
 */
const positionRowChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    for (const d of DATASETS) {
      if (d.kind !== "append" || !d.rowPerRecord) continue
      const m = c.manifest(d.name)
      if (m?.unit !== "position" || m.files.length === 0) continue
      const positions = total(normalize(m.committed))
      const rows = m.files.reduce((n, f) => n + f.rows, 0)
      const over = m.files.find((f) => f.range !== undefined && f.rows > f.range[1] - f.range[0])
      const quarantined = yield* Effect.promise(() => quarantinedRecords(c.manifests.root, d.list.id))
      c.add(
        `${d.name}: a row for each list position committed`,
        over === undefined && positions - rows <= quarantined,
        over
          ? `${over.path}: ${over.rows} rows for ${over.range![1] - over.range![0]} positions`
          : positions - rows > quarantined
            ? `${positions - rows} of ${positions} positions without a row${quarantined > 0 ? `, ${quarantined} records quarantined` : ""}`
            : `${positions} positions${rows < positions ? `, ${positions - rows} of them quarantined (_quarantine/${d.list.id}.ndjson)` : ""}`
      )
    }
  })

/** Snapshots: no key twice within one. */
const snapshotKeyChecks = (c: LakeChecks) =>
  Effect.gen(function* () {
    const { q, add } = c
    for (const { name, key: columns } of DATASETS.filter((d) => d.kind === "snapshot")) {
      const key = columns.map(quoteIdent).join(", ")
      const dups = yield* q(
        `SELECT snapshot_height, count(*) - count(DISTINCT (${key})) FROM ${name} GROUP BY 1 HAVING count(*) <> count(DISTINCT (${key}))`
      )
      const [n] = one(yield* q(`SELECT count(*) FROM ${name}`)).map(Number)
      if (n > 0)
        add(
          `${name}: no duplicate keys within a snapshot`,
          dups.length === 0,
          dups.length === 0 ? `${n} rows` : `snapshot ${dups[0][0]}: ${dups[0][1]} duplicates`
        )
    }
  })

/** A dataset's folder against its manifest: exactly the committed files, each as committed (its rows are rowCountCheck's). */
const fileChecks = (c: LakeChecks, name: string) =>
  Effect.gen(function* () {
    const { add, manifests } = c
    // a dataset the pin found no manifest of has no rows to compare: a writer's first commit of it since is checked for strays only (below)
    const pinned = c.manifest(name)
    const files = pinned?.files ?? []
    const onDisk = (yield* Effect.promise(() => listFiles(join(manifests.root, name)))).filter((f) => f.endsWith(".parquet"))
    // a file committed since the views were made is listed by the manifest as it stands after the folder was listed
    const later = onDisk.length > 0 ? yield* manifests.get(name).pipe(Effect.orElseSucceed(() => undefined)) : undefined
    const listed = new Set([...files, ...(later?.files ?? [])].map((f) => f.path))
    const kept = new Set([...(pinned?.retired ?? []), ...(later?.retired ?? [])].map((f) => f.path))
    const unlisted = onDisk.filter((f) => !listed.has(f) && !kept.has(f))
    const present = new Set(onDisk)
    const missing = files.filter((f) => !present.has(f.path))
    if (onDisk.length > 0 || files.length > 0)
      add(
        `${name}: the folder holds exactly the committed files`,
        unlisted.length === 0 && missing.length === 0,
        missing.length > 0
          ? `${missing.length} listed file(s) missing, e.g. ${missing[0].path}`
          : unlisted.length > 0
            ? `${unlisted.length} Parquet file(s) no manifest lists (not data: an outside copy, or a run that did not commit), e.g. ${unlisted[0]}`
            : `${files.length} files${kept.size > 0 ? `, and ${kept.size} replaced by compaction kept for readers until their grace period ends` : ""}`
      )
    if (files.length === 0) return
    // a file rewritten in place (its rows and name kept) is caught by its checksum only
    // (4 at a time; a file that cannot be read now, gone or locked, counts as changed rather than ending verify)
    const sums = yield* Effect.forEach(
      files.filter((f) => present.has(f.path)),
      (f) =>
        Effect.promise(() => sha256File(join(manifests.root, name, f.path)).catch((e: Error) => `unreadable: ${e.message}`)).pipe(
          Effect.map((sum) => ({ f, sum }))
        ),
      { concurrency: 4 }
    )
    const changed = sums.filter(({ f, sum }) => sum !== f.sha256).map(({ f }) => f.path)
    add(
      `${name}: every file as committed (sha256)`,
      changed.length === 0,
      changed.length === 0
        ? `${files.length - missing.length} files`
        : `${changed.length} file(s) changed since their commit, e.g. ${changed[0]}`
    )
  })

/** A dataset's rows: as many as its pinned manifest promises. */
const rowCountCheck = (c: LakeChecks, name: string) =>
  Effect.gen(function* () {
    const files = c.manifest(name)?.files ?? []
    if (files.length === 0) return
    const promised = files.reduce((s, f) => s + f.rows, 0)
    const [held] = one(yield* c.q(`SELECT count(*) FROM ${name}`)).map(Number)
    c.add(`${name}: rows equal the manifest's`, promised === held, `manifest ${promised}, files ${held}`)
  })

/**
 * Spot checks against the API: the chain (the lake's `_lake.json`, `lake`, or its blocks'), the
 * hashes and tx counts of the lake's newest block and of sampled ones, the hashes it anchored (a
 * history that parted from the lake's near its top differs there first, where a sample rarely
 * looks), and the lake not ahead of the indexer.
 */
export const verifyAgainstApi = (
  samples = 10,
  lake?: { readonly chain_id: string; readonly anchors: ReadonlyArray<{ readonly height: number; readonly hash: string }> }
) =>
  Effect.gen(function* () {
    const a = yield* Analytics
    const indexer = yield* IndexerClient
    const checks: Array<Check> = []
    const status = yield* indexer.status
    const chains =
      lake !== undefined ? [lake.chain_id] : (yield* a.query("SELECT DISTINCT chain_id FROM blocks LIMIT 3")).rows.map((r) => String(r[0]))
    // (the same block hashes on another chain would pass every sample)
    if (chains.length > 0)
      checks.push({
        name: "the lake's chain is the indexer's",
        ok: chains.length === 1 && chains[0] === status.chain_id,
        detail: `lake ${chains.join(", ")}, indexer ${status.chain_id}`
      })
    // sampled among the heights the indexer has (a lake ahead of it fails the check below, not the run)
    const served = `SELECT height, block_hash, tx_count FROM blocks WHERE height <= ${Math.floor(status.height)}`
    const rows = (yield* a.query(
      `(${served} ORDER BY height DESC LIMIT 1) UNION (SELECT * FROM (${served}) USING SAMPLE ${samples} ROWS) ORDER BY height DESC`
    )).rows
    const [maxHeight] = ((yield* a.query("SELECT max(height) FROM blocks")).rows[0] ?? []).map((v) => Number(v ?? 0))
    if (maxHeight > 0)
      checks.push({
        name: "the lake is not ahead of the indexer",
        ok: maxHeight <= status.height,
        detail: `lake ${maxHeight}, indexer ${status.height}`
      })
    // a height the indexer no longer serves (pruned) says nothing either way
    const blockAt = (height: number) =>
      indexer.block(height).pipe(
        Effect.map((r) => r.block),
        Effect.catchIf(
          (e) => e._tag === "IndexerHttpError" && e.status === 404,
          () => Effect.succeed(undefined)
        )
      )
    let mismatched = 0
    let compared = 0
    let first = ""
    for (const [height, hash, txCount] of rows) {
      const b = yield* blockAt(Number(height))
      if (b === undefined) continue
      compared++
      if (b.hash !== hash || Number(b.tx_count) !== Number(txCount)) {
        mismatched++
        first ||= `height ${height}: lake ${String(hash).slice(0, 12)}…/${txCount} txs, API ${b.hash.slice(0, 12)}…/${b.tx_count}`
      }
    }
    // a sample the indexer served none of compared nothing: that is no pass
    if (rows.length > 0)
      checks.push({
        name: `blocks match the API (the newest and ${rows.length - 1} sampled)`,
        ok: mismatched === 0 && compared > 0,
        detail:
          compared === 0
            ? "the indexer serves none of the sampled heights (pruned?): nothing compared"
            : mismatched === 0
              ? `hash and tx_count agree (${compared} compared)`
              : first
      })
    const anchored = (lake?.anchors ?? []).filter((x) => x.height <= status.height)
    const differs: Array<string> = []
    let checked = 0
    for (const anchor of anchored) {
      const b = yield* blockAt(anchor.height)
      if (b === undefined) continue
      checked++
      if (b.hash !== anchor.hash) differs.push(`height ${anchor.height}: lake ${anchor.hash.slice(0, 12)}…, API ${b.hash.slice(0, 12)}…`)
    }
    if (checked > 0)
      checks.push({
        name: "the blocks the lake anchored are the API's",
        ok: differs.length === 0,
        detail: differs.length === 0 ? `${checked} hashes agree` : `${differs.length} of ${checked} differ, e.g. ${differs.at(-1)}`
      })
    return checks
  })
