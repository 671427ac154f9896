-- PartiQL writes (ExecuteStatement): INSERT is PutItem that refuses an existing item,
-- UPDATE is UpdateItem of an existing item, DELETE is DeleteItem; the WHERE names the key
SELECT dynindex.api('CreateTable', '{"TableName": "pw_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
    {"AttributeName": "lsk", "AttributeType": "N"}, {"AttributeName": "g", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "by_lsk", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "lsk", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}]}') IS NOT NULL AS created;
CREATE OR REPLACE FUNCTION ps(stmt text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', stmt) ||
    CASE WHEN params IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('Parameters', params) END || extra)
$$;
CREATE FUNCTION item(p text, s text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'pw_t', 'Key',
    jsonb_build_object('pk', jsonb_build_object('S', p), 'sk', jsonb_build_object('S', s)))) -> 'Item'
$$;

-- INSERT
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '1', 'n': 1, 'l': [1], 'ss': <<'x'>>, 'm': {'k': {'v': 1}}, 'lsk': 5, 'g': 'G1'}$$,
  NULL, '{"ReturnConsumedCapacity": "TOTAL"}');
SELECT item('a', '1');
-- not an upsert: the same key again is DuplicateItemException
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '1', 'other': true}$$);
SELECT item('a', '1') ? 'other' AS overwritten;
-- parameters: any AttributeValue, in order
SELECT ps('INSERT INTO pw_t VALUE {''pk'': ?, ''sk'': ?, ''b'': ?, ''ns'': ?, ''m'': ?}',
  '[{"S": "a"}, {"S": "2"}, {"B": "3q2+7w=="}, {"NS": ["1", "2"]}, {"M": {"x": {"L": [{"NULL": true}]}}}]');
SELECT item('a', '2');
-- the item is checked as PutItem checks it
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a'}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': 3}$$);
SELECT ps('INSERT INTO pw_t VALUE {''pk'': ''a'', ''sk'': ?}', '[{"N": "3"}]');
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': ''}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'lsk': 'not a number'}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 's': <<'x', 'x'>>}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'm': {'x': 1e126}}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'l': [1, 1e-131]}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'n': 123456789012345678901234567890123456789}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'k': 1, 'k': 2}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'e': <<>>}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'e': <<1, 'a'>>}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3', 'e': <<true>>}$$);
SELECT ps($$INSERT INTO pw_t VALUE ['pk', 'a']$$);
SELECT ps($$INSERT INTO pw_t VALUES {'pk': 'a', 'sk': '3'}$$);
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'a', 'sk': '3'} RETURNING ALL OLD *$$);
SELECT ps($$INSERT INTO "pw_t"."by_g" VALUE {'pk': 'a', 'sk': '3'}$$);
SELECT ps($$INSERT INTO nosuch_table VALUE {'pk': 'a', 'sk': '3'}$$);

-- UPDATE: SET, REMOVE, arithmetic, list_append, set_add, set_delete, nested paths
SELECT ps($$UPDATE pw_t SET n = n + 10 SET l = list_append(l, [2, 3]) SET m.k.w = 'new'
  REMOVE m.k.v SET ss = set_add(ss, <<'y', 'z'>>) WHERE pk = 'a' AND sk = '1'$$);
SELECT item('a', '1');
SELECT ps($$UPDATE pw_t SET ss = set_delete(ss, <<'x'>>), n = 5 - n, l[0] = 'first' REMOVE g WHERE pk = 'a' AND sk = '1'
  RETURNING ALL NEW *$$);
SELECT ps($$UPDATE pw_t SET n = ? WHERE pk = ? AND sk = ? RETURNING MODIFIED OLD *$$,
  '[{"N": "7"}, {"S": "a"}, {"S": "1"}]');
SELECT ps($$UPDATE pw_t SET n = 8, x = 'x' WHERE pk = 'a' AND sk = '1' RETURNING MODIFIED NEW *$$);
SELECT ps($$UPDATE pw_t SET n = 9 WHERE pk = 'a' AND sk = '1' RETURNING ALL OLD *$$) -> 'Items' -> 0 -> 'n';
-- more conditions in the WHERE are the write's condition; a missing item fails
SELECT ps($$UPDATE pw_t SET n = 10 WHERE pk = 'a' AND sk = '1' AND n = 9 AND x IS NOT MISSING$$);
SELECT ps($$UPDATE pw_t SET n = 11 WHERE pk = 'a' AND sk = '1' AND n = 1$$);
SELECT ps($$UPDATE pw_t SET n = 11 WHERE pk = 'a' AND sk = '1' AND n = 1$$, NULL,
  '{"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
DO $$
DECLARE d text;
BEGIN
  PERFORM dynindex.api('ExecuteStatement', '{"Statement": "UPDATE pw_t SET n = 11 WHERE pk = ''a'' AND sk = ''1'' AND n = 1",
    "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
EXCEPTION WHEN SQLSTATE 'YD004' THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RAISE NOTICE 'old n: %', d::jsonb -> 'Item' -> 'n';
END $$;
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' AND sk = 'missing'$$);
SELECT item('a', 'missing');
-- the key: every key attribute by a top-level equality
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a'$$);
SELECT ps($$UPDATE pw_t SET n = 1$$);
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' OR sk = '1'$$);
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' AND sk > '1'$$);
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' AND sk = '1' AND sk = '2'$$);
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' AND sk = '1' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' AND sk = 1$$);
SELECT ps($$UPDATE pw_t SET sk = '9' WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t SET n = n + 'x' WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t SET ss = set_add(n, <<'q'>>) WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t SET ss = set_add(ss, 'q') WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t SET ss = set_delete(ss) WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t SET n = x IS MISSING WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t ADD n 1 WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' AND sk = '1' RETURNING ALL OLD$$);
SELECT ps($$UPDATE pw_t SET n = 1 WHERE pk = 'a' AND sk = '1' RETURNING NEW *$$);

-- DELETE: the full key; deleting a missing item succeeds
SELECT ps($$DELETE FROM pw_t WHERE pk = 'a' AND sk = 'missing'$$);
SELECT ps($$DELETE FROM pw_t WHERE pk = 'a' AND sk = '2' AND b IS MISSING$$);
SELECT ps($$DELETE FROM pw_t WHERE pk = 'a' AND sk = '2' RETURNING ALL OLD *$$, NULL, '{"ReturnConsumedCapacity": "TOTAL"}');
SELECT item('a', '2');
SELECT ps($$DELETE FROM pw_t WHERE pk = 'a' AND sk = '1' RETURNING ALL NEW *$$);
SELECT ps($$DELETE FROM pw_t WHERE pk = 'a'$$);
SELECT ps($$DELETE FROM pw_t$$);

-- the same write path: indexes follow PartiQL writes
SELECT ps($$INSERT INTO pw_t VALUE {'pk': 'b', 'sk': '1', 'lsk': 2, 'g': 'G2'}$$);
SELECT ps($$UPDATE pw_t SET lsk = 1, g = 'G3' WHERE pk = 'a' AND sk = '1'$$);
SELECT ps($$SELECT pk, sk, lsk FROM "pw_t"."by_lsk" WHERE pk = 'a' AND lsk < 5$$);
SELECT dynindex.wait_for_indexes('pw_t');
SELECT ps($$SELECT pk, sk FROM "pw_t"."by_g" WHERE g = 'G3'$$);
SELECT ps($$SELECT pk, sk FROM "pw_t"."by_g" WHERE g = 'G1'$$);
SELECT * FROM dynindex.verify_indexes('pw_t');
-- capacity is the JSON operations': an update costs as UpdateItem
SELECT ps($$UPDATE pw_t SET big = ? WHERE pk = 'b' AND sk = '1'$$, jsonb_build_array(jsonb_build_object('S', repeat('x', 3000))),
  '{"ReturnConsumedCapacity": "INDEXES"}');
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', 'pw_t', 'Key', '{"pk": {"S": "b"}, "sk": {"S": "1"}}'::jsonb,
  'UpdateExpression', 'SET big = :v', 'ExpressionAttributeValues', jsonb_build_object(':v', jsonb_build_object('S', repeat('y', 3000))),
  'ReturnConsumedCapacity', 'INDEXES'));
-- the SQL function returns the RETURNING item
SELECT * FROM dynindex.partiql($$UPDATE pw_t SET n = 1 WHERE pk = 'b' AND sk = '1' RETURNING MODIFIED NEW *$$);
SELECT * FROM dynindex.partiql($$DELETE FROM pw_t WHERE pk = 'b' AND sk = '1'$$);
