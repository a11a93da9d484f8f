-- Which messages do people send? Per message type: how many messages and txs carry it, its share
-- of all messages, how often its txs fail, and the mean gas of those txs.
CREATE OR REPLACE VIEW msg_type_mix AS
SELECT message_type,
       count(*) AS messages,
       count(DISTINCT tx_hash) AS txs,
       count(*) / sum(count(*)) OVER () AS share,
       avg(CASE WHEN code <> 0 THEN 1.0 ELSE 0.0 END) AS failure_rate,
       avg(gas_used) AS mean_gas_used
FROM (SELECT unnest(message_types) AS message_type, tx_hash, code, gas_used FROM txs)
GROUP BY message_type
ORDER BY messages DESC, message_type;
