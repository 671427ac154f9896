-- dynindex.index_stats: items, bytes, sparseness, average entry size and
-- observed write amplification of a sparse index against a full one.
\set VERBOSITY terse
SELECT dynindex.api('CreateTable', '{"TableName":"stats","BillingMode":"PAY_PER_REQUEST",
 "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"kind","AttributeType":"S"},{"AttributeName":"flag","AttributeType":"S"}],
 "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
 "LocalSecondaryIndexes":[{"IndexName":"lsiFlag","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"flag","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}],
 "GlobalSecondaryIndexes":[
  {"IndexName":"full","KeySchema":[{"AttributeName":"kind","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}},
  {"IndexName":"sparse","KeySchema":[{"AttributeName":"flag","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}]}') IS NOT NULL;
-- ten items {pk p (3), sk 01..10 (4), kind k (5), body 100 x (104)} = 116 bytes;
-- items 01..03 also carry flag f (5): 121 bytes.
-- table: 10 items, 7*116 + 3*121 = 1175 bytes; full (ALL): the same;
-- sparse and lsiFlag (KEYS_ONLY {pk, sk, flag}): 3 entries of 12 bytes
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'stats', 'Item',
  jsonb_build_object('pk', '{"S":"p"}'::jsonb, 'sk', jsonb_build_object('S', lpad(i::text, 2, '0')),
                     'kind', '{"S":"k"}'::jsonb, 'body', jsonb_build_object('S', repeat('x', 100)))
  || CASE WHEN i <= 3 THEN '{"flag":{"S":"f"}}'::jsonb ELSE '{}'::jsonb END)))
  FROM generate_series(1, 10) i;
SELECT dynindex.wait_for_indexes('stats');
SELECT pg_stat_force_next_flush();
-- 10 table writes; full: 10 index writes (1.0 per table write), sparse and lsiFlag: 3 (0.3)
SELECT * FROM dynindex.index_stats('stats');
-- moving two flagged items' key: 2 writes per index they are in (a delete and an
-- insert): 2 more table writes; sparse 3 + 4 = 7, lsiFlag 3 + 4 = 7.  full keeps its key
-- but its ALL entry changed: DynamoDB charges 1 (51_capacity_indexes); the GSI worker
-- rewrites the entry as a delete and an insert and counts what it did: 10 + 4 = 14
SELECT count(dynindex.api('UpdateItem', jsonb_build_object('TableName', 'stats',
  'Key', jsonb_build_object('pk', '{"S":"p"}'::jsonb, 'sk', jsonb_build_object('S', lpad(i::text, 2, '0'))),
  'UpdateExpression', 'SET flag = :g', 'ExpressionAttributeValues', '{":g":{"S":"g"}}'::jsonb)))
  FROM generate_series(1, 2) i;
SELECT dynindex.wait_for_indexes('stats');
SELECT pg_stat_force_next_flush();
SELECT index_name, index_type, items, table_writes, index_writes, write_amplification FROM dynindex.index_stats('stats');
SELECT * FROM dynindex.index_stats('nope');
SELECT dynindex.api('DeleteTable', '{"TableName":"stats"}') IS NOT NULL;
