-- Who did something, when, and on which side? One row per account action: a cosmos tx sent
-- (txs.sender_address), an EVM tx sent (evm_txs.from_address), a token sent or received
-- (token_transfers), every account as its canonical 0x-hex address so that both sides name it
-- alike. Each tx counts once: an Ethereum tx is also a cosmos tx on minievm (one MsgCall or
-- MsgCreate whose memo holds the Ethereum tx's fee caps, x/evm/types/txutils.go), counted on the
-- EVM side by its receipt; an EVM row that stands for a cosmos tx (evm_txs.is_cosmos_tx) has no
-- sender, and its cosmos tx counts.
CREATE OR REPLACE VIEW account_activity AS
SELECT timestamp, sender_address AS account_address, 'cosmos' AS side, 'sent a tx' AS action FROM txs
WHERE sender_address IS NOT NULL
  AND NOT (len(message_types) = 1 AND message_types[1] IN ('/minievm.evm.v1.MsgCall', '/minievm.evm.v1.MsgCreate')
           AND CASE WHEN json_valid(memo) THEN json_exists(memo, '$.gas_fee_cap') AND json_exists(memo, '$.gas_tip_cap') ELSE false END)
UNION ALL
SELECT timestamp, from_address, 'evm', 'sent a tx' FROM evm_txs WHERE from_address IS NOT NULL
UNION ALL
SELECT timestamp, from_address, source, 'sent a token' FROM token_transfers WHERE from_address IS NOT NULL
UNION ALL
SELECT timestamp, to_address, source, 'received a token' FROM token_transfers WHERE to_address IS NOT NULL;
