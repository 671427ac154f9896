-- Contributor Insights (src/api/insights.c, docs/contributor-insights.md):
-- UpdateContributorInsights, DescribeContributorInsights, ListContributorInsights
-- with DynamoDB's statuses, modes, rule names and messages, and the top keys
-- a Space-Saving sketch keeps (dynindex.contributor_insights): a Zipf workload
-- whose true top keys must be reported, throttled keys, items, GSIs.
\set VERBOSITY terse
SET dynindex.throughput_test_clock = 2000000;
CREATE FUNCTION ci(op text, req text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE msg text; res jsonb;
BEGIN
  res := dynindex.api(op, req::jsonb);
  -- rule names and LastUpdateDateTime carry the time: masked
  RETURN regexp_replace(regexp_replace(res::text, '-[0-9]{13}"', '-<ms>"', 'g'),
                        '"LastUpdateDateTime": [0-9.]+', '"LastUpdateDateTime": "<t>"', 'g')::jsonb;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
  RAISE NOTICE '%', msg;
  RETURN NULL;
END $$;
-- send a request n times; how many were served
CREATE FUNCTION times(op text, req text, n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE served int := 0;
BEGIN
  FOR i IN 1..n LOOP
    BEGIN
      PERFORM dynindex.api(op, req::jsonb);
      served := served + 1;
    EXCEPTION WHEN SQLSTATE 'YD009' THEN
      NULL;
    END;
  END LOOP;
  RETURN served;
END $$;
SELECT dynindex.api('CreateTable', '{"TableName": "ci_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
                           {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "LocalSecondaryIndexes": [{"IndexName": "lsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "g", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "ci_h", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1000},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;

-- ---- never configured: DISABLED, nothing listed
SELECT ci('DescribeContributorInsights', '{"TableName": "ci_t"}');
SELECT ci('DescribeContributorInsights', '{"TableName": "ci_t", "IndexName": "byG"}');
SELECT ci('ListContributorInsights', '{}');
-- ---- errors
SELECT ci('DescribeContributorInsights', '{"TableName": "nope"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "nope", "ContributorInsightsAction": "ENABLE"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t", "IndexName": "nope", "ContributorInsightsAction": "ENABLE"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t", "IndexName": "lsi", "ContributorInsightsAction": "ENABLE"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t", "ContributorInsightsAction": "START"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t", "ContributorInsightsAction": "ENABLE", "ContributorInsightsMode": "ALL"}');
SELECT ci('ListContributorInsights', '{"MaxResults": 101}');

-- ---- ENABLE answers ENABLING; it is ENABLED at once here, with DynamoDB's rules
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t", "ContributorInsightsAction": "ENABLE"}');
SELECT ci('DescribeContributorInsights', '{"TableName": "ci_t"}');
-- the same mode again: nothing changes, ENABLED
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t", "ContributorInsightsAction": "ENABLE", "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS"}');
-- a hash-only table has no item (sort key) rules; THROTTLED_KEYS keeps the throttled ones
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_h", "ContributorInsightsAction": "ENABLE", "ContributorInsightsMode": "THROTTLED_KEYS"}');
SELECT ci('DescribeContributorInsights', '{"TableName": "ci_h"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_h", "ContributorInsightsAction": "ENABLE"}');
SELECT ci('DescribeContributorInsights', '{"TableName": "ci_h"}');
-- a GSI has its own
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_t", "IndexName": "byG", "ContributorInsightsAction": "ENABLE"}');
SELECT ci('DescribeContributorInsights', '{"TableName": "ci_t", "IndexName": "byG"}');
SELECT ci('ListContributorInsights', '{}');
SELECT ci('ListContributorInsights', '{"TableName": "ci_h"}');
SELECT ci('ListContributorInsights', '{"MaxResults": 1}');
SELECT ci('ListContributorInsights', '{"MaxResults": 1, "NextToken": "ci_t"}');

-- ---- a Zipf workload: key r of 100 is read floor(1000 / r) times, in a shuffled order
SELECT count(*) AS items FROM generate_series(1, 100) r,
  LATERAL (SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'ci_t', 'Item',
    jsonb_build_object('pk', jsonb_build_object('S', 'user' || r), 'sk', '{"N": "1"}'::jsonb, 'g', jsonb_build_object('S', 'g' || (r % 3)))))) p;
CREATE TEMP TABLE truth AS SELECT 'user' || r AS key, floor(1000.0 / r)::bigint AS n FROM generate_series(1, 100) r;
SELECT sum(n) AS requests FROM truth;
SELECT count(*) AS reads FROM (
  SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'ci_t', 'Key',
           jsonb_build_object('pk', jsonb_build_object('S', key), 'sk', '{"N": "1"}'::jsonb)))
    FROM truth, generate_series(1, n) i ORDER BY md5(key || ':' || i)) x;
-- (the 100 PutItems count as accesses too: 5242 in all; 64 counters: overcounts at most 5242 / 64)
-- the true top ten are the sketch's top ten, the top five in order; every count is within its bound
WITH top AS (SELECT * FROM dynindex.contributor_insights('ci_t') WHERE rule = 'PKC')
SELECT (SELECT array_agg(key ORDER BY rank) FROM top WHERE rank <= 5) AS reported_top5,
       (SELECT array_agg(key ORDER BY n DESC) FROM (SELECT * FROM truth ORDER BY n DESC LIMIT 5) t) AS true_top5,
       (SELECT array_agg(key ORDER BY key) FROM top WHERE rank <= 10) =
       (SELECT array_agg(key ORDER BY key) FROM (SELECT * FROM truth ORDER BY n DESC LIMIT 10) t) AS same_top10,
       (SELECT bool_and(top.count - top.max_overcount <= truth.n AND truth.n <= top.count) FROM top JOIN truth USING (key)) AS within_bounds,
       (SELECT max(max_overcount) <= max(total) / 64 FROM top) AS error_bound,
       (SELECT count(*) FROM top) AS kept,
       (SELECT DISTINCT total FROM top) AS total;
-- items (partition key | sort key) have their own rule; the five most read
SELECT rule, rank, key, count FROM dynindex.contributor_insights('ci_t') WHERE rule = 'SKC' AND rank <= 3;
SELECT rule, regexp_replace(rule_name, '[0-9]{13}$', '<ms>') AS rule_name FROM dynindex.contributor_insights('ci_t') WHERE rank = 1;
-- writes count too; a new key takes the smallest counter's place: its count is that
-- counter's plus one, its max_overcount that counter's (Space-Saving)
SELECT dynindex.api('PutItem', '{"TableName": "ci_t", "Item": {"pk": {"S": "writer"}, "sk": {"N": "2"}}}') IS NOT NULL AS put;
SELECT key, count, max_overcount, count - max_overcount AS at_least FROM dynindex.contributor_insights('ci_t') WHERE rule = 'PKC' AND key = 'writer';

-- ---- a GSI counts the partition keys its Queries read
SELECT times('Query', '{"TableName": "ci_t", "IndexName": "byG", "KeyConditionExpression": "g = :g",
    "ExpressionAttributeValues": {":g": {"S": "g1"}}}', 7);
SELECT dynindex.api('Query', '{"TableName": "ci_t", "IndexName": "byG", "KeyConditionExpression": "g = :g",
    "ExpressionAttributeValues": {":g": {"S": "g2"}}}') IS NOT NULL AS queried;
SELECT rule, rank, key, count, max_overcount, total FROM dynindex.contributor_insights('ci_t', 'byG');

-- ---- throttled keys: 1 RCU holds 300 units; 310 reads of one key, then 4 of another
SELECT dynindex.api('PutItem', '{"TableName": "ci_h", "Item": {"pk": {"S": "hot"}}}') IS NOT NULL AS put;
SELECT times('GetItem', '{"TableName": "ci_h", "Key": {"pk": {"S": "hot"}}, "ConsistentRead": true}', 310) AS served;
SELECT times('GetItem', '{"TableName": "ci_h", "Key": {"pk": {"S": "cold"}}}', 4) AS served;
SELECT rule, rank, key, count FROM dynindex.contributor_insights('ci_h') ORDER BY rule, rank;

-- ---- DISABLE answers DISABLING with the current mode; then DISABLED, unlisted, nothing kept
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_h", "ContributorInsightsAction": "DISABLE", "ContributorInsightsMode": "THROTTLED_KEYS"}');
SELECT ci('DescribeContributorInsights', '{"TableName": "ci_h"}');
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_h", "ContributorInsightsAction": "DISABLE"}');
SELECT count(*) FROM dynindex.contributor_insights('ci_h');
SELECT ci('ListContributorInsights', '{}');
-- enabled again: the counts start from zero, the rules get a new timestamp
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_h", "ContributorInsightsAction": "ENABLE"}');
SELECT count(*) FROM dynindex.contributor_insights('ci_h');
SELECT count(*) FROM dynindex.contributor_insights(NULL);

-- ---- over time: each minute's most counted keys (dynindex.contributor_insights_minutes)
SELECT dynindex.api('CreateTable', '{"TableName": "ci_m", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT ci('UpdateContributorInsights', '{"TableName": "ci_m", "ContributorInsightsAction": "ENABLE"}');
SET dynindex.throughput_test_clock = 3000000;		-- minute 50000 begins
SELECT times('GetItem', '{"TableName": "ci_m", "Key": {"pk": {"S": "a"}}}', 5) + times('GetItem', '{"TableName": "ci_m", "Key": {"pk": {"S": "b"}}}', 2) AS served;
SET dynindex.throughput_test_clock = 3000060.5;		-- minute 50001
SELECT times('GetItem', '{"TableName": "ci_m", "Key": {"pk": {"S": "c"}}}', 3) + times('GetItem', '{"TableName": "ci_m", "Key": {"pk": {"S": "a"}}}', 1) AS served;
SET dynindex.throughput_test_clock = 3000179;		-- minute 50002 (the running one)
SELECT times('GetItem', '{"TableName": "ci_m", "Key": {"pk": {"S": "d"}}}', 1) AS served;
SELECT rule, regexp_replace(rule_name, '[0-9]{13}$', '<ms>') AS rule_name, (extract(epoch FROM minute) / 60)::int AS minute, rank, key, count, max_overcount, total
  FROM dynindex.contributor_insights_minutes('ci_m') ORDER BY rule, minute, rank;
-- since the rule started: the sum of the minutes
SELECT rank, key, count, total FROM dynindex.contributor_insights('ci_m') ORDER BY rank;
-- an hour later: the minutes older than the last 60 are gone, a minute without requests has no row
SET dynindex.throughput_test_clock = 3003660;		-- minute 50061
SELECT times('GetItem', '{"TableName": "ci_m", "Key": {"pk": {"S": "e"}}}', 1) AS served;
SELECT (extract(epoch FROM minute) / 60)::int AS minute, rank, key, count FROM dynindex.contributor_insights_minutes('ci_m') ORDER BY minute, rank;
-- more than ten keys in a minute: the ten most counted (key kN read N times)
SET dynindex.throughput_test_clock = 3003720;		-- minute 50062
SELECT sum(times('GetItem', format('{"TableName": "ci_m", "Key": {"pk": {"S": "k%s"}}}', n), n)) AS served FROM generate_series(1, 12) n;
SET dynindex.throughput_test_clock = 3003780;		-- minute 50063: 50062 is closed
SELECT rank, key, count, total FROM dynindex.contributor_insights_minutes('ci_m') WHERE extract(epoch FROM minute) / 60 = 50062 ORDER BY rank;
-- no table: no rows; a missing table: DynamoDB's error
SELECT count(*) FROM dynindex.contributor_insights_minutes(NULL);
SELECT count(*) FROM dynindex.contributor_insights_minutes('nope');
RESET dynindex.throughput_test_clock;
