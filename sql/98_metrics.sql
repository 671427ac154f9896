-- Metrics: dynindex.table_metrics, dynindex.metrics(), dynindex.reset_metrics()
-- (docs/monitoring.md).  Counters are per table and index, as CloudWatch's
-- TableName / GlobalSecondaryIndexName dimensions, and count whether or not
-- the request asked for ReturnConsumedCapacity.
\set VERBOSITY terse
SELECT dynindex.reset_metrics() >= 0 AS reset;
SELECT dynindex.api('CreateTable', '{"TableName": "met_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
    {"AttributeName": "l", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "bylsi", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "l", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "bygsi", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') -> 'TableDescription' -> 'TableStatus';
-- m(): the view's rows of met_t (one for the table, one per index), counters that moved
CREATE FUNCTION m(tbl text DEFAULT 'met_t') RETURNS TABLE (idx text, type text, rcu float8, wcu float8,
    returned bigint, ccf bigint, user_err bigint, sys_err bigint, ok bigint, ttl bigint,
    gsi_changes bigint, gsi_queue bigint) LANGUAGE sql AS $$
  SELECT coalesce(index_name, '(table)'), index_type, consumed_read_capacity_units, consumed_write_capacity_units,
         returned_item_count, conditional_check_failed_requests, user_errors, system_errors,
         successful_requests, time_to_live_deleted_item_count, gsi_replicated_changes, gsi_queue_depth
    FROM dynindex.table_metrics WHERE table_name = tbl ORDER BY index_name NULLS FIRST $$;
-- a new table: one row for it and one per index, all zero but the CreateTable request
SELECT * FROM m();

-- ---------------------------------------------------------------- capacity
-- PutItem of a new item in both indexes: 1 WCU on the table, 1 on the LSI, 1 on the GSI
SELECT dynindex.api('PutItem', '{"TableName": "met_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}, "l": {"S": "x"}, "g": {"S": "y"}}}');
-- a 2.5 KB item outside both indexes: 3 WCU on the table only
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'met_t', 'Item',
  jsonb_build_object('pk', '{"S": "a"}'::jsonb, 'sk', '{"S": "2"}'::jsonb, 'pad', jsonb_build_object('S', repeat('p', 2500)))));
SELECT idx, wcu, ok FROM m();
-- ReturnConsumedCapacity INDEXES reports what the same kind of write adds to the counters (1 / 1 / 1)
SELECT dynindex.api('PutItem', '{"TableName": "met_t", "ReturnConsumedCapacity": "INDEXES", "Item": {"pk": {"S": "a"}, "sk": {"S": "3"}, "l": {"S": "x"}, "g": {"S": "y"}}}') -> 'ConsumedCapacity';
SELECT idx, wcu FROM m();
-- GetItem: consistent 1 RCU, eventually consistent 0.5 (the 2.5 KB item: still one 4 KB unit)
SELECT dynindex.api('GetItem', '{"TableName": "met_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "2"}}, "ConsistentRead": true}') -> 'Item' -> 'sk';
SELECT dynindex.api('GetItem', '{"TableName": "met_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}}}') -> 'Item' -> 'sk';
SELECT idx, rcu FROM m() WHERE idx = '(table)';
-- Query on the LSI: the index is charged; ReturnedItemCount counts the items returned on the table's row
SELECT dynindex.api('Query', '{"TableName": "met_t", "IndexName": "bylsi", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}}') -> 'Count';
SELECT idx, rcu, returned FROM m();
-- Scan: 3 items returned; Select COUNT returns none
SELECT dynindex.api('Scan', '{"TableName": "met_t"}') -> 'Count';
SELECT dynindex.api('Scan', '{"TableName": "met_t", "Select": "COUNT"}') -> 'Count';
SELECT idx, returned FROM m() WHERE idx = '(table)';
-- BatchWriteItem and a transaction (2x): deleting the 2.5 KB item costs 3, the transaction's delete 2 x 1 on the table and both indexes
SELECT dynindex.api('BatchWriteItem', '{"RequestItems": {"met_t": [{"DeleteRequest": {"Key": {"pk": {"S": "a"}, "sk": {"S": "2"}}}}]}}') -> 'UnprocessedItems';
SELECT dynindex.api('TransactWriteItems', '{"TransactItems": [{"Delete": {"TableName": "met_t", "Key": {"pk": {"S": "a"}, "sk": {"S": "3"}}}}]}');
SELECT idx, wcu FROM m();

-- ---------------------------------------------------------------- errors
-- a failed conditional write: ConditionalCheckFailedRequests (not a UserError), and it consumes 1 WCU
SELECT dynindex.api('PutItem', '{"TableName": "met_t", "Item": {"pk": {"S": "a"}, "sk": {"S": "1"}}, "ConditionExpression": "attribute_not_exists(pk)"}');
SELECT idx, wcu, ccf, user_err, sys_err FROM m() WHERE idx = '(table)';
-- a ValidationException naming the table: a UserError of the table
SELECT dynindex.api('GetItem', '{"TableName": "met_t", "Key": {"pk": {"S": "a"}}}');
SELECT idx, ccf, user_err, sys_err FROM m() WHERE idx = '(table)';
-- an error that is not DynamoDB's (here a trigger on the storage relation fails the write): a SystemError
SELECT storage AS met_storage FROM dynindex.tables WHERE table_name = 'met_t' \gset
CREATE FUNCTION met_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk on fire'; END $$;
CREATE TRIGGER met_boom BEFORE INSERT ON :met_storage FOR EACH ROW EXECUTE FUNCTION met_boom();
SELECT dynindex.api('PutItem', '{"TableName": "met_t", "Item": {"pk": {"S": "boom"}, "sk": {"S": "1"}}}');
DROP TRIGGER met_boom ON :met_storage;
DROP FUNCTION met_boom();
SELECT idx, ccf, user_err, sys_err FROM m() WHERE idx = '(table)';
-- requests naming no table, or a table that has no counters, count on the account's row (table_name NULL)
SELECT dynindex.api('GetItem', '{"TableName": "met_nope", "Key": {"pk": {"S": "a"}}}');
SELECT dynindex.api('ListTables', '{"Limit": 0}');
SELECT user_errors, system_errors FROM dynindex.metrics() WHERE table_name IS NULL;
SELECT count(*) AS rows_of_unknown_table FROM dynindex.metrics() WHERE table_name = 'met_nope';

-- ---------------------------------------------------------------- latency
SELECT successful_requests, successful_request_latency_ms_sum > 0 AS latency_measured
  FROM dynindex.table_metrics WHERE table_name = 'met_t' AND index_name IS NULL;

-- ---------------------------------------------------------------- GSI replication
SELECT dynindex.wait_for_indexes('met_t', '60 seconds');
-- the changes of the five writes were applied (a batch counts a key once), each some time after it was queued; nothing is queued now
SELECT gsi_replicated_changes BETWEEN 1 AND 5 AS replicated, gsi_replication_latency_ms_sum > 0 AS latency,
       gsi_replication_latency_ms_last > 0 AS last_latency, gsi_queue_depth,
       gsi_oldest_change_age_seconds, gsi_backfilling
  FROM dynindex.table_metrics WHERE table_name = 'met_t' AND index_type = 'GSI';
-- LSIs and the table have no replication columns
SELECT coalesce(index_name, '(table)') AS idx, gsi_replicated_changes, gsi_queue_depth, gsi_oldest_change_age_seconds
  FROM dynindex.table_metrics WHERE table_name = 'met_t' AND index_type IS DISTINCT FROM 'GSI' ORDER BY 1;

-- ---------------------------------------------------------------- TTL
SELECT dynindex.api('UpdateTimeToLive', '{"TableName": "met_t", "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "exp"}}');
-- two items expired a minute ago, one expiring in an hour
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'met_t', 'Item', jsonb_build_object('pk', '{"S": "t"}'::jsonb,
  'sk', jsonb_build_object('S', s::text), 'exp', jsonb_build_object('N', (extract(epoch FROM now())::bigint + d)::text))))
  FROM (VALUES (1, -60), (2, -60), (3, 3600)) v(s, d);
SELECT dynindex.expire_items('met_t');
SELECT idx, ttl FROM m() WHERE idx = '(table)';

-- ---------------------------------------------------------------- lifetime
-- counters follow the table's name, as CloudWatch's TableName dimension: kept across DeleteTable / CreateTable
SELECT dynindex.api('DeleteTable', '{"TableName": "met_t"}') -> 'TableDescription' -> 'TableStatus';
SELECT count(*) AS view_rows_of_deleted_table FROM dynindex.table_metrics WHERE table_name = 'met_t';
SELECT dynindex.api('CreateTable', '{"TableName": "met_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}') -> 'TableDescription' -> 'TableStatus';
SELECT idx, type, wcu, ccf, ttl FROM m();
-- reset_metrics(table) clears one table's rows (here the table and its two former indexes), reset_metrics() all
SELECT dynindex.reset_metrics('met_t');
SELECT * FROM m();
SELECT dynindex.reset_metrics() >= 1 AS reset_all;
SELECT count(*) FROM dynindex.metrics();
-- only superusers (and roles granted it) may reset
CREATE ROLE met_reader;
GRANT USAGE ON SCHEMA dynindex TO met_reader;
SET ROLE met_reader;
SELECT dynindex.reset_metrics();
-- the counters name every table: an ordinary role reads neither the function nor the view
SELECT count(*) FROM dynindex.metrics();
SELECT count(*) FROM dynindex.table_metrics;
RESET ROLE;
-- a monitoring role (pg_monitor) or an administrator (dynindex_admin) reads both, but cannot reset
GRANT pg_monitor TO met_reader;
SET ROLE met_reader;
SELECT true AS metrics_readable FROM (SELECT count(*) FROM dynindex.metrics()) s;
SELECT count(*) >= 1 AS view_readable FROM dynindex.table_metrics;
SELECT dynindex.reset_metrics();
RESET ROLE;
REVOKE pg_monitor FROM met_reader;
GRANT dynindex_admin TO met_reader;
SET ROLE met_reader;
SELECT count(*) >= 1 AS view_readable FROM dynindex.table_metrics;
RESET ROLE;
REVOKE dynindex_admin FROM met_reader;
REVOKE USAGE ON SCHEMA dynindex FROM met_reader;
DROP ROLE met_reader;
-- dynindex.metrics = off: nothing is counted
SELECT dynindex.api('CreateTable', '{"TableName": "met_t2", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}') -> 'TableDescription' -> 'TableStatus';
SET dynindex.metrics = off;
SELECT dynindex.api('PutItem', '{"TableName": "met_t2", "Item": {"pk": {"S": "a"}}}');
SELECT idx, wcu, ok FROM m('met_t2');
RESET dynindex.metrics;
SELECT dynindex.api('PutItem', '{"TableName": "met_t2", "Item": {"pk": {"S": "a"}}}');
SELECT idx, wcu, ok FROM m('met_t2');
SELECT dynindex.api('DeleteTable', '{"TableName": "met_t2"}') -> 'TableDescription' -> 'TableStatus';

SELECT dynindex.api('DeleteTable', '{"TableName": "met_t"}') -> 'TableDescription' -> 'TableStatus';
DROP FUNCTION m(text);
