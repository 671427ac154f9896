-- PartiQL: parsed statements and the plans of SELECTs by key are kept per backend by
-- statement text; a second use binds its own Parameters and answers exactly as the first,
-- with the same errors, and a catalog change makes the text planned again.
SELECT dynindex.api('CreateTable', '{"TableName": "kp_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'kp_t', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'p' || i), 'sk', jsonb_build_object('N', j::text),
                     'v', jsonb_build_object('S', 'v' || i || '.' || j), 'm', jsonb_build_object('M',
                       jsonb_build_object('a', jsonb_build_object('N', (i * j)::text)))))))
FROM generate_series(1, 3) i, generate_series(1, 2) j;
CREATE OR REPLACE FUNCTION ps(stmt text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', stmt) ||
    CASE WHEN params IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('Parameters', params) END || extra)
$$;

-- the same text, other parameters: each use reads its own key (first use plans, the others reuse)
SELECT i, ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?',
  jsonb_build_array(jsonb_build_object('S', 'p' || i), jsonb_build_object('N', (1 + i % 2)::text)))
FROM generate_series(1, 4) i;
-- parameters in the other order of the key attributes, a literal beside a parameter, a projection
SELECT i, ps('SELECT v, m.a FROM kp_t WHERE sk = ? AND pk = ''p2''', jsonb_build_array(jsonb_build_object('N', i::text)))
FROM generate_series(1, 3) i;
SELECT i, ps('SELECT sk FROM "kp_t" WHERE "pk" = ? AND "sk" = 1', jsonb_build_array(jsonb_build_object('S', 'p' || i)),
  '{"ReturnConsumedCapacity": "TOTAL", "ConsistentRead": true}')
FROM generate_series(2, 3) i;
-- errors of a kept plan are the first use's: too few parameters, a key of the wrong type, a
-- parameter that is no AttributeValue, an empty key string; each error again with a text
-- never used before (a space added: planned from scratch) gives the same message
CREATE FUNCTION pq_err(stmt text, params jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ps(stmt, params);
  RETURN 'no error';
EXCEPTION WHEN others THEN
  RETURN SQLERRM;
END $$;
SELECT n, pq_err('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', p) = pq_err('SELECT * FROM kp_t WHERE pk = ? AND sk = ?' || repeat(' ', n), p) AS same
FROM (VALUES (1, '[{"S": "p1"}]'::jsonb), (2, '[{"S": "p1"}, {"S": "1"}]'), (3, '[{"S": "p1"}, {"N": "x"}]'),
             (4, '[{"S": "p1"}, "1"]'), (5, '[{"S": ""}, {"N": "1"}]'), (6, '[{"S": "p1"}, {"N": "1", "S": "1"}]'),
             (7, '[{"B": "AA=="}, {"N": "1"}]'), (8, '[{"S": "p1"}, {"N": "1e126"}]')) v(n, p);
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"S": "1"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "x"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, "1"]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": ""}, {"N": "1"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1", "S": "1"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"B": "AA=="}, {"N": "1"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1e126"}]');
-- more parameters than placeholders are ignored, as on the first use
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1"}, {"S": "extra"}]');
-- a NextToken on a SELECT by key is still checked
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1"}]', '{"NextToken": "garbage"}');

-- a Query or Scan whose `?` are whole values is kept too: each use its own values, Limit,
-- ConsistentRead, ReturnConsumedCapacity and NextToken
SELECT dynindex.api('UpdateTable', '{"TableName": "kp_t", "AttributeDefinitions": [{"AttributeName": "v", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "by_v", "KeySchema": [{"AttributeName": "v", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}}]}') IS NOT NULL AS updated;
SELECT dynindex.wait_for_indexes('kp_t');
SELECT i, ps('SELECT pk, sk, v FROM kp_t WHERE pk = ? AND sk >= ?',
  jsonb_build_array(jsonb_build_object('S', 'p' || i), jsonb_build_object('N', (3 - i)::text)))
FROM generate_series(1, 3) i;
SELECT i, ps('SELECT sk FROM kp_t WHERE pk = ? AND m.a > ?', jsonb_build_array(jsonb_build_object('S', 'p' || i),
  '{"N": "2"}'::jsonb), '{"ReturnConsumedCapacity": "TOTAL"}')
FROM generate_series(1, 3) i;
SELECT i, ps('SELECT sk FROM kp_t WHERE pk = ? AND sk > 0', jsonb_build_array(jsonb_build_object('S', 'p' || i)),
  jsonb_build_object('Limit', i, 'ConsistentRead', true))
FROM generate_series(1, 3) i;
SELECT i, ps('SELECT pk, sk FROM kp_t WHERE v = ? OR v = ''v3.2''', jsonb_build_array(jsonb_build_object('S', 'v' || i || '.1')))
FROM generate_series(1, 3) i;
SELECT i, ps('SELECT pk, sk FROM "kp_t"."by_v" WHERE v = ?', jsonb_build_array(jsonb_build_object('S', 'v' || i || '.2')))
FROM generate_series(1, 3) i;
SELECT ps('SELECT pk, sk FROM "kp_t"."by_v" WHERE v = ?', '[{"S": "v1.2"}]', '{"ConsistentRead": true}');
SELECT i, ps('SELECT pk, sk FROM kp_t WHERE pk IN [?] AND sk IN [1, ?]', jsonb_build_array(jsonb_build_object('S', 'p' || i),
  jsonb_build_object('N', i::text)))
FROM generate_series(1, 3) i;
-- NextToken of a page of a kept plan, and a first page again
SELECT ps('SELECT sk FROM kp_t WHERE pk = ? AND sk > 0', '[{"S": "p2"}]', jsonb_build_object('Limit', 1,
  'NextToken', ps('SELECT sk FROM kp_t WHERE pk = ? AND sk > 0', '[{"S": "p2"}]', '{"Limit": 1}') ->> 'NextToken'));
SELECT ps('SELECT sk FROM kp_t WHERE pk = ? AND sk > 0', '[{"S": "p3"}]');
-- `?` inside a literal (a list, a set) are planned on every use
SELECT i, ps('SELECT sk FROM kp_t WHERE pk = ? AND m IN [{''a'': ?}]', jsonb_build_array(jsonb_build_object('S', 'p' || i),
  jsonb_build_object('N', (i * 2)::text)))
FROM generate_series(1, 3) i;
SELECT ps('SELECT sk FROM kp_t WHERE pk = ? AND v <> <<?, ?>>', '[{"S": "p1"}, {"S": "v1.1"}, {"S": "v1.2"}]');
SELECT ps('SELECT sk FROM kp_t WHERE pk = ? AND v <> <<?, ?>>', '[{"S": "p1"}, {"S": "v1.1"}, {"N": "1"}]');
-- errors of kept Query and Scan plans are those of a fresh plan
SELECT n, pq_err(s, p) = pq_err(s || repeat(' ', n), p) AS same, pq_err(s, p)
FROM (VALUES (1, 'SELECT pk, sk, v FROM kp_t WHERE pk = ? AND sk >= ?', '[{"S": "p1"}, {"S": "1"}]'::jsonb),
             (2, 'SELECT pk, sk, v FROM kp_t WHERE pk = ? AND sk >= ?', '[{"N": "1"}, {"N": "1"}]'),
             (3, 'SELECT pk, sk, v FROM kp_t WHERE pk = ? AND sk >= ?', '[{"S": "p1"}]'),
             (4, 'SELECT pk, sk FROM kp_t WHERE v = ? OR v = ''v3.2''', '[{"S": "x", "N": "1"}]'),
             (5, 'SELECT pk, sk FROM kp_t WHERE v = ? OR v = ''v3.2''', '[{"SS": []}]'),
             (6, 'SELECT pk, sk FROM kp_t WHERE v = ? OR v = ''v3.2''', '[{"N": "1e200"}]'),
             (7, 'SELECT pk, sk FROM kp_t WHERE v = ? OR v = ''v3.2''', '[null]')) v(n, s, p);

-- rights are checked on every use of a kept plan, with the statement's own action
-- (PartiQLSelect): kept by a role that may read, refused to one that may not
SET client_min_messages = warning;
DROP ROLE IF EXISTS kp_reader, kp_other;
CREATE ROLE kp_reader NOLOGIN;
CREATE ROLE kp_other NOLOGIN;
RESET client_min_messages;
GRANT EXECUTE ON FUNCTION ps(text, jsonb, jsonb) TO kp_reader, kp_other;
SELECT dynindex.grant_table('kp_t', 'kp_reader', 'read');
SET ROLE kp_reader;
SELECT ps('SELECT v FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1"}]');
SELECT ps('SELECT v FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p2"}, {"N": "1"}]');
SELECT ps('SELECT v FROM kp_t WHERE pk = ? AND sk > ?', '[{"S": "p1"}, {"N": "1"}]');
SELECT ps('SELECT v FROM kp_t WHERE pk = ? AND sk > ?', '[{"S": "p2"}, {"N": "1"}]');
RESET ROLE;
SET ROLE kp_other;
SELECT ps('SELECT v FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1"}]');
SELECT ps('SELECT v FROM kp_t WHERE pk = ? AND sk > ?', '[{"S": "p1"}, {"N": "1"}]');
RESET ROLE;
SELECT dynindex.revoke_table('kp_t', 'kp_reader');
REVOKE EXECUTE ON FUNCTION ps(text, jsonb, jsonb) FROM kp_reader, kp_other;
DROP ROLE kp_reader, kp_other;

-- the table deleted: ResourceNotFoundException; created again with another key schema:
-- the same text is planned again (now a Scan: sk is no key attribute)
SELECT dynindex.api('DeleteTable', '{"TableName": "kp_t"}') IS NOT NULL AS deleted;
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1"}]');
SELECT dynindex.api('CreateTable', '{"TableName": "kp_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName": "kp_t", "Item": {"pk": {"S": "p1"}, "sk": {"N": "1"}, "v": {"S": "new"}}}');
SELECT ps('SELECT * FROM kp_t WHERE pk = ? AND sk = ?', '[{"S": "p1"}, {"N": "1"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ?', '[{"S": "p1"}]');
SELECT ps('SELECT * FROM kp_t WHERE pk = ?', '[{"S": "p1"}]');
-- in one transaction: the table replaced between two uses of the text
BEGIN;
SELECT dynindex.api('DeleteTable', '{"TableName": "kp_t"}') IS NOT NULL AS deleted;
SELECT dynindex.api('CreateTable', '{"TableName": "kp_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName": "kp_t", "Item": {"id": {"S": "p1"}, "pk": {"S": "p1"}}}');
SELECT ps('SELECT * FROM kp_t WHERE pk = ?', '[{"S": "p1"}]');
COMMIT;
SELECT dynindex.api('DeleteTable', '{"TableName": "kp_t"}') IS NOT NULL AS deleted;
