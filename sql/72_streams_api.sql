-- The DynamoDB Streams API (ListStreams, DescribeStream, GetShardIterator,
-- GetRecords), shard rotation and retention (dynindex.maintain_streams) and
-- the SQL consumer dynindex.stream_changes.  Streams, shards and records are
-- set up here as rows of the catalog (as src/streams/ writes them), so every
-- shape (closed shards, lineage, trimmed ranges, large records) is exact;
-- 73_streams_capture.sql reads records written by real writes.
\set VERBOSITY terse
SET dynindex.region = 'us-east-1';
SET dynindex.account_id = '123456789012';
SELECT dynindex.api('CreateTable', '{"TableName": "sa_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}')
  -> 'TableDescription' -> 'TableStatus';
SELECT dynindex.api('CreateTable', '{"TableName": "sa_u", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}') -> 'TableDescription' -> 'TableStatus';

-- Sequence numbers here are base + k: the output shows them as S<k>.
SELECT nextval('dynindex.stream_seq') AS base \gset
SELECT setval('dynindex.stream_seq', :base + 100000) - :base AS advanced;
CREATE TABLE sa_names (real text PRIMARY KEY, name text);
-- text of a response with shard ids, sequence numbers and iterators replaced by stable names
CREATE FUNCTION sa_clean(t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE m text[]; n record;
BEGIN
  t := regexp_replace(t, '"(Next)?ShardIterator": "[^"]*"', '"\1ShardIterator": "<iterator>"', 'g');
  t := regexp_replace(t, '"eventID": "[0-9a-f]{32}"', '"eventID": "<32 hex digits>"', 'g');
  FOR n IN SELECT * FROM sa_names LOOP t := replace(t, n.real, n.name); END LOOP;
  FOR m IN SELECT regexp_matches(t, '\m(\d{21})\M', 'g') LOOP
    t := replace(t, m[1], 'S' || (m[1]::numeric - current_setting('sa.base')::numeric)::text);
  END LOOP;
  RETURN t;
END $$;
SELECT set_config('sa.base', :'base', false) IS NOT NULL;
-- call an operation: the cleaned response, or the error
CREATE FUNCTION sa(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN sa_clean(dynindex.api(op, req)::text);
EXCEPTION WHEN OTHERS THEN
  RETURN sa_clean(SQLSTATE || ' ' || SQLERRM);
END $$;
-- a DescribeStream response with its shards in name order (shard ids made
-- from stream ids sort differently from run to run)
CREATE FUNCTION sa_sorted(t text) RETURNS text LANGUAGE sql AS $$
  SELECT jsonb_set(t::jsonb, '{StreamDescription,Shards}',
    (SELECT coalesce(jsonb_agg(e ORDER BY e ->> 'ShardId'), '[]') FROM jsonb_array_elements(t::jsonb #> '{StreamDescription,Shards}') e))::text $$;
-- the raw response (for iterators)
CREATE FUNCTION sa_raw(op text, req jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT dynindex.api(op, req) $$;

-- Streams: sa_t's first stream (disabled, two buckets, bucket 0 rotated once),
-- its second (enabled), sa_u's (enabled, KEYS_ONLY).
INSERT INTO dynindex.streams (table_name, table_num, stream_label, view_type, shard_count, created_at, disabled_at)
SELECT 'sa_t', num, '2026-11-20T08:00:00.000', 'NEW_AND_OLD_IMAGES', 2, '2026-11-20 08:00:00+00', now() - interval '1 hour'
FROM dynindex.tables WHERE table_name = 'sa_t';
INSERT INTO dynindex.streams (table_name, table_num, stream_label, view_type, shard_count, created_at)
SELECT 'sa_t', num, '2026-11-21T08:00:00.123', 'NEW_AND_OLD_IMAGES', 2, '2026-11-21 08:00:00.123+00'
FROM dynindex.tables WHERE table_name = 'sa_t';
INSERT INTO dynindex.streams (table_name, table_num, stream_label, view_type, shard_count, created_at)
SELECT 'sa_u', num, '2026-11-21T09:00:00.000', 'KEYS_ONLY', 1, '2026-11-21 09:00:00+00'
FROM dynindex.tables WHERE table_name = 'sa_u';
CREATE VIEW sa_s AS SELECT stream_id, table_name, stream_label FROM dynindex.streams
  WHERE table_name IN ('sa_t', 'sa_u');
-- the first stream: bucket 0 = [1, 10] then [11, 20]; bucket 1 = [1, 20]; all closed
INSERT INTO dynindex.stream_shards (stream_id, shard_id, bucket, parent_shard_id, start_seq, end_seq, created_at, closed_at)
SELECT stream_id, dynindex_shard, bucket, parent, :base + s, :base + e, '2026-11-20 08:00:00+00', now() - interval '1 hour'
FROM sa_s, LATERAL (VALUES (0, 1, 10, 'old-b0-g0', NULL), (0, 11, 20, 'old-b0-g1', 'old-b0-g0'), (1, 1, 20, 'old-b1-g0', NULL))
  AS v(bucket, s, e, dynindex_shard, parent)
WHERE stream_label = '2026-11-20T08:00:00.000';
-- real shard ids for them (as src/streams/ names shards)
UPDATE dynindex.stream_shards h SET shard_id = 'shardId-' || lpad(h.start_seq::text, 20, '0') || '-' || right(md5(h.shard_id), 8),
  parent_shard_id = CASE WHEN h.parent_shard_id IS NULL THEN NULL
    ELSE (SELECT 'shardId-' || lpad(p.start_seq::text, 20, '0') || '-' || right(md5(p.shard_id), 8)
          FROM dynindex.stream_shards p WHERE p.stream_id = h.stream_id AND p.shard_id = h.parent_shard_id) END
FROM sa_s WHERE h.stream_id = sa_s.stream_id;
SELECT stream_id AS s1 FROM sa_s WHERE stream_label = '2026-11-20T08:00:00.000' \gset
SELECT stream_id AS s2 FROM sa_s WHERE stream_label = '2026-11-21T08:00:00.123' \gset
SELECT stream_id AS s3 FROM sa_s WHERE table_name = 'sa_u' \gset
-- the second stream: open shards from 30 in both buckets; sa_u's: one open shard from 30
INSERT INTO dynindex.stream_shards (stream_id, shard_id, bucket, start_seq, created_at)
SELECT stream_id, 'shardId-' || lpad((:base + 30)::text, 20, '0') || '-' || right(md5(table_name || '/' || b), 8),
  b, :base + 30, now()
FROM sa_s, generate_series(0, 1) b WHERE stream_id IN (:s2, :s3) AND (stream_id = :s2 OR b = 0);
INSERT INTO sa_names SELECT shard_id,
  CASE stream_id WHEN :s1 THEN 'old' WHEN :s2 THEN 'new' ELSE 'u' END || '-b' || bucket || '-g' ||
  (rank() OVER (PARTITION BY stream_id, bucket ORDER BY start_seq) - 1)
FROM dynindex.stream_shards WHERE stream_id IN (:s1, :s2, :s3);
SELECT n.name, parent.name AS parent, start_seq - :base AS start, end_seq - :base AS "end"
FROM dynindex.stream_shards h JOIN sa_names n ON n.real = h.shard_id
LEFT JOIN sa_names parent ON parent.real = h.parent_shard_id ORDER BY 1;

-- records: key k<i> in bucket i % 2 of the first stream (seq 1..20); in the
-- second stream seq 30..39 (bucket 0: INSERT k0, MODIFY k0, REMOVE k0, ...)
INSERT INTO dynindex.stream_records (stream_id, bucket, seq, created_at, event_name, keys, new_image, old_image, size_bytes)
SELECT :s1, i % 2, :base + i, '2026-11-20 08:30:00+00', 'INSERT', jsonb_build_object('pk', jsonb_build_object('S', 'k' || i), 'sk', '{"N": "1"}'::jsonb),
  jsonb_build_object('pk', jsonb_build_object('S', 'k' || i), 'sk', '{"N": "1"}'::jsonb, 'v', jsonb_build_object('N', i::text)), NULL, 20
FROM generate_series(1, 20) i;
INSERT INTO dynindex.stream_records (stream_id, bucket, seq, created_at, event_name, keys, new_image, old_image, size_bytes, user_identity)
SELECT :s2, i % 2, :base + 30 + i, '2026-11-21 08:30:00+00',
  (ARRAY['INSERT', 'MODIFY', 'REMOVE'])[i / 2 % 3 + 1],
  jsonb_build_object('pk', jsonb_build_object('S', 'b' || (i % 2)), 'sk', '{"N": "1"}'::jsonb),
  CASE WHEN i / 2 % 3 = 2 THEN NULL ELSE jsonb_build_object('pk', jsonb_build_object('S', 'b' || (i % 2)), 'sk', '{"N": "1"}'::jsonb, 'v', jsonb_build_object('N', i::text)) END,
  CASE WHEN i / 2 % 3 = 0 THEN NULL ELSE jsonb_build_object('pk', jsonb_build_object('S', 'b' || (i % 2)), 'sk', '{"N": "1"}'::jsonb) END,
  30 + i, CASE WHEN i = 9 THEN '{"type": "Service", "principalId": "dynamodb.amazonaws.com"}'::jsonb END
FROM generate_series(0, 9) i;
INSERT INTO dynindex.stream_records (stream_id, bucket, seq, created_at, event_name, keys, size_bytes)
VALUES (:s3, 0, :base + 45, '2026-11-21 09:30:00+00', 'INSERT', '{"id": {"S": "u1"}}', 8);

-- ---------------------------------------------------------------- ListStreams
-- (other tests' streams left out)
SELECT jsonb_path_query_array(sa('ListStreams', '{}')::jsonb, '$.Streams[*] ? (@.TableName starts with "sa_")');
SELECT sa('ListStreams', '{"TableName": "sa_t"}');
SELECT sa('ListStreams', '{"TableName": "sa_u", "Limit": 100}');
-- paging: Limit 1, then on from LastEvaluatedStreamArn
SELECT sa('ListStreams', '{"TableName": "sa_t", "Limit": 1}');
SELECT sa('ListStreams', '{"Limit": 1, "ExclusiveStartStreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000"}');
SELECT sa('ListStreams', '{"Limit": 2, "ExclusiveStartStreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-21T08:00:00.123"}');
SELECT sa('ListStreams', '{"TableName": "sa_t", "ExclusiveStartStreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-21T08:00:00.123"}');
-- a table without streams: none; an unknown table
SELECT dynindex.api('CreateTable', '{"TableName": "sa_none", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}') -> 'TableDescription' -> 'TableStatus';
SELECT sa('ListStreams', '{"TableName": "sa_none"}');
SELECT sa('ListStreams', '{"TableName": "sa_nope"}');
-- validation
SELECT sa('ListStreams', '{"Limit": 0}');
SELECT sa('ListStreams', '{"Limit": 101}');
SELECT sa('ListStreams', '{"TableName": "x", "Limit": 0}');
SELECT sa('ListStreams', '{"TableName": "a b c"}');
SELECT sa('ListStreams', '{"ExclusiveStartStreamArn": "short"}');
SELECT sa('ListStreams', '{"ExclusiveStartStreamArn": "kossaapaaasdafsdaasdasdasdasasdasfadfadfasdasdas"}');
SELECT sa('ListStreams', '{"Limit": "1"}');
SELECT sa('ListStreams', '[]');

-- ---------------------------------------------------------------- DescribeStream
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000"}');
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-21T08:00:00.123"}');
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_u/stream/2026-11-21T09:00:00.000"}');
-- paging the shards: Limit, LastEvaluatedShardId, ExclusiveStartShardId
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "Limit": 2}');
SELECT sa('DescribeStream', jsonb_build_object('StreamArn', 'arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000',
  'Limit', 2, 'ExclusiveStartShardId', (SELECT real FROM sa_names WHERE name = 'old-b1-g0')));
SELECT sa('DescribeStream', jsonb_build_object('StreamArn', 'arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000',
  'ExclusiveStartShardId', (SELECT real FROM sa_names WHERE name = 'old-b0-g1')));
-- a shard id after all of them: no shards
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "ExclusiveStartShardId": "zzzzzzzzzzzzzzzzzzzzzzzzsfasdgagadfadfgagkjsdfsfsdjfjks"}');
-- an open shard left in a disabled stream: DISABLING until it closes
UPDATE dynindex.stream_shards SET end_seq = NULL WHERE shard_id = (SELECT real FROM sa_names WHERE name = 'old-b1-g0');
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "Limit": 1}')::jsonb #>> '{StreamDescription,StreamStatus}';
UPDATE dynindex.stream_shards SET end_seq = :base + 20 WHERE shard_id = (SELECT real FROM sa_names WHERE name = 'old-b1-g0');
-- errors
SELECT sa('DescribeStream', '{}');
SELECT sa('DescribeStream', '{"StreamArn": "fake-stream"}');
SELECT sa('DescribeStream', '{"StreamArn": "sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf"}');
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-22T00:00:00.000"}');
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "Limit": 0, "ExclusiveStartShardId": "short"}');
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "Limit": 101}');
SELECT sa('DescribeStream', jsonb_build_object('StreamArn', repeat('a', 1025)));

-- ---------------------------------------------------------------- GetShardIterator
-- it(stream label, shard name, type[, seq k]): an iterator
CREATE FUNCTION it(label text, shard text, typ text, k int DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
  SELECT sa_raw('GetShardIterator', jsonb_strip_nulls(jsonb_build_object(
    'StreamArn', 'arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/' || label,
    'ShardId', (SELECT real FROM sa_names WHERE name = shard), 'ShardIteratorType', typ,
    'SequenceNumber', CASE WHEN k IS NOT NULL THEN lpad((current_setting('sa.base')::bigint + k)::text, 21, '0') END))) ->> 'ShardIterator' $$;
-- gr(iterator[, limit]): GetRecords, cleaned
CREATE FUNCTION gr(iter text, lim int DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
  SELECT sa('GetRecords', jsonb_strip_nulls(jsonb_build_object('ShardIterator', iter, 'Limit', lim))) $$;
-- keys and event names of a page, and whether it has a NextShardIterator
CREATE FUNCTION grk(iter text, lim int DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN r.j ? 'Records' THEN
    (SELECT coalesce(string_agg((e -> 'dynamodb' -> 'Keys' -> 'pk' ->> 'S') || ':' || (e ->> 'eventName') || ':' ||
       (e -> 'dynamodb' ->> 'SequenceNumber'), ' '), '(none)') FROM jsonb_array_elements(r.j -> 'Records') e)
    || CASE WHEN r.j ? 'NextShardIterator' THEN ' +next' ELSE ' (end of shard)' END
    ELSE r.j::text END
  FROM (SELECT sa('GetRecords', jsonb_strip_nulls(jsonb_build_object('ShardIterator', iter, 'Limit', lim)))::jsonb AS j) r $$;
-- iterators of every type
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b0-g0', 'TRIM_HORIZON'));
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b0-g0', 'LATEST'));
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b0-g0', 'AT_SEQUENCE_NUMBER', 4));
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b0-g0', 'AFTER_SEQUENCE_NUMBER', 4));
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b0-g0', 'AT_SEQUENCE_NUMBER', 10));
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b0-g0', 'AFTER_SEQUENCE_NUMBER', 10));
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b0-g1', 'TRIM_HORIZON'));
SELECT grk(it('2026-11-20T08:00:00.000', 'old-b1-g0', 'TRIM_HORIZON'), 3);
-- an open shard: LATEST is after the last record; TRIM_HORIZON reads them all, then goes on
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g0', 'LATEST'));
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g0', 'TRIM_HORIZON'));
-- every record field, NEW_AND_OLD_IMAGES (INSERT, MODIFY, REMOVE, a TTL deletion)
SELECT gr(it('2026-11-21T08:00:00.123', 'new-b1-g0', 'TRIM_HORIZON'));
-- KEYS_ONLY
SELECT sa('GetRecords', jsonb_build_object('ShardIterator', sa_raw('GetShardIterator', jsonb_build_object(
  'StreamArn', 'arn:aws:dynamodb:us-east-1:123456789012:table/sa_u/stream/2026-11-21T09:00:00.000',
  'ShardId', (SELECT real FROM sa_names WHERE name = 'u-b0-g0'), 'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator'));
-- the view type decides the images returned (a stream of NEW_IMAGE over records holding both)
UPDATE dynindex.streams SET view_type = 'NEW_IMAGE' WHERE stream_id = :s2;
SELECT gr(it('2026-11-21T08:00:00.123', 'new-b1-g0', 'AT_SEQUENCE_NUMBER', 33), 1);
UPDATE dynindex.streams SET view_type = 'OLD_IMAGE' WHERE stream_id = :s2;
SELECT gr(it('2026-11-21T08:00:00.123', 'new-b1-g0', 'AT_SEQUENCE_NUMBER', 33), 1);
UPDATE dynindex.streams SET view_type = 'NEW_AND_OLD_IMAGES' WHERE stream_id = :s2;
-- following NextShardIterator through a shard, Limit 2, to its end
DO $$
DECLARE i text := it('2026-11-20T08:00:00.000', 'old-b1-g0', 'TRIM_HORIZON'); r jsonb; n int := 0;
BEGIN
  LOOP
    r := dynindex.api('GetRecords', jsonb_build_object('ShardIterator', i, 'Limit', 2));
    n := n + 1;
    RAISE NOTICE 'page %: %', n, (SELECT string_agg(e -> 'dynamodb' -> 'Keys' -> 'pk' ->> 'S', ' ') FROM jsonb_array_elements(r -> 'Records') e);
    EXIT WHEN NOT r ? 'NextShardIterator';
    i := r ->> 'NextShardIterator';
  END LOOP;
END $$;
-- errors
SELECT sa('GetShardIterator', '{}');
SELECT sa('GetShardIterator', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "ShardId": "short", "ShardIteratorType": "bulle", "SequenceNumber": "1"}');
SELECT sa('GetShardIterator', '{"StreamArn": "sdfadsfsdfsdgdfsgsfdabadfbabdadsfsdfsdfsdfsdfsdfsdfdfdssdffbdfdf", "ShardId": "shardId-00000000000000000001-00000000", "ShardIteratorType": "LATEST"}');
SELECT sa('GetShardIterator', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "ShardId": "semprinidfaasdasfsdvacsdcfsdsvsdvsdvsdvsdvsdv", "ShardIteratorType": "LATEST"}');
SELECT sa('GetShardIterator', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-22T00:00:00.000", "ShardId": "semprinidfaasdasfsdvacsdcfsdsvsdvsdvsdvsdvsdv", "ShardIteratorType": "LATEST"}');
SELECT sa('GetShardIterator', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "ShardId": "semprinidfaasdasfsdvacsdcfsdsvsdvsdvsdvsdvsdv", "ShardIteratorType": "AT_SEQUENCE_NUMBER"}');
SELECT sa('GetShardIterator', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "ShardId": "semprinidfaasdasfsdvacsdcfsdsvsdvsdvsdvsdvsdv", "ShardIteratorType": "TRIM_HORIZON", "SequenceNumber": "000000000000000000001"}');
SELECT sa('GetShardIterator', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000", "ShardId": "semprinidfaasdasfsdvacsdcfsdsvsdvsdvsdvsdvsdv", "ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": "sdfsafglldfngjdafnasdflgnaldklkafdsgklnasdlv"}');
SELECT sa('GetShardIterator', jsonb_build_object('StreamArn', 'arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000',
  'ShardId', (SELECT real FROM sa_names WHERE name = 'old-b0-g0'), 'ShardIteratorType', 'AT_SEQUENCE_NUMBER',
  'SequenceNumber', lpad((:base + 11)::text, 21, '0')));

-- ---------------------------------------------------------------- GetRecords errors
SELECT sa('GetRecords', '{}');
SELECT sa('GetRecords', '{"ShardIterator": "", "Limit": 0}');
SELECT sa('GetRecords', jsonb_build_object('ShardIterator', it('2026-11-20T08:00:00.000', 'old-b0-g0', 'TRIM_HORIZON'), 'Limit', 1001));
SELECT sa('GetRecords', '{"ShardIterator": "sdfsdfsgagaddafgagasgasgasdfasdfasdfasdfasdgasdasdgasdg", "Limit": 1000}');
-- an iterator altered in any byte is refused: another position, shard or stream cannot be forged
DO $$
DECLARE i text := it('2026-11-20T08:00:00.000', 'old-b0-g0', 'TRIM_HORIZON'); b text; p int; bad int := 0; j int;
BEGIN
  p := position('|1|' in i) + 3;
  FOR j IN p .. length(i) - 2 LOOP
    b := overlay(i placing CASE WHEN substr(i, j, 1) = 'A' THEN 'B' ELSE 'A' END from j for 1);
    BEGIN
      PERFORM dynindex.api('GetRecords', jsonb_build_object('ShardIterator', b));
    EXCEPTION WHEN SQLSTATE 'YD001' THEN
      bad := bad + 1;
    END;
  END LOOP;
  RAISE NOTICE 'altered iterators refused: %', bad = length(i) - 1 - p;
  -- the same payload under another stream's ARN
  b := replace(i, '2026-11-20T08:00:00.000', '2026-11-21T08:00:00.123');
  PERFORM dynindex.api('GetRecords', jsonb_build_object('ShardIterator', b));
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE '%', SQLERRM;
END $$;
-- expiry (dynindex.stream_iterator_lifetime, 15 minutes by default)
SET dynindex.stream_iterator_lifetime = 0;
SELECT it('2026-11-20T08:00:00.000', 'old-b0-g0', 'TRIM_HORIZON') AS expiring \gset
SELECT pg_sleep(0.01);
SELECT regexp_replace(gr(:'expiring'), 'time .* while right now it is .* which', 'time <t> while right now it is <t> which');
RESET dynindex.stream_iterator_lifetime;
SELECT gr(:'expiring', 1) LIKE '{"Records": [{%' AS valid_again;
-- 1 MB per call: records of 400,000 bytes, two per call (a third would pass 1 MB)
INSERT INTO dynindex.stream_records (stream_id, bucket, seq, created_at, event_name, keys, size_bytes)
SELECT :s3, 0, :base + 46 + i, now(), 'INSERT', jsonb_build_object('id', jsonb_build_object('S', 'big' || i)), 400000
FROM generate_series(0, 3) i;
CREATE FUNCTION itu(typ text, k int DEFAULT NULL) RETURNS text LANGUAGE sql AS $$
  SELECT sa_raw('GetShardIterator', jsonb_strip_nulls(jsonb_build_object(
    'StreamArn', 'arn:aws:dynamodb:us-east-1:123456789012:table/sa_u/stream/2026-11-21T09:00:00.000',
    'ShardId', (SELECT real FROM sa_names WHERE name = 'u-b0-g0'), 'ShardIteratorType', typ,
    'SequenceNumber', CASE WHEN k IS NOT NULL THEN lpad((current_setting('sa.base')::bigint + k)::text, 21, '0') END))) ->> 'ShardIterator' $$;
SELECT (SELECT string_agg(e -> 'dynamodb' -> 'Keys' -> 'id' ->> 'S', ' ') FROM jsonb_array_elements(r -> 'Records') e)
FROM (SELECT dynindex.api('GetRecords', jsonb_build_object('ShardIterator', itu('AFTER_SEQUENCE_NUMBER', 45))) r) x;
SELECT (SELECT string_agg(e -> 'dynamodb' -> 'Keys' -> 'id' ->> 'S', ' ') FROM jsonb_array_elements(r -> 'Records') e)
FROM (SELECT dynindex.api('GetRecords', jsonb_build_object('ShardIterator', itu('AFTER_SEQUENCE_NUMBER', 47))) r) x;

-- ---------------------------------------------------------------- the SQL consumer
-- all of sa_t's records (both streams), in sequence order, 7 at a time
SELECT sa_clean(sequence_number), event_name, keys ->> 'pk', stream_label FROM dynindex.stream_changes('sa_t', NULL, 7);
SELECT sa_clean(sequence_number), event_name, keys -> 'pk' ->> 'S' AS pk, new_image -> 'v' ->> 'N' AS v, old_image IS NOT NULL AS has_old,
  user_identity, stream_view_type
FROM dynindex.stream_changes('sa_t', lpad((:base + 18)::text, 21, '0'), 7);
-- a consumer job that keeps its position in a table (docs/streams.md)
CREATE TABLE sa_position (consumer text PRIMARY KEY, after text);
CREATE TABLE sa_seen (seq text, event text, pk text);
INSERT INTO sa_position VALUES ('audit', NULL);
CREATE FUNCTION sa_consume(batch int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; r record;
BEGIN
  FOR r IN SELECT * FROM dynindex.stream_changes('sa_t', (SELECT after FROM sa_position WHERE consumer = 'audit'), batch) LOOP
    INSERT INTO sa_seen VALUES (r.sequence_number, r.event_name, r.keys -> 'pk' ->> 'S');
    UPDATE sa_position SET after = r.sequence_number WHERE consumer = 'audit';
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;
SELECT sa_consume(8), sa_consume(8), sa_consume(8), sa_consume(8), sa_consume(8);
SELECT count(*), count(DISTINCT seq), min(seq::numeric) - :base AS first, max(seq::numeric) - :base AS last,
  bool_and(seq > lag) AS ordered FROM (SELECT seq, lag(seq, 1, '') OVER (ORDER BY ctid) FROM sa_seen) x;
-- errors
SELECT * FROM dynindex.stream_changes('sa_nope');
SELECT * FROM dynindex.stream_changes('sa_none');
SELECT * FROM dynindex.stream_changes('sa_t', 'x');
SELECT * FROM dynindex.stream_changes('sa_t', NULL, 0);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM dynindex.stream_changes('sa_t');
ROLLBACK;

-- ---------------------------------------------------------------- rotation and retention
-- shard lifetime 0: the open shards with settled records close at the horizon - 1, children start at the horizon
-- (a long retention meanwhile: nothing is trimmed yet)
SET dynindex.stream_shard_lifetime = 0;
SET dynindex.stream_retention = 10000000;
SELECT dynindex.maintain_streams() - 'ran' - 'removed_shards' - 'removed_streams' - 'trimmed_records';
RESET dynindex.stream_shard_lifetime;
INSERT INTO sa_names SELECT shard_id,
  CASE stream_id WHEN :s1 THEN 'old' WHEN :s2 THEN 'new' ELSE 'u' END || '-b' || bucket || '-g' ||
  (rank() OVER (PARTITION BY stream_id, bucket ORDER BY start_seq) - 1)
FROM dynindex.stream_shards WHERE stream_id IN (:s1, :s2, :s3) ON CONFLICT DO NOTHING;
-- (the horizon, past the last record, shows as S<h>)
SELECT regexp_replace(sa_sorted(sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-21T08:00:00.123"}')),
  '"S(?!30")\d+"', '"S<h>"', 'g');
SELECT c.name AS child, p.name AS parent, ch.start_seq = ph.end_seq + 1 AS adjacent, ph.end_seq >= :base + 49 AS after_records
FROM dynindex.stream_shards ch JOIN dynindex.stream_shards ph ON ph.stream_id = ch.stream_id AND ph.shard_id = ch.parent_shard_id
JOIN sa_names c ON c.real = ch.shard_id JOIN sa_names p ON p.real = ph.shard_id
WHERE ch.stream_id IN (:s2, :s3) ORDER BY 1;
-- the closed parent ends its lineage: no NextShardIterator once read; the child goes on
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g0', 'AT_SEQUENCE_NUMBER', 38));
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g1', 'TRIM_HORIZON'));
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g0', 'LATEST'));
-- a record written after the rotation goes to the child
SELECT nextval('dynindex.stream_seq') - :base AS k \gset
INSERT INTO dynindex.stream_records (stream_id, bucket, seq, created_at, event_name, keys, size_bytes)
VALUES (:s2, 0, :base + :k, now(), 'INSERT', '{"pk": {"S": "late"}, "sk": {"N": "1"}}', 5);
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g1', 'TRIM_HORIZON')) ~ '^late:INSERT:S[0-9]+ \+next$' AS in_child;
-- an iterator taken before the trim, used after it: TrimmedDataAccessException
SELECT it('2026-11-20T08:00:00.000', 'old-b0-g0', 'TRIM_HORIZON') AS before_trim \gset
SELECT count(*) AS records_before FROM dynindex.stream_records WHERE stream_id IN (:s1, :s2, :s3);
-- retention: records older than 1 day go (the first stream's and the second's)
RESET dynindex.stream_retention;
SELECT dynindex.maintain_streams() - 'ran' - 'opened_shards' - 'closed_shards' - 'removed_shards' - 'removed_streams';
SELECT count(*) AS records_after FROM dynindex.stream_records WHERE stream_id IN (:s1, :s2, :s3);
SELECT bucket, trimmed_seq - :base AS trimmed FROM dynindex.stream_trim WHERE stream_id = :s1 ORDER BY 1;
SELECT gr(:'before_trim');
SELECT sa('GetShardIterator', jsonb_build_object('StreamArn', 'arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000',
  'ShardId', (SELECT real FROM sa_names WHERE name = 'old-b0-g0'), 'ShardIteratorType', 'AT_SEQUENCE_NUMBER',
  'SequenceNumber', lpad((:base + 5)::text, 21, '0')));
SELECT * FROM dynindex.stream_changes('sa_t', lpad((:base + 5)::text, 21, '0'));
-- TRIM_HORIZON starts after the trim point: nothing left in the old shard
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g1', 'TRIM_HORIZON')) ~ '^late:INSERT:S[0-9]+ \+next$' AS child_kept;
SELECT grk(it('2026-11-21T08:00:00.123', 'new-b0-g0', 'TRIM_HORIZON'));
-- closed shards older than the retention with nothing left go, then the disabled stream with no shard
UPDATE dynindex.stream_shards SET closed_at = now() - interval '25 hours' WHERE stream_id = :s1;
UPDATE dynindex.streams SET disabled_at = now() - interval '25 hours' WHERE stream_id = :s1;
SELECT dynindex.maintain_streams() - 'ran' - 'opened_shards' - 'closed_shards' - 'trimmed_records';
SELECT sa('ListStreams', '{"TableName": "sa_t"}');
SELECT sa('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:123456789012:table/sa_t/stream/2026-11-20T08:00:00.000"}');
SELECT count(*) FROM dynindex.stream_trim WHERE stream_id = :s1;
-- a retention of 0 trims every settled record; the maintenance runs one at a time
SET dynindex.stream_retention = 0;
SELECT (dynindex.maintain_streams() ->> 'trimmed_records')::int > 0;
RESET dynindex.stream_retention;
SELECT count(*) FROM dynindex.stream_records WHERE stream_id IN (:s1, :s2, :s3);

-- cleanup
DELETE FROM dynindex.stream_shards WHERE stream_id IN (:s1, :s2, :s3);
DELETE FROM dynindex.stream_trim WHERE stream_id IN (:s1, :s2, :s3);
DELETE FROM dynindex.streams WHERE stream_id IN (:s1, :s2, :s3);
SELECT dynindex.api('DeleteTable', '{"TableName": "sa_t"}') -> 'TableDescription' -> 'TableStatus';
SELECT dynindex.api('DeleteTable', '{"TableName": "sa_u"}') -> 'TableDescription' -> 'TableStatus';
SELECT dynindex.api('DeleteTable', '{"TableName": "sa_none"}') -> 'TableDescription' -> 'TableStatus';
-- maintain_streams runs its statements without JIT (they are estimated above
-- jit_above_cost) and leaves the session's setting as it was
SET jit = on;
SELECT (dynindex.maintain_streams()) ? 'ran' AS ran;
SHOW jit;
RESET jit;
