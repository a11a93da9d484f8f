-- How deep do internal call trees go? Per depth (0 = the top call): calls, distinct txs and the
-- mix of call types; depth follows parent_call_index within each tx's DFS-ordered trace.
-- The calls are read once (MATERIALIZED): each step of the recursion joins them again, and would
-- otherwise scan the Parquet files again.
CREATE OR REPLACE VIEW internal_call_depth AS
WITH RECURSIVE calls AS MATERIALIZED (
  SELECT tx_hash, call_index, parent_call_index, type FROM evm_internal_txs
),
tree(tx_hash, call_index, depth, type) AS (
  SELECT tx_hash, call_index, 0, type FROM calls WHERE parent_call_index = -1
  UNION ALL
  SELECT c.tx_hash, c.call_index, tree.depth + 1, c.type
  FROM calls c JOIN tree ON c.tx_hash = tree.tx_hash AND c.parent_call_index = tree.call_index
)
SELECT depth,
       count(*) AS calls,
       count(DISTINCT tx_hash) AS txs,
       count(*) FILTER (WHERE type = 'CALL') AS call_count,
       count(*) FILTER (WHERE type = 'STATICCALL') AS staticcall_count,
       count(*) FILTER (WHERE type = 'DELEGATECALL') AS delegatecall_count,
       count(*) FILTER (WHERE type LIKE 'CREATE%') AS create_count
FROM tree
GROUP BY depth
ORDER BY depth;
