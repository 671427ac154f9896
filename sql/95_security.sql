-- The permission model (docs/security.md): recipes granted with
-- dynindex.grant_table, checked at every table lookup before anything that
-- would reveal the table's schema; item operations run as the caller, so
-- PostgreSQL enforces storage grants and row-level security (LeadingKeys).
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS sec_app1, sec_app2, sec_creator, sec_stream, sec_lk, sec_alice, sec_pfx, sec_admin;
CREATE ROLE sec_app1 NOLOGIN;
CREATE ROLE sec_app2 NOLOGIN;
CREATE ROLE sec_creator NOLOGIN IN ROLE dynindex_creator;
CREATE ROLE sec_stream NOLOGIN;
CREATE ROLE sec_lk NOLOGIN;
CREATE ROLE sec_alice NOLOGIN IN ROLE sec_lk;
CREATE ROLE sec_pfx NOLOGIN;
CREATE ROLE sec_admin NOLOGIN IN ROLE dynindex_admin;
RESET client_min_messages;
-- call(op, request): the response, or the error's SQLSTATE and message
-- (storage relation names, which depend on the tests before, masked)
CREATE FUNCTION pg_temp.call(op text, req text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN dynindex.api(op, req::jsonb)::text;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || regexp_replace(SQLERRM, '\mt[0-9]+(_[0-9]+|_i[0-9]+)*\M', 'tN', 'g');
END $$;
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE sql INTO r;
  RETURN coalesce(r, 'ok');
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || regexp_replace(SQLERRM, '(dynindex_data\.)?"?t[0-9]+(_[0-9]+|_i[0-9]+)*"?', 'tN', 'g');
END $$;

SELECT dynindex.api('CreateTable', '{"TableName":"SecA","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},
    {"AttributeName":"g","AttributeType":"S"},{"AttributeName":"l","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"SecB","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"id","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName":"SecB","Item":{"id":{"N":"1"},"secret":{"S":"b-data"}}}');
SELECT dynindex.grant_table('SecA', 'sec_app1', 'write');
SELECT dynindex.grant_table('SecB', 'sec_app2', 'read');
SELECT dynindex.grant_table('SecB', 'sec_app2', 'everything');
SELECT dynindex.grant_table('SecB', 'no_such_role', 'read');
-- the catalog is warm in this backend (the superuser looked everything up)
SELECT dynindex.api('DescribeTable', '{"TableName":"SecB"}') -> 'Table' -> 'KeySchema';

-- ---- read-write on one table ----
SET ROLE sec_app1;
SELECT pg_temp.call('PutItem', '{"TableName":"SecA","Item":{"pk":{"S":"a"},"sk":{"S":"1"},"g":{"S":"x"},"l":{"S":"q"}}}');
SELECT pg_temp.call('GetItem', '{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}}}');
SELECT pg_temp.call('Query', '{"TableName":"SecA","IndexName":"byL","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}}}')::jsonb -> 'Count';
SELECT dynindex.wait_for_indexes('SecA');
SELECT pg_temp.call('Query', '{"TableName":"SecA","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}')::jsonb -> 'Count';
SELECT pg_temp.call('DescribeTable', '{"TableName":"SecA"}')::jsonb -> 'Table' -> 'TableName';
SELECT pg_temp.call('ListTables', '{}');
-- another role's table: denied, whatever the request, before any validation
-- that would reveal its schema (the key is wrong for SecB)
SELECT pg_temp.call('GetItem', '{"TableName":"SecB","Key":{"pk":{"S":"a"}}}');
SELECT pg_temp.call('Query', '{"TableName":"SecB","IndexName":"nope","KeyConditionExpression":"x = :x","ExpressionAttributeValues":{":x":{"S":"a"}}}');
SELECT pg_temp.call('Scan', '{"TableName":"SecB"}');
SELECT pg_temp.call('DescribeTable', '{"TableName":"SecB"}');
SELECT pg_temp.call('PutItem', '{"TableName":"SecB","Item":{"id":{"N":"2"}}}');
SELECT pg_temp.call('BatchGetItem', '{"RequestItems":{"SecA":{"Keys":[{"pk":{"S":"a"},"sk":{"S":"1"}}]},"SecB":{"Keys":[{"id":{"N":"1"}}]}}}');
SELECT pg_temp.call('BatchWriteItem', '{"RequestItems":{"SecB":[{"PutRequest":{"Item":{"id":{"N":"3"}}}}]}}');
SELECT pg_temp.call('TransactGetItems', '{"TransactItems":[{"Get":{"TableName":"SecB","Key":{"id":{"N":"1"}}}}]}');
SELECT pg_temp.call('DescribeTimeToLive', '{"TableName":"SecB"}');
SELECT pg_temp.call('ListTagsOfResource', '{"ResourceArn":"arn:aws:dynamodb:us-east-1:000000000000:table/SecB"}');
-- a table that does not exist: denied too (existence is not revealed)
SELECT pg_temp.call('GetItem', '{"TableName":"NoSuchTable","Key":{"pk":{"S":"a"}}}');
SELECT pg_temp.call('DescribeTable', '{"TableName":"NoSuchTable"}');
-- table management of its own table needs the admin right
SELECT pg_temp.call('UpdateTable', '{"TableName":"SecA","AttributeDefinitions":[{"AttributeName":"h","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byH","KeySchema":[{"AttributeName":"h","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
SELECT pg_temp.call('UpdateTable', '{"TableName":"SecB","AttributeDefinitions":[{"AttributeName":"h","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byH","KeySchema":[{"AttributeName":"h","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}');
SELECT pg_temp.call('DeleteTable', '{"TableName":"SecA"}');
SELECT pg_temp.call('DeleteTable', '{"TableName":"NoSuchTable"}');
SELECT pg_temp.call('UpdateTimeToLive', '{"TableName":"SecA","TimeToLiveSpecification":{"Enabled":true,"AttributeName":"exp"}}');
SELECT pg_temp.call('TagResource', '{"ResourceArn":"arn:aws:dynamodb:us-east-1:000000000000:table/SecA","Tags":[{"Key":"k","Value":"v"}]}');
SELECT pg_temp.call('CreateTable', '{"TableName":"SecX","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}');
-- CreateTable is refused before validation (this request is invalid)
SELECT pg_temp.call('CreateTable', '{"TableName":"SecX"}');
SELECT pg_temp.try($$SELECT dynindex.grant_table('SecA', 'sec_app2', 'read')$$);
SELECT pg_temp.try($$SELECT dynindex.verify_indexes('SecA')::text$$);
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.query('SecA', 'pk = :p', vals => '{":p":{"S":"a"}}')$$);
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.scan('SecB')$$);
SELECT pg_temp.try($$SELECT dynindex.has_table_access('SecA', 'write')::text$$);
SELECT pg_temp.try($$SELECT dynindex.has_table_access('SecA', 'admin')::text$$);
SELECT pg_temp.try($$SELECT dynindex.has_table_access('SecB', 'read')::text$$);
SELECT pg_temp.try($$SELECT dynindex.has_table_access('SecB', 'read', 'sec_app2')::text$$);
-- no privileges on the catalog, the queue or the tokens; storage only through the grants
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.tables$$);
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.gsi_changes$$);
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.transaction_tokens$$);
SELECT pg_temp.try($$INSERT INTO dynindex.indexes VALUES ('SecB', 'evil', 9, true, '[]', '{}', 'ACTIVE', false, 'x')$$);
SELECT pg_temp.try($$CREATE TABLE dynindex_data.evil (a int)$$);
RESET ROLE;
SELECT storage AS seca FROM dynindex.tables WHERE table_name = 'SecA' \gset
SELECT storage AS secb FROM dynindex.tables WHERE table_name = 'SecB' \gset
SET ROLE sec_app1;
SELECT pg_temp.try(format('SELECT count(*)::text FROM %s', :'seca'));
SELECT pg_temp.try(format('SELECT count(*)::text FROM %s', :'secb'));
SELECT pg_temp.try(format('DELETE FROM %s', :'seca'));
RESET ROLE;

-- ---- read-only ----
SET ROLE sec_app2;
SELECT pg_temp.call('GetItem', '{"TableName":"SecB","Key":{"id":{"N":"1"}}}');
SELECT pg_temp.call('PutItem', '{"TableName":"SecB","Item":{"id":{"N":"2"}}}');
SELECT pg_temp.call('UpdateItem', '{"TableName":"SecB","Key":{"id":{"N":"1"}},"UpdateExpression":"SET x = :x","ExpressionAttributeValues":{":x":{"N":"1"}}}');
SELECT pg_temp.call('DeleteItem', '{"TableName":"SecB","Key":{"id":{"N":"1"}}}');
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"ConditionCheck":{"TableName":"SecB","Key":{"id":{"N":"1"}},"ConditionExpression":"attribute_exists(id)"}}]}');
SELECT pg_temp.call('ListTables', '{}');
-- PartiQL: each statement needs the right of its own IAM action, checked at
-- its table before any validation (PartiQLSelect: read; PartiQLInsert,
-- PartiQLUpdate, PartiQLDelete: write)
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"SELECT * FROM \"SecB\" WHERE id = 1"}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"INSERT INTO \"SecB\" VALUE {''id'': 5}"}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"UPDATE \"SecB\" SET x = 1 WHERE id = 1"}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"UPDATE \"SecB\" SET x = 1 WHERE nokey = 1"}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"DELETE FROM \"SecB\" WHERE id = 1"}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"SELECT * FROM \"SecA\""}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"SELECT * FROM \"SecA\".\"noindex\" WHERE nokey = 1"}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"SELECT * FROM \"NoSuchTable\""}');
SELECT pg_temp.call('BatchExecuteStatement', '{"Statements":[{"Statement":"SELECT * FROM \"SecB\" WHERE id = 1"}]}')::jsonb -> 'Responses' -> 0 -> 'Item';
SELECT pg_temp.call('BatchExecuteStatement', '{"Statements":[{"Statement":"SELECT * FROM \"SecB\" WHERE id = 1"},{"Statement":"SELECT * FROM \"SecA\" WHERE pk = ''a'' AND sk = ''1''"}]}');
SELECT pg_temp.call('BatchExecuteStatement', '{"Statements":[{"Statement":"DELETE FROM \"SecB\" WHERE id = 1"}]}');
SELECT pg_temp.call('ExecuteTransaction', '{"TransactStatements":[{"Statement":"SELECT * FROM \"SecB\" WHERE id = 1"}]}')::jsonb -> 'Responses';
SELECT pg_temp.call('ExecuteTransaction', '{"TransactStatements":[{"Statement":"SELECT * FROM \"SecB\" WHERE id = 1"},{"Statement":"SELECT * FROM \"SecA\" WHERE pk = ''a'' AND sk = ''1''"}]}');
SELECT pg_temp.call('ExecuteTransaction', '{"TransactStatements":[{"Statement":"UPDATE \"SecB\" SET x = 1 WHERE id = 1"}]}');
SELECT pg_temp.call('ExecuteTransaction', '{"TransactStatements":[{"Statement":"EXISTS(SELECT * FROM \"SecA\" WHERE pk = ''a'' AND sk = ''1'')"},{"Statement":"INSERT INTO \"SecB\" VALUE {''id'': 6}"}]}');
-- nothing was written
SELECT pg_temp.call('Scan', '{"TableName":"SecB"}')::jsonb -> 'Items';
-- the other role's table, on a connection whose cache holds it
SELECT pg_temp.call('GetItem', '{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}}}');
RESET ROLE;

-- ---- transactions: ClientRequestToken scoped to the caller, after authorization ----
SET ROLE sec_app1;
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Update":{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}],"ClientRequestToken":"sec-token-1"}');
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Update":{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}],"ClientRequestToken":"sec-token-1"}');
RESET ROLE;
-- another role replays it: denied (not an idempotent success)
SET ROLE sec_app2;
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Update":{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}],"ClientRequestToken":"sec-token-1"}');
RESET ROLE;
-- the same through PartiQL's ExecuteTransaction
SET ROLE sec_app1;
SELECT pg_temp.call('ExecuteTransaction', '{"TransactStatements":[{"Statement":"UPDATE \"SecA\" SET m = 1 WHERE pk = ''a'' AND sk = ''1''"}],"ClientRequestToken":"sec-pq-token"}');
RESET ROLE;
SET ROLE sec_app2;
SELECT pg_temp.call('ExecuteTransaction', '{"TransactStatements":[{"Statement":"UPDATE \"SecA\" SET m = 1 WHERE pk = ''a'' AND sk = ''1''"}],"ClientRequestToken":"sec-pq-token"}');
RESET ROLE;
SELECT dynindex.grant_table('SecA', 'sec_app2', 'write');
SET ROLE sec_app2;
SELECT pg_temp.call('ExecuteTransaction', '{"TransactStatements":[{"Statement":"UPDATE \"SecA\" SET m = 2 WHERE pk = ''a'' AND sk = ''1''"}],"ClientRequestToken":"sec-pq-token"}');
-- with the right, the same token is a new request of this role (it runs), and
-- this role's tokens are its own (no mismatch with the other role's request)
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Update":{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}],"ClientRequestToken":"sec-token-1"}');
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Update":{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}],"ClientRequestToken":"sec-token-1"}');
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Update":{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"UpdateExpression":"ADD n :two","ExpressionAttributeValues":{":two":{"N":"2"}}}}],"ClientRequestToken":"sec-token-1"}');
SELECT pg_temp.call('GetItem', '{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"ProjectionExpression":"n"}');
RESET ROLE;
SELECT r.rolname, count(*) FROM dynindex.transaction_tokens t JOIN pg_roles r ON r.oid = t.role_oid
 WHERE t.token = 'sec-token-1' GROUP BY 1 ORDER BY 1;
SELECT dynindex.revoke_table('SecA', 'sec_app2', 'write');
SET ROLE sec_app2;
SELECT pg_temp.call('PutItem', '{"TableName":"SecA","Item":{"pk":{"S":"z"},"sk":{"S":"1"}}}');
SELECT pg_temp.call('GetItem', '{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}},"ProjectionExpression":"n"}');
RESET ROLE;
SELECT dynindex.revoke_table('SecA', 'sec_app2');
SET ROLE sec_app2;
SELECT pg_temp.call('GetItem', '{"TableName":"SecA","Key":{"pk":{"S":"a"},"sk":{"S":"1"}}}');
RESET ROLE;

-- ---- table creator and table administrator ----
SET ROLE sec_creator;
SELECT pg_temp.call('CreateTable', '{"TableName":"SecC","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}')::jsonb -> 'TableDescription' -> 'TableStatus';
SELECT pg_temp.call('PutItem', '{"TableName":"SecC","Item":{"pk":{"S":"c1"},"h":{"S":"v"}}}');
SELECT pg_temp.call('UpdateTable', '{"TableName":"SecC","AttributeDefinitions":[{"AttributeName":"h","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byH","KeySchema":[{"AttributeName":"h","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}')::jsonb -> 'TableDescription' -> 'TableStatus';
SELECT pg_temp.call('UpdateTimeToLive', '{"TableName":"SecC","TimeToLiveSpecification":{"Enabled":true,"AttributeName":"exp"}}');
SELECT pg_temp.call('TagResource', '{"ResourceArn":"arn:aws:dynamodb:us-east-1:000000000000:table/SecC","Tags":[{"Key":"k","Value":"v"}]}');
SELECT pg_temp.call('ListTagsOfResource', '{"ResourceArn":"arn:aws:dynamodb:us-east-1:000000000000:table/SecC"}');
SELECT dynindex.grant_table('SecC', 'sec_app1', 'read');
SELECT dynindex.grant_table('SecC', 'sec_stream', 'stream');
SELECT dynindex.wait_for_indexes('SecC', '60 seconds');
SELECT pg_temp.try($$SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ',') FROM dynindex.verify_indexes('SecC')$$);
SELECT pg_temp.call('ListTables', '{}');
-- a creator administers only its own tables
SELECT pg_temp.call('DeleteTable', '{"TableName":"SecA"}');
SELECT pg_temp.try($$SELECT dynindex.grant_table('SecA', 'sec_creator', 'admin')$$);
RESET ROLE;
SET ROLE sec_app1;
-- the new GSI's storage carries the table's grants
SELECT pg_temp.call('Query', '{"TableName":"SecC","IndexName":"byH","KeyConditionExpression":"h = :h","ExpressionAttributeValues":{":h":{"S":"v"}}}')::jsonb -> 'Items';
SELECT pg_temp.call('PutItem', '{"TableName":"SecC","Item":{"pk":{"S":"c2"}}}');
SELECT pg_temp.call('ListTables', '{}');
RESET ROLE;
SET ROLE sec_stream;
SELECT pg_temp.call('DescribeTable', '{"TableName":"SecC"}')::jsonb -> 'Table' -> 'TableName';
SELECT pg_temp.call('GetItem', '{"TableName":"SecC","Key":{"pk":{"S":"c1"}}}');
SELECT dynindex.has_table_access('SecC', 'stream'), dynindex.has_table_access('SecC', 'read');
RESET ROLE;
SELECT table_name, role_name, admin, stream FROM dynindex.table_rights ORDER BY 1, 2;

-- ---- backups: the admin right on the backup's table ----
SELECT dynindex.api('CreateBackup', '{"TableName":"SecB","BackupName":"bk1"}') -> 'BackupDetails' ->> 'BackupName';
SELECT backup_arn AS secb_backup FROM dynindex.backups WHERE table_name = 'SecB' \gset
SET ROLE sec_creator;
SELECT pg_temp.call('CreateBackup', '{"TableName":"SecC","BackupName":"ck1"}')::jsonb -> 'BackupDetails' ->> 'BackupStatus';
SELECT jsonb_array_length(pg_temp.call('ListBackups', '{}')::jsonb -> 'BackupSummaries') AS own_backups;
SELECT pg_temp.call('ListBackups', '{"TableName":"SecB"}');
SELECT pg_temp.call('CreateBackup', '{"TableName":"SecB","BackupName":"steal"}');
SELECT pg_temp.call('DescribeBackup', format('{"BackupArn":"%s"}', :'secb_backup'));
SELECT pg_temp.call('DeleteBackup', format('{"BackupArn":"%s"}', :'secb_backup'));
-- restoring another role's backup would copy its items: denied
SELECT pg_temp.call('RestoreTableFromBackup', format('{"BackupArn":"%s","TargetTableName":"SecStolen"}', :'secb_backup'));
-- its own backup: restored, and the restored table is its to administer
RESET ROLE;
SELECT backup_arn AS secc_backup FROM dynindex.backups WHERE table_name = 'SecC' \gset
SET ROLE sec_creator;
SELECT pg_temp.call('RestoreTableFromBackup', format('{"BackupArn":"%s","TargetTableName":"SecC2"}', :'secc_backup'))::jsonb -> 'TableDescription' -> 'TableName';
SELECT pg_temp.call('GetItem', '{"TableName":"SecC2","Key":{"pk":{"S":"c1"}}}');
SELECT pg_temp.call('DeleteTable', '{"TableName":"SecC2"}')::jsonb -> 'TableDescription' -> 'TableStatus';
SELECT pg_temp.call('DeleteBackup', format('{"BackupArn":"%s"}', :'secc_backup'))::jsonb -> 'BackupDescription' -> 'BackupDetails' ->> 'BackupStatus';
RESET ROLE;
-- a role without CreateTable's right cannot restore at all
SET ROLE sec_app2;
SELECT pg_temp.call('RestoreTableFromBackup', format('{"BackupArn":"%s","TargetTableName":"SecStolen"}', :'secb_backup'));
RESET ROLE;
SELECT dynindex.api('DeleteBackup', format('{"BackupArn":"%s"}', :'secb_backup')::jsonb) -> 'BackupDescription' -> 'BackupDetails' ->> 'BackupStatus';

-- ---- streams: the stream right on the stream's table ----
SELECT dynindex.api('CreateTable', '{"TableName":"SecS","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_IMAGE"}}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName":"SecS","Item":{"pk":{"S":"s1"},"secret":{"S":"stream-data"}}}');
SELECT dynindex.grant_table('SecS', 'sec_stream', 'stream');
SELECT dynindex.api('DescribeTable', '{"TableName":"SecS"}') -> 'Table' ->> 'LatestStreamArn' AS secs_stream \gset
SET ROLE sec_stream;
SELECT pg_temp.call('DescribeStream', format('{"StreamArn":"%s"}', :'secs_stream'))::jsonb -> 'StreamDescription' ->> 'StreamStatus';
SELECT jsonb_array_length(pg_temp.call('ListStreams', '{}')::jsonb -> 'Streams') AS visible_streams;
SELECT pg_temp.call('GetShardIterator', format('{"StreamArn":"%s","ShardId":"%s","ShardIteratorType":"TRIM_HORIZON"}', :'secs_stream',
  pg_temp.call('DescribeStream', format('{"StreamArn":"%s"}', :'secs_stream'))::jsonb -> 'StreamDescription' -> 'Shards' -> 0 ->> 'ShardId'))::jsonb ->> 'ShardIterator' AS secs_iterator \gset
SELECT pg_temp.call('GetRecords', format('{"ShardIterator":"%s"}', :'secs_iterator'))::jsonb ? 'Records' AS records_answered;
SELECT count(*) FROM dynindex.stream_changes('SecS');
RESET ROLE;
SET ROLE sec_app1;
SELECT jsonb_array_length(pg_temp.call('ListStreams', '{}')::jsonb -> 'Streams') AS visible_streams;
SELECT pg_temp.call('ListStreams', '{"TableName":"SecS"}');
SELECT pg_temp.call('DescribeStream', format('{"StreamArn":"%s"}', :'secs_stream'));
SELECT pg_temp.call('GetShardIterator', format('{"StreamArn":"%s","ShardId":"shardId-00000000000000000000-00000000","ShardIteratorType":"TRIM_HORIZON"}', :'secs_stream'));
-- another role's iterator: denied as well
SELECT pg_temp.call('GetRecords', format('{"ShardIterator":"%s"}', :'secs_iterator'));
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.stream_changes('SecS')$$);
RESET ROLE;
SELECT dynindex.api('DeleteTable', '{"TableName":"SecS"}') -> 'TableDescription' ->> 'TableStatus';

-- ---- account-wide administrator ----
SET ROLE sec_admin;
SELECT pg_temp.call('DescribeTable', '{"TableName":"NoSuchTable"}');
SELECT pg_temp.call('GetItem', '{"TableName":"SecB","Key":{"id":{"N":"1"}}}');
-- every table (other suites' tables left aside here)
SELECT array_agg(n) FROM jsonb_array_elements_text(pg_temp.call('ListTables', '{}')::jsonb -> 'TableNames') n
 WHERE n LIKE 'Sec%';
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.gsi_status WHERE table_name LIKE 'Sec%'$$);
SELECT pg_temp.call('DeleteTable', '{"TableName":"SecC"}')::jsonb -> 'TableDescription' -> 'TableStatus';
RESET ROLE;

-- ---- LeadingKeys: row-level security on every storage relation ----
SELECT dynindex.api('CreateTable', '{"TableName":"SecL","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},
    {"AttributeName":"g","AttributeType":"S"},{"AttributeName":"l","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL AS created;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'SecL', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', p), 'sk', jsonb_build_object('S', 's' || i), 'g', jsonb_build_object('S', 'all'),
  'l', jsonb_build_object('S', 'l' || i)))))
  FROM unnest(ARRAY['sec_alice', 'bob', 'tenant-7#a', 'tenant-7#b', 'tenant-8#a']) p, generate_series(1, 2) i;
-- sec_lk's members: the partition key must be their own role name
SELECT dynindex.grant_table('SecL', 'sec_lk', 'write');
SELECT dynindex.restrict_leading_keys('SecL', 'sec_lk');
-- sec_pfx: partition keys beginning with 'tenant-7#'
SELECT dynindex.grant_table('SecL', 'sec_pfx', 'write');
SELECT dynindex.restrict_leading_keys('SecL', 'sec_pfx', 'tenant-7#', true);
SELECT role_name, key_value, begins_with FROM dynindex.leading_keys ORDER BY 1;
SELECT dynindex.wait_for_indexes('SecL');
SET ROLE sec_alice;
SELECT pg_temp.call('Scan', '{"TableName":"SecL","ProjectionExpression":"pk, sk"}')::jsonb -> 'Items';
SELECT pg_temp.call('Query', '{"TableName":"SecL","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"bob"}}}')::jsonb -> 'Count';
SELECT pg_temp.call('Query', '{"TableName":"SecL","IndexName":"byL","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"bob"}}}')::jsonb -> 'Count';
SELECT pg_temp.call('Query', '{"TableName":"SecL","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"all"}}}')::jsonb -> 'Count';
SELECT pg_temp.call('Scan', '{"TableName":"SecL","IndexName":"byG","Select":"COUNT"}')::jsonb -> 'Count';
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"SELECT pk, sk FROM \"SecL\""}')::jsonb -> 'Items';
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"UPDATE \"SecL\" SET x = ''pq'' WHERE pk = ''bob'' AND sk = ''s1''"}');
SELECT pg_temp.call('GetItem', '{"TableName":"SecL","Key":{"pk":{"S":"bob"},"sk":{"S":"s1"}}}');
SELECT pg_temp.call('BatchGetItem', '{"RequestItems":{"SecL":{"Keys":[{"pk":{"S":"bob"},"sk":{"S":"s1"}},{"pk":{"S":"sec_alice"},"sk":{"S":"s1"}}],"ProjectionExpression":"pk"}}}')::jsonb -> 'Responses';
SELECT pg_temp.call('TransactGetItems', '{"TransactItems":[{"Get":{"TableName":"SecL","Key":{"pk":{"S":"bob"},"sk":{"S":"s1"}}}}]}');
SELECT pg_temp.call('PutItem', '{"TableName":"SecL","Item":{"pk":{"S":"sec_alice"},"sk":{"S":"s3"},"g":{"S":"all"}}}');
SELECT pg_temp.call('PutItem', '{"TableName":"SecL","Item":{"pk":{"S":"bob"},"sk":{"S":"s9"}}}');
SELECT pg_temp.call('PutItem', '{"TableName":"SecL","Item":{"pk":{"S":"bob"},"sk":{"S":"s1"}}}');
SELECT pg_temp.call('UpdateItem', '{"TableName":"SecL","Key":{"pk":{"S":"bob"},"sk":{"S":"s1"}},"UpdateExpression":"SET x = :x","ExpressionAttributeValues":{":x":{"S":"hacked"}}}');
SELECT pg_temp.call('UpdateItem', '{"TableName":"SecL","Key":{"pk":{"S":"sec_alice"},"sk":{"S":"s1"}},"UpdateExpression":"SET x = :x","ExpressionAttributeValues":{":x":{"S":"mine"}}}');
SELECT pg_temp.call('DeleteItem', '{"TableName":"SecL","Key":{"pk":{"S":"bob"},"sk":{"S":"s2"}},"ReturnValues":"ALL_OLD"}');
SELECT pg_temp.call('BatchWriteItem', '{"RequestItems":{"SecL":[{"PutRequest":{"Item":{"pk":{"S":"bob"},"sk":{"S":"s8"}}}}]}}');
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Put":{"TableName":"SecL","Item":{"pk":{"S":"sec_alice"},"sk":{"S":"s4"}}}},{"Put":{"TableName":"SecL","Item":{"pk":{"S":"bob"},"sk":{"S":"s7"}}}}]}');
-- a restricted role reads the storage relations with the same restriction
RESET ROLE;
SELECT storage AS secl FROM dynindex.tables WHERE table_name = 'SecL' \gset
SELECT storage AS secl_g FROM dynindex.indexes WHERE table_name = 'SecL' AND index_name = 'byG' \gset
SELECT dynindex.wait_for_indexes('SecL');
SET ROLE sec_alice;
SELECT pg_temp.try(format('SELECT count(*)::text FROM %s', :'secl'));
SELECT pg_temp.try(format('SELECT count(*)::text FROM %s', :'secl_g'));
RESET ROLE;
SET ROLE sec_pfx;
SELECT pg_temp.call('Scan', '{"TableName":"SecL","ProjectionExpression":"pk, sk"}')::jsonb -> 'Items';
SELECT pg_temp.call('PutItem', '{"TableName":"SecL","Item":{"pk":{"S":"tenant-7#c"},"sk":{"S":"s1"}}}');
SELECT pg_temp.call('PutItem', '{"TableName":"SecL","Item":{"pk":{"S":"tenant-8#c"},"sk":{"S":"s1"}}}');
RESET ROLE;
-- unrestricted roles see everything; the other tenants' items are untouched
SELECT dynindex.wait_for_indexes('SecL');
SELECT i->'pk'->>'S' AS pk, i->'sk'->>'S' AS sk, i->'x'->>'S' AS x
  FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName":"SecL"}')->'Items') i ORDER BY 1, 2;
SELECT string_agg(format('%s %s %s %s', index_name, missing, extra, stale), ',') FROM dynindex.verify_indexes('SecL');
-- streams: DynamoDB's Streams actions take no dynamodb:LeadingKeys condition
-- (a stream is granted whole): a restricted role is denied the stream
SELECT dynindex.api('UpdateTable', '{"TableName":"SecL","StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_IMAGE"}}') -> 'TableDescription' -> 'StreamSpecification';
SELECT dynindex.api('DescribeTable', '{"TableName":"SecL"}') -> 'Table' ->> 'LatestStreamArn' AS secl_stream \gset
SELECT dynindex.api('PutItem', '{"TableName":"SecL","Item":{"pk":{"S":"bob"},"sk":{"S":"s5"},"secret":{"S":"bob-stream-data"}}}');
SELECT dynindex.grant_table('SecL', 'sec_pfx', 'stream');
SELECT dynindex.grant_table('SecL', 'sec_lk', 'stream');
SELECT dynindex.has_table_access('SecL', 'stream', 'sec_pfx') AS pfx_stream,
       dynindex.has_table_access('SecL', 'stream', 'sec_alice') AS alice_stream;
SET ROLE sec_pfx;
SELECT pg_temp.call('DescribeStream', format('{"StreamArn":"%s"}', :'secl_stream'));
SELECT pg_temp.call('GetShardIterator', format('{"StreamArn":"%s","ShardId":"shardId-00000000000000000000-00000000","ShardIteratorType":"TRIM_HORIZON"}', :'secl_stream'));
SELECT pg_temp.call('ListStreams', '{"TableName":"SecL"}');
SELECT pg_temp.call('ListStreams', '{}');
SELECT pg_temp.try($$SELECT count(*)::text FROM dynindex.stream_changes('SecL')$$);
RESET ROLE;
SET ROLE sec_alice;
SELECT pg_temp.call('DescribeStream', format('{"StreamArn":"%s"}', :'secl_stream'));
RESET ROLE;
-- an iterator obtained by an unrestricted reader does not help a restricted one
SELECT dynindex.api('GetShardIterator', jsonb_build_object('StreamArn', :'secl_stream', 'ShardId',
  dynindex.api('DescribeStream', jsonb_build_object('StreamArn', :'secl_stream')) -> 'StreamDescription' -> 'Shards' -> 0 -> 'ShardId',
  'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator' AS secl_iterator \gset
SET ROLE sec_pfx;
SELECT pg_temp.call('GetRecords', format('{"ShardIterator":"%s"}', :'secl_iterator'));
RESET ROLE;
-- lifting the restriction
SELECT dynindex.unrestrict_leading_keys('SecL', 'sec_pfx');
SET ROLE sec_pfx;
SELECT pg_temp.call('Scan', '{"TableName":"SecL","Select":"COUNT"}')::jsonb -> 'Count';
SELECT pg_temp.call('DescribeStream', format('{"StreamArn":"%s"}', :'secl_stream'))::jsonb -> 'StreamDescription' ->> 'StreamStatus';
SELECT pg_temp.call('GetRecords', format('{"ShardIterator":"%s"}', :'secl_iterator'))::jsonb ? 'Records' AS records_answered;
SELECT event_name, new_image->'secret'->>'S' AS secret FROM dynindex.stream_changes('SecL');
RESET ROLE;
SELECT dynindex.unrestrict_leading_keys('SecL', 'sec_lk');
SELECT relrowsecurity, count(p.*) FROM pg_class c LEFT JOIN pg_policy p ON p.polrelid = c.oid
 WHERE c.oid = :'secl'::regclass GROUP BY 1;

-- clean up
SELECT dynindex.api('DeleteTable', '{"TableName":"SecA"}') IS NOT NULL,
       dynindex.api('DeleteTable', '{"TableName":"SecB"}') IS NOT NULL,
       dynindex.api('DeleteTable', '{"TableName":"SecL"}') IS NOT NULL;
SELECT count(*) FROM dynindex.table_rights;
SET client_min_messages = warning;
DROP OWNED BY sec_app1, sec_app2, sec_creator, sec_stream, sec_lk, sec_alice, sec_pfx, sec_admin;
DROP ROLE sec_app1, sec_app2, sec_creator, sec_stream, sec_lk, sec_alice, sec_pfx, sec_admin;
