-- What does a route cost, and how reliably is one found? Per pair, option variant and amount:
-- samples, availability (share of quotes that returned a route), median output and effective
-- rate, mean fee share of the USD input, median price impact and median estimated duration.
CREATE OR REPLACE VIEW route_quote_stats AS
SELECT pair, variant, amount_in,
       count(*) AS samples,
       avg(CASE WHEN ok THEN 1.0 ELSE 0.0 END) AS availability,
       median(amount_out) AS median_amount_out,
       median(effective_rate) AS median_effective_rate,
       avg(fees_usd / nullif(usd_amount_in, 0)) AS mean_fee_share,
       median(price_impact_percent) AS median_price_impact_percent,
       median(estimated_duration_s) AS median_estimated_duration_s,
       mode(error_kind) FILTER (WHERE NOT ok) AS usual_error
FROM route_quotes
GROUP BY pair, variant, amount_in
ORDER BY pair, variant, amount_in;
