-- Throughput enforcement (src/api/throughput.c, src/throttle/, docs/capacity.md):
-- token buckets per table and GSI at the provisioned rate with 300 seconds of
-- burst, on-demand maxima, DynamoDB's exceptions and their ThrottlingReasons,
-- unprocessed batch members, transaction cancellation reasons, metrics.
-- The buckets' clock is frozen (dynindex.throughput_test_clock): a bucket
-- refills only when the test moves the clock, so every count below is exact
-- bucket arithmetic, not timing.
\set VERBOSITY terse
SET dynindex.throughput_test_clock = 1000000;
-- a request's answer, or its error (message and DETAIL) as notices
CREATE FUNCTION try(op text, req text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE msg text; det text;
BEGIN
  RETURN dynindex.api(op, req::jsonb);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%', msg;
  IF det <> '' THEN RAISE NOTICE 'detail: %', det; END IF;
  RETURN NULL;
END $$;
-- send the same request n times: how many were served, how many throttled
CREATE FUNCTION burst(op text, req text, n int, OUT served int, OUT throttled int) LANGUAGE plpgsql AS $$
BEGIN
  served := 0; throttled := 0;
  FOR i IN 1..n LOOP
    BEGIN
      PERFORM dynindex.api(op, req::jsonb);
      served := served + 1;
    EXCEPTION WHEN SQLSTATE 'YD009' OR SQLSTATE 'YD016' THEN
      throttled := throttled + 1;
    END;
  END LOOP;
END $$;
-- the same with the item's key taken from a counter (a different item each time)
CREATE FUNCTION burst_puts(tbl text, n int, extra text DEFAULT '', OUT served int, OUT throttled int) LANGUAGE plpgsql AS $$
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
CREATE FUNCTION tokens(tbl text) RETURNS TABLE(index_name text, read_rate float8, write_rate float8, burst_seconds float8,
  read_tokens numeric, write_tokens numeric) LANGUAGE sql AS $$
  SELECT index_name, read_rate, write_rate, burst_seconds, round(read_tokens::numeric, 3), round(write_tokens::numeric, 3)
    FROM dynindex.throughput_buckets(tbl) $$;

SELECT dynindex.api('CreateTable', '{"TableName": "thr", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 2},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
-- a new bucket is full: 300 seconds of the provisioned rate
SELECT * FROM tokens('thr');
SELECT dynindex.api('PutItem', '{"TableName": "thr", "Item": {"pk": {"S": "a"}, "v": {"S": "x"}}}');

-- ---- reads: 5 RCU hold 1500 units; a strongly consistent GetItem of a small item costs 1
SELECT * FROM burst('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "a"}}, "ConsistentRead": true}', 1600);
SELECT read_tokens FROM tokens('thr');
-- the message DynamoDB sends, with its ThrottlingReasons
SELECT try('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "a"}}}');
SELECT try('Query', '{"TableName": "thr", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}}');
SELECT try('Scan', '{"TableName": "thr"}');
SELECT try('ExecuteStatement', '{"Statement": "SELECT * FROM thr WHERE pk = ''a''"}');
-- two seconds later: 10 units; eventually consistent reads cost 0.5: 20 of them
SET dynindex.throughput_test_clock = 1000002;
SELECT * FROM burst('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "a"}}}', 25);
-- a read is admitted while the bucket is not empty and charged what it consumed:
-- 0.2 s refill 1 unit, a 12 KB item costs 3 (strongly consistent): the bucket goes to -2
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'thr', 'Item', jsonb_build_object('pk', '{"S": "big"}'::jsonb,
  'v', jsonb_build_object('S', repeat('x', 12000))))) IS NOT NULL AS put;
SET dynindex.throughput_test_clock = 1000002.2;
SELECT try('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "big"}}, "ConsistentRead": true, "ProjectionExpression": "pk", "ReturnConsumedCapacity": "TOTAL"}');
SELECT read_tokens FROM tokens('thr');
-- refilled by 0.4 s to 0: still empty; by 0.6 s to 1 unit
SET dynindex.throughput_test_clock = 1000002.6;
SELECT * FROM burst('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "a"}}, "ConsistentRead": true}', 2);
SET dynindex.throughput_test_clock = 1000002.8;
SELECT * FROM burst('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "a"}}, "ConsistentRead": true}', 2);

-- ---- writes: 2 WCU hold 600 units: full again 0.5 s after the first PutItem, then 12 for
-- the 12 KB item and 0.8 s of refill: 589.6 units, 590 writes

SELECT * FROM burst_puts('thr', 600);
SELECT try('PutItem', '{"TableName": "thr", "Item": {"pk": {"S": "z"}}}');
SELECT try('UpdateItem', '{"TableName": "thr", "Key": {"pk": {"S": "z"}}, "UpdateExpression": "SET v = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}');
SELECT try('DeleteItem', '{"TableName": "thr", "Key": {"pk": {"S": "z"}}}');
-- reads have their own bucket
SELECT try('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "a"}}, "ConsistentRead": true}') ->> 'Item' IS NOT NULL AS read_served;
-- a throttled write did nothing (read without enforcement: the read bucket is empty)
SET dynindex.enforce_throughput = off;
SELECT dynindex.api('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "k590"}}}') ? 'Item' AS k590_written,
       dynindex.api('GetItem', '{"TableName": "thr", "Key": {"pk": {"S": "k591"}}}') ? 'Item' AS k591_written;
RESET dynindex.enforce_throughput;

-- ---- UpdateTable: the new rate applies at once; the tokens (here 0.4 units owed) stay
SELECT dynindex.api('UpdateTable', '{"TableName": "thr", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 1000}}') IS NOT NULL AS updated;
SELECT write_rate, write_tokens FROM tokens('thr');
-- 10 ms at 1000 WCU: 10 units, minus the 0.4 owed: 10 writes (at 2 WCU it would have been none)
SET dynindex.throughput_test_clock = 1000002.81;
SELECT * FROM burst_puts('thr', 15);

-- ---- enforcement off (a setting, per database with ALTER DATABASE ... SET): served, and not charged
SET dynindex.enforce_throughput = off;
SELECT * FROM burst_puts('thr', 5);
SELECT write_tokens FROM tokens('thr');
RESET dynindex.enforce_throughput;
SELECT * FROM burst_puts('thr', 5);

-- ---- failed conditional writes consume too (the existing item's size: 1 unit each)
SET dynindex.throughput_test_clock = 1000002.8136;
SELECT write_tokens FROM tokens('thr');
SELECT try('PutItem', '{"TableName": "thr", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT try('PutItem', '{"TableName": "thr", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT write_tokens FROM tokens('thr');

-- ---- GSIs: a GSI without write capacity throttles writes to its base table
SELECT dynindex.api('CreateTable', '{"TableName": "thr_g", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 1000, "WriteCapacityUnits": 1000},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}]}') IS NOT NULL AS created;
SELECT * FROM tokens('thr_g');
-- each write enters the GSI: 1 unit of its 300
SELECT * FROM burst_puts('thr_g', 310, ', "g": {"S": "G"}');
SELECT try('PutItem', '{"TableName": "thr_g", "Item": {"pk": {"S": "nog"}}}');
SELECT write_tokens FROM tokens('thr_g') WHERE index_name IS NULL;
-- reads of the GSI use its read bucket: 1 RCU, 300 units, an eventually consistent Query of small entries 0.5
SELECT * FROM burst('Query', '{"TableName": "thr_g", "IndexName": "byG", "KeyConditionExpression": "g = :g",
  "ExpressionAttributeValues": {":g": {"S": "none"}}}', 610);
SELECT try('Query', '{"TableName": "thr_g", "IndexName": "byG", "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "none"}}}');
-- the table's own reads are not the GSI's
SELECT try('GetItem', '{"TableName": "thr_g", "Key": {"pk": {"S": "k1"}}}') ? 'Item' AS table_read_served;
-- UpdateTable of the GSI's capacity applies at once: 100 ms at 100 WCU, 10 units; each of
-- these writes moves its item from g = G to g = H, a delete and a put in the index: 2 units, 5 writes
SELECT dynindex.api('UpdateTable', '{"TableName": "thr_g", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byG",
  "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 100}}}]}') IS NOT NULL AS updated;
SET dynindex.throughput_test_clock = 1000002.912;
SELECT * FROM burst_puts('thr_g', 12, ', "g": {"S": "H"}');

-- ---- on-demand: OnDemandThroughput's maximum per second, with one second of burst; else the table quota (40,000)
SELECT dynindex.api('CreateTable', '{"TableName": "thr_od", "BillingMode": "PAY_PER_REQUEST",
  "OnDemandThroughput": {"MaxReadRequestUnits": 5, "MaxWriteRequestUnits": 3},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT * FROM tokens('thr_od');
SELECT * FROM burst_puts('thr_od', 5);
SELECT try('PutItem', '{"TableName": "thr_od", "Item": {"pk": {"S": "x"}}}');
-- in a transaction: a ThrottlingError reason
SELECT try('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "thr_od", "Item": {"pk": {"S": "t1"}}}}]}');
SELECT * FROM burst('GetItem', '{"TableName": "thr_od", "Key": {"pk": {"S": "k1"}}, "ConsistentRead": true}', 7);
SELECT try('GetItem', '{"TableName": "thr_od", "Key": {"pk": {"S": "k1"}}}');
-- raising the maximum applies at once: 0.1 s at 100 units
SELECT dynindex.api('UpdateTable', '{"TableName": "thr_od", "OnDemandThroughput": {"MaxReadRequestUnits": 100}}') IS NOT NULL AS updated;
SET dynindex.throughput_test_clock = 1000003.012;
SELECT * FROM burst('GetItem', '{"TableName": "thr_od", "Key": {"pk": {"S": "k1"}}, "ConsistentRead": true}', 12);
-- without a maximum: the table quota of DescribeLimits
SELECT dynindex.api('CreateTable', '{"TableName": "thr_od2", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT * FROM tokens('thr_od2');

-- ---- batches: what finds an empty bucket is left unprocessed, key by key
SELECT dynindex.api('CreateTable', '{"TableName": "thr_b", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') IS NOT NULL AS created;
SELECT * FROM burst_puts('thr_b', 298);
-- two write units left: the first two writes are processed, the others come back
SELECT try('BatchWriteItem', '{"RequestItems": {"thr_b": [
  {"PutRequest": {"Item": {"pk": {"S": "b1"}}}}, {"PutRequest": {"Item": {"pk": {"S": "b2"}}}},
  {"PutRequest": {"Item": {"pk": {"S": "b3"}}}}, {"DeleteRequest": {"Key": {"pk": {"S": "k1"}}}}],
  "thr": [{"PutRequest": {"Item": {"pk": {"S": "b9"}}}}]}, "ReturnConsumedCapacity": "TOTAL"}');
-- nothing processed for want of throughput: the exception
SELECT try('BatchWriteItem', '{"RequestItems": {"thr_b": [{"PutRequest": {"Item": {"pk": {"S": "b4"}}}}]}}');
-- reads: 300 units, 0.5 per eventually consistent key; drain to 1 unit
SELECT * FROM burst('GetItem', '{"TableName": "thr_b", "Key": {"pk": {"S": "k1"}}}', 598);
SELECT try('BatchGetItem', '{"RequestItems": {"thr_b": {"Keys": [{"pk": {"S": "k1"}}, {"pk": {"S": "k2"}}, {"pk": {"S": "k3"}}],
  "ProjectionExpression": "pk"}}, "ReturnConsumedCapacity": "TOTAL"}');
SELECT try('BatchGetItem', '{"RequestItems": {"thr_b": {"Keys": [{"pk": {"S": "k1"}}], "ConsistentRead": true}}}');

-- ---- transactions: a throttled table cancels them, with a reason per action
SELECT try('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "thr_g", "Item": {"pk": {"S": "t1"}}}},
  {"Put": {"TableName": "thr_b", "Item": {"pk": {"S": "t2"}}}}]}');
SELECT try('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "thr_b", "Key": {"pk": {"S": "k1"}}}},
  {"Get": {"TableName": "thr_g", "Key": {"pk": {"S": "k1"}}}}]}');

-- ---- metrics: ReadThrottleEvents, WriteThrottleEvents (per table and GSI), ThrottledRequests
SELECT table_name, index_name, read_throttle_events, write_throttle_events, throttled_requests
  FROM dynindex.table_metrics WHERE table_name LIKE 'thr%' ORDER BY 1, 2 NULLS FIRST;
RESET dynindex.throughput_test_clock;
