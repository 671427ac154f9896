-- dynindex: DynamoDB's data model and API on PostgreSQL
\echo Use "CREATE EXTENSION dynindex" to load this file. \quit

-- core: catalog
CREATE SCHEMA IF NOT EXISTS dynindex_data;
COMMENT ON SCHEMA dynindex_data IS 'Storage relations of dynindex tables and indexes (internal; use dynindex.api).';

CREATE SEQUENCE dynindex.table_num_seq;

CREATE TABLE dynindex.tables (
    table_name            text PRIMARY KEY,
    table_id              uuid NOT NULL DEFAULT gen_random_uuid(),
    num                   bigint NOT NULL DEFAULT nextval('dynindex.table_num_seq'),
    storage               text NOT NULL,
    attribute_definitions jsonb NOT NULL,
    key_schema            jsonb NOT NULL,
    billing_mode          text NOT NULL,
    read_capacity         bigint,
    write_capacity        bigint,
    created_at            timestamptz NOT NULL DEFAULT now(),
    options               jsonb NOT NULL DEFAULT '{}'
);
COMMENT ON TABLE dynindex.tables IS 'One row per DynamoDB table (internal catalog).';

CREATE TABLE dynindex.indexes (
    table_name   text NOT NULL REFERENCES dynindex.tables ON DELETE CASCADE,
    index_name   text NOT NULL,
    position     int NOT NULL,
    is_global    boolean NOT NULL,
    key_schema   jsonb NOT NULL,
    projection   jsonb NOT NULL,
    status       text NOT NULL DEFAULT 'ACTIVE',
    backfilling  boolean NOT NULL DEFAULT false,
    storage      text NOT NULL,
    throughput   jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    backfill_pk  bytea,
    backfill_sk  bytea,
    PRIMARY KEY (table_name, index_name)
);
COMMENT ON TABLE dynindex.indexes IS 'One row per secondary index (internal catalog).';

CREATE TABLE dynindex.tags (
    table_name   text NOT NULL REFERENCES dynindex.tables ON DELETE CASCADE,
    tag_key      text NOT NULL,
    tag_value    text NOT NULL,
    PRIMARY KEY (table_name, tag_key)
);
COMMENT ON TABLE dynindex.tags IS 'Tags of tables (TagResource, CreateTable Tags); removed with the table (internal catalog).';

CREATE TABLE dynindex.ttl (
    table_name     text PRIMARY KEY REFERENCES dynindex.tables ON DELETE CASCADE,
    attribute_name text NOT NULL,
    enabled_at     timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE dynindex.ttl IS 'Time to Live: one row per table with TTL enabled (UpdateTimeToLive), naming the expiry attribute; removed with the table (internal catalog).';

CREATE FUNCTION dynindex._storage_guard()
RETURNS trigger
AS 'MODULE_PATHNAME', 'dynindex_storage_guard'
LANGUAGE C;
COMMENT ON FUNCTION dynindex._storage_guard() IS
  'Statement trigger on storage relations: refuses writes that do not come through dynindex (they would bypass index maintenance).';

-- global secondary indexes: the durable change queue and counters
CREATE TABLE dynindex.gsi_changes (
    id          bigserial PRIMARY KEY,
    table_num   bigint NOT NULL,
    pk          bytea NOT NULL,
    sk          bytea NOT NULL,
    enqueued_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX ON dynindex.gsi_changes (table_num, id);
COMMENT ON TABLE dynindex.gsi_changes IS 'Queued item changes of tables with GSIs, applied by the GSI worker (internal).';

CREATE TABLE dynindex.gsi_applied (
    table_num       bigint NOT NULL,
    index_name      text NOT NULL,
    changes_applied bigint NOT NULL DEFAULT 0,
    index_writes    bigint NOT NULL DEFAULT 0,
    last_applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_num, index_name)
);
COMMENT ON TABLE dynindex.gsi_applied IS 'Changes applied and index writes made per GSI (internal).';

CREATE VIEW dynindex.gsi_status AS
SELECT t.table_name, i.index_name, i.status AS index_status, i.backfilling,
       (SELECT count(*) FROM dynindex.gsi_changes c WHERE c.table_num = t.num) AS queued_changes,
       (SELECT clock_timestamp() - min(c.enqueued_at) FROM dynindex.gsi_changes c
         WHERE c.table_num = t.num) AS oldest_change_age,
       coalesce(a.changes_applied, 0) AS changes_applied,
       coalesce(a.index_writes, 0) AS index_writes,
       a.last_applied_at
  FROM dynindex.tables t
  JOIN dynindex.indexes i ON i.table_name = t.table_name AND i.is_global
  LEFT JOIN dynindex.gsi_applied a ON a.table_num = t.num AND a.index_name = i.index_name;
COMMENT ON VIEW dynindex.gsi_status IS
  'Per GSI: status, queued changes of its table, age of the oldest, changes applied and index writes made.';

CREATE FUNCTION dynindex.wait_for_indexes(table_name text, timeout interval DEFAULT '10 seconds')
RETURNS boolean
AS 'MODULE_PATHNAME', 'dynindex_wait_for_indexes'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.wait_for_indexes(text, interval) IS
  'Wait until every change committed before the call is applied to the table''s GSIs and no GSI is backfilling; false on timeout. Use in READ COMMITTED.';

-- transactions: ClientRequestToken idempotency (10 minutes)
CREATE TABLE dynindex.transaction_tokens (
    token        text PRIMARY KEY,
    request_hash bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE dynindex.transaction_tokens IS 'ClientRequestTokens of TransactWriteItems seen in the last 10 minutes (internal).';

-- pg_dump: the catalog's contents are user data.  The storage relations in
-- dynindex_data are ordinary tables and are dumped anyway; without their
-- catalog rows a restored database would have storage but no DynamoDB tables.
-- The queue of GSI changes not yet applied is dumped with them (the worker
-- applies it after a restore), and the sequences so that new tables do not
-- reuse a restored table's storage name.
SELECT pg_catalog.pg_extension_config_dump('dynindex.tables', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.indexes', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.tags', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.ttl', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.gsi_changes', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.gsi_applied', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.table_num_seq', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.gsi_changes_id_seq', '');

-- core: the API
CREATE FUNCTION dynindex.api(operation text, request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'dynindex_api'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.api(text, jsonb) IS
  'Run one DynamoDB operation: takes the request JSON, returns the response JSON; errors are raised as "<ErrorType>: <message>" with SQLSTATE class YD.';

-- expressions
CREATE FUNCTION dynindex.eval_condition(expression text, item jsonb,
                                        names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dynindex_eval_condition'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.eval_condition(text, jsonb, jsonb, jsonb) IS
  'Evaluate a DynamoDB ConditionExpression against an item in typed JSON (NULL item: the item does not exist), with ExpressionAttributeNames and ExpressionAttributeValues.';

CREATE FUNCTION dynindex.apply_update(expression text, item jsonb,
                                      names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'dynindex_apply_update'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.apply_update(text, jsonb, jsonb, jsonb) IS
  'Apply a DynamoDB UpdateExpression to an item in typed JSON (NULL item: a new item) and return the new item.';

CREATE FUNCTION dynindex.project(expression text, item jsonb, names jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'dynindex_project'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.project(text, jsonb, jsonb) IS
  'Apply a DynamoDB ProjectionExpression to an item in typed JSON, shaped as DynamoDB returns it.';

CREATE FUNCTION dynindex._fuzz_expressions(seed int, iterations int)
RETURNS bigint
AS 'MODULE_PATHNAME', 'dynindex_fuzz_expressions'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex._fuzz_expressions(int, int) IS
  'Internal test: parse and evaluate random and mutated expressions; fails on any error that is not a ValidationException; returns how many inputs passed validation and were evaluated.';

-- gateway: access keys
--
-- Access keys for dynindex-gateway's SigV4 authentication (docs/gateway.md).
-- Each key maps to a PostgreSQL role; the gateway runs the request as that
-- role (SET ROLE), so GRANTs on dynindex objects decide what a key may do.
-- Only superusers (or roles granted access explicitly) may read or manage keys.

CREATE TABLE dynindex.access_keys (
    access_key_id     text PRIMARY KEY,
    secret_access_key text NOT NULL,
    role_name         name NOT NULL,
    created_at        timestamptz DEFAULT now()
);
REVOKE ALL ON dynindex.access_keys FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('dynindex.access_keys', '');
COMMENT ON TABLE dynindex.access_keys IS
    'Access keys of dynindex-gateway: a SigV4 key id and secret, and the role the gateway runs the key''s requests as.';

CREATE FUNCTION dynindex.create_access_key(role_name name)
RETURNS TABLE (access_key_id text, secret_access_key text)
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    v_role   name := $1;
    v_id     text;
    v_secret text;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = v_role) THEN
        RAISE EXCEPTION 'role "%" does not exist', v_role
            USING ERRCODE = 'undefined_object';
    END IF;
    -- gen_random_uuid() draws from pg_strong_random().
    v_id := 'DYNX' || upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 16));
    v_secret := encode(decode(replace(gen_random_uuid()::text, '-', '')
                              || substr(replace(gen_random_uuid()::text, '-', ''), 1, 28), 'hex'),
                       'base64');
    INSERT INTO dynindex.access_keys (access_key_id, secret_access_key, role_name)
        VALUES (v_id, v_secret, v_role);
    access_key_id := v_id;
    secret_access_key := v_secret;
    RETURN NEXT;
END
$fn$;
REVOKE ALL ON FUNCTION dynindex.create_access_key(name) FROM PUBLIC;
COMMENT ON FUNCTION dynindex.create_access_key(name) IS
    'Create an access key for dynindex-gateway whose requests run as the given role; returns the key id and the secret (shown only once).';

CREATE FUNCTION dynindex.delete_access_key(access_key_id text)
RETURNS boolean
LANGUAGE sql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $fn$
    WITH d AS (DELETE FROM dynindex.access_keys k WHERE k.access_key_id = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d;
$fn$;
REVOKE ALL ON FUNCTION dynindex.delete_access_key(text) FROM PUBLIC;
COMMENT ON FUNCTION dynindex.delete_access_key(text) IS
    'Delete a dynindex-gateway access key; true if it existed.  The gateway caches keys for up to 10 seconds.';

-- converters (and the key encoder; src/types/convert.c, docs/converters.md)
CREATE FUNCTION dynindex.to_plain(item jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'dynindex_to_plain'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.to_plain(jsonb) IS
  'Convert an item in DynamoDB typed JSON ({"a": {"N": "1"}}) to plain JSON ({"a": 1}): N becomes an exact JSON number, B a base64 string, sets arrays, NULL null.';

CREATE FUNCTION dynindex.from_plain(doc jsonb, sets boolean DEFAULT false)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'dynindex_from_plain'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.from_plain(jsonb, boolean) IS
  'Convert a plain JSON object to an item in DynamoDB typed JSON: string S, number N (canonical), boolean BOOL, null NULL, array L, object M; with sets => true, arrays of distinct strings become SS and of distinct numbers NS.';

CREATE FUNCTION dynindex.encode_key(value jsonb, terminated boolean DEFAULT false)
RETURNS bytea
AS 'MODULE_PATHNAME', 'dynindex_encode_key'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.encode_key(jsonb, boolean) IS
  'The order-preserving key encoding of an S, N or B AttributeValue, as stored: byte order equals DynamoDB order; terminated => true gives the self-delimiting form used in multi-attribute keys.';

-- query and scan (src/api/query_scan.c, docs/query.md)

CREATE FUNCTION dynindex.key_segment(key bytea, total_segments int4)
RETURNS int4
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'dynindex_key_segment';
COMMENT ON FUNCTION dynindex.key_segment(bytea, int4) IS
    'Parallel-scan segment (0 .. total_segments-1) of an encoded partition key; Scan''s Segment/TotalSegments split items by it.';

-- local secondary indexes (src/indexes/lsi.c, collection.c, verify.c; docs/lsi.md)
CREATE FUNCTION dynindex.verify_indexes(table_name text)
RETURNS TABLE(index_name text, missing bigint, extra bigint, stale bigint)
AS 'MODULE_PATHNAME', 'dynindex_verify_indexes'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.verify_indexes(text) IS
  'Recompute every secondary index entry (LSIs and GSIs) of a table from its items and compare with the index storage: one row per index with the entries missing from the index, extra in it, and stale (another projected item); all zeros when consistent. GSIs lag behind commits: call dynindex.wait_for_indexes() first.';

CREATE FUNCTION dynindex.read_all(operation text, request jsonb)
RETURNS SETOF jsonb
LANGUAGE C STRICT
AS 'MODULE_PATHNAME', 'dynindex_read_all';
COMMENT ON FUNCTION dynindex.read_all(text, jsonb) IS
    'Run a Query or Scan request (DynamoDB JSON) page after page, following LastEvaluatedKey, and return every item (typed JSON); Limit applies per page.';

CREATE FUNCTION dynindex.query(table_name text, key_condition text, names jsonb DEFAULT NULL,
                               vals jsonb DEFAULT NULL, index_name text DEFAULT NULL,
                               filter text DEFAULT NULL, forward boolean DEFAULT true,
                               plain boolean DEFAULT false, projection text DEFAULT NULL,
                               consistent boolean DEFAULT false)
RETURNS SETOF jsonb
LANGUAGE sql
AS $fn$
    SELECT CASE WHEN plain THEN dynindex.to_plain(i) ELSE i END
      FROM dynindex.read_all('Query', jsonb_strip_nulls(jsonb_build_object(
             'TableName', table_name,
             'KeyConditionExpression', key_condition,
             'ExpressionAttributeNames', names,
             'ExpressionAttributeValues', CASE WHEN plain THEN dynindex.from_plain(vals) ELSE vals END,
             'IndexName', index_name,
             'FilterExpression', filter,
             'ProjectionExpression', projection,
             'ScanIndexForward', forward,
             'ConsistentRead', consistent))) i;
$fn$;
COMMENT ON FUNCTION dynindex.query(text, text, jsonb, jsonb, text, text, boolean, boolean, text, boolean) IS
    'Query a table or index and return every matching item in key order, paging by itself: key_condition is a KeyConditionExpression, names/vals its ExpressionAttributeNames/Values, filter a FilterExpression; forward => false reads in descending order; plain => true takes vals and returns items as plain JSON (dynindex.from_plain/to_plain).';

CREATE FUNCTION dynindex.scan(table_name text, filter text DEFAULT NULL, names jsonb DEFAULT NULL,
                              vals jsonb DEFAULT NULL, index_name text DEFAULT NULL,
                              plain boolean DEFAULT false, projection text DEFAULT NULL,
                              segment int4 DEFAULT NULL, total_segments int4 DEFAULT NULL,
                              consistent boolean DEFAULT false)
RETURNS SETOF jsonb
LANGUAGE sql
AS $fn$
    SELECT CASE WHEN plain THEN dynindex.to_plain(i) ELSE i END
      FROM dynindex.read_all('Scan', jsonb_strip_nulls(jsonb_build_object(
             'TableName', table_name,
             'FilterExpression', filter,
             'ExpressionAttributeNames', names,
             'ExpressionAttributeValues', CASE WHEN plain THEN dynindex.from_plain(vals) ELSE vals END,
             'IndexName', index_name,
             'ProjectionExpression', projection,
             'Segment', segment,
             'TotalSegments', total_segments,
             'ConsistentRead', consistent))) i;
$fn$;
COMMENT ON FUNCTION dynindex.scan(text, text, jsonb, jsonb, text, boolean, text, int4, int4, boolean) IS
    'Scan a table or index and return every item (optionally filtered and projected), paging by itself; segment/total_segments read one part of a parallel scan; plain => true takes vals and returns items as plain JSON.';

-- capacity and index statistics (src/api/capacity.c; docs/capacity.md)
CREATE FUNCTION dynindex._storage_writes(storage text)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
    -- rows inserted, updated and deleted in a storage relation (all its
    -- partitions), from the cumulative statistics system
    SELECT coalesce(sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del), 0)::bigint
      FROM pg_stat_all_tables s
     WHERE s.relid = to_regclass($1)
        OR s.relid IN (SELECT p.relid FROM pg_partition_tree(to_regclass($1)) p WHERE p.isleaf);
$fn$;
COMMENT ON FUNCTION dynindex._storage_writes(text) IS
  'Internal: rows inserted + updated + deleted in a storage relation and its partitions, from pg_stat_all_tables (flushed at most once a second per backend; pg_stat_force_next_flush() hurries it).';

CREATE FUNCTION dynindex.index_stats(table_name text)
RETURNS TABLE (index_name text, index_type text, projection text, items bigint, bytes bigint,
               fraction_of_table numeric, avg_entry_bytes numeric,
               table_writes bigint, index_writes bigint, write_amplification numeric)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    t       record;
    i       record;
    t_items bigint;
    t_bytes bigint;
    t_wr    bigint;
    i_items bigint;
    i_bytes bigint;
    i_wr    bigint;
BEGIN
    SELECT * INTO t FROM dynindex.tables d WHERE d.table_name = $1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ResourceNotFoundException: Requested resource not found'
            USING ERRCODE = 'YD002';
    END IF;
    EXECUTE format('SELECT count(*), coalesce(sum(size), 0)::bigint FROM %s', t.storage)
        INTO t_items, t_bytes;
    t_wr := dynindex._storage_writes(t.storage);
    index_name := NULL; index_type := 'TABLE'; projection := NULL;
    items := t_items; bytes := t_bytes;
    fraction_of_table := CASE WHEN t_items > 0 THEN 1.0 END;
    avg_entry_bytes := CASE WHEN t_items > 0 THEN round(t_bytes::numeric / t_items, 1) END;
    table_writes := t_wr; index_writes := NULL; write_amplification := NULL;
    RETURN NEXT;
    FOR i IN SELECT x.* FROM dynindex.indexes x WHERE x.table_name = $1 ORDER BY x.position LOOP
        EXECUTE format('SELECT count(*), coalesce(sum(size), 0)::bigint FROM %s', i.storage)
            INTO i_items, i_bytes;
        IF i.is_global THEN
            SELECT coalesce(sum(a.index_writes), 0)::bigint INTO i_wr
              FROM dynindex.gsi_applied a
             WHERE a.table_num = t.num AND a.index_name = i.index_name;
        ELSE
            i_wr := dynindex._storage_writes(i.storage);
        END IF;
        index_name := i.index_name;
        index_type := CASE WHEN i.is_global THEN 'GSI' ELSE 'LSI' END;
        projection := i.projection->>'ProjectionType';
        items := i_items; bytes := i_bytes;
        fraction_of_table := CASE WHEN t_items > 0 THEN round(i_items::numeric / t_items, 4) END;
        avg_entry_bytes := CASE WHEN i_items > 0 THEN round(i_bytes::numeric / i_items, 1) END;
        table_writes := t_wr; index_writes := i_wr;
        write_amplification := CASE WHEN t_wr > 0 THEN round(i_wr::numeric / t_wr, 4) END;
        RETURN NEXT;
    END LOOP;
END
$fn$;
COMMENT ON FUNCTION dynindex.index_stats(text) IS
  'Per table and secondary index: items, bytes (DynamoDB sizes; index entries are their projected size), fraction of the table''s items the index holds (sparseness), average entry size, and the write amplification observed: index writes (GSIs: counted by the GSI worker; LSIs: rows written to the index relation) per table write (rows written to the table relation, from pg_stat_all_tables). Counts items exactly: cost grows with the table.';

-- Time to Live (docs/ttl.md)
CREATE FUNCTION dynindex.expire_items(table_name text, max_items int DEFAULT 1000)
RETURNS bigint
AS 'MODULE_PATHNAME', 'dynindex_expire_items'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.expire_items(text, int) IS
  'Time to Live sweep of one table: delete (through the DeleteItem write path: LSIs, GSIs and item collections follow) up to max_items items whose TTL attribute is a Number of epoch seconds in the past and at most five years old; returns how many were deleted; 0 when TTL is disabled. The per-database worker runs it every dynindex.ttl_interval for each table with TTL enabled.';
