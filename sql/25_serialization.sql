-- Deserialization (SerializationException) comes first: DynamoDB reads the
-- whole body before it judges a required member, a constraint or a table, and
-- its messages depend on where the value sits (docs/errors.md, "Serialization").
SELECT dynindex.api('CreateTable', '{"TableName": "ser_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;

-- 1. member kinds before "required" members, constraints and tables
SELECT dynindex.api('CreateTable', '{"AttributeDefinitions": true}');
SELECT dynindex.api('CreateTable', '{"KeySchema": "x"}');
SELECT dynindex.api('UpdateTable', '{"GlobalSecondaryIndexUpdates": {}}');
SELECT dynindex.api('UpdateTable', '{"BillingMode": 1}');
SELECT dynindex.api('DescribeTable', '{"TableName": 5}');
SELECT dynindex.api('DeleteTable', '{"TableName": ["a"]}');
-- a B that is no base64 string: before constraints and the table
SELECT dynindex.api('GetItem', '{"TableName": "nothere", "Key": {"pk": {"B": "abc"}}}');
SELECT dynindex.api('GetItem', '{"TableName": "", "Key": {"pk": {"B": 12}}}');
SELECT dynindex.api('PutItem', '{"TableName": "ser_t", "Item": {"pk": {"S": "a"}, "b": {"BS": ["AA==", "abcde"]}}, "ReturnValues": "BAD"}');
SELECT dynindex.api('Query', '{"TableName": "nothere", "Limit": 0, "ExpressionAttributeValues": {":v": {"B": "A==="}}}');
SELECT dynindex.api('Scan', '{"TableName": "ser_t", "ExclusiveStartKey": {"pk": {"L": [{"B": true}]}}, "Segment": 5}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"ser_t": [{"PutRequest": {"Item": {"pk": {"S": "a"}, "x": {"M": {"y": {"B": "a"}}}}}}]}}');

-- 2. an attribute value position holding no object: "Unexpected value type in payload"
SELECT dynindex.api('GetItem', '{"TableName": "ser_t", "Key": {"pk": "a"}}');
SELECT dynindex.api('GetItem', '{"TableName": "ser_t", "Key": {"pk": 1}}');
SELECT dynindex.api('PutItem', '{"TableName": "ser_t", "Item": {"pk": {"S": "a"}, "m": {"M": {"x": true}}}}');
SELECT dynindex.api('PutItem', '{"TableName": "ser_t", "Item": {"pk": {"S": "a"}, "l": {"L": ["x"]}}}');
SELECT dynindex.api('Query', '{"TableName": "ser_t", "KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": "a"}}');
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "ser_t", "Item": {"pk": "a"}}}]}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"ser_t": {"Keys": [{"pk": 7}]}}}');
-- a structure as a map value or list element: the same; as a field: "Unexpected field type"
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"ser_t": "x"}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"ser_t": ["x"]}}');
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [1]}');
SELECT dynindex.api('PutItem', '{"TableName": "ser_t", "Item": {"pk": {"S": "a"}}, "Expected": {"a": 1}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"ser_t": [{"PutRequest": "x"}]}}');
-- collections name the Java type DynamoDB expected
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": [1]}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": []}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"ser_t": {"Keys": [[]]}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"ser_t": {"Keys": [{"pk": {"S": "a"}}], "ExpressionAttributeNames": []}}}');
SELECT dynindex.api('Query', '{"TableName": "ser_t", "KeyConditions": []}');
SELECT dynindex.api('PutItem', '{"TableName": "ser_t", "Item": {"pk": {"S": "a"}, "m": {"M": []}}}');
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [[]]}');
SELECT dynindex.api('GetItem', '{"TableName": "ser_t", "Key": {"pk": [{"S": "a"}]}}');
-- a list or map nested in a collection, given a scalar: Java's cast failure
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"ser_t": "x"}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"ser_t": {"Keys": ["x"]}}}');
