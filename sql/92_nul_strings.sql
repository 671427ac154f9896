-- Strings holding U+0000: DynamoDB accepts them in S, SS and map keys.  jsonb
-- cannot hold "\u0000", so dynindex.api_text takes and returns JSON text;
-- inside, strings are real (sizes, key order, expressions); in jsonb they
-- travel escaped (U+E000 '0'; U+E000 itself as U+E000 'E').
\set VERBOSITY terse
CREATE FUNCTION a(op text, req text) RETURNS text LANGUAGE sql AS $$ SELECT dynindex.api_text(op, req) $$;
SELECT a('CreateTable', '{"TableName": "Nul", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
    {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"}}]}')::jsonb #>> '{TableDescription,TableStatus}';
-- jsonb itself refuses it (why api_text exists)
SELECT '{"S": "a\u0000b"}'::jsonb;
-- NUL at the start, in the middle, at the end, alone; in SS; in map keys; nested
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": "\u0000start"},
  "v": {"S": "mid\u0000dle"}, "ss": {"SS": ["\u0000", "a\u0000", "a"]},
  "m": {"M": {"k\u0000ey": {"S": "x\u0000"}, "\u0000": {"L": [{"S": "\u0000\u0000"}]}}}}}');
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": "\u0000"}, "g": {"S": "g\u0000"}}}');
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": "end\u0000"}, "g": {"S": "g\u0000"}}}');
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": "end"}, "g": {"S": "g"}}}');
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": "\u0001"}}}');
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": ""}}}');
-- round trip, exactly
SELECT a('GetItem', '{"TableName": "Nul", "Key": {"pk": {"S": "p"}, "sk": {"S": "\u0000start"}}}');
-- key order: U+0000 sorts first (UTF-8 byte order): "\u0000" < "\u0000start" < "\u0001" < "end" < "end\u0000"
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}},
  "ProjectionExpression": "sk"}');
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}},
  "ProjectionExpression": "sk", "ScanIndexForward": false, "Limit": 2}');
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p AND begins_with(sk, :b)",
  "ExpressionAttributeValues": {":p": {"S": "p"}, ":b": {"S": "\u0000"}}, "ProjectionExpression": "sk"}');
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
  "ExpressionAttributeValues": {":p": {"S": "p"}, ":a": {"S": "end"}, ":b": {"S": "end\u0000"}}, "ProjectionExpression": "sk"}');
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p AND sk > :a",
  "ExpressionAttributeValues": {":p": {"S": "p"}, ":a": {"S": "end"}}, "ProjectionExpression": "sk"}');
-- a GSI keyed on strings with NUL
SELECT dynindex.wait_for_indexes('Nul');
SELECT a('Query', '{"TableName": "Nul", "IndexName": "byG", "KeyConditionExpression": "g = :g",
  "ExpressionAttributeValues": {":g": {"S": "g\u0000"}}, "ProjectionExpression": "sk"}');
-- paging: LastEvaluatedKey carries the NUL and continues after it
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}},
  "ProjectionExpression": "sk", "Limit": 1}');
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}},
  "ProjectionExpression": "sk", "Limit": 1, "ExclusiveStartKey": {"pk": {"S": "p"}, "sk": {"S": "\u0000"}}}');
-- sizes: U+0000 is one byte, U+E000 three (not their escapes' four): "k" + "k" = 2, "v" + 3 NULs = 4, "e" + U+E000 = 4
SELECT a('CreateTable', '{"TableName": "NulSize", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}]}')::jsonb #>> '{TableDescription,TableStatus}';
SELECT a('PutItem', '{"TableName": "NulSize", "Item": {"k": {"S": "k"}, "v": {"S": "\u0000\u0000\u0000"}, "e": {"S": "\ue000"}}}');
SELECT items, bytes FROM dynindex.index_stats('NulSize') WHERE index_type = 'TABLE';
SELECT a('GetItem', '{"TableName": "NulSize", "Key": {"k": {"S": "k"}}}');
-- the escape character itself round-trips, raw or escaped, and is not taken for a NUL
SELECT a('PutItem', '{"TableName": "NulSize", "Item": {"k": {"S": "\ue0000"}, "raw": {"S": "xE"}}}');
SELECT a('GetItem', '{"TableName": "NulSize", "Key": {"k": {"S": "\ue0000"}}}') = E'{"Item": {"k": {"S": "\uE0000"}, "raw": {"S": "x\uE000E"}}}' AS exact;
SELECT a('GetItem', '{"TableName": "NulSize", "Key": {"k": {"S": "\u0000"}}}');
-- through the jsonb entry point: U+E000 is still itself; a NUL shows as its escape
SELECT dynindex.api('GetItem', '{"TableName": "NulSize", "Key": {"k": {"S": "\ue0000"}}}') = jsonb_build_object('Item',
  jsonb_build_object('k', jsonb_build_object('S', E'\uE0000'), 'raw', jsonb_build_object('S', E'x\uE000E'))) AS jsonb_exact;
-- a backslash before u0000 is a backslash
SELECT a('PutItem', '{"TableName": "NulSize", "Item": {"k": {"S": "\\u0000"}}}');
SELECT a('Scan', '{"TableName": "NulSize", "ProjectionExpression": "k"}');
-- expressions: size, begins_with, contains, comparisons, on values with NUL
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"},
  ":n": {"N": "7"}, ":three": {"N": "3"}, ":z": {"S": "\u0000"}, ":m": {"S": "mid\u0000"}, ":e": {"S": "mid\u0000dle"}},
  "FilterExpression": "size(v) = :n AND contains(v, :z) AND begins_with(v, :m) AND v = :e AND contains(ss, :z) AND size(ss) = :three",
  "ProjectionExpression": "sk"}');
-- comparisons: "mid" < "mid\u0000dle" < "mid\u0001"
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"},
  ":lo": {"S": "mid"}, ":hi": {"S": "mid\u0001"}}, "FilterExpression": "v > :lo AND v < :hi", "ProjectionExpression": "sk, v"}');
SELECT a('Query', '{"TableName": "Nul", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"},
  ":lo": {"S": "mid\u0000dle"}}, "FilterExpression": "v > :lo", "ProjectionExpression": "sk"}');
-- map keys with NUL named through ExpressionAttributeNames (projection, condition)
SELECT a('GetItem', '{"TableName": "Nul", "Key": {"pk": {"S": "p"}, "sk": {"S": "\u0000start"}},
  "ProjectionExpression": "m.#k, m.#z[0]", "ExpressionAttributeNames": {"#k": "k\u0000ey", "#z": "\u0000"}}');
SELECT a('DeleteItem', '{"TableName": "Nul", "Key": {"pk": {"S": "p"}, "sk": {"S": "\u0000start"}},
  "ConditionExpression": "attribute_exists(m.#k) AND size(m.#k) = :two", "ExpressionAttributeNames": {"#k": "k\u0000ey"},
  "ExpressionAttributeValues": {":two": {"N": "2"}}, "ReturnValues": "ALL_OLD"}') IS NOT NULL AS condition_passed;
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": "\u0000start"},
  "v": {"S": "mid\u0000dle"}, "ss": {"SS": ["\u0000", "a\u0000", "a"]},
  "m": {"M": {"k\u0000ey": {"S": "x\u0000"}, "\u0000": {"L": [{"S": "\u0000\u0000"}]}}}}}');
-- conditions and updates
SELECT a('UpdateItem', '{"TableName": "Nul", "Key": {"pk": {"S": "p"}, "sk": {"S": "\u0000start"}},
  "ConditionExpression": "v = :e", "UpdateExpression": "SET w = :w, #k = :z ADD ss :more",
  "ExpressionAttributeNames": {"#k": "m"}, "ExpressionAttributeValues": {":e": {"S": "mid\u0000dle"}, ":w": {"S": "\u0000w\u0000"},
  ":z": {"M": {"\u0000": {"S": "\u0000"}}}, ":more": {"SS": ["\u0000\u0000", "\u0000"]}}, "ReturnValues": "UPDATED_NEW"}');
SELECT a('PutItem', '{"TableName": "Nul", "Item": {"pk": {"S": "p"}, "sk": {"S": "\u0000start"}},
  "ConditionExpression": "w = :w", "ExpressionAttributeValues": {":w": {"S": "\u0000w"}}}');
-- a set whose members differ only by NUL is no duplicate; a real duplicate is.  The message
-- holds the escape (a PostgreSQL message cannot hold U+0000), which the gateway turns back
-- into \u0000 (test/clients/node/nul_strings.test.js)
SELECT a('PutItem', '{"TableName": "NulSize", "Item": {"k": {"S": "s"}, "ss": {"SS": ["a", "a\u0000", "\u0000a"]}}}');
SELECT a('PutItem', '{"TableName": "NulSize", "Item": {"k": {"S": "s"}, "ss": {"SS": ["a\u0000", "a\u0000"]}}}') IS NOT NULL AS refused;
-- the legacy parameters name attributes holding U+0000 too
SELECT a('UpdateItem', '{"TableName": "NulSize", "Key": {"k": {"S": "leg"}},
  "AttributeUpdates": {"x\u0000": {"Action": "PUT", "Value": {"S": "\u0000"}}, "y": {"Action": "PUT", "Value": {"S": "y"}}}}');
SELECT a('GetItem', '{"TableName": "NulSize", "Key": {"k": {"S": "leg"}}, "AttributesToGet": ["x\u0000"]}');
SELECT a('PutItem', '{"TableName": "NulSize", "Item": {"k": {"S": "leg"}}, "Expected": {"x\u0000": {"Value": {"S": "\u0000"}}}}');
SELECT a('PutItem', '{"TableName": "NulSize", "Item": {"k": {"S": "leg"}}, "Expected": {"x\u0000": {"Value": {"S": "\u0000"}}}}');
-- a backup and its restore keep the strings and their order (indexes rebuilt from the real strings)
SELECT a('CreateBackup', '{"TableName": "Nul", "BackupName": "nul"}')::jsonb #>> '{BackupDetails,BackupArn}' AS arn \gset
SELECT a('RestoreTableFromBackup', '{"TargetTableName": "NulRestored", "BackupArn": "' || :'arn' || '"}')::jsonb
  #>> '{TableDescription,TableStatus}';
SELECT a('Query', '{"TableName": "NulRestored", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}},
  "ProjectionExpression": "sk"}');
SELECT a('Query', '{"TableName": "NulRestored", "IndexName": "byG", "KeyConditionExpression": "g = :g",
  "ExpressionAttributeValues": {":g": {"S": "g\u0000"}}, "ProjectionExpression": "sk"}');
SELECT a('DeleteBackup', '{"BackupArn": "' || :'arn' || '"}')::jsonb #>> '{BackupDescription,BackupDetails,BackupStatus}';
-- stream records: images hold the escaped strings; their sizes count U+0000 as one byte
SELECT a('CreateTable', '{"TableName": "NulStream", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}')::jsonb #>> '{TableDescription,TableStatus}';
SELECT a('PutItem', '{"TableName": "NulStream", "Item": {"k": {"S": "\u0000"}, "v": {"S": "a\u0000"}}}');
SELECT a('PutItem', '{"TableName": "NulStream", "Item": {"k": {"S": "x"}, "v": {"S": "ab"}}}');
SELECT r.keys -> 'k' ->> 'S' = E'\uE0000' AS escaped_key, r.new_image -> 'v' ->> 'S' = E'a\uE0000' AS escaped_image, r.size_bytes
  FROM dynindex.stream_records r JOIN dynindex.streams s USING (stream_id)
 WHERE s.table_name = 'NulStream' ORDER BY r.seq;
-- and GetRecords (through api_text, as the gateway calls it) answers them with the real strings
SELECT dynindex.api('DescribeTable', '{"TableName": "NulStream"}') #>> '{Table,LatestStreamArn}' AS sarn \gset
SELECT regexp_replace(a('GetRecords', jsonb_build_object('ShardIterator',
         dynindex.api('GetShardIterator', jsonb_build_object('StreamArn', :'sarn', 'ShardId', s ->> 'ShardId',
           'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator')::text),
         '"(eventID|SequenceNumber|ApproximateCreationDateTime|NextShardIterator|eventSourceARN)": ("[^"]*"|[0-9.]+)', '"\1": "-"', 'g') AS records
  FROM jsonb_array_elements(dynindex.api('DescribeStream', jsonb_build_object('StreamArn', :'sarn')) #> '{StreamDescription,Shards}') s
 ORDER BY 1;
-- clean up
SELECT a('DeleteTable', '{"TableName": "Nul"}') IS NOT NULL, a('DeleteTable', '{"TableName": "NulSize"}') IS NOT NULL,
       a('DeleteTable', '{"TableName": "NulRestored"}') IS NOT NULL, a('DeleteTable', '{"TableName": "NulStream"}') IS NOT NULL;
-- a lone surrogate escape is JSON but not jsonb: the error quotes no part of
-- the body (it may hold items, personal data that must not reach a log):
-- no "Token ... is invalid" DETAIL, no "JSON data, line 1: ..." CONTEXT
\set VERBOSITY default
SELECT dynindex.api_text('PutItem', '{"TableName": "t", "Item": {"pk": {"S": "private \ud800 data"}}}');
SELECT dynindex.api_text('PutItem', '{"TableName": "t", "Item": {"pk": {"N": "1e999999999"}}}');
\set VERBOSITY terse
