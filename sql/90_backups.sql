-- On-demand backups: CreateBackup, DescribeBackup, ListBackups, DeleteBackup,
-- RestoreTableFromBackup (with overrides, indexes rebuilt).  Point-in-time
-- recovery (the continuous-backup operations): 94_pitr.sql.
\set VERBOSITY terse
-- masks the values that change from run to run (ids, ARNs' backup part, times)
CREATE FUNCTION mask(j jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT regexp_replace(regexp_replace(regexp_replace(j::text,
    '/backup/[0-9]{14}-[0-9a-f]{8}', '/backup/<id>', 'g'),
    '"(BackupCreationDateTime|TableCreationDateTime|RestoreDateTime|CreationDateTime|LastUpdateToPayPerRequestDateTime)": [0-9.]+', '"\1": "<time>"', 'g'),
    '"TableId": "[0-9a-f-]{36}"', '"TableId": "<uuid>"', 'g')::jsonb $$;
-- an operation's masked response, or its masked error message
CREATE FUNCTION try(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN mask(dynindex.api(op, req))::text;
EXCEPTION WHEN others THEN
  RETURN regexp_replace(SQLERRM, '/backup/[0-9]{14}-[0-9a-f]{8}', '/backup/<id>', 'g');
END $$;
SELECT dynindex.api('CreateTable', '{"TableName": "Music", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "artist", "KeyType": "HASH"}, {"AttributeName": "song", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "artist", "AttributeType": "S"}, {"AttributeName": "song", "AttributeType": "S"},
    {"AttributeName": "year", "AttributeType": "N"}, {"AttributeName": "genre", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "by_year", "KeySchema": [{"AttributeName": "artist", "KeyType": "HASH"},
    {"AttributeName": "year", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "by_genre", "KeySchema": [{"AttributeName": "genre", "KeyType": "HASH"},
    {"AttributeName": "year", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["plays"]}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"},
  "SSESpecification": {"Enabled": true, "SSEType": "KMS", "KMSMasterKeyId": "alias/music"},
  "Tags": [{"Key": "team", "Value": "audio"}]}') IS NOT NULL AS created;
SELECT dynindex.api('UpdateTimeToLive', '{"TableName": "Music", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "expires"}}');
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Music', 'Item', jsonb_build_object(
    'artist', jsonb_build_object('S', 'a' || (i % 3)), 'song', jsonb_build_object('S', 's' || lpad(i::text, 2, '0')),
    'year', jsonb_build_object('N', (1990 + i)::text), 'plays', jsonb_build_object('N', (i * 10)::text),
    'lyrics', jsonb_build_object('S', repeat('la', i))) ||
    CASE WHEN i % 2 = 0 THEN jsonb_build_object('genre', jsonb_build_object('S', 'g' || (i % 4))) ELSE '{}' END)))
  FROM generate_series(1, 12) i;

-- request validation: the member constraints as DynamoDB lists them
SELECT dynindex.api('CreateBackup', '{"BackupName": "b1"}');
SELECT dynindex.api('CreateBackup', '{"TableName": "Music"}');
SELECT dynindex.api('CreateBackup', '{"TableName": "Music", "BackupName": "b1"}');
SELECT dynindex.api('CreateBackup', '{"TableName": "Music", "BackupName": "bad name!"}');
SELECT dynindex.api('CreateBackup', jsonb_build_object('TableName', 'Music', 'BackupName', repeat('b', 256)));
SELECT dynindex.api('CreateBackup', '{"TableName": "Music", "BackupName": 7}');
SELECT dynindex.api('DescribeBackup', '{}');
SELECT dynindex.api('DescribeBackup', '{"BackupArn": "arn:aws:dynamodb:x"}');
SELECT dynindex.api('DeleteBackup', jsonb_build_object('BackupArn', repeat('a', 1025)));
SELECT dynindex.api('ListBackups', '{"Limit": 0, "BackupType": "MINE"}');
SELECT dynindex.api('ListBackups', '{"TableName": "x"}');
SELECT dynindex.api('RestoreTableFromBackup', '{"TargetTableName": "x", "BillingModeOverride": "FREE"}');
SELECT dynindex.api('RestoreTableFromBackup', '{"TargetTableName": "Music2", "BackupArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Music/backup/01700000000000-00000000",
  "ProvisionedThroughputOverride": {"ReadCapacityUnits": 0}}');
-- a table that does not exist: TableNotFoundException
SELECT dynindex.api('CreateBackup', '{"TableName": "Nope", "BackupName": "b-one"}');

-- CreateBackup: the copy is the table at that moment
-- (the response says CREATING, as DynamoDB's does; the copy is complete and DescribeBackup says AVAILABLE)
SELECT dynindex.api('CreateBackup', '{"TableName": "Music", "BackupName": "music-1"}') AS r \gset
SELECT mask(:'r');
SELECT (:'r'::jsonb) #>> '{BackupDetails,BackupArn}' AS arn \gset
SELECT :'arn' ~ '^arn:aws:dynamodb:us-east-1:000000000000:table/Music/backup/[0-9]{14}-[0-9a-f]{8}$' AS arn_form,
       abs(((:'r'::jsonb) #>> '{BackupDetails,BackupCreationDateTime}')::numeric - extract(epoch FROM now())) < 60 AS recent;
-- later writes are not in the backup
SELECT dynindex.api('PutItem', '{"TableName": "Music", "Item": {"artist": {"S": "a0"}, "song": {"S": "late"}, "year": {"N": "2030"}, "genre": {"S": "g0"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName": "Music", "Key": {"artist": {"S": "a1"}, "song": {"S": "s01"}}}');
-- DescribeBackup: details, the source table and its features (indexes, stream, TTL, SSE)
SELECT jsonb_pretty(mask(dynindex.api('DescribeBackup', jsonb_build_object('BackupArn', :'arn'))));
SELECT dynindex.api('DescribeBackup', '{"BackupArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Music/backup/01700000000000-00000000"}');
-- the copy relation is guarded like storage
SELECT storage AS copy FROM dynindex.backups WHERE backup_arn = :'arn' \gset
SELECT count(*) FROM :copy;
DELETE FROM :copy;
-- a second backup, of a provisioned hash-only table
SELECT dynindex.api('CreateTable', '{"TableName": "Plain", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName": "Plain", "Item": {"id": {"N": "1"}, "v": {"SS": ["x", "y"]}}}');
SELECT dynindex.api('CreateBackup', '{"TableName": "Plain", "BackupName": "plain-1"}') #>> '{BackupDetails,BackupArn}' AS parn \gset
SELECT dynindex.api('CreateBackup', '{"TableName": "Music", "BackupName": "music-2"}') #>> '{BackupDetails,BackupArn}' AS arn2 \gset
SELECT jsonb_pretty(mask(dynindex.api('DescribeBackup', jsonb_build_object('BackupArn', :'parn'))) -> 'BackupDescription' -> 'SourceTableDetails');

-- ListBackups: all, by table, by type, by time, paged
SELECT jsonb_pretty(mask(dynindex.api('ListBackups', '{}')));
SELECT jsonb_path_query_array(dynindex.api('ListBackups', '{"TableName": "Music"}'), '$.BackupSummaries[*].BackupName');
SELECT jsonb_path_query_array(dynindex.api('ListBackups', '{"TableName": "Gone"}'), '$.BackupSummaries[*].BackupName');
SELECT dynindex.api('ListBackups', '{"BackupType": "SYSTEM"}');
SELECT dynindex.api('ListBackups', '{"BackupType": "AWS_BACKUP"}');
SELECT jsonb_path_query_array(dynindex.api('ListBackups', '{"BackupType": "ALL"}'), '$.BackupSummaries[*].BackupName');
SELECT jsonb_path_query_array(dynindex.api('ListBackups', jsonb_build_object('TimeRangeLowerBound', extract(epoch FROM now()) - 3600,
  'TimeRangeUpperBound', extract(epoch FROM now()) + 3600)), '$.BackupSummaries[*].BackupName');
SELECT dynindex.api('ListBackups', jsonb_build_object('TimeRangeLowerBound', extract(epoch FROM now()) + 3600));
SELECT dynindex.api('ListBackups', jsonb_build_object('TimeRangeUpperBound', extract(epoch FROM now()) - 3600));
-- the upper bound is exclusive, the lower bound inclusive
SELECT extract(epoch FROM created_at) AS t1 FROM dynindex.backups WHERE backup_arn = :'arn' \gset
SELECT jsonb_path_query_array(dynindex.api('ListBackups', jsonb_build_object('TableName', 'Music', 'TimeRangeUpperBound', :t1)), '$.BackupSummaries[*].BackupName') AS upper_excl,
       jsonb_path_query_array(dynindex.api('ListBackups', jsonb_build_object('TableName', 'Music', 'TimeRangeLowerBound', :t1)), '$.BackupSummaries[*].BackupName') AS lower_incl;
-- paging: Limit and LastEvaluatedBackupArn / ExclusiveStartBackupArn
SELECT dynindex.api('ListBackups', '{"Limit": 2}') AS p1 \gset
SELECT jsonb_path_query_array(:'p1', '$.BackupSummaries[*].BackupName') AS page1,
       (:'p1'::jsonb ->> 'LastEvaluatedBackupArn') = (:'p1'::jsonb #>> '{BackupSummaries,1,BackupArn}') AS last_is_page_end;
SELECT mask(dynindex.api('ListBackups', jsonb_build_object('Limit', 2, 'ExclusiveStartBackupArn', :'p1'::jsonb ->> 'LastEvaluatedBackupArn')));
SELECT mask(dynindex.api('ListBackups', jsonb_build_object('Limit', 3)));

-- RestoreTableFromBackup: target exists, backup missing
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Plain', 'BackupArn', :'arn'));
SELECT dynindex.api('RestoreTableFromBackup', '{"TargetTableName": "Music2", "BackupArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Music/backup/01700000000000-00000000"}');
-- a restore: same keys, indexes and billing; items as at backup time; indexes queryable at once
SELECT jsonb_pretty(mask(dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music2', 'BackupArn', :'arn'))));
-- (the response shows the table as DynamoDB's does while it restores: CREATING, in progress;
-- the restore is complete, so DescribeTable shows it ACTIVE, no longer in progress)
SELECT mask(dynindex.api('DescribeTable', '{"TableName": "Music2"}') -> 'Table' -> 'RestoreSummary');
SELECT dynindex.api('DescribeTable', '{"TableName": "Music2"}') #>> '{Table,TableStatus}' AS table_status;
SELECT dynindex.api('DescribeTable', '{"TableName": "Music2"}') #> '{Table,GlobalSecondaryIndexes,0,IndexStatus}' AS gsi_status;
SELECT count(*) AS items FROM dynindex.scan('Music2');
SELECT dynindex.api('GetItem', '{"TableName": "Music2", "Key": {"artist": {"S": "a1"}, "song": {"S": "s01"}}}') -> 'Item' ->> 'lyrics' AS deleted_after_backup_is_back,
       dynindex.api('GetItem', '{"TableName": "Music2", "Key": {"artist": {"S": "a0"}, "song": {"S": "late"}}}') AS written_after_backup;
SELECT i FROM dynindex.query('Music2', 'artist = :a AND #y > :y', '{"#y": "year"}', '{":a": {"S": "a1"}, ":y": {"N": "1995"}}', index_name => 'by_year') i;
SELECT i FROM dynindex.query('Music2', 'genre = :g', NULL, '{":g": {"S": "g2"}}', index_name => 'by_genre') i;
SELECT dynindex.api('Query', '{"TableName": "Music2", "IndexName": "by_genre", "KeyConditionExpression": "genre = :g AND #y BETWEEN :a AND :b",
  "ExpressionAttributeNames": {"#y": "year"}, "ExpressionAttributeValues": {":g": {"S": "g0"}, ":a": {"N": "1990"}, ":b": {"N": "2000"}},
  "ScanIndexForward": false}') -> 'Items';
SELECT * FROM dynindex.verify_indexes('Music2');
-- tags, stream and TTL are not restored (DynamoDB: set them up on the restored table)
SELECT dynindex.api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Music2"}');
SELECT dynindex.api('DescribeTimeToLive', '{"TableName": "Music2"}');
-- the restored table is an ordinary table
SELECT dynindex.api('PutItem', '{"TableName": "Music2", "Item": {"artist": {"S": "a9"}, "song": {"S": "new"}, "year": {"N": "2001"}, "genre": {"S": "g9"}}}');
SELECT dynindex.wait_for_indexes('Music2');
SELECT dynindex.api('Query', '{"TableName": "Music2", "IndexName": "by_genre", "KeyConditionExpression": "genre = :g",
  "ExpressionAttributeValues": {":g": {"S": "g9"}}}') -> 'Count' AS new_item_in_gsi;
-- restoring again onto the restored name
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music2', 'BackupArn', :'arn'));

-- overrides: billing and throughput, no GSI (its attribute definitions go), another LSI set, SSE
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music3', 'BackupArn', :'arn',
  'BillingModeOverride', 'PROVISIONED'));
-- an on-demand source's GSIs have no throughput: turned PROVISIONED, they must be overridden
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music3', 'BackupArn', :'arn',
  'BillingModeOverride', 'PROVISIONED', 'ProvisionedThroughputOverride', '{"ReadCapacityUnits": 7, "WriteCapacityUnits": 8}'::jsonb));
SELECT dynindex.api('DescribeTable', '{"TableName": "Music3"}');
SELECT jsonb_pretty(mask(dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music3', 'BackupArn', :'arn',
  'BillingModeOverride', 'PROVISIONED', 'ProvisionedThroughputOverride', '{"ReadCapacityUnits": 7, "WriteCapacityUnits": 8}'::jsonb,
  'GlobalSecondaryIndexOverride', '[]'::jsonb, 'SSESpecificationOverride', '{"Enabled": false}'::jsonb)) -> 'TableDescription'));
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music4', 'BackupArn', :'arn',
  'LocalSecondaryIndexOverride', '[]'::jsonb, 'GlobalSecondaryIndexOverride', '[{"IndexName": "by_genre_all", "KeySchema": [{"AttributeName": "genre", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}]'::jsonb)) #> '{TableDescription,AttributeDefinitions}';
SELECT dynindex.api('Query', '{"TableName": "Music4", "IndexName": "by_genre_all", "KeyConditionExpression": "genre = :g",
  "ExpressionAttributeValues": {":g": {"S": "g0"}}, "Select": "COUNT"}') -> 'Count' AS g0_items;
SELECT dynindex.api('Query', '{"TableName": "Music4", "IndexName": "by_year", "KeyConditionExpression": "artist = :a",
  "ExpressionAttributeValues": {":a": {"S": "a0"}}}');
-- an override index must still be a valid index definition (CreateTable's rules and messages)
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music5', 'BackupArn', :'arn',
  'GlobalSecondaryIndexOverride', '[{"IndexName": "bad", "KeySchema": [{"AttributeName": "nope", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]'::jsonb));
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music5', 'BackupArn', :'arn',
  'GlobalSecondaryIndexOverride', '[{"IndexName": "x"}]'::jsonb));
-- a provisioned source restored as on demand
SELECT mask(dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Plain2', 'BackupArn', :'parn',
  'BillingModeOverride', 'PAY_PER_REQUEST')) -> 'TableDescription' -> 'BillingModeSummary');
SELECT dynindex.api('GetItem', '{"TableName": "Plain2", "Key": {"id": {"N": "1"}}}');

-- backups outlive their table
SELECT dynindex.api('DeleteTable', '{"TableName": "Plain"}') IS NOT NULL AS deleted;
SELECT jsonb_path_query_array(dynindex.api('ListBackups', '{"TableName": "Plain"}'), '$.BackupSummaries[*].BackupName');
SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Plain', 'BackupArn', :'parn')) #> '{TableDescription,ItemCount}' AS items;
SELECT dynindex.api('GetItem', '{"TableName": "Plain", "Key": {"id": {"N": "1"}}}');

-- DeleteBackup: the description with status DELETED, then gone
SELECT storage AS copy2 FROM dynindex.backups WHERE backup_arn = :'arn2' \gset
SELECT jsonb_pretty(mask(dynindex.api('DeleteBackup', jsonb_build_object('BackupArn', :'arn2')) #- '{BackupDescription,SourceTableFeatureDetails}'));
SELECT try('DeleteBackup', jsonb_build_object('BackupArn', :'arn2'));
SELECT try('DescribeBackup', jsonb_build_object('BackupArn', :'arn2'));
SELECT try('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Music9', 'BackupArn', :'arn2'));
SELECT count(*) FROM dynindex.backups WHERE backup_arn = :'arn2';
SELECT to_regclass(:'copy2') AS dropped_copy;

-- OnDemandThroughput: a backup records the table's and its GSIs' maximums, a restore
-- keeps them; OnDemandThroughputOverride replaces the table's (its own messages)
SELECT dynindex.api('CreateTable', '{"TableName": "Capped", "BillingMode": "PAY_PER_REQUEST",
  "OnDemandThroughput": {"MaxWriteRequestUnits": 700},
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}, "OnDemandThroughput": {"MaxReadRequestUnits": 50, "MaxWriteRequestUnits": 5}}]}')
  IS NOT NULL AS created;
SELECT dynindex.api('CreateBackup', '{"TableName": "Capped", "BackupName": "capped"}') #>> '{BackupDetails,BackupArn}' AS carn \gset
SELECT dynindex.api('DescribeBackup', jsonb_build_object('BackupArn', :'carn'))
  #> '{BackupDescription,SourceTableFeatureDetails,GlobalSecondaryIndexes,0,OnDemandThroughput}' AS backup_gsi;
SELECT d -> 'OnDemandThroughput' AS table_max, d #> '{GlobalSecondaryIndexes,0,OnDemandThroughput}' AS gsi_max
  FROM (SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Capped2', 'BackupArn', :'carn'))
    -> 'TableDescription' AS d) r;
SELECT d -> 'OnDemandThroughput' AS table_max, d #> '{GlobalSecondaryIndexes,0,OnDemandThroughput}' AS gsi_max
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "Capped2"}') -> 'Table' AS d) r;
SELECT d -> 'OnDemandThroughput' AS table_max, d #> '{GlobalSecondaryIndexes,0,OnDemandThroughput}' AS gsi_max
  FROM (SELECT dynindex.api('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Capped3', 'BackupArn', :'carn',
    'OnDemandThroughputOverride', '{"MaxReadRequestUnits": 9}'::jsonb)) -> 'TableDescription' AS d) r;
SELECT try('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Capped4', 'BackupArn', :'carn',
  'OnDemandThroughputOverride', '{"MaxReadRequestUnits": 0}'::jsonb));
SELECT try('RestoreTableFromBackup', jsonb_build_object('TargetTableName', 'Capped4', 'BackupArn', :'parn',
  'OnDemandThroughputOverride', '{"MaxReadRequestUnits": 9}'::jsonb));
SELECT count(dynindex.api('DeleteTable', jsonb_build_object('TableName', t)))
  FROM unnest(ARRAY['Capped', 'Capped2', 'Capped3']) t;

-- clean up (later suites list tables)
SELECT count(dynindex.api('DeleteBackup', jsonb_build_object('BackupArn', backup_arn))) FROM dynindex.backups;
SELECT count(dynindex.api('DeleteTable', jsonb_build_object('TableName', t)))
  FROM unnest(ARRAY['Music', 'Music2', 'Music3', 'Music4', 'Plain', 'Plain2']) t;
SELECT count(*) AS copies_left FROM pg_tables WHERE schemaname = 'dynindex_backups';
