-- What does a route cost, and how reliably is one found? Per pair, option variant and amount:
-- samples, availability (share of quotes that returned a route), median output and effective
-- rate, mean fee share of the USD input, median price impact and median estimated duration.
-- median_amount_out is NULL where an output passes DECIMAL(38,0), as amount_out is (a median of
-- the others would be a wrong one); median_amount_out_text is exact: the middle output a quote
-- returned (the lower of the two middle ones of an even count, where median_amount_out takes
-- their mean). Files older than amount_out_text read it NULL: their amount_out stands in.
CREATE OR REPLACE VIEW route_quote_stats AS
SELECT pair, variant, amount_in,
       count(*) AS samples,
       avg(CASE WHEN ok THEN 1.0 ELSE 0.0 END) AS availability,
       CASE WHEN count(amount_out) = count(coalesce(amount_out_text, amount_out::VARCHAR))
            THEN median(amount_out) END AS median_amount_out,
       quantile_disc(coalesce(amount_out_text, amount_out::VARCHAR)::BIGNUM, 0.5)::VARCHAR AS median_amount_out_text,
       median(effective_rate) AS median_effective_rate,
       avg(fees_usd / nullif(usd_amount_in, 0)) AS mean_fee_share,
       median(price_impact_percent) AS median_price_impact_percent,
       median(estimated_duration_s) AS median_estimated_duration_s,
       mode(error_kind) FILTER (WHERE NOT ok) AS usual_error
FROM route_quotes
GROUP BY pair, variant, amount_in
ORDER BY pair, variant, amount_in;
