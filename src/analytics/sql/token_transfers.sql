-- Every fungible token movement on both sides of the rollup, as one table: ERC-20 Transfer logs
-- (source = 'evm') and cosmos transfer events (source = 'cosmos'), addresses canonical 0x-hex.
-- On EVM rollups the same coins can show on both sides (minievm backs bank balances with ERC-20
-- contracts): filter on source when adding volumes.
CREATE OR REPLACE VIEW token_transfers AS
SELECT * FROM token_transfers_evm
UNION ALL BY NAME
SELECT * FROM token_transfers_cosmos;
