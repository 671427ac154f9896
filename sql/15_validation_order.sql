-- DynamoDB validates a request in a fixed order: member types
-- (SerializationException), member constraints ("N validation errors
-- detected"), request semantics (expressions, names, values, parameter
-- rules), resources (table, index), then keys and items against the schema.
-- Each request below has two problems; the first in that order wins.
SELECT dynindex.api('CreateTable', '{"TableName": "vo_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                           {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "g": {"S": "x"},
  "m": {"M": {"x": {"N": "1"}}}, "b": {"N": "1"}, "c": {"L": [{"N": "10"}, {"N": "20"}]}}}');

-- 1. member types before constraints
SELECT dynindex.api('PutItem', '{"TableName": "", "Item": {"pk": {"S": "a"}}, "ReturnValues": 5}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "Limit": "0"}');
-- 2. constraints before request semantics and resources
SELECT dynindex.api('PutItem', '{"TableName": "nothere", "Item": {"pk": {"S": "a"}}, "ReturnValues": "BAD", "ConditionExpression": "a ="}');
SELECT dynindex.api('Query', '{"TableName": "nothere", "KeyConditionExpression": "pk = ", "Limit": 0}');
SELECT dynindex.api('Scan', '{"TableName": "nothere", "Limit": 0, "Select": "BAD", "Segment": 1}');
SELECT dynindex.api('BatchGetItem', jsonb_build_object('RequestItems', jsonb_build_object('nothere', jsonb_build_object('Keys',
  (SELECT jsonb_agg(jsonb_build_object('pk', jsonb_build_object('S', 'k' || i))) FROM generate_series(1, 101) i)))));
SELECT dynindex.api('UpdateTimeToLive', '{"TableName": "nothere", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": ""}}');
-- 3. request semantics before resources
SELECT dynindex.api('PutItem', '{"TableName": "nothere", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "a ="}');
SELECT dynindex.api('PutItem', '{"TableName": "nothere", "Item": {"pk": {"S": "a"}, "s": {"SS": []}}}');
SELECT dynindex.api('GetItem', '{"TableName": "nothere", "Key": {"pk": {"S": "a"}}, "ProjectionExpression": "a, a"}');
SELECT dynindex.api('GetItem', '{"TableName": "nothere", "Key": {"pk": {"S": "a"}}, "ExpressionAttributeNames": {"#a": "a"}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "nothere", "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET a = :v"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "nothere", "Key": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_exists(a) AND"}');
SELECT dynindex.api('Query', '{"TableName": "nothere", "KeyConditionExpression": "pk = :p"}');
SELECT dynindex.api('Query', '{"TableName": "nothere", "Select": "ALL_PROJECTED_ATTRIBUTES", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT dynindex.api('Scan', '{"TableName": "nothere", "Segment": 1}');
SELECT dynindex.api('Scan', '{"TableName": "nothere", "Segment": 3, "TotalSegments": 3}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"nothere": {"Keys": [{"pk": {"S": "a"}}], "ProjectionExpression": "a, a"}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"nothere": [{"PutRequest": {"Item": {"pk": {"S": "a"}, "s": {"SS": []}}}}]}}');
-- ... in transactions, every action's expressions come before any table
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "nothere", "Item": {"pk": {"S": "a"}}}},
  {"ConditionCheck": {"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ConditionExpression": "a ="}}]}');
SELECT dynindex.api('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "nothere", "Key": {"pk": {"S": "a"}}}},
  {"Get": {"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ProjectionExpression": "!!!"}}]}');
-- ... table operations
SELECT dynindex.api('UpdateTable', '{"TableName": "nothere"}');
SELECT dynindex.api('UpdateTable', '{"TableName": "nothere", "BillingMode": "PROVISIONED"}');
SELECT dynindex.api('CreateTable', '{"TableName": "vo_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "RANGE"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
-- 4. resources before keys and items
SELECT dynindex.api('GetItem', '{"TableName": "nothere", "Key": {"zz": {"N": "1"}}}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "IndexName": "nope", "KeyConditionExpression": "zz = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "IndexName": "nope", "ExclusiveStartKey": {"zz": {"N": "1"}}}');
-- ... but an index's semantics before its existence
SELECT dynindex.api('Query', '{"TableName": "vo_t", "IndexName": "nope", "KeyConditionExpression": "pk = :p",
  "FilterExpression": "a =", "ExpressionAttributeValues": {":p": {"S": "a"}}}');
-- 5. keys against the schema, after everything else
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"N": "1"}}, "UpdateExpression": "SET a = :v"}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"N": "1"}}, "UpdateExpression": "SET a = :v",
  "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "KeyConditionExpression": "zz = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}, ":q": {"S": "b"}}}');

-- Update arithmetic: parenthesised operands and a parenthesised value are accepted
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET a1 = (b) + (c[1]), a2 = (b - :one), a3 = (if_not_exists(z, :one)) - b, a4 = (c[0] + :one)",
  "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValues": "UPDATED_NEW"}');
-- ... but not two pairs, and not a parenthesised sum as an operand of another
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET a1 = ((b - :one))", "ExpressionAttributeValues": {":one": {"N": "1"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET a1 = (b - :one) + :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET a1 = (b - :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}');

-- Key attributes are scalars: nested paths into a table key or an index key
-- attribute in projections and filters
SELECT dynindex.api('GetItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ProjectionExpression": "pk.x"}');
SELECT dynindex.api('GetItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ProjectionExpression": "#s[0]",
  "ExpressionAttributeNames": {"#s": "sk"}}');
SELECT dynindex.api('GetItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ProjectionExpression": "m.x, g.y"}');
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "FilterExpression": "pk.x = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "FilterExpression": "attribute_exists(g[1])"}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "KeyConditionExpression": "pk = :p", "FilterExpression": "g.y = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "KeyConditionExpression": "pk = :p", "ProjectionExpression": "b, sk.z",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"vo_t": {"Keys": [{"pk": {"S": "a"}, "sk": {"S": "1"}}], "ProjectionExpression": "g[0]"}}}');
SELECT dynindex.api('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "ProjectionExpression": "pk.q"}}]}');
-- ... a key attribute itself, and nested paths of other attributes, are fine
SELECT dynindex.api('GetItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ProjectionExpression": "pk, g, m.x, c[1]"}');
-- ... in a Query filter the primary key's own rule comes first; key conditions have theirs
SELECT dynindex.api('Query', '{"TableName": "vo_t", "KeyConditionExpression": "pk = :p", "FilterExpression": "sk.x = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "KeyConditionExpression": "pk = :p AND sk.x = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}');
-- ... an update of a nested path of a table key is an update of the key
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET #p.x = :v", "ExpressionAttributeNames": {"#p": "pk"}, "ExpressionAttributeValues": {":v": {"S": "x"}}}');
-- ... a nested path of an index key attribute in an update (target or operand) is refused
-- before the item is read (DynamoDB, recorded by ScyllaDB's test_gsi.py)
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET g.y = :v", "ExpressionAttributeValues": {":v": {"N": "3"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "REMOVE #g[0]", "ExpressionAttributeNames": {"#g": "g"}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET b = (sk.x) + (c[1])"}');
-- ... the table key's own rule comes first: an update of pk.x is an update of the key
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET sk[0] = :v, g.y = :v", "ExpressionAttributeValues": {":v": {"N": "3"}}}');
-- ... and the condition's key paths before the update's
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET pk.x = :v", "ConditionExpression": "attribute_exists(g[1])",
  "ExpressionAttributeValues": {":v": {"N": "3"}}}');
-- ... in a ConditionExpression (PutItem, DeleteItem, UpdateItem, transactions), a
-- nested path of a key is refused even where the condition would fail anyway
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "ConditionExpression": "attribute_not_exists(pk.x)"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "ConditionExpression": "size(g.y) > :n", "ExpressionAttributeValues": {":n": {"N": "0"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET b = :n", "ConditionExpression": "#k[0] = :n",
  "ExpressionAttributeNames": {"#k": "sk"}, "ExpressionAttributeValues": {":n": {"N": "0"}}}');
-- ... the key itself is checked first
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"N": "1"}, "sk": {"S": "1"}},
  "ConditionExpression": "attribute_exists(g.y)"}');
-- ... in a transaction it is the action's ValidationError reason
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [
  {"ConditionCheck": {"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ConditionExpression": "attribute_exists(b)"}},
  {"Update": {"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "UpdateExpression": "SET g.y = :v",
    "ExpressionAttributeValues": {":v": {"N": "1"}}}}]}');
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "vo_t", "Item": {"pk": {"S": "b"}, "sk": {"S": "1"}}, "ConditionExpression": "attribute_not_exists(sk.z)"}}]}');
-- ... a nested path of another attribute is fine, and nothing was written above
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET m.y = :v", "ConditionExpression": "m.x = :one",
  "ExpressionAttributeValues": {":v": {"N": "2"}, ":one": {"N": "1"}}, "ReturnValues": "ALL_NEW"}') #> '{Attributes,m}' AS m;
-- a null member of a string set is a ValidationException (ExtendDB's dual-target suite, run
-- against Amazon DynamoDB), reported after the set's other checks; a null in NS or BS stays
-- a SerializationException (its DynamoDB text is not known)
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "n"}, "sk": {"S": "1"}, "s": {"SS": ["a", null]}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "n"}, "sk": {"S": "1"}, "s": {"L": [{"SS": [null, "a", "a"]}]}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"vo_t": [{"PutRequest": {"Item": {"pk": {"S": "n"}, "sk": {"S": "1"},
  "s": {"M": {"k": {"SS": ["a", null]}}}}}}]}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "n"}, "sk": {"S": "1"}, "s": {"NS": ["1", null]}}}');
-- Validation layers (DynamoDB, 2026-10-09: conformance suite captures in four regions for values,
-- us-east-1 and eu-west-2 for request validation). PutItem, UpdateItem and DeleteItem report request
-- validation inside the envelope, in the current wording:
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": ""}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"M": {"x": {"L": [{"N": "abc"}]}}}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "s": {"SS": ["b", "a", "b"]}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "s": {"SS": ["c", "b", "a", "b", "z", "a"]}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "s": {"BS": ["/w==", "AA==", "AA=="]}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "s": {"NS": ["2", "1", "2"]}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "ConditionExpression": "attribute_not_exists(pk) OR s = :t", "ExpressionAttributeValues": {":t": {"SS": ["b", "a", "b"]}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ExpressionAttributeNames": {"#a": "a"}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "ConditionExpression": "attribute_exists(a)", "ExpressionAttributeValues": {}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ConditionExpression": ""}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ReturnValues": "ALL_NEW"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "Expected": {"a": {"Exists": true}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "Expected": {"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"S": "x"}]}}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET b = :w", "ConditionExpression": "a = :v", "ExpressionAttributeValues": {":w": {"S": "x"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"N": "1e"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET b = :w", "ExpressionAttributeValues": {":w": {"S": "x"}}}');
-- ... a constraint error is not enveloped twice, and what is checked against the table stays bare
SELECT dynindex.api('PutItem', '{"TableName": "vo_t", "Item": {"pk": {"S": "a"}}, "ReturnValues": "NEVER"}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET sk = :w", "ExpressionAttributeValues": {":w": {"S": "x"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "vo_t", "Key": {"pk": {"S": "a"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "vo_nope", "Item": {"pk": {"S": "a"}}}');
-- GetItem, BatchGetItem and Query: the current wording, bare (no ExpressionAttributeValues wrapper)
SELECT dynindex.api('GetItem', '{"TableName": "vo_t", "Key": {"pk": {"N": ""}, "sk": {"S": "1"}}}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"vo_t": {"Keys": [{"pk": {"SS": ["b", "a", "b"]}, "sk": {"S": "1"}}]}}}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "KeyConditionExpression": "pk = :p", "FilterExpression": "n = :v",
  "ExpressionAttributeValues": {":p": {"S": "a"}, ":v": {"NS": ["2", "1", "2"]}}}');
-- BatchWriteItem, TransactWriteItems, TransactGetItems and Scan: the older wording
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"vo_t": [{"PutRequest": {"Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": ""}}}}]}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"vo_t": [{"DeleteRequest": {"Key": {"pk": {"SS": ["b", "a", "b"]}, "sk": {"S": "1"}}}}]}}');
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [{"Update": {"TableName": "vo_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
  "UpdateExpression": "SET n = :v", "ExpressionAttributeValues": {":v": {"N": ""}}}}]}');
SELECT dynindex.api('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "vo_t", "Key": {"pk": {"BS": ["/w==", "AA==", "AA=="]}, "sk": {"S": "1"}}}}]}');
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "FilterExpression": "n = :v", "ExpressionAttributeValues": {":v": {"NS": ["2", "1", "2"]}}}');
-- enum sets in DynamoDB's order; Query's ConditionalOperator outside its enum: alone, first, bare
-- (us-east-1 and eu-west-2, 2026-10-09)
SELECT dynindex.api('UpdateItem', '{"TableName": "", "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": {"S": "x"}},
  "ReturnValues": "INVALID"}');
SELECT dynindex.api('UpdateItem', '{"TableName": "vo_nokey", "AttributeUpdates": {"x": {"Action": "PUT", "Value": {"S": "1"}}},
  "Expected": {"a": {"Exists": false}, "b": {"Exists": false}}, "ConditionalOperator": "XOR"}');
SELECT dynindex.api('Query', '{"TableName": "vo_query_xor", "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
  "QueryFilter": {"b": {"ComparisonOperator": "NULL"}, "c": {"ComparisonOperator": "NULL"}}, "ConditionalOperator": "XOR", "Select": "BOGUS"}');
-- a malformed table name in RequestItems beside an unknown enum (us-east-1 and eu-west-2, 2026-10-09):
-- BatchGetItem reports both, the name in the newer framework's words; BatchWriteItem the enum alone
SELECT dynindex.api('BatchGetItem', '{"RequestItems": {"bad!name": {"Keys": [{"pk": {"S": "a"}}]}}, "ReturnConsumedCapacity": "BOGUS"}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"bad!name": [{"PutRequest": {"Item": {"pk": {"S": "a"}}}}]}, "ReturnConsumedCapacity": "BOGUS"}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"bad!name": [{"PutRequest": {"Item": {"pk": {"S": "a"}}}}]}}');
-- TransactWriteItems: a too long ClientRequestToken is reported ahead of an unknown enum (us-east-1, 2026-10-09)
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "vo_t", "Item": {"pk": {"S": "t"}, "sk": {"S": "1"}}}}],
  "ClientRequestToken": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "ReturnConsumedCapacity": "BOGUS"}');
-- orders on record (issue 23 item 5; docs/errors.md "Validation order"):
-- Query looks up the table and the index before it judges a legacy KeyConditions operator
SELECT dynindex.api('Query', '{"TableName": "nothere", "KeyConditions": {"pk": {"ComparisonOperator": "NE", "AttributeValueList": [{"S": "a"}]}}}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "IndexName": "nope", "KeyConditions": {"pk": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"S": "a"}]}}}');
SELECT dynindex.api('Query', '{"TableName": "vo_t", "KeyConditions": {"pk": {"ComparisonOperator": "NE", "AttributeValueList": [{"S": "a"}]}}}');
-- ... a missing ComparisonOperator is a member constraint, before the table
SELECT dynindex.api('Query', '{"TableName": "nothere", "KeyConditions": {"pk": {"AttributeValueList": [{"S": "a"}]}}}');
-- Scan: Segment/TotalSegments and ExclusiveStartKey before the expression attribute maps
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "Segment": 1, "ExpressionAttributeNames": {"#a": "a"}}');
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "Segment": 2, "TotalSegments": 2, "FilterExpression": "a = :v", "ExpressionAttributeValues": {":w": {"S": "x"}}}');
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "ExclusiveStartKey": {"pk": {"N": "x"}}, "ExpressionAttributeNames": {"#a": "a"}}');
SELECT dynindex.api('Scan', '{"TableName": "vo_t", "ExclusiveStartKey": {"pk": {"SS": []}}, "ProjectionExpression": "a, a"}');
-- GetItem: the Key's values before ExpressionAttributeNames
SELECT dynindex.api('GetItem', '{"TableName": "vo_t", "Key": {"pk": {"N": "x"}, "sk": {"S": "1"}}, "ExpressionAttributeNames": {"#a": "a"}}');
SELECT dynindex.api('GetItem', '{"TableName": "vo_t", "Key": {"pk": {"SS": ["a", "a"]}}, "ProjectionExpression": "#b", "ExpressionAttributeNames": {"#a": "a"}}');
SELECT dynindex.api('DeleteTable', '{"TableName": "vo_t"}')->'TableDescription'->>'TableStatus' AS deleted;
