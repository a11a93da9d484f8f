-- What did each block collect in fees, per denom? One row per denom of each block's total_fee
-- (the indexer's sum over its txs), amounts exact: any fee total is a plain sum(amount).
CREATE OR REPLACE VIEW block_fees AS
SELECT height, timestamp, f.denom AS denom, CAST(f.amount AS DECIMAL(38,0)) AS amount
FROM (SELECT height, timestamp, unnest(from_json(total_fee, '[{"denom":"VARCHAR","amount":"VARCHAR"}]')) AS f FROM blocks);
