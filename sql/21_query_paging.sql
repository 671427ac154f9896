-- Query paging: Limit, 1 MB pages, LastEvaluatedKey / ExclusiveStartKey, Select, capacity
\set VERBOSITY terse
CREATE EXTENSION IF NOT EXISTS dynindex;

CREATE OR REPLACE FUNCTION try_api(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN dynindex.api(op, req)::text;
EXCEPTION WHEN others THEN
    RETURN SQLERRM;
END $$;
-- the sort key of an item as text
CREATE OR REPLACE FUNCTION ck(i jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(i->'c'->>'N', i->'c'->>'S', i->'c'->>'B')
$$;
-- page through a Query or Scan: one row per page
CREATE OR REPLACE FUNCTION pages(op text, req jsonb, max_pages int DEFAULT 1000)
RETURNS TABLE(page int, count int, scanned int, lek text, keys text) LANGUAGE plpgsql AS $$
DECLARE r jsonb; n int := 0;
BEGIN
    LOOP
        n := n + 1;
        r := dynindex.api(op, req);
        page := n;
        count := (r->>'Count')::int;
        scanned := (r->>'ScannedCount')::int;
        lek := ck(r->'LastEvaluatedKey');
        keys := (SELECT string_agg(ck(i), ' ') FROM jsonb_array_elements(r->'Items') i);
        RETURN NEXT;
        EXIT WHEN r->'LastEvaluatedKey' IS NULL OR n >= max_pages;
        req := req || jsonb_build_object('ExclusiveStartKey', r->'LastEvaluatedKey');
    END LOOP;
END $$;
-- all items' sort keys read by paging, in order
CREATE OR REPLACE FUNCTION all_keys(op text, req jsonb) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE r jsonb; out text[] := '{}';
BEGIN
    LOOP
        r := dynindex.api(op, req);
        out := out || coalesce((SELECT array_agg(ck(i)) FROM jsonb_array_elements(r->'Items') i), '{}');
        EXIT WHEN r->'LastEvaluatedKey' IS NULL;
        req := req || jsonb_build_object('ExclusiveStartKey', r->'LastEvaluatedKey');
    END LOOP;
    RETURN out;
END $$;

SELECT dynindex.api('CreateTable', '{"TableName":"pg_n","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"pg_s","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"S"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"pg_b","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"B"}]}') IS NOT NULL AS created;

-- N: negatives, decimals, large and tiny magnitudes; neighbouring partitions
CREATE TABLE nvals AS
  SELECT DISTINCT ON (v::numeric) v FROM (
    SELECT ((i - 100) / 7.0)::numeric(20,3)::text AS v FROM generate_series(0, 200) i
    UNION ALL VALUES ('1E+100'), ('-1E+100'), ('1E-100'), ('-1E-100'), ('0'), ('123456789012345678901234567890'),
                     ('-0.000001'), ('0.000001'), ('99999999999999999999999999999999999999')) s;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'pg_n', 'Item',
    jsonb_build_object('p', jsonb_build_object('S', p), 'c', jsonb_build_object('N', v),
                       'f', jsonb_build_object('N', f::text)))))
  FROM (SELECT p, v, row_number() OVER (ORDER BY p, v::numeric) f
          FROM nvals, (VALUES ('a'), ('a0'), ('b')) ps(p)) s;
-- every item exactly once, in numeric order, forward and backward, for several page sizes
SELECT lim,
       all_keys('Query', jsonb_build_object('TableName', 'pg_n', 'KeyConditionExpression', 'p = :p',
                'ExpressionAttributeValues', '{":p":{"S":"a"}}'::jsonb, 'Limit', lim))::numeric[]
         = (SELECT array_agg(v::numeric ORDER BY v::numeric) FROM nvals) AS forward_ok,
       all_keys('Query', jsonb_build_object('TableName', 'pg_n', 'KeyConditionExpression', 'p = :p',
                'ExpressionAttributeValues', '{":p":{"S":"a"}}'::jsonb, 'Limit', lim, 'ScanIndexForward', false))::numeric[]
         = (SELECT array_agg(v::numeric ORDER BY v::numeric DESC) FROM nvals) AS backward_ok
  FROM (VALUES (1), (7), (100), (1000)) l(lim);
-- a range, paged backward
SELECT * FROM pages('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p AND c BETWEEN :lo AND :hi",
  "ExpressionAttributeValues":{":p":{"S":"a"},":lo":{"N":"-1"},":hi":{"N":"1"}},"Limit":6,"ScanIndexForward":false}');
-- Limit that ends exactly at the last item still returns LastEvaluatedKey; the next page is empty
SELECT * FROM pages('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p AND c < :c",
  "ExpressionAttributeValues":{":p":{"S":"a"},":c":{"N":"-13"}},"Limit":3}');

-- S: UTF-8 byte order; B: unsigned byte order
CREATE TABLE svals AS SELECT v FROM (VALUES ('a'), ('A'), ('ab'), ('a b'), ('é'), ('z'), ('~'), ('€'), ('😀'), ('ａ'), ('0'), ('a0'), ('ÿ')) s(v);
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'pg_s', 'Item',
    jsonb_build_object('p', '{"S":"k"}'::jsonb, 'c', jsonb_build_object('S', v))))) FROM svals;
SELECT array_to_string(all_keys('Query', '{"TableName":"pg_s","KeyConditionExpression":"p = :p",
  "ExpressionAttributeValues":{":p":{"S":"k"}},"Limit":4}'), ' ') AS forward;
SELECT all_keys('Query', '{"TableName":"pg_s","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"k"}},"Limit":4}')
     = (SELECT array_agg(v ORDER BY convert_to(v, 'UTF8')) FROM svals) AS utf8_order,
       all_keys('Query', '{"TableName":"pg_s","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"k"}},"Limit":5,"ScanIndexForward":false}')
     = (SELECT array_agg(v ORDER BY convert_to(v, 'UTF8') DESC) FROM svals) AS utf8_order_backward;
CREATE TABLE bvals AS SELECT DISTINCT v FROM (SELECT decode(lpad(to_hex(i * 37 % 256), 2, '0') || CASE WHEN i % 3 = 0 THEN 'ff' ELSE '' END, 'hex') v
  FROM generate_series(1, 60) i) s;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'pg_b', 'Item',
    jsonb_build_object('p', '{"S":"k"}'::jsonb, 'c', jsonb_build_object('B', encode(v, 'base64')))))) FROM bvals;
SELECT all_keys('Query', '{"TableName":"pg_b","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"k"}},"Limit":7}')
     = (SELECT array_agg(encode(v, 'base64') ORDER BY v) FROM bvals) AS byte_order,
       all_keys('Query', '{"TableName":"pg_b","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"k"}},"Limit":7,"ScanIndexForward":false}')
     = (SELECT array_agg(encode(v, 'base64') ORDER BY v DESC) FROM bvals) AS byte_order_backward;

-- Limit counts items read before the filter: pages may be empty and still carry LastEvaluatedKey
SELECT * FROM pages('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p AND c >= :c",
  "FilterExpression":"f = :f","ExpressionAttributeValues":{":p":{"S":"a"},":c":{"N":"13"},":f":{"N":"208"}},"Limit":2}');
SELECT * FROM pages('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p AND c > :c",
  "FilterExpression":"f > :f","ExpressionAttributeValues":{":p":{"S":"a"},":c":{"N":"12"},":f":{"N":"0"}},"Select":"COUNT","Limit":4}');

-- Select and projections
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p AND c = :c",
  "ExpressionAttributeValues":{":p":{"S":"a"},":c":{"N":"0"}},"ProjectionExpression":"c"}');
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p AND c = :c",
  "ExpressionAttributeValues":{":p":{"S":"a"},":c":{"N":"0"}},"Select":"SPECIFIC_ATTRIBUTES","ProjectionExpression":"#f","ExpressionAttributeNames":{"#f":"f"}}');
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}},
  "AttributesToGet":["c"],"Limit":2}');
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Select":"COUNT"}');
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},
  "Select":"ALL_ATTRIBUTES","Limit":1}');
SELECT try_api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Select":"SPECIFIC_ATTRIBUTES"}');
SELECT try_api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Select":"ALL_ATTRIBUTES","ProjectionExpression":"c"}');
SELECT try_api('Query', '{"TableName":"pg_n","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}},"Select":"ALL_ATTRIBUTES","AttributesToGet":["c"]}');
SELECT try_api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Select":"COUNT","ProjectionExpression":"c"}');
SELECT try_api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Select":"ALL_PROJECTED_ATTRIBUTES"}');
SELECT try_api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Select":"NOPE"}');
SELECT try_api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},"Limit":0}');

-- ConsumedCapacity: item sizes summed, then rounded up to 4 KB; eventually consistent halves
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},
  "Select":"COUNT","ReturnConsumedCapacity":"TOTAL"}');
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},
  "Select":"COUNT","ReturnConsumedCapacity":"INDEXES","ConsistentRead":true}');
SELECT dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"zzz"}},
  "ReturnConsumedCapacity":"TOTAL"}');

-- 1 MB pages: 30 items of 100 KB stop a page after the item that reaches 1 MB
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'pg_n', 'Item',
    jsonb_build_object('p', '{"S":"big"}'::jsonb, 'c', jsonb_build_object('N', i::text),
                       'd', jsonb_build_object('S', repeat('x', 100000))))))
  FROM generate_series(1, 30) i;
SELECT page, count, scanned, lek FROM pages('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p",
  "ExpressionAttributeValues":{":p":{"S":"big"}},"ProjectionExpression":"c"}');
SELECT page, count, scanned, lek FROM pages('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p",
  "ExpressionAttributeValues":{":p":{"S":"big"}},"Select":"COUNT","ScanIndexForward":false}');
SELECT (dynindex.api('Query', '{"TableName":"pg_n","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"big"}},
  "Select":"COUNT","ReturnConsumedCapacity":"TOTAL"}'))->'ConsumedCapacity';

-- ExclusiveStartKey
CREATE OR REPLACE FUNCTION esk(k jsonb, kce text DEFAULT 'p = :p', vals jsonb DEFAULT '{":p":{"S":"a"}}') RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text := try_api('Query', jsonb_build_object('TableName', 'pg_n', 'KeyConditionExpression', kce,
    'ExpressionAttributeValues', vals, 'ExclusiveStartKey', k, 'Limit', 3));
BEGIN
    IF r NOT LIKE '{%' THEN RETURN r; END IF;
    RETURN (SELECT coalesce(string_agg(ck(i), ' '), '(none)') FROM jsonb_array_elements(r::jsonb->'Items') i);
END $$;
SELECT esk('{"p":{"S":"a"},"c":{"N":"0"}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"0.5"}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"-1E+100"}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"99999999999999999999999999999999999999"}}');
SELECT esk('{"p":{"S":"a"}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"1"},"x":{"N":"1"}}');
SELECT esk('{"p":{"S":"a"},"x":{"N":"1"}}');
SELECT esk('{"p":{"S":"a"},"c":{"S":"1"}}');
SELECT esk('{"p":{"N":"1"},"c":{"N":"1"}}');
SELECT esk('{"p":{"S":""},"c":{"N":"1"}}');
SELECT esk('{"p":{"S":"b"},"c":{"N":"1"}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"5"}}', 'p = :p AND c < :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"-5"}}', 'p = :p AND c < :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT esk('{"p":{"S":"b"},"c":{"N":"5"}}', 'p = :p AND c < :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"abc"}}');
SELECT esk('{"p":{"S":"a"},"c":{"S":"x","N":"1"}}');
SELECT esk('{"p":{"S":"a"},"c":{"NS":["1","1"]}}');
SELECT esk('{"p":{"S":"a"},"c":{"N":"1E+200"}}');
