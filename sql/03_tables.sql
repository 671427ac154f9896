-- Tables: CreateTable validation, DescribeTable, ListTables, DeleteTable.
-- ct(request): CreateTable with a default key schema merged under the request
CREATE OR REPLACE FUNCTION ct(req jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('CreateTable', '{"TableName": "t_err", "BillingMode": "PAY_PER_REQUEST",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}'::jsonb || req)
$$;
-- table names
SELECT ct('{"TableName": "ab"}');
SELECT ct(jsonb_build_object('TableName', repeat('a', 256)));
SELECT ct('{"TableName": "a b!"}');
SELECT ct('{"TableName": "a"}'::jsonb - 'TableName' || '{"TableName": null}');
SELECT dynindex.api('CreateTable', '{"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
-- several constraint violations are reported together
SELECT ct('{"TableName": "a b", "BillingMode": "FREE", "KeySchema": [{"AttributeName": "pk", "KeyType": "PRIMARY"}]}');
-- KeySchema
SELECT ct('{"KeySchema": []}');
SELECT ct('{"KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}, {"AttributeName": "c", "KeyType": "RANGE"}]}');
SELECT ct('{"KeySchema": [{"AttributeName": "pk", "KeyType": "RANGE"}]}');
SELECT ct('{"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}]}');
SELECT ct('{"KeySchema": [{"AttributeName": "sk", "KeyType": "RANGE"}, {"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
SELECT ct('{"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
SELECT ct('{"KeySchema": [{"AttributeName": "pk"}]}');
-- AttributeDefinitions
SELECT ct('{"AttributeDefinitions": null}');
SELECT ct('{"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "BOOL"}]}');
SELECT ct('{"AttributeDefinitions": [{"AttributeName": "other", "AttributeType": "S"}]}');
SELECT ct('{"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "unused", "AttributeType": "S"}]}');
-- billing
SELECT ct('{"BillingMode": "PROVISIONED"}');
SELECT ct('{"BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 1}}');
SELECT ct('{"ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');
SELECT ct('{"BillingMode": null}');
-- LSIs
SELECT ct('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "x", "AttributeType": "S"}]}');
CREATE OR REPLACE FUNCTION ct2(req jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT ct('{"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                             {"AttributeName": "x", "AttributeType": "N"}]}'::jsonb || req)
$$;
SELECT ct2('{"LocalSecondaryIndexes": [], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "z", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "sk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {}}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL", "NonKeyAttributes": ["a"]}}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}},
                                       {"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2(jsonb_build_object('LocalSecondaryIndexes', (SELECT jsonb_agg(jsonb_build_object('IndexName', 'lsi' || i,
  'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}]'::jsonb,
  'Projection', '{"ProjectionType": "KEYS_ONLY"}'::jsonb)) FROM generate_series(1, 6) i)));
-- GSIs
SELECT ct2('{"GlobalSecondaryIndexes": [], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "g", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "z", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"},
                                         "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]}');
SELECT ct2(jsonb_build_object('GlobalSecondaryIndexes', (SELECT jsonb_agg(jsonb_build_object('IndexName', 'gsi' || i,
  'KeySchema', '[{"AttributeName": "x", "KeyType": "HASH"}]'::jsonb,
  'Projection', '{"ProjectionType": "KEYS_ONLY"}'::jsonb)) FROM generate_series(1, 21) i)));
-- multi-attribute GSI keys: up to 4 HASH then up to 4 RANGE
CREATE OR REPLACE FUNCTION ct_multi(schema jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT ct(jsonb_build_object('AttributeDefinitions', (SELECT jsonb_agg(jsonb_build_object('AttributeName', a, 'AttributeType', 'S'))
      FROM unnest(ARRAY['pk', 'a1', 'a2', 'a3', 'a4', 'a5']) a),
    'GlobalSecondaryIndexes', jsonb_build_array(jsonb_build_object('IndexName', 'gsi', 'KeySchema', schema, 'Projection', '{"ProjectionType": "ALL"}'::jsonb))))
$$;
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "HASH"}, {"AttributeName": "a2", "KeyType": "HASH"}, {"AttributeName": "a3", "KeyType": "HASH"},
                  {"AttributeName": "a4", "KeyType": "HASH"}, {"AttributeName": "a5", "KeyType": "HASH"}]');
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "HASH"}, {"AttributeName": "a2", "KeyType": "RANGE"}, {"AttributeName": "a3", "KeyType": "RANGE"},
                  {"AttributeName": "a4", "KeyType": "RANGE"}, {"AttributeName": "a5", "KeyType": "RANGE"}, {"AttributeName": "pk", "KeyType": "RANGE"}]');
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "HASH"}, {"AttributeName": "a2", "KeyType": "RANGE"}, {"AttributeName": "a3", "KeyType": "HASH"},
                  {"AttributeName": "a4", "KeyType": "RANGE"}, {"AttributeName": "a5", "KeyType": "RANGE"}]');
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "HASH"}, {"AttributeName": "a2", "KeyType": "HASH"}, {"AttributeName": "a1", "KeyType": "RANGE"},
                  {"AttributeName": "a4", "KeyType": "RANGE"}, {"AttributeName": "a5", "KeyType": "RANGE"}]');
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "HASH"}, {"AttributeName": "a1", "KeyType": "HASH"}]');
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "HASH"}, {"AttributeName": "a1", "KeyType": "RANGE"}]');
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "RANGE"}, {"AttributeName": "a2", "KeyType": "HASH"}]');
-- a5 defined but used by no key
SELECT ct_multi('[{"AttributeName": "a1", "KeyType": "HASH"}, {"AttributeName": "a2", "KeyType": "HASH"}, {"AttributeName": "a3", "KeyType": "RANGE"},
                  {"AttributeName": "a4", "KeyType": "RANGE"}]');
-- 4 HASH + 4 RANGE is the largest key schema
SELECT (ct(jsonb_build_object('TableName', 'multi', 'AttributeDefinitions', (SELECT jsonb_agg(jsonb_build_object('AttributeName', a, 'AttributeType', t))
      FROM unnest(ARRAY['pk', 'h1', 'h2', 'h3', 'h4', 'r1', 'r2', 'r3', 'r4'], ARRAY['S', 'S', 'N', 'B', 'S', 'N', 'S', 'B', 'N']) u(a, t)),
    'GlobalSecondaryIndexes', jsonb_build_array(jsonb_build_object('IndexName', 'gsi', 'Projection', '{"ProjectionType": "ALL"}'::jsonb,
      'KeySchema', (SELECT jsonb_agg(jsonb_build_object('AttributeName', a, 'KeyType', CASE WHEN a LIKE 'h%' THEN 'HASH' ELSE 'RANGE' END))
                     FROM unnest(ARRAY['h1', 'h2', 'h3', 'h4', 'r1', 'r2', 'r3', 'r4']) a)))))
  -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0 -> 'KeySchema') AS multi_key_schema;
SELECT dynindex.api('DeleteTable', '{"TableName": "multi"}') IS NOT NULL AS deleted;
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
             "LocalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}');

-- a null among NonKeyAttributes is refused by the member constraints (it was stored, and
-- read as a name: a backend crash on PostgreSQL 18; test/fuzz/api_fuzz.py seed 1, iteration
-- 605, the request as the fuzzer sent it); a name that is no string is a SerializationException
SELECT dynindex.api('CreateTable', '{"TableName":"fz_c1","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"N"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"x4","AttributeType":"S"},{"AttributeName":"x2","AttributeType":"B"},{"AttributeName":"x7","AttributeType":"N"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"GlobalSecondaryIndexes":[{"IndexName":"gs0","KeySchema":[{"AttributeName":"x4","KeyType":"HASH"},{"AttributeName":"x2","KeyType":"HASH"},{"AttributeName":"x7","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":[null,"a","b"]}}],"TotalSegments":2147483647}');
SELECT dynindex.api('DescribeTable', '{"TableName": "fz_c1"}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", null, null]}}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [null]}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [null, ""]}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [1, "a"]}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", true]}}]}');
SELECT ct2('{"GlobalSecondaryIndexes": [{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [{"S": "a"}]}}]}');
SELECT ct2('{"LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [["a"]]}}]}');
-- a valid table with both kinds of indexes
SELECT (dynindex.api('CreateTable', '{"TableName": "Thread", "BillingMode": "PROVISIONED",
    "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 7},
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                             {"AttributeName": "x", "AttributeType": "B"}, {"AttributeName": "y", "AttributeType": "S"}, {"AttributeName": "z", "AttributeType": "N"}],
    "LocalSecondaryIndexes": [{"IndexName": "byX", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "x", "KeyType": "RANGE"}],
                               "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]}}],
    "GlobalSecondaryIndexes": [{"IndexName": "byYZ", "KeySchema": [{"AttributeName": "y", "KeyType": "HASH"}, {"AttributeName": "z", "KeyType": "HASH"},
                                                                    {"AttributeName": "sk", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}, "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 3}}]}')
  -> 'TableDescription') - 'TableId' - 'CreationDateTime' AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "Thread", "BillingMode": "PAY_PER_REQUEST",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT jsonb_pretty((dynindex.api('DescribeTable', '{"TableName": "Thread"}') -> 'Table') - 'TableId' - 'CreationDateTime');
SELECT jsonb_typeof(d->'CreationDateTime') AS creation_time, d->>'TableId' ~ '^[0-9a-f-]{36}$' AS table_id
FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "Thread"}') -> 'Table' AS d) s;
SELECT jsonb_pretty((dynindex.api('CreateTable', '{"TableName": "Simple", "BillingMode": "PAY_PER_REQUEST",
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}')
  -> 'TableDescription') - 'TableId' - 'CreationDateTime' #- '{BillingModeSummary,LastUpdateToPayPerRequestDateTime}');

-- DescribeTable parameter rules
SELECT dynindex.api('DescribeTable', '{"TableName": "Missing"}');
SELECT dynindex.api('DescribeTable', '{"TableName": "ab"}');
SELECT dynindex.api('DescribeTable', jsonb_build_object('TableName', repeat('a', 256)));
SELECT dynindex.api('DescribeTable', '{}');
SELECT dynindex.api('DescribeTable', '{"TableName": 5}');

-- ListTables and paging
SELECT dynindex.api('CreateTable', jsonb_build_object('TableName', 'list_' || i, 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}]'::jsonb)) IS NOT NULL AS created
FROM generate_series(1, 3) i;
SELECT dynindex.api('ListTables', '{}');
SELECT dynindex.api('ListTables', '{"Limit": 2}');
SELECT dynindex.api('ListTables', '{"Limit": 2, "ExclusiveStartTableName": "Thread"}');
SELECT dynindex.api('ListTables', '{"Limit": 2, "ExclusiveStartTableName": "list_2"}');
SELECT dynindex.api('ListTables', '{"Limit": 3, "ExclusiveStartTableName": "list_0"}');
SELECT dynindex.api('ListTables', '{"Limit": 0}');
SELECT dynindex.api('ListTables', '{"Limit": 101}');
SELECT dynindex.api('ListTables', '{"ExclusiveStartTableName": "a"}');
SELECT dynindex.api('ListTables', '{"Limit": "x"}');

-- the same attribute defined twice (DynamoDB: Attribute Name is duplicated: <name>)
SELECT dynindex.api('CreateTable', '{"TableName": "dupdef", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "xyz", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "xyz", "AttributeType": "S"}, {"AttributeName": "xyz", "AttributeType": "N"}]}');
-- DeleteTable (its description has no schema, creation time or indexes)
SELECT (dynindex.api('DeleteTable', '{"TableName": "Simple"}') -> 'TableDescription') - 'TableId' - 'CreationDateTime' #- '{BillingModeSummary,LastUpdateToPayPerRequestDateTime}' AS deleted;
SELECT dynindex.api('DeleteTable', '{"TableName": "Simple"}');
SELECT dynindex.api('DescribeTable', '{"TableName": "Simple"}');
SELECT dynindex.api('GetItem', '{"TableName": "Simple", "Key": {"id": {"S": "a"}}}');
SELECT dynindex.api('DeleteTable', '{"TableName": "ab"}');
SELECT dynindex.api('DeleteTable', jsonb_build_object('TableName', 'list_' || i)) IS NOT NULL AS deleted FROM generate_series(1, 3) i;
SELECT dynindex.api('DeleteTable', '{"TableName": "Thread"}') IS NOT NULL AS deleted;
SELECT dynindex.api('ListTables', '{}');

-- operations
SELECT dynindex.api('FlyToTheMoon', '{}');
SELECT dynindex.api(NULL, '{}');
SELECT dynindex.api('ListTables', NULL);
DROP FUNCTION ct2(jsonb);
DROP FUNCTION ct_multi(jsonb);
DROP FUNCTION ct(jsonb);
