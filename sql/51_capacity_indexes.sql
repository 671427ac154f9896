-- Index write and read capacity (src/api/capacity.c, docs/capacity.md):
-- 1 when an item enters an index, 2 when its index key changes, 1 when it
-- leaves, 0 when in neither, 1 when only projected attributes change, per
-- 1 KB of the projected entry; LSI reads fetching base items; INDEXES shape;
-- ItemCollectionMetrics on tables with LSIs.  Expectations computed by hand.
\set VERBOSITY default
CREATE FUNCTION cap(op text, req jsonb) RETURNS jsonb LANGUAGE sql
  AS $$ SELECT dynindex.api(op, req) -> 'ConsumedCapacity' $$;

-- ---- GSIs: INCLUDE [title], KEYS_ONLY, ALL on the same key
SELECT dynindex.api('CreateTable', '{"TableName":"ord","BillingMode":"PAY_PER_REQUEST",
 "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"status","AttributeType":"S"}],
 "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
 "GlobalSecondaryIndexes":[
  {"IndexName":"gInc","KeySchema":[{"AttributeName":"status","KeyType":"HASH"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["title"]}},
  {"IndexName":"gKeys","KeySchema":[{"AttributeName":"status","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}},
  {"IndexName":"gAll","KeySchema":[{"AttributeName":"status","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL;

-- o1 = {pk o1 (4), sk a (3), status new (9), title t (6)} = 22 bytes: table 1;
-- enters all three GSIs (entries 22, 16, 22 bytes): 1 each; total 4
SELECT cap('PutItem', '{"TableName":"ord","Item":{"pk":{"S":"o1"},"sk":{"S":"a"},"status":{"S":"new"},"title":{"S":"t"}},"ReturnConsumedCapacity":"INDEXES"}');
-- TOTAL: the same aggregate, no maps (an identical overwrite: the entries do not change: table 1 only)
SELECT cap('PutItem', '{"TableName":"ord","Item":{"pk":{"S":"o1"},"sk":{"S":"a"},"status":{"S":"new"},"title":{"S":"t"}},"ReturnConsumedCapacity":"TOTAL"}');
-- the index key moves (new -> old): 2 per GSI; total 1 + 6 = 7
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o1"},"sk":{"S":"a"}},"UpdateExpression":"SET #s = :v","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":v":{"S":"old"}},"ReturnConsumedCapacity":"INDEXES"}');
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o1"},"sk":{"S":"a"}},"UpdateExpression":"SET #s = :v","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":v":{"S":"new"}},"ReturnConsumedCapacity":"TOTAL"}');
-- only a projected attribute changes (title): gInc 1, gAll 1, gKeys 0 (absent); total 3
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o1"},"sk":{"S":"a"}},"UpdateExpression":"SET title = :v","ExpressionAttributeValues":{":v":{"S":"u"}},"ReturnConsumedCapacity":"INDEXES"}');
-- a non-projected attribute (note) for gInc and gKeys: 0; gAll projects everything: 1; total 2
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o1"},"sk":{"S":"a"}},"UpdateExpression":"SET note = :v","ExpressionAttributeValues":{":v":{"S":"n"}},"ReturnConsumedCapacity":"INDEXES"}');
-- the same value again: no entry changes: table 1 only
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o1"},"sk":{"S":"a"}},"UpdateExpression":"SET note = :v","ExpressionAttributeValues":{":v":{"S":"n"}},"ReturnConsumedCapacity":"INDEXES"}');
-- the key attribute goes away: the item leaves every GSI: 1 each; total 4
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o1"},"sk":{"S":"a"}},"UpdateExpression":"REMOVE #s","ExpressionAttributeNames":{"#s":"status"},"ReturnConsumedCapacity":"INDEXES"}');
-- in no index before or after: table only
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o1"},"sk":{"S":"a"}},"UpdateExpression":"SET note = :v","ExpressionAttributeValues":{":v":{"S":"m"}},"ReturnConsumedCapacity":"INDEXES"}');

-- KEYS_ONLY vs ALL: o2 carries a 3000-byte body
-- o2 = 4 + 3 + 9 + 6 + (4 + 3000) = 3026 bytes: table 3; gInc entry 22: 1;
-- gKeys entry 16: 1; gAll entry 3026: 3; total 8
SELECT cap('PutItem', jsonb_build_object('TableName','ord','ReturnConsumedCapacity','INDEXES','Item',
  '{"pk":{"S":"o2"},"sk":{"S":"a"},"status":{"S":"new"},"title":{"S":"t"}}'::jsonb || jsonb_build_object('body', jsonb_build_object('S', repeat('b', 3000)))));
-- moving it: table 3; gInc 1+1, gKeys 1+1, gAll 3+3 (a delete and a put, each rounded); total 13
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o2"},"sk":{"S":"a"}},"UpdateExpression":"SET #s = :v","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":v":{"S":"old"}},"ReturnConsumedCapacity":"INDEXES"}');
-- shrinking the body to 1 byte in place: table max(3026, 27) = 3; gAll max(3, 1) = 3;
-- gInc, gKeys unchanged; total 6
SELECT cap('UpdateItem', '{"TableName":"ord","Key":{"pk":{"S":"o2"},"sk":{"S":"a"}},"UpdateExpression":"SET body = :v","ExpressionAttributeValues":{":v":{"S":"b"}},"ReturnConsumedCapacity":"INDEXES"}');
-- deleting it (27 bytes): table 1, each GSI 1 (leaves); total 4
SELECT cap('DeleteItem', '{"TableName":"ord","Key":{"pk":{"S":"o2"},"sk":{"S":"a"}},"ReturnConsumedCapacity":"INDEXES"}');
-- a failed conditional write charges the table only
SELECT cap('PutItem', '{"TableName":"ord","Item":{"pk":{"S":"o1"},"sk":{"S":"a"},"status":{"S":"x"}},"ConditionExpression":"attribute_not_exists(pk)","ReturnConsumedCapacity":"INDEXES"}');
-- BatchWriteItem: put o3 (22 bytes, enters 3 GSIs: 1+3) and delete o1 (18 bytes, in no GSI: 1): 5
SELECT cap('BatchWriteItem', '{"RequestItems":{"ord":[{"PutRequest":{"Item":{"pk":{"S":"o3"},"sk":{"S":"a"},"status":{"S":"new"},"title":{"S":"t"}}}},{"DeleteRequest":{"Key":{"pk":{"S":"o1"},"sk":{"S":"a"}}}}]},"ReturnConsumedCapacity":"INDEXES"}');
-- no LSI: no ItemCollectionMetrics even when asked for
SELECT dynindex.api('DeleteItem', '{"TableName":"ord","Key":{"pk":{"S":"o3"},"sk":{"S":"a"}},"ReturnItemCollectionMetrics":"SIZE"}');
-- Query on a GSI: the entry sizes, eventually consistent; only that index's map
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName','ord','Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'q' || i), 'sk', '{"S":"a"}'::jsonb, 'status', '{"S":"q"}'::jsonb,
                     'body', jsonb_build_object('S', repeat('b', 1500)))))) FROM generate_series(1, 3) i;
SELECT dynindex.wait_for_indexes('ord');
-- gKeys entries {pk q1 (4), sk a (3), status q (7)} = 14 bytes x 3 = 42: 0.5
SELECT cap('Query', '{"TableName":"ord","IndexName":"gKeys","KeyConditionExpression":"#s = :q","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":q":{"S":"q"}},"ReturnConsumedCapacity":"INDEXES"}');
-- gAll entries 14 + 4 + 1500 = 1518 bytes x 3 = 4554: 2 -> 1 eventually consistent
SELECT cap('Query', '{"TableName":"ord","IndexName":"gAll","KeyConditionExpression":"#s = :q","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":q":{"S":"q"}},"ReturnConsumedCapacity":"INDEXES"}');
SELECT cap('Scan', '{"TableName":"ord","IndexName":"gAll","ReturnConsumedCapacity":"TOTAL"}');
SELECT cap('Scan', '{"TableName":"ord","IndexName":"gKeys","ReturnConsumedCapacity":"INDEXES"}');

-- ---- LSIs: KEYS_ONLY on date, INCLUDE [views] on title
SELECT dynindex.api('CreateTable', '{"TableName":"thr","BillingMode":"PAY_PER_REQUEST",
 "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"date","AttributeType":"S"},{"AttributeName":"title","AttributeType":"S"}],
 "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
 "LocalSecondaryIndexes":[
  {"IndexName":"byDate","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"date","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}},
  {"IndexName":"byTitle","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"title","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["views"]}}]}') IS NOT NULL;
-- t1 = {pk F (3), sk 1 (3), date d1 (6), title x (6), views 5 (5+2), body 3000 (3004)} = 3029: table 3;
-- byDate entry {pk, sk, date} 12: 1; byTitle entry {pk, sk, title, views} 19: 1; total 5
SELECT dynindex.api('PutItem', jsonb_build_object('TableName','thr','ReturnConsumedCapacity','INDEXES','ReturnItemCollectionMetrics','SIZE','Item',
  '{"pk":{"S":"F"},"sk":{"S":"1"},"date":{"S":"d1"},"title":{"S":"x"},"views":{"N":"5"}}'::jsonb || jsonb_build_object('body', jsonb_build_object('S', repeat('b', 3000)))));
-- views is projected into byTitle only: table 3, byTitle 1; total 4
SELECT dynindex.api('UpdateItem', '{"TableName":"thr","Key":{"pk":{"S":"F"},"sk":{"S":"1"}},"UpdateExpression":"SET #v = :v","ExpressionAttributeNames":{"#v":"views"},"ExpressionAttributeValues":{":v":{"N":"6"}},"ReturnConsumedCapacity":"INDEXES","ReturnItemCollectionMetrics":"SIZE"}');
-- the date moves: byDate 1+1; total 5
SELECT cap('UpdateItem', '{"TableName":"thr","Key":{"pk":{"S":"F"},"sk":{"S":"1"}},"UpdateExpression":"SET #d = :v","ExpressionAttributeNames":{"#d":"date"},"ExpressionAttributeValues":{":v":{"S":"d0"}},"ReturnConsumedCapacity":"INDEXES"}');
-- t2 like t1 with sk 2, date d2
SELECT cap('PutItem', jsonb_build_object('TableName','thr','ReturnConsumedCapacity','TOTAL','Item',
  '{"pk":{"S":"F"},"sk":{"S":"2"},"date":{"S":"d2"},"title":{"S":"y"},"views":{"N":"5"}}'::jsonb || jsonb_build_object('body', jsonb_build_object('S', repeat('b', 3000)))));
-- a KEYS_ONLY LSI query for projected attributes: entries 12 + 12 = 24 bytes: 1 (strongly)
SELECT cap('Query', '{"TableName":"thr","IndexName":"byDate","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"F"}},"ConsistentRead":true,"ReturnConsumedCapacity":"INDEXES"}');
-- ALL_ATTRIBUTES fetches each 3029-byte base item: table 1 + 1 (each rounded), index 1; total 3
SELECT cap('Query', '{"TableName":"thr","IndexName":"byDate","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"F"}},"ConsistentRead":true,"Select":"ALL_ATTRIBUTES","ReturnConsumedCapacity":"INDEXES"}');
-- eventually consistent: halves: table 0.5 + 0.5, index 0.5; total 1.5
SELECT cap('Query', '{"TableName":"thr","IndexName":"byDate","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"F"}},"ProjectionExpression":"body","ReturnConsumedCapacity":"TOTAL"}');
-- BatchWriteItem: ItemCollectionMetrics per table, one per write
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"thr":[{"DeleteRequest":{"Key":{"pk":{"S":"F"},"sk":{"S":"2"}}}},{"PutRequest":{"Item":{"pk":{"S":"G"},"sk":{"S":"1"}}}}]},"ReturnConsumedCapacity":"INDEXES","ReturnItemCollectionMetrics":"SIZE"}');
-- DeleteItem: table 3, byDate 1, byTitle 1 (leaves both)
SELECT dynindex.api('DeleteItem', '{"TableName":"thr","Key":{"pk":{"S":"F"},"sk":{"S":"1"}},"ReturnConsumedCapacity":"INDEXES","ReturnItemCollectionMetrics":"SIZE"}');

SELECT dynindex.api('DeleteTable', '{"TableName":"ord"}') IS NOT NULL;
SELECT dynindex.api('DeleteTable', '{"TableName":"thr"}') IS NOT NULL;
DROP FUNCTION cap(text, jsonb);
