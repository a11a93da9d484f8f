/**
 * The project's own OpenAPI 3.0 document of the indexer API, served at /swagger/doc.json.
 * Written from the reference material (the real swagger, the Go structs and the wire samples),
 * with full response schemas for every endpoint, including those the real swagger leaves out.
 * `nullable` marks what Go prints as null.
 */
type Schema = Record<string, unknown>

const str: Schema = { type: "string" }
const int: Schema = { type: "integer" }
const nullableStr: Schema = { type: "string", nullable: true }
const decimal: Schema = { type: "string", pattern: "^-?[0-9]+$" }
const hexQty: Schema = { type: "string", pattern: "^0x[0-9a-f]+$" }
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` })
const obj = (properties: Record<string, Schema>, required = Object.keys(properties)): Schema => ({
  type: "object",
  properties,
  required
})
const arr = (items: Schema): Schema => ({ type: "array", items })

const schemas: Record<string, Schema> = {
  "common.PaginationResponse": obj({ previous_key: nullableStr, next_key: nullableStr, total: decimal }),
  "status.StatusResponse": obj(
    {
      version: str,
      commit_hash: str,
      chain_id: str,
      height: int,
      internal_tx_height: int,
      rich_list_height: int,
      evm_ret_cleanup_height: int,
      tx_account_cleanup_sequence: int,
      tx_account_cleanup_deleted: int,
      tx_account_cleanup_inserted: int
    },
    ["version", "commit_hash", "chain_id", "height"]
  ),
  "block.AvgBlockTimeResponse": obj({ avg_block_time: { type: "number" } }),
  "types.Coin": obj({ denom: str, amount: decimal }),
  "block.Proposer": obj({ moniker: str, identity: str, operator_address: str }),
  "block.Block": obj({
    chain_id: str,
    height: decimal,
    hash: { type: "string", pattern: "^[0-9A-F]{64}$" },
    block_time: decimal,
    timestamp: { type: "string", format: "date-time" },
    gas_used: decimal,
    gas_wanted: decimal,
    tx_count: decimal,
    total_fee: arr(ref("types.Coin")),
    proposer: ref("block.Proposer")
  }),
  "block.BlocksResponse": obj({ blocks: arr(ref("block.Block")), pagination: ref("common.PaginationResponse") }),
  "block.BlockResponse": obj({ block: ref("block.Block") }),
  "tx.Event": obj({ type: str, attributes: arr(obj({ key: str, value: str, index: { type: "boolean" } }, ["key", "value"])) }, ["type"]),
  "tx.Tx": obj({
    txhash: { type: "string", pattern: "^[0-9A-F]{64}$" },
    height: decimal,
    codespace: str,
    code: { type: "integer", minimum: 0 },
    data: str,
    raw_log: str,
    logs: arr({ type: "object" }),
    info: str,
    gas_wanted: decimal,
    gas_used: decimal,
    tx: obj({ body: { type: "object" }, auth_info: { type: "object" }, signatures: arr(str) }),
    timestamp: { type: "string", format: "date-time" },
    // a tx result without events is null (cometbft's JSON encoder writes a nil list so)
    events: { ...arr(ref("tx.Event")), nullable: true }
  }),
  "tx.TxsResponse": obj({ txs: arr(ref("tx.Tx")), pagination: ref("common.PaginationResponse") }),
  "tx.TxResponse": obj({ tx: ref("tx.Tx") }),
  "tx.EvmLog": obj({
    address: str,
    topics: arr(str),
    data: str,
    blockNumber: hexQty,
    transactionHash: str,
    transactionIndex: hexQty,
    blockHash: str,
    logIndex: hexQty,
    removed: { type: "boolean" }
  }),
  "tx.EvmTx": obj({
    blockHash: str,
    blockNumber: hexQty,
    contractAddress: nullableStr,
    cumulativeGasUsed: hexQty,
    effectiveGasPrice: hexQty,
    from: str,
    gasUsed: hexQty,
    logs: arr(ref("tx.EvmLog")),
    logsBloom: str,
    status: { type: "string", enum: ["0x0", "0x1"] },
    to: str,
    transactionHash: str,
    transactionIndex: hexQty,
    type: hexQty
  }),
  "tx.EvmTxsResponse": obj({ txs: arr(ref("tx.EvmTx")), pagination: ref("common.PaginationResponse") }),
  "tx.EvmTxResponse": obj({ tx: ref("tx.EvmTx") }),
  "tx.EvmInternalTx": obj({
    height: int,
    hash: str,
    parent_index: { type: "integer", minimum: -1 },
    index: { type: "integer", minimum: 0 },
    type: str,
    from: str,
    to: str,
    input: str,
    output: str,
    value: str,
    gas: str,
    gasUsed: str
  }),
  "tx.EvmInternalTxsResponse": obj({ internal_txs: arr(ref("tx.EvmInternalTx")), pagination: ref("common.PaginationResponse") }),
  "nft.NftHandle": obj({ handle: str, length: int }),
  "nft.CollectionDetail": obj({ creator: str, name: str, origin_name: str, nfts: ref("nft.NftHandle") }),
  "nft.Collection": obj({
    object_addr: str,
    collection: ref("nft.CollectionDetail"),
    height: int,
    timestamp: { type: "string", format: "date-time" }
  }),
  "nft.CollectionsResponse": obj({ collections: arr(ref("nft.Collection")), pagination: ref("common.PaginationResponse") }),
  "nft.CollectionResponse": obj({ collection: ref("nft.Collection") }),
  "nft.NftDetails": obj({ token_id: str, uri: str }),
  "nft.Nft": obj({
    collection_addr: str,
    collection_name: str,
    collection_origin_name: str,
    object_addr: str,
    owner: str,
    nft: ref("nft.NftDetails"),
    height: int,
    timestamp: { type: "string", format: "date-time" }
  }),
  "nft.NftsResponse": obj({ tokens: arr(ref("nft.Nft")), pagination: ref("common.PaginationResponse") }),
  "richlist.TokenHolder": obj({ account: str, amount: decimal }),
  "richlist.TokenHoldersResponse": obj({ holders: arr(ref("richlist.TokenHolder")), pagination: ref("common.PaginationResponse") })
}

const q = (name: string, type: string, description: string, extra: Schema = {}): Schema => ({
  name,
  in: "query",
  required: false,
  description,
  schema: { type, ...extra }
})
const path = (name: string, type = "string"): Schema => ({ name, in: "path", required: true, schema: { type } })
const PAGE = [
  q("pagination.key", "string", "next_key of the previous page (base64)"),
  q("pagination.offset", "integer", "rows to skip; honoured on the first page only in cursor mode", { minimum: 0 }),
  q("pagination.limit", "integer", "1..1000, default 100", { minimum: 1, maximum: 1000 }),
  q("pagination.count_total", "boolean", "default true"),
  q("pagination.reverse", "boolean", "default true (descending)")
]
const BLOCK_PAGE = PAGE.filter((p) => p.name !== "pagination.count_total")
const MSGS = {
  name: "msgs",
  in: "query",
  required: false,
  description: "message type, repeated (msgs=a&msgs=b), no leading slash",
  schema: arr(str),
  style: "form",
  explode: true
}
const IS_SIGNER = q("is_signer", "boolean", "only txs the account signed")
const ORDER_BY = q("order_by", "string", "sort column", { enum: ["token_id", "height"] })

const errors = {
  "400": { description: "bad parameter (plain text body)", content: { "text/plain": { schema: str } } },
  "404": { description: "not found (plain text body)", content: { "text/plain": { schema: str } } },
  "500": { description: "Internal Server Error (plain text body)", content: { "text/plain": { schema: str } } }
}
const get = (summary: string, schema: string, parameters: Array<Schema> = [], tags: Array<string> = []) => ({
  get: {
    summary,
    tags,
    parameters,
    responses: { "200": { description: "OK", content: { "application/json": { schema: ref(schema) } } }, ...errors }
  }
})

const paths = (evm: boolean, richListElsewhere: boolean): Record<string, unknown> => {
  const all: Record<string, unknown> = {
    "/status": get("Indexer status and watermarks", "status.StatusResponse", [], ["status"]),
    "/indexer/block/v1/avg_blocktime": get("Mean block time (s) over the last 100 blocks", "block.AvgBlockTimeResponse", [], ["block"]),
    "/indexer/block/v1/blocks": get("Blocks (height cursor)", "block.BlocksResponse", BLOCK_PAGE, ["block"]),
    "/indexer/block/v1/blocks/{height}": get("Block by height", "block.BlockResponse", [path("height")], ["block"]),
    "/indexer/tx/v1/txs": get("Txs (sequence cursor)", "tx.TxsResponse", [...PAGE, MSGS], ["tx"]),
    "/indexer/tx/v1/txs/by_account/{account}": get(
      "Txs of an account",
      "tx.TxsResponse",
      [path("account"), ...PAGE, IS_SIGNER, MSGS],
      ["tx"]
    ),
    "/indexer/tx/v1/txs/by_height/{height}": get("Txs at a height", "tx.TxsResponse", [path("height", "integer"), ...PAGE, MSGS], ["tx"]),
    "/indexer/tx/v1/txs/{tx_hash}": get("Tx by hash", "tx.TxResponse", [path("tx_hash")], ["tx"]),
    "/indexer/tx/v1/evm-txs": get("EVM receipts (sequence cursor)", "tx.EvmTxsResponse", PAGE, ["evm"]),
    "/indexer/tx/v1/evm-txs/by_account/{account}": get(
      "EVM receipts of an account",
      "tx.EvmTxsResponse",
      [path("account"), ...PAGE, IS_SIGNER],
      ["evm"]
    ),
    "/indexer/tx/v1/evm-txs/by_height/{height}": get(
      "EVM receipts at a height",
      "tx.EvmTxsResponse",
      [path("height", "integer"), ...PAGE],
      ["evm"]
    ),
    "/indexer/tx/v1/evm-txs/{tx_hash}": get("EVM receipt by hash", "tx.EvmTxResponse", [path("tx_hash")], ["evm"]),
    "/indexer/tx/v1/evm-internal-txs": get("Internal txs (sequence cursor)", "tx.EvmInternalTxsResponse", PAGE, ["evm"]),
    "/indexer/tx/v1/evm-internal-txs/by_account/{account}": get(
      "Internal txs of an account",
      "tx.EvmInternalTxsResponse",
      [path("account"), ...PAGE],
      ["evm"]
    ),
    "/indexer/tx/v1/evm-internal-txs/by_height/{height}": get(
      "Internal txs at a height",
      "tx.EvmInternalTxsResponse",
      [path("height", "integer"), ...PAGE],
      ["evm"]
    ),
    "/indexer/tx/v1/evm-internal-txs/{tx_hash}": get(
      "Internal txs of an EVM tx",
      "tx.EvmInternalTxsResponse",
      [path("tx_hash"), ...PAGE],
      ["evm"]
    ),
    "/indexer/nft/v1/collections": get("NFT collections (offset key)", "nft.CollectionsResponse", PAGE, ["nft"]),
    "/indexer/nft/v1/collections/by_account/{account}": get(
      "Collections where the account owns an NFT",
      "nft.CollectionsResponse",
      [path("account"), ...PAGE],
      ["nft"]
    ),
    "/indexer/nft/v1/collections/by_name/{name}": get(
      "Collections by name (substring of alphanumerics)",
      "nft.CollectionsResponse",
      [path("name"), ...PAGE],
      ["nft"]
    ),
    "/indexer/nft/v1/collections/{collection_addr}": get(
      "Collection by address",
      "nft.CollectionResponse",
      [path("collection_addr")],
      ["nft"]
    ),
    "/indexer/nft/v1/tokens/by_account/{account}": get(
      "NFTs owned by an account",
      "nft.NftsResponse",
      [path("account"), q("collection_addr", "string", "filter"), q("token_id", "string", "filter"), ORDER_BY, ...PAGE],
      ["nft"]
    ),
    "/indexer/nft/v1/tokens/by_collection/{collection_addr}": get(
      "NFTs of a collection",
      "nft.NftsResponse",
      [path("collection_addr"), q("token_id", "string", "filter"), ORDER_BY, ...PAGE],
      ["nft"]
    ),
    "/indexer/nft/v1/txs/{collection_addr}/{token_id}": get(
      "Txs that touched an NFT",
      "tx.TxsResponse",
      [path("collection_addr"), path("token_id"), ...PAGE],
      ["nft"]
    ),
    "/indexer/richlist/v1/{denom}": get(
      "Token holders by amount (offset key)",
      "richlist.TokenHoldersResponse",
      [path("denom"), ...PAGE],
      ["richlist"]
    )
  }
  // The real server strips /evm- paths on other VMs (and the rich list where it is served on EVM only).
  if (!evm) for (const p of Object.keys(all)) if (p.includes("/evm-") || (!richListElsewhere && p.includes("/richlist/"))) delete all[p]
  return all
}

export const openApiDocument = (evm = true, richListElsewhere = true) => ({
  openapi: "3.0.3",
  info: {
    title: "Rollup indexer API (chain-lake devnet)",
    version: "v1",
    description:
      "Indexer API as served by the real indexer and the chain-lake devnet. Errors are plain text. Numbers are strings where the wire has strings."
  },
  paths: paths(evm, richListElsewhere),
  components: { schemas }
})
