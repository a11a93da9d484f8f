/**
 * decodePage reads pages as latin1 and re-decodes only the strings with high bytes: its rows must
 * equal a plain UTF-8 decode + JSON.parse + toRows, whatever the page holds (ASCII only, UTF-8
 * text of 2, 3 and 4 bytes per char, JSON escapes of chars past ASCII, a cut body).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { blocks } from "../../src/datasets/blocks.js"
import { txs } from "../../src/datasets/txs.js"
const MEMO = txs.columns.findIndex((c) => c.name === "memo")
import { NO_CONTEXT, type AppendDataset } from "../../src/engine/Dataset.js"
import { decodeRecord, isInvalid } from "../../src/engine/pageDecode.js"
import { parseListPage } from "../../src/drivers/indexer.js"
import { startDevnet, type Devnet } from "../../src/devnet/index.js"

let devnet: Devnet
let txPage: string
let blockPage: string
beforeAll(async () => {
  devnet = await startDevnet({ seed: 21, blocks: 60 })
  txPage = await (await fetch(`${devnet.indexerUrl}/indexer/tx/v1/txs?pagination.limit=200&pagination.reverse=false`)).text()
  blockPage = await (await fetch(`${devnet.indexerUrl}/indexer/block/v1/blocks?pagination.limit=60&pagination.reverse=false`)).text()
})
afterAll(() => devnet.stop())

/** A page from bytes to rows, as the export takes it: the indexer source's envelope, then each record. */
const decodePage = (bytes: ArrayBuffer, source: AppendDataset["list"], datasets: ReadonlyArray<AppendDataset>) => {
  const parsed = parseListPage(bytes, source.arrayKey)
  if (parsed._tag !== "Page") return parsed
  const { items, latin1, nextKey, total } = parsed.page
  return { _tag: "Page" as const, nextKey, total, records: items.map((r) => decodeRecord(r, latin1, source, datasets)) }
}

const bytesOf = (text: string) => {
  const b = Buffer.from(text, "utf8")
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer
}
/** The reference: UTF-8 decode, JSON.parse, the dataset's own toRows. */
const expectedRows = (text: string, d: AppendDataset) =>
  (JSON.parse(text)[d.list.arrayKey] as Array<unknown>).flatMap((r) => d.toRows(r, NO_CONTEXT))
const decodedRows = (text: string, d: AppendDataset) => {
  const page = decodePage(bytesOf(text), d.list, [d])
  if (page._tag !== "Page") throw new Error(`not a page: ${page._tag}`)
  return page.records.flatMap((r) => (isInvalid(r) ? [] : r.rows[0]))
}

describe("decodePage", () => {
  it("the devnet's pages (non-ASCII memos and monikers) decode to the same rows as UTF-8", () => {
    expect(/[^\x00-\x7f]/.test(txPage)).toBe(true)
    // one decoded record per record of the page, in order, with the page's cursor and total
    const parsed = JSON.parse(txPage) as { txs: Array<{ txhash: string; height: string }>; pagination: { next_key: string; total: string } }
    const page = decodePage(bytesOf(txPage), txs.list, [txs])
    if (page._tag !== "Page") throw new Error(page._tag)
    expect(page.records.map((r) => (isInvalid(r) ? "invalid" : [r.height, r.rows[0][0][1]]))).toEqual(
      parsed.txs.map((t) => [Number(t.height), t.txhash])
    )
    expect([page.nextKey, page.total]).toEqual([parsed.pagination.next_key, parsed.pagination.total])
    expect(decodedRows(txPage, txs)).toEqual(expectedRows(txPage, txs))
    expect(decodedRows(blockPage, blocks)).toEqual(expectedRows(blockPage, blocks))
  })

  it("2-, 3- and 4-byte UTF-8, escapes of U+0080..U+00FF and ASCII-only pages all decode exactly", () => {
    const first = (JSON.parse(txPage) as { txs: Array<{ tx: { body: { memo: string } } }> }).txs.length
    expect(first).toBeGreaterThan(2)
    const withMemo = (memo: string, raw?: string) =>
      txPage.replace(/"memo":"(?:[^"\\]|\\.)*"/, raw !== undefined ? `"memo":"${raw}"` : `"memo":${JSON.stringify(memo)}`)
    for (const memo of ["café Ünïcode", "✓ ok ✓", "🚀 to the moon 🌕", 'mixed é ✓ 🚀 \\ " \u2028']) {
      const page = withMemo(memo)
      const rows = decodedRows(page, txs)
      expect(rows).toEqual(expectedRows(page, txs))
      expect(rows.some((r) => r[MEMO] === memo)).toBe(true)
    }
    // a JSON escape of a latin1-range char next to raw UTF-8: decoded as UTF-8 up front
    const escaped = withMemo("", "caf\\u00e9 ✓")
    expect(decodedRows(escaped, txs)).toEqual(expectedRows(escaped, txs))
    expect(decodedRows(escaped, txs).some((r) => r[MEMO] === "café ✓")).toBe(true)
    const ascii = txPage.replace(/[^\x00-\x7f]/g, "?")
    expect(decodedRows(ascii, txs)).toEqual(expectedRows(ascii, txs))
  })

  it("an invalid record keeps its text, a cut body is Truncated, a page without its array is BadEnvelope", () => {
    const bad = txPage.replace(/"height":"(\d+)"/, '"height":"é$1"')
    const page = decodePage(bytesOf(bad), txs.list, [txs])
    if (page._tag !== "Page") throw new Error(page._tag)
    const invalid = page.records.find(isInvalid)!
    expect(invalid.issue.path).toBe("height")
    expect(invalid.issue.message).toContain("é")
    expect(JSON.stringify(invalid.record)).toContain('"height":"é')
    expect(decodePage(bytesOf(txPage.slice(0, txPage.length / 2)), txs.list, [txs])._tag).toBe("Truncated")
    expect(decodePage(bytesOf('{"items":[],"pagination":{"next_key":null,"total":"0"}}'), txs.list, [txs])).toEqual({
      _tag: "BadEnvelope",
      issue: { path: "txs", message: "is missing or not an array" }
    })
  })

  it("an escape of any char past ASCII next to raw UTF-8 decodes exactly (each hex digit class, U+2028, a surrogate pair), and so does a next_key with high bytes", () => {
    const withMemo = (raw: string) => txPage.replace(/"memo":"(?:[^"\\]|\\.)*"/, `"memo":"${raw}"`)
    // 8, 9, a, f, A, F in the escape's third digit; escapes of ASCII (\u0041, \u007f) need no care
    for (const [escaped, char] of [
      ["\\u0080", "\u0080"],
      ["\\u0099", "\u0099"],
      ["\\u00a0", "\u00a0"],
      ["\\u00ff", "ÿ"],
      ["\\u00A9", "©"],
      ["\\u00Fe", "þ"],
      ["\\u0041", "A"],
      ["\\u007f", "\u007f"]
    ]) {
      const page = withMemo(`${escaped} ✓`)
      expect(
        decodedRows(page, txs).some((r) => r[MEMO] === `${char} ✓`),
        escaped
      ).toBe(true)
      expect(decodedRows(page, txs)).toEqual(expectedRows(page, txs))
    }
    // escapes past U+00FF (Go's encoding/json writes U+2028 and U+2029 so), an escaped surrogate
    // pair and an escaped backslash before "u": a latin1 read kept only each char's low byte
    for (const [escaped, char] of [
      ["\\u2028", "\u2028"],
      ["a\\u2029b", "a\u2029b"],
      ["\\u0100", "\u0100"],
      ["\\uFFFD", "\ufffd"],
      ["\\ud83d\\ude80", "🚀"],
      ["\\\\u2028", "\\u2028"]
    ]) {
      const page = withMemo(`${escaped} ✓`)
      expect(
        decodedRows(page, txs).some((r) => r[MEMO] === `${char} ✓`),
        escaped
      ).toBe(true)
      expect(decodedRows(page, txs)).toEqual(expectedRows(page, txs))
    }
    const keyed = txPage.replace(/"next_key":"[^"]*"/, '"next_key":"clé✓"')
    const page = decodePage(bytesOf(keyed), txs.list, [txs])
    expect(page._tag === "Page" && page.nextKey).toBe("clé✓")
    // the last page has no next key, on a page with high bytes and on an ASCII one
    for (const text of [txPage, blockPage.replace(/[^\x00-\x7f]/g, "?")]) {
      const last = decodePage(bytesOf(text.replace(/"next_key":"[^"]*"/, '"next_key":null')), text === txPage ? txs.list : blocks.list, [
        text === txPage ? txs : blocks
      ])
      expect(last._tag === "Page" && last.nextKey).toBeNull()
    }
  })

  it("a page read as latin1 (raw UTF-8, no escapes): an invalid record's issue and record come back as UTF-8, not as their bytes", () => {
    const tx = { ...JSON.parse(txPage).txs[0] }
    tx.height = `é${tx.height}`
    const text = JSON.stringify({ txs: [tx], pagination: { previous_key: null, next_key: null, total: "1" } })
    expect(text).not.toContain("\\u00")
    const page = decodePage(bytesOf(text), txs.list, [txs])
    if (page._tag !== "Page") throw new Error(page._tag)
    const [invalid] = page.records
    if (!isInvalid(invalid)) throw new Error("the record passed its check")
    expect(invalid.issue.path).toBe("height")
    expect(invalid.issue.message).toContain(`"é${tx.height.slice(1)}"`)
    expect(invalid.issue.message).not.toContain("Ã")
    expect(invalid.record).toEqual(tx)
  })

  it("a quarantined record from a page with high bytes keeps its text, nulls and nesting", () => {
    const bad = txPage.replace(/"height":"(\d+)"/, '"height":null,"extra":{"list":[null,"ü",1]}')
    const page = decodePage(bytesOf(bad), txs.list, [txs])
    if (page._tag !== "Page") throw new Error(page._tag)
    const invalid = page.records.find(isInvalid)!
    expect(invalid.issue).toEqual({ path: "height", message: "Expected string, actual null" })
    expect(invalid.record).toEqual(JSON.parse(bad).txs[0])
  })
})
