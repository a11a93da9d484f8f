-- Which time grain suits this lake for charts over time? The smallest bucket width (1 s up to 30
-- days) that cuts the blocks' time span into at most 60 buckets, in seconds and as a label; use it
-- as time_bucket(to_seconds(seconds), timestamp).
CREATE OR REPLACE VIEW time_grain AS
WITH span AS (SELECT coalesce(epoch(max(timestamp)) - epoch(min(timestamp)), 0) AS s FROM blocks),
widths(seconds, label) AS (VALUES (1, '1 s'), (5, '5 s'), (10, '10 s'), (30, '30 s'), (60, '1 min'), (300, '5 min'), (900, '15 min'),
  (3600, '1 hour'), (21600, '6 hours'), (86400, '1 day'), (604800, '1 week'), (2592000, '30 days'))
SELECT seconds, label FROM widths, span
WHERE span.s / seconds <= 60 OR seconds = 2592000
ORDER BY seconds LIMIT 1;
