-- Streams lifecycle: StreamSpecification on CreateTable / UpdateTable, DescribeTable's
-- StreamSpecification, LatestStreamLabel and LatestStreamArn, disabling, re-enabling
-- (a new stream), DeleteTable, and DynamoDB's messages (docs/streams.md, docs/errors.md).
\set VERBOSITY terse
SET dynindex.stream_shard_count = 2;
-- ct(name, stream spec): CreateTable of a hash+range table; ut(name, request members); dt(name)
CREATE FUNCTION ct(tbl text, spec jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('CreateTable', jsonb_build_object('TableName', tbl, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]'::jsonb)
    || CASE WHEN spec IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('StreamSpecification', spec) END) -> 'TableDescription' $$;
CREATE FUNCTION ut(tbl text, members jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('UpdateTable', jsonb_build_object('TableName', tbl) || members) -> 'TableDescription' $$;
CREATE FUNCTION dt(tbl text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('DescribeTable', jsonb_build_object('TableName', tbl)) -> 'Table' $$;
-- the stream members of a description, with the label and ARN checked instead of shown
CREATE FUNCTION sm(d jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('StreamSpecification', d -> 'StreamSpecification',
    'label_is_iso8601_ms', (d ->> 'LatestStreamLabel') ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$',
    'arn_is_table_arn_stream_label', d ->> 'LatestStreamArn' =
      (d ->> 'TableArn') || '/stream/' || (d ->> 'LatestStreamLabel')) $$;

-- ---------------------------------------------------------------- CreateTable validation
SELECT ct('st_bad', '{"StreamEnabled": false, "StreamViewType": "NEW_IMAGE"}');
SELECT ct('st_bad', '{"StreamEnabled": true}');
SELECT ct('st_bad', '{"StreamViewType": "KEYS_ONLY"}');
SELECT ct('st_bad', '{}');
SELECT ct('st_bad', '{"StreamEnabled": true, "StreamViewType": "new_image"}');
SELECT count(*) FROM dynindex.tables WHERE table_name = 'st_bad';
-- StreamEnabled false alone: a table without a stream
SELECT sm(ct('st_off', '{"StreamEnabled": false}'));
SELECT sm(dt('st_off'));
SELECT count(*) FROM dynindex.streams WHERE table_name = 'st_off';

-- ---------------------------------------------------------------- CreateTable with a stream
SELECT sm(ct('st1', '{"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}'));
SELECT sm(dt('st1'));
-- the label is the stream's creation time (UTC, milliseconds)
SELECT s.stream_label = to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS label_is_creation_time,
       s.stream_label = dt('st1') ->> 'LatestStreamLabel' AS described,
       s.view_type, s.shard_count, s.disabled_at IS NULL AS enabled,
       s.table_num = (SELECT num FROM dynindex.tables WHERE table_name = 'st1') AS table_num
FROM dynindex.streams s WHERE s.table_name = 'st1';
-- one open shard per bucket, all starting at one sequence number
SELECT sh.bucket, sh.shard_id ~ '^shardId-\d{20}-[0-9a-f]{8}$' AS shard_id_form, length(sh.shard_id) <= 65 AS len_ok,
       sh.parent_shard_id, sh.end_seq, sh.closed_at,
       sh.start_seq = min(sh.start_seq) OVER () AS same_start
FROM dynindex.stream_shards sh JOIN dynindex.streams s USING (stream_id)
WHERE s.table_name = 'st1' ORDER BY sh.bucket;
-- the ARN of the stream names the table's ARN (dynindex.region, dynindex.account_id)
SET dynindex.region = 'eu-west-3';
SELECT dt('st1') ->> 'LatestStreamArn' LIKE 'arn:aws:dynamodb:eu-west-3:000000000000:table/st1/stream/%' AS arn;
RESET dynindex.region;

-- ---------------------------------------------------------------- UpdateTable validation
-- enabling an enabled stream (the same or another view type)
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}');
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}}');
-- a view type exactly when enabling
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": true}}');
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": false, "StreamViewType": "KEYS_ONLY"}}');
SELECT ut('st1', '{"StreamSpecification": {"StreamViewType": "KEYS_ONLY"}}');
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": false, "StreamViewType": "OLD"}}');
-- a stream change with a throughput change or an index creation/deletion
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": false},
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": false}, "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": false},
  "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}}]}');
-- with PAY_PER_REQUEST the billing mode and the stream change together
SELECT sm(ut('st1', '{"StreamSpecification": {"StreamEnabled": false}, "BillingMode": "PAY_PER_REQUEST"}'));
SELECT sm(ut('st1', '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}'));
-- no such table
SELECT ut('st_nosuch', '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}}');
-- nothing changed by the failed requests: one enabled stream
SELECT view_type, disabled_at IS NULL AS enabled FROM dynindex.streams WHERE table_name = 'st1' ORDER BY stream_id;

-- ---------------------------------------------------------------- disable, enable again
CREATE TEMP TABLE labels AS SELECT dt('st1') ->> 'LatestStreamLabel' AS label;
SELECT pg_sleep(0.002);
-- disabled: no StreamSpecification; the latest label and ARN remain
SELECT sm(ut('st1', '{"StreamSpecification": {"StreamEnabled": false}}'));
SELECT sm(dt('st1')), dt('st1') ->> 'LatestStreamLabel' = (SELECT label FROM labels ORDER BY label DESC LIMIT 1) AS same_label;
SELECT count(*) FILTER (WHERE disabled_at IS NULL) AS enabled, count(*) AS streams
FROM dynindex.streams WHERE table_name = 'st1';
-- its shards are closed: an end sequence number at or after the start
SELECT bool_and(sh.end_seq >= sh.start_seq AND sh.closed_at IS NOT NULL) AS closed
FROM dynindex.stream_shards sh JOIN dynindex.streams s USING (stream_id)
WHERE s.table_name = 'st1' AND s.disabled_at IS NOT NULL;
-- disabling again
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": false}}');
-- enabling again: a new stream (new label, later than the old one); the old one stays, DISABLED
SELECT sm(ut('st1', '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}}'));
SELECT dt('st1') ->> 'LatestStreamLabel' > (SELECT max(label) FROM labels) AS newer_label;
INSERT INTO labels SELECT dt('st1') ->> 'LatestStreamLabel';
SELECT view_type, disabled_at IS NULL AS enabled, count(sh.*) AS shards, count(sh.end_seq) AS closed_shards
FROM dynindex.streams s JOIN dynindex.stream_shards sh USING (stream_id)
WHERE s.table_name = 'st1' GROUP BY s.stream_id, view_type, disabled_at ORDER BY s.stream_id;
-- the new stream's shards start after the old one's end
SELECT (SELECT min(start_seq) FROM dynindex.stream_shards sh JOIN dynindex.streams s USING (stream_id)
        WHERE s.table_name = 'st1' AND s.disabled_at IS NULL) >
       (SELECT max(end_seq) FROM dynindex.stream_shards sh JOIN dynindex.streams s USING (stream_id)
        WHERE s.table_name = 'st1' AND s.disabled_at IS NOT NULL) AS starts_after;
-- quick disable/enable cycles never repeat a label
SELECT ut('st1', '{"StreamSpecification": {"StreamEnabled": false}}') IS NOT NULL,
       ut('st1', '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}') IS NOT NULL,
       ut('st1', '{"StreamSpecification": {"StreamEnabled": false}}') IS NOT NULL,
       ut('st1', '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "OLD_IMAGE"}}') IS NOT NULL;
SELECT count(*) AS streams, count(DISTINCT stream_label) AS labels FROM dynindex.streams WHERE table_name = 'st1';
SELECT (dt('st1') -> 'StreamSpecification') AS spec;

-- ---------------------------------------------------------------- DeleteTable
SELECT dynindex.api('PutItem', '{"TableName": "st1", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}}');
SELECT dynindex.api('DeleteTable', '{"TableName": "st1"}') -> 'TableDescription' ->> 'TableStatus';
-- the stream is disabled (shards closed); its records stay
SELECT count(*) FILTER (WHERE disabled_at IS NULL) AS enabled, count(*) AS streams
FROM dynindex.streams WHERE table_name = 'st1';
SELECT count(*) AS open_shards FROM dynindex.stream_shards sh JOIN dynindex.streams s USING (stream_id)
WHERE s.table_name = 'st1' AND sh.end_seq IS NULL;
SELECT r.event_name, r.keys FROM dynindex.stream_records r JOIN dynindex.streams s USING (stream_id)
WHERE s.table_name = 'st1';
-- a new table of the same name: a new stream with a label of its own
SELECT sm(ct('st1', '{"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}'));
SELECT count(*) AS streams, count(DISTINCT stream_label) AS labels,
       count(*) FILTER (WHERE disabled_at IS NULL) AS enabled FROM dynindex.streams WHERE table_name = 'st1';
SELECT dynindex.api('DeleteTable', '{"TableName": "st1"}') -> 'TableDescription' ->> 'TableStatus';
SELECT dynindex.api('DeleteTable', '{"TableName": "st_off"}') -> 'TableDescription' ->> 'TableStatus';
DELETE FROM dynindex.stream_records;
DELETE FROM dynindex.stream_shards;
DELETE FROM dynindex.streams;

-- ---------------------------------------------------------------- upgrade from 0.1
-- 0.1 kept StreamSpecification in the table's options and wrote no stream: such a table
-- gets a stream on ALTER EXTENSION dynindex UPDATE; before it, the tables work without one.
\set regression_db :DBNAME
CREATE DATABASE streams_upgrade;
\c streams_upgrade
SET client_min_messages = warning;
CREATE EXTENSION dynindex VERSION '0.1';
SELECT dynindex.api('CreateTable', '{"TableName": "old_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}')
  -> 'TableDescription' ->> 'TableStatus';
SELECT dynindex.api('CreateTable', '{"TableName": "old_u", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}')
  -> 'TableDescription' ->> 'TableStatus';
UPDATE dynindex.tables SET options = options || '{"StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"}}'
  WHERE table_name = 'old_t';
UPDATE dynindex.tables SET options = options || '{"StreamSpecification": {"StreamEnabled": false}}'
  WHERE table_name = 'old_u';
SELECT dynindex.api('PutItem', '{"TableName": "old_t", "Item": {"pk": {"S": "before"}}}');
SELECT dynindex.api('DescribeTable', '{"TableName": "old_t"}') -> 'Table' ? 'LatestStreamArn' AS has_stream;
ALTER EXTENSION dynindex UPDATE TO '0.2';
SELECT table_name, view_type, shard_count, disabled_at IS NULL AS enabled FROM dynindex.streams;
SELECT count(*) AS shards, count(DISTINCT start_seq) AS starts FROM dynindex.stream_shards;
SELECT table_name, options ? 'StreamSpecification' AS in_options FROM dynindex.tables ORDER BY 1;
SELECT dynindex.api('DescribeTable', '{"TableName": "old_t"}') -> 'Table' -> 'StreamSpecification' AS spec,
       dynindex.api('DescribeTable', '{"TableName": "old_u"}') -> 'Table' ? 'LatestStreamArn' AS u_has_stream;
SELECT dynindex.api('PutItem', '{"TableName": "old_t", "Item": {"pk": {"S": "after"}}}');
SELECT event_name, keys, new_image FROM dynindex.stream_records;
\c :regression_db
DROP DATABASE streams_upgrade;
