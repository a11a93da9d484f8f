/**
 * What runExport checks before it starts, as pure functions: the page size and height bounds
 * (exportOptionsProblem), and the dataset names (datasetNamesProblem: unknown ones, and sampled
 * ones, which their samplers write). Every bound is tested on both sides.
 */
import { describe, expect, it } from "vitest"
import type { Dataset } from "../../src/engine/Dataset.js"
import { datasetNamesProblem, exportOptionsProblem } from "../../src/engine/export.js"

describe("exportOptionsProblem", () => {
  it("takes page sizes from 1 to the source's largest page (the indexer's 1000) and nothing else", () => {
    for (const ok of [1, 2, 999, 1000]) expect(exportOptionsProblem(ok, 1000, {}), String(ok)).toBeUndefined()
    for (const bad of [0, -1, 1001, 2.5, Number.NaN])
      expect(exportOptionsProblem(bad, 1000, {})).toBe(`pageSize must be 1..1000 (the source's largest page), got ${bad}`)
    expect(exportOptionsProblem(51, 50, {})).toBe("pageSize must be 1..50 (the source's largest page), got 51")
  })

  it("takes a from-height up to the to-height, either alone, or neither", () => {
    for (const ok of [{}, { fromHeight: 5 }, { toHeight: 5 }, { fromHeight: 5, toHeight: 5 }, { fromHeight: 4, toHeight: 5 }])
      expect(exportOptionsProblem(100, 1000, ok), JSON.stringify(ok)).toBeUndefined()
    expect(exportOptionsProblem(100, 1000, { fromHeight: 6, toHeight: 5 })).toBe("fromHeight 6 is above toHeight 5")
  })
})

describe("datasetNamesProblem", () => {
  const catalog = [
    { name: "blocks", kind: "append" },
    { name: "holders", kind: "snapshot" },
    { name: "route_quotes", kind: "sample" },
    { name: "transfers", kind: "sample" }
  ] as unknown as ReadonlyArray<Dataset>

  it("takes no names (every exported dataset) or known exported ones", () => {
    expect(datasetNamesProblem(catalog, undefined)).toBeUndefined()
    expect(datasetNamesProblem(catalog, ["blocks", "holders"])).toBeUndefined()
    // an empty list (`--datasets ""`, an unset shell variable) names nothing: an export of nothing is a mistake
    expect(datasetNamesProblem(catalog, [])).toMatch(/^no dataset named; known: blocks, /)
  })

  it("names sampled datasets and says which command writes them, before unknown names", () => {
    expect(datasetNamesProblem(catalog, ["blocks", "route_quotes"])).toBe(
      "route_quotes is sampled from the router, not exported: use chain-lake sample-routes or track"
    )
    expect(datasetNamesProblem(catalog, ["route_quotes", "nope", "transfers"])).toBe(
      "route_quotes, transfers are sampled from the router, not exported: use chain-lake sample-routes or track"
    )
  })

  it("names unknown datasets and lists the exported ones", () => {
    expect(datasetNamesProblem(catalog, ["blocks", "nope", "txz"])).toBe("unknown dataset nope, txz; known: blocks, holders")
    // a name in other case, or the stem of datasets, is offered
    expect(datasetNamesProblem(catalog, ["BLOCKS"])).toBe("unknown dataset BLOCKS (did you mean blocks?); known: blocks, holders")
  })
})
