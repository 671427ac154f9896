-- Query: KeyConditionExpression / KeyConditions rules and messages
\set VERBOSITY terse
CREATE EXTENSION IF NOT EXISTS dynindex;

-- run a request, returning the response or the error message
CREATE OR REPLACE FUNCTION try_api(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN dynindex.api(op, req)::text;
EXCEPTION WHEN others THEN
    RETURN SQLERRM;
END $$;
-- Query with a KeyConditionExpression on table t
CREATE OR REPLACE FUNCTION kq(t text, kce text, vals jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS text
LANGUAGE sql AS $$
    SELECT try_api('Query', jsonb_build_object('TableName', t, 'KeyConditionExpression', kce)
        || CASE WHEN vals IS NULL THEN '{}' ELSE jsonb_build_object('ExpressionAttributeValues', vals) END
        || extra)
$$;
-- the items' sort keys of a successful Query, or its error
CREATE OR REPLACE FUNCTION kqc(t text, kce text, vals jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE r text := kq(t, kce, vals, extra);
BEGIN
    IF r NOT LIKE '{%' THEN RETURN r; END IF;
    RETURN (SELECT coalesce(string_agg(coalesce(i->'c'->>'N', i->'c'->>'S', i->'c'->>'B', '-'), ' '), '(none)')
            FROM jsonb_array_elements(r::jsonb->'Items') i);
END $$;

SELECT dynindex.api('CreateTable', '{"TableName":"kc_sn","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"kc_ss","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"S"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"kc_sb","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"B"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"kc_h","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"}]}') IS NOT NULL AS created;

-- data: p = 'a' with c = -3 .. 8 (N), '000' .. '011' (S), bytes (B); another partition 'b'
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'kc_sn', 'Item',
    jsonb_build_object('p', jsonb_build_object('S', p), 'c', jsonb_build_object('N', c::text), 'a', '{"S":"x"}'::jsonb))))
  FROM (SELECT 'a' p, i - 3 c FROM generate_series(0, 11) i UNION ALL SELECT 'b', 1) s;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'kc_ss', 'Item',
    jsonb_build_object('p', jsonb_build_object('S', p), 'c', jsonb_build_object('S', c), 'a', '{"S":"x"}'::jsonb))))
  FROM (SELECT 'a' p, lpad(i::text, 3, '0') c FROM generate_series(0, 11) i UNION ALL SELECT 'b', '005') s;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'kc_sb', 'Item',
    jsonb_build_object('p', '{"S":"a"}'::jsonb, 'c', jsonb_build_object('B', encode(c, 'base64'))))))
  FROM (VALUES ('\x7e'::bytea), ('\x7f'), ('\x80'), ('\x8000'), ('\xff'), ('\x00')) s(c);
SELECT dynindex.api('PutItem', '{"TableName":"kc_h","Item":{"p":{"S":"a"},"v":{"S":"hello"}}}');

-- every operator on N, S, B sort keys
SELECT kqc('kc_sn', 'p = :p', '{":p":{"S":"a"}}');
SELECT kqc('kc_sn', 'p = :p AND c = :c', '{":p":{"S":"a"},":c":{"N":"3"}}');
SELECT kqc('kc_sn', 'p = :p AND c < :c', '{":p":{"S":"a"},":c":{"N":"0"}}');
SELECT kqc('kc_sn', 'p = :p AND c <= :c', '{":p":{"S":"a"},":c":{"N":"0"}}');
SELECT kqc('kc_sn', 'p = :p AND c > :c', '{":p":{"S":"a"},":c":{"N":"5"}}');
SELECT kqc('kc_sn', 'p = :p AND c >= :c', '{":p":{"S":"a"},":c":{"N":"5"}}');
SELECT kqc('kc_sn', 'p = :p AND c BETWEEN :lo AND :hi', '{":p":{"S":"a"},":lo":{"N":"-1.5"},":hi":{"N":"2"}}');
SELECT kqc('kc_sn', 'p = :p AND c > :c', '{":p":{"S":"a"},":c":{"N":"-2.5"}}');
SELECT kqc('kc_sn', 'p = :p AND c > :c', '{":p":{"S":"zz"},":c":{"N":"0"}}');
SELECT kqc('kc_ss', 'p = :p AND c < :c', '{":p":{"S":"a"},":c":{"S":"003"}}');
SELECT kqc('kc_ss', 'p = :p AND c <= :c', '{":p":{"S":"a"},":c":{"S":"003"}}');
SELECT kqc('kc_ss', 'p = :p AND c > :c', '{":p":{"S":"a"},":c":{"S":"009"}}');
SELECT kqc('kc_ss', 'p = :p AND c >= :c', '{":p":{"S":"a"},":c":{"S":"009"}}');
SELECT kqc('kc_ss', 'p = :p AND c BETWEEN :lo AND :hi', '{":p":{"S":"a"},":lo":{"S":"004"},":hi":{"S":"007"}}');
SELECT kqc('kc_ss', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"S":"00"}}');
SELECT kqc('kc_ss', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"S":"01"}}');
SELECT kqc('kc_ss', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"S":"1"}}');
SELECT kqc('kc_sb', 'p = :p', '{":p":{"S":"a"}}');
SELECT kqc('kc_sb', 'p = :p AND c < :c', '{":p":{"S":"a"},":c":{"B":"fw=="}}');
SELECT kqc('kc_sb', 'p = :p AND c > :c', '{":p":{"S":"a"},":c":{"B":"fw=="}}');
SELECT kqc('kc_sb', 'p = :p AND c BETWEEN :lo AND :hi', '{":p":{"S":"a"},":lo":{"B":"fw=="},":hi":{"B":"gA=="}}');
SELECT kqc('kc_sb', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"B":"gA=="}}');
SELECT kqc('kc_sb', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"B":"/w=="}}');
SELECT kq('kc_h', 'p = :p', '{":p":{"S":"a"}}');

-- value on the left, clauses in any order, redundant parentheses, names
SELECT kqc('kc_sn', ':c > c AND :p = p', '{":p":{"S":"a"},":c":{"N":"-1"}}');
SELECT kqc('kc_sn', ':c <= c AND p = :p', '{":p":{"S":"a"},":c":{"N":"7"}}');
SELECT kqc('kc_sn', '(p = :p) AND (c = :c)', '{":p":{"S":"a"},":c":{"N":"2"}}');
SELECT kqc('kc_sn', '((p = :p) AND c BETWEEN :c AND :c)', '{":p":{"S":"a"},":c":{"N":"2"}}');
SELECT kqc('kc_sn', '#k1 = :p AND #k2 < :c', '{":p":{"S":"a"},":c":{"N":"-2"}}',
           '{"ExpressionAttributeNames":{"#k1":"p","#k2":"c"}}');

-- missing keys, too many conditions, one condition per key
SELECT kq('kc_sn', 'c = :c', '{":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND a = :a', '{":p":{"S":"a"},":a":{"S":"x"}}');
SELECT kq('kc_sn', 'a = :a', '{":a":{"S":"x"}}');
SELECT kq('kc_sn', 'p = :p AND c = :c AND a = :a', '{":p":{"S":"a"},":c":{"N":"1"},":a":{"S":"x"}}');
SELECT kq('kc_sn', 'p = :p AND p = :p', '{":p":{"S":"a"}}');
SELECT kq('kc_sn', 'p = :p AND c > :c AND c < :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_h', 'p = :p AND a = :a', '{":p":{"S":"a"},":a":{"S":"x"}}');
SELECT kq('kc_h', 'p = :p AND a = :a AND b = :a', '{":p":{"S":"a"},":a":{"S":"x"}}');

-- invalid operators and functions
SELECT kq('kc_sn', 'p = :p OR c = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'NOT p = :p', '{":p":{"S":"a"}}');
SELECT kq('kc_sn', 'p = :p AND c IN (:c)', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND c <> :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND attribute_exists(c)', '{":p":{"S":"a"}}');
SELECT kq('kc_sn', 'p = :p AND attribute_not_exists(c)', '{":p":{"S":"a"}}');
SELECT kq('kc_sn', 'p = :p AND contains(c, :c)', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND attribute_type(c, :t)', '{":p":{"S":"a"},":t":{"S":"N"}}');
SELECT kq('kc_sn', 'p = :p AND size(c) = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND dog(c, :c)', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND BEGINS_WITH(c, :c)', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND c.d = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND c[1] = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = c', NULL);
SELECT kq('kc_sn', ':p = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
-- first problem in textual order
SELECT kq('kc_sn', 'size(p) = :p OR c = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p OR size(c) = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND p = :p OR c = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');

-- operand types
SELECT kq('kc_sn', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_ss', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"S":"1"}}');
SELECT kq('kc_sn', 'p = :p', '{":p":{"N":"1"}}');
SELECT kq('kc_sn', 'p = :p AND c = :c', '{":p":{"S":"a"},":c":{"S":"1"}}');
SELECT kq('kc_sn', 'p = :p AND c BETWEEN :lo AND :hi', '{":p":{"S":"a"},":lo":{"N":"1"},":hi":{"S":"2"}}');

-- partition key: only =
SELECT kq('kc_sn', 'p > :p', '{":p":{"S":"a"}}');
SELECT kq('kc_sn', 'p >= :p AND c = :c', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT kq('kc_sn', 'begins_with(p, :p)', '{":p":{"S":"a"}}');
SELECT kq('kc_sn', 'p BETWEEN :p AND :p', '{":p":{"S":"a"}}');

-- empty expression, undefined / unused values and names, BETWEEN bounds
SELECT kq('kc_sn', '', '{":p":{"S":"a"}}');
SELECT kq('kc_sn', 'p = :p', '{":q":{"S":"a"}}');
SELECT kq('kc_sn', 'p = :p', '{":p":{"S":"a"},":unused":{"S":"a"}}');
SELECT kq('kc_sn', 'p = :p', '{":p":{"S":"a"}}', '{"ExpressionAttributeNames":{"#unused":"x"}}');
SELECT kq('kc_sn', '#nope = :p', '{":p":{"S":"a"}}');
SELECT kq('kc_ss', 'p = :p AND c BETWEEN :hi AND :lo', '{":p":{"S":"a"},":lo":{"S":"a"},":hi":{"S":"b"}}');
SELECT kq('kc_sn', 'p = :p AND c BETWEEN :hi AND :lo', '{":p":{"S":"a"},":lo":{"N":"1"},":hi":{"N":"2"}}');
SELECT try_api('Query', '{"TableName":"kc_sn"}');
SELECT try_api('Query', '{"TableName":"kc_sn","ExpressionAttributeValues":{":p":{"S":"a"}}}');
SELECT kq('no_such_table', 'p = :p', '{":p":{"S":"a"}}');
SELECT kq('no_such_table', 'p = :p AND begins_with(c, :c)', '{":p":{"S":"a"},":c":{"N":"1"}}');
SELECT try_api('Query', '{"TableName":"kc_sn","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"a"}},
  "KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}}}');

-- filters may not name key attributes
SELECT kq('kc_sn', 'p = :p', '{":p":{"S":"a"},":v":{"N":"1"}}', '{"FilterExpression":"c > :v"}');
SELECT kq('kc_sn', 'p = :p', '{":p":{"S":"a"}}', '{"FilterExpression":"attribute_exists(p)"}');
SELECT try_api('Query', '{"TableName":"kc_sn","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}},
  "QueryFilter":{"c":{"ComparisonOperator":"GT","AttributeValueList":[{"N":"1"}]}}}');

-- legacy KeyConditions
CREATE OR REPLACE FUNCTION lq(t text, kc jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text := try_api('Query', jsonb_build_object('TableName', t, 'KeyConditions', kc));
BEGIN
    IF r NOT LIKE '{%' THEN RETURN r; END IF;
    RETURN (SELECT coalesce(string_agg(coalesce(i->'c'->>'N', i->'c'->>'S', '-'), ' '), '(none)')
            FROM jsonb_array_elements(r::jsonb->'Items') i);
END $$;
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}}');
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},"c":{"ComparisonOperator":"LT","AttributeValueList":[{"N":"0"}]}}');
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},"c":{"ComparisonOperator":"BETWEEN","AttributeValueList":[{"N":"1"},{"N":"3"}]}}');
SELECT lq('kc_ss', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},"c":{"ComparisonOperator":"BEGINS_WITH","AttributeValueList":[{"S":"01"}]}}');
SELECT lq('kc_sn', '{"c":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]}}');
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"GT","AttributeValueList":[{"S":"a"}]}}');
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},"c":{"ComparisonOperator":"NE","AttributeValueList":[{"N":"1"}]}}');
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},"c":{"ComparisonOperator":"BEGINS_WITH","AttributeValueList":[{"N":"1"}]}}');
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]}}');
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[]}}');
SELECT lq('kc_sn', '{"p":{"AttributeValueList":[{"S":"a"}]}}');
-- KeyConditions: {} (DynamoDB: Conditions can be of length 1 or 2 only)
SELECT lq('kc_sn', '{}');
-- more than two KeyConditions on a key of one or two attributes
SELECT lq('kc_sn', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},"c":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]},"z":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]}}');
SELECT lq('kc_h', '{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},"c":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]},"z":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]}}');
-- ConditionalOperator needs a QueryFilter of two or more conditions (checked before the missing key condition)
SELECT try_api('Query', '{"TableName":"kc_sn","ConditionalOperator":"AND"}');
SELECT try_api('Query', '{"TableName":"kc_sn","ConditionalOperator":"OR","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}}}');
SELECT try_api('Query', '{"TableName":"kc_sn","ConditionalOperator":"OR","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}},
  "QueryFilter":{"x":{"ComparisonOperator":"NULL"}}}');
SELECT try_api('Query', '{"TableName":"kc_sn","ConditionalOperator":"OR","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]}},
  "QueryFilter":{"x":{"ComparisonOperator":"NULL"},"y":{"ComparisonOperator":"NULL"}},"Select":"COUNT"}')::jsonb->'Count' AS count;
-- QueryFilter EQ/NE accept every type (lists, maps, BOOL, NULL too), not just scalars and sets
SELECT dynindex.api('PutItem', '{"TableName":"kc_h","Item":{"p":{"S":"qf"},"l":{"L":[{"N":"1"},{"S":"x"}]},"m":{"M":{"a":{"BOOL":true}}},"b":{"BOOL":false},"z":{"NULL":true}}}') IS NOT NULL AS put;
SELECT try_api('Query', '{"TableName":"kc_h","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"qf"}]}},
  "QueryFilter":{"l":{"ComparisonOperator":"EQ","AttributeValueList":[{"L":[{"N":"1"},{"S":"x"}]}]},
                 "m":{"ComparisonOperator":"EQ","AttributeValueList":[{"M":{"a":{"BOOL":true}}}]},
                 "b":{"ComparisonOperator":"NE","AttributeValueList":[{"BOOL":true}]},
                 "z":{"ComparisonOperator":"EQ","AttributeValueList":[{"NULL":true}]}}}')::jsonb->'Count' AS count;
SELECT try_api('Query', '{"TableName":"kc_h","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"qf"}]}},
  "QueryFilter":{"l":{"ComparisonOperator":"EQ","AttributeValueList":[{"L":[{"N":"1"}]}]}}}')::jsonb->'Count' AS count;
SELECT try_api('Query', '{"TableName":"kc_h","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"qf"}]}},
  "QueryFilter":{"l":{"ComparisonOperator":"LT","AttributeValueList":[{"L":[{"N":"1"}]}]}}}');

-- multi-attribute GSI keys: all HASH attributes with =, RANGE left to right, only the last an inequality
SELECT dynindex.api('CreateTable', '{"TableName":"kc_gsi","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"h1","AttributeType":"S"},
    {"AttributeName":"h2","AttributeType":"N"},{"AttributeName":"r1","AttributeType":"S"},
    {"AttributeName":"r2","AttributeType":"N"},{"AttributeName":"r3","AttributeType":"S"}],
  "GlobalSecondaryIndexes":[{"IndexName":"gs1","Projection":{"ProjectionType":"ALL"},
    "KeySchema":[{"AttributeName":"h1","KeyType":"HASH"},{"AttributeName":"h2","KeyType":"HASH"},
      {"AttributeName":"r1","KeyType":"RANGE"},{"AttributeName":"r2","KeyType":"RANGE"},{"AttributeName":"r3","KeyType":"RANGE"}]}]}') IS NOT NULL AS created;
CREATE OR REPLACE FUNCTION gq(kce text) RETURNS text LANGUAGE sql AS $$
    SELECT kq('kc_gsi', kce,
              (SELECT jsonb_object_agg(key, value)
                 FROM jsonb_each('{":h1":{"S":"x"},":h2":{"N":"1"},":r1":{"S":"a"},":r2":{"N":"2"},":r3":{"S":"c"}}')
                WHERE strpos(kce, key) > 0),
              '{"IndexName":"gs1"}')
$$;
SELECT gq('h1 = :h1 AND h2 = :h2 AND r1 = :r1 AND r2 = :r2 AND begins_with(r3, :r3)') LIKE '{%' AS ok;
SELECT gq('r2 > :r2 AND h2 = :h2 AND r1 = :r1 AND h1 = :h1') LIKE '{%' AS ok;
SELECT gq('h1 = :h1 AND h2 = :h2') LIKE '{%' AS ok;
SELECT gq('h1 = :h1 AND h2 = :h2 AND r1 BETWEEN :r1 AND :r3') LIKE '{%' AS ok;
SELECT gq('h1 = :h1 AND r1 = :r1');
SELECT gq('h1 = :h1 AND h2 > :h2');
SELECT gq('h1 = :h1 AND h2 = :h2 AND r2 = :r2');
SELECT gq('h1 = :h1 AND h2 = :h2 AND r3 = :r3');
SELECT gq('h1 = :h1 AND h2 = :h2 AND r1 = :r1 AND r3 = :r3');
SELECT gq('h1 = :h1 AND h2 = :h2 AND r1 > :r1 AND r2 = :r2');
SELECT gq('h1 = :h1 AND h2 = :h2 AND r1 < :r1 AND r2 > :r2 AND r3 = :r3');
SELECT gq('h1 = :h1 AND h2 = :h2 AND r1 = :r1 AND r2 = :r2 AND r3 = :r3 AND p = :r1');
SELECT gq('h1 = :h2 AND h2 = :h2');
SELECT gq('h1 = :h1 AND h2 = :h2 AND r1 = :r1 AND r2 = :r2 AND begins_with(r3, :h2)');
SELECT kq('kc_gsi', 'p = :p', '{":p":{"S":"a"}}', '{"IndexName":"nope"}');
SELECT kq('kc_gsi', 'h1 = :p', '{":p":{"S":"a"}}', '{"IndexName":"gs1","ConsistentRead":true}');
-- legacy KeyConditions take one condition per attribute of a multi-attribute key
SELECT dynindex.api('PutItem', '{"TableName":"kc_gsi","Item":{"p":{"S":"m1"},"h1":{"S":"x"},"h2":{"N":"1"},"r1":{"S":"a"},"r2":{"N":"2"},"r3":{"S":"c"}}}') IS NOT NULL AS put;
SELECT dynindex.wait_for_indexes('kc_gsi', '60 seconds');
SELECT try_api('Query', '{"TableName":"kc_gsi","IndexName":"gs1","KeyConditions":{"h1":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"x"}]},
  "h2":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]},"r1":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},
  "r2":{"ComparisonOperator":"GE","AttributeValueList":[{"N":"2"}]}}}')::jsonb->'Count' AS count;
SELECT try_api('Query', '{"TableName":"kc_gsi","IndexName":"gs1","KeyConditions":{"h1":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"x"}]},
  "h2":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]},"r2":{"ComparisonOperator":"GE","AttributeValueList":[{"N":"2"}]}}}');
