-- What did each tx pay in fees, per denom? One row per fee coin of each cosmos tx
-- (auth_info.fee.amount), amounts exact: any fee total is a plain sum(amount).
CREATE OR REPLACE VIEW tx_fees AS
SELECT height, timestamp, tx_hash, code, f.denom AS denom, CAST(f.amount AS DECIMAL(38,0)) AS amount
FROM (SELECT height, timestamp, tx_hash, code, unnest(from_json(fee, '[{"denom":"VARCHAR","amount":"VARCHAR"}]')) AS f FROM txs);
