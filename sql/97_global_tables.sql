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
-- MultiRegionConsistency: its values; a witness needs STRONG; STRONG is not built (refused, never ignored)
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "MultiRegionConsistency": "SOMETIMES", "DeletionProtectionEnabled": false}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "us-west-2"}}], "DeletionProtectionEnabled": false}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "MultiRegionConsistency": "STRONG", "DeletionProtectionEnabled": false}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "MultiRegionConsistency": "STRONG", "ReplicaUpdates": [{"Create": {"RegionName": "nowhere-1"}}]}');
-- EVENTUAL is what dynindex does: accepted with another change
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "MultiRegionConsistency": "EVENTUAL", "DeletionProtectionEnabled": false}')->'TableDescription'->>'TableName' AS eventual;


-- == the regions of a deployment (dynindex.set_region, administrators only) ==
CREATE ROLE gt_app NOLOGIN;
CREATE ROLE gt_admin NOLOGIN IN ROLE dynindex_admin;
SELECT dynindex.set_region('eu-west-1', 'host=eu.example port=5433 dbname=app user=rep password=s3cret sslmode=require');
SELECT dynindex.set_region('ap-south-1', 'host=ap.example dbname=app user=rep password=x');
-- changing a region's connection: the same row
SELECT dynindex.set_region('ap-south-1', 'host=ap2.example dbname=app user=rep password=y');
-- no secret comes back
SELECT * FROM dynindex.list_regions();
-- replication per region: nothing streams yet (no slot, nothing applied)
SELECT * FROM dynindex.replication_status();
-- the table itself: the extension's owner only (a superuser here)
SELECT region_name FROM dynindex.regions ORDER BY 1;
-- bad input: names, this server's own region, a connection string libpq refuses (never repeated)
SELECT dynindex.set_region('EU-WEST-1', 'host=x password=p');
SELECT dynindex.set_region('', 'host=x password=p');
SELECT dynindex.set_region('us-east-1', 'host=x password=p');
SELECT dynindex.set_region('eu-west-2', 'host=x password=topsecret nonsense');
SELECT dynindex.set_region('eu-west-2', 'host=x bogus_option=1 password=topsecret');
SELECT dynindex.set_region('eu-west-2', NULL);
-- an application role: none of it
SET ROLE gt_app;
SELECT dynindex.set_region('eu-west-2', 'host=x password=p');
SELECT * FROM dynindex.list_regions();
SELECT * FROM dynindex.regions;
SELECT dynindex.drop_region('eu-west-1');
SELECT * FROM dynindex.replication_status();
RESET ROLE;
-- an administrator: yes, with a password of its own (not the server's credentials)
SET ROLE gt_admin;
SELECT dynindex.set_region('eu-west-2', 'host=x dbname=app user=rep');
SELECT dynindex.set_region('eu-west-2', 'host=x dbname=app user=rep password=p');
SELECT region_name, local FROM dynindex.list_regions();
SELECT * FROM dynindex.regions;
SELECT dynindex.drop_region('eu-west-2'), dynindex.drop_region('eu-west-2');
RESET ROLE;

-- declared regions in ReplicaUpdates: an Update or Delete names a region the
-- table has a replica in; a region no server is: the list names this one and
-- the declared ones
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "eu-west-1", "TableClassOverride": "STANDARD"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "nowhere-1"}}]}');
-- a Create of a declared region: UPDATING, the replica CREATING, the table's
-- stream turned on (NEW_AND_OLD_IMAGES); a job does the work after the commit
-- (test/t/132_global_replica_api.pl: here it is rolled back, nothing starts)
BEGIN;
SELECT d->>'TableStatus' AS status, d->>'GlobalTableVersion' AS version, d->'Replicas' AS replicas,
       d->'StreamSpecification' AS stream
  FROM (SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}]}')->'TableDescription' AS d) s;
SELECT d->>'TableStatus' AS status, d->'Replicas' AS replicas
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "gt_t"}')->'Table' AS d) s;
SELECT kind, state FROM dynindex.jobs j JOIN dynindex.replica_jobs r USING (job_id);
SELECT table_name, region_name, action FROM dynindex.replica_jobs;
-- one replica created or deleted at a time
SAVEPOINT s;
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "ap-south-1"}}]}');
ROLLBACK TO s;
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}]}');
ROLLBACK;
-- two in one request: dynindex's own limit
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}, {"Create": {"RegionName": "ap-south-1"}}]}');
-- nothing stays of the rolled back request
SELECT d ? 'Replicas' AS has_replicas, d->>'TableStatus' AS status, d ? 'StreamSpecification' AS has_stream
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "gt_t"}')->'Table' AS d) s;
-- a replica there is (recorded by hand here, rolled back): Update and Delete of it
BEGIN;
INSERT INTO dynindex.replicas (table_name, region_name) VALUES ('gt_t', 'eu-west-1');
SELECT dynindex._replica_overrides('gt_t', 'eu-west-1', '{}');  -- the job's way to record: the catalog changes
-- Update: an override must fit the table (on-demand here), a GSI override names a GSI of it
SAVEPOINT s;
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "eu-west-1", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 5}}}]}');
ROLLBACK TO s;
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "eu-west-1", "GlobalSecondaryIndexes": [{"IndexName": "nope", "OnDemandThroughputOverride": {"MaxReadRequestUnits": 10}}]}}]}');
ROLLBACK TO s;
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "eu-west-1", "ProvisionedThroughputOverride": {"ReadCapacityUnits": 0}}}]}');
ROLLBACK TO s;
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "eu-west-1", "GlobalSecondaryIndexes": []}}]}');
ROLLBACK TO s;
-- accepted: UPDATING, a job with the action
SELECT d->>'TableStatus' AS status, d->'Replicas' AS replicas
  FROM (SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Update": {"RegionName": "eu-west-1", "OnDemandThroughputOverride": {"MaxReadRequestUnits": 10}, "TableClassOverride": "STANDARD_INFREQUENT_ACCESS"}}]}')->'TableDescription' AS d) s;
SELECT action, request FROM dynindex.replica_jobs;
-- what the job records is shown in Replicas
SELECT dynindex._replica_overrides('gt_t', 'eu-west-1', '{"OnDemandThroughputOverride": {"MaxReadRequestUnits": 10}, "GlobalSecondaryIndexes": [{"IndexName": "g1", "OnDemandThroughputOverride": {"MaxReadRequestUnits": 4}}]}');
SELECT dynindex._replica_overrides('gt_t', 'eu-west-1', '{"GlobalSecondaryIndexes": [{"IndexName": "g0", "OnDemandThroughputOverride": {"MaxReadRequestUnits": 3}}]}');
SELECT d->>'TableStatus' AS status, d->'Replicas' AS replicas
  FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "gt_t"}')->'Table' AS d) s;
-- Delete: DELETING
SELECT d->>'TableStatus' AS status, d->'Replicas' AS replicas
  FROM (SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}]}')->'TableDescription' AS d) s;
ROLLBACK;
-- rights: adding or removing a replica needs the admin right on the table (as UpdateTable)
SELECT dynindex.grant_table('gt_t', 'gt_app', 'write');
SET ROLE gt_app;
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Create": {"RegionName": "eu-west-1"}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "gt_t", "ReplicaUpdates": [{"Delete": {"RegionName": "eu-west-1"}}]}');
RESET ROLE;
SELECT dynindex.revoke_table('gt_t', 'gt_app', 'write');
-- the internal functions of the replica job: superusers only
SET ROLE gt_admin;
SELECT dynindex._replica_slot('eu-west-1');
SELECT dynindex._replica_join('gt_t', 'eu-west-1', 'ACTIVE');
SELECT dynindex._replica_leave('gt_t', 'eu-west-1');
SELECT dynindex._replica_copy_query('gt_t');
SELECT dynindex._replica_apply('gt_t', 'eu-west-1', '[]');
SELECT dynindex._replica_overrides('gt_t', 'eu-west-1', '{}');
SELECT dynindex._replica_local_api('DescribeTable', '{"TableName": "gt_t"}');
RESET ROLE;
SELECT dynindex._replica_join('gt_t', 'nowhere-1', 'ACTIVE');
SELECT dynindex._replica_join('gt_nothere', 'eu-west-1', 'ACTIVE');
SELECT dynindex._replica_apply('gt_t', 'eu-west-1', '[]');

-- the internal way a table becomes global (test/t/130_global_basic.pl): superusers only,
-- a declared region, a table that exists
SET ROLE gt_admin;
SELECT dynindex._replicate_table('gt_t', 'eu-west-1');
RESET ROLE;
SELECT dynindex._replicate_table('gt_t', 'nowhere-1');
SELECT dynindex._replicate_table('gt_nothere', 'eu-west-1');

-- replication stamps (docs/global-tables.md "Stamps"): an item's is in its row, a key with
-- no item keeps its tombstone in dynindex.replication_stamps.  A table replicated with
-- eu-west-1 (no server there: changes are captured, not sent), changes of eu-west-1
-- applied as the apply worker applies them; stamps in 2100 stand for a region whose
-- clock is far ahead of this one.
SELECT dynindex.api('CreateTable', '{"TableName": "gt_s", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT dynindex._replica_join('gt_s', 'eu-west-1', 'ACTIVE');
CREATE FUNCTION gt_change(k text, v text, stamp text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_array(jsonb_build_object('p', encode(dynindex.encode_key(jsonb_build_object('S', k)), 'base64'),
    's', '', 't', stamp, 'o', 'eu-west-1')
    || CASE WHEN v IS NULL THEN '{}'::jsonb
       ELSE jsonb_build_object('i', jsonb_build_object('pk', jsonb_build_object('S', k), 'v', jsonb_build_object('S', v))) END) $$;
CREATE FUNCTION gt_state(k text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v text;
  st text;
BEGIN
  v := dynindex.api('GetItem', jsonb_build_object('TableName', 'gt_s', 'ConsistentRead', true,
         'Key', jsonb_build_object('pk', jsonb_build_object('S', k)))) -> 'Item' -> 'v' ->> 'S';
  EXECUTE format('SELECT CASE WHEN abs(extract(epoch FROM stamp - now())) < 3600 THEN ''now'' ELSE stamp::text END || '' '' || region
                  FROM %s WHERE pk = dynindex.encode_key(jsonb_build_object(''S'', $1))',
                 (SELECT storage FROM dynindex.tables WHERE table_name = 'gt_s')) INTO st USING k;
  IF st IS NULL THEN
    SELECT stamp::text || ' ' || region || CASE WHEN deleted THEN ' (tombstone)' ELSE '' END INTO st
      FROM dynindex.replication_stamps
      WHERE table_num = (SELECT num FROM dynindex.tables WHERE table_name = 'gt_s')
        AND pk = dynindex.encode_key(jsonb_build_object('S', k));
  END IF;
  RETURN coalesce(v, '(no item)') || ', stamp ' || coalesce(st, '(none)');
END $$;
SET timezone = 'UTC';
-- a local write: stamped now, by this region
SELECT dynindex.api('PutItem', '{"TableName": "gt_s", "Item": {"pk": {"S": "a"}, "v": {"S": "local"}}}');
SELECT gt_state('a') = 'local, stamp now ' || current_setting('dynindex.region') AS stamped_now_here;
-- eu-west-1 deleted b in 2100: its tombstone; a local insert of b comes after it (the
-- row stamped again, past the tombstone), a local update after that
SELECT dynindex._replica_apply('gt_s', 'eu-west-1', gt_change('b', NULL, '2100-01-01 00:00:00+00'));
SELECT gt_state('b');
SELECT dynindex.api('PutItem', '{"TableName": "gt_s", "Item": {"pk": {"S": "b"}, "v": {"S": "put here"}}}');
SELECT replace(gt_state('b'), current_setting('dynindex.region'), 'here');
SELECT dynindex.api('UpdateItem', '{"TableName": "gt_s", "Key": {"pk": {"S": "b"}}, "UpdateExpression": "SET v = :v",
  "ExpressionAttributeValues": {":v": {"S": "updated here"}}}');
SELECT replace(gt_state('b'), current_setting('dynindex.region'), 'here');
-- eu-west-1's changes of b: an earlier one loses, a later one wins with its stamp
SELECT dynindex._replica_apply('gt_s', 'eu-west-1', gt_change('b', 'older', '2100-01-01 00:00:00.000001+00'));
SELECT replace(gt_state('b'), current_setting('dynindex.region'), 'here');
SELECT dynindex._replica_apply('gt_s', 'eu-west-1', gt_change('b', 'newer', '2101-01-01 00:00:00+00'));
SELECT gt_state('b');
-- a local delete: its tombstone after the item's stamp; a put of eu-west-1 before it loses
SELECT dynindex.api('DeleteItem', '{"TableName": "gt_s", "Key": {"pk": {"S": "b"}}}');
SELECT replace(gt_state('b'), current_setting('dynindex.region'), 'here');
SELECT dynindex._replica_apply('gt_s', 'eu-west-1', gt_change('b', 'late', '2101-01-01 00:00:00.000001+00'));
SELECT replace(gt_state('b'), current_setting('dynindex.region'), 'here');
-- an item written before the table was replicated (no stamp) loses to any change
SELECT dynindex._replica_leave('gt_s', 'eu-west-1');
SELECT dynindex.api('PutItem', '{"TableName": "gt_s", "Item": {"pk": {"S": "c"}, "v": {"S": "unreplicated"}}}');
SELECT gt_state('c');
SELECT dynindex._replica_apply('gt_s', 'eu-west-1', gt_change('c', 'replicated', '2000-01-01 00:00:00+00'));
SELECT gt_state('c');
RESET timezone;
DROP FUNCTION gt_change(text, text, text);
DROP FUNCTION gt_state(text);
SELECT dynindex.api('DeleteTable', '{"TableName": "gt_s"}') IS NOT NULL AS deleted;

SELECT dynindex.drop_region('eu-west-1'), dynindex.drop_region('ap-south-1');
DROP OWNED BY gt_app;
DROP ROLE gt_app;
DROP ROLE gt_admin;
SELECT dynindex.api('DeleteTable', '{"TableName": "gt_t"}')->'TableDescription'->>'TableStatus' AS deleted;
