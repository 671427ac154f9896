-- PartiQL errors: syntax ("Statement wasn't well formed, can't be processed: ..."), semantic
-- messages of DynamoDB's PartiQL front end, request validation, parameters
SELECT dynindex.api('CreateTable', '{"TableName": "pe_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;
CREATE OR REPLACE FUNCTION ps(stmt text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', stmt) ||
    CASE WHEN params IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('Parameters', params) END || extra)
$$;
\set VERBOSITY terse

-- a token left over after a complete statement
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' foo$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 1 e5$$);
SELECT ps($$INSERT INTO pe_t VALUE {'pk': 'a', 'sk': 1} foo$$);
SELECT ps($$UPDATE pe_t SET a = 9 WHERE pk = 'a' AND sk = 1 foo$$);
SELECT ps($$DELETE FROM pe_t WHERE pk = 'a' AND sk = 1 foo$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a')$$);
SELECT ps($$DELETE FROM pe_t WHERE pk = 'a' AND sk = 1 ORDER BY pk$$);
SELECT ps($$SELECT * FROM pe_t ORDER BY pk WHERE pk = 'a'$$);
SELECT ps($$SELECT * FROM pe_t; SELECT * FROM pe_t$$);
SELECT ps($$INSERT INTO pe_t t VALUE {'pk': 'x'}$$);
-- nothing where a term should be
SELECT ps($$SELECT * FROM pe_t WHERE$$);
SELECT ps($$SELECT * FROM pe_t WHERE;$$);
SELECT ps($$SELECT * FROM pe_t WHERE NOT$$);
SELECT ps($$SELECT * FROM pe_t WHERE ($$);
SELECT ps($$SELECT * FROM never_created WHERE$$);
SELECT ps($$SELECT * FROM$$);
SELECT ps('');
SELECT ps('   ');
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' OR$$);
SELECT ps($$SELECT * FROM pe_t WHERE ORDER BY pk$$);
SELECT ps($$SELECT * FROM pe_t WHERE IS NULL$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = LIKE$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x IS FOO$$);
SELECT ps('DELETE FROM');
SELECT ps($$DELETE FROM WHERE pk = 'a'$$);
-- literals and comments the lexer cannot read
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' # note$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' /* note$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'unterminated$$);
SELECT ps($$SELECT * FROM "pe_t WHERE pk = 'a'$$);
-- numbers that break DynamoDB's number rules
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND sk = 1e126$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND sk = 1e-131$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND sk = 123456789012345678901234567890123456789$$);
SELECT ps($$UPDATE pe_t SET a = 1e-131 WHERE pk = 'a' AND sk = 1$$);
-- reserved words must be quoted
SELECT ps($$SELECT * FROM pe_t WHERE pad = 'none'$$);
SELECT ps($$SELECT * FROM pe_t WHERE "pad" = 'none'$$);
SELECT ps($$SELECT value FROM pe_t$$);
SELECT ps($$SELECT "value", "order".x FROM pe_t$$);
-- statements that are not DynamoDB's
SELECT ps($$UPSERT INTO pe_t VALUE {'pk': 'a', 'sk': 1}$$);
SELECT ps($$REPLACE INTO pe_t VALUE {'pk': 'a', 'sk': 1}$$);
SELECT ps($$CREATE TABLE x (a int)$$);
SELECT ps($$BEGIN TRANSACTION$$);
SELECT ps($$x IS INT4$$);
SELECT ps($$SELECT * FROM pe_t t WHERE pk = 'x'$$);
SELECT ps($$SELECT * FROM pe_t AS t WHERE pk = 'x'$$);
SELECT ps($$UPDATE pe_t t SET a = 3 WHERE pk = 'x' AND sk = 1$$);
SELECT ps($$SELECT * FROM pe_t, pe_t$$);
SELECT ps($$SELECT * FROM "pe_t"."a"."b"$$);
SELECT ps($$SELECT *, pk FROM pe_t$$);
SELECT ps($$SELECT pk, * FROM pe_t$$);
SELECT ps($$SELECT pk, pk FROM pe_t$$);
SELECT ps($$SELECT * FROM pe_t WHERE name LIKE 'a%'$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND upper(x) = 'A'$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x = MISSING$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x + 1 = 2$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x IS DATE$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND 'x' IS NULL$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x IN 'y'$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x IN []$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND begins_with(x)$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND size(x)$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND m.'' = 1$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x = {1: 2}$$);
-- ORDER BY needs the partition key pinned and names key attributes
SELECT ps($$SELECT * FROM pe_t ORDER BY sk$$);
SELECT ps($$SELECT * FROM pe_t WHERE x = 1 ORDER BY sk$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' ORDER BY x$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' ORDER BY 1$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk IN ['a', 'b'] ORDER BY sk$$);
-- IN on the partition key: distinct values, at most 50
SELECT ps($$SELECT * FROM pe_t WHERE pk IN ['a', 'a']$$);
SELECT ps('SELECT * FROM pe_t WHERE pk IN [' || (SELECT string_agg(format('''k%s''', i), ',') FROM generate_series(1, 51) i) || ']');
SELECT ps('SELECT * FROM pe_t WHERE pk IN [' || (SELECT string_agg(format('''k%s''', i), ',') FROM generate_series(1, 50) i) || ']');
-- parameters: as many as placeholders ('?' in a string is text)
SELECT ps($$SELECT * FROM pe_t WHERE pk = ? AND sk = ?$$, '[{"S": "a"}]');
SELECT ps($$SELECT * FROM pe_t WHERE pk = ?$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND sk = 1$$, '[{"S": "extra"}]');
SELECT ps($$SELECT * FROM pe_t WHERE pk = '?'$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = :p$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = ?$$, '[]');
SELECT ps($$SELECT * FROM pe_t WHERE pk = ?$$, '[{"S": "a", "N": "1"}]');
SELECT ps($$SELECT * FROM pe_t WHERE pk = ?$$, '["a"]');
SELECT ps($$SELECT * FROM pe_t WHERE pk = ? AND sk = ?$$, '[{"S": "a"}, {"N": "x"}]');
SELECT ps($$SELECT * FROM ? WHERE pk = 'a'$$, '[{"S": "pe_t"}]');
-- key values of the wrong type
SELECT ps($$SELECT * FROM pe_t WHERE pk = 1 AND sk = 1$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 1$$);
SELECT ps($$DELETE FROM pe_t WHERE pk = 1 AND sk = 1$$);
-- tables and indexes
SELECT ps($$SELECT * FROM nosuch WHERE pk = 'a'$$);
SELECT ps($$UPDATE nosuch SET a = 1 WHERE pk = 'a'$$);
SELECT ps($$DELETE FROM "pe_t"."idx" WHERE pk = 'a' AND sk = 1$$);
SELECT ps($$UPDATE "pe_t"."idx" SET a = 1 WHERE pk = 'a' AND sk = 1$$);
-- request validation
SELECT dynindex.api('ExecuteStatement', '{}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": 1}');
SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', repeat(' ', 8193)));
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT * FROM pe_t", "Limit": 0, "ReturnConsumedCapacity": "ALL"}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT * FROM pe_t", "NextToken": ""}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT * FROM pe_t", "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}');
SELECT dynindex.api('BatchExecuteStatement', '{}');
SELECT dynindex.api('BatchExecuteStatement', '{"Statements": [{}]}');
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": [{"Statement": "SELECT * FROM pe_t WHERE pk = ''a'' AND sk = 1"}], "ClientRequestToken": ""}');
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": [{"Statement": "SELECT * FROM pe_t WHERE"}]}');
-- nesting is limited (dynindex's limit: deep nesting would threaten the backend's stack)
SELECT ps('SELECT * FROM pe_t WHERE ' || repeat('(', 300) || 'a = 1' || repeat(')', 300));
SELECT ps('SELECT * FROM pe_t WHERE ' || repeat('NOT ', 300) || 'a = 1');
SELECT ps('SELECT * FROM pe_t WHERE ' || repeat('(', 100) || 'a = 1' || repeat(')', 100));
SELECT ps('SELECT * FROM pe_t WHERE pk = ''a'' AND ' || (SELECT string_agg('a = ' || i, ' AND ') FROM generate_series(1, 400) i));
-- a statement parsed before (kept per backend) still counts its parameters
SELECT ps($$SELECT * FROM pe_t WHERE pk = ? AND sk = ?$$, '[{"S": "a"}, {"N": "1"}]');
SELECT ps($$SELECT * FROM pe_t WHERE pk = ? AND sk = ?$$, '[{"S": "a"}]');
SELECT ps($$SELECT * FROM pe_t WHERE pk = ? AND sk = ?$$, '[{"S": "a"}, {"S": "1"}]');
-- function calls: the number and kinds of their arguments are the expression parser's
-- (DynamoDB's PartiQL front end hands a call to the validator of the JSON API's expressions)
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND begins_with(x)$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND contains(x, 'a', 'b')$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND attribute_type(x)$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND exists(x, y)$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND missing('x')$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND size(x, y) > 1$$);
SELECT ps($$UPDATE pe_t SET a = 1 WHERE pk = 'a' AND sk = 1 AND exists(1)$$);
SELECT ps($$DELETE FROM pe_t WHERE pk = 'a' AND sk = 1 AND begins_with(x)$$);
-- a constant first argument is a value, as in the JSON API: no error
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND begins_with('abc', 'a')$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND size('abc') = 3$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND foo(x)$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND a = (b = c)$$);
-- something that is no value inside a literal: "Unsupported data type: <node> under key <path>"
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x = [y]$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x = [1, y.z]$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND x = {'k': [1, y[0]]}$$);
SELECT ps($$INSERT INTO pe_t VALUE {'pk': 'a', 'sk': 1, 'l': [a + 1]}$$);
SELECT ps($$INSERT INTO pe_t VALUE {'pk': 'a', 'sk': 1, 'm': {'x': MISSING}}$$);
SELECT ps($$INSERT INTO pe_t VALUE {'pk': 'a', 'sk': 1, 'm': {'x': a IS NULL}}$$);
SELECT ps($$UPDATE pe_t SET a = MISSING WHERE pk = 'a' AND sk = 1$$);
-- operators a SET value cannot have, named as DynamoDB names them
SELECT ps($$UPDATE pe_t SET a = b < c WHERE pk = 'a' AND sk = 1$$);
SELECT ps($$UPDATE pe_t SET a = b <> c WHERE pk = 'a' AND sk = 1$$);
SELECT ps($$UPDATE pe_t SET a = (b AND c) WHERE pk = 'a' AND sk = 1$$);
SELECT ps($$UPDATE pe_t SET a = b IN [1] WHERE pk = 'a' AND sk = 1$$);
SELECT ps($$UPDATE pe_t SET a = upper(b) WHERE pk = 'a' AND sk = 1$$);
-- the other messages of DynamoDB's PartiQL front end
SELECT ps($$SELECT "" FROM pe_t$$);
SELECT ps($$SELECT * FROM pe_t WHERE ""."x" = 1$$);
SELECT ps($$SELECT * FROM pe_t WHERE a[99999999999] = 1$$);
SELECT ps($$INSERT INTO pe_t VALUE {'pk': 'a', 'sk': 1} AT x$$);
SELECT ps($$INSERT INTO pe_t VALUE {'pk': 'a', 'sk': 1} ON CONFLICT DO UPDATE$$);
SELECT ps($$UPDATE pe_t SET a = 1 WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *, ALL OLD *$$);
SELECT ps($$SELECT * FROM pe_t WHERE -a > 1$$);
SELECT ps($$SELECT * FROM pe_t."1"."2"$$);
-- IN: at most 50 partition key values (decomposed reads), 100 values of another attribute
-- (the filter's limit, with the expression parser's message)
SELECT ps('SELECT * FROM pe_t WHERE pk IN [' || (SELECT string_agg(quote_literal(i::text), ',') FROM generate_series(1, 51) i) || ']');
SELECT ps('SELECT * FROM pe_t WHERE pk = ''a'' AND x IN [' || (SELECT string_agg(i::text, ',') FROM generate_series(1, 101) i) || ']');
SELECT ps('SELECT * FROM pe_t WHERE pk = ''a'' AND x IN [' || (SELECT string_agg(i::text, ',') FROM generate_series(1, 100) i) || ']');
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND begins_with()$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND size() > 1$$);
SELECT ps($$SELECT * FROM pe_t WHERE pk = 'a' AND contains(begins_with(x, 'a'), 'b')$$);
