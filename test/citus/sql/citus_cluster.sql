-- dynindex on a Citus cluster (coordinator + 2 workers, citus.shard_count = 4,
-- dynindex.distributed = on): where storage lives and which statements reach
-- which shards.  Runs in a database of its own, so shard ids are stable.
\set VERBOSITY terse
SELECT dynindex.api('CreateTable', '{"TableName":"Orders","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"l","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}],
  "BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL AS created;

-- the table on its encoded partition key, its LSI co-located (same group), the GSI on its own key
SELECT p.logicalrelid::text AS relation, column_to_column_name(p.logicalrelid, p.partkey) AS distribution_column,
       p.partmethod, p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'dynindex_data.t1'::regclass) AS colocated_with_table,
       (SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid) AS shards
  FROM pg_dist_partition p WHERE p.logicalrelid::text LIKE 'dynindex_data.%' ORDER BY 1;
-- the catalog and the GSI queue stay on the coordinator, ordinary tables; the one Citus
-- table there is the commit marker, a Citus local table (docs/scaling.md)
SELECT logicalrelid::text AS coordinator_citus_table, partmethod FROM pg_dist_partition WHERE logicalrelid::text LIKE 'dynindex.%';

SELECT dynindex.api('PutItem', format('{"TableName":"Orders","Item":{"pk":{"S":"U%s"},"sk":{"S":"O1"},"l":{"S":"x%s"},"g":{"S":"G"}}}', i, i)::jsonb)
  FROM generate_series(1, 8) i;

-- single-partition operations are router statements: one shard (and the co-located LSI shard)
SET citus.log_remote_commands = on;
SET citus.grep_remote_commands = '%dynindex_data%';
SELECT dynindex.api('GetItem', '{"TableName":"Orders","Key":{"pk":{"S":"U1"},"sk":{"S":"O1"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Orders","Item":{"pk":{"S":"U1"},"sk":{"S":"O2"},"l":{"S":"y"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Orders","Key":{"pk":{"S":"U1"},"sk":{"S":"O2"}},"UpdateExpression":"SET n = :n","ExpressionAttributeValues":{":n":{"N":"5"}},"ReturnValues":"UPDATED_NEW"}');
SELECT dynindex.api('Query', '{"TableName":"Orders","KeyConditionExpression":"pk = :p AND sk > :s","ExpressionAttributeValues":{":p":{"S":"U1"},":s":{"S":"O1"}}}');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byL","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"U1"}}}') -> 'Count' AS lsi_count;
SELECT dynindex.api('DeleteItem', '{"TableName":"Orders","Key":{"pk":{"S":"U1"},"sk":{"S":"O2"}},"ReturnValues":"ALL_OLD"}');
RESET citus.grep_remote_commands;
RESET citus.log_remote_commands;
-- a Scan fans out to every shard (Task Count: the shards; their commands run in
-- parallel, so their log order varies) and Citus merges the rows in key order
CREATE FUNCTION plan_of(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF r ~ 'Task Count|Tasks Shown|Merge|Sort Key' THEN RETURN NEXT trim(r); END IF;
  END LOOP;
END $$;
SELECT plan_of($q$SELECT pk, sk, size, item FROM dynindex_data.t1 WHERE (pk, sk) >= ('\x'::bytea, '\x'::bytea) ORDER BY pk, sk LIMIT 3$q$);
SELECT plan_of($q$SELECT item, size FROM dynindex_data.t1 WHERE pk = '\x5531'::bytea AND sk = '\x4f31'::bytea$q$);
SELECT dynindex.api('Scan', '{"TableName":"Orders","Limit":3,"ProjectionExpression":"pk"}');

-- a transaction across partition keys on both workers is atomic (two-phase commit)
SELECT count(DISTINCT nodeport) AS workers_holding_u1_u3 FROM pg_dist_shard_placement
 WHERE shardid IN (get_shard_id_for_distribution_column('dynindex_data.t1', '\x5531'::bytea),
                   get_shard_id_for_distribution_column('dynindex_data.t1', '\x5533'::bytea));
SELECT dynindex.api('TransactWriteItems', '{"TransactItems":[
  {"Update":{"TableName":"Orders","Key":{"pk":{"S":"U1"},"sk":{"S":"O1"}},"UpdateExpression":"SET paid = :t","ExpressionAttributeValues":{":t":{"BOOL":true}}}},
  {"Update":{"TableName":"Orders","Key":{"pk":{"S":"U3"},"sk":{"S":"O1"}},"UpdateExpression":"SET paid = :t","ConditionExpression":"attribute_exists(nope)","ExpressionAttributeValues":{":t":{"BOOL":true}}}}]}');
SELECT dynindex.api('GetItem', '{"TableName":"Orders","Key":{"pk":{"S":"U1"},"sk":{"S":"O1"}},"ProjectionExpression":"paid"}') AS u1_after_cancel;
SELECT dynindex.api('TransactWriteItems', '{"TransactItems":[
  {"Update":{"TableName":"Orders","Key":{"pk":{"S":"U1"},"sk":{"S":"O1"}},"UpdateExpression":"SET paid = :t","ExpressionAttributeValues":{":t":{"BOOL":true}}}},
  {"Update":{"TableName":"Orders","Key":{"pk":{"S":"U3"},"sk":{"S":"O1"}},"UpdateExpression":"SET paid = :t","ExpressionAttributeValues":{":t":{"BOOL":true}}}}]}');
SELECT dynindex.api('BatchGetItem', '{"RequestItems":{"Orders":{"Keys":[{"pk":{"S":"U1"},"sk":{"S":"O1"}},{"pk":{"S":"U3"},"sk":{"S":"O1"}}],"ProjectionExpression":"pk, paid"}}}')
  -> 'Responses' -> 'Orders' AS both_paid;

-- the GSI, applied by the worker on the coordinator from the distributed base table
SELECT dynindex.wait_for_indexes('Orders');
SELECT dynindex.api('Query', '{"TableName":"Orders","IndexName":"byG","KeyConditionExpression":"g = :g","Select":"COUNT"}'::jsonb
  || '{"ExpressionAttributeValues":{":g":{"S":"G"}}}');
SELECT * FROM dynindex.verify_indexes('Orders');

-- parallel Scan: the segments together return every item once
SELECT sum((dynindex.api('Scan', jsonb_build_object('TableName', 'Orders', 'Segment', s, 'TotalSegments', 3)) ->> 'Count')::int) AS items_in_segments
  FROM generate_series(0, 2) s;
-- a segment is a range of key_hash(pk), the hash Citus distributes by: each shard
-- reads the range through its segment index (an empty probe outside its own range),
-- and with TotalSegments = the shard count (4), segment s is exactly shard s
CREATE FUNCTION shard_plan_of(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  FOR r IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF r ~ 'Task Count|Scan|Index Cond' THEN RETURN NEXT regexp_replace(trim(r), '_[0-9]{6}', '_N', 'g'); END IF;
  END LOOP;
END $$;
SELECT shard_plan_of($q$SELECT pk, sk, size, item FROM dynindex_data.t1 WHERE (dynindex.key_hash(pk), pk, sk) >= (-1073741824, '\x'::bytea, '\x'::bytea)
  AND dynindex.key_hash(pk) < 0 ORDER BY dynindex.key_hash(pk), pk, sk LIMIT 10$q$);
SELECT bool_and(worker_hash(pk) = dynindex.key_hash(pk)) AS citus_hash_is_key_hash FROM dynindex_data.t1;
WITH k AS MATERIALIZED (SELECT pk FROM dynindex_data.t1)
SELECT count(*) AS items, bool_and(dynindex.key_segment(pk, 4) = (SELECT count(*) FROM pg_dist_shard o WHERE o.logicalrelid = 'dynindex_data.t1'::regclass
                  AND o.shardminvalue::int < (SELECT shardminvalue::int FROM pg_dist_shard WHERE shardid = get_shard_id_for_distribution_column('dynindex_data.t1', pk))))
       AS segment_s_of_4_is_shard_s
  FROM k;

-- an existing, local table is distributed with dynindex.distribute_table
SET dynindex.distributed = off;
SELECT dynindex.api('CreateTable', '{"TableName":"Later","KeySchema":[{"AttributeName":"id","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', format('{"TableName":"Later","Item":{"id":{"S":"i%s"},"g":{"S":"g"}}}', i)::jsonb) FROM generate_series(1, 5) i;
SELECT count(*) AS distributed_before FROM pg_dist_partition WHERE logicalrelid::text LIKE 'dynindex_data.t2%';
SET client_min_messages = warning;  -- Citus's "Copying data from local table" notices
SELECT dynindex.distribute_table('Later') AS relations_distributed;
RESET client_min_messages;
SELECT dynindex.distribute_table('Later') AS again;
SELECT count(*) AS distributed_after FROM pg_dist_partition WHERE logicalrelid::text LIKE 'dynindex_data.t2%';
SELECT dynindex.api('GetItem', '{"TableName":"Later","Key":{"id":{"S":"i3"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Later","Item":{"id":{"S":"i6"},"g":{"S":"g"}}}');
SELECT dynindex.wait_for_indexes('Later');
SELECT dynindex.api('Query', '{"TableName":"Later","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"g"}},"Select":"COUNT"}');
SELECT * FROM dynindex.verify_indexes('Later');
SELECT dynindex.distribute_table('Nope');
RESET dynindex.distributed;
