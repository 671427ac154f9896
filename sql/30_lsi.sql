-- Local secondary indexes: CreateTable validation, maintenance on every write
-- path, Query/Scan on an LSI, item collections, verify_indexes.
\set VERBOSITY terse
-- index entries of an LSI, in index order (ipk, isk, then base key)
CREATE FUNCTION lsi_entries(tbl text, idx text) RETURNS SETOF jsonb LANGUAGE plpgsql AS $$
DECLARE s text;
BEGIN
  SELECT storage INTO s FROM dynindex.indexes WHERE table_name = tbl AND index_name = idx;
  RETURN QUERY EXECUTE format('SELECT item FROM %s ORDER BY ipk, isk, pk, sk', s);
END $$;
-- a CreateTable request with the given LocalSecondaryIndexes and extra definitions
CREATE FUNCTION lsi_table(lsis text, extra_defs text DEFAULT '', hash_only boolean DEFAULT false) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('CreateTable', ('{"TableName":"LsiV","BillingMode":"PAY_PER_REQUEST",'
    || '"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"a","AttributeType":"S"}' || extra_defs || '],'
    || CASE WHEN hash_only THEN '"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],'
            ELSE '"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],' END
    || '"LocalSecondaryIndexes":' || lsis || '}')::jsonb)
$$;

-- ---------------------------------------------------------------- CreateTable validation
-- the table needs a sort key
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]', ',{"AttributeName":"x","AttributeType":"S"}', true);
SELECT lsi_table('[]');
-- at most 5
SELECT lsi_table('[' || string_agg(format('{"IndexName":"ix%s","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}', g), ',') || ']') FROM generate_series(1, 6) g;
-- same hash key as the table
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"a","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
-- exactly one RANGE attribute
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]', ',{"AttributeName":"x","AttributeType":"S"}');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"pk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"a","KeyType":"RANGE"},{"AttributeName":"pk","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"},{"AttributeName":"sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
-- the RANGE attribute must be defined (with a scalar type)
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"b","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]', ',{"AttributeName":"b","AttributeType":"BOOL"}');
-- every definition must be used
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]', ',{"AttributeName":"b","AttributeType":"S"}');
-- names
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}},{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT lsi_table('[{"IndexName":"ix!","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
SELECT lsi_table('[{"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]');
-- projections
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}]}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"SOME"}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL","NonKeyAttributes":["x"]}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY","NonKeyAttributes":["x"]}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":[]}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["' || repeat('n', 256) || '"]}}]');
SELECT lsi_table('[{"IndexName":"ix1","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":[' || string_agg('"n' || g || '"', ',') || ']}}]') FROM generate_series(1, 21) g;
-- at most 100 projected non-key attributes over all indexes (5 LSIs x 20 + 1 GSI)
SELECT dynindex.api('CreateTable', ('{"TableName":"LsiV","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"a","AttributeType":"S"}],'
  || '"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"LocalSecondaryIndexes":['
  || (SELECT string_agg(format('{"IndexName":"ix%s","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":[%s]}}',
                               i, (SELECT string_agg('"n' || g || '"', ',') FROM generate_series(1, 20) g)), ',') FROM generate_series(1, 5) i)
  || '],"GlobalSecondaryIndexes":[{"IndexName":"gx1","KeySchema":[{"AttributeName":"a","KeyType":"HASH"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["z"]}}]}')::jsonb);
-- exactly 5 LSIs with 100 projected attributes is fine
SELECT lsi_table('[' || (SELECT string_agg(format('{"IndexName":"ix%s","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"a","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":[%s]}}',
                               i, (SELECT string_agg('"n' || g || '"', ',') FROM generate_series(1, 20) g)), ',') FROM generate_series(1, 5) i) || ']') IS NOT NULL AS created;
SELECT count(*) FROM dynindex.indexes WHERE table_name = 'LsiV';
SELECT dynindex.api('DeleteTable', '{"TableName":"LsiV"}') IS NOT NULL;
SELECT count(*) FROM dynindex.indexes WHERE table_name = 'LsiV';

-- ---------------------------------------------------------------- the Thread / LastPostIndex example
SELECT dynindex.api('CreateTable', '{"TableName":"Thread","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"ForumName","AttributeType":"S"},{"AttributeName":"Subject","AttributeType":"S"},{"AttributeName":"LastPostDateTime","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"ForumName","KeyType":"HASH"},{"AttributeName":"Subject","KeyType":"RANGE"}],
  "LocalSecondaryIndexes":[{"IndexName":"LastPostIndex","KeySchema":[{"AttributeName":"ForumName","KeyType":"HASH"},{"AttributeName":"LastPostDateTime","KeyType":"RANGE"}],
                            "Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["Replies"]}}]}') -> 'TableDescription' -> 'LocalSecondaryIndexes';
SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 1"},"LastPostDateTime":{"S":"2015-03-15T17:24:31"},"Replies":{"N":"12"},"Tags":{"SS":["largeobjects","multipart upload"]}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Thread":[
  {"PutRequest":{"Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 2"},"LastPostDateTime":{"S":"2015-03-11T06:53:00"},"Replies":{"N":"3"},"Tags":{"SS":["encryption"]}}}},
  {"PutRequest":{"Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 3"},"LastPostDateTime":{"S":"2015-03-18T09:01:11"},"Replies":{"N":"0"},"Tags":{"SS":["acl"]}}}},
  {"PutRequest":{"Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 4"},"LastPostDateTime":{"S":"2015-03-18T09:01:11"},"Replies":{"N":"7"}}}},
  {"PutRequest":{"Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 5"},"LastPostDateTime":{"S":"2015-02-01T00:00:00"},"Replies":{"N":"1"}}}},
  {"PutRequest":{"Item":{"ForumName":{"S":"EC2"},"Subject":{"S":"EC2 Thread 1"},"LastPostDateTime":{"S":"2015-03-16T00:00:00"},"Replies":{"N":"2"}}}},
  {"PutRequest":{"Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 draft"},"Replies":{"N":"0"}}}}]}}');
-- the index holds keys + Replies; the draft (no LastPostDateTime) is not in it (sparse)
SELECT lsi_entries('Thread', 'LastPostIndex');
-- threads of forum S3 with a post in March 2015, newest first, strongly consistent;
-- equal LastPostDateTime come in base key order (backwards here)
SELECT dynindex.api('Query', '{"TableName":"Thread","IndexName":"LastPostIndex","ConsistentRead":true,"ScanIndexForward":false,
  "KeyConditionExpression":"ForumName = :f AND LastPostDateTime BETWEEN :from AND :to",
  "ExpressionAttributeValues":{":f":{"S":"S3"},":from":{"S":"2015-03-01"},":to":{"S":"2015-03-31"}},"ReturnConsumedCapacity":"TOTAL"}');
-- Tags is not projected: fetched from the base item
SELECT dynindex.api('Query', '{"TableName":"Thread","IndexName":"LastPostIndex","ConsistentRead":true,"ScanIndexForward":false,
  "KeyConditionExpression":"ForumName = :f AND LastPostDateTime > :from",
  "ProjectionExpression":"Subject, Replies, Tags","ExpressionAttributeValues":{":f":{"S":"S3"},":from":{"S":"2015-03-01"}}}');
SELECT dynindex.api('Query', '{"TableName":"Thread","IndexName":"LastPostIndex","Select":"ALL_ATTRIBUTES",
  "KeyConditionExpression":"ForumName = :f AND begins_with(LastPostDateTime, :d)","ExpressionAttributeValues":{":f":{"S":"S3"},":d":{"S":"2015-03-18"}}}');
SELECT dynindex.api('Query', '{"TableName":"Thread","IndexName":"LastPostIndex","Select":"COUNT",
  "KeyConditionExpression":"ForumName = :f","ExpressionAttributeValues":{":f":{"S":"S3"}}}');
SELECT dynindex.api('Query', '{"TableName":"Thread","IndexName":"LastPostIndex","Select":"SPECIFIC_ATTRIBUTES","ProjectionExpression":"Tags",
  "KeyConditionExpression":"ForumName = :f AND LastPostDateTime < :d","ExpressionAttributeValues":{":f":{"S":"S3"},":d":{"S":"2015-03-12"}}}');
-- paging: LastEvaluatedKey = table keys + LSI sort key; ties stay in base key order
SELECT dynindex.api('Query', '{"TableName":"Thread","IndexName":"LastPostIndex","Limit":3,
  "KeyConditionExpression":"ForumName = :f","ExpressionAttributeValues":{":f":{"S":"S3"}}}');
SELECT dynindex.api('Query', '{"TableName":"Thread","IndexName":"LastPostIndex","Limit":3,
  "ExclusiveStartKey":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 3"},"LastPostDateTime":{"S":"2015-03-18T09:01:11"}},
  "KeyConditionExpression":"ForumName = :f","ExpressionAttributeValues":{":f":{"S":"S3"}}}');
-- Scan of the LSI: only indexed items, projected attributes
SELECT dynindex.api('Scan', '{"TableName":"Thread","IndexName":"LastPostIndex","ConsistentRead":true}') -> 'Count';
SELECT dynindex.api('Scan', '{"TableName":"Thread","IndexName":"LastPostIndex","ProjectionExpression":"Subject, Tags","FilterExpression":"Replies > :z","ExpressionAttributeValues":{":z":{"N":"5"}}}');

-- ---------------------------------------------------------------- maintenance on every write path
-- UpdateItem moves the entry to the new sort key, REMOVE takes it out, SET brings it back
SELECT dynindex.api('UpdateItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 5"}},"UpdateExpression":"SET LastPostDateTime = :t, Replies = Replies + :one","ExpressionAttributeValues":{":t":{"S":"2015-04-01T00:00:00"},":one":{"N":"1"}}}');
SELECT e -> 'Subject' ->> 'S' AS subject, e -> 'LastPostDateTime' ->> 'S' AS last_post, e -> 'Replies' ->> 'N' AS replies FROM lsi_entries('Thread', 'LastPostIndex') e;
SELECT dynindex.api('UpdateItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 5"}},"UpdateExpression":"REMOVE LastPostDateTime"}');
SELECT count(*) FROM lsi_entries('Thread', 'LastPostIndex') e WHERE e -> 'Subject' ->> 'S' = 'S3 Thread 5';
SELECT dynindex.api('UpdateItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 draft"}},"UpdateExpression":"SET LastPostDateTime = :t","ExpressionAttributeValues":{":t":{"S":"2015-05-01T00:00:00"}}}');
-- a non-projected attribute changes: the entry stays the same
SELECT dynindex.api('UpdateItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 draft"}},"UpdateExpression":"SET Tags = :t","ExpressionAttributeValues":{":t":{"SS":["new"]}}}');
SELECT e -> 'Subject' ->> 'S' AS subject, e -> 'LastPostDateTime' ->> 'S' AS last_post, e ? 'Tags' AS has_tags FROM lsi_entries('Thread', 'LastPostIndex') e;
-- DeleteItem and BatchWriteItem deletes remove entries; a conditional write that fails changes nothing
SELECT dynindex.api('DeleteItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 draft"}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Thread":[{"DeleteRequest":{"Key":{"ForumName":{"S":"EC2"},"Subject":{"S":"EC2 Thread 1"}}}}]}}');
SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 1"},"LastPostDateTime":{"S":"2016-01-01"}},"ConditionExpression":"attribute_not_exists(Subject)"}');
SELECT e -> 'Subject' ->> 'S' AS subject, e -> 'LastPostDateTime' ->> 'S' AS last_post FROM lsi_entries('Thread', 'LastPostIndex') e;
-- PutItem replacing an item without the LSI key removes its entry
SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 4"},"Replies":{"N":"8"}}}');
SELECT count(*) FROM lsi_entries('Thread', 'LastPostIndex') e WHERE e -> 'Subject' ->> 'S' = 'S3 Thread 4';

-- ---------------------------------------------------------------- LSI key values: type and empty checks, nothing written
SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"ForumName":{"S":"S3"},"Subject":{"S":"bad"},"LastPostDateTime":{"N":"2015"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"ForumName":{"S":"S3"},"Subject":{"S":"bad"},"LastPostDateTime":{"S":""}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 1"}},"UpdateExpression":"SET LastPostDateTime = :n","ExpressionAttributeValues":{":n":{"N":"1"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 1"}},"UpdateExpression":"SET LastPostDateTime = :n","ExpressionAttributeValues":{":n":{"SS":["a"]}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Thread":[
  {"PutRequest":{"Item":{"ForumName":{"S":"S3"},"Subject":{"S":"ok"},"LastPostDateTime":{"S":"2015-06-01"}}}},
  {"PutRequest":{"Item":{"ForumName":{"S":"S3"},"Subject":{"S":"bad"},"LastPostDateTime":{"B":"AAE="}}}}]}}');
SELECT dynindex.api('GetItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"ok"}}}');
SELECT dynindex.api('GetItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"S3 Thread 1"}},"ProjectionExpression":"LastPostDateTime"}');
SELECT * FROM dynindex.verify_indexes('Thread');

-- ---------------------------------------------------------------- projections: KEYS_ONLY, INCLUDE, ALL
SELECT dynindex.api('CreateTable', '{"TableName":"Proj","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"s","AttributeType":"N"},{"AttributeName":"n","AttributeType":"N"},{"AttributeName":"b","AttributeType":"B"}],
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"s","KeyType":"RANGE"}],
  "LocalSecondaryIndexes":[
    {"IndexName":"keys","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"n","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}},
    {"IndexName":"incl","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"n","KeyType":"RANGE"}],"Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["x","m"]}},
    {"IndexName":"all","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"b","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL;
SELECT dynindex.api('PutItem', '{"TableName":"Proj","Item":{"p":{"S":"k"},"s":{"N":"1"},"n":{"N":"-5.5"},"b":{"B":"AQI="},"x":{"S":"xx"},"y":{"S":"yy"},"m":{"M":{"z":{"L":[{"N":"1"}]}}}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Proj","Item":{"p":{"S":"k"},"s":{"N":"2"},"n":{"N":"10"},"y":{"S":"only n"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"Proj","Item":{"p":{"S":"k"},"s":{"N":"3"},"n":{"N":"-100"},"b":{"B":"AA=="}}}');
SELECT 'keys' AS idx, lsi_entries('Proj', 'keys') UNION ALL SELECT 'incl', lsi_entries('Proj', 'incl') UNION ALL SELECT 'all', lsi_entries('Proj', 'all');
-- numeric LSI sort key in numeric order; binary in byte order
SELECT dynindex.api('Query', '{"TableName":"Proj","IndexName":"keys","KeyConditionExpression":"p = :p AND n >= :lo","ExpressionAttributeValues":{":p":{"S":"k"},":lo":{"N":"-6"}}}');
SELECT dynindex.api('Query', '{"TableName":"Proj","IndexName":"incl","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"k"}},"ProjectionExpression":"s, y, m.z[0]"}');
SELECT dynindex.api('Query', '{"TableName":"Proj","IndexName":"all","KeyConditionExpression":"p = :p","ExpressionAttributeValues":{":p":{"S":"k"}},"Select":"ALL_PROJECTED_ATTRIBUTES"}');
SELECT dynindex.api('PutItem', '{"TableName":"Proj","Item":{"p":{"S":"k"},"s":{"N":"4"},"b":{"B":""}}}');
SELECT * FROM dynindex.verify_indexes('Proj') ORDER BY 1;

-- ---------------------------------------------------------------- item collections
-- ReturnItemCollectionMetrics=SIZE, on every write, only for tables with an LSI
SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"ForumName":{"S":"S3"},"Subject":{"S":"m1"},"LastPostDateTime":{"S":"2015-07-01"}},"ReturnItemCollectionMetrics":"SIZE"}');
SELECT dynindex.api('UpdateItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"m1"}},"UpdateExpression":"SET Replies = :z","ExpressionAttributeValues":{":z":{"N":"0"}},"ReturnItemCollectionMetrics":"SIZE","ReturnValues":"UPDATED_NEW"}');
SELECT dynindex.api('DeleteItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"m1"}},"ReturnItemCollectionMetrics":"SIZE"}');
SELECT dynindex.api('DeleteItem', '{"TableName":"Thread","Key":{"ForumName":{"S":"S3"},"Subject":{"S":"m1"}},"ReturnItemCollectionMetrics":"NONE"}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Thread":[{"PutRequest":{"Item":{"ForumName":{"S":"RDS"},"Subject":{"S":"r1"}}}},{"DeleteRequest":{"Key":{"ForumName":{"S":"S3"},"Subject":{"S":"ok"}}}}]},"ReturnItemCollectionMetrics":"SIZE"}');
SELECT dynindex.api('PutItem', '{"TableName":"Thread","Item":{"ForumName":{"S":"S3"},"Subject":{"S":"m1"}},"ReturnItemCollectionMetrics":"BIG"}');
SELECT dynindex.api('CreateTable', '{"TableName":"NoLsi","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"}],"KeySchema":[{"AttributeName":"p","KeyType":"HASH"}]}') IS NOT NULL;
SELECT dynindex.api('PutItem', '{"TableName":"NoLsi","Item":{"p":{"S":"a"}},"ReturnItemCollectionMetrics":"SIZE"}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"NoLsi":[{"PutRequest":{"Item":{"p":{"S":"b"}}}}]},"ReturnItemCollectionMetrics":"SIZE"}');
SELECT dynindex.api('DeleteTable', '{"TableName":"NoLsi"}') IS NOT NULL;
-- the size limit: items of one partition key plus their LSI entries (+100 bytes each)
SELECT dynindex.api('CreateTable', '{"TableName":"Coll","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"s","AttributeType":"S"},{"AttributeName":"t","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"s","KeyType":"RANGE"}],
  "LocalSecondaryIndexes":[{"IndexName":"byt","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"t","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}]}') IS NOT NULL;
SHOW dynindex.item_collection_size_limit;
SET dynindex.item_collection_size_limit = 1000;
-- each item: 2 + 2 + 3 + 203 = 210 bytes; its KEYS_ONLY entry 7 + 100: three make 951 bytes
SELECT dynindex.api('PutItem', format('{"TableName":"Coll","Item":{"p":{"S":"A"},"s":{"S":"%s"},"t":{"S":"t%s"},"pad":{"S":"%s"}}}', g, g, repeat('x', 200))::jsonb) FROM generate_series(1, 3) g;
SELECT dynindex.api('PutItem', '{"TableName":"Coll","Item":{"p":{"S":"A"},"s":{"S":"4"},"t":{"S":"t4"},"pad":{"S":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}');
-- nothing of the refused write remains
SELECT dynindex.api('GetItem', '{"TableName":"Coll","Key":{"p":{"S":"A"},"s":{"S":"4"}}}');
-- in a transaction it is a cancellation reason (sql/60_transactions.sql shows the reasons)
SELECT dynindex.api('TransactWriteItems', '{"TransactItems":[{"Put":{"TableName":"Coll","Item":{"p":{"S":"A"},"s":{"S":"4"},"t":{"S":"t4"},"pad":{"S":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}}]}');
SELECT dynindex.api('GetItem', '{"TableName":"Coll","Key":{"p":{"S":"A"},"s":{"S":"4"}}}');
-- growing an existing item is refused too (UpdateItem, BatchWriteItem)
SELECT dynindex.api('UpdateItem', '{"TableName":"Coll","Key":{"p":{"S":"A"},"s":{"S":"1"}},"UpdateExpression":"SET more = :m","ExpressionAttributeValues":{":m":{"S":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}');
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Coll":[{"PutRequest":{"Item":{"p":{"S":"A"},"s":{"S":"5"},"pad":{"S":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}}]}}');
-- a small write that fits is fine
SELECT dynindex.api('BatchWriteItem', '{"RequestItems":{"Coll":[{"PutRequest":{"Item":{"p":{"S":"A"},"s":{"S":"5"}}}}]},"ReturnItemCollectionMetrics":"SIZE"}');
-- other partition keys are other collections
SELECT dynindex.api('PutItem', '{"TableName":"Coll","Item":{"p":{"S":"B"},"s":{"S":"1"},"t":{"S":"t1"}}}');
-- shrinking writes stay allowed even over the limit
SET dynindex.item_collection_size_limit = 500;
SELECT dynindex.api('UpdateItem', '{"TableName":"Coll","Key":{"p":{"S":"A"},"s":{"S":"1"}},"UpdateExpression":"REMOVE t"}');
SELECT dynindex.api('PutItem', '{"TableName":"Coll","Item":{"p":{"S":"A"},"s":{"S":"2"},"t":{"S":"t2"}}}');
SELECT dynindex.api('DeleteItem', '{"TableName":"Coll","Key":{"p":{"S":"A"},"s":{"S":"3"}},"ReturnItemCollectionMetrics":"SIZE"}');
SELECT dynindex.api('PutItem', '{"TableName":"Coll","Item":{"p":{"S":"A"},"s":{"S":"3"},"t":{"S":"t3"}}}');
RESET dynindex.item_collection_size_limit;
SELECT * FROM dynindex.verify_indexes('Coll');

-- ---------------------------------------------------------------- verify_indexes finds tampering (superuser)
SELECT storage AS thread_lsi FROM dynindex.indexes WHERE table_name = 'Thread' AND index_name = 'LastPostIndex' \gset
SELECT * FROM dynindex.verify_indexes('Thread');
-- direct writes are refused by the storage guard; a superuser can bypass triggers
SET session_replication_role = replica;
UPDATE :thread_lsi SET item = item - 'Replies' WHERE item -> 'Subject' ->> 'S' = 'S3 Thread 1';
DELETE FROM :thread_lsi WHERE item -> 'Subject' ->> 'S' = 'S3 Thread 2';
INSERT INTO :thread_lsi SELECT ipk, '\x00'::bytea, pk, sk, size, item FROM :thread_lsi WHERE item -> 'Subject' ->> 'S' = 'S3 Thread 3';
INSERT INTO :thread_lsi SELECT ipk, isk, pk, '\x00'::bytea, size, item FROM :thread_lsi WHERE item -> 'Subject' ->> 'S' = 'S3 Thread 3';
RESET session_replication_role;
SELECT * FROM dynindex.verify_indexes('Thread');
SELECT * FROM dynindex.verify_indexes('Nope');
SELECT * FROM dynindex.verify_indexes(NULL);

SELECT dynindex.api('DeleteTable', '{"TableName":"Thread"}') IS NOT NULL;
SELECT dynindex.api('DeleteTable', '{"TableName":"Proj"}') IS NOT NULL;
SELECT dynindex.api('DeleteTable', '{"TableName":"Coll"}') IS NOT NULL;
DROP FUNCTION lsi_entries(text, text);
DROP FUNCTION lsi_table(text, text, boolean);
