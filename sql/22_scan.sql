-- Scan: paging, Limit before filter, filters, projections, parallel scan, messages
\set VERBOSITY terse
CREATE EXTENSION IF NOT EXISTS dynindex;

CREATE OR REPLACE FUNCTION try_api(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN dynindex.api(op, req)::text;
EXCEPTION WHEN others THEN
    RETURN SQLERRM;
END $$;
CREATE OR REPLACE FUNCTION k(i jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT (i->'p'->>'S') || '/' || coalesce(i->'c'->>'N', '-')
$$;
-- every item key read by paging a Scan (with the page count)
CREATE OR REPLACE FUNCTION scan_keys(req jsonb, OUT keys text[], OUT npages int) LANGUAGE plpgsql AS $$
DECLARE r jsonb;
BEGIN
    keys := '{}'; npages := 0;
    LOOP
        r := dynindex.api('Scan', req);
        npages := npages + 1;
        keys := keys || coalesce((SELECT array_agg(k(i)) FROM jsonb_array_elements(r->'Items') i), '{}');
        EXIT WHEN r->'LastEvaluatedKey' IS NULL;
        req := req || jsonb_build_object('ExclusiveStartKey', r->'LastEvaluatedKey');
    END LOOP;
END $$;

SELECT dynindex.api('CreateTable', '{"TableName":"sc_t","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"sc_h","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"}]}') IS NOT NULL AS created;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'sc_t', 'Item',
    jsonb_build_object('p', jsonb_build_object('S', 'p' || (i % 37)), 'c', jsonb_build_object('N', (i / 37)::text),
                       'v', jsonb_build_object('N', (i % 10)::text), 'w', jsonb_build_object('S', 'w' || i)))))
  FROM generate_series(0, 499) i;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'sc_h', 'Item',
    jsonb_build_object('p', jsonb_build_object('S', 'h' || i)))))
  FROM generate_series(1, 20) i;
CREATE TABLE expected_keys AS
  SELECT 'p' || (i % 37) || '/' || (i / 37) AS key FROM generate_series(0, 499) i;

-- whole table, every item once, with and without Limit
SELECT npages, cardinality(keys) AS n, (SELECT count(DISTINCT x) FROM unnest(keys) x) AS distinct_n,
       (SELECT array_agg(x ORDER BY x) FROM unnest(keys) x) = (SELECT array_agg(key ORDER BY key) FROM expected_keys) AS all_once
  FROM scan_keys('{"TableName":"sc_t"}');
SELECT npages, cardinality(keys) AS n,
       (SELECT array_agg(x ORDER BY x) FROM unnest(keys) x) = (SELECT array_agg(key ORDER BY key) FROM expected_keys) AS all_once
  FROM scan_keys('{"TableName":"sc_t","Limit":33}');
SELECT npages, cardinality(keys) AS n FROM scan_keys('{"TableName":"sc_h","Limit":6}');
-- a page: Count, ScannedCount, LastEvaluatedKey; Limit counts before the filter
SELECT r->'Count' AS count, r->'ScannedCount' AS scanned, r ? 'LastEvaluatedKey' AS has_lek
  FROM (SELECT dynindex.api('Scan', '{"TableName":"sc_t","Limit":10,"FilterExpression":"v = :v",
          "ExpressionAttributeValues":{":v":{"N":"3"}}}') r) s;
SELECT npages, cardinality(keys) AS n FROM scan_keys('{"TableName":"sc_t","Limit":50,"FilterExpression":"v = :v",
          "ExpressionAttributeValues":{":v":{"N":"3"}}}');
-- filters may name key attributes on Scan
SELECT dynindex.api('Scan', '{"TableName":"sc_t","FilterExpression":"p = :p AND c = :c",
  "ExpressionAttributeValues":{":p":{"S":"p5"},":c":{"N":"2"}}}');
SELECT dynindex.api('Scan', '{"TableName":"sc_t","ScanFilter":{"w":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"w77"}]}}}');
SELECT dynindex.api('Scan', '{"TableName":"sc_t","ScanFilter":{"w":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"w77"}]},
  "v":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"8"}]}},"ConditionalOperator":"OR","AttributesToGet":["w"],"Limit":20}');
-- ConditionalOperator needs a ScanFilter of two or more conditions
SELECT dynindex.api('Scan', '{"TableName":"sc_t","ConditionalOperator":"AND"}');
SELECT dynindex.api('Scan', '{"TableName":"sc_t","ConditionalOperator":"AND","AttributesToGet":["w"]}');
SELECT dynindex.api('Scan', '{"TableName":"sc_t","ConditionalOperator":"AND","ScanFilter":{}}');
SELECT dynindex.api('Scan', '{"TableName":"sc_t","ConditionalOperator":"OR","ScanFilter":{"w":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"w77"}]}}}');
SELECT dynindex.api('Scan', '{"TableName":"sc_t","FilterExpression":"w = :w","ProjectionExpression":"w, #v",
  "ExpressionAttributeNames":{"#v":"v"},"ExpressionAttributeValues":{":w":{"S":"w100"}}}');
SELECT dynindex.api('Scan', '{"TableName":"sc_t","Select":"COUNT","ReturnConsumedCapacity":"TOTAL"}');
SELECT dynindex.api('Scan', '{"TableName":"sc_h","Select":"COUNT","Limit":5,"ConsistentRead":true,"ReturnConsumedCapacity":"TOTAL"}') - 'LastEvaluatedKey';

-- parallel scan: every item in exactly one segment, also when paged
SELECT total, count(x) AS n, count(DISTINCT x) AS distinct_n,
       array_agg(x ORDER BY x) = (SELECT array_agg(key ORDER BY key) FROM expected_keys) AS all_once
  FROM (VALUES (1), (2), (3), (7), (64)) t(total),
       LATERAL generate_series(0, total - 1) seg,
       LATERAL scan_keys(jsonb_build_object('TableName', 'sc_t', 'Segment', seg, 'TotalSegments', total, 'Limit', 9)) s,
       LATERAL unnest(s.keys) x
 GROUP BY total ORDER BY total;
SELECT seg, cardinality(keys) > 0 AS nonempty
  FROM generate_series(0, 3) seg, LATERAL scan_keys(jsonb_build_object('TableName', 'sc_t', 'Segment', seg, 'TotalSegments', 4)) s;

-- segment messages
SELECT try_api('Scan', '{"TableName":"sc_t","Segment":1}');
SELECT try_api('Scan', '{"TableName":"sc_t","TotalSegments":2}');
SELECT try_api('Scan', '{"TableName":"sc_t","Segment":3,"TotalSegments":3}');
SELECT try_api('Scan', '{"TableName":"sc_t","Segment":0,"TotalSegments":0}');
SELECT try_api('Scan', '{"TableName":"sc_t","Segment":-1,"TotalSegments":1000001}');
SELECT try_api('Scan', '{"TableName":"sc_t","Segment":1000000,"TotalSegments":1000000}');
SELECT try_api('Scan', '{"TableName":"sc_t","Segment":0,"TotalSegments":1000000,"Select":"COUNT"}');
-- an ExclusiveStartKey from another segment
SELECT try_api('Scan', jsonb_build_object('TableName', 'sc_t', 'Segment', 1 - dynindex.key_segment('\x7031'::bytea, 2), 'TotalSegments', 2,
  'ExclusiveStartKey', '{"p":{"S":"p1"},"c":{"N":"0"}}'::jsonb));

-- ExclusiveStartKey and other messages
SELECT try_api('Scan', '{"TableName":"sc_t","ExclusiveStartKey":{"p":{"S":"p1"}}}');
SELECT try_api('Scan', '{"TableName":"sc_t","ExclusiveStartKey":{"p":{"S":"p1"},"x":{"N":"1"}}}');
SELECT try_api('Scan', '{"TableName":"sc_t","ExclusiveStartKey":{"p":{"S":"p1"},"c":{"S":"1"}}}');
SELECT try_api('Scan', '{"TableName":"sc_t","ExclusiveStartKey":{"p":{"S":""},"c":{"N":"1"}}}');
SELECT try_api('Scan', '{"TableName":"sc_t","Select":"SPECIFIC_ATTRIBUTES"}');
SELECT try_api('Scan', '{"TableName":"sc_t","Select":"ALL_PROJECTED_ATTRIBUTES"}');
SELECT try_api('Scan', '{"TableName":"sc_t","Select":"COUNT","AttributesToGet":["w"]}');
-- an AttributesToGet name that is null (a member constraint) or no string (SerializationException)
SELECT try_api('Scan', '{"TableName":"sc_t","AttributesToGet":[null]}');
SELECT try_api('Scan', '{"TableName":"sc_t","AttributesToGet":["w",{}]}');
SELECT try_api('Query', '{"TableName":"sc_t","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"p1"}]}},"AttributesToGet":["w",null]}');
SELECT try_api('Query', '{"TableName":"sc_t","KeyConditions":{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"p1"}]}},"AttributesToGet":[7]}');
SELECT try_api('Scan', '{"TableName":"sc_t","IndexName":"nope"}');
SELECT try_api('Scan', '{"TableName":"nope"}');
SELECT try_api('Scan', '{"TableName":"sc_t","FilterExpression":"v = :v"}');
SELECT try_api('Scan', '{"TableName":"sc_t","FilterExpression":"v = :v","ScanFilter":{"w":{"ComparisonOperator":"NULL"}}}');
SELECT try_api('Scan', '{"TableName":"sc_t","Limit":"x"}');

-- A backend that sees tables created and deleted keeps no Query/Scan plans of the
-- deleted ones (it kept every table's plans forever: 60 MB after a few thousand
-- tables; found by the memory watch of test/fuzz/api_fuzz.py).
CREATE FUNCTION sc_churn(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. n LOOP
        PERFORM dynindex.api('CreateTable', '{"TableName":"sc_churn","BillingMode":"PAY_PER_REQUEST",
          "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"c","AttributeType":"N"}],
          "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"c","KeyType":"RANGE"}]}');
        PERFORM dynindex.api('PutItem', '{"TableName":"sc_churn","Item":{"p":{"S":"a"},"c":{"N":"1"}}}');
        PERFORM dynindex.api('Scan', '{"TableName":"sc_churn","Limit":1}');
        PERFORM dynindex.api('Query', '{"TableName":"sc_churn","KeyConditionExpression":"p = :p AND c > :c",
          "ExpressionAttributeValues":{":p":{"S":"a"},":c":{"N":"0"}}}');
        PERFORM dynindex.api('DeleteTable', '{"TableName":"sc_churn"}');
    END LOOP;
END $$;
CREATE FUNCTION sc_plans() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM pg_backend_memory_contexts WHERE name = 'CachedPlanSource'
$$;
SELECT sc_churn(3);
SELECT sc_plans() AS plans_before \gset
SELECT sc_churn(20);
SELECT sc_plans() - :plans_before AS plans_kept_for_20_deleted_tables;
