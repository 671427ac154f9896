-- Transactions: which action-level problems cancel the transaction with a
-- ValidationError reason at that action's position (TransactionCanceledException,
-- the other actions None) and which are a ValidationException for the whole
-- request. Empty key values are refused up front (whole request); keys of the
-- wrong type or shape, and an update that gives an index key the wrong type,
-- are found per action (a reason).
\set VERBOSITY terse
CREATE FUNCTION txr(op text, req text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE msg text; det text;
BEGIN
  RETURN dynindex.api(op, req::jsonb);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%', msg;
  IF det <> '' THEN RAISE NOTICE 'reasons: %', det; END IF;
  RETURN NULL;
END $$;
SELECT dynindex.api('CreateTable', '{"TableName": "txr_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                           {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName": "txr_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}}}');

-- TransactGetItems: a key that does not match the schema is the action's reason
SELECT txr('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "txr_t", "Key": {}}}]}');
SELECT txr('TransactGetItems', '{"TransactItems": [
  {"Get": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}}},
  {"Get": {"TableName": "txr_t", "Key": {"pk": {"N": "1"}, "sk": {"S": "1"}}}},
  {"Get": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}}}}]}');
SELECT txr('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"L": [{"S": "x"}]}}}}]}');
-- ... an empty key value is the whole request's error, even after a bad key
SELECT txr('TransactGetItems', '{"TransactItems": [
  {"Get": {"TableName": "txr_t", "Key": {"pk": {"N": "1"}, "sk": {"S": "1"}}}},
  {"Get": {"TableName": "txr_t", "Key": {"pk": {"S": ""}, "sk": {"S": "1"}}}}]}');
-- ... and so are request-level problems: a missing table, a bad expression
SELECT txr('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "txr_nothere", "Key": {}}}]}');
SELECT txr('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "txr_t", "Key": {}, "ProjectionExpression": "!!!"}}]}');

-- TransactWriteItems: Put keys of the wrong type or shape (table or index): reasons
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "txr_t", "Item": {"pk": {"N": "5"}, "sk": {"S": "1"}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "txr_t", "Item": {"pk": {"L": [{"S": "x"}]}, "sk": {"S": "1"}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [
  {"ConditionCheck": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ConditionExpression": "attribute_exists(pk)"}},
  {"Put": {"TableName": "txr_t", "Item": {"pk": {"S": "b"}, "sk": {"S": "1"}, "g": {"N": "5"}}}}]}');
-- Key parameters of the wrong type or shape: "does not match the schema" reasons
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Update": {"TableName": "txr_t", "Key": {"pk": {"N": "5"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET x = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Delete": {"TableName": "txr_t", "Key": {"pk": {"L": [{"S": "x"}]}, "sk": {"S": "1"}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"ConditionCheck": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}},
  "ConditionExpression": "attribute_exists(pk)"}}]}');
-- an Update giving an index key the wrong type: a reason (found once the new item is known)
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Update": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET g = :v", "ExpressionAttributeValues": {":v": {"N": "5"}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Update": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET g = :v", "ExpressionAttributeValues": {":v": {"L": [{"S": "x"}]}}}}]}');
-- empty key values: the whole request, wherever they are
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "txr_t", "Item": {"pk": {"S": ""}, "sk": {"S": "1"}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "txr_t", "Item": {"pk": {"S": "c"}, "sk": {"S": "1"}, "g": {"S": ""}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "txr_t", "Item": {"pk": {"N": "5"}, "sk": {"S": "1"}}}},
  {"Delete": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"S": ""}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"ConditionCheck": {"TableName": "txr_t", "Key": {"pk": {"B": ""}, "sk": {"S": "1"}},
  "ConditionExpression": "attribute_exists(pk)"}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Update": {"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET g = :v", "ExpressionAttributeValues": {":v": {"S": ""}}}}]}');
-- an attribute keying several indexes: the messages name the alphabetically first index
SELECT dynindex.api('CreateTable', '{"TableName": "txr_two", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [
    {"IndexName": "zz_made_first", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "KEYS_ONLY"}},
    {"IndexName": "aa_made_second", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "txr_two", "Item": {"pk": {"S": "a"}, "g": {"N": "1"}}}}]}');
SELECT txr('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "txr_two", "Item": {"pk": {"S": "a"}, "g": {"S": ""}}}}]}');
SELECT txr('PutItem', '{"TableName": "txr_two", "Item": {"pk": {"S": "a"}, "g": {"N": "1"}}}');
SELECT txr('BatchWriteItem', '{"RequestItems": {"txr_two": [{"PutRequest": {"Item": {"pk": {"S": "a"}, "g": {"S": ""}}}}]}}');
SELECT dynindex.api('DeleteTable', '{"TableName": "txr_two"}')->'TableDescription'->>'TableStatus' AS deleted;
-- a Put over 400 KB: known from the request, a ValidationException before the transaction opens
-- (DynamoDB, eu-west-2, 2026-08-18); an Update that grows the item past it is a reason
SELECT txr('TransactWriteItems', jsonb_build_object('TransactItems', jsonb_build_array(
  jsonb_build_object('ConditionCheck', '{"TableName": "txr_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ConditionExpression": "attribute_exists(pk)"}'::jsonb),
  jsonb_build_object('Put', jsonb_build_object('TableName', 'txr_t', 'Item',
    jsonb_build_object('pk', '{"S": "big"}'::jsonb, 'sk', '{"S": "1"}'::jsonb, 'p', jsonb_build_object('S', repeat('x', 409600)))))))::text);
SELECT txr('TransactWriteItems', jsonb_build_object('TransactItems', jsonb_build_array(
  jsonb_build_object('Update', jsonb_build_object('TableName', 'txr_t', 'Key', '{"pk": {"S": "big"}, "sk": {"S": "1"}}'::jsonb,
    'UpdateExpression', 'SET p = :p', 'ExpressionAttributeValues', jsonb_build_object(':p', jsonb_build_object('S', repeat('x', 409600)))))))::text);
-- nothing was written by any of them
SELECT dynindex.api('Scan', '{"TableName": "txr_t"}');
SELECT dynindex.api('DeleteTable', '{"TableName": "txr_t"}')->'TableDescription'->>'TableStatus' AS deleted;
