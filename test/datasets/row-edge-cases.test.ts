/**
 * Row builders on records written by hand, the edge cases and hostile shapes the devnet does not
 * send: logs that look like an ERC-20 or ERC-721 Transfer and are not (removed, the other one's
 * topic count, another topic, a data word or token id of the wrong size), cosmos transfer events in
 * every shape cosmos-sdk has printed (one triple per event, repeated triples, several coins, missing
 * or unreadable parts), and txs with odd bodies and fees.
 */
import { describe, expect, it } from "vitest"
import { nftTransfers } from "../../src/datasets/nft_transfers.js"
import { TRANSFER_TOPIC, tokenTransfersCosmos, tokenTransfersEvm } from "../../src/datasets/token_transfers.js"
import { blocksList, evmTxsList, internalTxsList, txsList } from "../../src/datasets/lists.js"
import { txs } from "../../src/datasets/txs.js"
import { NO_CONTEXT, type AppendDataset } from "../../src/engine/Dataset.js"
import { integerRangeCheck, type Row, type Value } from "../../src/lake/columns.js"
import { bech32Encode, hexToBytes } from "../../src/devnet/encoding.js"

const BLOCK_TIME = "2026-11-23T10:00:00Z"
const context = {
  ...NO_CONTEXT,
  cosmosTxHashes: () => [],
  blockTime: (height: number) => (height === 0x2a ? BLOCK_TIME : `no block ${height}`)
}
/** Rows of `d` as objects keyed by column name. */
const named = (d: AppendDataset, rows: ReadonlyArray<Row>) =>
  rows.map((row) => Object.fromEntries(d.columns.map((c, i) => [c.name, row[i]])))

const FROM = "00000000000000000000000000000000000000a1"
const TO = "00000000000000000000000000000000000000b2"
const word = (hex: string) => "0x" + hex.padStart(64, "0")
const log = (overrides: Record<string, unknown> = {}) => ({
  address: "0xC0FFEE000000000000000000000000000000C0DE",
  topics: [TRANSFER_TOPIC, word(FROM), word(TO)],
  data: word("3e8"),
  blockNumber: "0x2a",
  transactionHash: "0xabc",
  transactionIndex: "0x0",
  blockHash: "0x" + "11".repeat(32),
  logIndex: "0x7",
  removed: false,
  ...overrides
})
const evmRows = (...logs: Array<Record<string, unknown>>) => named(tokenTransfersEvm, tokenTransfersEvm.toRows({ logs }, context))

describe("token_transfers_evm", () => {
  it("an ERC-20 Transfer log: each column holds the value its name says (time from the block)", () => {
    expect(evmRows(log())).toEqual([
      {
        height: 42,
        timestamp: BLOCK_TIME,
        tx_hash: "0xabc",
        source: "evm",
        event_index: 7,
        coin_index: 0,
        token: "0xc0ffee000000000000000000000000000000c0de",
        from_address: "0x" + FROM,
        to_address: "0x" + TO,
        from_bech32: bech32Encode("init", hexToBytes(FROM)),
        to_bech32: bech32Encode("init", hexToBytes(TO)),
        amount: "1000",
        amount_text: "1000"
      }
    ])
  })

  it("amounts are exact at 256 bits; topic0 is read in any case", () => {
    expect(evmRows(log({ data: "0x" + "f".repeat(64) }))[0].amount_text).toBe((2n ** 256n - 1n).toString())
    expect(evmRows(log({ topics: [TRANSFER_TOPIC.toUpperCase().replace("0X", "0x"), word(FROM), word(TO)] }))).toHaveLength(1)
  })

  it("not an ERC-20 transfer, no row: removed, ERC-721's four topics, two topics, another event, a data word that is not 32 bytes", () => {
    const tokenId = word("5")
    for (const notOne of [
      log({ removed: true }),
      log({ topics: [TRANSFER_TOPIC, word(FROM), word(TO), tokenId], data: "0x" }),
      log({ topics: [TRANSFER_TOPIC, word(FROM)] }),
      log({ topics: ["0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925", word(FROM), word(TO)] }),
      log({ data: "0x" + "0".repeat(63) }),
      log({ data: "0x" + "0".repeat(65) }),
      log({ data: "0x" + "0".repeat(128) }),
      log({ data: "zz0x" + "0".repeat(64) }),
      log({ data: "0x" + "0".repeat(64) + "zz" }),
      log({ data: "0x" + "g".repeat(64) })
    ])
      expect(evmRows(notOne), JSON.stringify(notOne)).toEqual([])
    // a receipt's other logs still count
    expect(
      evmRows(log({ removed: true }), log({ logIndex: "0x8" }), log({ topics: [] as Array<string>, logIndex: "0x9" })).map(
        (r) => r.event_index
      )
    ).toEqual([8])
  })

  it("a topic that is not a 32-byte word is no address: NULL in both spellings", () => {
    const [row] = evmRows(log({ topics: [TRANSFER_TOPIC, "0x" + FROM, word(TO)] }))
    expect([row.from_address, row.from_bech32, row.to_address]).toEqual([null, null, "0x" + TO])
  })
})

const SENDER = bech32Encode("init", hexToBytes("a1".repeat(20)))
const RECIPIENT = bech32Encode("init", hexToBytes("b2".repeat(20)))
const attr = (key: unknown, value: unknown) => ({ key, value, index: true })
const transfer = (...attributes: Array<unknown>) => ({ type: "transfer", attributes })
const tx = (events: Array<unknown>) => ({ height: "42", timestamp: "2026-11-23T10:00:01.5Z", txhash: "AB12", events })
/** the moved coins of a tx's events: event index, coin index, token, amount, from, to */
const moves = (events: Array<unknown>) =>
  named(tokenTransfersCosmos, tokenTransfersCosmos.toRows(tx(events), context)).map((r) => [
    r.event_index,
    r.coin_index,
    r.token,
    r.amount_text,
    r.from_bech32,
    r.to_bech32
  ])

describe("token_transfers_cosmos", () => {
  it("a transfer event: each column holds the value its name says (time from the tx)", () => {
    expect(
      named(
        tokenTransfersCosmos,
        tokenTransfersCosmos.toRows(
          tx([transfer(attr("recipient", RECIPIENT), attr("sender", SENDER), attr("amount", "25uinit"))]),
          context
        )
      )
    ).toEqual([
      {
        height: 42,
        timestamp: "2026-11-23T10:00:01.5Z",
        tx_hash: "AB12",
        source: "cosmos",
        event_index: 0,
        coin_index: 0,
        token: "uinit",
        from_address: "0x" + "a1".repeat(20),
        to_address: "0x" + "b2".repeat(20),
        from_bech32: SENDER,
        to_bech32: RECIPIENT,
        amount: "25",
        amount_text: "25"
      }
    ])
  })

  it("several coins in one amount (spaces around them allowed): one row each, numbered; leading zeros and any size read exactly", () => {
    expect(
      moves([
        transfer(
          attr("sender", SENDER),
          attr("recipient", RECIPIENT),
          attr("amount", "10uinit, 007ibc/27A6:x.y_z-1,123456789012345678901234567890123456789012evm/0xAb")
        )
      ])
    ).toEqual([
      [0, 0, "uinit", "10", SENDER, RECIPIENT],
      [0, 1, "ibc/27A6:x.y_z-1", "7", SENDER, RECIPIENT],
      [0, 2, "evm/0xAb", "123456789012345678901234567890123456789012", SENDER, RECIPIENT]
    ])
  })

  it("older cosmos-sdk: triples repeated in one event, read in order, coins numbered across them", () => {
    const other = bech32Encode("init", hexToBytes("c3".repeat(20)))
    expect(
      moves([
        transfer(
          attr("recipient", RECIPIENT),
          attr("sender", SENDER),
          attr("amount", "1uinit,2uusdc"),
          attr("recipient", other),
          attr("sender", SENDER),
          attr("amount", "3uinit")
        )
      ])
    ).toEqual([
      [0, 0, "uinit", "1", SENDER, RECIPIENT],
      [0, 1, "uusdc", "2", SENDER, RECIPIENT],
      [0, 2, "uinit", "3", SENDER, other]
    ])
  })

  it("event indexes count every event of the tx; other events, broken events and other attributes are passed over", () => {
    const events = [
      { type: "coin_spent", attributes: [attr("spender", SENDER), attr("amount", "9uinit")] },
      null,
      { type: "transfer" },
      { type: "transfer", attributes: "sender=x" },
      transfer(
        null,
        attr("msg_index", "0"),
        attr("sender", SENDER),
        attr("amount", 5),
        attr("recipient", RECIPIENT),
        attr("amount", "4uinit")
      ),
      transfer(attr("sender", SENDER), attr("recipient", RECIPIENT), attr("amount", "6uinit"))
    ]
    expect(moves(events)).toEqual([
      [4, 0, "uinit", "4", SENDER, RECIPIENT],
      [5, 0, "uinit", "6", SENDER, RECIPIENT]
    ])
  })

  it("an amount that is not a coin list, or none, or an empty one, moves nothing; the event's other triples still count", () => {
    for (const amount of ["uinit10", "10", "10 uinit", "10uinit,", "-5uinit", "10uinit;3uusdc", ""])
      expect(moves([transfer(attr("sender", SENDER), attr("recipient", RECIPIENT), attr("amount", amount))]), amount).toEqual([])
    expect(moves([transfer(attr("sender", SENDER), attr("recipient", RECIPIENT))])).toEqual([])
    expect(
      moves([
        transfer(
          attr("sender", SENDER),
          attr("recipient", RECIPIENT),
          attr("amount", "x"),
          attr("sender", SENDER),
          attr("recipient", RECIPIENT),
          attr("amount", "8uinit")
        )
      ])
    ).toEqual([[0, 0, "uinit", "8", SENDER, RECIPIENT]])
  })

  it("a sender or recipient that is not an account (a module name, nothing): NULL canonical address, the wire's text kept", () => {
    const [row] = named(
      tokenTransfersCosmos,
      tokenTransfersCosmos.toRows(tx([transfer(attr("sender", "fee_collector"), attr("amount", "1uinit"))]), context)
    )
    expect([row.from_address, row.from_bech32, row.to_address, row.to_bech32]).toEqual([null, "fee_collector", null, null])
  })
})

const txRow = (record: Record<string, unknown>) =>
  named(
    txs,
    txs.toRows(
      {
        height: "42",
        txhash: "AB",
        timestamp: "2026-11-23T10:00:01Z",
        code: 0,
        codespace: "",
        gas_wanted: "1",
        gas_used: "1",
        data: "",
        raw_log: "",
        info: "",
        events: [],
        logs: [],
        ...record
      },
      NO_CONTEXT
    )
  )[0]
const withBody = (body: unknown, authInfo?: unknown) => ({
  tx: { body, ...(authInfo === undefined ? {} : { auth_info: authInfo }), signatures: [] }
})

describe("txs", () => {
  it("messages: their types in order ('' for one without), the sender from sender, from_address or signer of the first", () => {
    const messages = [{ "@type": "/cosmos.bank.v1beta1.MsgSend", from_address: SENDER }, { signer: "x" }]
    expect(txRow(withBody({ messages }))).toMatchObject({
      message_types: '["/cosmos.bank.v1beta1.MsgSend",""]',
      sender_bech32: SENDER,
      sender_address: "0x" + "a1".repeat(20)
    })
    expect(txRow(withBody({ messages: [{ "@type": "t", signer: SENDER }] }))).toMatchObject({ sender_bech32: SENDER })
    expect(txRow(withBody({ messages: [{ "@type": "t", sender: "module", signer: SENDER }] }))).toMatchObject({
      sender_bech32: null,
      sender_address: null
    })
  })

  it("a body without messages, or a sender that is not text: no types, no sender", () => {
    for (const body of [{}, { messages: "none" }, { messages: [] }])
      expect(txRow(withBody(body)), JSON.stringify(body)).toMatchObject({ message_types: "[]", sender_bech32: null, sender_address: null })
    expect(txRow(withBody({ messages: [{ "@type": "t", sender: 5 }] }))).toMatchObject({ message_types: '["t"]', sender_bech32: null })
  })

  it("the fee: kept as sent, whatever its shape (the tx_fees view reads its coins)", () => {
    const coins = [
      { denom: "uinit", amount: "150" },
      { denom: "uusdc", amount: "3" }
    ]
    expect(txRow(withBody({ messages: [] }, { fee: { amount: coins } }))).toMatchObject({ fee: JSON.stringify(coins) })
    for (const authInfo of [undefined, {}, { fee: {} }])
      expect(txRow(withBody({}, authInfo)), JSON.stringify(authInfo)).toMatchObject({ fee: "[]" })
    expect(txRow(withBody({}, { fee: { amount: "7uinit" } }))).toMatchObject({ fee: '"7uinit"' })
  })

  it("the memo as text; anything else is NULL", () => {
    expect(txRow(withBody({ memo: "gm ✓" }))).toMatchObject({ memo: "gm ✓" })
    expect(txRow(withBody({ memo: "" }))).toMatchObject({ memo: "" })
    for (const memo of [undefined, null, 5, {}]) expect(txRow(withBody({ memo })), String(memo)).toMatchObject({ memo: null })
  })
})

const nftLog = (overrides: Record<string, unknown> = {}) =>
  log({ topics: [TRANSFER_TOPIC, word(FROM), word(TO), word("ff")], data: "0x", ...overrides })
const nftRows = (...logs: Array<Record<string, unknown>>) => named(nftTransfers, nftTransfers.toRows({ logs }, context))

describe("nft_transfers", () => {
  it("an ERC-721 Transfer log: each column holds the value its name says", () => {
    expect(nftRows(nftLog())).toEqual([
      {
        height: 42,
        timestamp: BLOCK_TIME,
        tx_hash: "0xabc",
        log_index: 7,
        collection_address: "0xc0ffee000000000000000000000000000000c0de",
        token_id: "255",
        kind: "transfer",
        from_address: "0x" + FROM,
        to_address: "0x" + TO,
        from_bech32: bech32Encode("init", hexToBytes(FROM)),
        to_bech32: bech32Encode("init", hexToBytes(TO))
      }
    ])
  })

  it("mints come from the zero address, burns go to it; token ids are exact at 256 bits; topic0 in any case", () => {
    const zero = word("0")
    expect(nftRows(nftLog({ topics: [TRANSFER_TOPIC, zero, word(TO), word("1")] }))[0]).toMatchObject({
      kind: "mint",
      from_address: "0x" + "0".repeat(40)
    })
    expect(nftRows(nftLog({ topics: [TRANSFER_TOPIC, word(FROM), zero, word("1")] }))[0]).toMatchObject({
      kind: "burn",
      to_address: "0x" + "0".repeat(40)
    })
    expect(nftRows(nftLog({ topics: [TRANSFER_TOPIC, word(FROM), word(TO), "0x" + "f".repeat(64)] }))[0].token_id).toBe(
      (2n ** 256n - 1n).toString()
    )
    expect(nftRows(nftLog({ topics: [TRANSFER_TOPIC.toUpperCase().replace("0X", "0x"), word(FROM), word(TO), word("1")] }))).toHaveLength(1)
  })

  it("not an ERC-721 transfer, no row: removed, ERC-20's three topics, another event, a token id that is not a 32-byte word", () => {
    for (const notOne of [
      nftLog({ removed: true }),
      nftLog({ topics: [TRANSFER_TOPIC, word(FROM), word(TO)], data: word("1") }),
      nftLog({ topics: [TRANSFER_TOPIC, word(FROM), word(TO), word("1"), word("2")] }),
      nftLog({ topics: ["0x" + "1".repeat(64), word(FROM), word(TO), word("1")] }),
      nftLog({ topics: [TRANSFER_TOPIC, word(FROM), word(TO), "0x" + "1".repeat(63)] }),
      nftLog({ topics: [TRANSFER_TOPIC, word(FROM), word(TO), "zz" + word("1")] }),
      nftLog({ topics: [TRANSFER_TOPIC, word(FROM), word(TO), word("1") + "zz"] })
    ])
      expect(nftRows(notOne), JSON.stringify(notOne)).toEqual([])
    expect(nftRows(nftLog({ removed: true }), nftLog({ logIndex: "0x9" })).map((r) => r.log_index)).toEqual([9])
  })
})

describe("record identities (how the engine tells a repeated record from a new one)", () => {
  it("each source's identity is its record's own key: internal txs of one tx differ by their index", () => {
    expect(internalTxsList.identityOf({ hash: "0xaa", index: 0 } as never)).toBe("0xaa/0")
    expect(internalTxsList.identityOf({ hash: "0xaa", index: 1 } as never)).not.toBe(
      internalTxsList.identityOf({ hash: "0xaa", index: 0 } as never)
    )
    expect(internalTxsList.identityOf({ hash: "0xab", index: 0 } as never)).not.toBe(
      internalTxsList.identityOf({ hash: "0xaa", index: 0 } as never)
    )
    expect([
      blocksList.identityOf({ height: "7" } as never),
      txsList.identityOf({ txhash: "AB" } as never),
      evmTxsList.identityOf({ transactionHash: "0xcd" } as never)
    ]).toEqual(["7", "AB", "0xcd"])
  })
})

describe("integer columns' ranges (checked before a row is appended)", () => {
  it("INTEGER holds −2^31..2^31−1 and BIGINT −2^63..2^63−1, as numbers, bigints or decimal text; anything else names the column", () => {
    const check = integerRangeCheck([
      { name: "i", type: "INTEGER", description: "" },
      { name: "b", type: "BIGINT", description: "" },
      { name: "s", type: "VARCHAR", description: "" }
    ])
    const fit: Array<[Value, Value]> = [
      [2 ** 31 - 1, "9223372036854775807"],
      [-(2 ** 31), "-9223372036854775808"],
      [0, 2 ** 53],
      [null, null],
      [7, 9223372036854775807n],
      [-7, "123456789012345678"],
      [0, -(2 ** 63)],
      [-(2 ** 31), 2 ** 63 - 2 ** 10]
    ]
    for (const [i, b] of fit) expect(check([i, b, "x".repeat(99)]), `${i} ${b}`).toBeUndefined()
    const misfit: Array<[Value, Value, string]> = [
      [2 ** 31, 0, "2147483648 does not fit column i (a 32-bit integer)"],
      [-(2 ** 31) - 1, 0, "-2147483649 does not fit column i (a 32-bit integer)"],
      [1.5, 0, "1.5 does not fit column i (a 32-bit integer)"],
      [0, "9223372036854775808", "9223372036854775808 does not fit column b (a 64-bit integer)"],
      [0, "-9223372036854775809", "-9223372036854775809 does not fit column b (a 64-bit integer)"],
      [0, 2 ** 63, "9223372036854776000 does not fit column b (a 64-bit integer)"],
      [0, 9223372036854775808n, "9223372036854775808 does not fit column b (a 64-bit integer)"],
      [0, "12a", "12a does not fit column b (a 64-bit integer)"],
      [0, "", " does not fit column b (a 64-bit integer)"],
      [0, 0.5, "0.5 does not fit column b (a 64-bit integer)"],
      // an INTEGER's text is decimal digits as a BIGINT's: Number("") is 0, Number("0x1f") 31
      ["", 0, " does not fit column i (a 32-bit integer)"],
      ["0x1f", 0, "0x1f does not fit column i (a 32-bit integer)"],
      ["1e3", 0, "1e3 does not fit column i (a 32-bit integer)"]
    ]
    for (const [i, b, message] of misfit) expect(check([i, b, null])).toEqual({ column: message.includes("column i") ? "i" : "b", message })
  })
})
