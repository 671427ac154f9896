-- dynindex.query / dynindex.scan / dynindex.read_all, and Query on a local secondary index
\set VERBOSITY terse
CREATE EXTENSION IF NOT EXISTS dynindex;

SELECT dynindex.api('CreateTable', '{"TableName":"sf_t","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"N"},
                          {"AttributeName":"l","AttributeType":"S"}],
  "LocalSecondaryIndexes":[{"IndexName":"by_l","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],
                            "Projection":{"ProjectionType":"KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'sf_t', 'Item',
    jsonb_build_object('p', jsonb_build_object('S', 'u' || (i % 3)), 'c', jsonb_build_object('N', i::text),
                       'l', jsonb_build_object('S', 'L' || (20 - i) % 7), 'n', jsonb_build_object('S', 'name' || i)))))
  FROM generate_series(1, 20) i;

-- typed and plain results, both directions, filters, projections
SELECT * FROM dynindex.query('sf_t', 'p = :p AND c BETWEEN :a AND :b', vals => '{":p":{"S":"u1"},":a":{"N":"4"},":b":{"N":"13"}}');
SELECT * FROM dynindex.query('sf_t', 'p = :p AND c > :c', vals => '{":p":"u2",":c":10}', plain => true, forward => false);
SELECT * FROM dynindex.query('sf_t', '#p = :p', names => '{"#p":"p","#n":"n"}', vals => '{":p":"u0",":n":"name9"}',
                             filter => '#n <> :n', projection => '#n', plain => true);
SELECT count(*) FROM dynindex.query('sf_t', 'p = :p', vals => '{":p":{"S":"nobody"}}');
-- paging is transparent: read_all follows LastEvaluatedKey (Limit is per page)
SELECT count(*), count(DISTINCT i->'c') FROM dynindex.read_all('Query',
  '{"TableName":"sf_t","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"u1"}},"Limit":2}') i;
SELECT count(*) FROM dynindex.scan('sf_t');
SELECT * FROM dynindex.scan('sf_t', 'c < :c', vals => '{":c":3}', plain => true, projection => 'c, n') ORDER BY 1::text;
SELECT sum(n) FROM (SELECT seg, (SELECT count(*) FROM dynindex.scan('sf_t', segment => seg, total_segments => 3)) n
                      FROM generate_series(0, 2) seg) s;
SELECT * FROM dynindex.query('sf_t', 'p = :p AND c > :c', vals => '{":p":{"S":"u1"}}');
SELECT * FROM dynindex.read_all('DeleteItem', '{}');

-- a local secondary index: index order, ties broken by the table key, backward too
SELECT i->'l'->>'S' AS l, i->'c'->>'N' AS c, i ? 'n' AS has_n
  FROM dynindex.query('sf_t', 'p = :p', vals => '{":p":{"S":"u1"}}', index_name => 'by_l') i;
SELECT i->'l'->>'S' AS l, i->'c'->>'N' AS c
  FROM dynindex.query('sf_t', 'p = :p AND l >= :l', vals => '{":p":{"S":"u1"},":l":{"S":"L3"}}', index_name => 'by_l', forward => false) i;
-- paging an index: LastEvaluatedKey holds the index key and the table key
SELECT dynindex.api('Query', '{"TableName":"sf_t","IndexName":"by_l","KeyConditionExpression":"p = :p",
  "ExpressionAttributeValues":{":p":{"S":"u1"}},"Limit":2,"ReturnConsumedCapacity":"INDEXES"}');
SELECT count(*), count(DISTINCT i->'c') FROM dynindex.read_all('Query', '{"TableName":"sf_t","IndexName":"by_l",
  "KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"u1"}},"Limit":2,"ScanIndexForward":false}') i;
-- non-projected attributes are fetched from the table (and charged)
SELECT dynindex.api('Query', '{"TableName":"sf_t","IndexName":"by_l","KeyConditionExpression":"p = :p AND l = :l",
  "ExpressionAttributeValues":{":p":{"S":"u1"},":l":{"S":"L5"}},"Select":"ALL_ATTRIBUTES","ReturnConsumedCapacity":"INDEXES"}');
SELECT dynindex.api('Query', '{"TableName":"sf_t","IndexName":"by_l","KeyConditionExpression":"p = :p AND l = :l",
  "ExpressionAttributeValues":{":p":{"S":"u1"},":l":{"S":"L5"}},"ProjectionExpression":"n"}');
-- ExclusiveStartKey on an index
SELECT dynindex.api('Query', '{"TableName":"sf_t","IndexName":"by_l","KeyConditionExpression":"p = :p",
  "ExpressionAttributeValues":{":p":{"S":"u1"}},"Limit":2,"ProjectionExpression":"c",
  "ExclusiveStartKey":{"p":{"S":"u1"},"l":{"S":"L1"},"c":{"N":"19"}}}');
SELECT dynindex.api('Query', '{"TableName":"sf_t","IndexName":"by_l","KeyConditionExpression":"p = :p",
  "ExpressionAttributeValues":{":p":{"S":"u1"}},"ExclusiveStartKey":{"p":{"S":"u1"},"c":{"N":"19"}}}');
SELECT dynindex.api('Query', '{"TableName":"sf_t","IndexName":"by_l","KeyConditionExpression":"p = :p AND l = :l",
  "ExpressionAttributeValues":{":p":{"S":"u1"},":l":{"S":"L5"}},"FilterExpression":"l = :l"}');
SELECT count(*) FROM dynindex.scan('sf_t', index_name => 'by_l');
