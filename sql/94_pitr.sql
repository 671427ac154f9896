-- Point-in-time recovery: UpdateContinuousBackups, DescribeContinuousBackups,
-- RestoreTableToPointInTime (every message, overrides, indexes rebuilt,
-- deleted tables), the item history every writer keeps (src/history/),
-- dynindex.item_history, the trim.
\set VERBOSITY terse
-- masks what changes from run to run (times, ids)
CREATE FUNCTION pmask(j jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace(j::text,
    '"(EarliestRestorableDateTime|LatestRestorableDateTime|RestoreDateTime|CreationDateTime|TableCreationDateTime)": [0-9.]+', '"\1": "<time>"', 'g'),
    '"TableId": "[0-9a-f-]{36}"', '"TableId": "<uuid>"', 'g')::jsonb $$;
CREATE FUNCTION ptry(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN pmask(dynindex.api(op, req))::text;
EXCEPTION WHEN others THEN
  RETURN SQLERRM;
END $$;
-- the items of a table, sorted (Scan order is by key already; a set compare is what matters)
CREATE FUNCTION items(t text) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT i::text FROM jsonb_array_elements(dynindex.api('Scan', jsonb_build_object('TableName', t, 'ConsistentRead', true))->'Items') i
  ORDER BY 1 $$;
-- number of recorded versions of a key of table Pitr (pk S, sk N)
CREATE FUNCTION versions(p text, s int) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM dynindex.item_history('Pitr', jsonb_build_object('pk', jsonb_build_object('S', p),
    'sk', jsonb_build_object('N', s::text))) WHERE valid_to IS NOT NULL $$;

SELECT dynindex.api('CreateTable', '{"TableName": "Pitr", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
    {"AttributeName": "g", "AttributeType": "S"}, {"AttributeName": "l", "AttributeType": "N"}],
  "LocalSecondaryIndexes": [{"IndexName": "by_l", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "l", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "Plain", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}') IS NOT NULL AS created;

-- ---- UpdateContinuousBackups / DescribeContinuousBackups: validation and states
SELECT ptry('DescribeContinuousBackups', '{}');
SELECT ptry('DescribeContinuousBackups', '{"TableName": "Nope"}');
SELECT ptry('DescribeContinuousBackups', '{"TableName": "Pitr"}');
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Pitr"}');
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Pitr", "PointInTimeRecoverySpecification": {}}');
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Pitr", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 0}}');
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Pitr", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 36}}');
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Pitr", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": "yes"}}');
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Nope", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
-- disabling a table without PITR: DISABLED
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Plain", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": false}}');
-- enabling: default period 35; again with a period: the period changes, the window does not restart
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Pitr", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
SELECT enabled_at AS enabled_at FROM dynindex.pitr WHERE table_name = 'Pitr' \gset
SELECT ptry('UpdateContinuousBackups', '{"TableName": "Pitr", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 7}}');
SELECT enabled_at = :'enabled_at' AS same_window, recovery_days FROM dynindex.pitr WHERE table_name = 'Pitr';
SELECT (d->>'EarliestRestorableDateTime')::numeric <= (d->>'LatestRestorableDateTime')::numeric AS ordered,
       (d->>'LatestRestorableDateTime')::numeric <= extract(epoch FROM clock_timestamp()) AS latest_not_future
  FROM (SELECT dynindex.api('DescribeContinuousBackups', '{"TableName": "Pitr"}') #> '{ContinuousBackupsDescription,PointInTimeRecoveryDescription}' AS d) x;
-- the table is described by ARN too
SELECT ptry('DescribeContinuousBackups', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/Pitr"}');

-- ---- every writer keeps the superseded state
-- PutItem without anything needing the old item (the upsert path is not taken with PITR)
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "1"}}}');
SELECT dynindex.last_commit_stamp() AS t_a1 \gset
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"N": "2"}, "g": {"S": "x"}}}');
SELECT dynindex.last_commit_stamp() AS t_a2 \gset
SELECT :'t_a2'::timestamptz > :'t_a1'::timestamptz AS stamps_increase;
SELECT versions('a', 1) AS put_versions;
-- PutItem with a condition, UpdateItem, DeleteItem without and with a condition
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "b"}, "sk": {"N": "1"}, "v": {"N": "1"}, "l": {"N": "5"}},
  "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT dynindex.api('UpdateItem', '{"TableName": "Pitr", "Key": {"pk": {"S": "b"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET v = v + :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}');
SELECT dynindex.last_commit_stamp() AS t_b2 \gset
SELECT dynindex.api('DeleteItem', '{"TableName": "Pitr", "Key": {"pk": {"S": "b"}, "sk": {"N": "1"}}}');
SELECT versions('b', 1) AS put_update_delete_versions;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "c"}, "sk": {"N": "1"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "Pitr", "Key": {"pk": {"S": "c"}, "sk": {"N": "1"}}, "ConditionExpression": "attribute_exists(pk)"}');
SELECT versions('c', 1) AS conditional_delete_versions;
-- a failed condition writes nothing, a delete of a missing item neither
SELECT ptry('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT dynindex.api('DeleteItem', '{"TableName": "Pitr", "Key": {"pk": {"S": "zz"}, "sk": {"N": "1"}}}');
SELECT versions('a', 1) AS still_2, versions('zz', 1) AS none;
-- BatchWriteItem (puts and deletes)
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"Pitr": [
  {"PutRequest": {"Item": {"pk": {"S": "d"}, "sk": {"N": "1"}}}},
  {"PutRequest": {"Item": {"pk": {"S": "d"}, "sk": {"N": "2"}}}},
  {"DeleteRequest": {"Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}}]}}');
SELECT versions('d', 1) AS batch_put, versions('d', 2) AS batch_put2, versions('a', 1) AS batch_delete;
-- TransactWriteItems
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "Pitr", "Item": {"pk": {"S": "e"}, "sk": {"N": "1"}, "v": {"N": "1"}}}},
  {"Update": {"TableName": "Pitr", "Key": {"pk": {"S": "d"}, "sk": {"N": "1"}}, "UpdateExpression": "SET v = :v",
    "ExpressionAttributeValues": {":v": {"N": "9"}}}},
  {"Delete": {"TableName": "Pitr", "Key": {"pk": {"S": "d"}, "sk": {"N": "2"}}}}]}');
SELECT versions('e', 1) AS txn_put, versions('d', 1) AS txn_update, versions('d', 2) AS txn_delete;
-- PartiQL
SELECT dynindex.api('ExecuteStatement', '{"Statement": "INSERT INTO \"Pitr\" VALUE {''pk'': ''f'', ''sk'': 1}"}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "UPDATE \"Pitr\" SET v = 3 WHERE pk = ''f'' AND sk = 1"}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "DELETE FROM \"Pitr\" WHERE pk = ''f'' AND sk = 1"}');
SELECT versions('f', 1) AS partiql_versions;
-- Time to Live
SELECT dynindex.api('UpdateTimeToLive', '{"TableName": "Pitr", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "exp"}}');
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Pitr', 'Item', jsonb_build_object('pk', '{"S": "g"}'::jsonb,
  'sk', '{"N": "1"}'::jsonb, 'exp', jsonb_build_object('N', (extract(epoch FROM now())::int8 - 60)::text))));
SELECT dynindex.expire_items('Pitr');
SELECT versions('g', 1) AS ttl_versions;
SELECT valid_to IS NULL AS current, item IS NULL AS absent FROM dynindex.item_history('Pitr', '{"pk": {"S": "g"}, "sk": {"N": "1"}}');

-- ---- transactions: the history commits with the write
BEGIN;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "h"}, "sk": {"N": "1"}}}');
ROLLBACK;
SELECT versions('h', 1) AS rolled_back;
-- a key written twice in one transaction: one superseded state (the one before it)
BEGIN;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "h"}, "sk": {"N": "1"}, "v": {"N": "1"}}}');
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "h"}, "sk": {"N": "1"}, "v": {"N": "2"}}}');
COMMIT;
SELECT valid_from IS NULL AS first, valid_to IS NULL AS current, item FROM dynindex.item_history('Pitr', '{"pk": {"S": "h"}, "sk": {"N": "1"}}');
-- a rolled back subtransaction's rows are dropped, the rest kept
BEGIN;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "i"}, "sk": {"N": "1"}}}');
SAVEPOINT s1;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "i"}, "sk": {"N": "2"}}}');
SAVEPOINT s2;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "i"}, "sk": {"N": "3"}}}');
ROLLBACK TO s1;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "i"}, "sk": {"N": "4"}}}');
COMMIT;
SELECT versions('i', 1) AS kept1, versions('i', 2) AS dropped2, versions('i', 3) AS dropped3, versions('i', 4) AS kept4;
-- a restore in a transaction that wrote the table would see its writes without their history: refused
BEGIN;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "j"}, "sk": {"N": "2"}}}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrInTxn", "UseLatestRestorableTime": true}');
ROLLBACK;
-- PREPARE TRANSACTION of a transaction with history is refused
BEGIN;
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "j"}, "sk": {"N": "1"}}}');
PREPARE TRANSACTION 'pitr1';
SELECT versions('j', 1) AS not_prepared;

-- ---- item_history: shape and errors
SELECT valid_from IS NULL AS from_start, valid_to IS NULL AS current, item
  FROM dynindex.item_history('Pitr', '{"pk": {"S": "b"}, "sk": {"N": "1"}}');
SELECT count(*) FROM dynindex.item_history('Pitr', '{"pk": {"S": "never"}, "sk": {"N": "1"}}');
SELECT * FROM dynindex.item_history('Pitr', '{"pk": {"S": "b"}}');
SELECT * FROM dynindex.item_history('Plain', '{"id": {"S": "x"}}');
SELECT * FROM dynindex.item_history('Nope', '{"id": {"S": "x"}}');

-- ---- RestoreTableToPointInTime: validation and errors
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr"}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "x"}');
SELECT ptry('RestoreTableToPointInTime', '{"TargetTableName": "PitrR", "UseLatestRestorableTime": true}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "SourceTableArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Pitr", "TargetTableName": "PitrR", "UseLatestRestorableTime": true}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrR"}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrR", "UseLatestRestorableTime": true, "RestoreDateTime": 1700000000}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrR", "UseLatestRestorableTime": false}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrR", "RestoreDateTime": "yesterday"}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrR", "UseLatestRestorableTime": true, "BillingModeOverride": "FREE"}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Nope", "TargetTableName": "PitrR", "UseLatestRestorableTime": true}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Nope", "TargetTableName": "PitrR", "UseLatestRestorableTime": true}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Plain", "TargetTableName": "PitrR", "UseLatestRestorableTime": true}');
-- before the window (before PITR was enabled), in the future
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrR", "RestoreDateTime": 1700000000}');
SELECT ptry('RestoreTableToPointInTime', jsonb_build_object('SourceTableName', 'Pitr', 'TargetTableName', 'PitrR',
  'RestoreDateTime', extract(epoch FROM :'enabled_at'::timestamptz) - 1));
SELECT ptry('RestoreTableToPointInTime', jsonb_build_object('SourceTableName', 'Pitr', 'TargetTableName', 'PitrR',
  'RestoreDateTime', extract(epoch FROM clock_timestamp()) + 3600));
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrR", "RestoreDateTime": 1e300}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "Plain", "UseLatestRestorableTime": true}');
SELECT count(*) AS nothing_created FROM dynindex.tables WHERE table_name = 'PitrR';

-- ---- restores: exactly the items at T
SELECT * FROM items('Pitr');
SELECT pmask(dynindex.restore_table_to_point_in_time('Pitr', 'PitrAtA1', :'t_a1')) -> 'TableDescription' -> 'RestoreSummary';
SELECT * FROM items('PitrAtA1');
SELECT pmask(dynindex.restore_table_to_point_in_time('Pitr', 'PitrAtB2', :'t_b2')) #>> '{TableDescription,TableStatus}';
SELECT * FROM items('PitrAtB2');
-- the indexes are built, ACTIVE, queryable at once (LSI by_l, GSI by_g)
SELECT dynindex.api('Query', '{"TableName": "PitrAtB2", "IndexName": "by_l", "KeyConditionExpression": "pk = :p AND l = :l",
  "ExpressionAttributeValues": {":p": {"S": "b"}, ":l": {"N": "5"}}}') -> 'Items';
SELECT dynindex.api('Query', '{"TableName": "PitrAtB2", "IndexName": "by_g", "KeyConditionExpression": "g = :g",
  "ExpressionAttributeValues": {":g": {"S": "x"}}}') -> 'Items';
SELECT i->>'IndexName', i->>'IndexStatus' FROM jsonb_array_elements(dynindex.api('DescribeTable', '{"TableName": "PitrAtB2"}') #> '{Table,GlobalSecondaryIndexes}') i;
SELECT pmask(dynindex.api('DescribeTable', '{"TableName": "PitrAtB2"}') #> '{Table,RestoreSummary}');
-- PITR, TTL, streams, tags are not restored (DynamoDB: set them up on the restored table)
SELECT ptry('DescribeContinuousBackups', '{"TableName": "PitrAtB2"}');
SELECT dynindex.api('DescribeTimeToLive', '{"TableName": "PitrAtB2"}');
-- the latest restorable time: the table as it is
SELECT pmask(dynindex.api('RestoreTableToPointInTime', '{"SourceTableArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Pitr",
  "TargetTableName": "PitrLatest", "UseLatestRestorableTime": true}') #> '{TableDescription,RestoreSummary}');
SELECT (SELECT array_agg(x) FROM items('PitrLatest') x) = (SELECT array_agg(x) FROM items('Pitr') x) AS same_items;
-- overrides: billing, throughput, no LSI, another GSI, SSE
SELECT (pmask(dynindex.api('RestoreTableToPointInTime', jsonb_build_object('SourceTableName', 'Pitr', 'TargetTableName', 'PitrOver',
  'RestoreDateTime', extract(epoch FROM :'t_b2'::timestamptz),
  'BillingModeOverride', 'PROVISIONED', 'ProvisionedThroughputOverride', '{"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}'::jsonb,
  'LocalSecondaryIndexOverride', '[]'::jsonb,
  'GlobalSecondaryIndexOverride', '[{"IndexName": "by_l2", "KeySchema": [{"AttributeName": "l", "KeyType": "HASH"}],
     "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]'::jsonb,
  'SSESpecificationOverride', '{"Enabled": true, "SSEType": "KMS"}'::jsonb))) -> 'TableDescription') - 'TableArn'::text - 'TableId'::text;
SELECT dynindex.api('Query', '{"TableName": "PitrOver", "IndexName": "by_l2", "KeyConditionExpression": "l = :l",
  "ExpressionAttributeValues": {":l": {"N": "5"}}}') -> 'Items';
-- PROVISIONED from an on-demand source keeping its GSIs: they need throughput
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrProv", "UseLatestRestorableTime": true,
  "BillingModeOverride": "PROVISIONED", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');

-- ---- a deleted table stays restorable by ARN up to its deletion
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "k"}, "sk": {"N": "1"}, "v": {"N": "1"}}}');
SELECT dynindex.last_commit_stamp() AS t_k \gset
SELECT dynindex.api('PutItem', '{"TableName": "Pitr", "Item": {"pk": {"S": "k"}, "sk": {"N": "1"}, "v": {"N": "2"}}}');
SELECT (SELECT array_agg(x) FROM items('Pitr') x) AS before_delete \gset
SELECT dynindex.api('DeleteTable', '{"TableName": "Pitr"}') #>> '{TableDescription,TableStatus}';
SELECT ptry('DescribeContinuousBackups', '{"TableName": "Pitr"}');
SELECT ptry('RestoreTableToPointInTime', '{"SourceTableName": "Pitr", "TargetTableName": "PitrGone", "UseLatestRestorableTime": true}');
SELECT pmask(dynindex.api('RestoreTableToPointInTime', '{"SourceTableArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Pitr",
  "TargetTableName": "PitrGone", "UseLatestRestorableTime": true}') #> '{TableDescription,RestoreSummary}');
SELECT (SELECT array_agg(x) FROM items('PitrGone') x) = :'before_delete' AS as_deleted;
SELECT dynindex.api('RestoreTableToPointInTime', jsonb_build_object('SourceTableArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Pitr',
  'TargetTableName', 'PitrGoneK', 'RestoreDateTime', extract(epoch FROM :'t_k'::timestamptz))) IS NOT NULL AS restored;
SELECT * FROM items('PitrGoneK') x WHERE x LIKE '%"k"%';
-- after the deletion: outside the window
SELECT ptry('RestoreTableToPointInTime', jsonb_build_object('SourceTableArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Pitr',
  'TargetTableName', 'PitrGone2', 'RestoreDateTime', extract(epoch FROM clock_timestamp()) + 1));
-- a new table of the same name is another table: its own window
SELECT dynindex.api('CreateTable', '{"TableName": "Pitr", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS recreated;
SELECT ptry('DescribeContinuousBackups', '{"TableName": "Pitr"}');

-- ---- the trim: history older than the period goes, a deleted table whose window closed too
SELECT dynindex.api('UpdateContinuousBackups', '{"TableName": "PitrLatest", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true, "RecoveryPeriodInDays": 1}}') IS NOT NULL;
SELECT dynindex.api('PutItem', '{"TableName": "PitrLatest", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}}}') IS NOT NULL;
SELECT dynindex.api('PutItem', '{"TableName": "PitrLatest", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}, "v": {"N": "1"}}}') IS NOT NULL;
SELECT history AS latest_history FROM dynindex.pitr WHERE table_name = 'PitrLatest' \gset
UPDATE :latest_history SET valid_to = valid_to - interval '2 days' WHERE item IS NULL;
UPDATE dynindex.pitr SET deleted_at = deleted_at - interval '40 days' WHERE deleted_at IS NOT NULL;
SELECT dynindex.trim_history();
SELECT count(*) AS left_rows FROM :latest_history;
SELECT count(*) AS deleted_tables_left FROM dynindex.pitr WHERE deleted_at IS NOT NULL;
SELECT count(*) AS kept_relations_left FROM pg_tables WHERE schemaname = 'dynindex_history' AND tablename NOT LIKE 'h%';

-- ---- disabling drops the history
SELECT ptry('UpdateContinuousBackups', '{"TableName": "PitrLatest", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": false}}');
SELECT to_regclass(:'latest_history') IS NULL AS history_dropped;
SELECT dynindex.api('PutItem', '{"TableName": "PitrLatest", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}, "v": {"N": "2"}}}') IS NOT NULL AS written_without_history;

-- ---- rights: item_history and restores need the admin right on the table (a reader is denied)
CREATE ROLE pitr_reader NOLOGIN;
SELECT dynindex.grant_table('PitrLatest', 'pitr_reader', 'read');
SET ROLE pitr_reader;
SELECT count(*) FROM dynindex.item_history('PitrLatest', '{"pk": {"S": "t"}, "sk": {"N": "1"}}');
SELECT ptry('UpdateContinuousBackups', '{"TableName": "PitrLatest", "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
SELECT ptry('DescribeContinuousBackups', '{"TableName": "PitrLatest"}');
RESET ROLE;
SELECT dynindex.revoke_table('PitrLatest', 'pitr_reader');
DROP ROLE pitr_reader;

-- ---- the keys changed after T come from the history rows ending after T when they are few, from a
-- skip scan of the history's keys otherwise (over 10,000 rows after T): the same items either way
SELECT dynindex.api('CreateTable', '{"TableName": "PitrBulk", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT dynindex.api('UpdateContinuousBackups', '{"TableName": "PitrBulk",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}') IS NOT NULL AS enabled;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'PitrBulk', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'k' || g), 'v', '{"N": "1"}'::jsonb)))) AS puts FROM generate_series(1, 3) g;
SELECT dynindex.last_commit_stamp() AS t_bulk \gset
SELECT dynindex.api('PutItem', '{"TableName": "PitrBulk", "Item": {"pk": {"S": "k1"}, "v": {"N": "2"}}}') IS NOT NULL AS put;
SELECT dynindex.api('DeleteItem', '{"TableName": "PitrBulk", "Key": {"pk": {"S": "k2"}}}') IS NOT NULL AS deleted;
SELECT pmask(dynindex.restore_table_to_point_in_time('PitrBulk', 'PitrBulkRange', :'t_bulk')) #>> '{TableDescription,TableStatus}';
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'PitrBulk', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'bulk' || g))))) AS bulk_puts FROM generate_series(1, 10500) g;
SELECT pmask(dynindex.restore_table_to_point_in_time('PitrBulk', 'PitrBulkSkip', :'t_bulk')) #>> '{TableDescription,TableStatus}';
SELECT * FROM items('PitrBulkSkip');
SELECT (SELECT count(*) FROM (SELECT * FROM items('PitrBulkSkip') EXCEPT ALL SELECT * FROM items('PitrBulkRange')) x) +
       (SELECT count(*) FROM (SELECT * FROM items('PitrBulkRange') EXCEPT ALL SELECT * FROM items('PitrBulkSkip')) y) AS differences;

-- clean up (later suites list tables)
SELECT count(dynindex.api('DeleteTable', jsonb_build_object('TableName', table_name))) FROM dynindex.tables
  WHERE table_name IN ('Pitr', 'Plain', 'PitrAtA1', 'PitrAtB2', 'PitrLatest', 'PitrOver', 'PitrGone', 'PitrGoneK', 'PitrBulk',
    'PitrBulkRange', 'PitrBulkSkip');
DROP FUNCTION pmask(jsonb), ptry(text, jsonb), items(text), versions(text, int);
