-- Which messages do people send? Per message type: how many messages and txs carry it, its share
-- of all messages, how often its txs fail, and the mean gas of those txs (each tx counted once,
-- however many of its messages are of the type).
CREATE OR REPLACE VIEW msg_type_mix AS
WITH per_tx AS (
  SELECT message_type, tx_hash, count(*) AS messages, any_value(code) AS code, any_value(gas_used) AS gas_used
  FROM (SELECT unnest(message_types) AS message_type, tx_hash, code, gas_used FROM txs)
  GROUP BY message_type, tx_hash
)
SELECT message_type,
       CAST(sum(messages) AS BIGINT) AS messages,
       count(*) AS txs,
       sum(messages) / sum(sum(messages)) OVER () AS share,
       avg(CASE WHEN code <> 0 THEN 1.0 ELSE 0.0 END) AS failure_rate,
       avg(gas_used) AS mean_gas_used
FROM per_tx
GROUP BY message_type
ORDER BY messages DESC, message_type;
