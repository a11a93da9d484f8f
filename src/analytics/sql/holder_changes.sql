-- Whose balance moved between two rich-list snapshots? Per denom, for each snapshot and the one
-- before it: accounts whose amount changed (new holders and holders gone included), with the delta.
CREATE OR REPLACE VIEW holder_changes AS
WITH snaps AS (
  SELECT denom, snapshot_height AS to_snapshot,
         lag(snapshot_height) OVER (PARTITION BY denom ORDER BY snapshot_height) AS from_snapshot
  FROM (SELECT DISTINCT denom, snapshot_height FROM holders)
), pairs AS (
  SELECT * FROM snaps WHERE from_snapshot IS NOT NULL
), old AS (
  SELECT p.denom, p.from_snapshot, p.to_snapshot, h.account_address, h.amount
  FROM pairs p JOIN holders h ON h.denom = p.denom AND h.snapshot_height = p.from_snapshot
), new AS (
  SELECT p.denom, p.from_snapshot, p.to_snapshot, h.account_address, h.amount
  FROM pairs p JOIN holders h ON h.denom = p.denom AND h.snapshot_height = p.to_snapshot
)
SELECT coalesce(o.denom, n.denom) AS denom,
       coalesce(o.from_snapshot, n.from_snapshot) AS from_snapshot,
       coalesce(o.to_snapshot, n.to_snapshot) AS to_snapshot,
       coalesce(o.account_address, n.account_address) AS account_address,
       o.amount AS old_amount, n.amount AS new_amount,
       coalesce(n.amount, 0) - coalesce(o.amount, 0) AS delta
FROM old o FULL OUTER JOIN new n
  ON o.denom = n.denom AND o.from_snapshot = n.from_snapshot AND o.account_address = n.account_address
WHERE o.amount IS DISTINCT FROM n.amount
ORDER BY 1, 2, 3, 4;
