-- Item size arithmetic (DynamoDB's), seen through DescribeTable's
-- TableSizeBytes and through ReturnConsumedCapacity; item and key limits.
SELECT dynindex.api('CreateTable', '{"TableName": "sizes", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;

-- attrs_size(attrs): the size DynamoDB charges for attributes (name + value),
-- measured as the growth of TableSizeBytes when they are stored beside
-- pk = "k" (3 bytes: the name "pk" and the value "k")
CREATE OR REPLACE FUNCTION attrs_size(attrs jsonb) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  total bigint;
BEGIN
  PERFORM dynindex.api('PutItem', jsonb_build_object('TableName', 'sizes', 'Item', '{"pk": {"S": "k"}}'::jsonb || attrs));
  total := (dynindex.api('DescribeTable', '{"TableName": "sizes"}')->'Table'->>'TableSizeBytes')::bigint;
  PERFORM dynindex.api('DeleteItem', '{"TableName": "sizes", "Key": {"pk": {"S": "k"}}}');
  RETURN total - 3;
END $$;

SELECT attrs_size('{}') AS key_only;

-- numbers: 1 byte + 1 per pair of significant digits (aligned on the decimal
-- point) + 1 if negative; attribute name "n" adds 1
SELECT v AS number, attrs_size(jsonb_build_object('n', jsonb_build_object('N', v))) - 1 AS size
FROM unnest(ARRAY['0', '1', '12', '123', '1.5', '123456', '-42', '1E125', '0.01', '0.1', '10', '100',
                  '12345678901234567890123456789012345678', '-1E-130', '1.01', '99.99']) v;

-- strings: UTF-8 bytes; binaries: raw bytes; BOOL and NULL: 1
SELECT label, attrs_size(attrs) AS size FROM (VALUES
  ('S "abc" (name a)', '{"a": {"S": "abc"}}'::jsonb),
  ('S "" (name a)', '{"a": {"S": ""}}'),
  ('S "é☃𝄞" = 2+3+4 bytes (name a)', '{"a": {"S": "é☃𝄞"}}'),
  ('name "ééé" = 6 bytes, S "x"', '{"ééé": {"S": "x"}}'),
  ('B 4 bytes (name a)', '{"a": {"B": "AAEC/w=="}}'),
  ('BOOL (name a)', '{"a": {"BOOL": true}}'),
  ('NULL (name a)', '{"a": {"NULL": true}}'),
  ('SS [a, bc] (name a)', '{"a": {"SS": ["a", "bc"]}}'),
  ('NS [1, 123] (name a)', '{"a": {"NS": ["1", "123"]}}'),
  ('BS [2 bytes] (name a)', '{"a": {"BS": ["AAE="]}}'),
  ('L [] (name a): 3', '{"a": {"L": []}}'),
  ('M {} (name a): 3', '{"a": {"M": {}}}'),
  ('L [S "ab", N 1]: 3 + (1+2) + (1+2)', '{"a": {"L": [{"S": "ab"}, {"N": "1"}]}}'),
  ('M {x: S "ab"}: 3 + 1 + 1 + 2', '{"a": {"M": {"x": {"S": "ab"}}}}'),
  ('M {x: M {yy: BOOL}}', '{"a": {"M": {"x": {"M": {"yy": {"BOOL": false}}}}}}'),
  ('two attributes', '{"a": {"S": "abc"}, "bb": {"N": "123"}}')
) v(label, attrs);

-- write capacity: one unit per started KB of the item
CREATE OR REPLACE FUNCTION put_wcu(pk text, filler int) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'sizes', 'ReturnConsumedCapacity', 'TOTAL',
           'Item', jsonb_build_object('pk', jsonb_build_object('S', pk), 's', jsonb_build_object('S', repeat('x', filler)))))
$$;
-- "pk" + "k1" + "s" = 5 bytes, so filler 1019 makes 1024 bytes
SELECT put_wcu('k1', 1019) AS item_1024_bytes;
SELECT put_wcu('k2', 1020) AS item_1025_bytes;
SELECT put_wcu('k3', 2043) AS item_2048_bytes;
SELECT put_wcu('k4', 0) AS item_5_bytes;
-- overwriting charges the larger of old and new
SELECT put_wcu('k3', 0) AS overwrite_2048_with_5;
SELECT dynindex.api('GetItem', '{"TableName": "sizes", "Key": {"pk": {"S": "k2"}}, "ReturnConsumedCapacity": "TOTAL",
                                 "ProjectionExpression": "pk"}') AS get_1025_eventually_consistent;
SELECT dynindex.api('DeleteItem', '{"TableName": "sizes", "Key": {"pk": {"S": "k2"}}, "ReturnConsumedCapacity": "TOTAL"}') AS delete_1025;
SELECT dynindex.api('DeleteItem', '{"TableName": "sizes", "Key": {"pk": {"S": "k2"}}, "ReturnConsumedCapacity": "TOTAL"}') AS delete_missing;

-- item size limit: 409,600 bytes are accepted, 409,601 are not
SELECT put_wcu('k5', 409595)->'ConsumedCapacity' AS item_409600_bytes;
SELECT put_wcu('k6', 409596);
SELECT (dynindex.api('DescribeTable', '{"TableName": "sizes"}')->'Table'->>'ItemCount') AS item_count;
-- attribute names count: "pk" + "k7" + a 60,000-byte name + 349,596 bytes = 409,600
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'sizes',
         'Item', jsonb_build_object('pk', '{"S": "k7"}'::jsonb, repeat('n', 60000), jsonb_build_object('S', repeat('x', 349596))))) AS names_count_409600;
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'sizes',
         'Item', jsonb_build_object('pk', '{"S": "k7"}'::jsonb, repeat('n', 60001), jsonb_build_object('S', repeat('x', 349596)))));

-- key size limits: partition key 2048 bytes, sort key 1024 bytes
SELECT dynindex.api('CreateTable', '{"TableName": "sizes2", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
  {"AttributeName": "sk", "KeyType": "RANGE"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
  {"AttributeName": "sk", "AttributeType": "B"}], "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'sizes2', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', repeat('p', 2048)), 'sk', jsonb_build_object('B', translate(encode(convert_to(repeat('s', 1024), 'UTF8'), 'base64'), E'\n', ''))))) AS max_keys;
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'sizes2', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', repeat('é', 1024) || 'p'), 'sk', '{"B": "AA=="}'::jsonb)));
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'sizes2', 'Item', jsonb_build_object(
         'pk', '{"S": "p"}'::jsonb, 'sk', jsonb_build_object('B', translate(encode(convert_to(repeat('s', 1025), 'UTF8'), 'base64'), E'\n', '')))));
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'sizes2', 'Key', jsonb_build_object(
         'pk', jsonb_build_object('S', repeat('p', 2049)), 'sk', '{"B": "AA=="}'::jsonb)));
SELECT dynindex.api('DeleteItem', jsonb_build_object('TableName', 'sizes2', 'Key', jsonb_build_object(
         'pk', '{"S": "p"}'::jsonb, 'sk', jsonb_build_object('B', translate(encode(convert_to(repeat('s', 1025), 'UTF8'), 'base64'), E'\n', '')))));

SELECT dynindex.api('DeleteTable', '{"TableName": "sizes"}') IS NOT NULL AS deleted;
SELECT dynindex.api('DeleteTable', '{"TableName": "sizes2"}') IS NOT NULL AS deleted;
DROP FUNCTION attrs_size(jsonb);
DROP FUNCTION put_wcu(text, int);

-- Keys at DynamoDB's limits (hash 2048 bytes, range 1024) that do not compress take
-- more than a PostgreSQL btree entry may hold (about 2700 bytes): a ValidationException,
-- not PostgreSQL's 'index row size ... exceeds btree version 4 maximum 2704' (found by
-- test/fuzz/api_fuzz.py); keys that compress are stored. An entry of a GSI whose keys are
-- too large leaves the item out of the index (as an invalid key does) instead of stopping
-- the GSI worker's queue.
CREATE FUNCTION hexkey(n int, seed text) RETURNS text LANGUAGE sql AS $$
    SELECT left(string_agg(md5(seed || i), '' ORDER BY i), n) FROM generate_series(1, n / 32 + 1) i
$$;
SELECT dynindex.api('CreateTable', '{"TableName": "bigkeys", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                           {"AttributeName": "l", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "LocalSecondaryIndexes": [{"IndexName": "byL", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
                             "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bigkeys', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', hexkey(2048, 'p')), 'sk', jsonb_build_object('S', hexkey(1024, 's')))));
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bigkeys', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', repeat('p', 2048)), 'sk', jsonb_build_object('S', repeat('s', 1024))))) AS compressible_keys;
-- (an LSI entry's key holds the partition key twice: 24_parallel_scan shows one of 3025 bytes that fits)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bigkeys', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', hexkey(1500, 'p')), 'sk', jsonb_build_object('S', hexkey(1024, 's')), 'l', jsonb_build_object('S', hexkey(1024, 'l')))));
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bigkeys', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', hexkey(1000, 'p')), 'sk', jsonb_build_object('S', 'b'), 'g', jsonb_build_object('S', hexkey(2048, 'g'))))) AS big_gsi_key;
SELECT dynindex.api('PutItem', '{"TableName": "bigkeys", "Item": {"pk": {"S": "small"}, "sk": {"S": "c"}, "g": {"S": "g1"}}}') AS small_gsi_key;
SELECT dynindex.wait_for_indexes('bigkeys');
SELECT jsonb_array_length(dynindex.api('Scan', '{"TableName": "bigkeys"}') -> 'Items') AS items,
       dynindex.api('Scan', '{"TableName": "bigkeys", "IndexName": "byG"}') -> 'Items' AS gsi_items;
SELECT sum(queued_changes) AS queued FROM dynindex.gsi_status WHERE table_name = 'bigkeys';
SELECT dynindex.api('DeleteTable', '{"TableName": "bigkeys"}') IS NOT NULL AS deleted;
DROP FUNCTION hexkey(int, text);
