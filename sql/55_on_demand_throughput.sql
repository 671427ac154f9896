-- OnDemandThroughput, the table's and a GSI's own maximum (docs/capacity.md
-- "The buckets", docs/errors.md "Tables"): the range and billing-mode rules
-- with DynamoDB's messages; DescribeTable shows only the members set;
-- UpdateTable merges member by member, -1 removing a member (its response
-- shows the removed members as -1); turning PROVISIONED drops the maxima; a
-- GSI's maximum throttles the writes to its table and the reads of the GSI
-- with the Index...MaxOnDemandThroughputExceeded reason.  Backups and
-- restores carry the maxima: 90_backups.sql.
\set VERBOSITY terse
SET dynindex.throughput_test_clock = 2000000;
-- a request's answer, or its error (message and DETAIL) as notices
CREATE FUNCTION od_try(op text, req text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE msg text; det text;
BEGIN
  RETURN dynindex.api(op, req::jsonb);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%', msg;
  IF det <> '' THEN RAISE NOTICE 'detail: %', det; END IF;
  RETURN NULL;
END $$;
-- the OnDemandThroughput of a TableDescription: the table's, and each GSI's ("-": none)
CREATE FUNCTION od_view(d jsonb) RETURNS text LANGUAGE sql STRICT AS $$
  SELECT concat_ws(' ', 'table: ' || coalesce((d->'OnDemandThroughput')::text, '-'),
    (SELECT string_agg(g->>'IndexName' || ': ' || coalesce((g->'OnDemandThroughput')::text, '-'), ' ' ORDER BY g->>'IndexName')
       FROM jsonb_array_elements(d->'GlobalSecondaryIndexes') g)) $$;
CREATE FUNCTION od_described(tbl text) RETURNS text LANGUAGE sql AS $$
  SELECT od_view(dynindex.api('DescribeTable', jsonb_build_object('TableName', tbl))->'Table') $$;
CREATE FUNCTION od_updated(req text) RETURNS text LANGUAGE sql AS $$
  SELECT od_view(od_try('UpdateTable', req)->'TableDescription') $$;
-- writes with keys from a counter: how many were served, how many throttled
CREATE FUNCTION od_puts(tbl text, n int, extra text DEFAULT '', OUT served int, OUT throttled int) LANGUAGE plpgsql AS $$
BEGIN
  served := 0; throttled := 0;
  FOR i IN 1..n LOOP
    BEGIN
      PERFORM dynindex.api('PutItem', format('{"TableName": "%s", "Item": {"pk": {"S": "k%s"}%s}}', tbl, i, extra)::jsonb);
      served := served + 1;
    EXCEPTION WHEN SQLSTATE 'YD009' OR SQLSTATE 'YD016' THEN
      throttled := throttled + 1;
    END;
  END LOOP;
END $$;
-- the same for Queries of an index
CREATE FUNCTION od_queries(tbl text, idx text, n int, OUT served int, OUT throttled int) LANGUAGE plpgsql AS $$
BEGIN
  served := 0; throttled := 0;
  FOR i IN 1..n LOOP
    BEGIN
      PERFORM dynindex.api('Query', jsonb_build_object('TableName', tbl, 'IndexName', idx,
        'KeyConditionExpression', 'g = :g', 'ExpressionAttributeValues', '{":g": {"S": "none"}}'::jsonb));
      served := served + 1;
    EXCEPTION WHEN SQLSTATE 'YD009' OR SQLSTATE 'YD016' THEN
      throttled := throttled + 1;
    END;
  END LOOP;
END $$;
CREATE FUNCTION od_buckets(tbl text) RETURNS TABLE(index_name text, read_rate float8, write_rate float8, burst_seconds float8,
  read_tokens numeric, write_tokens numeric) LANGUAGE sql AS $$
  SELECT index_name, read_rate, write_rate, burst_seconds, round(read_tokens::numeric, 3), round(write_tokens::numeric, 3)
    FROM dynindex.throughput_buckets(tbl) ORDER BY index_name NULLS FIRST $$;

-- ---- CreateTable: each member at least 1 (-1 too is out of range here)
SELECT od_try('CreateTable', '{"TableName": "od_bad", "BillingMode": "PAY_PER_REQUEST",
  "OnDemandThroughput": {"MaxReadRequestUnits": 0},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT od_try('CreateTable', '{"TableName": "od_bad", "BillingMode": "PAY_PER_REQUEST",
  "OnDemandThroughput": {"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": -1},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT od_try('CreateTable', '{"TableName": "od_bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}, "OnDemandThroughput": {"MaxReadRequestUnits": -1}}]}');
SELECT od_try('CreateTable', '{"TableName": "od_bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}, "OnDemandThroughput": {"MaxWriteRequestUnits": 0}}]}');
-- not on a PROVISIONED table (BillingMode absent is PROVISIONED), nor on its GSIs
SELECT od_try('CreateTable', '{"TableName": "od_bad", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
  "OnDemandThroughput": {"MaxWriteRequestUnits": 10},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}');
SELECT od_try('CreateTable', '{"TableName": "od_bad", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
    "OnDemandThroughput": {"MaxReadRequestUnits": 10}}]}');
-- {} is accepted and keeps nothing
SELECT od_view(dynindex.api('CreateTable', '{"TableName": "od_empty", "BillingMode": "PAY_PER_REQUEST", "OnDemandThroughput": {},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}')
  ->'TableDescription') AS created;

-- ---- stored and shown: the table's and each GSI's, only the members set
SELECT od_view(dynindex.api('CreateTable', '{"TableName": "odt", "BillingMode": "PAY_PER_REQUEST",
  "OnDemandThroughput": {"MaxReadRequestUnits": 1000, "MaxWriteRequestUnits": 500},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"},
    {"AttributeName": "h", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [
    {"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"},
     "OnDemandThroughput": {"MaxWriteRequestUnits": 5}},
    {"IndexName": "byH", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}]}')
  ->'TableDescription') AS created;
SELECT od_described('odt');
SELECT index_name, on_demand_throughput FROM dynindex.indexes WHERE table_name = 'odt' ORDER BY index_name;

-- ---- UpdateTable merges member by member; the response shows the merge, DescribeTable what is kept
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxReadRequestUnits": 2000}}') AS response;
SELECT od_described('odt');
-- -1 removes a member (the response shows it as -1)
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxReadRequestUnits": -1}}') AS response;
SELECT od_described('odt');
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxWriteRequestUnits": -1}}') AS response;
SELECT od_described('odt');
-- removing what is not set: accepted, echoed
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}}') AS response;
SELECT od_described('odt');
-- out of range: 0, -2
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxWriteRequestUnits": 0}}');
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxReadRequestUnits": -2}}');
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxWriteRequestUnits": 700}}') AS response;
SELECT od_described('odt');

-- ---- a GSI's maximum: GlobalSecondaryIndexUpdates Update merges it the same way
SELECT od_updated('{"TableName": "odt", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byG",
  "OnDemandThroughput": {"MaxReadRequestUnits": 50}}}]}') AS response;
SELECT od_updated('{"TableName": "odt", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byH",
  "OnDemandThroughput": {"MaxReadRequestUnits": 40, "MaxWriteRequestUnits": 30}}}]}') AS response;
SELECT od_updated('{"TableName": "odt", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byH",
  "OnDemandThroughput": {"MaxWriteRequestUnits": -1}}}]}') AS response;
SELECT od_updated('{"TableName": "odt", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byH",
  "OnDemandThroughput": {"MaxReadRequestUnits": -1}}}]}') AS response;
SELECT od_updated('{"TableName": "odt", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byH",
  "OnDemandThroughput": {"MaxReadRequestUnits": 0}}}]}');
-- Create: each member at least 1
SELECT od_updated('{"TableName": "odt", "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "byK", "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
  "Projection": {"ProjectionType": "KEYS_ONLY"}, "OnDemandThroughput": {"MaxWriteRequestUnits": -1}}}]}');
SELECT od_updated('{"TableName": "odt", "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "byK", "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
  "Projection": {"ProjectionType": "KEYS_ONLY"}, "OnDemandThroughput": {"MaxReadRequestUnits": 7}}}]}') AS response;
SELECT dynindex.wait_for_indexes('odt');
SELECT od_described('odt');

-- ---- enforced: the rates of the buckets (a GSI without a maximum: the table quota)
SELECT * FROM od_buckets('odt');
-- a GSI's write maximum throttles the writes to its table: 5 units with one second of burst
SELECT * FROM od_puts('odt', 8, ', "g": {"S": "G"}');
SELECT od_try('PutItem', '{"TableName": "odt", "Item": {"pk": {"S": "x"}}}');
-- UpdateTable applies at once: 0.1 s at 100 units, 10 units; each of these writes moves
-- its item from g = G to g = H, a delete and a put in the index: 2 units, 5 writes
SELECT od_updated('{"TableName": "odt", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byG",
  "OnDemandThroughput": {"MaxWriteRequestUnits": 100}}}]}') AS response;
SET dynindex.throughput_test_clock = 2000000.1;
SELECT * FROM od_puts('odt', 12, ', "g": {"S": "H"}');
-- reads of the GSI: its read maximum (50 units; an eventually consistent Query of small entries costs 0.5)
SELECT * FROM od_queries('odt', 'byG', 101);
SELECT od_try('Query', '{"TableName": "odt", "IndexName": "byG", "KeyConditionExpression": "g = :g",
  "ExpressionAttributeValues": {":g": {"S": "none"}}}');
-- the table's own reads are not the GSI's
SELECT od_try('GetItem', '{"TableName": "odt", "Key": {"pk": {"S": "k1"}}}') ? 'Item' AS table_read_served;

-- ---- turning PROVISIONED drops the maxima (they do not come back); none may be given then
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxReadRequestUnits": 5}, "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
SELECT od_updated('{"TableName": "odt", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}') AS response;
SELECT od_updated('{"TableName": "odt", "OnDemandThroughput": {"MaxReadRequestUnits": 5}}');
SELECT od_updated('{"TableName": "odt", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byG",
  "OnDemandThroughput": {"MaxWriteRequestUnits": 5}}}]}');
SELECT od_updated('{"TableName": "odt", "BillingMode": "PAY_PER_REQUEST"}') AS response;
SELECT index_name, on_demand_throughput FROM dynindex.indexes WHERE table_name = 'odt' ORDER BY index_name;
-- turning PAY_PER_REQUEST with a maximum
SELECT od_updated('{"TableName": "odt", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}') AS response;
SELECT od_updated('{"TableName": "odt", "BillingMode": "PAY_PER_REQUEST", "OnDemandThroughput": {"MaxWriteRequestUnits": 8}}') AS response;
SELECT od_described('odt');

SELECT dynindex.api('DeleteTable', jsonb_build_object('TableName', t)) IS NOT NULL AS deleted
  FROM unnest(ARRAY['odt', 'od_empty']) t;
RESET dynindex.throughput_test_clock;
