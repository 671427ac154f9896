-- GSI lifecycle: UpdateTable Create on a table with items (CREATING,
-- Backfilling, reads refused until ACTIVE), writes during the backfill,
-- items whose key attribute has another type skipped, Delete, gsi_status.
\set VERBOSITY terse
SELECT dynindex.api('CreateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL;
-- 2500 items (the backfill goes in chunks of 1000): every 2nd has grp (S),
-- every 7th has grp of type N (written before the index existed)
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Life', 'Item',
         jsonb_build_object('pk', jsonb_build_object('S', 'p' || (i % 50)), 'sk', jsonb_build_object('N', i::text))
         || CASE WHEN i % 7 = 0 THEN jsonb_build_object('grp', jsonb_build_object('N', (i % 3)::text))
                 WHEN i % 2 = 0 THEN jsonb_build_object('grp', jsonb_build_object('S', 'g' || (i % 3)))
                 ELSE '{}' END)))
  FROM generate_series(1, 2500) i;

-- Create and read in one transaction: the worker cannot see the uncommitted
-- catalog row, so the index is CREATING (Backfilling) for sure.
BEGIN;
SELECT (dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"grp","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byGrp","KeySchema":[{"AttributeName":"grp","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}}]}')
  -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0) - 'IndexArn';
SELECT g ->> 'IndexStatus' AS status, g -> 'Backfilling' AS backfilling
  FROM jsonb_array_elements(dynindex.api('DescribeTable', '{"TableName":"Life"}') -> 'Table' -> 'GlobalSecondaryIndexes') g;
SAVEPOINT s;
SELECT dynindex.api('Query', '{"TableName":"Life","IndexName":"byGrp","KeyConditionExpression":"grp = :g","ExpressionAttributeValues":{":g":{"S":"g0"}}}');
ROLLBACK TO s;
SELECT dynindex.api('Scan', '{"TableName":"Life","IndexName":"byGrp"}');
ROLLBACK TO s;
SELECT dynindex.api('Scan', '{"TableName":"Life","IndexName":"byGrp","Segment":0,"TotalSegments":2}');
ROLLBACK TO s;
-- another online index change while one is CREATING
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"other","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
ROLLBACK TO s;
-- a write of the wrong type is refused from now on; a good write is queued
SELECT dynindex.api('PutItem', '{"TableName":"Life","Item":{"pk":{"S":"new"},"sk":{"N":"1"},"grp":{"N":"1"}}}');
ROLLBACK TO s;
SELECT dynindex.api('PutItem', '{"TableName":"Life","Item":{"pk":{"S":"new"},"sk":{"N":"1"},"grp":{"S":"g0"}}}');
SELECT index_name, index_status, backfilling, queued_changes, oldest_change_age IS NOT NULL AS has_age
  FROM dynindex.gsi_status WHERE table_name = 'Life';
COMMIT;
-- writes while the worker backfills: they are queued and applied as well
SELECT dynindex.api('UpdateItem', '{"TableName":"Life","Key":{"pk":{"S":"p2"},"sk":{"N":"2"}},"UpdateExpression":"SET grp = :g","ExpressionAttributeValues":{":g":{"S":"moved"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Life","Key":{"pk":{"S":"p4"},"sk":{"N":"4"}},"UpdateExpression":"REMOVE grp"}');
SELECT dynindex.api('DeleteItem', '{"TableName":"Life","Key":{"pk":{"S":"p6"},"sk":{"N":"6"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Life","Item":{"pk":{"S":"p3"},"sk":{"N":"2503"},"grp":{"S":"g0"}}}');
SELECT dynindex.wait_for_indexes('Life', '60 seconds');
SELECT g ->> 'IndexStatus' AS status, g ? 'Backfilling' AS backfilling, g -> 'ItemCount' AS items
  FROM jsonb_array_elements(dynindex.api('DescribeTable', '{"TableName":"Life"}') -> 'Table' -> 'GlobalSecondaryIndexes') g;
SELECT status, backfilling, backfill_pk IS NULL AS no_position FROM dynindex.indexes WHERE table_name = 'Life';
SELECT * FROM dynindex.verify_indexes('Life');
-- items per group: 2500 / 2 even, minus multiples of 14 (grp N), minus p4/4 (REMOVE) and p6/6 (deleted), plus 2 new; p2/2 moved to group "moved"
SELECT q.g, (dynindex.api('Query', jsonb_build_object('TableName', 'Life', 'IndexName', 'byGrp', 'Select', 'COUNT',
         'KeyConditionExpression', 'grp = :g', 'ExpressionAttributeValues', jsonb_build_object(':g', jsonb_build_object('S', q.g)))) ->> 'Count')::int AS n
  FROM unnest(ARRAY['g0', 'g1', 'g2', 'moved']) q(g);
SELECT count(*) FILTER (WHERE i % 2 = 0 AND i % 7 <> 0) + 2 - 2 AS expected_total FROM generate_series(1, 2500) i;
SELECT dynindex.api('Query', '{"TableName":"Life","IndexName":"byGrp","KeyConditionExpression":"grp = :g AND sk < :s","ExpressionAttributeValues":{":g":{"S":"g0"},":s":{"N":"20"}},"ScanIndexForward":false}');
SELECT index_name, index_status, queued_changes, oldest_change_age, changes_applied >= 5 AS applied, index_writes > 0 AS writes
  FROM dynindex.gsi_status WHERE table_name = 'Life';

-- Delete: the index and its storage relation go
SELECT storage AS gsi_storage FROM dynindex.indexes WHERE table_name = 'Life' AND index_name = 'byGrp' \gset
SELECT to_regclass(:'gsi_storage') IS NOT NULL AS storage_exists;
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","GlobalSecondaryIndexUpdates":[{"Delete":{"IndexName":"byGrp"}}]}') -> 'TableDescription' ? 'GlobalSecondaryIndexes' AS has_gsis;
SELECT to_regclass(:'gsi_storage') IS NOT NULL AS storage_exists;
SELECT count(*) FROM dynindex.gsi_status WHERE table_name = 'Life';
SELECT dynindex.api('Query', '{"TableName":"Life","IndexName":"byGrp","KeyConditionExpression":"grp = :g","ExpressionAttributeValues":{":g":{"S":"g0"}}}');
-- the table takes writes of any grp type again; the same name can be created again
SELECT dynindex.api('PutItem', '{"TableName":"Life","Item":{"pk":{"S":"new"},"sk":{"N":"2"},"grp":{"N":"1"}}}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"grp","AttributeType":"N"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byGrp","KeySchema":[{"AttributeName":"grp","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}') IS NOT NULL;
SELECT dynindex.wait_for_indexes('Life', '60 seconds');
SELECT * FROM dynindex.verify_indexes('Life');
SELECT (dynindex.api('Scan', '{"TableName":"Life","IndexName":"byGrp","Select":"COUNT"}') ->> 'Count')::int AS numeric_grp_items,
       count(*) FILTER (WHERE i % 7 = 0) + 1 AS expected FROM generate_series(1, 2500) i;
-- an attribute a key already uses cannot get another type (sk is N)
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"sk","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"bySk","KeySchema":[{"AttributeName":"sk","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
-- the request must define the new index's key attributes itself, even those the table defines
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"bySk","KeySchema":[{"AttributeName":"sk","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"bySk","KeySchema":[{"AttributeName":"x","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}}]}');
-- one GlobalSecondaryIndexUpdates entry holds one action
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"x","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byX","KeySchema":[{"AttributeName":"x","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}},"Delete":{"IndexName":"byGrp"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","GlobalSecondaryIndexUpdates":[{"Update":{"IndexName":"byGrp"},"Delete":{"IndexName":"byGrp"}}]}');
-- an entry without an action, or null (a null entry was a backend crash, found by test/fuzz/api_fuzz.py)
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","GlobalSecondaryIndexUpdates":[{}]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","GlobalSecondaryIndexUpdates":[null]}');
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","GlobalSecondaryIndexUpdates":[{"Delete":{"IndexName":"byGrp"}},null]}');
-- a backfill leaves out items whose key attribute is an empty or oversized
-- string or binary (writes refuse them once the index exists)
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Life', 'Item', jsonb_build_object('pk', jsonb_build_object('S', 'e'), 'sk', jsonb_build_object('N', i::text)) || v)))
  FROM (VALUES (1, '{"h":{"S":""},"r":{"S":"a"}}'::jsonb), (2, '{"h":{"S":"a"},"r":{"S":""}}'), (3, '{"h":{"B":""},"r":{"S":"a"}}'),
               (4, jsonb_build_object('h', jsonb_build_object('S', repeat('h', 2048)), 'r', jsonb_build_object('S', repeat('r', 1024)))),
               (5, jsonb_build_object('h', jsonb_build_object('S', repeat('h', 2049)), 'r', jsonb_build_object('S', 'a'))),
               (6, jsonb_build_object('h', jsonb_build_object('S', 'a'), 'r', jsonb_build_object('S', repeat('r', 1025)))),
               (7, '{"h":{"S":"a"},"r":{"S":"a"}}')) v(i, v);
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"h","AttributeType":"S"},{"AttributeName":"r","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byH","KeySchema":[{"AttributeName":"h","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}}]}') IS NOT NULL;
SELECT dynindex.wait_for_indexes('Life', '60 seconds');
SELECT dynindex.api('UpdateTable', '{"TableName":"Life","AttributeDefinitions":[{"AttributeName":"h","AttributeType":"S"},{"AttributeName":"r","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byHR","KeySchema":[{"AttributeName":"h","KeyType":"HASH"},{"AttributeName":"r","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}}]}') IS NOT NULL;
SELECT dynindex.wait_for_indexes('Life', '60 seconds');
SELECT * FROM dynindex.verify_indexes('Life');
SELECT q.idx, array_agg((i -> 'sk' ->> 'N')::int ORDER BY (i -> 'sk' ->> 'N')::int) AS sks
  FROM unnest(ARRAY['byH', 'byHR']) q(idx),
       jsonb_array_elements(dynindex.api('Scan', jsonb_build_object('TableName', 'Life', 'IndexName', q.idx)) -> 'Items') i
 WHERE i -> 'pk' ->> 'S' = 'e' GROUP BY q.idx ORDER BY q.idx;
-- from now on writes refuse them
SELECT dynindex.api('PutItem', '{"TableName":"Life","Item":{"pk":{"S":"e"},"sk":{"N":"9"},"h":{"S":""}}}');
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Life', 'Item', jsonb_build_object('pk', jsonb_build_object('S', 'e'), 'sk', jsonb_build_object('N', '9'), 'h', jsonb_build_object('S', repeat('h', 2049)))));
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Life', 'Item', jsonb_build_object('pk', jsonb_build_object('S', 'e'), 'sk', jsonb_build_object('N', '9'), 'h', jsonb_build_object('S', 'a'), 'r', jsonb_build_object('S', repeat('r', 1025)))));
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Life', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'e'), 'sk', jsonb_build_object('N', '7')),
         'UpdateExpression', 'SET r = :r', 'ExpressionAttributeValues', jsonb_build_object(':r', jsonb_build_object('S', repeat('r', 1025)))));
-- DeleteTable drops everything, queue records included
SELECT dynindex.api('DeleteTable', '{"TableName":"Life"}') IS NOT NULL;
SELECT to_regclass(storage) FROM dynindex.indexes WHERE table_name = 'Life';
