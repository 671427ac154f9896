-- Global tables (version 2019.11.21), UpdateTable's ReplicaUpdates: every rule
-- with DynamoDB's message.  A region this server cannot replicate to is
-- refused (never answered UPDATING with nothing done); the local region
-- (dynindex.region) is CreateTable's, DeleteTable's and UpdateTable's.
SELECT dynindex.api('CreateTable', '{"TableName": "gt_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}')->'TableDescription'->>'TableStatus' AS created;
SHOW dynindex.region;

-- a region no server of the deployment is: not supported (the list names the regions there are)
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "nowhere-1"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Delete": {"RegionName": "nowhere-1"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "nowhere-1", "TableClassOverride": "STANDARD"}}]}');
-- the local region, whatever the action
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "us-east-1"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Delete": {"RegionName": "us-east-1"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "us-east-1", "TableClassOverride": "STANDARD"}}]}');
-- the refusal leaves the rest of the request undone
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "DeletionProtectionEnabled": true,
  "ReplicaUpdates": [{"Create": {"RegionName": "us-east-1"}}]}');
SELECT d->'DeletionProtectionEnabled' AS protection, d ? 'Replicas' AS has_replicas, d ? 'GlobalTableVersion' AS has_version
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "gt_t"}')->'Table' AS d) s;
-- an element with no action, or an Update that changes nothing
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "nowhere-1"}}]}');
-- two actions in one element
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "nowhere-1"}, "Delete": {"RegionName": "nowhere-1"}}]}');
-- request shapes: an empty list, a missing RegionName, a wrong TableClassOverride
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": []}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "nowhere-1", "TableClassOverride": "COLD"}}]}');
-- a table that does not exist
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_missing", "ReplicaUpdates": [{"Create": {"RegionName": "nowhere-1"}}]}');

SELECT dynindex.api('DeleteTable', '{"TableName": "gt_t"}')->'TableDescription'->>'TableStatus' AS deleted;
