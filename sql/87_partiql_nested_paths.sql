-- A SELECT of a nested path answers the value under one attribute named by
-- the path's last element (SELECT m.nested gives {"nested": ...}), on every
-- read path: GetItem, Query, Scan, IN, BatchExecuteStatement, ExecuteTransaction.
-- A path ending in a list index takes PartiQL's implicit name "_<n>" (the n-th
-- item of the SELECT list; docs/partiql.md).
SELECT dynindex.api('CreateTable', '{"TableName": "pqn", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}') IS NOT NULL AS created;
SELECT dynindex.api('PutItem', '{"TableName": "pqn", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "top": {"S": "t"},
  "m": {"M": {"nested": {"S": "n"}, "a": {"M": {"b": {"N": "7"}}}, "l": {"L": [{"M": {"x": {"BOOL": true}}}, {"S": "y"}]}}},
  "l": {"L": [{"S": "l0"}, {"S": "l1"}, {"S": "l2"}]}}}');
SELECT dynindex.api('PutItem', '{"TableName": "pqn", "Item": {"pk": {"S": "b"}, "sk": {"N": "2"}, "m": {"M": {"nested": {"N": "2"}}}}}');
-- by full key (GetItem), twice (a plan is kept only for statements without nested paths)
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT m.nested FROM pqn WHERE pk = ? AND sk = 1", "Parameters": [{"S": "a"}]}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT m.nested FROM pqn WHERE pk = ? AND sk = 1", "Parameters": [{"S": "a"}]}');
-- Query, Scan, IN
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT m.nested FROM pqn WHERE pk = ?", "Parameters": [{"S": "b"}]}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT m.nested, sk FROM pqn"}') -> 'Items' @> '[{"nested": {"S": "n"}, "sk": {"N": "1"}}, {"nested": {"N": "2"}, "sk": {"N": "2"}}]' AS scan_ok;
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT m.nested FROM pqn WHERE pk IN (''a'', ''b'')"}');
-- every path form: m.a.b, l[1], m.l[0].x, beside a top-level name and a missing path
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT top, m.a.b, l[1], m.l[0].x, m.missing FROM pqn WHERE pk = ''a''"}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT l[2], l[0], m.l[1] FROM pqn WHERE pk = ''a'' AND sk = 1"}');
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT \"m\".\"a\" FROM pqn WHERE pk = ''a''"}');
-- BatchExecuteStatement and ExecuteTransaction
SELECT dynindex.api('BatchExecuteStatement', '{"Statements": [{"Statement": "SELECT m.a.b, top FROM pqn WHERE pk = ''a'' AND sk = 1"},
  {"Statement": "SELECT m.nested FROM pqn WHERE pk = ''b'' AND sk = 2"}]}');
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": [{"Statement": "SELECT m.l[0].x FROM pqn WHERE pk = ''a'' AND sk = 1"},
  {"Statement": "SELECT m.nested FROM pqn WHERE pk = ''b'' AND sk = 2"}]}');
-- SELECT * and top-level names are unchanged
SELECT dynindex.api('ExecuteStatement', '{"Statement": "SELECT top, m FROM pqn WHERE pk = ''a''"}');
