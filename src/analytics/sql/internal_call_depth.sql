-- How deep do internal call trees go? Per depth (0 = the top call): calls, distinct txs and the
-- mix of call types; depth follows parent_index within each tx's DFS-ordered trace.
CREATE OR REPLACE VIEW internal_call_depth AS
WITH RECURSIVE tree(hash, idx, depth) AS (
  SELECT hash, "index", 0 FROM evm_internal_txs WHERE parent_index = -1
  UNION ALL
  SELECT c.hash, c."index", tree.depth + 1
  FROM evm_internal_txs c JOIN tree ON c.hash = tree.hash AND c.parent_index = tree.idx
)
SELECT tree.depth,
       count(*) AS calls,
       count(DISTINCT tree.hash) AS txs,
       count(*) FILTER (WHERE i.type = 'CALL') AS call,
       count(*) FILTER (WHERE i.type = 'STATICCALL') AS staticcall,
       count(*) FILTER (WHERE i.type = 'DELEGATECALL') AS delegatecall,
       count(*) FILTER (WHERE i.type LIKE 'CREATE%') AS "create"
FROM tree JOIN evm_internal_txs i ON i.hash = tree.hash AND i."index" = tree.idx
GROUP BY tree.depth
ORDER BY tree.depth;
