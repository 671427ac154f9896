-- PartiQL SELECT (ExecuteStatement): how statements map to GetItem, Query and Scan,
-- literals and parameters, conditions, paths, ORDER BY, indexes, paging
SELECT dynindex.api('CreateTable', '{"TableName": "pq_orders", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
    {"AttributeName": "status", "AttributeType": "S"}, {"AttributeName": "total", "AttributeType": "N"}],
  "LocalSecondaryIndexes": [{"IndexName": "by_total", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "total", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "by_status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "pq_users", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}') IS NOT NULL AS created;

-- ps(statement [, parameters [, extra request members]]): ExecuteStatement
CREATE OR REPLACE FUNCTION ps(stmt text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', stmt) ||
    CASE WHEN params IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('Parameters', params) END || extra)
$$;

-- data, written with PartiQL INSERTs: literals of every kind
SELECT ps($$INSERT INTO "pq_orders" VALUE {'pk': 'c1', 'sk': 1, 'status': 'open', 'total': 30,
  'note': 'first', 'flags': [true, false, null], 'addr': {'city': 'Oslo', 'zip': '0150'},
  'tags': <<'a', 'b'>>, 'nums': <<1, 2.5>>, 'items': [{'sku': 'x1', 'qty': 2}, {'sku': 'x2', 'qty': 1}]}$$);
SELECT ps($$INSERT INTO pq_orders VALUE {'pk': 'c1', 'sk': 2, 'status': 'shipped', 'total': 12.50, 'note': 'second'}$$);
SELECT ps($$INSERT INTO pq_orders VALUE {'pk': 'c1', 'sk': 3, 'status': 'open', 'total': -4, 'empty': ''}$$);
SELECT ps('INSERT INTO pq_orders VALUE {''pk'': ?, ''sk'': ?, ''total'': ?, ''bin'': ?}',
  '[{"S": "c2"}, {"N": "1"}, {"N": "99"}, {"B": "AAEC"}]');
SELECT ps($$insert into "pq_users" value {'id': 'u1', 'name': 'Ann', 'age': 41}$$);
SELECT ps($$INSERT INTO pq_users VALUE {'id': 'u2', 'name': 'Bob'}$$);

-- full primary key by equality: a GetItem (same item, same capacity as GetItem)
SELECT ps($$SELECT * FROM pq_orders WHERE pk = 'c1' AND sk = 1$$);
SELECT ps($$SELECT * FROM "pq_orders" WHERE "sk" = 2 AND "pk" = 'c1'$$, NULL, '{"ReturnConsumedCapacity": "TOTAL"}');
SELECT dynindex.api('GetItem', '{"TableName": "pq_orders", "Key": {"pk": {"S": "c1"}, "sk": {"N": "2"}},
  "ReturnConsumedCapacity": "TOTAL"}');
SELECT ps($$SELECT * FROM pq_orders WHERE pk = 'c1' AND sk = 9$$, NULL, '{"ReturnConsumedCapacity": "TOTAL", "ConsistentRead": true}');
SELECT ps('SELECT name, age FROM pq_users WHERE id = ?', '[{"S": "u1"}]');
-- numbers in keys compare numerically
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND sk = 1.0e0$$);

-- partition key pinned: a Query (sort-key condition as key condition), in key order
SELECT ps($$SELECT sk, total FROM pq_orders WHERE pk = 'c1'$$, NULL, '{"ReturnConsumedCapacity": "TOTAL"}');
SELECT dynindex.api('Query', '{"TableName": "pq_orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "c1"}}, "ProjectionExpression": "sk, #t",
  "ExpressionAttributeNames": {"#t": "total"}, "ReturnConsumedCapacity": "TOTAL"}');
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND sk > 1$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND sk BETWEEN 2 AND 3$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND sk >= 2 AND sk < 3$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE 1 < sk AND pk = 'c1'$$);
-- further conditions (also on key attributes) filter the Query
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND status = 'open'$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND (sk = 1 OR sk = 3)$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND sk <> 2$$);
-- ORDER BY the sort key
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' ORDER BY sk DESC$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' ORDER BY sk ASC$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' ORDER BY pk, sk DESC$$);

-- IN (or an OR of equalities) on the partition key: one Query per value
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE pk IN ['c2', 'c1'] AND sk = 1$$);
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE pk IN ('c2', 'c1', 'nobody') ORDER BY pk$$);
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE pk IN ['c2', 'c1'] ORDER BY pk DESC, sk DESC$$);
SELECT ps($$SELECT id FROM pq_users WHERE id = 'u1' OR id = 'u2'$$);

-- anything else: a Scan with the WHERE as its filter
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE status = 'open'$$, NULL, '{"ReturnConsumedCapacity": "TOTAL"}');
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE pk = 'c1' OR total > 50$$);
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE sk = 1$$);
SELECT ps($$SELECT id FROM pq_users$$);
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE NOT pk = 'c1'$$);
SELECT ps($$SELECT pk, sk FROM pq_orders WHERE pk > 'c1'$$);

-- comparisons, AND/OR/NOT, BETWEEN, IN, IS [NOT] MISSING/NULL/type, functions
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND total >= 12.5 AND total != 30$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND NOT (status = 'open')$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND total NOT BETWEEN 0 AND 20$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND status IN ['shipped', 'lost']$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND status NOT IN ['shipped']$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND note IS MISSING$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND note IS NOT MISSING$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND flags[2] IS NULL$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND note IS NOT NULL AND note IS STRING$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND addr IS TUPLE AND items IS LIST AND flags[0] IS BOOLEAN AND total IS NUMERIC$$);
SELECT ps($$SELECT pk FROM pq_orders WHERE bin IS BLOB$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND begins_with(note, 'fir')$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND contains(tags, 'b') AND contains(note, 'irs')$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND attribute_type(total, 'N') AND size(note) > 5$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND EXISTS(addr.city) AND MISSING(addr.street)$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND size(items) = 2 AND items[1].qty = 1$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND addr = {'city': 'Oslo', 'zip': '0150'}$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND tags = <<'b', 'a'>> AND flags = [true, false, null]$$);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1' AND "empty" = ''$$);
SELECT ps('SELECT sk FROM pq_orders WHERE pk = ? AND total BETWEEN ? AND ?', '[{"S": "c1"}, {"N": "-10"}, {"N": "13"}]');

-- nested paths in the projection; '?' inside a string is text
SELECT ps($$SELECT addr.city, items[0].sku, items[1], flags[1], nums FROM pq_orders WHERE pk = 'c1' AND sk = 1$$);
SELECT ps($$SELECT "addr"."zip" FROM pq_orders WHERE pk = 'c1' AND note = 'first?'$$);
-- keywords in any case, comments, a final semicolon, quoted reserved words
SELECT ps($$select sk -- the sort key
  from pq_orders /* a comment */ where pk = 'c1' and "status" = 'shipped';$$);

-- secondary indexes: FROM "table"."index"
SELECT ps($$SELECT sk, total FROM "pq_orders"."by_total" WHERE pk = 'c1' AND total > 0$$);
SELECT ps($$SELECT sk, total FROM "pq_orders"."by_total" WHERE pk = 'c1' ORDER BY total DESC$$);
SELECT dynindex.wait_for_indexes('pq_orders');
SELECT ps($$SELECT * FROM "pq_orders"."by_status" WHERE status = 'open'$$);
SELECT ps($$SELECT pk, sk FROM "pq_orders"."by_status"$$);
SELECT ps($$SELECT * FROM "pq_orders"."by_status" WHERE status = 'open'$$, NULL, '{"ConsistentRead": true}');
SELECT ps($$SELECT * FROM "pq_orders"."nosuch" WHERE pk = 'c1'$$);

-- paging: Limit counts items read, NextToken continues (also across the Queries of an IN)
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1'$$, NULL, '{"Limit": 2}') - 'NextToken' AS page1;
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1'$$, NULL, jsonb_build_object('Limit', 2,
  'NextToken', ps($$SELECT sk FROM pq_orders WHERE pk = 'c1'$$, NULL, '{"Limit": 2}') ->> 'NextToken')) AS page2;
CREATE FUNCTION pages(stmt text, lim int) RETURNS SETOF jsonb LANGUAGE plpgsql AS $$
DECLARE res jsonb; req jsonb := jsonb_build_object('Statement', stmt, 'Limit', lim);
BEGIN
  LOOP
    res := dynindex.api('ExecuteStatement', req);
    RETURN NEXT res -> 'Items';
    EXIT WHEN res ->> 'NextToken' IS NULL;
    req := req || jsonb_build_object('NextToken', res ->> 'NextToken');
  END LOOP;
END $$;
SELECT * FROM pages($$SELECT pk, sk FROM pq_orders WHERE pk IN ['c1', 'c2']$$, 2);
SELECT * FROM pages($$SELECT pk, sk FROM pq_orders WHERE status = 'open' OR pk = 'c2'$$, 1);
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c1'$$, NULL, '{"NextToken": "garbage"}');
SELECT ps($$SELECT sk FROM pq_orders WHERE pk = 'c2'$$, NULL, jsonb_build_object('NextToken',
  ps($$SELECT sk FROM pq_orders WHERE pk = 'c1'$$, NULL, '{"Limit": 1}') ->> 'NextToken'));

-- the SQL function: rows, all pages
SELECT * FROM dynindex.partiql($$SELECT pk, sk, total FROM pq_orders WHERE total > 0$$);
SELECT * FROM dynindex.partiql('SELECT name FROM pq_users WHERE id = ?', '[{"S": "u1"}]');
SELECT count(*) FROM dynindex.partiql('SELECT * FROM pq_orders WHERE pk = ''nobody''');
