-- UpdateTable of provisioned throughput: an unchanged value is refused with
-- DynamoDB's message; the response shows the table as DynamoDB does at that
-- moment (UPDATING, the values in force until the change completes, the time
-- of the increase or decrease); DescribeTable then shows the new values and
-- NumberOfDecreasesToday.
SELECT dynindex.api('CreateTable', '{"TableName": "tp_t", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}, "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}}]}')
  ->'TableDescription'->'ProvisionedThroughput' AS created;

-- timestamps vary: show whether they are there and how they compare
CREATE FUNCTION tp_view(d jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT (d->'ProvisionedThroughput') - 'LastIncreaseDateTime' - 'LastDecreaseDateTime'
    || jsonb_build_object('increased', d->'ProvisionedThroughput' ? 'LastIncreaseDateTime',
                          'decreased', d->'ProvisionedThroughput' ? 'LastDecreaseDateTime',
                          'status', d->'TableStatus')
$$;

-- unchanged: refused (also with BillingMode PROVISIONED repeated)
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t", "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
-- BillingMode PROVISIONED alone
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t", "BillingMode": "PROVISIONED"}');
-- nothing to change
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t"}');
-- no table named: the control-plane operations' required-parameter form
SELECT dynindex.api('UpdateTable', '{"ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
-- an index's unchanged throughput
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "gsi1",
  "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}}}]}');
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "gsi1",
  "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 3}}}]}')->'TableDescription'->>'TableStatus' AS gsi_update;

-- a partial increase (only WriteCapacityUnits): the response still shows 5/5
SELECT tp_view(dynindex.api('UpdateTable', '{"TableName": "tp_t", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 8}}')->'TableDescription') AS response;
SELECT tp_view(dynindex.api('DescribeTable', '{"TableName": "tp_t"}')->'Table') AS described;
-- a decrease: LastDecreaseDateTime, and NumberOfDecreasesToday counts it once it is done
SELECT tp_view(dynindex.api('UpdateTable', '{"TableName": "tp_t", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 8}}')->'TableDescription') AS response;
SELECT tp_view(dynindex.api('DescribeTable', '{"TableName": "tp_t"}')->'Table') AS described;
SELECT tp_view(dynindex.api('UpdateTable', '{"TableName": "tp_t", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}')->'TableDescription') AS response;
SELECT tp_view(dynindex.api('DescribeTable', '{"TableName": "tp_t"}')->'Table') AS described;
-- the times are those of the changes, in seconds
SELECT (d->'LastDecreaseDateTime')::numeric >= (d->'LastIncreaseDateTime')::numeric AS decrease_after_increase,
       abs((d->'LastDecreaseDateTime')::numeric - extract(epoch FROM now())) < 60 AS recent
FROM (SELECT dynindex.api('DescribeTable', '{"TableName": "tp_t"}')->'Table'->'ProvisionedThroughput' AS d) s;
-- now unchanged at 1/1
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');
-- a switch to on-demand is not a throughput change; on-demand shows 0/0
SELECT tp_view(dynindex.api('UpdateTable', '{"TableName": "tp_t", "BillingMode": "PAY_PER_REQUEST"}')->'TableDescription') AS response;
SELECT dynindex.api('UpdateTable', '{"TableName": "tp_t", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');
SELECT dynindex.api('DeleteTable', '{"TableName": "tp_t"}')->'TableDescription'->>'TableStatus' AS deleted;
