-- TransactWriteItems and TransactGetItems
\set VERBOSITY terse
CREATE FUNCTION tx(req text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE msg text; det text;
BEGIN
  RETURN dynindex.api('TransactWriteItems', req::jsonb);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%', msg;
  IF det <> '' THEN RAISE NOTICE 'detail: %', det; END IF;
  RETURN NULL;
END $$;
-- the same, showing only the end of long messages
CREATE FUNCTION tx_tail(req text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE msg text;
BEGIN
  RETURN dynindex.api('TransactWriteItems', req::jsonb);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
  RAISE NOTICE '% ... %', left(msg, 60), right(msg, 90);
  RETURN NULL;
END $$;
CREATE FUNCTION get(p text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'TxTable', 'Key', jsonb_build_object('p', jsonb_build_object('S', p)), 'ConsistentRead', true))
$$;

SELECT dynindex.api('CreateTable', '{"TableName":"TxTable","KeySchema":[{"AttributeName":"p","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],"GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"TxOther","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"s","KeyType":"RANGE"}],"AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"s","AttributeType":"N"}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL AS created;

-- all actions succeed: Put, conditional Put, ConditionCheck (writes nothing), two tables
SELECT tx('{"TransactItems":[
  {"Put":{"TableName":"TxTable","Item":{"p":{"S":"a"},"x":{"N":"1"},"g":{"S":"G1"}}}},
  {"Put":{"TableName":"TxTable","Item":{"p":{"S":"b"}},"ConditionExpression":"attribute_not_exists(p)"}},
  {"ConditionCheck":{"TableName":"TxTable","Key":{"p":{"S":"c"}},"ConditionExpression":"attribute_not_exists(p)"}},
  {"Put":{"TableName":"TxOther","Item":{"p":{"S":"a"},"s":{"N":"1"}}}}],
  "ReturnConsumedCapacity":"TOTAL"}');
SELECT get('a'), get('b'), get('c');

-- false conditions cancel everything, every action is reported (no short circuit), ALL_OLD returns the item
SELECT tx('{"TransactItems":[
  {"Put":{"TableName":"TxTable","Item":{"p":{"S":"d"}}}},
  {"Update":{"TableName":"TxTable","Key":{"p":{"S":"a"}},"UpdateExpression":"SET x = x + :one","ConditionExpression":"x = :two",
             "ExpressionAttributeValues":{":one":{"N":"1"},":two":{"N":"2"}},"ReturnValuesOnConditionCheckFailure":"ALL_OLD"}},
  {"ConditionCheck":{"TableName":"TxTable","Key":{"p":{"S":"zz"}},"ConditionExpression":"attribute_exists(p)"}},
  {"Delete":{"TableName":"TxTable","Key":{"p":{"S":"b"}},"ConditionExpression":"attribute_not_exists(p)"}}]}');
SELECT get('d'), get('a'), get('b');

-- a data error cancels with ValidationError on the first bad action; the rest report None
SELECT tx('{"TransactItems":[
  {"Put":{"TableName":"TxTable","Item":{"p":{"N":"7"}}}},
  {"Put":{"TableName":"TxTable","Item":{"p":{"N":"8"}}}},
  {"Put":{"TableName":"TxTable","Item":{"p":{"S":"q"}},"ConditionExpression":"attribute_exists(p)"}}]}');
-- a GSI key of the wrong type is a data error too
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxTable","Item":{"p":{"S":"e"},"g":{"N":"1"}}}}]}');
-- updating a key attribute
SELECT tx('{"TransactItems":[{"Update":{"TableName":"TxTable","Key":{"p":{"S":"a"}},"UpdateExpression":"SET p = :v","ExpressionAttributeValues":{":v":{"S":"z"}}}}]}');

-- whole-request errors are ValidationExceptions
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxTable","Item":{"p":{"S":"a"}}}},{"Delete":{"TableName":"TxTable","Key":{"p":{"S":"a"}}}}]}');
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxTable","Item":{"p":{"S":"a"}},"ConditionExpression":"attribute_exists(#xyz)"}}]}');
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxTable","Item":{"p":{"S":"a"}},"ConditionExpression":"p = :xyz"}}]}');
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxTable","Item":{"p":{"S":"a"}},"ConditionExpression":"attribute_exists(p)","ExpressionAttributeValues":{":xyz":{"N":"7"}}}}]}');
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxTable","Item":{"p":{"S":"a"}},"ConditionExpression":"hello!"}}]}');
SELECT tx('{"TransactItems":[{"ConditionCheck":{"TableName":"TxTable","Key":{"p":{"S":"c"}}}}]}');
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxTable","Item":{"p":{"S":"a"}}},"Delete":{"TableName":"TxTable","Key":{"p":{"S":"b"}}}}]}');
SELECT tx('{"TransactItems":[{}]}');
SELECT tx('{"TransactItems":[]}');
SELECT tx('{"TransactItems":[{"Put":{"TableName":"TxMissing","Item":{"p":{"S":"a"}}}}]}');
SELECT tx('{"TransactItems":[{"Update":{"TableName":"TxTable","Key":{"p":{"S":"a"}},"UpdateExpression":"SET x = :v","ExpressionAttributeValues":{":v":{"N":"1"}},"ReturnValuesOnConditionCheckFailure":"dog"}}]}');
SELECT tx_tail(jsonb_build_object('TransactItems', (SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object('TableName', 'TxTable', 'Item', jsonb_build_object('p', jsonb_build_object('S', 'k' || i))))) FROM generate_series(1, 101) i))::text);
-- 100 actions are fine
SELECT tx(jsonb_build_object('TransactItems', (SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object('TableName', 'TxTable', 'Item', jsonb_build_object('p', jsonb_build_object('S', 'k' || i))))) FROM generate_series(1, 100) i))::text);
SELECT count(*) FROM dynindex.scan('TxTable') x WHERE x->'p'->>'S' LIKE 'k%';

-- ClientRequestToken: the same request twice is done once; another request with the token is rejected
SELECT tx('{"TransactItems":[{"Update":{"TableName":"TxTable","Key":{"p":{"S":"a"}},"UpdateExpression":"SET x = x + :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}],"ClientRequestToken":"token-1"}');
SELECT tx('{"TransactItems":[{"Update":{"TableName":"TxTable","Key":{"p":{"S":"a"}},"UpdateExpression":"SET x = x + :one","ExpressionAttributeValues":{":one":{"N":"1"}}}}],"ClientRequestToken":"token-1"}');
SELECT get('a')->'Item'->'x' AS x_incremented_once;
SELECT tx('{"TransactItems":[{"Delete":{"TableName":"TxTable","Key":{"p":{"S":"a"}}}}],"ClientRequestToken":"token-1"}');
SELECT tx('{"TransactItems":[{"Delete":{"TableName":"TxTable","Key":{"p":{"S":"a"}}}}],"ClientRequestToken":"0123456789012345678901234567890123456"}');

-- GSIs see committed transactions
SELECT dynindex.wait_for_indexes('TxTable');
SELECT dynindex.api('Query', '{"TableName":"TxTable","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"G1"}}}')->'Items';

-- TransactGetItems: items in request order, missing items as {}, projections, twice the read units
SELECT dynindex.api('TransactGetItems', '{"TransactItems":[
  {"Get":{"TableName":"TxTable","Key":{"p":{"S":"a"}}}},
  {"Get":{"TableName":"TxTable","Key":{"p":{"S":"nope"}}}},
  {"Get":{"TableName":"TxTable","Key":{"p":{"S":"k1"}},"ProjectionExpression":"nothere"}},
  {"Get":{"TableName":"TxTable","Key":{"p":{"S":"b"}},"ProjectionExpression":"p"}},
  {"Get":{"TableName":"TxOther","Key":{"p":{"S":"a"},"s":{"N":"1"}}}}],"ReturnConsumedCapacity":"TOTAL"}');
SELECT dynindex.api('TransactGetItems', '{"TransactItems":[{"Get":{"TableName":"TxTable","Key":{"p":{"S":"a"}}}},{"Get":{"TableName":"TxTable","Key":{"p":{"S":"a"}}}}]}');
SELECT dynindex.api('TransactGetItems', '{"TransactItems":[{"Get":{"TableName":"TxTable","Key":{"p":{"N":"1"}}}}]}');
SELECT dynindex.api('TransactGetItems', '{"TransactItems":[]}');

-- ItemCollectionMetrics for tables with an LSI, one object per written item (ConditionCheck writes nothing)
SELECT dynindex.api('CreateTable', '{"TableName":"TxLsi","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"s","KeyType":"RANGE"}],"AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"s","AttributeType":"S"},{"AttributeName":"l","AttributeType":"S"}],"LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}],"BillingMode":"PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT tx('{"TransactItems":[
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c1"},"s":{"S":"1"},"l":{"S":"x"}}}},
  {"Put":{"TableName":"TxTable","Item":{"p":{"S":"m"}}}},
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c2"},"s":{"S":"1"}}}},
  {"ConditionCheck":{"TableName":"TxLsi","Key":{"p":{"S":"c3"},"s":{"S":"1"}},"ConditionExpression":"attribute_not_exists(p)"}}],
  "ReturnItemCollectionMetrics":"SIZE"}');
-- A write that grows an item collection past the limit cancels the transaction:
-- reason ItemCollectionSizeLimitExceeded at its action, the others None, nothing
-- written (not PutItem's ItemCollectionSizeLimitExceededException)
SET dynindex.item_collection_size_limit = 1000;
SELECT tx(format('{"TransactItems":[
  {"Put":{"TableName":"TxTable","Item":{"p":{"S":"coll"}}}},
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c1"},"s":{"S":"2"},"l":{"S":"y"},"pad":{"S":"%s"}}}},
  {"ConditionCheck":{"TableName":"TxLsi","Key":{"p":{"S":"c1"},"s":{"S":"1"}},"ConditionExpression":"attribute_exists(p)"}}]}',
  repeat('x', 1000)));
SELECT get('coll');
SELECT dynindex.api('GetItem', '{"TableName":"TxLsi","Key":{"p":{"S":"c1"},"s":{"S":"2"}},"ConsistentRead":true}');
-- every write is checked: an Update and a Put, each past the limit of its own collection
SELECT tx(format('{"TransactItems":[
  {"Update":{"TableName":"TxLsi","Key":{"p":{"S":"c1"},"s":{"S":"1"}},"UpdateExpression":"SET #pad = :pad","ExpressionAttributeNames":{"#pad":"pad"},"ExpressionAttributeValues":{":pad":{"S":"%s"}}}},
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c3"},"s":{"S":"1"},"pad":{"S":"%s"}}}},
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c4"},"s":{"S":"1"}}}}]}',
  repeat('x', 1000), repeat('y', 1000)));
SELECT dynindex.api('GetItem', '{"TableName":"TxLsi","Key":{"p":{"S":"c1"},"s":{"S":"1"}},"ConsistentRead":true}');
-- two writes that fit one by one but not together: the second is past the limit
SELECT tx(format('{"TransactItems":[
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c5"},"s":{"S":"1"},"pad":{"S":"%s"}}}},
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c5"},"s":{"S":"2"},"pad":{"S":"%s"}}}}]}',
  repeat('x', 600), repeat('y', 600)));
-- writes that fit go through; one that shrinks a collection over the limit too
SELECT tx(format('{"TransactItems":[
  {"Put":{"TableName":"TxLsi","Item":{"p":{"S":"c5"},"s":{"S":"1"},"l":{"S":"z"},"pad":{"S":"%s"}}}}],
  "ReturnItemCollectionMetrics":"SIZE"}', repeat('x', 600)));
SET dynindex.item_collection_size_limit = 100;
SELECT tx('{"TransactItems":[
  {"Update":{"TableName":"TxLsi","Key":{"p":{"S":"c5"},"s":{"S":"1"}},"UpdateExpression":"REMOVE l SET #pad = :p","ExpressionAttributeNames":{"#pad":"pad"},"ExpressionAttributeValues":{":p":{"S":"short"}}}}]}');
SELECT dynindex.api('GetItem', '{"TableName":"TxLsi","Key":{"p":{"S":"c5"},"s":{"S":"1"}},"ConsistentRead":true}');
RESET dynindex.item_collection_size_limit;
SELECT * FROM dynindex.verify_indexes('TxLsi');
SELECT dynindex.api('DeleteTable', '{"TableName":"TxLsi"}') IS NOT NULL;

SELECT dynindex.api('DeleteTable', '{"TableName":"TxTable"}') IS NOT NULL, dynindex.api('DeleteTable', '{"TableName":"TxOther"}') IS NOT NULL;
DROP FUNCTION tx(text);
DROP FUNCTION tx_tail(text);
DROP FUNCTION get(text);
