-- PartiQL SELECT paging: an IN (or OR) on the partition key is several Queries answered in
-- pages of up to 10 items with NextToken; every SELECT stops at 1 MB read with NextToken;
-- following NextToken returns every item exactly once.
SELECT dynindex.api('CreateTable', '{"TableName": "pg_hash", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "pg_comp", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "pg_big", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;

-- 30 items of pg_hash (id 1..30, odd ones 'red'); pg_comp: partitions a (7 items), b (7), c (7)
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'pg_hash', 'Item',
  jsonb_build_object('id', jsonb_build_object('N', i::text), 'color', jsonb_build_object('S', CASE WHEN i % 2 = 1 THEN 'red' ELSE 'blue' END)))))
FROM generate_series(1, 30) i;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'pg_comp', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', p), 'sk', jsonb_build_object('N', s::text)))))
FROM unnest(ARRAY['a', 'b', 'c']) p, generate_series(1, 7) s;

-- pq_pages(statement, parameters, extra members): one row per page, the page's items and
-- whether it has NextToken / LastEvaluatedKey; NextToken followed to the end
CREATE FUNCTION pq_pages(stmt text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}')
RETURNS TABLE(page int, n int, items text, next_token boolean, last_key jsonb) LANGUAGE plpgsql AS $$
DECLARE res jsonb; p int := 0;
  req jsonb := jsonb_build_object('Statement', stmt) || extra ||
    CASE WHEN params IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('Parameters', params) END;
BEGIN
  LOOP
    p := p + 1;
    res := dynindex.api('ExecuteStatement', req);
    page := p;
    n := jsonb_array_length(res -> 'Items');
    items := (SELECT string_agg(coalesce(e -> 'pk' ->> 'S', '') || coalesce(e -> 'sk' ->> 'N', '') ||
                                coalesce(e -> 'id' ->> 'N', ''), ' ' ORDER BY o)
              FROM jsonb_array_elements(res -> 'Items') WITH ORDINALITY x(e, o));
    next_token := res ? 'NextToken';
    last_key := res -> 'LastEvaluatedKey';
    RETURN NEXT;
    EXIT WHEN NOT res ? 'NextToken' OR p >= 20;
    req := req || jsonb_build_object('NextToken', res ->> 'NextToken');
  END LOOP;
END $$;
-- every item of every page, to count how often each comes back
CREATE FUNCTION pq_all_items(stmt text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}')
RETURNS SETOF text LANGUAGE sql AS $$
  SELECT unnest(string_to_array(items, ' ')) FROM pq_pages(stmt, params, extra)
$$;

-- IN on a table's partition key, 25 values: pages of 10, 10 and 5 items, in the order written
SELECT * FROM pq_pages('SELECT id FROM pg_hash WHERE id IN [' ||
  (SELECT string_agg(i::text, ', ') FROM generate_series(25, 1, -1) i) || ']');
SELECT count(*), count(DISTINCT x) FROM pq_all_items('SELECT id FROM pg_hash WHERE id IN [' ||
  (SELECT string_agg(i::text, ', ') FROM generate_series(1, 25) i) || ']') x;
-- values with no item take no room in the page; exactly 10 items and no more values: no token
SELECT * FROM pq_pages('SELECT id FROM pg_hash WHERE id IN [' ||
  (SELECT string_agg(i::text, ', ') FROM generate_series(26, 45) i) || ']');
-- the OR of equalities is the same decomposition; parameters bind the values
SELECT * FROM pq_pages('SELECT id FROM pg_hash WHERE id = ? OR id = ? OR id = ? OR id = ? OR id = ? OR id = ?
  OR id = ? OR id = ? OR id = ? OR id = ? OR id = ? OR id = ?',
  (SELECT jsonb_agg(jsonb_build_object('N', i::text)) FROM generate_series(1, 12) i));
-- a filter: only matching items count; ORDER BY the partition key orders the Queries
SELECT * FROM pq_pages('SELECT id FROM pg_hash WHERE id IN [' ||
  (SELECT string_agg(i::text, ', ') FROM generate_series(1, 30) i) || '] AND color = ''red'' ORDER BY id DESC');

-- composite keys: the page stops inside a partition (NextToken and LastEvaluatedKey there),
-- the next page resumes after that item
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_comp WHERE pk IN ['a', 'b', 'c']$$);
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_comp WHERE pk IN ['c', 'a'] AND sk >= 3$$);
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_comp WHERE pk IN ['a', 'b', 'c'] ORDER BY pk DESC, sk DESC$$);
SELECT count(*), count(DISTINCT x) FROM pq_all_items($$SELECT pk, sk FROM pg_comp WHERE pk IN ['a', 'b', 'c']$$) x;
-- Limit (items read) and the page of 10 together: whichever comes first
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_comp WHERE pk IN ['a', 'b', 'c']$$, NULL, '{"Limit": 4}');
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_comp WHERE pk IN ['a', 'b', 'c']$$, NULL, '{"Limit": 12}');
-- one Query (equality on the partition key) has no 10-item page
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_comp WHERE pk = 'b'$$);
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_comp WHERE pk IN ['b']$$);
-- a token of another IN list's statement is refused
SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', $$SELECT pk, sk FROM pg_comp WHERE pk IN ['a', 'c']$$,
  'NextToken', dynindex.api('ExecuteStatement', jsonb_build_object('Statement',
    $$SELECT pk, sk FROM pg_comp WHERE pk IN ['a', 'b', 'c']$$)) ->> 'NextToken'));

-- 1 MB: items of about 300 KB; a page stops once 1 MB was read (the item that crosses it
-- included), with NextToken and LastEvaluatedKey; the rest follows exactly once
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'pg_big', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', p), 'sk', jsonb_build_object('N', s::text),
                     'blob', jsonb_build_object('S', repeat(p, 300000))))))
FROM unnest(ARRAY['x', 'y']) p, generate_series(1, 6) s;
-- the Query form
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_big WHERE pk = 'x'$$);
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_big WHERE pk = 'x' ORDER BY sk DESC$$);
-- the Scan form (a filter that drops items still counts what it read)
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_big$$);
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_big WHERE sk > 4$$);
SELECT count(*), count(DISTINCT x) FROM pq_all_items($$SELECT * FROM pg_big$$) x;
-- an IN: 1 MB for the page across its Queries
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_big WHERE pk IN ['y', 'x'] AND sk <= 2$$);
SELECT * FROM pq_pages($$SELECT pk, sk FROM pg_big WHERE pk IN ['y', 'x']$$);
-- capacity of a 1 MB page: what was read
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT pk FROM pg_big WHERE pk = ''y''",
  "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity';

SELECT dynindex.api('DeleteTable', jsonb_build_object('TableName', t)) IS NOT NULL AS deleted
FROM unnest(ARRAY['pg_hash', 'pg_comp', 'pg_big']) t;
