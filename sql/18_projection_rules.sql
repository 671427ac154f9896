-- Index projections (CreateTable and UpdateTable's Create): INCLUDE needs
-- NonKeyAttributes, KEYS_ONLY and ALL refuse them, no duplicates, 1..20 names,
-- and ProjectionType has no default. Key attributes may be named.
CREATE FUNCTION proj_ct(proj jsonb, lsi bool DEFAULT false) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('CreateTable', jsonb_build_object('TableName', 'proj_t', 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]'::jsonb,
    'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}]'::jsonb,
    CASE WHEN lsi THEN 'LocalSecondaryIndexes' ELSE 'GlobalSecondaryIndexes' END,
    jsonb_build_array(jsonb_build_object('IndexName', 'idx', 'Projection', proj, 'KeySchema',
      CASE WHEN lsi THEN '[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "g", "KeyType": "RANGE"}]'::jsonb
           ELSE '[{"AttributeName": "g", "KeyType": "HASH"}]'::jsonb END))))->'TableDescription'->'GlobalSecondaryIndexes'
$$;
SELECT proj_ct('{"ProjectionType": "INCLUDE"}');
SELECT proj_ct('{"ProjectionType": "INCLUDE"}', true);
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": []}');
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b", "a"]}');
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "x"]}', true);
SELECT proj_ct(jsonb_build_object('ProjectionType', 'INCLUDE', 'NonKeyAttributes', (SELECT jsonb_agg('a' || i) FROM generate_series(1, 21) i)));
SELECT proj_ct('{"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]}');
SELECT proj_ct('{"ProjectionType": "ALL", "NonKeyAttributes": ["a"]}', true);
SELECT proj_ct('{"NonKeyAttributes": ["a"]}');
SELECT proj_ct('{}');
SELECT proj_ct('{"ProjectionType": "all"}');
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": [""]}');
-- key attributes (the table's or the index's own) may be named
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": ["pk", "g", "a"]}');
-- UpdateTable's Create follows the same rules
SELECT dynindex.api('UpdateTable', '{"TableName": "proj_t", "AttributeDefinitions": [{"AttributeName": "h", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "idx2", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "INCLUDE"}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "proj_t", "AttributeDefinitions": [{"AttributeName": "h", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "idx2", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["q", "q"]}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "proj_t", "AttributeDefinitions": [{"AttributeName": "h", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "idx2", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["q"]}}}]}');
-- a null name is refused (it was stored, then read as a name); a name that is no string is a SerializationException
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": [null, "a"]}');
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", null]}', true);
SELECT proj_ct('{"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", 2]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "proj_t", "AttributeDefinitions": [{"AttributeName": "h", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "idx2", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [null, "q"]}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "proj_t", "AttributeDefinitions": [{"AttributeName": "h", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "idx2", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["q", {}]}}}]}');
-- the table keeps its one index
SELECT jsonb_array_length(dynindex.api('DescribeTable', '{"TableName": "proj_t"}')->'Table'->'GlobalSecondaryIndexes') AS gsis;
SELECT dynindex.api('DeleteTable', '{"TableName": "proj_t"}')->'TableDescription'->>'TableStatus' AS deleted;
