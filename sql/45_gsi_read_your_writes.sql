-- GSIs you can read your writes from (beyond DynamoDB, opt-in): under
-- dynindex.gsi_read_your_writes a Query or Scan of a GSI first waits until
-- every change of its table committed before it began is applied, at most
-- dynindex.gsi_read_your_writes_timeout, then fails with ServiceUnavailable.
\set VERBOSITY terse
-- the settings: off by default, and their values checked
SHOW dynindex.gsi_read_your_writes;
SHOW dynindex.gsi_read_your_writes_timeout;
SET dynindex.gsi_read_your_writes = 'sometimes';
-- out of range (0 .. 1 hour; the message's form differs between PostgreSQL majors)
\set VERBOSITY sqlstate
SET dynindex.gsi_read_your_writes_timeout = -1;
SET dynindex.gsi_read_your_writes_timeout = '2h';
\set VERBOSITY terse
SET dynindex.gsi_read_your_writes_timeout = '250ms';
SHOW dynindex.gsi_read_your_writes_timeout;
RESET dynindex.gsi_read_your_writes_timeout;

SELECT dynindex.api('CreateTable', '{"TableName":"Ryw","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"},{"AttributeName":"n","AttributeType":"N"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"},{"AttributeName":"n","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL AS created;

-- Each write is committed, then read from the GSI at once: under the setting
-- every read sees it (Put, Update moving the item in the index, sparse
-- REMOVE taking it out, Delete), by Query, Scan and PartiQL.
SET dynindex.gsi_read_your_writes = on;
CREATE PROCEDURE pg_temp.ryw_rounds(rounds int, INOUT misses int) LANGUAGE plpgsql AS $$
DECLARE
  r jsonb;
  q jsonb := '{"TableName":"Ryw","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}},"Select":"COUNT"}';
BEGIN
  misses := 0;
  FOR i IN 1..rounds LOOP
    PERFORM dynindex.api('PutItem', jsonb_build_object('TableName', 'Ryw', 'Item', jsonb_build_object(
      'pk', jsonb_build_object('S', 'k' || i), 'g', jsonb_build_object('S', 'x'), 'n', jsonb_build_object('N', i::text))));
    COMMIT;
    IF (dynindex.api('Query', q) ->> 'Count')::int <> i THEN misses := misses + 1; END IF;
    COMMIT;
    IF i % 10 = 0 THEN
      -- move it in the index: the read sees its new sort key
      PERFORM dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Ryw', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'k' || i)),
        'UpdateExpression', 'SET n = :n', 'ExpressionAttributeValues', jsonb_build_object(':n', jsonb_build_object('N', (-i)::text))));
      COMMIT;
      r := dynindex.api('Query', jsonb_build_object('TableName', 'Ryw', 'IndexName', 'byG', 'Limit', 1,
        'KeyConditionExpression', 'g = :g', 'ExpressionAttributeValues', '{":g":{"S":"x"}}'::jsonb));
      IF r -> 'Items' -> 0 -> 'n' ->> 'N' <> (-i)::text THEN misses := misses + 1; END IF;
      COMMIT;
      -- sparse: REMOVE g takes it out, by Scan and by PartiQL
      PERFORM dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Ryw', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'k' || i)),
        'UpdateExpression', 'REMOVE g'));
      COMMIT;
      IF (dynindex.api('Scan', '{"TableName":"Ryw","IndexName":"byG","Select":"COUNT"}') ->> 'Count')::int <> i - 1 THEN misses := misses + 1; END IF;
      COMMIT;
      PERFORM dynindex.api('UpdateItem', jsonb_build_object('TableName', 'Ryw', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'k' || i)),
        'UpdateExpression', 'SET g = :g', 'ExpressionAttributeValues', '{":g":{"S":"x"}}'::jsonb));
      COMMIT;
      IF jsonb_array_length(dynindex.api('ExecuteStatement', '{"Statement":"SELECT pk FROM \"Ryw\".\"byG\" WHERE g = ''x''"}') -> 'Items') <> i
        THEN misses := misses + 1; END IF;
      COMMIT;
    END IF;
  END LOOP;
  -- and a delete of all of them, one by one
  FOR i IN 1..rounds LOOP
    PERFORM dynindex.api('DeleteItem', jsonb_build_object('TableName', 'Ryw', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'k' || i))));
    COMMIT;
    IF (dynindex.api('Query', q) ->> 'Count')::int <> rounds - i THEN misses := misses + 1; END IF;
    COMMIT;
  END LOOP;
END $$;
CALL pg_temp.ryw_rounds(300, NULL);

-- DynamoDB's rule stands under the setting: no ConsistentRead on a GSI
SELECT dynindex.api('Query', '{"TableName":"Ryw","IndexName":"byG","ConsistentRead":true,"KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}');

-- A read in the transaction that wrote: its own uncommitted change cannot be
-- applied before it commits, and is not waited for (a timeout of 0 would fail
-- at once if it were); the GSI does not have it yet.
BEGIN;
SET LOCAL dynindex.gsi_read_your_writes_timeout = 0;
SELECT dynindex.api('PutItem', '{"TableName":"Ryw","Item":{"pk":{"S":"own"},"g":{"S":"x"},"n":{"N":"1"}}}');
SELECT dynindex.api('Query', '{"TableName":"Ryw","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}},"Select":"COUNT"}') ->> 'Count' AS own_uncommitted;
SAVEPOINT s;
SELECT dynindex.api('PutItem', '{"TableName":"Ryw","Item":{"pk":{"S":"own2"},"g":{"S":"x"},"n":{"N":"2"}}}');
SELECT dynindex.api('Query', '{"TableName":"Ryw","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}},"Select":"COUNT"}') ->> 'Count' AS own_in_subtransaction;
COMMIT;
SELECT dynindex.api('Query', '{"TableName":"Ryw","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}},"Select":"COUNT"}') ->> 'Count' AS after_commit;

-- A change that cannot be applied (every write into the GSI's storage fails
-- while the switch is on; the worker requeues it again and again).
SELECT dynindex.api('CreateTable', '{"TableName":"RywStuck","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL AS created;
CREATE TABLE public.ryw_fail_switch (fail boolean NOT NULL);
INSERT INTO public.ryw_fail_switch VALUES (true);
CREATE FUNCTION public.ryw_fail_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT fail FROM public.ryw_fail_switch) THEN
    RAISE EXCEPTION 'forced failure of a GSI write';
  END IF;
  RETURN NEW;
END $$;
SELECT storage AS gsi_storage FROM dynindex.indexes WHERE table_name = 'RywStuck' AND index_name = 'byG' \gset
CREATE TRIGGER ryw_fail BEFORE INSERT ON :gsi_storage FOR EACH ROW EXECUTE FUNCTION public.ryw_fail_write();
SELECT dynindex.api('PutItem', '{"TableName":"RywStuck","Item":{"pk":{"S":"a"},"g":{"S":"x"}}}') IS NOT NULL AS put;
-- the bounded wait ends with ServiceUnavailable (DynamoDB's retryable 503)
SET dynindex.gsi_read_your_writes_timeout = '300ms';
\set VERBOSITY default
SELECT dynindex.api('Query', '{"TableName":"RywStuck","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}');
SELECT dynindex.api('Scan', '{"TableName":"RywStuck","IndexName":"byG"}');
\set VERBOSITY terse
-- in REPEATABLE READ the snapshot cannot see later applies: at once, whatever the timeout
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL dynindex.gsi_read_your_writes_timeout = '1h';
SELECT dynindex.api('Query', '{"TableName":"RywStuck","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}');
ROLLBACK;
-- without the setting: DynamoDB's eventual consistency, no wait, no error
SET dynindex.gsi_read_your_writes = off;
SELECT dynindex.api('Query', '{"TableName":"RywStuck","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}');
SET dynindex.gsi_read_your_writes = on;
-- the base table and reads of other tables do not wait for it: only the index's
-- table counts (a long timeout: the worker's back-off after the failures may
-- delay the other table's change, but a read that waited for the stuck one
-- would fail however long it waited)
SET dynindex.gsi_read_your_writes_timeout = '60s';
SELECT dynindex.api('Query', '{"TableName":"RywStuck","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}}}') ->> 'Count' AS base_table;
SELECT dynindex.api('PutItem', '{"TableName":"Ryw","Item":{"pk":{"S":"other"},"g":{"S":"y"},"n":{"N":"1"}}}') IS NOT NULL AS put;
SELECT dynindex.api('Query', '{"TableName":"Ryw","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"y"}}}') -> 'Items' AS other_table;
-- the change applies: the read waits for it and sees the item
UPDATE public.ryw_fail_switch SET fail = false;
SELECT dynindex.api('Query', '{"TableName":"RywStuck","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}') -> 'Items' AS applied;

RESET dynindex.gsi_read_your_writes;
RESET dynindex.gsi_read_your_writes_timeout;
SELECT dynindex.api('DeleteTable', '{"TableName":"RywStuck"}') IS NOT NULL AS deleted;
SELECT dynindex.api('DeleteTable', '{"TableName":"Ryw"}') IS NOT NULL AS deleted;
DROP FUNCTION public.ryw_fail_write();
DROP TABLE public.ryw_fail_switch;
