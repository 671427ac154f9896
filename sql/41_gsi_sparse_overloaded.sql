-- Sparse and overloaded GSIs (single-table design).
\set VERBOSITY terse
SELECT dynindex.api('CreateTable', '{"TableName":"Shop",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},
    {"AttributeName":"gsi1pk","AttributeType":"S"},{"AttributeName":"gsi1sk","AttributeType":"S"},
    {"AttributeName":"a1","AttributeType":"S"},{"AttributeName":"a2","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "GlobalSecondaryIndexes":[
    {"IndexName":"gsi1","KeySchema":[{"AttributeName":"gsi1pk","KeyType":"HASH"},{"AttributeName":"gsi1sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}},
    {"IndexName":"multi","KeySchema":[{"AttributeName":"a1","KeyType":"HASH"},{"AttributeName":"a2","KeyType":"HASH"},{"AttributeName":"gsi1sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}],
  "BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL;

-- the pending-orders queue: gsi1pk is set while an order is pending
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Shop', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', 'CUST#' || (i % 3)), 'sk', jsonb_build_object('S', 'ORDER#' || lpad(i::text, 3, '0')),
         'gsi1pk', jsonb_build_object('S', 'PENDING'), 'gsi1sk', jsonb_build_object('S', '2025-01-' || lpad(i::text, 2, '0'))))))
  FROM generate_series(1, 6) i;
-- orders 2 and 5 ship: REMOVE the queue attribute
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"CUST#2"},"sk":{"S":"ORDER#002"}},"UpdateExpression":"SET shipped = :t REMOVE gsi1pk","ExpressionAttributeValues":{":t":{"BOOL":true}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"CUST#2"},"sk":{"S":"ORDER#005"}},"UpdateExpression":"SET shipped = :t REMOVE gsi1pk","ExpressionAttributeValues":{":t":{"BOOL":true}}}');
SELECT dynindex.wait_for_indexes('Shop');
SELECT jsonb_path_query_array(dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :p","ExpressionAttributeValues":{":p":{"S":"PENDING"}}}'), '$.Items[*].sk.S') AS queue;
-- the oldest two pending orders
SELECT dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :p","ExpressionAttributeValues":{":p":{"S":"PENDING"}},"Limit":2,"ProjectionExpression":"sk, gsi1sk"}');
SELECT jsonb_path_query_array(dynindex.api('Scan', '{"TableName":"Shop","IndexName":"gsi1"}'), '$.Items[*].sk.S') AS scan;
-- a shipped order re-opened comes back
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"CUST#2"},"sk":{"S":"ORDER#005"}},"UpdateExpression":"SET gsi1pk = :p REMOVE shipped","ExpressionAttributeValues":{":p":{"S":"PENDING"}}}');
SELECT dynindex.wait_for_indexes('Shop');
SELECT jsonb_path_query_array(dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :p","ExpressionAttributeValues":{":p":{"S":"PENDING"}},"ScanIndexForward":false}'), '$.Items[*].sk.S') AS queue;
SELECT count(*) AS entries FROM dynindex.api('Scan', '{"TableName":"Shop","IndexName":"gsi1"}') r, jsonb_array_elements(r -> 'Items');

-- multi-attribute sparse: an item missing ANY of a1, a2, gsi1sk is not in "multi"
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"all"},"a1":{"S":"x"},"a2":{"N":"1"},"gsi1sk":{"S":"s"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"no-a1"},"a2":{"N":"1"},"gsi1sk":{"S":"s"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"no-a2"},"a1":{"S":"x"},"gsi1sk":{"S":"s"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"no-sk"},"a1":{"S":"x"},"a2":{"N":"1"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"null-a2"},"a1":{"S":"x"},"a2":{"NULL":true},"gsi1sk":{"S":"s"}}}');
SELECT dynindex.wait_for_indexes('Shop');
SELECT dynindex.api('Query', '{"TableName":"Shop","IndexName":"multi","KeyConditionExpression":"a1 = :a AND a2 = :b","ExpressionAttributeValues":{":a":{"S":"x"},":b":{"N":"1"}}}');
SELECT dynindex.api('Scan', '{"TableName":"Shop","IndexName":"multi"}');
-- removing one component takes the item out; setting it back puts it in
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"M"},"sk":{"S":"all"}},"UpdateExpression":"REMOVE a2"}');
SELECT dynindex.wait_for_indexes('Shop');
SELECT dynindex.api('Scan', '{"TableName":"Shop","IndexName":"multi","Select":"COUNT"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"M"},"sk":{"S":"no-a2"}},"UpdateExpression":"SET a2 = :n","ExpressionAttributeValues":{":n":{"N":"1"}}}');
SELECT dynindex.wait_for_indexes('Shop');
SELECT dynindex.api('Scan', '{"TableName":"Shop","IndexName":"multi"}') -> 'Items';

-- wrong type / empty string in any component: refused, nothing written (Put, Update, BatchWrite)
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"bad"},"a1":{"S":"x"},"a2":{"S":"1"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"bad"},"a1":{"S":""},"a2":{"N":"1"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"bad"},"gsi1sk":{"S":""}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"M"},"sk":{"S":"bad"},"gsi1pk":{"SS":["a"]}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"M"},"sk":{"S":"no-sk"}},"UpdateExpression":"SET a2 = :v","ExpressionAttributeValues":{":v":{"BOOL":true}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"M"},"sk":{"S":"bad"}},"UpdateExpression":"SET gsi1pk = :v","ExpressionAttributeValues":{":v":{"S":""}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Shop":[{"PutRequest":{"Item":{"pk":{"S":"M"},"sk":{"S":"bw1"},"a1":{"S":"x"}}}},{"PutRequest":{"Item":{"pk":{"S":"M"},"sk":{"S":"bad"},"a2":{"N":"1"},"a1":{"N":"1"}}}}]}}');
SELECT dynindex.api('Query', '{"TableName":"Shop","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"M"}},"ProjectionExpression":"sk"}');

-- overloaded: one GSI, three entity types with their own meaning of gsi1pk/gsi1sk
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"USER#ann"},"sk":{"S":"PROFILE"},"gsi1pk":{"S":"EMAIL#ann@example.com"},"gsi1sk":{"S":"USER#ann"},"name":{"S":"Ann"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"USER#bob"},"sk":{"S":"PROFILE"},"gsi1pk":{"S":"EMAIL#bob@example.com"},"gsi1sk":{"S":"USER#bob"},"name":{"S":"Bob"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"USER#ann"},"sk":{"S":"ORDER#100"},"gsi1pk":{"S":"STATUS#SHIPPED"},"gsi1sk":{"S":"2025-03-02#100"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"USER#bob"},"sk":{"S":"ORDER#101"},"gsi1pk":{"S":"STATUS#SHIPPED"},"gsi1sk":{"S":"2025-02-27#101"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"USER#bob"},"sk":{"S":"ORDER#102"},"gsi1pk":{"S":"STATUS#PLACED"},"gsi1sk":{"S":"2025-03-05#102"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"PRODUCT#p1"},"sk":{"S":"META"},"gsi1pk":{"S":"CATEGORY#books"},"gsi1sk":{"S":"PRODUCT#p1"},"price":{"N":"12"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"PRODUCT#p2"},"sk":{"S":"META"},"gsi1pk":{"S":"CATEGORY#books"},"gsi1sk":{"S":"PRODUCT#p2"},"price":{"N":"8"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Shop","Item":{"pk":{"S":"PRODUCT#p3"},"sk":{"S":"META"},"gsi1pk":{"S":"CATEGORY#games"},"gsi1sk":{"S":"PRODUCT#p3"},"price":{"N":"30"}}}');
SELECT dynindex.wait_for_indexes('Shop');
-- user by email
SELECT dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :e","ExpressionAttributeValues":{":e":{"S":"EMAIL#bob@example.com"}}}') -> 'Items';
-- shipped orders in March, by date
SELECT jsonb_path_query_array(dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :s AND gsi1sk BETWEEN :a AND :b","ExpressionAttributeValues":{":s":{"S":"STATUS#SHIPPED"},":a":{"S":"2025-02-01"},":b":{"S":"2025-03-31~"}}}'), '$.Items[*].sk.S') AS shipped;
SELECT jsonb_path_query_array(dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :s AND begins_with(gsi1sk, :m)","ExpressionAttributeValues":{":s":{"S":"STATUS#SHIPPED"},":m":{"S":"2025-03"}}}'), '$.Items[*].sk.S') AS shipped_march;
-- products of a category, filtered on a non-key attribute
SELECT dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :c","FilterExpression":"price < :p","ExpressionAttributeValues":{":c":{"S":"CATEGORY#books"},":p":{"N":"10"}}}');
-- a status change moves the order between partitions of the GSI
SELECT dynindex.api('UpdateItem', '{"TableName":"Shop","Key":{"pk":{"S":"USER#bob"},"sk":{"S":"ORDER#102"}},"UpdateExpression":"SET gsi1pk = :s","ExpressionAttributeValues":{":s":{"S":"STATUS#SHIPPED"}}}');
SELECT dynindex.wait_for_indexes('Shop');
SELECT jsonb_path_query_array(dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :s","ExpressionAttributeValues":{":s":{"S":"STATUS#SHIPPED"}},"ScanIndexForward":false}'), '$.Items[*].sk.S') AS shipped;
SELECT dynindex.api('Query', '{"TableName":"Shop","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :s","ExpressionAttributeValues":{":s":{"S":"STATUS#PLACED"}}}');
SELECT * FROM dynindex.verify_indexes('Shop') ORDER BY 1;
SELECT dynindex.api('DeleteTable', '{"TableName":"Shop"}') IS NOT NULL;
