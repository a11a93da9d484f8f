-- How deep do internal call trees go? Per depth (0 = the top call): calls, distinct txs and the
-- mix of call types; depth follows parent_call_index within each tx's DFS-ordered trace.
CREATE OR REPLACE VIEW internal_call_depth AS
WITH RECURSIVE tree(tx_hash, call_index, depth) AS (
  SELECT tx_hash, call_index, 0 FROM evm_internal_txs WHERE parent_call_index = -1
  UNION ALL
  SELECT c.tx_hash, c.call_index, tree.depth + 1
  FROM evm_internal_txs c JOIN tree ON c.tx_hash = tree.tx_hash AND c.parent_call_index = tree.call_index
)
SELECT tree.depth,
       count(*) AS calls,
       count(DISTINCT tree.tx_hash) AS txs,
       count(*) FILTER (WHERE i.type = 'CALL') AS call_count,
       count(*) FILTER (WHERE i.type = 'STATICCALL') AS staticcall_count,
       count(*) FILTER (WHERE i.type = 'DELEGATECALL') AS delegatecall_count,
       count(*) FILTER (WHERE i.type LIKE 'CREATE%') AS create_count
FROM tree JOIN evm_internal_txs i ON i.tx_hash = tree.tx_hash AND i.call_index = tree.call_index
GROUP BY tree.depth
ORDER BY tree.depth;
