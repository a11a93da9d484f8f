-- Which NFTs changed hands between two ownership snapshots? For each snapshot and the one before
-- it: tokens transferred (owner differs), minted (only in the later one) and burned (only in the
-- earlier one). Filter on from_snapshot/to_snapshot to compare any adjacent pair.
CREATE OR REPLACE VIEW nft_ownership_changes AS
WITH snaps AS (
  SELECT snapshot_height AS to_snapshot, lag(snapshot_height) OVER (ORDER BY snapshot_height) AS from_snapshot
  FROM (SELECT DISTINCT snapshot_height FROM nft_tokens)
), pairs AS (
  SELECT * FROM snaps WHERE from_snapshot IS NOT NULL
), old AS (
  SELECT p.from_snapshot, p.to_snapshot, t.collection_address, t.token_id, t.owner_address
  FROM pairs p JOIN nft_tokens t ON t.snapshot_height = p.from_snapshot
), new AS (
  SELECT p.from_snapshot, p.to_snapshot, t.collection_address, t.token_id, t.owner_address
  FROM pairs p JOIN nft_tokens t ON t.snapshot_height = p.to_snapshot
)
SELECT coalesce(o.from_snapshot, n.from_snapshot) AS from_snapshot,
       coalesce(o.to_snapshot, n.to_snapshot) AS to_snapshot,
       coalesce(o.collection_address, n.collection_address) AS collection_address,
       coalesce(o.token_id, n.token_id) AS token_id,
       o.owner_address AS old_owner_address, n.owner_address AS new_owner_address,
       CASE WHEN o.owner_address IS NULL THEN 'minted' WHEN n.owner_address IS NULL THEN 'burned' ELSE 'transferred' END AS change
FROM old o FULL OUTER JOIN new n
  ON o.from_snapshot = n.from_snapshot AND o.collection_address = n.collection_address AND o.token_id = n.token_id
WHERE o.owner_address IS DISTINCT FROM n.owner_address
ORDER BY 1, 2, 3, 4;
