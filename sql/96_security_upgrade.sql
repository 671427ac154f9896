-- ALTER EXTENSION dynindex UPDATE from 0.1 (docs/security.md, "Upgrading from
-- 0.1"): privileges 0.1 made application roles hold on the catalog and the
-- storage schema are revoked, storage relations a role created move to the
-- extension's owner, and that role becomes the table's administrator.
\set VERBOSITY terse
SET client_min_messages = warning;
DROP DATABASE IF EXISTS dynindex_upgrade_test;
DROP ROLE IF EXISTS sec_up_app;
CREATE DATABASE dynindex_upgrade_test;
CREATE ROLE sec_up_app NOLOGIN;
\c dynindex_upgrade_test
SET client_min_messages = warning;
CREATE EXTENSION dynindex VERSION '0.1';
SELECT dynindex.api('CreateTable', '{"TableName":"Upg","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"l","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
  "LocalSecondaryIndexes":[{"IndexName":"byL","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}]}') IS NOT NULL AS created;
-- what 0.1 made an application role hold to manage its own table
GRANT USAGE ON SCHEMA dynindex, dynindex_data TO sec_up_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON dynindex.tables, dynindex.indexes, dynindex.gsi_changes TO sec_up_app;
GRANT CREATE ON SCHEMA dynindex_data TO sec_up_app;
SELECT format('ALTER TABLE %s OWNER TO sec_up_app', storage) FROM dynindex.tables
UNION ALL SELECT format('ALTER TABLE %s OWNER TO sec_up_app', storage) FROM dynindex.indexes \gexec
ALTER EXTENSION dynindex UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'dynindex';
SELECT c.relname, has_table_privilege('sec_up_app', c.oid, 'SELECT') AS sel, has_table_privilege('sec_up_app', c.oid, 'INSERT') AS ins
  FROM pg_class c WHERE c.oid IN ('dynindex.tables'::regclass, 'dynindex.indexes'::regclass, 'dynindex.gsi_changes'::regclass) ORDER BY 1;
SELECT has_schema_privilege('sec_up_app', 'dynindex_data', 'CREATE') AS create_on_storage_schema;
SELECT c.relname, pg_get_userbyid(c.relowner) = (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'dynindex') AS owned_by_extension_owner
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'dynindex_data' AND c.relkind IN ('r', 'p') ORDER BY 1;
SELECT table_name, role_name, admin, stream FROM dynindex.table_rights;
SET ROLE sec_up_app;
SELECT dynindex.api('PutItem', '{"TableName":"Upg","Item":{"pk":{"S":"a"},"sk":{"S":"1"},"l":{"S":"x"}}}');
SELECT dynindex.api('Query', '{"TableName":"Upg","IndexName":"byL","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":"a"}}}') -> 'Count' AS count;
SELECT dynindex.api('DeleteTable', '{"TableName":"Upg"}') -> 'TableDescription' ->> 'TableStatus' AS status;
RESET ROLE;
\c contrib_regression
SET client_min_messages = warning;
DROP DATABASE dynindex_upgrade_test;
DROP ROLE sec_up_app;
