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

-- == fidelity ==

-- == scaling ==
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
