-- How are NFT collections held? Per collection in each ownership snapshot: live tokens, distinct
-- owners, and the share of tokens held by the largest owner.
CREATE OR REPLACE VIEW nft_collection_stats AS
WITH per_owner AS (
  SELECT snapshot_height, collection_address, any_value(collection_name) AS collection_name, owner_address, count(*) AS tokens
  FROM nft_tokens GROUP BY snapshot_height, collection_address, owner_address
)
SELECT snapshot_height, collection_address, any_value(collection_name) AS collection_name,
       sum(tokens) AS tokens, count(*) AS owners, max(tokens) / sum(tokens) AS top_owner_share
FROM per_owner
GROUP BY snapshot_height, collection_address
ORDER BY snapshot_height, tokens DESC, collection_address;
