-- Who did something, when, and on which side? One row per account action: a cosmos tx sent
-- (txs.sender_address), an EVM tx sent (evm_txs.from_address), a token sent or received
-- (token_transfers), every account as its canonical 0x-hex address so that both sides name it
-- alike. An EVM row that stands for a cosmos tx (evm_txs.is_cosmos_tx) has no sender: its cosmos
-- tx counts, once.
CREATE OR REPLACE VIEW account_activity AS
SELECT timestamp, sender_address AS account_address, 'cosmos' AS side, 'sent a tx' AS action FROM txs WHERE sender_address IS NOT NULL
UNION ALL
SELECT timestamp, from_address, 'evm', 'sent a tx' FROM evm_txs WHERE from_address IS NOT NULL
UNION ALL
SELECT timestamp, from_address, source, 'sent a token' FROM token_transfers WHERE from_address IS NOT NULL
UNION ALL
SELECT timestamp, to_address, source, 'received a token' FROM token_transfers WHERE to_address IS NOT NULL;
