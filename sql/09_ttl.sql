-- Time to Live: UpdateTimeToLive, DescribeTimeToLive, dynindex.expire_items.
\set VERBOSITY terse
SELECT dynindex.api('CreateTable', '{"TableName": "ttl_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
    {"AttributeName": "l", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "bylsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "l", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "bygsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}]}') -> 'TableDescription' -> 'TableStatus';
-- ut(spec) on ttl_t; dt(table)
CREATE FUNCTION ut(spec jsonb, tbl text DEFAULT 'ttl_t') RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('UpdateTimeToLive', jsonb_build_object('TableName', tbl, 'TimeToLiveSpecification', spec)) $$;
CREATE FUNCTION dt(tbl text DEFAULT 'ttl_t') RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('DescribeTimeToLive', jsonb_build_object('TableName', tbl)) $$;

-- ---------------------------------------------------------------- validation
-- a fresh table: DISABLED, no AttributeName
SELECT dt();
-- missing members
SELECT dynindex.api('UpdateTimeToLive', '{"TableName": "ttl_t"}');
SELECT dynindex.api('UpdateTimeToLive', '{}');
SELECT ut('{"Enabled": true}');
SELECT ut('{"AttributeName": "exp"}');
SELECT ut('{}');
-- AttributeName 1..255 characters
SELECT ut('{"Enabled": true, "AttributeName": ""}');
SELECT ut(jsonb_build_object('Enabled', true, 'AttributeName', repeat('a', 256)));
-- wrong JSON kinds
SELECT ut('{"Enabled": "dog", "AttributeName": "exp"}');
SELECT ut('{"Enabled": true, "AttributeName": 3}');
SELECT ut('"x"');
-- table names
SELECT ut('{"Enabled": true, "AttributeName": "exp"}', 'nosuch');
SELECT dt('nosuch');
SELECT ut('{"Enabled": true, "AttributeName": "exp"}', 'a');
SELECT dt('a');
SELECT dynindex.api('DescribeTimeToLive', '{}');
-- disabling when not enabled
SELECT ut('{"Enabled": false, "AttributeName": "exp"}');
-- enable: the specification is echoed; Describe reports ENABLED at once
SELECT ut('{"Enabled": true, "AttributeName": "exp"}');
SELECT dt();
SELECT table_name, attribute_name FROM dynindex.ttl;
-- enabling again (same or another attribute), disabling with another attribute
SELECT ut('{"Enabled": true, "AttributeName": "exp"}');
SELECT ut('{"Enabled": true, "AttributeName": "other"}');
SELECT ut('{"Enabled": false, "AttributeName": "other"}');
-- disable, then enable on another attribute, disable again
SELECT ut('{"Enabled": false, "AttributeName": "exp"}');
SELECT dt();
SELECT ut('{"Enabled": false, "AttributeName": "exp"}');
SELECT ut('{"Enabled": true, "AttributeName": "other"}');
SELECT dt();
SELECT ut('{"Enabled": false, "AttributeName": "other"}');
-- no TTL: expire_items does nothing
SELECT dynindex.expire_items('ttl_t');
SELECT dynindex.expire_items('nosuch');

-- ---------------------------------------------------------------- expiry
-- put(sk, exp-attribute) with l (LSI) and g (GSI) set
CREATE FUNCTION put(sk text, e jsonb) RETURNS void LANGUAGE sql AS $$
  SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'ttl_t', 'Item',
    jsonb_build_object('pk', '{"S": "p"}'::jsonb, 'sk', jsonb_build_object('S', sk),
      'l', jsonb_build_object('S', 'l-' || sk), 'g', jsonb_build_object('S', 'g-' || sk))
    || CASE WHEN e IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('exp', e) END)) $$;
CREATE FUNCTION num(secs_from_now bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('N', (extract(epoch FROM now())::bigint + secs_from_now)::text) $$;
SELECT put('past', num(-3600));
SELECT put('past_frac', jsonb_build_object('N', (extract(epoch FROM now())::bigint - 60)::text || '.5'));
SELECT put('past_sci', jsonb_build_object('N', ((extract(epoch FROM now())::bigint - 100) / 10)::text || 'E1'));
SELECT put('future', num(3600));
SELECT put('ancient', num(-6 * 366 * 86400));             -- more than five years ago: never expires
SELECT put('zero', '{"N": "0"}');
SELECT put('string', jsonb_build_object('S', (extract(epoch FROM now())::bigint - 3600)::text));
SELECT put('numset', jsonb_build_object('NS', jsonb_build_array((extract(epoch FROM now())::bigint - 3600)::text)));
SELECT put('list', jsonb_build_object('L', jsonb_build_array(num(-3600))));
SELECT put('missing', NULL);
SELECT put('updated', num(-3600));
SELECT ut('{"Enabled": true, "AttributeName": "exp"}') -> 'TimeToLiveSpecification';
SELECT dynindex.wait_for_indexes('ttl_t');
SELECT count(*) FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName": "ttl_t", "IndexName": "bygsi"}') -> 'Items');
-- the item "updated" gets a future expiry before the sweep
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', 'ttl_t',
  'Key', '{"pk": {"S": "p"}, "sk": {"S": "updated"}}'::jsonb,
  'UpdateExpression', 'SET #e = :e', 'ExpressionAttributeNames', '{"#e": "exp"}'::jsonb,
  'ExpressionAttributeValues', jsonb_build_object(':e', num(3600))));
-- max_items bounds a sweep
SELECT dynindex.expire_items('ttl_t', 1);
SELECT dynindex.expire_items('ttl_t');
SELECT dynindex.expire_items('ttl_t');
SELECT string_agg(i -> 'sk' ->> 'S', ' ' ORDER BY i -> 'sk' ->> 'S')
  FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName": "ttl_t"}') -> 'Items') i;
-- the LSI and GSI follow
SELECT string_agg(i -> 'sk' ->> 'S', ' ' ORDER BY i -> 'sk' ->> 'S')
  FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName": "ttl_t", "IndexName": "bylsi"}') -> 'Items') i;
SELECT dynindex.wait_for_indexes('ttl_t');
SELECT string_agg(i -> 'sk' ->> 'S', ' ' ORDER BY i -> 'sk' ->> 'S')
  FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName": "ttl_t", "IndexName": "bygsi"}') -> 'Items') i;
SELECT * FROM dynindex.verify_indexes('ttl_t') ORDER BY 1;
-- an item written with a past expiry inside the sweep's transaction is deleted too
BEGIN;
SELECT put('late', num(-1));
SELECT dynindex.expire_items('ttl_t');
ROLLBACK;

-- ---------------------------------------------------------------- DeleteTable removes the setting
SELECT dynindex.api('DeleteTable', '{"TableName": "ttl_t"}') -> 'TableDescription' -> 'TableStatus';
SELECT count(*) FROM dynindex.ttl;
SELECT dt();
SELECT dynindex.api('CreateTable', '{"TableName": "ttl_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') -> 'TableDescription' -> 'TableStatus';
SELECT dt();
SELECT dynindex.api('DeleteTable', '{"TableName": "ttl_t"}') -> 'TableDescription' -> 'TableStatus';
DROP FUNCTION ut(jsonb, text), dt(text), put(text, jsonb), num(bigint);
