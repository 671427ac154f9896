-- PartiQL writes go through the JSON operations' write path: stream records, LSI item
-- collection limits and their errors are the same as PutItem/UpdateItem/DeleteItem's
SELECT dynindex.api('CreateTable', '{"TableName": "pp_t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"},
    {"AttributeName": "l", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "by_l", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "l", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}}') IS NOT NULL AS created;
CREATE OR REPLACE FUNCTION ps(stmt text, params jsonb DEFAULT NULL, extra jsonb DEFAULT '{}') RETURNS jsonb LANGUAGE sql AS $$
  SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', stmt) ||
    CASE WHEN params IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('Parameters', params) END || extra)
$$;
\set VERBOSITY terse

-- stream records of PartiQL writes: INSERT, UPDATE, DELETE, a batch and a transaction
SELECT ps($$INSERT INTO pp_t VALUE {'pk': 'a', 'sk': 1, 'l': 'x', 'n': 1}$$);
SELECT ps($$UPDATE pp_t SET n = n + 1, l = 'y' WHERE pk = 'a' AND sk = 1$$);
SELECT dynindex.api('BatchExecuteStatement', '{"Statements": [
  {"Statement": "INSERT INTO pp_t VALUE {''pk'': ''a'', ''sk'': 2}"},
  {"Statement": "INSERT INTO pp_t VALUE {''pk'': ''a'', ''sk'': 1}"}]}');
SELECT dynindex.api('ExecuteTransaction', '{"TransactStatements": [
  {"Statement": "UPDATE pp_t SET n = 5 WHERE pk = ''a'' AND sk = 2"},
  {"Statement": "DELETE FROM pp_t WHERE pk = ''a'' AND sk = 1"}]}');
SELECT ps($$DELETE FROM pp_t WHERE pk = 'a' AND sk = 2$$);
SELECT event_name, keys -> 'sk' ->> 'N' AS sk, old_image - 'pk' AS old, new_image - 'pk' AS new, stream_view_type
FROM dynindex.stream_changes('pp_t');
-- a failed PartiQL write leaves no record
SELECT ps($$UPDATE pp_t SET n = 1 WHERE pk = 'a' AND sk = 9$$);
SELECT count(*) FROM dynindex.stream_changes('pp_t');

-- the item collection size limit of a table with an LSI (lowered for the test); in a
-- transaction it is what TransactWriteItems answers: a cancellation reason
SET dynindex.item_collection_size_limit = 1000;
SELECT ps('INSERT INTO pp_t VALUE {''pk'': ''c'', ''sk'': ' || g || ', ''l'': ''t' || g || ''', ''pad'': ''' || repeat('x', 200) || '''}') FROM generate_series(1, 3) g;
SELECT ps('INSERT INTO pp_t VALUE {''pk'': ''c'', ''sk'': 4, ''l'': ''t4'', ''pad'': ''' || repeat('x', 200) || '''}');
SELECT ps('UPDATE pp_t SET more = ''' || repeat('x', 200) || ''' WHERE pk = ''c'' AND sk = 1');
SELECT dynindex.api('BatchExecuteStatement', jsonb_build_object('Statements', jsonb_build_array(
  jsonb_build_object('Statement', 'INSERT INTO pp_t VALUE {''pk'': ''c'', ''sk'': 5, ''pad'': ''' || repeat('x', 200) || '''}'),
  jsonb_build_object('Statement', 'INSERT INTO pp_t VALUE {''pk'': ''d'', ''sk'': 5}'))));
DO $$
DECLARE msg text; det text;
BEGIN
  PERFORM dynindex.api('ExecuteTransaction', jsonb_build_object('TransactStatements', jsonb_build_array(
    jsonb_build_object('Statement', 'INSERT INTO pp_t VALUE {''pk'': ''d'', ''sk'': 6}'),
    jsonb_build_object('Statement', 'UPDATE pp_t SET pad2 = ''' || repeat('x', 200) || ''' WHERE pk = ''c'' AND sk = 2'))));
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%', msg;
  RAISE NOTICE 'detail: %', det;
END $$;
SELECT ps($$SELECT sk FROM pp_t WHERE pk = 'd' AND sk = 6$$);
-- shrinking writes stay allowed
SELECT ps($$UPDATE pp_t SET "pad" = 'y' WHERE pk = 'c' AND sk = 1 RETURNING MODIFIED NEW *$$);
RESET dynindex.item_collection_size_limit;
SELECT count(*) FROM dynindex.partiql($$SELECT sk FROM pp_t WHERE pk IN ['c', 'd']$$);
SELECT * FROM dynindex.verify_indexes('pp_t');
SELECT dynindex.api('DeleteTable', '{"TableName": "pp_t"}') IS NOT NULL AS deleted;
