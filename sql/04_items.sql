-- Items: PutItem, GetItem, DeleteItem: keys, ReturnValues, conditions,
-- ConsistentRead, ReturnConsumedCapacity, hash-only tables, N and B keys.
SELECT dynindex.api('CreateTable', '{"TableName": "items", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "hashonly", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "B"}]}') IS NOT NULL AS created;

-- put and get
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1.50"}, "v": {"S": "one"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1.5"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "015E-1"}}, "ConsistentRead": true}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "2"}}}') AS missing_item;
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1.5"}}, "ProjectionExpression": "v"}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1.5"}}, "ConsistentRead": "yes"}');

-- key checks on PutItem
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"sk": {"N": "1"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"N": "1"}, "sk": {"N": "1"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": ""}, "sk": {"N": "1"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"SS": ["a"]}, "sk": {"N": "1"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "items"}');
SELECT dynindex.api('PutItem', '{"Item": {"pk": {"S": "a"}}}');
-- key checks on GetItem / DeleteItem
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "other": {"N": "1"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": ""}, "sk": {"N": "1"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {}}');
SELECT dynindex.api('GetItem', '{"TableName": "items"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"N": "1"}, "sk": {"N": "1"}}}');
-- missing table
SELECT dynindex.api('PutItem', '{"TableName": "nothere", "Item": {"pk": {"S": "a"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "nothere", "Key": {"pk": {"S": "a"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "nothere", "Key": {"pk": {"S": "a"}}}');

-- ReturnValues
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1.5"}, "v": {"S": "two"}}, "ReturnValues": "ALL_OLD"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "ALL_OLD"}') AS new_item_no_old;
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "NONE"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "ALL_NEW"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "UPDATED_OLD"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "BOGUS"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "ALL_OLD"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "ALL_OLD"}') AS already_gone;
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "a"}, "sk": {"N": "9"}}, "ReturnValues": "ALL_NEW"}');

-- conditions
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}, "v": {"N": "1"}},
  "ConditionExpression": "attribute_not_exists(pk)"}') AS first_put;
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}, "v": {"N": "2"}},
  "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}, "v": {"N": "2"}},
  "ConditionExpression": "v = :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}') AS conditional_overwrite;
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "c"}, "sk": {"N": "1"}},
  "ConditionExpression": "v = :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "zz"}, "sk": {"N": "1"}},
  "ConditionExpression": "attribute_exists(pk)"}');
-- ReturnValuesOnConditionCheckFailure: the old item travels in the error's DETAIL
-- (psql's default verbosity shows DETAIL; the SQLSTATE is YD004, checked below)
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}},
  "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "c"}, "sk": {"N": "1"}},
  "ConditionExpression": "v = :x", "ExpressionAttributeValues": {":x": {"N": "7"}}, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}},
  "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "NONE"}');
DO $$
BEGIN
  PERFORM dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}}, "ConditionExpression": "attribute_not_exists(pk)"}');
EXCEPTION WHEN others THEN
  RAISE NOTICE 'SQLSTATE %', SQLSTATE;
END $$;
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}},
  "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}');
-- the same, caught in plpgsql
DO $$
DECLARE
  msg text; detail text; state text;
BEGIN
  PERFORM dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}},
    "ConditionExpression": "attribute_not_exists(pk)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL, state = RETURNED_SQLSTATE;
  RAISE NOTICE 'state=% message=% item=%', state, msg, (detail::jsonb)->'Item';
END $$;

-- ReturnConsumedCapacity
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "TOTAL"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "INDEXES"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "NONE"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "ALL"}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "TOTAL", "ConsistentRead": true}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "INDEXES"}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "d"}, "sk": {"N": "2"}}, "ReturnConsumedCapacity": "TOTAL"}') AS missing_costs_half;
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "ReturnConsumedCapacity": "INDEXES"}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}},
  "ConditionExpression": "attribute_not_exists(pk)", "ReturnConsumedCapacity": "TOTAL"}');

-- hash-only table with a B key
SELECT dynindex.api('PutItem', '{"TableName": "hashonly", "Item": {"id": {"B": "AAEC"}, "x": {"BOOL": true}}}');
SELECT dynindex.api('GetItem', '{"TableName": "hashonly", "Key": {"id": {"B": "AAEC"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "hashonly", "Key": {"id": {"B": "AAED"}}}') AS other_binary;
SELECT dynindex.api('PutItem', '{"TableName": "hashonly", "Item": {"id": {"B": ""}}}');
SELECT dynindex.api('GetItem', '{"TableName": "hashonly", "Key": {"id": {"B": "AAEC"}, "sk": {"N": "1"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "hashonly", "Key": {"id": {"S": "AAEC"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "hashonly", "Key": {"id": {"B": "AAEC"}}, "ReturnValues": "ALL_OLD"}');

-- N keys compare numerically: 1.50, 1.5 and 15E-1 are one key
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "n"}, "sk": {"N": "1.50"}, "v": {"S": "first"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "items", "Item": {"pk": {"S": "n"}, "sk": {"N": "15E-1"}, "v": {"S": "second"}}, "ReturnValues": "ALL_OLD"}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "n"}, "sk": {"N": "1.5"}}}');
SELECT (dynindex.api('DescribeTable', '{"TableName": "items"}')->'Table'->>'ItemCount') AS item_count;

-- attribute names: at most 65535 bytes, in item and map keys, AttributeUpdates,
-- AttributesToGet and ExpressionAttributeNames values
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'items', 'Item',
  jsonb_build_object('pk', '{"S": "long"}'::jsonb, 'sk', '{"N": "1"}'::jsonb, repeat('x', 65535), '{"N": "1"}'::jsonb))) = '{}' AS name_65535_ok;
SELECT length((SELECT k FROM jsonb_object_keys(dynindex.api('GetItem', jsonb_build_object('TableName', 'items',
  'Key', '{"pk": {"S": "long"}, "sk": {"N": "1"}}'::jsonb, 'AttributesToGet', jsonb_build_array(repeat('x', 65535))))->'Item') k)) AS got_name_len;
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'items', 'Item',
  jsonb_build_object('pk', '{"S": "long"}'::jsonb, 'sk', '{"N": "1"}'::jsonb, repeat('x', 65536), '{"N": "1"}'::jsonb)));
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'items', 'Item',
  jsonb_build_object('pk', '{"S": "long"}'::jsonb, 'sk', '{"N": "1"}'::jsonb, 'm', jsonb_build_object('M', jsonb_build_object(repeat('x', 65536), '{"N": "1"}'::jsonb)))));
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'items', 'Key', '{"pk": {"S": "long"}, "sk": {"N": "1"}}'::jsonb,
  'AttributesToGet', jsonb_build_array(repeat('x', 65536))));
-- an AttributesToGet name that is null (a member constraint) or no string (SerializationException)
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "long"}, "sk": {"N": "1"}}, "AttributesToGet": [null, "x"]}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "long"}, "sk": {"N": "1"}}, "AttributesToGet": ["x", 1]}');
SELECT dynindex.api('GetItem', '{"TableName": "items", "Key": {"pk": {"S": "long"}, "sk": {"N": "1"}}, "AttributesToGet": [["x"]]}');
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'items', 'Key', '{"pk": {"S": "long"}, "sk": {"N": "1"}}'::jsonb,
  'ProjectionExpression', '#n', 'ExpressionAttributeNames', jsonb_build_object('#n', repeat('x', 65536))));
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', 'items', 'Key', '{"pk": {"S": "long"}, "sk": {"N": "1"}}'::jsonb,
  'AttributeUpdates', jsonb_build_object(repeat('x', 65536), '{"Value": {"N": "2"}, "Action": "PUT"}'::jsonb)));
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', 'items', 'Key', '{"pk": {"S": "long"}, "sk": {"N": "1"}}'::jsonb,
  'UpdateExpression', 'SET a = :v', 'ExpressionAttributeValues', jsonb_build_object(':v', jsonb_build_object('M', jsonb_build_object(repeat('x', 65536), '{"N": "1"}'::jsonb)))));
SELECT dynindex.api('DeleteItem', '{"TableName": "items", "Key": {"pk": {"S": "long"}, "sk": {"N": "1"}}}');

SELECT dynindex.api('DeleteTable', '{"TableName": "items"}') IS NOT NULL AS deleted;
SELECT dynindex.api('DeleteTable', '{"TableName": "hashonly"}') IS NOT NULL AS deleted;
