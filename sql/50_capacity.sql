-- Capacity arithmetic (src/api/capacity.c, docs/capacity.md): reads per 4 KB,
-- writes per 1 KB, failed conditional writes, batches, TOTAL vs INDEXES.
-- Every expectation is computed by hand in the comment above it.
-- Item size = sum of (UTF-8 name bytes + value bytes); S values are their bytes.
\set VERBOSITY default
CREATE FUNCTION cap(op text, req jsonb) RETURNS jsonb LANGUAGE sql
  AS $$ SELECT dynindex.api(op, req) -> 'ConsumedCapacity' $$;
-- an item {pk: S p, data: S of n 'x'}: 2 + len(p) + 4 + n bytes
CREATE FUNCTION item(p text, n int) RETURNS jsonb LANGUAGE sql
  AS $$ SELECT jsonb_build_object('pk', jsonb_build_object('S', p), 'data', jsonb_build_object('S', repeat('x', n))) $$;

SELECT dynindex.api('CreateTable', '{"TableName":"cap","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL;

-- ---- writes per 1 KB
-- 2+1+4+1017 = 1024 bytes: 1 unit
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('a',1017),'ReturnConsumedCapacity','TOTAL'));
-- 1025 bytes over the 1024-byte item: max(1024, 1025) -> 2
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('a',1018),'ReturnConsumedCapacity','TOTAL'));
-- 8 bytes over the 1025-byte item: max(1025, 8) -> 2 (the larger of before and after)
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('a',1),'ReturnConsumedCapacity','TOTAL'));
-- 2048 bytes exactly: 2; 2049: 3
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('b',2041),'ReturnConsumedCapacity','TOTAL'));
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('c',2042),'ReturnConsumedCapacity','INDEXES'));

-- ---- reads per 4 KB, eventually consistent halves
-- 2+1+4+4089 = 4096 bytes: strongly 1, eventually 0.5
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('r',4089)));
SELECT cap('GetItem', '{"TableName":"cap","Key":{"pk":{"S":"r"}},"ConsistentRead":true,"ReturnConsumedCapacity":"TOTAL"}');
SELECT cap('GetItem', '{"TableName":"cap","Key":{"pk":{"S":"r"}},"ReturnConsumedCapacity":"TOTAL"}');
-- 4097 bytes: strongly 2, eventually 1
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('r',4090)));
SELECT cap('GetItem', '{"TableName":"cap","Key":{"pk":{"S":"r"}},"ConsistentRead":true,"ReturnConsumedCapacity":"TOTAL"}');
SELECT cap('GetItem', '{"TableName":"cap","Key":{"pk":{"S":"r"}},"ReturnConsumedCapacity":"INDEXES"}');
-- a projection does not reduce the cost: still the whole 4097-byte item
SELECT cap('GetItem', '{"TableName":"cap","Key":{"pk":{"S":"r"}},"ProjectionExpression":"pk","ReturnConsumedCapacity":"TOTAL"}');
-- a missing item still costs 0.5 / 1
SELECT cap('GetItem', '{"TableName":"cap","Key":{"pk":{"S":"nope"}},"ReturnConsumedCapacity":"TOTAL"}');
SELECT cap('GetItem', '{"TableName":"cap","Key":{"pk":{"S":"nope"}},"ConsistentRead":true,"ReturnConsumedCapacity":"TOTAL"}');

-- ---- deletes: the deleted item; a missing item costs 1
-- 'c' is 2049 bytes: 3
SELECT cap('DeleteItem', '{"TableName":"cap","Key":{"pk":{"S":"c"}},"ReturnConsumedCapacity":"TOTAL"}');
SELECT cap('DeleteItem', '{"TableName":"cap","Key":{"pk":{"S":"c"}},"ReturnConsumedCapacity":"TOTAL"}');
-- with a condition (the read-then-write path): 'b' is 2048 bytes: 2
SELECT cap('DeleteItem', '{"TableName":"cap","Key":{"pk":{"S":"b"}},"ConditionExpression":"attribute_exists(pk)","ReturnConsumedCapacity":"TOTAL"}');

-- ---- UpdateItem: max(before, after); updating a missing item creates it: 1
-- new item {pk: u, n: 1}: 2+1 + 1+2 = 6 bytes: 1
SELECT cap('UpdateItem', '{"TableName":"cap","Key":{"pk":{"S":"u"}},"UpdateExpression":"SET n = :one","ExpressionAttributeValues":{":one":{"N":"1"}},"ReturnConsumedCapacity":"TOTAL"}');
-- grow it to 2+1 + 1+2 + 4+1100 = 1110 bytes: 2
SELECT cap('UpdateItem', jsonb_build_object('TableName','cap','Key','{"pk":{"S":"u"}}'::jsonb,'UpdateExpression','SET #d = :d','ExpressionAttributeNames','{"#d":"data"}'::jsonb,'ExpressionAttributeValues',jsonb_build_object(':d',jsonb_build_object('S',repeat('y',1100))),'ReturnConsumedCapacity','TOTAL'));
-- shrink it back to 6 bytes: max(1110, 6) -> 2
SELECT cap('UpdateItem', '{"TableName":"cap","Key":{"pk":{"S":"u"}},"UpdateExpression":"REMOVE #d","ExpressionAttributeNames":{"#d":"data"},"ReturnConsumedCapacity":"TOTAL"}');

-- ---- failed conditional writes still consume, and say so in the exception
-- 'a' is 8 bytes: 1 (the existing item per 1 KB)
SELECT cap('PutItem', jsonb_build_object('TableName','cap','Item',item('a',5),'ConditionExpression','attribute_not_exists(pk)','ReturnConsumedCapacity','TOTAL'));
-- 'r' is 4097 bytes: 5 (INDEXES: with the Table map)
SELECT cap('UpdateItem', '{"TableName":"cap","Key":{"pk":{"S":"r"}},"UpdateExpression":"SET n = :one","ConditionExpression":"n = :one","ExpressionAttributeValues":{":one":{"N":"1"}},"ReturnConsumedCapacity":"INDEXES"}');
-- with ReturnValuesOnConditionCheckFailure the Item comes along: 'a' is 8 bytes: 1
SELECT cap('UpdateItem', '{"TableName":"cap","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET n = :one","ConditionExpression":"n = :one","ExpressionAttributeValues":{":one":{"N":"1"}},"ReturnConsumedCapacity":"TOTAL","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}');
-- a missing item: 1
SELECT cap('DeleteItem', '{"TableName":"cap","Key":{"pk":{"S":"zz"}},"ConditionExpression":"attribute_exists(pk)","ReturnConsumedCapacity":"TOTAL"}');
-- without ReturnConsumedCapacity: no DETAIL
SELECT cap('DeleteItem', '{"TableName":"cap","Key":{"pk":{"S":"zz"}},"ConditionExpression":"attribute_exists(pk)"}');
-- a later write without a condition is not charged for the earlier failure
SELECT dynindex.api('DeleteItem', '{"TableName":"cap","Key":{"pk":{"S":"zz"}}}');

-- ---- batches: a list, one entry per table, in request order
SELECT dynindex.api('CreateTable', '{"TableName":"cap2","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL;
-- cap: 2+2+4+1016 = 1024 (1) + 2049 (3) + delete of 8-byte 'a' (1) = 5; cap2: 1025 (2)
SELECT cap('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object(
  'cap', jsonb_build_array(jsonb_build_object('PutRequest', jsonb_build_object('Item', item('w1',1016))),
                           jsonb_build_object('PutRequest', jsonb_build_object('Item', item('w2',2041))),
                           jsonb_build_object('DeleteRequest', jsonb_build_object('Key', '{"pk":{"S":"a"}}'::jsonb))),
  'cap2', jsonb_build_array(jsonb_build_object('PutRequest', jsonb_build_object('Item', item('w3',1017))))),
  'ReturnConsumedCapacity', 'TOTAL'));
-- BatchGet rounds each item: cap w1 1024 (0.5) + w2 2049 (0.5) + r 4097 (1) + missing (0.5) = 2.5;
-- cap2 consistent: w3 (1)
SELECT cap('BatchGetItem', '{"RequestItems":{"cap":{"Keys":[{"pk":{"S":"w1"}},{"pk":{"S":"w2"}},{"pk":{"S":"r"}},{"pk":{"S":"none"}}]},"cap2":{"Keys":[{"pk":{"S":"w3"}}],"ConsistentRead":true}},"ReturnConsumedCapacity":"INDEXES"}');
-- NONE: no ConsumedCapacity member at all
SELECT dynindex.api('BatchGetItem', '{"RequestItems":{"cap2":{"Keys":[{"pk":{"S":"w3"}}],"ProjectionExpression":"pk"}},"ReturnConsumedCapacity":"NONE"}');

-- ---- Query and Scan: sizes summed, then rounded to 4 KB
SELECT dynindex.api('CreateTable', '{"TableName":"capq","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL;
-- three items {pk: q, sk: 1..3, data: 1490 x}: 2+1 + 2+1 + 4+1490 = 1500 bytes each
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName','capq','Item',
  item('q',1490) || jsonb_build_object('sk', jsonb_build_object('S', i::text))))) FROM generate_series(1,3) i;
-- two items: 3000 bytes -> 1 (strongly), 0.5 (eventually)
SELECT cap('Query', '{"TableName":"capq","KeyConditionExpression":"pk = :p AND sk <= :s","ExpressionAttributeValues":{":p":{"S":"q"},":s":{"S":"2"}},"ConsistentRead":true,"ReturnConsumedCapacity":"TOTAL"}');
-- three items: 4500 bytes cross 4 KB -> 2 (strongly), 1 (eventually); not 3 x 1 per item
SELECT cap('Query', '{"TableName":"capq","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"q"}},"ConsistentRead":true,"ReturnConsumedCapacity":"TOTAL"}');
SELECT cap('Query', '{"TableName":"capq","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"q"}},"ReturnConsumedCapacity":"INDEXES"}');
-- a filter that drops everything and Select COUNT do not reduce the cost
SELECT cap('Query', '{"TableName":"capq","KeyConditionExpression":"pk = :p","FilterExpression":"attribute_exists(nothing)","ExpressionAttributeValues":{":p":{"S":"q"}},"ConsistentRead":true,"Select":"COUNT","ReturnConsumedCapacity":"TOTAL"}');
-- nothing read: still 0.5
SELECT cap('Query', '{"TableName":"capq","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"none"}},"ReturnConsumedCapacity":"TOTAL"}');
-- Scan: the same 4500 bytes -> 2 strongly
SELECT cap('Scan', '{"TableName":"capq","ConsistentRead":true,"ReturnConsumedCapacity":"TOTAL"}');

SELECT dynindex.api('DeleteTable', '{"TableName":"cap"}') IS NOT NULL;
SELECT dynindex.api('DeleteTable', '{"TableName":"cap2"}') IS NOT NULL;
SELECT dynindex.api('DeleteTable', '{"TableName":"capq"}') IS NOT NULL;
DROP FUNCTION cap(text, jsonb);
DROP FUNCTION item(text, int);
