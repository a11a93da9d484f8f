-- How active is each NFT collection? Per UTC day and collection: mints, transfers and burns from
-- the ERC-721 Transfer logs, and the distinct tokens and owners involved.
CREATE OR REPLACE VIEW nft_transfer_activity AS
SELECT CAST(timestamp AS DATE) AS day, collection_address,
       count(*) FILTER (WHERE kind = 'mint') AS mints,
       count(*) FILTER (WHERE kind = 'transfer') AS transfers,
       count(*) FILTER (WHERE kind = 'burn') AS burns,
       count(DISTINCT token_id) AS tokens,
       count(DISTINCT to_address) FILTER (WHERE kind <> 'burn') AS receivers
FROM nft_transfers
GROUP BY ALL
ORDER BY day, collection_address;
