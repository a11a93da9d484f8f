/** Reads an export folder back with DuckDB, as a user would. */
import { DuckDBInstance } from "@duckdb/node-api"
import { existsSync } from "node:fs"
import { join } from "node:path"

export const queryLake = async (sql: string): Promise<Array<Record<string, any>>> => {
  const instance = await DuckDBInstance.create(":memory:")
  const conn = await instance.connect()
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, any>>
  } finally {
    conn.closeSync()
    instance.closeSync()
  }
}

/** `read_parquet` over a dataset's files with hive partitioning, as the README documents. */
export const scan = (out: string, dataset: string) => `read_parquet('${join(out, dataset).replace(/'/g, "''")}/**/*.parquet', hive_partitioning = true, union_by_name = true)`

export const hasDataset = (out: string, dataset: string) => existsSync(join(out, dataset, "_manifest.json"))

const KEYS: Record<string, string> = {
  blocks: "height",
  txs: "height, txhash",
  evm_txs: "block_number, transaction_index",
  evm_logs: "block_number, log_index",
  evm_internal_txs: "height, hash, index",
  nft_collections: "object_addr",
  nft_tokens: "collection_addr, token_id",
  holders: "denom, account"
}
const SNAPSHOTS = new Set(["nft_collections", "nft_tokens", "holders"])

/** Every row of the named datasets as sorted JSON lines (snapshot_time and partition columns left out). */
export const dumpLake = async (out: string, names: ReadonlyArray<string> = Object.keys(KEYS)) => {
  const result: Record<string, Array<string>> = {}
  for (const name of names) {
    const rows = await queryLake(`SELECT * EXCLUDE (${SNAPSHOTS.has(name) ? "snapshot_time" : "height_bucket"}) FROM ${scan(out, name)} ORDER BY ${KEYS[name]}`)
    result[name] = rows.map((r) => JSON.stringify(r, (_, v) => (typeof v === "bigint" ? v.toString() : v)))
  }
  return result
}
