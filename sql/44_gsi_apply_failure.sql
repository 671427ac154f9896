-- A GSI change that fails to apply: the worker retries it one change at a
-- time and moves it to the end of the queue (a new id) again and again, and
-- wait_for_indexes waits for it all the same: it never reports a change
-- committed before the call as applied while it is still queued.
\set VERBOSITY terse
SELECT dynindex.api('CreateTable', '{"TableName":"Fails","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL AS created;
SELECT dynindex.wait_for_indexes('Fails', '60 seconds');

-- While the switch is on, every write into the GSI's storage fails (the
-- worker, a superuser, runs the trigger): the change cannot be applied.
CREATE TABLE public.gsi_fail_switch (fail boolean NOT NULL);
INSERT INTO public.gsi_fail_switch VALUES (true);
CREATE FUNCTION public.gsi_fail_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT fail FROM public.gsi_fail_switch) THEN
    RAISE EXCEPTION 'forced failure of a GSI write';
  END IF;
  RETURN NEW;
END $$;
SELECT storage AS gsi_storage FROM dynindex.indexes WHERE table_name = 'Fails' AND index_name = 'byG' \gset
CREATE TRIGGER gsi_fail BEFORE INSERT ON :gsi_storage FOR EACH ROW EXECUTE FUNCTION public.gsi_fail_write();

-- the write, and the id its change was queued with (read in the writing transaction)
BEGIN;
SELECT dynindex.api('PutItem', '{"TableName":"Fails","Item":{"pk":{"S":"a"},"g":{"S":"x"}}}');
SELECT c.id AS queued_id, set_config('gsi_test.queued_id', c.id::text, false) AS queued_setting
  FROM dynindex.gsi_changes c JOIN dynindex.tables t ON t.num = c.table_num WHERE t.table_name = 'Fails' \gset
COMMIT;
-- the worker fails to apply it and requeues it under a new id (at most a minute)
DO $$
BEGIN
  FOR i IN 1..1200 LOOP
    EXIT WHEN NOT EXISTS (SELECT 1 FROM dynindex.gsi_changes c JOIN dynindex.tables t ON t.num = c.table_num
                           WHERE t.table_name = 'Fails' AND c.id = current_setting('gsi_test.queued_id')::bigint);
    PERFORM pg_sleep(0.05);
  END LOOP;
END $$;
SELECT count(*) AS queued, bool_and(c.id > :queued_id) AS requeued
  FROM dynindex.gsi_changes c JOIN dynindex.tables t ON t.num = c.table_num WHERE t.table_name = 'Fails';
-- The change was committed before the call and is requeued under new ids
-- while the call waits (about twice a second): the wait times out.
SELECT dynindex.wait_for_indexes('Fails', '3 seconds');
SELECT dynindex.api('Query', '{"TableName":"Fails","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}');
SELECT count(*) AS queued FROM dynindex.gsi_changes c JOIN dynindex.tables t ON t.num = c.table_num WHERE t.table_name = 'Fails';
SELECT missing, extra, stale FROM dynindex.verify_indexes('Fails');

-- once the change can be applied, the wait returns true and the index has the item
UPDATE public.gsi_fail_switch SET fail = false;
SELECT dynindex.wait_for_indexes('Fails', '60 seconds');
SELECT dynindex.api('Query', '{"TableName":"Fails","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}}');
SELECT count(*) AS queued FROM dynindex.gsi_changes c JOIN dynindex.tables t ON t.num = c.table_num WHERE t.table_name = 'Fails';
SELECT missing, extra, stale FROM dynindex.verify_indexes('Fails');

SELECT dynindex.api('DeleteTable', '{"TableName":"Fails"}') IS NOT NULL AS deleted;
DROP FUNCTION public.gsi_fail_write();
DROP TABLE public.gsi_fail_switch;
