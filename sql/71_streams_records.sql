-- Stream records: one per item-level change that modified an item, written by the
-- writing transaction, from every writer (PutItem, UpdateItem, DeleteItem,
-- BatchWriteItem, TransactWriteItems, TTL expiry), with the fields of each view type.
\set VERBOSITY terse
SET dynindex.stream_shard_count = 4;
CREATE FUNCTION api(op text, req jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT dynindex.api(op, req) $$;
CREATE FUNCTION mk(tbl text, view text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE sql AS $$
  SELECT api('CreateTable', jsonb_build_object('TableName', tbl, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]'::jsonb,
    'StreamSpecification', jsonb_build_object('StreamEnabled', true, 'StreamViewType', view)) || extra)
    -> 'TableDescription' ->> 'TableStatus' $$;
-- take(): the records written since the last call, in sequence order, and forget them
CREATE FUNCTION take() RETURNS TABLE (tbl text, event text, keys jsonb, new_image jsonb, old_image jsonb,
                                      size_bytes int, user_identity jsonb)
LANGUAGE sql AS $$
  WITH d AS (DELETE FROM dynindex.stream_records RETURNING *)
  SELECT s.table_name, d.event_name, d.keys, d.new_image, d.old_image, d.size_bytes, d.user_identity
  FROM d JOIN dynindex.streams s USING (stream_id) ORDER BY d.seq $$;

SELECT mk('srt', 'NEW_AND_OLD_IMAGES');

-- ---------------------------------------------------------------- PutItem
-- a new item: INSERT, NewImage only
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "one"}}}');
SELECT * FROM take();
-- overwriting it: MODIFY with both images
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "two"}, "n": {"N": "5"}}}');
SELECT * FROM take();
-- putting the identical item (attribute order and number spelling do not matter): no record
SELECT api('PutItem', '{"TableName": "srt", "Item": {"n": {"N": "5.0"}, "v": {"S": "two"}, "sk": {"N": "1"}, "pk": {"S": "a"}}}');
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "two"}, "n": {"N": "5"}},
  "ReturnValues": "ALL_OLD"}') -> 'Attributes' -> 'v';
SELECT * FROM take();
-- a conditional put that fails: no record
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT * FROM take();
-- a conditional put that succeeds; with capacity
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "three"}},
  "ConditionExpression": "v = :v", "ExpressionAttributeValues": {":v": {"S": "two"}}, "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity';
SELECT * FROM take();

-- ---------------------------------------------------------------- UpdateItem
SELECT api('UpdateItem', '{"TableName": "srt", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET c = :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}');
SELECT * FROM take();
-- setting the values it already has: no record
SELECT api('UpdateItem', '{"TableName": "srt", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET c = :one, v = :v", "ExpressionAttributeValues": {":one": {"N": "1"}, ":v": {"S": "three"}}}');
SELECT * FROM take();
-- creating an item: INSERT
SELECT api('UpdateItem', '{"TableName": "srt", "Key": {"pk": {"S": "b"}, "sk": {"N": "2"}},
  "UpdateExpression": "ADD c :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}');
SELECT * FROM take();
-- removing an attribute of an absent item creates nothing: no record
SELECT api('UpdateItem', '{"TableName": "srt", "Key": {"pk": {"S": "zz"}, "sk": {"N": "0"}}, "UpdateExpression": "REMOVE x"}');
SELECT * FROM take();

-- ---------------------------------------------------------------- DeleteItem
SELECT api('DeleteItem', '{"TableName": "srt", "Key": {"pk": {"S": "b"}, "sk": {"N": "2"}}}');
SELECT * FROM take();
-- an absent item: no record
SELECT api('DeleteItem', '{"TableName": "srt", "Key": {"pk": {"S": "b"}, "sk": {"N": "2"}}}');
SELECT * FROM take();
-- with a condition and ReturnValues
SELECT api('DeleteItem', '{"TableName": "srt", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "ConditionExpression": "attribute_exists(c)", "ReturnValues": "ALL_OLD"}') -> 'Attributes' -> 'c';
SELECT * FROM take();

-- ---------------------------------------------------------------- BatchWriteItem
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}}}');
SELECT count(*) FROM take();
SELECT api('BatchWriteItem', '{"RequestItems": {"srt": [
  {"PutRequest": {"Item": {"pk": {"S": "c"}, "sk": {"N": "1"}}}},
  {"PutRequest": {"Item": {"pk": {"S": "d"}, "sk": {"N": "1"}, "x": {"BOOL": true}}}},
  {"DeleteRequest": {"Key": {"pk": {"S": "e"}, "sk": {"N": "1"}}}}]}}');
SELECT * FROM take();
-- with capacity (the old items are read), deleting
SELECT api('BatchWriteItem', '{"ReturnConsumedCapacity": "TOTAL", "RequestItems": {"srt": [
  {"DeleteRequest": {"Key": {"pk": {"S": "c"}, "sk": {"N": "1"}}}},
  {"PutRequest": {"Item": {"pk": {"S": "d"}, "sk": {"N": "1"}, "x": {"BOOL": true}}}}]}}') -> 'ConsumedCapacity';
SELECT * FROM take();

-- ---------------------------------------------------------------- TransactWriteItems
SELECT api('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "srt", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}}}},
  {"Update": {"TableName": "srt", "Key": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "UpdateExpression": "REMOVE x"}},
  {"Delete": {"TableName": "srt", "Key": {"pk": {"S": "nothing"}, "sk": {"N": "1"}}}},
  {"ConditionCheck": {"TableName": "srt", "Key": {"pk": {"S": "nothing2"}, "sk": {"N": "1"}}, "ConditionExpression": "attribute_not_exists(pk)"}}]}');
SELECT * FROM take();
-- a cancelled transaction: no record
SELECT api('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "srt", "Item": {"pk": {"S": "u"}, "sk": {"N": "1"}}}},
  {"ConditionCheck": {"TableName": "srt", "Key": {"pk": {"S": "nothing"}, "sk": {"N": "1"}}, "ConditionExpression": "attribute_exists(pk)"}}]}');
SELECT * FROM take();

-- ---------------------------------------------------------------- rolled back
BEGIN;
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "r"}, "sk": {"N": "1"}}}');
SELECT api('DeleteItem', '{"TableName": "srt", "Key": {"pk": {"S": "t"}, "sk": {"N": "1"}}}');
SELECT count(*) AS in_transaction FROM dynindex.stream_records;
ROLLBACK;
SELECT * FROM take();
-- a subtransaction rolled back keeps only the rest
BEGIN;
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "r"}, "sk": {"N": "1"}}}');
SAVEPOINT s;
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "r"}, "sk": {"N": "2"}}}');
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT * FROM take();

-- ---------------------------------------------------------------- sequence numbers and buckets
-- the records of one item: increasing seq, one bucket
SELECT count(api('PutItem', jsonb_build_object('TableName', 'srt', 'Item', jsonb_build_object('pk', '{"S": "q"}'::jsonb,
  'sk', jsonb_build_object('N', i::text))))) FROM generate_series(1, 20) i;
SELECT count(api('DeleteItem', jsonb_build_object('TableName', 'srt', 'Key', jsonb_build_object('pk', '{"S": "q"}'::jsonb,
  'sk', jsonb_build_object('N', i::text))))) FROM generate_series(1, 20) i;
SELECT count(*) AS records, count(DISTINCT bucket) AS buckets, bool_and(bucket BETWEEN 0 AND 3) AS in_range,
       count(DISTINCT seq) AS distinct_seqs
FROM dynindex.stream_records WHERE keys -> 'pk' ->> 'S' = 'q';
SELECT bool_and(event = CASE WHEN n <= 20 THEN 'INSERT' ELSE 'REMOVE' END) AS puts_then_deletes
FROM (SELECT event_name AS event, row_number() OVER (ORDER BY seq) AS n
      FROM dynindex.stream_records WHERE keys -> 'pk' ->> 'S' = 'q') x;
-- partition keys spread over the buckets
SELECT count(api('PutItem', jsonb_build_object('TableName', 'srt', 'Item', jsonb_build_object('pk', jsonb_build_object('S', 'k' || i),
  'sk', '{"N": "0"}'::jsonb)))) FROM generate_series(1, 40) i;
SELECT count(DISTINCT bucket) AS buckets_used FROM dynindex.stream_records;
SELECT count(*) FROM take();

-- ---------------------------------------------------------------- view types
SELECT mk('sr_keys', 'KEYS_ONLY'), mk('sr_new', 'NEW_IMAGE'), mk('sr_old', 'OLD_IMAGE');
CREATE FUNCTION cycle(tbl text) RETURNS void LANGUAGE sql AS $$
  SELECT api('PutItem', jsonb_build_object('TableName', tbl, 'Item', '{"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}}'::jsonb));
  SELECT api('PutItem', jsonb_build_object('TableName', tbl, 'Item', '{"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "yy"}}'::jsonb));
  SELECT api('DeleteItem', jsonb_build_object('TableName', tbl, 'Key', '{"pk": {"S": "a"}, "sk": {"N": "1"}}'::jsonb));
$$;
SELECT cycle('sr_keys'), cycle('sr_new'), cycle('sr_old'), cycle('srt');
SELECT tbl, event, new_image IS NOT NULL AS has_new, old_image IS NOT NULL AS has_old, size_bytes FROM take() ORDER BY tbl, event;

-- SizeBytes: DynamoDB's example (Keys {Id: N 101}; {Message: S "New item!", Id: N 101}) is 26, 59, 38
SELECT api('CreateTable', '{"TableName": "sr_size", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "Id", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "Id", "AttributeType": "N"}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}') -> 'TableDescription' -> 'StreamSpecification';
SELECT api('PutItem', '{"TableName": "sr_size", "Item": {"Id": {"N": "101"}, "Message": {"S": "New item!"}}}');
SELECT api('UpdateItem', '{"TableName": "sr_size", "Key": {"Id": {"N": "101"}}, "UpdateExpression": "SET Message = :m",
  "ExpressionAttributeValues": {":m": {"S": "This item has changed"}}}');
SELECT api('DeleteItem', '{"TableName": "sr_size", "Key": {"Id": {"N": "101"}}}');
SELECT event, keys, size_bytes FROM take();

-- ---------------------------------------------------------------- tables with indexes
SELECT mk('sr_idx', 'NEW_IMAGE', '{"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
  {"AttributeName": "sk", "AttributeType": "N"}, {"AttributeName": "l", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "bylsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "l", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "bygsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}}]}');
SELECT api('PutItem', '{"TableName": "sr_idx", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "l": {"S": "L"}, "g": {"S": "G"}}}');
SELECT api('BatchWriteItem', '{"RequestItems": {"sr_idx": [{"DeleteRequest": {"Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}}]}}');
SELECT * FROM take();
SELECT api('Query', '{"TableName": "sr_idx", "IndexName": "bylsi", "KeyConditionExpression": "pk = :a",
  "ExpressionAttributeValues": {":a": {"S": "a"}}}') -> 'Count';

-- ---------------------------------------------------------------- Time to Live
SELECT api('UpdateTimeToLive', '{"TableName": "srt", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "exp"}}');
-- expired an hour ago (ending in 1: the size of a number counts its significant digits,
-- so a trailing zero in the timestamp would change SizeBytes)
SELECT api('PutItem', jsonb_build_object('TableName', 'srt', 'Item', jsonb_build_object('pk', '{"S": "old"}'::jsonb,
  'sk', '{"N": "1"}'::jsonb, 'exp', jsonb_build_object('N', (extract(epoch FROM now())::bigint / 10 * 10 - 3599)::text))));
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "new"}, "sk": {"N": "1"}, "exp": {"N": "99999999999"}}}');
SELECT count(*) FROM take();
SELECT dynindex.expire_items('srt');
SELECT tbl, event, keys, new_image, old_image - 'exp' AS old_image_but_exp, size_bytes, user_identity FROM take();

-- ---------------------------------------------------------------- disabled stream: no records
SELECT api('UpdateTable', '{"TableName": "srt", "StreamSpecification": {"StreamEnabled": false}}') -> 'TableDescription' -> 'StreamSpecification';
SELECT api('PutItem', '{"TableName": "srt", "Item": {"pk": {"S": "after"}, "sk": {"N": "1"}}}');
SELECT count(*) FROM take();

SELECT api('DeleteTable', jsonb_build_object('TableName', n)) -> 'TableDescription' ->> 'TableStatus'
FROM unnest(ARRAY['srt', 'sr_keys', 'sr_new', 'sr_old', 'sr_size', 'sr_idx']) n;
DELETE FROM dynindex.stream_records;
DELETE FROM dynindex.stream_shards;
DELETE FROM dynindex.streams;
