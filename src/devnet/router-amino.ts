/**
 * The messages the devnet router hands a wallet to sign, as the real router does: `msgs[].msg`
 * (and `/op-hook`'s `hook[].msg`) is the amino JSON *value* of the message, never `{type, value}`,
 * with the amino field names of each type (interwovenkit amino-decodes it by `msg_type_url`).
 */

export interface CoinJson {
  readonly denom: string
  readonly amount: string
}

/** IBC timeouts are absolute: a fixed far future (2030-01-01) keeps the devnet's answers deterministic. */
const TIMEOUT_TIMESTAMP_NS = "1893456000000000000"

export const MSG_TRANSFER = "/ibc.applications.transfer.v1.MsgTransfer"
export const MSG_DEPOSIT = "/opinit.ophost.v1.MsgInitiateTokenDeposit"
export const MSG_WITHDRAWAL = "/opinit.opchild.v1.MsgInitiateTokenWithdrawal"
export const MSG_EXECUTE_CONTRACT = "/cosmwasm.wasm.v1.MsgExecuteContract"
export const MSG_EVM_CALL = "/minievm.evm.v1.MsgCall"

/** ibc-go's MsgTransfer (amino "cosmos-sdk/MsgTransfer"). */
export const transferValue = (o: { sender: string; receiver: string; token: CoinJson; channel: string; memo: string }) => ({
  source_port: "transfer",
  source_channel: o.channel,
  token: o.token,
  sender: o.sender,
  receiver: o.receiver,
  timeout_height: {},
  timeout_timestamp: TIMEOUT_TIMESTAMP_NS,
  memo: o.memo
})

/** OPinit's deposit from L1 to a rollup (amino "ophost/MsgInitiateTokenDeposit"). */
export const depositValue = (o: { sender: string; bridgeId: string; to: string; amount: CoinJson; data: string }) => ({
  sender: o.sender,
  bridge_id: o.bridgeId,
  to: o.to,
  amount: o.amount,
  data: o.data
})

/** OPinit's withdrawal from a rollup to L1 (amino "opchild/MsgInitiateTokenWithdrawal"). */
export const withdrawalValue = (o: { sender: string; to: string; amount: CoinJson }) => ({ sender: o.sender, to: o.to, amount: o.amount })

/** A CosmWasm contract call (amino "wasm/MsgExecuteContract"): `msg` is the contract's JSON message itself. */
export const executeContractValue = (o: { sender: string; contract: string; msg: unknown; funds: ReadonlyArray<CoinJson> }) => ({
  sender: o.sender,
  contract: o.contract,
  msg: o.msg,
  funds: o.funds
})

/** A minievm call (amino "evm/MsgCall"): hex input without 0x, value in wei as a decimal string. */
export const evmCallValue = (o: { sender: string; contractAddr: string; input: string; value: string }) => ({
  sender: o.sender,
  contract_addr: o.contractAddr,
  input: o.input,
  value: o.value,
  access_list: []
})
