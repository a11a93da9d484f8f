-- How concentrated is each token? Per denom and rich-list snapshot: holders with a positive
-- balance, total supply held, the top 10's share, the Gini coefficient and the
-- Herfindahl-Hirschman index (sum of squared shares, 0..1).
CREATE OR REPLACE VIEW holder_concentration AS
WITH h AS (
  SELECT snapshot_height, denom, amount AS exact, CAST(amount AS DOUBLE) AS amount,
         row_number() OVER (PARTITION BY snapshot_height, denom ORDER BY amount DESC, account_address) AS rank_desc,
         row_number() OVER (PARTITION BY snapshot_height, denom ORDER BY amount ASC, account_address) AS rank_asc,
         count(*) OVER (PARTITION BY snapshot_height, denom) AS n,
         sum(CAST(amount AS DOUBLE)) OVER (PARTITION BY snapshot_height, denom) AS total
  FROM holders WHERE amount > 0
)
SELECT snapshot_height, denom,
       any_value(n) AS holders,
       sum(exact) AS total_amount,
       sum(amount) FILTER (WHERE rank_desc <= 10) / any_value(total) AS top10_share,
       -- Gini = (2 * sum(i * x_i) / (n * sum(x))) - (n + 1) / n, with x ascending and i from 1
       2 * sum(rank_asc * amount) / (any_value(n) * any_value(total)) - (any_value(n) + 1) / any_value(n) AS gini,
       sum((amount / total) * (amount / total)) AS hhi
FROM h
GROUP BY snapshot_height, denom
ORDER BY snapshot_height, denom;
