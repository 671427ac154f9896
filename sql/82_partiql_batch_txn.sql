-- BatchExecuteStatement (per-statement results and errors) and ExecuteTransaction
-- (TransactWriteItems / TransactGetItems: all or nothing)
SELECT dynindex.api('CreateTable', '{"TableName": "pb_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName": "pb_u", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}') IS NOT NULL AS created;
-- batch(statements...): BatchExecuteStatement of plain statement texts
CREATE FUNCTION batch(VARIADIC stmts text[]) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('BatchExecuteStatement', jsonb_build_object('Statements',
    (SELECT jsonb_agg(jsonb_build_object('Statement', s)) FROM unnest(stmts) s)))
$$;
CREATE FUNCTION txn(VARIADIC stmts text[]) RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('ExecuteTransaction', jsonb_build_object('TransactStatements',
    (SELECT jsonb_agg(jsonb_build_object('Statement', s)) FROM unnest(stmts) s)))
$$;
CREATE FUNCTION items() RETURNS SETOF jsonb LANGUAGE sql AS $$
  SELECT * FROM dynindex.partiql('SELECT * FROM pb_t') UNION ALL SELECT * FROM dynindex.partiql('SELECT * FROM pb_u')
$$;

-- batch of writes: each statement succeeds or has its own Error; the others are kept
SELECT batch($$INSERT INTO pb_t VALUE {'pk': 'a', 'sk': 1, 'n': 1}$$,
             $$INSERT INTO pb_t VALUE {'pk': 'a', 'sk': 2, 'n': 2}$$,
             $$INSERT INTO pb_u VALUE {'id': 'u1'}$$);
SELECT batch($$INSERT INTO pb_t VALUE {'pk': 'a', 'sk': 1, 'n': 100}$$,
             $$UPDATE pb_t SET n = 20 WHERE pk = 'a' AND sk = 2$$,
             $$UPDATE pb_t SET n = 30 WHERE pk = 'a' AND sk = 3$$,
             $$DELETE FROM pb_u WHERE id = 'u1' AND gone = true$$,
             $$INSERT INTO pb_t VALUE {'pk': 'b', 'sk': 'x'}$$,
             $$INSERT INTO nosuch VALUE {'pk': 'b'}$$,
             $$INSERT INTO pb_t VALUE {'pk': 'b', 'sk': 1} garbage$$,
             $$DELETE FROM pb_t WHERE pk = 'b'$$,
             $$INSERT INTO pb_t VALUE {'pk': 'b', 'sk': 1}$$);
SELECT * FROM items();
-- ReturnValuesOnConditionCheckFailure per statement; Parameters per statement; capacity per table
SELECT dynindex.api('BatchExecuteStatement', '{"Statements": [
  {"Statement": "UPDATE pb_t SET n = 0 WHERE pk = ? AND sk = ? AND n = 99", "Parameters": [{"S": "a"}, {"N": "1"}],
   "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
  {"Statement": "UPDATE pb_t SET n = n + 1 WHERE pk = ? AND sk = ?", "Parameters": [{"S": "a"}, {"N": "2"}]},
  {"Statement": "UPDATE pb_u SET v = 1 WHERE id = ?", "Parameters": [{"S": "u1"}]}],
  "ReturnConsumedCapacity": "TOTAL"}');
-- batch of reads: each a full primary key (a GetItem); a missing item has no Item
SELECT dynindex.api('BatchExecuteStatement', '{"Statements": [
  {"Statement": "SELECT * FROM pb_t WHERE pk = ''a'' AND sk = 1"},
  {"Statement": "SELECT n FROM pb_t WHERE pk = ''a'' AND sk = 2", "ConsistentRead": true},
  {"Statement": "SELECT * FROM pb_t WHERE pk = ''zz'' AND sk = 2"},
  {"Statement": "SELECT * FROM pb_t WHERE pk = ''a''"},
  {"Statement": "SELECT * FROM pb_u WHERE id = ''u1''"}], "ReturnConsumedCapacity": "TOTAL"}');
-- reads and writes do not mix; 1 to 25 statements
SELECT batch($$SELECT * FROM pb_u WHERE id = 'u1'$$, $$DELETE FROM pb_u WHERE id = 'u1'$$);
SELECT dynindex.api('BatchExecuteStatement', '{"Statements": []}');
SELECT dynindex.api('BatchExecuteStatement', jsonb_build_object('Statements',
  (SELECT jsonb_agg(jsonb_build_object('Statement', format('SELECT * FROM pb_u WHERE id = ''%s''', i))) FROM generate_series(1, 26) i)));
SELECT jsonb_array_length(dynindex.api('BatchExecuteStatement', jsonb_build_object('Statements',
  (SELECT jsonb_agg(jsonb_build_object('Statement', format('SELECT * FROM pb_u WHERE id = ''%s''', i))) FROM generate_series(1, 25) i))) -> 'Responses');
SELECT batch($$EXISTS(SELECT * FROM pb_u WHERE id = 'u1')$$);

-- ExecuteTransaction: all or nothing
SELECT txn($$INSERT INTO pb_t VALUE {'pk': 't', 'sk': 1}$$,
           $$UPDATE pb_t SET n = 21 WHERE pk = 'a' AND sk = 2$$,
           $$DELETE FROM pb_u WHERE id = 'u1'$$,
           $$EXISTS(SELECT * FROM pb_t WHERE pk = 'a' AND sk = 1 AND n = 1)$$);
SELECT * FROM items();
-- a failing statement cancels every one: reasons per statement
SELECT txn($$INSERT INTO pb_t VALUE {'pk': 't', 'sk': 2}$$,
           $$INSERT INTO pb_t VALUE {'pk': 't', 'sk': 1}$$,
           $$UPDATE pb_t SET n = 1 WHERE pk = 'nobody' AND sk = 1$$,
           $$EXISTS(SELECT * FROM pb_t WHERE pk = 'a' AND sk = 1 AND n = 2)$$,
           $$DELETE FROM pb_t WHERE pk = 'a' AND sk = 2 AND n = 0$$);
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": [
  {"Statement": "UPDATE pb_t SET n = 5 WHERE pk = ''a'' AND sk = 1 AND n = 7", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}]}');
SELECT count(*) AS still_one FROM dynindex.partiql($$SELECT * FROM pb_t WHERE pk = 't'$$);
-- a transaction of reads: TransactGetItems, one response per statement
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": [
  {"Statement": "SELECT n FROM pb_t WHERE pk = ? AND sk = ?", "Parameters": [{"S": "a"}, {"N": "2"}]},
  {"Statement": "SELECT * FROM pb_t WHERE pk = ''nobody'' AND sk = 1"}], "ReturnConsumedCapacity": "TOTAL"}');
-- what a transaction refuses
SELECT txn($$SELECT * FROM pb_t WHERE pk = 'a' AND sk = 1$$, $$DELETE FROM pb_u WHERE id = 'u1'$$);
SELECT txn($$SELECT * FROM pb_t WHERE pk = 'a'$$);
SELECT txn($$SELECT * FROM pb_t WHERE pk = 'a' AND sk = 1 AND n = 1$$);
SELECT txn($$SELECT * FROM "pb_t"."idx" WHERE pk = 'a' AND sk = 1$$);
SELECT txn($$UPDATE pb_t SET n = 1 WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *$$);
SELECT txn($$DELETE FROM pb_t WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *$$);
SELECT txn($$DELETE FROM pb_t WHERE pk = 'a' AND sk = 1$$, $$UPDATE pb_t SET n = 1 WHERE pk = 'a' AND sk = 1$$);
SELECT txn($$EXISTS(SELECT * FROM pb_t WHERE pk = 'a')$$);
SELECT txn($$INSERT INTO pb_t VALUE {'pk': 'z', 'sk': 1}$$, $$SELECT * FROM pb_t WHERE$$);
SELECT txn($$INSERT INTO pb_t VALUE {'pk': 'z', 'sk': 1}$$, $$INSERT INTO nosuch VALUE {'pk': 'z'}$$);
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": []}');
SELECT dynindex.api('ExecuteTransaction', jsonb_build_object('TransactStatements',
  (SELECT jsonb_agg(jsonb_build_object('Statement', format('INSERT INTO pb_u VALUE {''id'': ''%s''}', i))) FROM generate_series(1, 101) i)));
SELECT dynindex.api('ExecuteTransaction', jsonb_build_object('TransactStatements',
  (SELECT jsonb_agg(jsonb_build_object('Statement', format('INSERT INTO pb_u VALUE {''id'': ''%s''}', i))) FROM generate_series(1, 100) i)));
SELECT count(*) FROM dynindex.partiql('SELECT id FROM pb_u');
-- ClientRequestToken: the same request again is done once; another request with the token fails
SELECT dynindex.api('ExecuteTransaction', '{"ClientRequestToken": "tok-1", "TransactStatements": [
  {"Statement": "UPDATE pb_t SET n = n + 1 WHERE pk = ''a'' AND sk = 1"}]}');
SELECT dynindex.api('ExecuteTransaction', '{"ClientRequestToken": "tok-1", "TransactStatements": [
  {"Statement": "UPDATE pb_t SET n = n + 1 WHERE pk = ''a'' AND sk = 1"}]}');
SELECT * FROM dynindex.partiql($$SELECT n FROM pb_t WHERE pk = 'a' AND sk = 1$$);
SELECT dynindex.api('ExecuteTransaction', '{"ClientRequestToken": "tok-1", "TransactStatements": [
  {"Statement": "UPDATE pb_t SET n = n + 2 WHERE pk = ''a'' AND sk = 1"}]}');
-- EXISTS only in a transaction of writes
SELECT dynindex.api('ExecuteStatement', '{"Statement": "EXISTS(SELECT * FROM pb_t WHERE pk = ''a'' AND sk = 1)"}');
-- the same statement text with other parameters in one batch and one transaction
SELECT dynindex.api('BatchExecuteStatement', '{"Statements": [
  {"Statement": "SELECT sk FROM pb_t WHERE pk = ? AND sk = ?", "Parameters": [{"S": "a"}, {"N": "1"}]},
  {"Statement": "SELECT sk FROM pb_t WHERE pk = ? AND sk = ?", "Parameters": [{"S": "a"}, {"N": "2"}]},
  {"Statement": "SELECT sk FROM pb_t WHERE pk = ? AND sk = ?", "Parameters": [{"S": "t"}, {"N": "1"}]}]}');
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": [
  {"Statement": "SELECT sk FROM pb_t WHERE pk = ? AND sk = ?", "Parameters": [{"S": "a"}, {"N": "2"}]},
  {"Statement": "SELECT sk FROM pb_t WHERE pk = ? AND sk = ?", "Parameters": [{"S": "a"}, {"N": "1"}]}]}');
