-- Multi-attribute GSI keys (DynamoDB, November 2025): HASH customerId + status,
-- RANGE orderDate (S) + orderId (N). Every valid and invalid query pattern with
-- DynamoDB's messages, ordering by component type, paging, sparseness.
\set VERBOSITY terse

-- run a request, returning the response or the error message
CREATE FUNCTION ma_try(op text, req jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN dynindex.api(op, req)::text;
EXCEPTION WHEN others THEN
    RETURN SQLERRM;
END $$;
-- an item's short name: pk, or pk.sk when sk is not 'x'
CREATE FUNCTION ma_name(i jsonb) RETURNS text LANGUAGE sql AS $$
    SELECT (i->'pk'->>'S') || CASE WHEN i->'sk'->>'S' = 'x' THEN '' ELSE '.' || (i->'sk'->>'S') END
$$;
-- the values a key condition may use (only those it names are sent)
CREATE FUNCTION ma_vals(kce text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_object_agg(key, value)
      FROM jsonb_each('{":cust":{"S":"C1"}, ":st":{"S":"OPEN"}, ":dA":{"S":"2025-01-02"}, ":dB":{"S":"2025-01-10"},
                        ":nA":{"N":"1.5"}, ":nB":{"N":"10"}, ":nNeg":{"N":"-2.5"}, ":pfx":{"S":"2025-01"},
                        ":nS":{"S":"1.5"}, ":dN":{"N":"2025"}, ":pk":{"S":"o01"}}')
     WHERE kce ~ (key || '([^A-Za-z0-9]|$)')
$$;
-- the request of a Query on the index (status is a reserved word: the conditions name it #status)
CREATE FUNCTION ma_req(kce text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object('TableName', 'MaOrders', 'IndexName', 'byCustStatus', 'KeyConditionExpression', kce,
                              'ExpressionAttributeValues', ma_vals(kce))
           || CASE WHEN strpos(kce, '#status') > 0 THEN '{"ExpressionAttributeNames":{"#status":"status"}}' ELSE '{}' END::jsonb
$$;
-- Query the index: the items' short names in order, or the error
CREATE FUNCTION ma_q(kce text, extra jsonb DEFAULT '{}') RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text := ma_try('Query', ma_req(kce) || extra);
BEGIN
    IF r NOT LIKE '{%' THEN RETURN r; END IF;
    RETURN (SELECT coalesce(string_agg(ma_name(i), ' '), '(none)') FROM jsonb_array_elements(r::jsonb->'Items') i);
END $$;
-- Query the index page by page (Limit lim), following LastEvaluatedKey; names of all pages and the page count
CREATE FUNCTION ma_pages(kce text, lim int, fwd boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    req jsonb := ma_req(kce) || jsonb_build_object('Limit', lim, 'ScanIndexForward', fwd);
    r jsonb;
    names text[] := '{}';
    pages int := 0;
BEGIN
    LOOP
        r := dynindex.api('Query', req);
        pages := pages + 1;
        names := names || ARRAY(SELECT ma_name(i) FROM jsonb_array_elements(r->'Items') i);
        EXIT WHEN NOT r ? 'LastEvaluatedKey' OR pages > 100;
        req := req || jsonb_build_object('ExclusiveStartKey', r->'LastEvaluatedKey');
    END LOOP;
    RETURN array_to_string(names, ' ') || ' (' || pages || ' pages)';
END $$;

SELECT dynindex.api('CreateTable', '{"TableName":"MaOrders",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},
    {"AttributeName":"customerId","AttributeType":"S"},{"AttributeName":"status","AttributeType":"S"},
    {"AttributeName":"orderDate","AttributeType":"S"},{"AttributeName":"orderId","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byCustStatus",
    "KeySchema":[{"AttributeName":"customerId","KeyType":"HASH"},{"AttributeName":"status","KeyType":"HASH"},
                 {"AttributeName":"orderDate","KeyType":"RANGE"},{"AttributeName":"orderId","KeyType":"RANGE"}],
    "Projection":{"ProjectionType":"ALL"}}],
  "BillingMode":"PAY_PER_REQUEST"}') -> 'TableDescription' -> 'GlobalSecondaryIndexes' -> 0 -> 'KeySchema';

-- C1/OPEN orders. orderId is N with negative and decimal values, and one orderDate
-- ('2025-01') is a prefix of the others: a byte-wise concatenation would misorder both.
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'MaOrders', 'Item', jsonb_build_object(
         'pk', jsonb_build_object('S', v.pk), 'sk', jsonb_build_object('S', v.sk),
         'customerId', '{"S":"C1"}'::jsonb, 'status', '{"S":"OPEN"}'::jsonb,
         'orderDate', jsonb_build_object('S', v.d), 'orderId', jsonb_build_object('N', v.n)))))
  FROM (VALUES ('o01', 'x', '2025-01-02', '3'), ('o02', 'x', '2025-01-02', '-10'), ('o03', 'x', '2025-01-02', '10'),
               ('o04', 'x', '2025-01-02', '-2.5'), ('o05', 'y', '2025-01-02', '1.5'), ('o06', 'x', '2025-01-02', '100'),
               ('o07', 'x', '2025-01-02', '0'), ('o08', 'x', '2025-01', '9'), ('o09', 'x', '2025-01-10', '-1'),
               ('o10', 'x', '2025-02-01', '5'), ('o05', 'x', '2025-01-02', '1.5'), ('o00', 'x', '2025-01-02', '1.5'),
               ('o11', 'x', '2025-01-02', '1.25'), ('o12', 'x', '2025-01-20', '1.5')) v(pk, sk, d, n);
-- other partitions of the index: C1/SHIPPED, C2/OPEN, and C1O/PEN (same bytes as C1+OPEN if concatenated naively)
SELECT dynindex.api('PutItem', '{"TableName":"MaOrders","Item":{"pk":{"S":"p1"},"sk":{"S":"x"},"customerId":{"S":"C1"},"status":{"S":"SHIPPED"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"1.5"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"MaOrders","Item":{"pk":{"S":"p2"},"sk":{"S":"x"},"customerId":{"S":"C2"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"1.5"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"MaOrders","Item":{"pk":{"S":"p3"},"sk":{"S":"x"},"customerId":{"S":"C1O"},"status":{"S":"PEN"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"1.5"}}}');
-- sparse: each lacks one of the four key attributes
SELECT dynindex.api('PutItem', '{"TableName":"MaOrders","Item":{"pk":{"S":"s1"},"sk":{"S":"x"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"1.5"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"MaOrders","Item":{"pk":{"S":"s2"},"sk":{"S":"x"},"customerId":{"S":"C1"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"1.5"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"MaOrders","Item":{"pk":{"S":"s3"},"sk":{"S":"x"},"customerId":{"S":"C1"},"status":{"S":"OPEN"},"orderId":{"N":"1.5"}}}');
SELECT dynindex.api('PutItem', '{"TableName":"MaOrders","Item":{"pk":{"S":"s4"},"sk":{"S":"x"},"customerId":{"S":"C1"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-02"}}}');
SELECT dynindex.wait_for_indexes('MaOrders');

-- ordering: orderDate (S, '2025-01' before '2025-01-02'), then orderId numerically,
-- ties on the whole index key by the table key (o00.x, o05.x, o05.y)
SELECT i->'orderDate'->>'S' AS "orderDate", i->'orderId'->>'N' AS "orderId", ma_name(i) AS item
  FROM jsonb_array_elements(dynindex.api('Query', '{"TableName":"MaOrders","IndexName":"byCustStatus",
         "KeyConditionExpression":"customerId = :c AND #s = :s","ExpressionAttributeNames":{"#s":"status"},
         "ExpressionAttributeValues":{":c":{"S":"C1"},":s":{"S":"OPEN"}}}') -> 'Items') i;
SELECT ma_q('customerId = :cust AND #status = :st', '{"ScanIndexForward":false}') AS backward;

-- valid: both HASH attributes
SELECT ma_q('customerId = :cust AND #status = :st');
SELECT ma_q('#status = :st AND customerId = :cust');
SELECT ma_q(':st = #status AND (:cust = customerId)');
SELECT ma_q('((customerId = :cust) AND (#status = :st))');
-- status is a DynamoDB reserved word: bare, it is refused
SELECT ma_q('customerId = :cust AND status = :st');
-- parentheses around a condition are fine, two pairs around the same one are not (DynamoDB, dynalite)
SELECT ma_q('(customerId = :cust) AND ((#status = :st))');
SELECT ma_try('Query', ma_req('customerId = :cust AND #status = :st') || '{"Select":"COUNT"}') AS count;
-- valid: + orderDate with every operator
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate < :dA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate <= :dA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate > :dA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate >= :dB');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate BETWEEN :dA AND :dB');
SELECT ma_q('customerId = :cust AND #status = :st AND begins_with(orderDate, :pfx)');
SELECT ma_q('customerId = :cust AND #status = :st AND :dA < orderDate');
-- '2025-01' is a prefix of '2025-01-02': smaller, whatever orderId follows
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate > :pfx');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate <= :pfx');
SELECT ma_q('orderDate >= :dA AND #status = :st AND customerId = :cust', '{"ScanIndexForward":false}');
-- valid: orderDate = and orderId with every operator
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId = :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId < :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId <= :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId > :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId >= :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId BETWEEN :nNeg AND :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId BETWEEN :nA AND :nB', '{"ScanIndexForward":false}');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId < :nNeg');
SELECT ma_q('orderId > :nNeg AND orderDate = :dA AND #status = :st AND customerId = :cust');
SELECT ma_q(':nA >= orderId AND (:dA = orderDate AND (customerId = :cust AND #status = :st))');
SELECT ma_q('(customerId = :cust) AND (#status = :st) AND ((orderDate = :dA) AND (orderId = :nA))');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId = :nB');
-- other partitions stay apart
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId = :nA',
            '{"ExpressionAttributeValues":{":cust":{"S":"C1O"},":st":{"S":"PEN"},":dA":{"S":"2025-01-02"},":nA":{"N":"1.5"}}}') AS c1o_pen;
SELECT ma_q('customerId = :cust AND #status = :st', '{"ExpressionAttributeValues":{":cust":{"S":"C1"},":st":{"S":"SHIPPED"}}}') AS shipped;
SELECT ma_q('customerId = :cust AND #status = :st', '{"ExpressionAttributeValues":{":cust":{"S":"C1"},":st":{"S":"OPE"}}}') AS ope;
-- begins_with on orderId is not possible (N), but on orderDate with orderId absent it is
SELECT ma_q('customerId = :cust AND #status = :st AND begins_with(orderDate, :dA)');
-- legacy KeyConditions on the same index
SELECT string_agg(ma_name(i), ' ') FROM jsonb_array_elements(dynindex.api('Query', '{"TableName":"MaOrders","IndexName":"byCustStatus",
  "KeyConditions":{"customerId":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"C1"}]},
                   "status":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"OPEN"}]},
                   "orderDate":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"2025-01-02"}]},
                   "orderId":{"ComparisonOperator":"GT","AttributeValueList":[{"N":"0"}]}}}') -> 'Items') i;

-- invalid: a HASH attribute missing
SELECT ma_q('customerId = :cust');
SELECT ma_q('#status = :st');
SELECT ma_q('customerId = :cust AND orderDate = :dA');
SELECT ma_q('#status = :st AND orderDate = :dA AND orderId = :nA');
-- invalid: a HASH attribute with an inequality, BETWEEN or begins_with
SELECT ma_q('customerId = :cust AND #status > :st');
SELECT ma_q('customerId <= :cust AND #status = :st');
SELECT ma_q('customerId = :cust AND #status BETWEEN :st AND :st');
SELECT ma_q('customerId = :cust AND begins_with(#status, :st)');
-- invalid: orderId without orderDate
SELECT ma_q('customerId = :cust AND #status = :st AND orderId = :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderId > :nA');
-- invalid: an inequality on orderDate together with a condition on orderId
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate > :dA AND orderId = :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate BETWEEN :dA AND :dB AND orderId > :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND begins_with(orderDate, :pfx) AND orderId = :nA');
-- invalid: two conditions on one attribute
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate > :dA AND orderDate < :dB');
SELECT ma_q('customerId = :cust AND #status = :st AND #status = :st');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId > :nNeg AND orderId < :nB');
-- invalid: too many conditions, a non-key attribute
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId = :nA AND pk = :pk');
SELECT ma_q('customerId = :cust AND #status = :st AND pk = :pk');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND pk = :pk');
-- invalid: OR, NOT, IN, <>
SELECT ma_q('customerId = :cust OR #status = :st');
SELECT ma_q('customerId = :cust AND #status = :st AND (orderDate = :dA OR orderDate = :dB)');
SELECT ma_q('customerId = :cust AND NOT #status = :st');
SELECT ma_q('customerId = :cust AND #status IN (:st)');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate <> :dA');
SELECT ma_q('customerId = :cust AND #status = :st AND attribute_exists(orderId)');
-- invalid: operand type mismatch (status, orderDate, orderId), begins_with on the N attribute
SELECT ma_q('customerId = :cust AND #status = :nA');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dN');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId = :nS');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId BETWEEN :nA AND :nS');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND begins_with(orderId, :nA)');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND begins_with(orderId, :nS)');
-- invalid: BETWEEN with reversed bounds
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId BETWEEN :nB AND :nA');

-- paging with Limit: LastEvaluatedKey holds the four index attributes and the table key
SELECT dynindex.api('Query', '{"TableName":"MaOrders","IndexName":"byCustStatus","KeyConditionExpression":"customerId = :c AND #s = :s","ExpressionAttributeNames":{"#s":"status"},
  "ExpressionAttributeValues":{":c":{"S":"C1"},":s":{"S":"OPEN"}},"Limit":6}') -> 'LastEvaluatedKey' AS lek;
SELECT dynindex.api('Query', '{"TableName":"MaOrders","IndexName":"byCustStatus","KeyConditionExpression":"customerId = :c AND #s = :s","ExpressionAttributeNames":{"#s":"status"},
  "ExpressionAttributeValues":{":c":{"S":"C1"},":s":{"S":"OPEN"}},"Limit":6,"ScanIndexForward":false}') -> 'LastEvaluatedKey' AS lek_backward;
-- every page size, both directions: each item exactly once, in the order of one unlimited Query
SELECT lim, fwd, ma_pages('customerId = :cust AND #status = :st', lim, fwd)
         = ma_q('customerId = :cust AND #status = :st', jsonb_build_object('ScanIndexForward', fwd))
           || ' (' || (14 / lim + 1) || ' pages)' AS same
  FROM generate_series(1, 7) lim, (VALUES (true), (false)) f(fwd) ORDER BY fwd DESC, lim;
SELECT ma_pages('customerId = :cust AND #status = :st', 4, true);
SELECT ma_pages('customerId = :cust AND #status = :st', 4, false);
SELECT ma_pages('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId BETWEEN :nNeg AND :nB', 2, true);
SELECT ma_pages('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId BETWEEN :nNeg AND :nB', 2, false);
SELECT ma_pages('customerId = :cust AND #status = :st AND begins_with(orderDate, :pfx)', 3, false);
-- ExclusiveStartKey missing one index attribute (or with one of the wrong type) is rejected
SELECT ma_q('customerId = :cust AND #status = :st', jsonb_build_object('Limit', 2, 'ExclusiveStartKey',
       '{"customerId":{"S":"C1"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-02"},"pk":{"S":"o04"},"sk":{"S":"x"}}'::jsonb));
SELECT ma_q('customerId = :cust AND #status = :st', jsonb_build_object('Limit', 2, 'ExclusiveStartKey',
       '{"customerId":{"S":"C1"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"-2.5"},"pk":{"S":"o04"},"sk":{"S":"x"}}'::jsonb));
SELECT ma_q('customerId = :cust AND #status = :st', jsonb_build_object('Limit', 2, 'ExclusiveStartKey',
       '{"customerId":{"S":"C1"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-02"},"orderId":{"S":"-2.5"},"pk":{"S":"o04"},"sk":{"S":"x"}}'::jsonb));
SELECT ma_q('customerId = :cust AND #status = :st', jsonb_build_object('Limit', 2, 'ExclusiveStartKey',
       '{"customerId":{"S":"C1"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"-2.5"},"sk":{"S":"x"},"zz":{"S":"x"}}'::jsonb));
-- a complete start key resumes after it; one from another partition is outside the query
SELECT ma_q('customerId = :cust AND #status = :st', jsonb_build_object('Limit', 3, 'ExclusiveStartKey',
       '{"customerId":{"S":"C1"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"-2.5"},"pk":{"S":"o04"},"sk":{"S":"x"}}'::jsonb));
SELECT ma_q('customerId = :cust AND #status = :st', jsonb_build_object('Limit', 3, 'ExclusiveStartKey',
       '{"customerId":{"S":"C1"},"status":{"S":"SHIPPED"},"orderDate":{"S":"2025-01-02"},"orderId":{"N":"1.5"},"pk":{"S":"p1"},"sk":{"S":"x"}}'::jsonb));
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA', jsonb_build_object('Limit', 3, 'ExclusiveStartKey',
       '{"customerId":{"S":"C1"},"status":{"S":"OPEN"},"orderDate":{"S":"2025-01-10"},"orderId":{"N":"-1"},"pk":{"S":"o09"},"sk":{"S":"x"}}'::jsonb));

-- sparseness: s1..s4 (each lacking one key attribute) are in neither Query nor Scan of the index
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA AND orderId = :nA') AS query;
SELECT string_agg(ma_name(i), ' ') AS scan FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName":"MaOrders","IndexName":"byCustStatus"}') -> 'Items') i;
SELECT dynindex.api('Scan', '{"TableName":"MaOrders","IndexName":"byCustStatus","Select":"COUNT"}');
SELECT dynindex.api('Scan', '{"TableName":"MaOrders","Select":"COUNT"}');
-- completing s4 (SET orderId) brings it in; removing orderDate from o01 takes it out
SELECT dynindex.api('UpdateItem', '{"TableName":"MaOrders","Key":{"pk":{"S":"s4"},"sk":{"S":"x"}},"UpdateExpression":"SET orderId = :n","ExpressionAttributeValues":{":n":{"N":"1.5"}}}');
SELECT dynindex.api('UpdateItem', '{"TableName":"MaOrders","Key":{"pk":{"S":"o01"},"sk":{"S":"x"}},"UpdateExpression":"REMOVE orderDate"}');
SELECT dynindex.wait_for_indexes('MaOrders');
SELECT ma_q('customerId = :cust AND #status = :st AND orderDate = :dA');
SELECT string_agg(ma_name(i), ' ') AS scan FROM jsonb_array_elements(dynindex.api('Scan', '{"TableName":"MaOrders","IndexName":"byCustStatus"}') -> 'Items') i;
SELECT * FROM dynindex.verify_indexes('MaOrders') ORDER BY 1;
SELECT dynindex.api('DeleteTable', '{"TableName":"MaOrders"}') IS NOT NULL AS deleted;
