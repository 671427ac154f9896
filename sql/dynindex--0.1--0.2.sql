-- dynindex 0.1 -> 0.2: every schema change of release 0.2.
-- CREATE EXTENSION dynindex runs dynindex--0.1.sql (frozen: 0.1 is released) and then
-- this script; ALTER EXTENSION dynindex UPDATE runs this script on a 0.1 database.
-- Each feature keeps its own section below (parallel work edits only its own).
\echo Use "ALTER EXTENSION dynindex UPDATE TO '0.2'" to load this file. \quit

-- == streams ==
-- DynamoDB Streams (docs/streams.md).  One row per enabling of a table's stream; a stream
-- outlives its table (DeleteTable disables it; its records stay readable 24 hours), so
-- this is not a foreign key to dynindex.tables.
CREATE TABLE dynindex.streams (
    stream_id    bigserial PRIMARY KEY,
    table_name   text NOT NULL,
    table_num    bigint NOT NULL,
    stream_label text NOT NULL,            -- creation time, ISO 8601 with milliseconds (UTC)
    view_type    text NOT NULL CHECK (view_type IN ('KEYS_ONLY', 'NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES')),
    shard_count  int NOT NULL CHECK (shard_count > 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    disabled_at  timestamptz               -- NULL while enabled
);
COMMENT ON TABLE dynindex.streams IS 'One row per stream (each enabling of a table''s stream); disabled_at is set when it is disabled or its table deleted.';
-- at most one enabled stream per table
CREATE UNIQUE INDEX streams_enabled_idx ON dynindex.streams (table_num) WHERE disabled_at IS NULL;
CREATE INDEX streams_table_idx ON dynindex.streams (table_name, stream_id);

-- Shards are ranges of sequence numbers of one bucket (a hash of the partition key):
-- a record (stream_id, bucket, seq) belongs to the shard of its bucket whose
-- [start_seq, end_seq] holds seq.  Writers never touch this table.
CREATE TABLE dynindex.stream_shards (
    stream_id       bigint NOT NULL,
    shard_id        text NOT NULL,
    bucket          int NOT NULL,
    parent_shard_id text,
    start_seq       bigint NOT NULL,
    end_seq         bigint,                -- NULL while open
    created_at      timestamptz NOT NULL DEFAULT now(),
    closed_at       timestamptz,
    PRIMARY KEY (stream_id, shard_id)
);
COMMENT ON TABLE dynindex.stream_shards IS 'Shards of each stream: a bucket''s records with seq in [start_seq, end_seq] (end_seq NULL while open).';
CREATE INDEX stream_shards_bucket_idx ON dynindex.stream_shards (stream_id, bucket, start_seq);

-- One row per item-level change, written by the writing transaction (src/streams/capture.c).
CREATE TABLE dynindex.stream_records (
    stream_id     bigint NOT NULL,
    bucket        int NOT NULL,
    seq           bigint NOT NULL,
    created_at    timestamptz NOT NULL,
    event_name    text NOT NULL,           -- INSERT, MODIFY, REMOVE
    keys          jsonb NOT NULL,
    new_image     jsonb,
    old_image     jsonb,
    size_bytes    int NOT NULL,
    user_identity jsonb,                   -- TTL deletions: {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
    PRIMARY KEY (stream_id, bucket, seq)
);
COMMENT ON TABLE dynindex.stream_records IS 'Stream records: one per committed item-level change of a table with a stream.';

-- Sequence numbers of stream records (one source per database; see DynStreamReadHorizon).
CREATE SEQUENCE dynindex.stream_seq;
COMMENT ON SEQUENCE dynindex.stream_seq IS 'Sequence numbers of stream records, increasing per item in commit order.';

-- A 0.1 table created or updated with StreamEnabled = true kept the setting in
-- dynindex.tables.options but had no stream: it gets one now (the stream holds the
-- changes from the update on); the setting leaves options (dynindex.streams is the truth).
WITH asked AS (
    SELECT table_name, num, options #>> '{StreamSpecification,StreamViewType}' AS view_type
    FROM dynindex.tables
    WHERE options #>> '{StreamSpecification,StreamEnabled}' = 'true'
      AND options #>> '{StreamSpecification,StreamViewType}' IS NOT NULL
), made AS (
    INSERT INTO dynindex.streams (table_name, table_num, stream_label, view_type, shard_count, created_at)
    SELECT table_name, num, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS'), view_type, 4, now()
    FROM asked
    RETURNING stream_id, shard_count
), first_seq AS (
    SELECT nextval('dynindex.stream_seq') AS seq
)
INSERT INTO dynindex.stream_shards (stream_id, shard_id, bucket, start_seq, created_at)
SELECT m.stream_id,
       'shardId-' || lpad(f.seq::text, 20, '0') || '-' || lpad(to_hex(hashtext(m.stream_id || '/' || b)), 8, '0'),
       b, f.seq, now()
FROM made m CROSS JOIN first_seq f CROSS JOIN generate_series(0, m.shard_count - 1) AS b;
UPDATE dynindex.tables SET options = options - 'StreamSpecification' WHERE options ? 'StreamSpecification';
-- every backend drops its cached catalog (it keeps the stream state of each table): a
-- change of dynindex.tables' definition (here: its unchanged default) sends the
-- invalidation its cache listens for
ALTER TABLE dynindex.tables ALTER COLUMN options SET DEFAULT '{}';

CREATE FUNCTION dynindex.stream_read_horizon()
RETURNS bigint
AS 'MODULE_PATHNAME', 'dynindex_stream_read_horizon'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.stream_read_horizon() IS
  'Every stream record with seq below the result is settled: committed and visible to a snapshot taken after the call, or rolled back. Read stream records only below it.';

SELECT pg_catalog.pg_extension_config_dump('dynindex.streams', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.stream_shards', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.stream_records', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.streams_stream_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.stream_seq', '');

-- streams, the read side (Streams API, shard maintenance, SQL consumer): src/api/streams.c, src/streams/read.c, maintain.c
-- Trim point of a stream's bucket: every record with seq <= trimmed_seq is gone.
CREATE TABLE dynindex.stream_trim (
  stream_id   bigint NOT NULL,
  bucket      int NOT NULL,
  trimmed_seq bigint NOT NULL,
  PRIMARY KEY (stream_id, bucket)
);
SELECT pg_catalog.pg_extension_config_dump('dynindex.stream_trim', '');
-- The key that signs shard iterators (one row, made on first use).
CREATE TABLE dynindex.stream_secret (
  id     int PRIMARY KEY CHECK (id = 1),
  secret bytea NOT NULL
);
REVOKE ALL ON dynindex.stream_secret FROM PUBLIC;

CREATE FUNCTION dynindex.maintain_streams()
RETURNS jsonb
AS 'MODULE_PATHNAME', 'dynindex_maintain_streams'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.maintain_streams() IS
  'One stream maintenance round now (the per-database worker runs one every dynindex.stream_maintenance_interval): first shards for new streams, rotation of shards older than dynindex.stream_shard_lifetime and closing of the shards of disabled streams, trimming of records older than dynindex.stream_retention, removal of empty closed shards and disabled streams. Returns the counts.';

CREATE FUNCTION dynindex.stream_changes(table_name text, after_sequence_number text DEFAULT NULL,
                                        max_records int DEFAULT 1000)
RETURNS TABLE (sequence_number text, event_name text, keys jsonb, new_image jsonb, old_image jsonb,
               approximate_creation_time timestamptz, size_bytes int, user_identity jsonb,
               stream_label text, stream_view_type text)
AS 'MODULE_PATHNAME', 'dynindex_stream_changes'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.stream_changes(text, text, int) IS
  'The stream records of a table (all its streams, all shards) after a SequenceNumber (NULL: from the oldest kept), in sequence order, at most max_records (1..10000), only committed and settled ones: a consumer that stores the last sequence_number it processed and passes it back sees every change once. Raises TrimmedDataAccessException when records after the position were trimmed. Needs READ COMMITTED.';

-- == partiql ==

CREATE FUNCTION dynindex.partiql(statement text, parameters jsonb DEFAULT NULL)
RETURNS SETOF jsonb
LANGUAGE plpgsql
AS $fn$
DECLARE
    req jsonb := jsonb_build_object('Statement', statement);
    res jsonb;
BEGIN
    IF parameters IS NOT NULL THEN
        req := req || jsonb_build_object('Parameters', parameters);
    END IF;
    LOOP
        res := dynindex.api('ExecuteStatement', req);
        RETURN QUERY SELECT i FROM jsonb_array_elements(res -> 'Items') i;
        EXIT WHEN res ->> 'NextToken' IS NULL;
        req := req || jsonb_build_object('NextToken', res ->> 'NextToken');
    END LOOP;
END
$fn$;
COMMENT ON FUNCTION dynindex.partiql(text, jsonb) IS
    'Run one PartiQL statement (ExecuteStatement) and return its items as rows, following NextToken until the last page: parameters is a JSON array of AttributeValues for the statement''s ? placeholders; writes return the RETURNING item, if any.';

-- == backups ==
-- On-demand backups (src/api/backups.c, src/backup/; docs/backups.md).  One
-- catalog row per backup; the items are a copy relation dynindex_backups.b<num>
-- (pk, sk, size, item) made with CREATE TABLE ... AS in the CreateBackup
-- request's transaction, so the copy is one MVCC snapshot of the table.
CREATE SCHEMA IF NOT EXISTS dynindex_backups;
COMMENT ON SCHEMA dynindex_backups IS 'Item copies of on-demand backups (internal; use CreateBackup / RestoreTableFromBackup).';

CREATE SEQUENCE dynindex.backup_num_seq;

CREATE TABLE dynindex.backups (
    backup_arn       text PRIMARY KEY,
    backup_id        text NOT NULL,   -- <14-digit epoch milliseconds>-<8 hex>: the ARN's last part
    backup_name      text NOT NULL,
    num              bigint NOT NULL UNIQUE DEFAULT nextval('dynindex.backup_num_seq'),
    storage          text NOT NULL,
    backup_type      text NOT NULL DEFAULT 'USER',
    status           text NOT NULL DEFAULT 'AVAILABLE',
    created_at       timestamptz NOT NULL,
    table_name       text NOT NULL,
    table_id         uuid NOT NULL,
    table_arn        text NOT NULL,
    table_created_at timestamptz NOT NULL,
    item_count       bigint NOT NULL,
    size_bytes       bigint NOT NULL,
    definition       jsonb NOT NULL
);
CREATE INDEX ON dynindex.backups (backup_id);
COMMENT ON TABLE dynindex.backups IS 'One row per on-demand backup: the source table''s full definition (keys, indexes, billing, options, tags, TTL) and the copy relation holding its items; kept after the table is deleted (internal catalog).';
SELECT pg_catalog.pg_extension_config_dump('dynindex.backups', '');
SELECT pg_catalog.pg_extension_config_dump('dynindex.backup_num_seq', '');

-- Strings holding U+0000 (src/types/nulstr.c; docs/data-model.md): jsonb cannot
-- hold "\u0000", so this entry point takes and returns JSON text.  (Not an
-- overload of dynindex.api: an untyped literal would then resolve to text.)
CREATE FUNCTION dynindex.api_text(operation text, request text)
RETURNS text
AS 'MODULE_PATHNAME', 'dynindex_api_text'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.api_text(text, text) IS
  'dynindex.api with JSON text in and out: strings may hold U+0000 ("\u0000"), which jsonb cannot; the gateway uses it. Errors as dynindex.api.';

-- == security ==
-- (src/security/, docs/security.md)

-- TransactWriteItems ClientRequestTokens are scoped to the calling role: a
-- token of one role is a new request for another, which can neither replay
-- nor block it.  Tokens of 0.1 (no role) expire within 10 minutes.
ALTER TABLE dynindex.transaction_tokens ADD COLUMN role_oid oid NOT NULL DEFAULT 0;
ALTER TABLE dynindex.transaction_tokens DROP CONSTRAINT transaction_tokens_pkey;
ALTER TABLE dynindex.transaction_tokens ADD PRIMARY KEY (role_oid, token);
COMMENT ON COLUMN dynindex.transaction_tokens.role_oid IS 'The role that sent the request: tokens are scoped to their role.';

-- The permission model (docs/security.md).  Rights on a table: SELECT (read)
-- and INSERT, UPDATE, DELETE (write) on its storage relation, granted by
-- dynindex.grant_table; admin and stream in dynindex.table_rights.
-- Account-wide: dynindex_admin (every right on every table, CreateTable) and
-- dynindex_creator (CreateTable; the creator administers its tables).
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'dynindex_admin') THEN
        CREATE ROLE dynindex_admin NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'dynindex_creator') THEN
        CREATE ROLE dynindex_creator NOLOGIN;
    END IF;
END
$roles$;

CREATE TABLE dynindex.table_rights (
    table_name text NOT NULL REFERENCES dynindex.tables ON DELETE CASCADE,
    role_name  name NOT NULL,
    admin      boolean NOT NULL DEFAULT false,
    stream     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (table_name, role_name)
);
COMMENT ON TABLE dynindex.table_rights IS
  'Per table and role: the admin right (UpdateTable, DeleteTable, indexes, streams, TTL, tags, backups, grants) and the stream right (internal catalog; use dynindex.grant_table).';
SELECT pg_catalog.pg_extension_config_dump('dynindex.table_rights', '');

CREATE TABLE dynindex.leading_keys (
    table_name  text NOT NULL REFERENCES dynindex.tables ON DELETE CASCADE,
    role_name   name NOT NULL,
    key_value   text,
    begins_with boolean NOT NULL DEFAULT false,
    PRIMARY KEY (table_name, role_name)
);
COMMENT ON TABLE dynindex.leading_keys IS
  'LeadingKeys restrictions: a role sees and writes only items whose partition key equals (or begins with) key_value, or its own role name when key_value is NULL; enforced by row-level security on the storage relations (internal catalog; use dynindex.restrict_leading_keys).';
SELECT pg_catalog.pg_extension_config_dump('dynindex.leading_keys', '');

-- Make a table's index storage and row-level security follow the table's
-- grants and LeadingKeys rows: LSIs get the table's SELECT/INSERT/UPDATE/
-- DELETE grants (writers maintain them), GSIs its SELECT grants (the worker
-- writes them); restricted roles get a restrictive policy on the partition
-- key (the base key's, also in index storage) of every storage relation.
-- With Citus, these grants stay on the coordinator (citus.enable_ddl_propagation
-- off): item operations there run with the owner's rights once dynindex checked
-- the caller's (src/security/), and grants on the shards would let a role write
-- distributed storage directly, past the GSI queue (it has no write guard).
CREATE FUNCTION dynindex._secure_storage(p_table text, p_force boolean DEFAULT true)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET citus.enable_ddl_propagation = off
AS $fn$
DECLARE
    t        record;
    i        record;
    g        record;
    lk       record;
    rel      text;
    key_type text;
    enc      text;
    pred     text;
    rels     text[];
BEGIN
    SELECT * INTO t FROM dynindex.tables d WHERE d.table_name = p_table;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    rels := ARRAY[t.storage];
    FOR i IN SELECT x.storage, x.is_global FROM dynindex.indexes x WHERE x.table_name = p_table LOOP
        rels := rels || i.storage;
        FOR g IN SELECT DISTINCT a.grantee FROM pg_class c, aclexplode(c.relacl) a
                  WHERE c.oid = i.storage::regclass AND a.grantee <> c.relowner LOOP
            EXECUTE format('REVOKE ALL ON %s FROM %s', i.storage,
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
        END LOOP;
        FOR g IN SELECT a.grantee, array_agg(a.privilege_type ORDER BY a.privilege_type) AS privs
                   FROM pg_class c, aclexplode(c.relacl) a
                  WHERE c.oid = t.storage::regclass AND a.grantee <> c.relowner
                    AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
                  GROUP BY a.grantee LOOP
            CONTINUE WHEN i.is_global AND NOT 'SELECT' = ANY (g.privs);
            EXECUTE format('GRANT %s ON %s TO %s',
                           CASE WHEN i.is_global THEN 'SELECT' ELSE array_to_string(g.privs, ', ') END, i.storage,
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
        END LOOP;
    END LOOP;

    SELECT d->>'AttributeType' INTO key_type
      FROM jsonb_array_elements(t.attribute_definitions) d
     WHERE d->>'AttributeName' = (SELECT k->>'AttributeName' FROM jsonb_array_elements(t.key_schema) k
                                   WHERE k->>'KeyType' = 'HASH');
    FOREACH rel IN ARRAY rels LOOP
        -- Row-level security changes lock the relation (ACCESS EXCLUSIVE): only
        -- when something changes, so that UpdateTable adding a GSI does not wait
        -- for the table's writers.  p_force: the restrictions themselves changed.
        IF NOT EXISTS (SELECT 1 FROM dynindex.leading_keys l WHERE l.table_name = p_table) THEN
            IF EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = rel::regclass AND c.relrowsecurity)
               OR EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = rel::regclass AND p.polname LIKE 'dynindex%') THEN
                FOR g IN SELECT p.polname FROM pg_policy p WHERE p.polrelid = rel::regclass AND p.polname LIKE 'dynindex%' LOOP
                    EXECUTE format('DROP POLICY %I ON %s', g.polname, rel);
                END LOOP;
                EXECUTE format('ALTER TABLE %s DISABLE ROW LEVEL SECURITY', rel);
            END IF;
            CONTINUE;
        END IF;
        CONTINUE WHEN NOT p_force AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = rel::regclass
                                                AND p.polname = 'dynindex_all');
        FOR g IN SELECT p.polname FROM pg_policy p WHERE p.polrelid = rel::regclass AND p.polname LIKE 'dynindex%' LOOP
            EXECUTE format('DROP POLICY %I ON %s', g.polname, rel);
        END LOOP;
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', rel);
        EXECUTE format('CREATE POLICY dynindex_all ON %s USING (true) WITH CHECK (true)', rel);
        FOR lk IN SELECT l.* FROM dynindex.leading_keys l
                   WHERE l.table_name = p_table
                     AND EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = l.role_name) LOOP
            IF lk.key_value IS NULL THEN
                enc := format('dynindex.encode_key(pg_catalog.jsonb_build_object(%L, CURRENT_USER::text))', key_type);
            ELSE
                enc := format('%L::bytea', dynindex.encode_key(jsonb_build_object(key_type, lk.key_value))::text);
            END IF;
            pred := CASE WHEN lk.begins_with
                         THEN format('pg_catalog.substr(pk, 1, pg_catalog.length(%1$s)) = %1$s', enc)
                         ELSE format('pk = %s', enc) END;
            EXECUTE format('CREATE POLICY %I ON %s AS RESTRICTIVE TO %I USING (%s) WITH CHECK (%s)',
                           'dynindex_leading_keys_' || lk.role_name, rel, lk.role_name, pred, pred);
        END LOOP;
    END LOOP;
END
$fn$;
REVOKE ALL ON FUNCTION dynindex._secure_storage(text, boolean) FROM PUBLIC;
COMMENT ON FUNCTION dynindex._secure_storage(text, boolean) IS
  'Internal: make a table''s index storage relations carry the table''s grants and every storage relation its LeadingKeys policies.';

-- Apply a recipe (called by dynindex.grant_table / revoke_table once the
-- caller's admin right on the table was checked, with the owner's rights).
CREATE FUNCTION dynindex._apply_grant(p_table text, p_role name, p_access text, p_grant boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET citus.enable_ddl_propagation = off
AS $fn$
DECLARE
    st text;
BEGIN
    SELECT d.storage INTO st FROM dynindex.tables d WHERE d.table_name = p_table;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ResourceNotFoundException: Requested resource not found: Table: % not found', p_table
            USING ERRCODE = 'YD002';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = p_role) THEN
        RAISE EXCEPTION 'role "%" does not exist', p_role USING ERRCODE = 'undefined_object';
    END IF;
    IF p_access NOT IN ('read', 'write', 'admin', 'stream', 'all') OR (p_grant AND p_access = 'all') THEN
        RAISE EXCEPTION 'access must be read, write, admin or stream%, not "%"',
            CASE WHEN p_grant THEN '' ELSE ' (or all)' END, p_access USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_grant AND p_access IN ('read', 'write', 'admin') THEN
        EXECUTE format('GRANT %s ON %s TO %I',
                       CASE WHEN p_access = 'read' THEN 'SELECT' ELSE 'SELECT, INSERT, UPDATE, DELETE' END, st, p_role);
    ELSIF NOT p_grant AND p_access IN ('read', 'all') THEN
        EXECUTE format('REVOKE ALL ON %s FROM %I', st, p_role);
    ELSIF NOT p_grant AND p_access IN ('write', 'admin') THEN
        EXECUTE format('REVOKE INSERT, UPDATE, DELETE ON %s FROM %I', st, p_role);
    END IF;
    IF p_grant AND p_access IN ('admin', 'stream') THEN
        INSERT INTO dynindex.table_rights AS r (table_name, role_name, admin, stream)
            VALUES (p_table, p_role, p_access = 'admin', p_access = 'stream')
            ON CONFLICT (table_name, role_name) DO UPDATE
            SET admin = r.admin OR excluded.admin, stream = r.stream OR excluded.stream;
    ELSIF NOT p_grant THEN
        UPDATE dynindex.table_rights r
           SET admin = r.admin AND p_access NOT IN ('admin', 'write', 'read', 'all'),
               stream = r.stream AND p_access NOT IN ('stream', 'all')
         WHERE r.table_name = p_table AND r.role_name = p_role;
        DELETE FROM dynindex.table_rights r WHERE r.table_name = p_table AND r.role_name = p_role
                                              AND NOT r.admin AND NOT r.stream;
    END IF;
    PERFORM dynindex._secure_storage(p_table);
END
$fn$;
REVOKE ALL ON FUNCTION dynindex._apply_grant(text, name, text, boolean) FROM PUBLIC;
COMMENT ON FUNCTION dynindex._apply_grant(text, name, text, boolean) IS
  'Internal: grant or revoke a recipe (read, write, admin, stream; all to revoke) of a table to a role.';

CREATE FUNCTION dynindex._apply_leading_keys(p_table text, p_role name, p_value text, p_begins_with boolean, p_set boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = p_role) THEN
        RAISE EXCEPTION 'role "%" does not exist', p_role USING ERRCODE = 'undefined_object';
    END IF;
    -- row-level security needs the item operations to run as the role, which
    -- distributed storage does not allow (docs/security.md, "Citus")
    IF p_set AND to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        IF EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition p, dynindex.tables d
                    WHERE d.table_name = p_table AND p.logicalrelid = to_regclass(d.storage)) THEN
            RAISE EXCEPTION 'LeadingKeys restrictions are not supported on distributed tables'
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Restrict roles on tables that are not distributed (dynindex.distributed off when the table is created).';
        END IF;
    END IF;
    IF p_set THEN
        INSERT INTO dynindex.leading_keys AS l (table_name, role_name, key_value, begins_with)
            VALUES (p_table, p_role, p_value, p_begins_with)
            ON CONFLICT (table_name, role_name) DO UPDATE
            SET key_value = excluded.key_value, begins_with = excluded.begins_with;
    ELSE
        DELETE FROM dynindex.leading_keys l WHERE l.table_name = p_table AND l.role_name = p_role;
    END IF;
    PERFORM dynindex._secure_storage(p_table);
END
$fn$;
REVOKE ALL ON FUNCTION dynindex._apply_leading_keys(text, name, text, boolean, boolean) FROM PUBLIC;
COMMENT ON FUNCTION dynindex._apply_leading_keys(text, name, text, boolean, boolean) IS
  'Internal: set or remove a role''s LeadingKeys restriction on a table and rebuild the policies.';

-- dynindex.distribute_table copies a table's grants to its new shards:
-- take them back there (a REVOKE propagated to the shards, in the
-- distributing transaction), then grant them again on the coordinator's
-- relation only, so that only it carries the recipes (see _secure_storage).
CREATE FUNCTION dynindex._revoke_shard_grants(p_table text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    r    record;
    g    record;
    prop text;
BEGIN
    FOR r IN SELECT d.storage AS rel FROM dynindex.tables d WHERE d.table_name = p_table
             UNION ALL
             SELECT x.storage FROM dynindex.indexes x WHERE x.table_name = p_table LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition p
                                   WHERE p.logicalrelid = to_regclass(r.rel));
        FOR g IN SELECT a.grantee, string_agg(DISTINCT a.privilege_type, ', ') AS privs
                   FROM pg_class c, aclexplode(c.relacl) a
                  WHERE c.oid = to_regclass(r.rel) AND a.grantee <> c.relowner
                  GROUP BY a.grantee LOOP
            EXECUTE format('REVOKE ALL ON %s FROM %s', r.rel,
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
            prop := current_setting('citus.enable_ddl_propagation');
            PERFORM set_config('citus.enable_ddl_propagation', 'off', true);
            EXECUTE format('GRANT %s ON %s TO %s', g.privs, r.rel,
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
            PERFORM set_config('citus.enable_ddl_propagation', prop, true);
        END LOOP;
    END LOOP;
END
$fn$;
REVOKE ALL ON FUNCTION dynindex._revoke_shard_grants(text) FROM PUBLIC;
COMMENT ON FUNCTION dynindex._revoke_shard_grants(text) IS
  'Internal: revoke on the shards of a distributed table (and of its indexes) the grants its coordinator relations carry, which keep them; item operations on distributed tables run with the owner''s rights.';

CREATE FUNCTION dynindex.grant_table(table_name text, role_name name, access text)
RETURNS void
AS 'MODULE_PATHNAME', 'dynindex_grant_table'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.grant_table(text, name, text) IS
  'Grant a role a recipe on a table: read (GetItem, BatchGetItem, Query, Scan, TransactGetItems, DescribeTable), write (read plus PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems), admin (write plus UpdateTable, DeleteTable, indexes, streams, TTL, tags, backups and granting), stream (the table''s stream). Needs the admin right on the table.';

CREATE FUNCTION dynindex.revoke_table(table_name text, role_name name, access text DEFAULT 'all')
RETURNS void
AS 'MODULE_PATHNAME', 'dynindex_revoke_table'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.revoke_table(text, name, text) IS
  'Revoke a recipe from a role: read or all (every right), write (write and admin: the role keeps read), admin, stream. Needs the admin right on the table.';

CREATE FUNCTION dynindex.restrict_leading_keys(table_name text, role_name name,
                                               key_value text DEFAULT NULL, begins_with boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'dynindex_restrict_leading_keys'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.restrict_leading_keys(text, name, text, boolean) IS
  'DynamoDB''s dynamodb:LeadingKeys: limit a role (and its members) to items whose partition key equals key_value (begins with it, when begins_with), or equals the name of the role running the request when key_value is NULL; enforced by row-level security on the table''s storage and index storage, for every read and write. Needs the admin right on the table.';

CREATE FUNCTION dynindex.unrestrict_leading_keys(table_name text, role_name name)
RETURNS void
AS 'MODULE_PATHNAME', 'dynindex_unrestrict_leading_keys'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.unrestrict_leading_keys(text, name) IS
  'Remove a role''s LeadingKeys restriction on a table. Needs the admin right on the table.';

CREATE FUNCTION dynindex.has_table_access(table_name text, access text, role_name name DEFAULT CURRENT_USER)
RETURNS boolean
AS 'MODULE_PATHNAME', 'dynindex_has_table_access'
LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION dynindex.has_table_access(text, text, name) IS
  'Does a role hold a right (read, write, admin, stream, describe) on a table, as the API checks it? (Any caller may ask about itself; asking about another role needs the admin right on the table.)';

-- Application roles need no privileges on the catalog or the storage: the
-- API checks the caller's rights and does dynindex's own work with the
-- extension owner's.  USAGE on the two schemas lets any role call the API
-- (which checks) and lets item operations, which run as the caller so that
-- PostgreSQL enforces the storage grants and row-level security, name the
-- storage relations.  Rights given on catalog objects in 0.1 are revoked;
-- storage relations created by other roles in 0.1 move to the extension's
-- owner, their former owner becoming the table's administrator.
GRANT USAGE ON SCHEMA dynindex TO PUBLIC;
GRANT USAGE ON SCHEMA dynindex_data TO PUBLIC;
DO $upgrade$
DECLARE
    o   record;
    g   record;
    t   record;
    me  oid := (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'dynindex');
BEGIN
    -- catalog tables, views and sequences: nothing for anyone but the owner
    FOR o IN SELECT c.oid, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'dynindex' AND c.relkind IN ('r', 'v', 'S', 'p') LOOP
        FOR g IN SELECT DISTINCT a.grantee FROM aclexplode((SELECT relacl FROM pg_class WHERE oid = o.oid)) a
                  WHERE a.grantee <> me LOOP
            EXECUTE format('REVOKE ALL ON %s FROM %s', o.oid::regclass,
                           CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
        END LOOP;
    END LOOP;
    -- CREATE on the storage schema
    FOR g IN SELECT DISTINCT a.grantee FROM aclexplode((SELECT nspacl FROM pg_namespace WHERE nspname = 'dynindex_data')) a
              WHERE a.grantee <> me AND a.privilege_type = 'CREATE' LOOP
        EXECUTE format('REVOKE CREATE ON SCHEMA dynindex_data FROM %s',
                       CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
    END LOOP;
    -- storage relations owned by other roles (tables they created under 0.1)
    FOR t IN SELECT d.table_name, d.storage, c.relowner FROM dynindex.tables d
               JOIN pg_class c ON c.oid = to_regclass(d.storage) WHERE c.relowner <> me LOOP
        -- the relations and (pg_partition_tree lists none for a plain table) their partitions
        FOR o IN SELECT t.storage::regclass::oid AS relid
                 UNION SELECT p.relid FROM pg_partition_tree(t.storage::regclass) p
                 UNION SELECT i.storage::regclass::oid FROM dynindex.indexes i WHERE i.table_name = t.table_name
                 UNION SELECT p.relid FROM dynindex.indexes i, pg_partition_tree(i.storage::regclass) p
                  WHERE i.table_name = t.table_name LOOP
            EXECUTE format('ALTER TABLE %s OWNER TO %s', o.relid::regclass, quote_ident(pg_get_userbyid(me)));
        END LOOP;
        IF NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.oid = t.relowner AND r.rolsuper) THEN
            PERFORM dynindex._apply_grant(t.table_name, pg_get_userbyid(t.relowner), 'admin', true);
        END IF;
    END LOOP;
END
$upgrade$;
-- account-wide administrators may watch the GSIs and use index_stats
GRANT SELECT ON dynindex.gsi_status, dynindex.tables, dynindex.indexes, dynindex.gsi_changes,
    dynindex.gsi_applied TO dynindex_admin;

-- == metrics ==
-- Counters per table and index matching DynamoDB's CloudWatch metrics, kept in
-- shared memory (src/metrics/); docs/monitoring.md.
CREATE FUNCTION dynindex.metrics(
    OUT table_name text, OUT index_name text,
    OUT consumed_read_capacity_units float8, OUT consumed_write_capacity_units float8,
    OUT returned_item_count bigint, OUT conditional_check_failed_requests bigint,
    OUT user_errors bigint, OUT system_errors bigint,
    OUT successful_requests bigint, OUT successful_request_latency_ms_sum float8,
    OUT time_to_live_deleted_item_count bigint,
    OUT gsi_replicated_changes bigint, OUT gsi_replication_latency_ms_sum float8,
    OUT gsi_replication_latency_ms_last float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dynindex_metrics'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.metrics() IS
  'Raw metric counters of this database since the server started (or reset_metrics): one row per table and index that has any, and a row with table_name NULL for requests that name no table or an unknown one.';

CREATE FUNCTION dynindex.reset_metrics(table_name text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'dynindex_reset_metrics'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION dynindex.reset_metrics(text) FROM PUBLIC;
COMMENT ON FUNCTION dynindex.reset_metrics(text) IS
  'Set the metric counters of one table and its indexes (NULL: every table and the account row) of this database back to zero; returns the number of rows cleared.';

CREATE VIEW dynindex.table_metrics AS
SELECT t.table_name,
       i.index_name,
       CASE WHEN i.index_name IS NULL THEN NULL WHEN i.is_global THEN 'GSI' ELSE 'LSI' END AS index_type,
       coalesce(m.consumed_read_capacity_units, 0) AS consumed_read_capacity_units,
       coalesce(m.consumed_write_capacity_units, 0) AS consumed_write_capacity_units,
       coalesce(m.returned_item_count, 0) AS returned_item_count,
       coalesce(m.conditional_check_failed_requests, 0) AS conditional_check_failed_requests,
       coalesce(m.user_errors, 0) AS user_errors,
       coalesce(m.system_errors, 0) AS system_errors,
       coalesce(m.successful_requests, 0) AS successful_requests,
       coalesce(m.successful_request_latency_ms_sum, 0) AS successful_request_latency_ms_sum,
       coalesce(m.time_to_live_deleted_item_count, 0) AS time_to_live_deleted_item_count,
       CASE WHEN i.is_global THEN coalesce(m.gsi_replicated_changes, 0) END AS gsi_replicated_changes,
       CASE WHEN i.is_global THEN coalesce(m.gsi_replication_latency_ms_sum, 0) END AS gsi_replication_latency_ms_sum,
       CASE WHEN i.is_global THEN coalesce(m.gsi_replication_latency_ms_last, 0) END AS gsi_replication_latency_ms_last,
       CASE WHEN i.is_global THEN
           (SELECT count(*) FROM dynindex.gsi_changes c WHERE c.table_num = t.num) END AS gsi_queue_depth,
       CASE WHEN i.is_global THEN coalesce(extract(epoch FROM
           (SELECT clock_timestamp() - min(c.enqueued_at) FROM dynindex.gsi_changes c
             WHERE c.table_num = t.num)), 0)::float8 END AS gsi_oldest_change_age_seconds,
       CASE WHEN i.is_global THEN i.backfilling::int END AS gsi_backfilling
  FROM dynindex.tables t
  CROSS JOIN LATERAL (
        SELECT NULL::text AS index_name, NULL::boolean AS is_global, NULL::boolean AS backfilling
        UNION ALL
        SELECT x.index_name, x.is_global, x.backfilling
          FROM dynindex.indexes x WHERE x.table_name = t.table_name) i
  LEFT JOIN dynindex.metrics() m
         ON m.table_name = t.table_name AND m.index_name IS NOT DISTINCT FROM i.index_name;
COMMENT ON VIEW dynindex.table_metrics IS
  'Per table (index_name NULL) and per LSI/GSI: counters matching DynamoDB''s CloudWatch metrics (ConsumedRead/WriteCapacityUnits, ReturnedItemCount, ConditionalCheckFailedRequests, UserErrors, SystemErrors, SuccessfulRequestLatency, TimeToLiveDeletedItemCount) and GSI replication (changes applied, latency, queue depth, oldest change age, backfilling). Text columns are labels, numeric columns values (the gateway exports them to Prometheus).';

-- The counters name every table and index of the database: only administrators
-- and monitoring roles read them (docs/monitoring.md, docs/security.md).
REVOKE ALL ON FUNCTION dynindex.metrics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dynindex.metrics() TO dynindex_admin, pg_monitor;
GRANT SELECT ON dynindex.table_metrics TO dynindex_admin, pg_monitor;

-- == fidelity ==

-- == scaling ==
-- The top-level transaction that queued each GSI change.  The GSI worker waits
-- for it to finish committing before it reads the item; on a Citus cluster
-- that includes the writer's prepared transactions on the workers, which it
-- finds in pg_dist_transaction by this id (src/indexes/gsi_apply.c).  Unlike
-- the row's xmin it survives a requeue and names the top-level transaction
-- when the change was queued in a subtransaction.
ALTER TABLE dynindex.gsi_changes ADD COLUMN writer xid NOT NULL DEFAULT pg_catalog.pg_current_xact_id()::xid;

CREATE FUNCTION dynindex.distribute_table(table_name text)
RETURNS int
AS 'MODULE_PATHNAME', 'dynindex_distribute_table'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.distribute_table(text) IS
  'Distribute an existing table''s storage and its indexes'' storage over the Citus cluster (table and LSIs on the partition key, co-located; each GSI on its own partition key); returns how many relations it distributed.';

-- index_stats' write counts: a distributed relation's rows are written on the
-- workers, in its shards, so their statistics are there.
CREATE OR REPLACE FUNCTION dynindex._storage_writes(storage text)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    n bigint;
    distributed boolean := false;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN   -- Citus is installed
        EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = to_regclass($1))'
           INTO distributed USING $1;
    END IF;
    IF distributed THEN
        EXECUTE $q$SELECT coalesce(sum(result::bigint), 0)::bigint FROM run_command_on_shards($1,
                   'SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_all_tables WHERE relid = ''%s''::regclass')$q$
           INTO n USING $1;
        RETURN n;
    END IF;
    -- rows inserted, updated and deleted in a storage relation (all its
    -- partitions), from the cumulative statistics system
    SELECT coalesce(sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del), 0)::bigint INTO n
      FROM pg_stat_all_tables s
     WHERE s.relid = to_regclass($1)
        OR s.relid IN (SELECT p.relid FROM pg_partition_tree(to_regclass($1)) p WHERE p.isleaf);
    RETURN n;
END
$fn$;
COMMENT ON FUNCTION dynindex._storage_writes(text) IS
  'Internal: rows inserted + updated + deleted in a storage relation and its partitions, from pg_stat_all_tables (flushed at most once a second per backend; pg_stat_force_next_flush() hurries it); for a Citus distributed relation, summed over its shards on the workers.';

-- Parallel Scan by hash ranges: segment s of n reads the partition keys whose
-- hash lies in the s-th of n equal ranges of the int4 hash space, through an
-- index on (key_hash(pk), pk, sk) of every storage relation (new relations get
-- it at CreateTable/UpdateTable; existing ones here).
CREATE FUNCTION dynindex.key_hash(key bytea)
RETURNS int4
AS 'MODULE_PATHNAME', 'dynindex_key_hash'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.key_hash(bytea) IS
  'Hash (signed int4) of an encoded partition key, the one PostgreSQL and Citus hash a bytea by; parallel-Scan segment s of n holds the keys whose hash is in the s-th of n equal ranges of the int4 space, read through each storage relation''s (key_hash(pk), pk, sk) index.';

DO $scaling$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT storage FROM dynindex.tables LOOP
        EXECUTE format('CREATE INDEX ON %s (dynindex.key_hash(pk), pk, sk)', r.storage);
    END LOOP;
    FOR r IN SELECT storage FROM dynindex.indexes LOOP
        EXECUTE format('CREATE INDEX ON %s (dynindex.key_hash(ipk), ipk, isk, pk, sk)', r.storage);
    END LOOP;
END
$scaling$;

-- == fixes ==
-- The id a GSI change was first queued with.  The worker moves a change that
-- failed to apply to the end of the queue by giving it a new id
-- (DynGsiRequeueOldest, src/indexes/gsi_apply.c); first_id keeps the first
-- one, so that wait_for_indexes, which waits for the changes queued up to the
-- largest id it saw when it started, still waits for a change requeued since
-- (src/indexes/gsi_capture.c).  NULL for a change never requeued.
ALTER TABLE dynindex.gsi_changes ADD COLUMN first_id bigint;
CREATE INDEX gsi_changes_requeued ON dynindex.gsi_changes (table_num, first_id) WHERE first_id IS NOT NULL;
COMMENT ON COLUMN dynindex.gsi_changes.first_id IS
  'The id the change was first queued with, when the worker has requeued it (a failed apply moves a change to the end of the queue); NULL otherwise.';
