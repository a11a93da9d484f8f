/**
 * The row builders of the router datasets and the hex helpers the indexer datasets share, on
 * hand-written responses: every column gets the value of its name (a swap of two columns of one
 * type fails here), failed quotes are rows with empty route columns, and amounts stay exact.
 * (The indexer datasets' rows are checked end to end against the chain model in export-values.)
 */
import { describe, expect, it } from "vitest"
import { routeQuotes, type QuoteAsked } from "../../src/datasets/route_quotes.js"
import { routerAssets } from "../../src/datasets/router_assets.js"
import { routerChains } from "../../src/datasets/router_chains.js"
import { hexToDecimal, hexToNumber } from "../../src/datasets/lists.js"
import { transfers } from "../../src/datasets/transfers.js"
import type { Column, Row } from "../../src/lake/columns.js"
import type { RouterError } from "../../src/router/errors.js"
import { NoRouteError, RouterDecodeError } from "../../src/router/errors.js"
import type { RouteResponse, TxStatusResponse } from "../../src/router/schemas.js"

const routeQuoteColumns = routeQuotes.columns
const routeQuoteRow = (q: QuoteAsked, outcome: { readonly route: RouteResponse } | { readonly error: RouterError }) =>
  routeQuotes.toRow({ asked: q, ...outcome })
const transferColumns = transfers.columns
const transferRow = (tx: Parameters<typeof transfers.toRow>[0]["tx"], observedAt: Date, status: TxStatusResponse) =>
  transfers.toRow({ tx, observedAt, status })

const named = (columns: ReadonlyArray<Column>, row: Row) => {
  expect(row.length, "one value per column").toBe(columns.length)
  return Object.fromEntries(columns.map((c, i) => [c.name, row[i]]))
}

const asked: QuoteAsked = {
  sampledAt: "2026-11-23T10:00:00.000Z",
  roundId: "20261123-100000000Z",
  source: { chain_id: "interwoven-1", denom: "uinit" },
  dest: { chain_id: "lake-evm-1", denom: "evm/0xAbC" },
  variant: "fast",
  goFast: true,
  allowUnsafe: false,
  amountIn: "123456789012345678901234"
}
const asset = { denom: "uusdc", chain_id: "noble-1", origin_denom: "uusdc", origin_chain_id: "noble-1" }
const route: RouteResponse = {
  amount_in: "2000",
  amount_out: "1500",
  source_asset_denom: "uinit",
  source_asset_chain_id: "interwoven-1",
  dest_asset_denom: "evm/0xAbC",
  dest_asset_chain_id: "lake-evm-1",
  operations: [
    { tx_index: 0, amount_in: "2000", amount_out: "1800", swap: { chain_id: "interwoven-1", denom_in: "uinit", denom_out: "uusdc" } },
    {
      tx_index: 0,
      amount_in: "1800",
      amount_out: "1500",
      op_init_transfer: {
        from_chain_id: "interwoven-1",
        to_chain_id: "lake-evm-1",
        denom_in: "uusdc",
        denom_out: "evm/0xAbC",
        op_init_bridge_id: "7"
      }
    }
  ],
  chain_ids: ["interwoven-1", "lake-evm-1"],
  required_chain_addresses: ["interwoven-1", "lake-evm-1"],
  does_swap: true,
  estimated_amount_out: "1510",
  txs_required: 1,
  usd_amount_in: "2.5",
  usd_amount_out: "1.75",
  swap_price_impact_percent: "0.42",
  estimated_fees: [
    {
      fee_type: "SMART_RELAY",
      bridge_id: "GO_FAST",
      amount: "10",
      usd_amount: "0.25",
      origin_asset: asset,
      chain_id: "noble-1",
      tx_index: 0,
      operation_index: 1,
      fee_behavior: "FEE_BEHAVIOR_DEDUCTED"
    },
    // no fee_behavior: deducted, the router's default; a second fee of operation 0
    {
      fee_type: "SMART_RELAY",
      bridge_id: "IBC",
      amount: "5",
      usd_amount: "0.125",
      origin_asset: asset,
      chain_id: "noble-1",
      tx_index: 0,
      operation_index: 0
    },
    {
      fee_type: "SMART_RELAY",
      bridge_id: "EUREKA",
      amount: "3",
      usd_amount: "0.5",
      origin_asset: asset,
      chain_id: "interwoven-1",
      tx_index: 0,
      operation_index: 0,
      fee_behavior: "FEE_BEHAVIOR_ADDITIONAL"
    }
  ],
  swap_venues: [{ name: "initia-dex", chain_id: "interwoven-1" }],
  extra_infos: ["routed through Initia"],
  estimated_route_duration_seconds: 604800,
  warning: { type: "BAD_PRICE_WARNING", message: "big" },
  extra_warnings: ["withdrawals take 7 days"],
  required_op_hook: false
}

describe("route_quotes rows", () => {
  it("a route: each column holds the value its name says", () => {
    const r = named(routeQuoteColumns, routeQuoteRow(asked, { route }))
    expect(r).toEqual({
      sampled_at: asked.sampledAt,
      round_id: asked.roundId,
      pair: "interwoven-1/uinit → lake-evm-1/evm/0xAbC",
      source_chain_id: "interwoven-1",
      source_denom: "uinit",
      dest_chain_id: "lake-evm-1",
      dest_denom: "evm/0xAbC",
      variant: "fast",
      go_fast: true,
      allow_unsafe: false,
      is_op_withdraw: null,
      amount_in: "123456789012345678901234",
      amount_out: "1500",
      amount_out_text: "1500",
      estimated_amount_out: "1510",
      estimated_amount_out_text: "1510",
      effective_rate: 0.75,
      usd_amount_in: 2.5,
      usd_amount_out: 1.75,
      fees_usd: 0.875,
      fees_deducted_usd: 0.375,
      fees_additional_usd: 0.5,
      fees: JSON.stringify([
        {
          bridge_id: "GO_FAST",
          fee_type: "SMART_RELAY",
          fee_behavior: "FEE_BEHAVIOR_DEDUCTED",
          amount: "10",
          usd_amount: "0.25",
          denom: "uusdc",
          chain_id: "noble-1",
          tx_index: 0,
          operation_index: 1
        },
        {
          bridge_id: "IBC",
          fee_type: "SMART_RELAY",
          fee_behavior: null,
          amount: "5",
          usd_amount: "0.125",
          denom: "uusdc",
          chain_id: "noble-1",
          tx_index: 0,
          operation_index: 0
        },
        {
          bridge_id: "EUREKA",
          fee_type: "SMART_RELAY",
          fee_behavior: "FEE_BEHAVIOR_ADDITIONAL",
          amount: "3",
          usd_amount: "0.5",
          denom: "uusdc",
          chain_id: "interwoven-1",
          tx_index: 0,
          operation_index: 0
        }
      ]),
      operations: JSON.stringify([
        {
          kind: "swap",
          tx_index: 0,
          amount_in: "2000",
          amount_out: "1800",
          from_chain_id: "interwoven-1",
          to_chain_id: "interwoven-1",
          bridge_id: null,
          fees: [
            { amount: "5", denom: "uusdc" },
            { amount: "3", denom: "uusdc" }
          ]
        },
        {
          kind: "op_init_transfer",
          tx_index: 0,
          amount_in: "1800",
          amount_out: "1500",
          from_chain_id: "interwoven-1",
          to_chain_id: "lake-evm-1",
          bridge_id: "7",
          fees: [{ amount: "10", denom: "uusdc" }]
        }
      ]),
      swap_venues: '["initia-dex"]',
      price_impact_percent: 0.42,
      warning_type: "BAD_PRICE_WARNING",
      warning_message: "big",
      extra_warnings: '["withdrawals take 7 days"]',
      extra_infos: '["routed through Initia"]',
      estimated_duration_s: 604800,
      txs_required: 1,
      chain_path: '["interwoven-1","lake-evm-1"]',
      operation_kinds: '["swap","op_init_transfer"]',
      does_swap: true,
      required_op_hook: false,
      ok: true,
      error_kind: null,
      error_message: null
    })
  })

  it("an output past DECIMAL(38,0) (a router's amounts are unbounded: uint256 on EVM) is NULL there and exact in amount_out_text (estimated_amount_out likewise)", () => {
    const huge = "1234567890123456789000000000000000000000"
    const r = named(routeQuoteColumns, routeQuoteRow(asked, { route: { ...route, amount_out: huge, estimated_amount_out: huge } }))
    expect(r).toMatchObject({
      amount_out: null,
      amount_out_text: huge,
      estimated_amount_out: null,
      estimated_amount_out_text: huge,
      ok: true
    })
    // 38 digits fit, leading zeros aside
    const edge = `00${"9".repeat(38)}`
    expect(named(routeQuoteColumns, routeQuoteRow(asked, { route: { ...route, amount_out: edge } })).amount_out).toBe(edge)
  })

  it("a fee with no USD price makes the USD sums it is part of NULL (its worth is unknown), not a smaller total", () => {
    const unpriced: RouteResponse = {
      ...route,
      estimated_fees: route.estimated_fees!.map((f) => (f.fee_behavior === "FEE_BEHAVIOR_ADDITIONAL" ? { ...f, usd_amount: undefined } : f))
    }
    expect(named(routeQuoteColumns, routeQuoteRow(asked, { route: unpriced }))).toMatchObject({
      fees_usd: null,
      fees_deducted_usd: 0.375,
      fees_additional_usd: null
    })
  })

  it("a route without the optional parts leaves them empty, not zero", () => {
    const bare: RouteResponse = {
      ...route,
      estimated_amount_out: undefined,
      usd_amount_in: undefined,
      usd_amount_out: undefined,
      swap_price_impact_percent: null,
      estimated_fees: null,
      warning: null,
      extra_warnings: null,
      extra_infos: null,
      swap_venues: null,
      does_swap: undefined,
      required_op_hook: undefined
    }
    const r = named(
      routeQuoteColumns,
      routeQuoteRow({ ...asked, goFast: undefined, allowUnsafe: undefined, isOpWithdraw: true }, { route: bare })
    )
    expect(r).toMatchObject({
      go_fast: null,
      allow_unsafe: null,
      is_op_withdraw: true,
      estimated_amount_out: null,
      estimated_amount_out_text: null,
      usd_amount_in: null,
      usd_amount_out: null,
      fees_usd: 0,
      fees_deducted_usd: 0,
      fees_additional_usd: 0,
      fees: "[]",
      swap_venues: "[]",
      price_impact_percent: null,
      warning_type: null,
      warning_message: null,
      extra_warnings: "[]",
      extra_infos: "[]",
      does_swap: null,
      required_op_hook: null,
      ok: true
    })
  })

  it("an empty amount text is no amount (NULL), and the older single swap_venue is read when swap_venues is absent", () => {
    const older = {
      ...route,
      usd_amount_in: "",
      swap_price_impact_percent: "",
      swap_venues: undefined,
      swap_venue: { name: "initia-dex", chain_id: "interwoven-1" }
    } as RouteResponse
    expect(named(routeQuoteColumns, routeQuoteRow(asked, { route: older }))).toMatchObject({
      usd_amount_in: null,
      price_impact_percent: null,
      swap_venues: '["initia-dex"]'
    })
  })

  it("a USD text that is no number ('N/A', '$0.99') or past a double ('1e400', 'Infinity') is NULL, not NaN or Infinity, and so are the sums it is part of", () => {
    for (const text of ["N/A", "$0.99", "abc", "1e400", "Infinity", "-Infinity"]) {
      const odd = {
        ...route,
        usd_amount_in: text,
        usd_amount_out: text,
        swap_price_impact_percent: text,
        estimated_fees: [{ ...route.estimated_fees![0], usd_amount: text }]
      } as RouteResponse
      const row = named(routeQuoteColumns, routeQuoteRow(asked, { route: odd }))
      expect(row, text).toMatchObject({ usd_amount_in: null, usd_amount_out: null, price_impact_percent: null })
      for (const [column, value] of Object.entries(row))
        if (typeof value === "number") expect(Number.isFinite(value), `${text}: ${column}`).toBe(true)
    }
  })

  it("a USD worth below 0 is none (NULL, and so are the fees' sums it is part of); a price impact below 0 (a better price) is kept", () => {
    const odd = {
      ...route,
      usd_amount_in: "-2.5",
      usd_amount_out: "-0.01",
      swap_price_impact_percent: "-0.2",
      estimated_fees: [{ ...route.estimated_fees![0], usd_amount: "-1" }]
    } as RouteResponse
    const row = named(routeQuoteColumns, routeQuoteRow(asked, { route: odd }))
    expect(row).toMatchObject({ usd_amount_in: null, usd_amount_out: null, price_impact_percent: -0.2 })
    for (const [column, value] of Object.entries(row))
      if (column.includes("usd")) expect(value === null || (typeof value === "number" && value >= 0), column).toBe(true)
  })

  it("a failed quote is a row: what was asked, no route values, the error's kind and message", () => {
    const r = named(routeQuoteColumns, routeQuoteRow(asked, { error: new NoRouteError({ message: "no routes found", status: 200 }) }))
    const routeColumns = routeQuoteColumns.slice(12, -3).map((c) => c.name)
    expect(routeColumns[0]).toBe("amount_out")
    for (const c of routeColumns) expect(r[c], c).toBeNull()
    expect(r).toMatchObject({
      pair: "interwoven-1/uinit → lake-evm-1/evm/0xAbC",
      amount_in: asked.amountIn,
      ok: false,
      error_kind: "NoRouteError",
      error_message: "no routes found"
    })
    const decode = named(
      routeQuoteColumns,
      routeQuoteRow(asked, {
        error: new RouterDecodeError({ endpoint: "route", path: "operations[0]", message: "is missing", truncated: false })
      })
    )
    expect(decode).toMatchObject({
      error_kind: "RouterDecodeError",
      error_message: "malformed response from route at operations[0]: is missing"
    })
  })
})

describe("transfers rows", () => {
  const tx = { txHash: "ABC123", chainId: "noble-1", registeredAt: "2026-11-23T10:00:00.000Z", estimatedSeconds: 30 }
  const status: TxStatusResponse = {
    state: "STATE_COMPLETED_ERROR",
    transfer_sequence: [{ ibc_transfer: { state: "TRANSFER_SUCCESS" } }],
    transfers: [
      {
        state: "STATE_COMPLETED_ERROR",
        transfer_sequence: [
          {
            ibc_transfer: {
              state: "TRANSFER_SUCCESS",
              from_chain_id: "noble-1",
              to_chain_id: "interwoven-1",
              packet_txs: {
                send_tx: {
                  chain_id: "noble-1",
                  tx_hash: "S1",
                  explorer_link: "https://x/S1",
                  on_chain_at: "2026-11-23T10:00:01.123456789Z"
                },
                receive_tx: {
                  chain_id: "interwoven-1",
                  tx_hash: "R1",
                  explorer_link: "https://x/R1",
                  on_chain_at: "2026-11-23T10:00:05.000000001Z"
                },
                acknowledge_tx: null,
                error: null
              }
            }
          },
          { op_init_transfer: { state: "OPINIT_TRANSFER_FAILED" } },
          {}
        ],
        next_blocking_transfer: { transfer_sequence_index: 1 }
      }
    ],
    next_blocking_transfer: { transfer_sequence_index: 1 },
    transfer_asset_release: { chain_id: "interwoven-1", denom: "uusdc", amount: "2999000", released: true },
    error: { type: "STATUS_ERROR_TRANSFER", message: "packet acknowledgement error" }
  }

  it("a state change: each column holds the value its name says, transfer events read from the transfers", () => {
    const r = named(transferColumns, transferRow(tx, new Date("2026-11-23T10:00:12.500Z"), status))
    expect(r).toEqual({
      tx_hash: "ABC123",
      chain_id: "noble-1",
      observed_at: "2026-11-23T10:00:12.500Z",
      state: "STATE_COMPLETED_ERROR",
      outcome: "error",
      transfer_states: '["ibc_transfer:TRANSFER_SUCCESS","op_init_transfer:OPINIT_TRANSFER_FAILED","unknown:?"]',
      hops: JSON.stringify([
        {
          kind: "ibc_transfer",
          state: "TRANSFER_SUCCESS",
          from_chain_id: "noble-1",
          to_chain_id: "interwoven-1",
          txs: [
            {
              role: "send_tx",
              chain_id: "noble-1",
              tx_hash: "S1",
              explorer_link: "https://x/S1",
              on_chain_at: "2026-11-23T10:00:01.123456789Z"
            },
            {
              role: "receive_tx",
              chain_id: "interwoven-1",
              tx_hash: "R1",
              explorer_link: "https://x/R1",
              on_chain_at: "2026-11-23T10:00:05.000000001Z"
            }
          ]
        },
        { kind: "op_init_transfer", state: "OPINIT_TRANSFER_FAILED", from_chain_id: null, to_chain_id: null, txs: [] },
        { kind: "unknown", state: null, from_chain_id: null, to_chain_id: null, txs: [] }
      ]),
      next_blocking_transfer: 1,
      released: true,
      release_chain_id: "interwoven-1",
      release_denom: "uusdc",
      release_amount: "2999000",
      release_amount_text: "2999000",
      error_type: "STATUS_ERROR_TRANSFER",
      error_message: "packet acknowledgement error",
      registered_at: "2026-11-23T10:00:00.000Z",
      estimated_duration_s: 30,
      elapsed_s: 12.5
    })
  })

  it("txs that are not objects with a hash are left out of a hop; an empty transfers list falls back to the top-level sequence", () => {
    const odd: TxStatusResponse = {
      state: "STATE_PENDING",
      transfer_sequence: [
        {
          ibc_transfer: {
            state: "TRANSFER_PENDING",
            packet_txs: { send_tx: "S1", receive_tx: { chain_id: "x" }, acknowledge_tx: null, timeout_tx: { tx_hash: "T1" } }
          }
        }
      ],
      transfers: []
    }
    const r = named(transferColumns, transferRow(tx, new Date("2026-11-23T10:00:01.000Z"), odd))
    expect(r.transfer_states).toBe('["ibc_transfer:TRANSFER_PENDING"]')
    expect(JSON.parse(String(r.hops))).toEqual([
      {
        kind: "ibc_transfer",
        state: "TRANSFER_PENDING",
        from_chain_id: null,
        to_chain_id: null,
        txs: [{ role: "timeout_tx", chain_id: null, tx_hash: "T1", explorer_link: null, on_chain_at: null }]
      }
    ])
  })

  it("a tx that starts several transfers: every transfer's events, in order (the first alone was kept: a failed second leg appeared nowhere)", () => {
    const two: TxStatusResponse = {
      state: "STATE_PENDING_ERROR",
      transfer_sequence: [{ ibc_transfer: { state: "TRANSFER_SUCCESS" } }, { axelar_transfer: { state: "AXELAR_TRANSFER_FAILURE" } }],
      transfers: [
        { state: "STATE_COMPLETED_SUCCESS", transfer_sequence: [{ ibc_transfer: { state: "TRANSFER_SUCCESS" } }] },
        { state: "STATE_PENDING_ERROR", transfer_sequence: [{ axelar_transfer: { state: "AXELAR_TRANSFER_FAILURE" } }] }
      ]
    }
    const r = named(transferColumns, transferRow(tx, new Date("2026-11-23T10:00:01.000Z"), two))
    expect(r.transfer_states).toBe('["ibc_transfer:TRANSFER_SUCCESS","axelar_transfer:AXELAR_TRANSFER_FAILURE"]')
    expect(JSON.parse(String(r.hops)).map((h: { kind: string }) => h.kind)).toEqual(["ibc_transfer", "axelar_transfer"])
  })

  it("a status with no transfer events at all (transfer_sequence is deprecated and may be absent): states and hops NULL, not a failure", () => {
    const bare: TxStatusResponse = { state: "STATE_SUBMITTED" }
    const r = named(transferColumns, transferRow(tx, new Date("2026-11-23T10:00:01.000Z"), bare))
    expect(r).toMatchObject({ state: "STATE_SUBMITTED", transfer_states: null, hops: null })
  })

  it("without transfers, release or error: the top-level sequence, and empty columns", () => {
    const submitted: TxStatusResponse = {
      state: "STATE_SUBMITTED",
      transfer_sequence: [{ cctp_transfer: { state: "CCTP_TRANSFER_SENT" } }]
    }
    const r = named(transferColumns, transferRow({ ...tx, estimatedSeconds: undefined }, new Date("2026-11-23T10:00:01.000Z"), submitted))
    expect(r).toMatchObject({
      transfer_states: '["cctp_transfer:CCTP_TRANSFER_SENT"]',
      next_blocking_transfer: null,
      released: null,
      release_chain_id: null,
      release_denom: null,
      release_amount: null,
      release_amount_text: null,
      error_type: null,
      error_message: null,
      estimated_duration_s: null,
      elapsed_s: 1
    })
  })
})

describe("router_assets and router_chains rows", () => {
  const sampledAt = "2026-11-23T10:00:00.000Z"
  it("an asset: each column holds the value its name says", () => {
    const full = {
      chain_id: "noble-1",
      denom: "uusdc",
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      origin_chain_id: "noble-1",
      origin_denom: "uusdc",
      is_evm: false,
      coingecko_id: "usd-coin"
    }
    expect(named(routerAssets.columns, routerAssets.toRow({ sampledAt, asset: full }))).toEqual({
      sampled_at: sampledAt,
      chain_id: "noble-1",
      denom: "uusdc",
      symbol: "USDC",
      name: "USD Coin",
      decimals: 6,
      origin_chain_id: "noble-1",
      origin_denom: "uusdc",
      is_evm: false,
      coingecko_id: "usd-coin"
    })
  })
  it("an asset without the optional parts: NULL, not '' or 0 (an empty name or CoinGecko id is none)", () => {
    const bare = {
      chain_id: "lake-evm-1",
      denom: "evm/0xAbC",
      origin_chain_id: "interwoven-1",
      origin_denom: "uinit",
      name: "",
      coingecko_id: ""
    }
    expect(named(routerAssets.columns, routerAssets.toRow({ sampledAt, asset: bare }))).toEqual({
      sampled_at: sampledAt,
      chain_id: "lake-evm-1",
      denom: "evm/0xAbC",
      symbol: null,
      name: null,
      decimals: null,
      origin_chain_id: "interwoven-1",
      origin_denom: "uinit",
      is_evm: null,
      coingecko_id: null
    })
    expect(
      named(
        routerAssets.columns,
        routerAssets.toRow({ sampledAt, asset: { ...bare, decimals: 0, is_evm: true, name: 7 as unknown as string } })
      )
    ).toMatchObject({ decimals: 0, is_evm: true, name: null })
  })
  it("a chain: each column holds the value its name says; no fee assets is an empty list", () => {
    const chain = {
      chain_id: "interwoven-1",
      chain_name: "initia",
      pretty_name: "Initia",
      chain_type: "cosmos",
      bech32_prefix: "init",
      is_testnet: false,
      fee_assets: [{ denom: "uinit" }, { denom: "uusdc" }]
    }
    expect(named(routerChains.columns, routerChains.toRow({ sampledAt, chain }))).toEqual({
      sampled_at: sampledAt,
      chain_id: "interwoven-1",
      chain_name: "initia",
      pretty_name: "Initia",
      chain_type: "cosmos",
      bech32_prefix: "init",
      is_testnet: false,
      fee_denoms: '["uinit","uusdc"]'
    })
    expect(named(routerChains.columns, routerChains.toRow({ sampledAt, chain: { chain_id: "1" } }))).toEqual({
      sampled_at: sampledAt,
      chain_id: "1",
      chain_name: null,
      pretty_name: null,
      chain_type: null,
      bech32_prefix: null,
      is_testnet: null,
      fee_denoms: "[]"
    })
    expect(
      named(routerChains.columns, routerChains.toRow({ sampledAt, chain: { chain_id: "1", fee_assets: null, is_testnet: true } }))
    ).toMatchObject({ fee_denoms: "[]", is_testnet: true })
  })
})

describe("hex helpers", () => {
  it("hexToDecimal is exact at any size; no bytes is no value", () => {
    expect(hexToDecimal("0x0")).toBe("0")
    expect(hexToDecimal("0x3b9aca00")).toBe("1000000000")
    expect(hexToDecimal("0x" + "f".repeat(64))).toBe((2n ** 256n - 1n).toString())
    expect(hexToDecimal("0x")).toBeNull()
    expect(hexToDecimal("")).toBeNull()
    expect(hexToDecimal(null)).toBeNull()
    expect(hexToDecimal(undefined)).toBeNull()
  })
  it("hexToNumber reads a quantity", () => {
    expect(hexToNumber("0x0")).toBe(0)
    expect(hexToNumber("0x1f")).toBe(31)
    expect(hexToNumber("0x5208")).toBe(21000)
  })
})
