-- The legacy global tables API (version 2017.11.29) and the replica auto
-- scaling operations, answered as DynamoDB answers them for an account with
-- only current-version (2019.11.21) global tables and plain tables: no
-- 2017.11.29 global table can be created, the legacy operations see none,
-- and auto scaling is never on here (docs/global-tables.md, docs/errors.md).
SHOW dynindex.region;
SELECT dynindex.api('CreateTable', '{"TableName": "lg_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}')->'TableDescription'->>'TableStatus' AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "lg_p", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}')->'TableDescription'->>'TableStatus' AS created;

-- == CreateGlobalTable: never a success ==
-- the request's shape first
SELECT dynindex.api('CreateGlobalTable', '{}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "ab", "ReplicationGroup": []}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "bad name!", "ReplicationGroup": [{"RegionName": "us-east-1"}]}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t"}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": 5, "ReplicationGroup": []}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicationGroup": {"RegionName": "us-east-1"}}');
-- a region no server of the deployment is: DynamoDB's region enum (the deployment's regions)
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t",
  "ReplicationGroup": [{"RegionName": "us-east-1"}, {"RegionName": "eu-west-9"}, {"RegionName": "ap-x-1"}]}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicationGroup": [{"RegionName": "eu-west-9"}]}');
-- then the legacy version's refusal, before any table is looked for: every
-- precondition met (the table, its NEW_AND_OLD_IMAGES stream, empty) or not
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicationGroup": [{"RegionName": "us-east-1"}]}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_missing", "ReplicationGroup": [{"RegionName": "us-east-1"}]}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicationGroup": []}');
-- a declared region is one of the deployment's
SELECT dynindex.set_region('eu-west-1', 'host=eu.example dbname=app user=rep password=x');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t",
  "ReplicationGroup": [{"RegionName": "us-east-1"}, {"RegionName": "eu-west-1"}]}');
SELECT dynindex.api('CreateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicationGroup": [{"RegionName": "nowhere-1"}]}');
-- nothing was created
SELECT dynindex.api('ListGlobalTables', '{}');

-- == DescribeGlobalTable, DescribeGlobalTableSettings ==
SELECT dynindex.api('DescribeGlobalTable', '{}');
SELECT dynindex.api('DescribeGlobalTable', '{"GlobalTableName": ""}');
SELECT dynindex.api('DescribeGlobalTable', format('{"GlobalTableName": "%s"}', repeat('x', 256))::jsonb);
SELECT dynindex.api('DescribeGlobalTable', '{"GlobalTableName": ["lg_t"]}');
-- a plain table, a missing name
SELECT dynindex.api('DescribeGlobalTable', '{"GlobalTableName": "lg_t"}');
SELECT dynindex.api('DescribeGlobalTable', '{"GlobalTableName": "lg_missing"}');
SELECT dynindex.api('DescribeGlobalTableSettings', '{}');
SELECT dynindex.api('DescribeGlobalTableSettings', '{"GlobalTableName": "a b"}');
SELECT dynindex.api('DescribeGlobalTableSettings', '{"GlobalTableName": "lg_t"}');
SELECT dynindex.api('DescribeGlobalTableSettings', '{"GlobalTableName": "lg_missing"}');

-- == UpdateGlobalTableSettings ==
SELECT dynindex.api('UpdateGlobalTableSettings', '{"GlobalTableBillingMode": "FREE"}');
SELECT dynindex.api('UpdateGlobalTableSettings', '{"GlobalTableName": "lg_t", "GlobalTableProvisionedWriteCapacityUnits": 0,
  "ReplicaSettingsUpdate": []}');
SELECT dynindex.api('UpdateGlobalTableSettings', '{"GlobalTableName": "lg_t",
  "ReplicaSettingsUpdate": [{"ReplicaTableClass": "COLD"}]}');
SELECT dynindex.api('UpdateGlobalTableSettings', '{"GlobalTableName": "lg_t",
  "GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate": {"MinimumUnits": 0, "ScalingPolicyUpdate": {}}}');
SELECT dynindex.api('UpdateGlobalTableSettings', '{"GlobalTableName": "lg_t", "GlobalTableBillingMode": "PAY_PER_REQUEST"}');
SELECT dynindex.api('UpdateGlobalTableSettings', '{"GlobalTableName": "lg_t",
  "ReplicaSettingsUpdate": [{"RegionName": "us-east-1", "ReplicaProvisionedReadCapacityUnits": 5}]}');
SELECT dynindex.api('UpdateGlobalTableSettings', '{"GlobalTableName": "lg_missing"}');

-- == UpdateGlobalTable ==
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_t"}');
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicaUpdates": [{"Create": {}}]}');
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "x", "ReplicaUpdates": [{"Delete": {"RegionName": "us-east-1"}}]}');
-- an empty list: DynamoDB's bare message
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicaUpdates": []}');
-- adding a replica: the legacy version's refusal, before the global table is looked for
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_missing", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}]}');
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_t",
  "ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}, {"Create": {"RegionName": "eu-west-1"}}]}');
-- removing one: there is no such global table
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}]}');
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_missing", "ReplicaUpdates": [{}]}');

-- == ListGlobalTables: only 2017.11.29 global tables, so none ==
SELECT dynindex.api('ListGlobalTables', '{"RegionName": "us-east-1"}');
SELECT dynindex.api('ListGlobalTables', '{"RegionName": "eu-west-1", "Limit": 1, "ExclusiveStartGlobalTableName": "lg_t"}');
SELECT dynindex.api('ListGlobalTables', '{"Limit": 0}');
SELECT dynindex.api('ListGlobalTables', '{"ExclusiveStartGlobalTableName": "ab"}');
SELECT dynindex.api('ListGlobalTables', '{"Limit": "1"}');

-- == DescribeTableReplicaAutoScaling, UpdateTableReplicaAutoScaling ==
-- a plain table and a missing one: no such global table
SELECT dynindex.api('DescribeTableReplicaAutoScaling', '{"TableName": "lg_t"}');
SELECT dynindex.api('DescribeTableReplicaAutoScaling', '{"TableName": "lg_missing"}');
SELECT dynindex.api('DescribeTableReplicaAutoScaling', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/lg_missing"}');
SELECT dynindex.api('DescribeTableReplicaAutoScaling', '{}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"AutoScalingDisabled": true}}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t", "ReplicaUpdates": [],
  "ProvisionedWriteCapacityAutoScalingUpdate": {"MinimumUnits": 0}}');
-- global tables (as dynindex._replicate_table records them: test/t/130_global_basic.pl)
INSERT INTO dynindex.replicas (table_name, region_name) VALUES ('lg_t', 'eu-west-1'), ('lg_p', 'eu-west-1');
\c
SELECT jsonb_pretty(dynindex.api('DescribeTableReplicaAutoScaling', '{"TableName": "lg_t"}'));
SELECT dynindex.api('DescribeTableReplicaAutoScaling',
  '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/lg_p"}')->'TableAutoScalingDescription'->'Replicas'->1;
-- the legacy operations do not see 2019.11.21 global tables
SELECT dynindex.api('DescribeGlobalTable', '{"GlobalTableName": "lg_t"}');
SELECT dynindex.api('DescribeGlobalTableSettings', '{"GlobalTableName": "lg_t"}');
SELECT dynindex.api('UpdateGlobalTable', '{"GlobalTableName": "lg_t", "ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}]}');
SELECT dynindex.api('ListGlobalTables', '{}');
-- disabling (auto scaling is never on here): done, the description answers
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"AutoScalingDisabled": true},
  "ReplicaUpdates": [{"RegionName": "eu-west-1", "ReplicaProvisionedReadCapacityAutoScalingUpdate": {"AutoScalingDisabled": true}}]}')
  ->'TableAutoScalingDescription'->'Replicas'->0->'ReplicaProvisionedReadCapacityAutoScalingSettings';
-- DynamoDB's checks of each settings update
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"AutoScalingDisabled": true, "MinimumUnits": 1, "MaximumUnits": 10}}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"AutoScalingDisabled": true,
    "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70}}}}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"AutoScalingDisabled": false}}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"MinimumUnits": 1, "MaximumUnits": 10}}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"MinimumUnits": 1, "MaximumUnits": 10,
    "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {}}}}');
-- replicas and GSIs the table does not have
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ReplicaUpdates": [{"RegionName": "ap-south-1", "ReplicaProvisionedReadCapacityAutoScalingUpdate": {"AutoScalingDisabled": true}}]}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "GlobalSecondaryIndexUpdates": [{"IndexName": "nope", "ProvisionedWriteCapacityAutoScalingUpdate": {"AutoScalingDisabled": true}}]}');
-- enabling it: an on-demand table, DynamoDB's refusal
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"MinimumUnits": 1, "MaximumUnits": 10,
    "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70}}}}');
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_t",
  "ReplicaUpdates": [{"RegionName": "us-east-1", "ReplicaProvisionedReadCapacityAutoScalingUpdate": {"MinimumUnits": 1,
    "MaximumUnits": 10, "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70}}}}]}');
-- a provisioned table: dynindex's own refusal (no auto scaling is built)
SELECT dynindex.api('UpdateTableReplicaAutoScaling', '{"TableName": "lg_p",
  "ProvisionedWriteCapacityAutoScalingUpdate": {"MinimumUnits": 1, "MaximumUnits": 10,
    "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70}}}}');

-- clean up
DELETE FROM dynindex.replicas WHERE table_name IN ('lg_t', 'lg_p');
\c
SELECT dynindex.drop_region('eu-west-1');
SELECT dynindex.api('DeleteTable', '{"TableName": "lg_t"}')->'TableDescription'->>'TableStatus' AS deleted;
SELECT dynindex.api('DeleteTable', '{"TableName": "lg_p"}')->'TableDescription'->>'TableStatus' AS deleted;
