-- BatchGetItem and BatchWriteItem
SELECT dynindex.api('CreateTable', '{"TableName": "batch1", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "batch2", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;

-- puts(n, from): a BatchWriteItem request of n PutRequests for batch1
CREATE OR REPLACE FUNCTION puts(n int, start int DEFAULT 1) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('RequestItems', jsonb_build_object('batch1', jsonb_agg(
    jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', jsonb_build_object('S', 'k' || i), 'n', jsonb_build_object('N', i::text)))))))
  FROM generate_series(start, start + n - 1) i
$$;
-- keys(n): a BatchGetItem request of n keys of batch1
CREATE OR REPLACE FUNCTION keys(n int) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('RequestItems', jsonb_build_object('batch1', jsonb_build_object('Keys', jsonb_agg(
    jsonb_build_object('pk', jsonb_build_object('S', 'k' || i))))))
  FROM generate_series(1, n) i
$$;

-- BatchWriteItem: 25 requests are fine, 26 are not
SELECT dynindex.api('BatchWriteItem', puts(25));
SELECT dynindex.api('BatchWriteItem', puts(26, 100));
-- more than 25 over several tables
SELECT dynindex.api('BatchWriteItem', jsonb_build_object('RequestItems', (puts(13, 200)->'RequestItems') ||
  jsonb_build_object('batch2', (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
    jsonb_build_object('pk', '{"S": "x"}'::jsonb, 'sk', jsonb_build_object('N', i::text))))) FROM generate_series(1, 13) i))));
SELECT dynindex.api('BatchWriteItem', puts(25, 26));
SELECT dynindex.api('BatchWriteItem', puts(25, 51));
SELECT dynindex.api('BatchWriteItem', puts(25, 76));
SELECT dynindex.api('DescribeTable', '{"TableName": "batch1"}')->'Table'->'ItemCount' AS item_count;

-- put + delete mix over two tables, with capacity
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {
  "batch1": [{"DeleteRequest": {"Key": {"pk": {"S": "k1"}}}}, {"PutRequest": {"Item": {"pk": {"S": "new"}, "x": {"S": "y"}}}}],
  "batch2": [{"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}}}, {"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"N": "2"}}}}]},
  "ReturnConsumedCapacity": "TOTAL"}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {
  "batch2": [{"DeleteRequest": {"Key": {"pk": {"S": "a"}, "sk": {"N": "2"}}}}]}, "ReturnConsumedCapacity": "INDEXES"}');
-- BatchWriteItem errors
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {}}');
SELECT dynindex.api('BatchWriteItem', '{}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": []}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"pk": {"S": "z"}}}, "DeleteRequest": {"Key": {"pk": {"S": "z"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"pk": {"S": "z"}}}}, {"PutRequest": {"Item": {"pk": {"S": "z"}, "v": {"N": "1"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"pk": {"S": "z"}}}}, {"DeleteRequest": {"Key": {"pk": {"S": "z"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"pk": {"N": "1"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"pk": {"L": [{"S": "x"}]}}}}]}}');
-- a PutRequest item missing a key attribute: the batch's generic key message, not PutItem's
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"x": {"S": "z"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch2": [{"PutRequest": {"Item": {"pk": {"S": "z"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"DeleteRequest": {"Key": {"pk": {"S": "z"}, "x": {"S": "z"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"nothere": [{"DeleteRequest": {"Key": {"pk": {"S": "z"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"ab": [{"DeleteRequest": {"Key": {"pk": {"S": "z"}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"pk": {"S": "z"}, "bad": {"SS": []}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {}}]}}');
-- a failing request writes nothing of the batch
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"batch1": [{"PutRequest": {"Item": {"pk": {"S": "atomic"}}}}, {"PutRequest": {"Item": {"pk": {"N": "1"}}}}]}}');
SELECT dynindex.api('GetItem', '{"TableName": "batch1", "Key": {"pk": {"S": "atomic"}}}') AS not_written;

-- BatchGetItem: 100 keys are fine (k1 was deleted, so 99 items), 101 are not
SELECT jsonb_array_length(r->'Responses'->'batch1') AS items, r->'UnprocessedKeys' AS unprocessed
FROM (SELECT dynindex.api('BatchGetItem', keys(100)) AS r) s;
SELECT dynindex.api('BatchGetItem', keys(101));
-- more than 100 over several tables
SELECT dynindex.api('BatchGetItem', jsonb_build_object('RequestItems', (keys(60)->'RequestItems') ||
  jsonb_build_object('batch2', jsonb_build_object('Keys', (SELECT jsonb_agg(jsonb_build_object('pk', '{"S": "x"}'::jsonb, 'sk', jsonb_build_object('N', i::text)))
    FROM generate_series(1, 41) i)))));
-- missing items are omitted; ConsumedCapacity is a list, one entry per table
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {
  "batch1": {"Keys": [{"pk": {"S": "k2"}}, {"pk": {"S": "missing"}}], "ProjectionExpression": "pk, n"},
  "batch2": {"Keys": [{"pk": {"S": "a"}, "sk": {"N": "1"}}], "ConsistentRead": true}},
  "ReturnConsumedCapacity": "TOTAL"}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {"Keys": [{"pk": {"S": "missing"}}]}}, "ReturnConsumedCapacity": "INDEXES"}');
-- BatchGetItem errors
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {"Keys": [{"pk": {"S": "k2"}}, {"pk": {"S": "k2"}}]}}}');
-- an empty Keys list or RequestItems map: DynamoDB's newer constraint form
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {"Keys": []}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {}}');
SELECT dynindex.api('BatchGetItem', '{}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {"Keys": [{"pk": {"N": "1"}}]}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"nothere": {"Keys": [{"pk": {"S": "1"}}]}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {"Keys": [{"pk": {"S": "1"}}], "ReturnConsumedCapacity": "TOTAL"}}}');
-- an AttributesToGet name that is null (a member constraint) or no string (SerializationException)
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {"Keys": [{"pk": {"S": "k2"}}], "AttributesToGet": ["pk", null]}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"batch1": {"Keys": [{"pk": {"S": "k2"}}], "AttributesToGet": [false]}}}');

SELECT dynindex.api('DeleteTable', '{"TableName": "batch1"}') IS NOT NULL AS deleted;
SELECT dynindex.api('DeleteTable', '{"TableName": "batch2"}') IS NOT NULL AS deleted;
DROP FUNCTION puts(int, int);
DROP FUNCTION keys(int);
