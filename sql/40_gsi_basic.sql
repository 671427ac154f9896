-- GSIs: definition checks (CreateTable, UpdateTable), DescribeTable, basic
-- reads, projections, ConsistentRead, Scan (parallel too), an inverted index.
\set VERBOSITY terse
-- a helper: CreateTable Orders with the given GSI list (and billing)
CREATE FUNCTION gsi_create(gsis jsonb, extra jsonb DEFAULT '{"BillingMode":"PAY_PER_REQUEST"}') RETURNS jsonb
LANGUAGE sql AS $$
  SELECT dynindex.api('CreateTable', jsonb_build_object(
    'TableName', 'Val',
    'AttributeDefinitions', '[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},
                              {"AttributeName":"a","AttributeType":"S"},{"AttributeName":"b","AttributeType":"N"},
                              {"AttributeName":"c","AttributeType":"B"}]'::jsonb,
    'KeySchema', '[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]'::jsonb,
    'GlobalSecondaryIndexes', gsis) || extra) -> 'TableDescription' -> 'GlobalSecondaryIndexes'
$$;
-- 21 GSIs
SELECT gsi_create((SELECT jsonb_agg(jsonb_build_object('IndexName', 'gsi' || i,
  'KeySchema', '[{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"b","KeyType":"RANGE"},{"AttributeName":"c","KeyType":"RANGE"}]'::jsonb,
  'Projection', '{"ProjectionType":"KEYS_ONLY"}'::jsonb)) FROM generate_series(1, 21) i));
-- empty list
SELECT gsi_create('[]');
-- HASH after RANGE, RANGE only, duplicates, 5 HASH, undefined attribute
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"b","KeyType":"RANGE"},{"AttributeName":"c","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"b","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"b","KeyType":"HASH"},{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"b","KeyType":"HASH"},{"AttributeName":"c","KeyType":"HASH"},{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"zz","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
-- projections
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY","NonKeyAttributes":["x"]}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL","NonKeyAttributes":["x"]}}]');
-- duplicate names, also with an LSI
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}},{"IndexName":"gsi","KeySchema":[{"AttributeName":"b","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
-- ProvisionedThroughput rules
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"},"ProvisionedThroughput":{"ReadCapacityUnits":1,"WriteCapacityUnits":1}}]');
SELECT gsi_create('[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]',
                  '{"ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}}');
-- an attribute definition no key uses
SELECT dynindex.api('CreateTable', '{"TableName":"Val","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"a","AttributeType":"S"},{"AttributeName":"u","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"GlobalSecondaryIndexes":[{"IndexName":"gsi","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}],"BillingMode":"PAY_PER_REQUEST"}');

-- a valid table: 20 GSIs with multi-attribute keys, KeySchema shown as given
SELECT jsonb_array_length(gsi_create((SELECT jsonb_agg(jsonb_build_object('IndexName', 'gsi' || i,
  'KeySchema', '[{"AttributeName":"b","KeyType":"HASH"},{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"},{"AttributeName":"sk","KeyType":"RANGE"}]'::jsonb,
  'Projection', '{"ProjectionType":"KEYS_ONLY"}'::jsonb)) FROM generate_series(1, 20) i)));
SELECT g - 'IndexArn' FROM jsonb_array_elements(dynindex.api('DescribeTable', '{"TableName":"Val"}') -> 'Table' -> 'GlobalSecondaryIndexes') g LIMIT 1;
-- a 21st by UpdateTable
SELECT dynindex.api('UpdateTable', '{"TableName":"Val","GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"gsi21","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
SELECT dynindex.api('DeleteTable', '{"TableName":"Val"}') IS NOT NULL;

-- The Orders table used below
SELECT dynindex.api('CreateTable', '{"TableName":"Orders",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"status","AttributeType":"S"},{"AttributeName":"amount","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "GlobalSecondaryIndexes":[
    {"IndexName":"byStatus","KeySchema":[{"AttributeName":"status","KeyType":"HASH"},{"AttributeName":"amount","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}},
    {"IndexName":"keys","KeySchema":[{"AttributeName":"status","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}},
    {"IndexName":"incl","KeySchema":[{"AttributeName":"status","KeyType":"HASH"},{"AttributeName":"amount","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["note"]}},
    {"IndexName":"inverted","KeySchema":[{"AttributeName":"sk","KeyType":"HASH"},{"AttributeName":"pk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}],
  "BillingMode":"PAY_PER_REQUEST"}') -> 'TableDescription' -> 'GlobalSecondaryIndexes';

-- UpdateTable checks: two creates, create + delete, existing name, unknown index,
-- throughput on on-demand, undefined attribute, missing AttributeDefinitions
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"},{"AttributeName":"y","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"xxx","KeySchema":[{"AttributeName":"x","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}},{"Create":{"IndexName":"yyy","KeySchema":[{"AttributeName":"y","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"xxx","KeySchema":[{"AttributeName":"x","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}},{"Delete":{"IndexName":"keys"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"keys","KeySchema":[{"AttributeName":"x","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","GlobalSecondaryIndexUpdates":[{"Delete":{"IndexName":"nope"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","GlobalSecondaryIndexUpdates":[{"Update":{"IndexName":"nope","ProvisionedThroughput":{"ReadCapacityUnits":1,"WriteCapacityUnits":1}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"xxx","KeySchema":[{"AttributeName":"x","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"},"ProvisionedThroughput":{"ReadCapacityUnits":1,"WriteCapacityUnits":1}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"xxx","KeySchema":[{"AttributeName":"x","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Orders","GlobalSecondaryIndexUpdates":[{"Delete":{"IndexName":"keys"}},{"Update":{"IndexName":"keys"}}]}');

-- items; a wrong type or an empty string in a GSI key attribute writes nothing
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"c1"},"sk":{"S":"o1"},"status":{"S":"PENDING"},"amount":{"N":"20"},"note":{"S":"n1"},"secret":{"S":"s1"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"c1"},"sk":{"S":"o2"},"status":{"S":"PENDING"},"amount":{"N":"-5.5"},"note":{"S":"n2"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"c2"},"sk":{"S":"o1"},"status":{"S":"SHIPPED"},"amount":{"N":"7"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"c2"},"sk":{"S":"o3"},"status":{"S":"PENDING"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"c3"},"sk":{"S":"o1"},"status":{"N":"1"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"c3"},"sk":{"S":"o1"},"status":{"S":""}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"c3"},"sk":{"S":"o1"},"amount":{"S":"1"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Orders","Key":{"pk":{"S":"c1"},"sk":{"S":"o1"}},"UpdateExpression":"SET #s = :v","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":v":{"S":""}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Orders","Key":{"pk":{"S":"c1"},"sk":{"S":"o1"}},"UpdateExpression":"SET amount = :v","ExpressionAttributeValues":{":v":{"S":"20"}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Orders":[{"PutRequest":{"Item":{"pk":{"S":"c4"},"sk":{"S":"o1"},"status":{"S":"PENDING"}}}},{"PutRequest":{"Item":{"pk":{"S":"c4"},"sk":{"S":"o2"},"status":{"B":"AA=="}}}}]}}');
SELECT dynindex.api('GetItem', '{"TableName":"Orders","Key":{"pk":{"S":"c4"},"sk":{"S":"o1"}}}');
SELECT dynindex.api('GetItem', '{"TableName":"Orders","Key":{"pk":{"S":"c1"},"sk":{"S":"o1"}},"ProjectionExpression":"#s, amount","ExpressionAttributeNames":{"#s":"status"}}');
SELECT dynindex.wait_for_indexes('Orders');

-- DescribeTable: ACTIVE, no Backfilling for indexes created with the table, counts and sizes
SELECT g ->> 'IndexName' AS name, g -> 'IndexStatus' AS status, g ? 'Backfilling' AS backfilling,
       g -> 'ItemCount' AS items, g -> 'IndexSizeBytes' AS bytes, g -> 'Projection' AS projection
  FROM jsonb_array_elements(dynindex.api('DescribeTable', '{"TableName":"Orders"}') -> 'Table' -> 'GlobalSecondaryIndexes') g;

-- Query: ALL projection, descending by an N sort key with negatives
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byStatus","KeyConditionExpression":"#s = :p","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}},"ScanIndexForward":false}');
-- sparse: c2/o3 has no amount, so byStatus and incl skip it; keys (hash only) has it
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"keys","KeyConditionExpression":"#s = :p","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
-- INCLUDE projects note, not secret
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"incl","KeyConditionExpression":"#s = :p AND amount > :z","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"},":z":{"N":"0"}}}');
-- non-projected attributes: a GSI never reads the base table, so asking for one fails
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"incl","KeyConditionExpression":"#s = :p","ProjectionExpression":"secret, note","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
SELECT dynindex.api('Scan', '{"TableName":"Orders","IndexName":"keys","AttributesToGet":["secret","pk"]}');
SELECT dynindex.api('Scan', '{"TableName":"Orders","IndexName":"incl","ProjectionExpression":"note, amount, nope.x, secret[1]"}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"incl","KeyConditionExpression":"#s = :p","ProjectionExpression":"note, pk","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"keys","KeyConditionExpression":"#s = :p","Select":"ALL_ATTRIBUTES","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"incl","KeyConditionExpression":"#s = :p","Select":"ALL_ATTRIBUTES","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
SELECT dynindex.api('Scan', '{"TableName":"Orders","IndexName":"keys","Select":"ALL_ATTRIBUTES"}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byStatus","KeyConditionExpression":"#s = :p","Select":"ALL_ATTRIBUTES","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"SHIPPED"}}}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"keys","KeyConditionExpression":"#s = :p","Select":"COUNT","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
-- ConsistentRead on a GSI: Query and Scan
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byStatus","ConsistentRead":true,"KeyConditionExpression":"#s = :p","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
SELECT dynindex.api('Scan', '{"TableName":"Orders","IndexName":"byStatus","ConsistentRead":true}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"nope","KeyConditionExpression":"#s = :p","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
-- Scan of a GSI (sparse: 4 of the 5 items), parallel: the segments partition it
SELECT (dynindex.api('Scan', '{"TableName":"Orders","IndexName":"byStatus"}') -> 'Count');
SELECT (dynindex.api('Scan', '{"TableName":"Orders","IndexName":"keys"}') -> 'Count');
SELECT sum((dynindex.api('Scan', jsonb_build_object('TableName', 'Orders', 'IndexName', 'byStatus', 'Segment', s, 'TotalSegments', 3)) ->> 'Count')::int)
  FROM generate_series(0, 2) s;
SELECT count(DISTINCT i), count(*) FROM generate_series(0, 3) s,
  jsonb_array_elements(dynindex.api('Scan', jsonb_build_object('TableName', 'Orders', 'IndexName', 'inverted', 'Segment', s, 'TotalSegments', 4)) -> 'Items') i;
-- the inverted index: items by sort key, then partition key
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"inverted","KeyConditionExpression":"sk = :o","ExpressionAttributeValues":{":o":{"S":"o1"}}}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"inverted","KeyConditionExpression":"sk = :o AND begins_with(pk, :c)","ExpressionAttributeValues":{":o":{"S":"o1"},":c":{"S":"c2"}},"ScanIndexForward":false}');
-- keys update moves entries; delete removes them
SELECT dynindex.api('UpdateItem', '{"TableName":"Orders","Key":{"pk":{"S":"c1"},"sk":{"S":"o1"}},"UpdateExpression":"SET #s = :v, amount = :t","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":v":{"S":"SHIPPED"},":t":{"N":"21"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName":"Orders","Key":{"pk":{"S":"c1"},"sk":{"S":"o2"}}}');
SELECT dynindex.wait_for_indexes('Orders');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byStatus","KeyConditionExpression":"#s = :p","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"SHIPPED"}}}') -> 'Items';
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byStatus","KeyConditionExpression":"#s = :p","ExpressionAttributeNames":{"#s":"status"},"ExpressionAttributeValues":{":p":{"S":"PENDING"}}}') -> 'Count';
SELECT * FROM dynindex.verify_indexes('Orders') ORDER BY 1;
SELECT index_name, index_status, queued_changes, changes_applied > 0 AS applied FROM dynindex.gsi_status WHERE table_name = 'Orders' ORDER BY 1;
SELECT dynindex.api('DeleteTable', '{"TableName":"Orders"}') IS NOT NULL;
DROP FUNCTION gsi_create(jsonb, jsonb);
