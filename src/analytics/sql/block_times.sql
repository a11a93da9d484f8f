-- How fast are blocks produced? Per UTC day: the blocks, and the mean, median and p95 of
-- block_interval_ms (ms since the previous block; the first indexed block has none: NULL, or 0 in
-- lakes of an older chain-lake, and counts among the blocks only); and the mean over the last 100
-- blocks as the avg_blocktime endpoint defines it ((newest - oldest timestamp) / (n - 1), in
-- seconds), to compare with GET /indexer/block/v1/avg_blocktime: from the intervals of the newest
-- 99, each cut to the millisecond, so it may fall short of the endpoint's by up to a millisecond.
CREATE OR REPLACE VIEW block_times AS
WITH per_day AS (
  SELECT CAST(timestamp AS DATE) AS day, count(*) AS blocks,
         avg(block_interval_ms) FILTER (WHERE block_interval_ms > 0) AS mean_ms,
         quantile_cont(block_interval_ms, 0.5) FILTER (WHERE block_interval_ms > 0) AS p50_ms,
         quantile_cont(block_interval_ms, 0.95) FILTER (WHERE block_interval_ms > 0) AS p95_ms
  FROM blocks GROUP BY ALL
), last100 AS (
  SELECT (sum(block_interval_ms) - arg_min(block_interval_ms, height)) / 1000.0 / nullif(count(*) - 1, 0) AS last100_mean_s
  FROM (SELECT height, block_interval_ms FROM blocks ORDER BY height DESC LIMIT 100)
)
SELECT per_day.*, last100.last100_mean_s FROM per_day, last100 ORDER BY day;
