-- A table's ARN wherever an existing table is named (TableName of every
-- operation but CreateTable, RequestItems keys of batches, transaction items),
-- and the table-name constraints of those members: 1..1024 characters, a plain
-- name also at most 255 and [a-zA-Z0-9_.-]+; the minimum of 3 is CreateTable's.
-- The region of ARNs made through SQL: one default on every path, the AWS SDKs'
-- (the endpoints use dynindex.region too for a request that names no region).
SHOW dynindex.region;
SELECT dynindex.api('CreateTable', '{"TableName": "arn_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}')
  ->'TableDescription'->>'TableArn' AS arn;
\set arn 'arn:aws:dynamodb:us-east-1:000000000000:table/arn_t'

-- data plane
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', :'arn', 'Item', '{"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "1"}}'::jsonb,
  'ReturnConsumedCapacity', 'TOTAL'));
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', :'arn', 'Key', '{"pk": {"S": "a"}, "sk": {"N": "1"}}'::jsonb));
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', :'arn', 'Key', '{"pk": {"S": "a"}, "sk": {"N": "1"}}'::jsonb,
  'UpdateExpression', 'SET v = v + :one', 'ExpressionAttributeValues', '{":one": {"N": "1"}}'::jsonb, 'ReturnValues', 'UPDATED_NEW'));
SELECT dynindex.api('Query', jsonb_build_object('TableName', :'arn', 'KeyConditionExpression', 'pk = :p',
  'ExpressionAttributeValues', '{":p": {"S": "a"}}'::jsonb));
SELECT dynindex.api('Scan', jsonb_build_object('TableName', :'arn', 'Select', 'COUNT'));
-- batches: the ARN is the RequestItems key, and the response keeps it
SELECT dynindex.api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object(:'arn',
  '[{"PutRequest": {"Item": {"pk": {"S": "b"}, "sk": {"N": "2"}}}}]'::jsonb)));
SELECT dynindex.api('BatchGetItem', jsonb_build_object('RequestItems', jsonb_build_object(:'arn',
  '{"Keys": [{"pk": {"S": "b"}, "sk": {"N": "2"}}]}'::jsonb)));
-- transactions
SELECT dynindex.api('TransactWriteItems', jsonb_build_object('TransactItems', jsonb_build_array(
  jsonb_build_object('Put', jsonb_build_object('TableName', :'arn', 'Item', '{"pk": {"S": "c"}, "sk": {"N": "3"}}'::jsonb)),
  jsonb_build_object('ConditionCheck', jsonb_build_object('TableName', :'arn', 'Key', '{"pk": {"S": "a"}, "sk": {"N": "1"}}'::jsonb,
    'ConditionExpression', 'attribute_exists(pk)')))));
SELECT dynindex.api('TransactGetItems', jsonb_build_object('TransactItems', jsonb_build_array(
  jsonb_build_object('Get', jsonb_build_object('TableName', :'arn', 'Key', '{"pk": {"S": "c"}, "sk": {"N": "3"}}'::jsonb)))));
SELECT dynindex.api('DeleteItem', jsonb_build_object('TableName', :'arn', 'Key', '{"pk": {"S": "c"}, "sk": {"N": "3"}}'::jsonb,
  'ReturnValues', 'ALL_OLD'));
-- table operations
SELECT dynindex.api('DescribeTable', jsonb_build_object('TableName', :'arn'))->'Table'->>'TableName' AS described;
SELECT dynindex.api('UpdateTimeToLive', jsonb_build_object('TableName', :'arn',
  'TimeToLiveSpecification', '{"Enabled": true, "AttributeName": "exp"}'::jsonb));
SELECT dynindex.api('DescribeTimeToLive', jsonb_build_object('TableName', :'arn'));
SELECT dynindex.api('UpdateTable', jsonb_build_object('TableName', :'arn', 'BillingMode', 'PROVISIONED',
  'ProvisionedThroughput', '{"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}'::jsonb))->'TableDescription'->>'TableName' AS updated;

-- the region comes from dynindex.region (the gateway sets it per request)
SET dynindex.region = 'eu-west-1';
SELECT dynindex.api('GetItem', '{"TableName": "arn:aws:dynamodb:eu-west-1:000000000000:table/arn_t",
  "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "ProjectionExpression": "v"}');
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', :'arn', 'Key', '{"pk": {"S": "a"}, "sk": {"N": "1"}}'::jsonb));
RESET dynindex.region;

-- ARNs that name no table of this endpoint
-- another account: refused, as DynamoDB refuses a cross-account request no policy allows
SELECT dynindex.api('GetItem', '{"TableName": "arn:aws:dynamodb:us-east-1:111111111111:table/arn_t", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}');
SELECT dynindex.api('DescribeTable', '{"TableName": "arn:aws:dynamodb:us-east-1:111111111111:table/arn_t"}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"arn:aws:dynamodb:us-east-1:111111111111:table/arn_t": {"Keys": [{"pk": {"S": "a"}, "sk": {"N": "1"}}]}}}');
-- another region, another partition, not a table
SELECT dynindex.api('GetItem', '{"TableName": "arn:aws:dynamodb:eu-west-2:000000000000:table/arn_t", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}');
SELECT dynindex.api('DescribeTable', '{"TableName": "arn:aws-cn:dynamodb:us-east-1:000000000000:table/arn_t"}');
SELECT dynindex.api('Query', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/arn_t/index/i", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT dynindex.api('DescribeTable', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/arn_t/stream/2026-01-01T00:00:00.000"}');
SELECT dynindex.api('DescribeTable', '{"TableName": "arn:aws:s3:::bucket/arn_t"}');
SELECT dynindex.api('DescribeTable', '{"TableName": "arn:aws:dynamodb"}');
SELECT dynindex.api('DescribeTable', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/"}');
-- a well-formed ARN of a table that does not exist
SELECT dynindex.api('DescribeTable', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/nothere"}');
SELECT dynindex.api('PutItem', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/nothere", "Item": {"pk": {"S": "a"}}}');
SELECT dynindex.api('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/nothere", "Key": {"pk": {"S": "a"}}}}]}');

-- TableName constraints (every operation but CreateTable)
-- empty: exactly one error, even beside another invalid member
SELECT dynindex.api('PutItem', '{"TableName": "", "Item": {}}');
SELECT dynindex.api('PutItem', '{"TableName": "", "Item": {"pk": {"S": "a"}}, "ReturnValues": "INVALID"}');
SELECT dynindex.api('GetItem', '{"TableName": "", "Key": {"pk": {"S": "a"}}}');
SELECT dynindex.api('Scan', '{"TableName": ""}');
SELECT dynindex.api('DeleteTable', '{"TableName": ""}');
-- ... but DescribeTable reports its minimum of 3 and the pattern together (us-west-2, 2026-10-09)
SELECT dynindex.api('DescribeTable', '{"TableName": ""}');
-- one or two characters: a legal name that is not there
SELECT dynindex.api('PutItem', '{"TableName": "ab", "Item": {"pk": {"S": "a"}}}');
SELECT dynindex.api('DescribeTable', '{"TableName": "a"}');
-- a plain name: at most 255 characters and the pattern
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', repeat('a', 256), 'Item', '{"pk": {"S": "a"}}'::jsonb));
SELECT dynindex.api('PutItem', '{"TableName": "bad table!@#", "Item": {"pk": {"S": "a"}}}');
-- an ARN: up to 1024 characters
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'arn:aws:dynamodb:us-east-1:000000000000:table/' || repeat('x', 300),
  'Key', '{"pk": {"S": "a"}}'::jsonb));
SELECT length('arn:aws:dynamodb:us-east-1:000000000000:table/' || repeat('x', 980)) AS arn_length,
  dynindex.api('GetItem', jsonb_build_object('TableName', 'arn:aws:dynamodb:us-east-1:000000000000:table/' || repeat('x', 980),
  'Key', '{"pk": {"S": "a"}}'::jsonb));
-- transaction items and batch keys follow the same rules
SELECT dynindex.api('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "", "Key": {"pk": {"S": "a"}}}}]}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"": {"Keys": [{"pk": {"S": "a"}}]}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"bad name": {"Keys": [{"pk": {"S": "a"}}]}}}');
-- CreateTable's new name: 3..255 and the pattern, so never an ARN
SELECT dynindex.api('CreateTable', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/new_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT dynindex.api('CreateTable', '{"TableName": "ab", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT dynindex.api('CreateTable', '{"BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');

-- DeleteTable by ARN
SELECT dynindex.api('DeleteTable', jsonb_build_object('TableName', :'arn'))->'TableDescription'->>'TableStatus' AS deleted;
SELECT dynindex.api('DescribeTable', jsonb_build_object('TableName', :'arn'));
