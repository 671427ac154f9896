-- The permission model on distributed storage (docs/security.md, "Citus"):
-- item operations run with the owner's rights once dynindex checked the
-- caller's, so NOLOGIN application roles work; the recipes' grants stay on
-- the coordinator, so no role writes the shards directly (distributed storage
-- has no write guard); LeadingKeys is refused on distributed tables and its
-- restricted roles are kept off them.
\set VERBOSITY terse
SET client_min_messages = warning;
DROP ROLE IF EXISTS csec_rw, csec_login, csec_lk;
CREATE ROLE csec_rw NOLOGIN;
CREATE ROLE csec_login LOGIN;
CREATE ROLE csec_lk NOLOGIN;
RESET client_min_messages;
-- call(op, request): the response, or the error's SQLSTATE and message
-- (storage relation and shard names masked)
SET client_min_messages = error;
CREATE FUNCTION pg_temp.call(op text, req text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN dynindex.api(op, req::jsonb)::text;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || regexp_replace(SQLERRM, '\mt[0-9]+(_[0-9]+|_i[0-9]+)*\M', 'tN', 'g');
END $$;
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE sql INTO r;
  RETURN coalesce(r, 'ok');
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || regexp_replace(SQLERRM, '(dynindex_data\.)?"?t[0-9]+(_[0-9]+|_i[0-9]+)*"?', 'tN', 'g');
END $$;
RESET client_min_messages;

SELECT dynindex.api('CreateTable', '{"TableName":"CsecT","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL AS created;
SELECT dynindex.api('CreateTable', '{"TableName":"CsecOther","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"id","AttributeType":"S"}],"KeySchema":[{"AttributeName":"id","KeyType":"HASH"}]}') IS NOT NULL AS created;
SELECT storage AS cst FROM dynindex.tables WHERE table_name = 'CsecT' \gset
SELECT count(*) AS distributed FROM pg_dist_partition p JOIN dynindex.tables d ON p.logicalrelid = to_regclass(d.storage)
 WHERE d.table_name IN ('CsecT', 'CsecOther');
SELECT dynindex.grant_table('CsecT', 'csec_rw', 'write');
SELECT dynindex.grant_table('CsecT', 'csec_login', 'write');
-- the grants are on the coordinator's relation, not on the shards
SELECT has_table_privilege('csec_login', :'cst', 'INSERT') AS coordinator,
       bool_or(result::boolean) AS any_shard
  FROM run_command_on_shards(:'cst', $$SELECT has_table_privilege('csec_login', '%s', 'INSERT')$$);

-- a NOLOGIN application role uses the table through the API
SET ROLE csec_rw;
SELECT pg_temp.call('PutItem', '{"TableName":"CsecT","Item":{"pk":{"S":"a"},"g":{"S":"x"}}}');
SELECT pg_temp.call('UpdateItem', '{"TableName":"CsecT","Key":{"pk":{"S":"a"}},"UpdateExpression":"SET n = :n","ExpressionAttributeValues":{":n":{"N":"1"}}}');
SELECT pg_temp.call('GetItem', '{"TableName":"CsecT","Key":{"pk":{"S":"a"}}}');
SELECT pg_temp.call('TransactWriteItems', '{"TransactItems":[{"Put":{"TableName":"CsecT","Item":{"pk":{"S":"b"},"g":{"S":"x"}}}}]}');
SELECT pg_temp.call('ExecuteStatement', '{"Statement":"SELECT pk FROM \"CsecT\" WHERE pk = ''b''"}');
SELECT dynindex.wait_for_indexes('CsecT');
SELECT pg_temp.call('Query', '{"TableName":"CsecT","IndexName":"byG","KeyConditionExpression":"g = :g","ExpressionAttributeValues":{":g":{"S":"x"}},"Select":"COUNT"}');
-- still only the tables it holds a right on
SELECT pg_temp.call('GetItem', '{"TableName":"CsecOther","Key":{"id":{"S":"a"}}}');
SELECT pg_temp.call('DeleteTable', '{"TableName":"CsecT"}');
RESET ROLE;

-- a role that can log in cannot write (nor read) the distributed storage directly
SET ROLE csec_login;
SELECT pg_temp.try(format($$INSERT INTO %s (pk, sk, item, size) VALUES ('\x01', '\x', '{}', 1)$$, :'cst'));
SELECT pg_temp.try(format('SELECT count(*)::text FROM %s', :'cst'));
SELECT pg_temp.call('PutItem', '{"TableName":"CsecT","Item":{"pk":{"S":"c"},"g":{"S":"x"}}}');
RESET ROLE;

-- LeadingKeys: refused on distributed tables
SELECT pg_temp.try($$SELECT dynindex.restrict_leading_keys('CsecT', 'csec_lk')::text$$);
-- a role restricted on a table that is not distributed may not use distributed ones
SET dynindex.distributed = off;
SELECT dynindex.api('CreateTable', '{"TableName":"CsecLocal","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}') IS NOT NULL AS created;
RESET dynindex.distributed;
SELECT dynindex.grant_table('CsecLocal', 'csec_lk', 'write');
SELECT dynindex.restrict_leading_keys('CsecLocal', 'csec_lk');
SELECT dynindex.grant_table('CsecT', 'csec_lk', 'read');
SET ROLE csec_lk;
SELECT pg_temp.call('PutItem', '{"TableName":"CsecLocal","Item":{"pk":{"S":"csec_lk"}}}');
SELECT pg_temp.call('PutItem', '{"TableName":"CsecLocal","Item":{"pk":{"S":"someone-else"}}}');
SELECT pg_temp.call('GetItem', '{"TableName":"CsecT","Key":{"pk":{"S":"a"}}}');
RESET ROLE;
SELECT dynindex.unrestrict_leading_keys('CsecLocal', 'csec_lk');

-- distribute_table: the grants Citus copies to the new shards are revoked there
SELECT dynindex.grant_table('CsecLocal', 'csec_login', 'write');
SELECT storage AS csl FROM dynindex.tables WHERE table_name = 'CsecLocal' \gset
SELECT dynindex.distribute_table('CsecLocal');
SELECT has_table_privilege('csec_login', :'csl', 'INSERT') AS coordinator,
       bool_or(result::boolean) AS any_shard
  FROM run_command_on_shards(:'csl', $$SELECT has_table_privilege('csec_login', '%s', 'INSERT')$$);
SET ROLE csec_login;
SELECT pg_temp.try(format('WITH d AS (DELETE FROM %s RETURNING 1) SELECT count(*)::text FROM d', :'csl'));
SELECT pg_temp.call('PutItem', '{"TableName":"CsecLocal","Item":{"pk":{"S":"d"}}}');
SELECT pg_temp.call('Scan', '{"TableName":"CsecLocal","Select":"COUNT"}');
RESET ROLE;

SELECT dynindex.wait_for_indexes('CsecT');
SELECT index_name, missing, extra, stale FROM dynindex.verify_indexes('CsecT');
SELECT dynindex.api('DeleteTable', '{"TableName":"CsecT"}') IS NOT NULL,
       dynindex.api('DeleteTable', '{"TableName":"CsecOther"}') IS NOT NULL,
       dynindex.api('DeleteTable', '{"TableName":"CsecLocal"}') IS NOT NULL;
SET client_min_messages = warning;
DROP OWNED BY csec_rw, csec_login, csec_lk;
DROP ROLE csec_rw, csec_login, csec_lk;
