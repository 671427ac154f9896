-- dynindex 0.2 -> 0.3: every schema change of release 0.3.
-- CREATE EXTENSION dynindex runs dynindex--0.1.sql and dynindex--0.1--0.2.sql (both frozen:
-- 0.1 and 0.2 are released) and then this script; ALTER EXTENSION dynindex UPDATE runs it
-- on a 0.2 database (after dynindex--0.1--0.2.sql on a 0.1 one).
-- Each feature keeps its own section below (parallel work edits only its own), and the
-- library serves a database still at 0.2 until the update (docs/versions.md).
\echo Use "ALTER EXTENSION dynindex UPDATE TO '0.3'" to load this file. \quit

-- == object stores ==
-- Where exports are written and imports read (docs/import-export.md, "Object
-- stores"): a request's S3Bucket names a row here.  Only the extension's owner
-- reads the table (the secrets): administrators write it through
-- set_object_store and read it, without secrets, through list_object_stores.
CREATE TABLE dynindex.object_stores (
    bucket              text PRIMARY KEY,
    kind                text NOT NULL CHECK (kind IN ('s3', 'directory')),
    endpoint            text,
    region              text,
    access_key_id       text,
    secret_access_key   text,
    path_style          boolean NOT NULL DEFAULT true,
    directory           text,
    remote_bucket       text,
    bucket_owner        text
);
REVOKE ALL ON dynindex.object_stores FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('dynindex.object_stores', '');

CREATE FUNCTION dynindex.set_object_store(bucket text, kind text, endpoint text DEFAULT NULL,
    region text DEFAULT NULL, access_key_id text DEFAULT NULL, secret_access_key text DEFAULT NULL,
    path_style boolean DEFAULT true, directory text DEFAULT NULL, remote_bucket text DEFAULT NULL,
    bucket_owner text DEFAULT NULL)
RETURNS void AS 'MODULE_PATHNAME', 'dynindex_set_object_store' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.set_object_store(text, text, text, text, text, text, boolean, text, text, text) IS
    'Map a bucket name to an S3-compatible store or a server directory (administrators only)';
CREATE FUNCTION dynindex.drop_object_store(bucket text)
RETURNS boolean AS 'MODULE_PATHNAME', 'dynindex_drop_object_store' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.drop_object_store(text) IS 'Forget a bucket''s object store (administrators only)';
CREATE FUNCTION dynindex.list_object_stores(OUT bucket text, OUT kind text, OUT endpoint text,
    OUT region text, OUT access_key_id text, OUT path_style boolean, OUT directory text,
    OUT remote_bucket text, OUT bucket_owner text)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'dynindex_list_object_stores' LANGUAGE C STABLE;
COMMENT ON FUNCTION dynindex.list_object_stores() IS 'The object stores, without their secrets (administrators only)';
REVOKE ALL ON FUNCTION dynindex.set_object_store(text, text, text, text, text, text, boolean, text, text, text),
    dynindex.drop_object_store(text), dynindex.list_object_stores() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dynindex.set_object_store(text, text, text, text, text, text, boolean, text, text, text),
    dynindex.drop_object_store(text), dynindex.list_object_stores() TO dynindex_admin;

CREATE FUNCTION dynindex.list_objects(bucket text, prefix text DEFAULT '', OUT key text, OUT size bigint)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'dynindex_list_objects' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.list_objects(text, text) IS 'The objects of a bucket''s store under a prefix (administrators only)';
CREATE FUNCTION dynindex.read_object(bucket text, key text)
RETURNS bytea AS 'MODULE_PATHNAME', 'dynindex_read_object' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.read_object(text, text) IS 'An object of a bucket''s store (administrators only)';
CREATE FUNCTION dynindex.write_object(bucket text, key text, data bytea)
RETURNS text AS 'MODULE_PATHNAME', 'dynindex_write_object' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.write_object(text, text, bytea) IS 'Write an object to a bucket''s store; returns its ETag (administrators only)';
REVOKE ALL ON FUNCTION dynindex.list_objects(text, text), dynindex.read_object(text, text),
    dynindex.write_object(text, text, bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dynindex.list_objects(text, text), dynindex.read_object(text, text),
    dynindex.write_object(text, text, bytea) TO dynindex_admin;
CREATE FUNCTION dynindex._parse_s3_xml(body text, tag text)
RETURNS text[] AS 'MODULE_PATHNAME', 'dynindex__parse_s3_xml' LANGUAGE C IMMUTABLE STRICT;
COMMENT ON FUNCTION dynindex._parse_s3_xml(text, text) IS
    'Every <tag> element of an S3 response as the S3 client reads it (tests and the fuzz suite)';
CREATE FUNCTION dynindex._s3_authorization(method text, path text, query text, headers text[],
    payload_hash text, amz_date text, access_key_id text, secret_access_key text, region text)
RETURNS text AS 'MODULE_PATHNAME', 'dynindex__s3_authorization' LANGUAGE C IMMUTABLE STRICT;
COMMENT ON FUNCTION dynindex._s3_authorization(text, text, text, text[], text, text, text, text, text) IS
    'The SigV4 Authorization header the S3 client sends for a request (tests: S3''s documented examples)';


-- == pitr ==
-- Point-in-time recovery (src/history/, src/api/backups.c; docs/backups.md).
-- One row per table with PITR enabled (and per deleted table whose window is
-- still open).  Its item history is dynindex_history.h<num>: one row per
-- superseded state of a key (the item, or NULL when the key was absent)
-- with the commit stamp of the write that ended it (valid_to); the version
-- of a key at T is its row with the smallest valid_to > T, else the current
-- item.  A deleted table keeps its storage relation (kept_storage) and its
-- definition until its window closes.
CREATE SCHEMA IF NOT EXISTS dynindex_history;
COMMENT ON SCHEMA dynindex_history IS 'Item history of tables with point-in-time recovery (internal; use RestoreTableToPointInTime / dynindex.item_history).';

CREATE TABLE dynindex.pitr (
    table_num     bigint PRIMARY KEY,
    table_name    text NOT NULL,
    table_arn     text NOT NULL,
    history       text NOT NULL,            -- dynindex_history.h<num>
    recovery_days int NOT NULL CHECK (recovery_days BETWEEN 1 AND 35),
    enabled_at    timestamptz NOT NULL,     -- the earliest restorable time (a commit stamp)
    deleted_at    timestamptz,              -- the table was deleted (a commit stamp): restorable up to here
    kept_storage  text,                     -- its storage relation, kept while deleted
    definition    jsonb                     -- its definition at deletion (as CreateBackup records it)
);
CREATE INDEX ON dynindex.pitr (table_name);
COMMENT ON TABLE dynindex.pitr IS 'One row per table with point-in-time recovery enabled, or deleted with it and still restorable (internal catalog; use UpdateContinuousBackups).';
SELECT pg_catalog.pg_extension_config_dump('dynindex.pitr', '');

CREATE FUNCTION dynindex.item_history(table_name text, key jsonb)
RETURNS TABLE (valid_from timestamptz, valid_to timestamptz, item jsonb)
AS 'MODULE_PATHNAME', 'dynindex_item_history'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.item_history(text, jsonb) IS
  'The recorded versions of one item of a table with point-in-time recovery, oldest first: each with the commit times it was valid from and to (valid_from NULL: before the history starts; valid_to NULL: the current item), item NULL when the key was absent. Needs the admin right on the table.';

CREATE FUNCTION dynindex.restore_table_to_point_in_time(source_table text, target_table text, restore_time timestamptz)
RETURNS jsonb
AS $$ SELECT dynindex.api('RestoreTableToPointInTime', jsonb_build_object('SourceTableName', source_table,
        'TargetTableName', target_table, 'RestoreDateTime', extract(epoch FROM restore_time))) $$
LANGUAGE sql VOLATILE;
COMMENT ON FUNCTION dynindex.restore_table_to_point_in_time(text, text, timestamptz) IS
  'RestoreTableToPointInTime with a timestamptz: restores source_table as it was at restore_time (the transactions whose commit began at or before it) into the new table target_table; returns the TableDescription.';

CREATE FUNCTION dynindex.last_commit_stamp()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'dynindex_last_commit_stamp'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.last_commit_stamp() IS
  'The commit stamp of this session''s previous committed transaction, NULL if it recorded no item history: its writes are in every restore to this time or later, and in none to an earlier time.';

CREATE FUNCTION dynindex.trim_history()
RETURNS bigint
AS 'MODULE_PATHNAME', 'dynindex_trim_history'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION dynindex.trim_history() FROM PUBLIC;
COMMENT ON FUNCTION dynindex.trim_history() IS
  'One round of the worker''s history trim: deletes item history older than each table''s recovery period (in batches) and drops deleted tables whose window closed; returns the rows deleted.';
-- == import ==
-- Background jobs (src/worker/jobs.c): one row per import or export; the job's
-- process holds the advisory lock (4475230, job_id) while it runs, so a job not
-- done whose lock nobody holds was interrupted and is started again.
CREATE SEQUENCE dynindex.job_id_seq;
CREATE TABLE dynindex.jobs (
    job_id      bigint PRIMARY KEY DEFAULT nextval('dynindex.job_id_seq'),
    kind        text NOT NULL,
    state       text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done')),
    attempts    int NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    finished_at timestamptz
);
COMMENT ON TABLE dynindex.jobs IS 'Background jobs (imports, exports): queued, running or done (internal).';

-- ImportTable (src/api/imports.c, src/exchange/import.c): one row per import.
CREATE TABLE dynindex.imports (
    import_id        bigint PRIMARY KEY REFERENCES dynindex.jobs,
    import_arn       text NOT NULL UNIQUE,
    table_name       text NOT NULL,
    table_arn        text NOT NULL,
    table_id         uuid NOT NULL,
    client_token     text,
    request          jsonb NOT NULL,
    requested_by     name NOT NULL,
    status           text NOT NULL DEFAULT 'IN_PROGRESS',
    failure_code     text,
    failure_message  text,
    start_time       timestamptz NOT NULL DEFAULT clock_timestamp(),
    end_time         timestamptz,
    processed_items  bigint NOT NULL DEFAULT 0,
    imported_items   bigint NOT NULL DEFAULT 0,
    processed_bytes  bigint NOT NULL DEFAULT 0,
    error_count      bigint NOT NULL DEFAULT 0,
    files_total      int,
    files_done       int NOT NULL DEFAULT 0,
    file_records     bigint NOT NULL DEFAULT 0
);
CREATE INDEX ON dynindex.imports (client_token);
COMMENT ON TABLE dynindex.imports IS 'ImportTable jobs: request, status, counts (internal; see dynindex.import_status).';

-- The work of an import (src/exchange/import.c): its objects, in listing order,
-- then the btrees the bulk load dropped, to build after it, then the primary
-- keys to attach to the unique btrees built.  Two processes of the job take
-- tasks at once (FOR UPDATE SKIP LOCKED), a task of one kind only when the
-- tasks of the kinds before it are done; done_by is the transaction that did
-- one (for an object, the xmin of the rows it loaded), NULL until then: the
-- resume position after a crash.
CREATE TABLE dynindex.import_tasks (
    import_id   bigint NOT NULL REFERENCES dynindex.imports ON DELETE CASCADE,
    task_no     int NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('object', 'table_index', 'index', 'constraint')),
    target      text NOT NULL,
    statement   text,
    done_by     xid,
    PRIMARY KEY (import_id, task_no)
);
-- the tasks not done, in order: what each process reads to take the next one
CREATE INDEX ON dynindex.import_tasks (import_id, task_no) WHERE done_by IS NULL;
COMMENT ON TABLE dynindex.import_tasks IS 'The objects and deferred btrees of each import, and which are done (internal).';

-- The import error log (DynamoDB writes it to CloudWatch Logs): one row per
-- item-level error, naming the object, the record and the error, never the item.
CREATE TABLE dynindex.import_errors (
    import_id   bigint NOT NULL REFERENCES dynindex.imports ON DELETE CASCADE,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    object_key  text NOT NULL,
    record      bigint NOT NULL,
    error_type  text NOT NULL,
    message     text NOT NULL,
    logged_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (import_id, seq)
);
COMMENT ON TABLE dynindex.import_errors IS 'Item-level import errors (the CloudWatch log of DynamoDB imports), without item content.';

CREATE VIEW dynindex.import_status AS
SELECT i.import_arn, i.table_name, i.status, i.processed_items, i.imported_items, i.processed_bytes,
       i.error_count, i.files_done, i.files_total, i.start_time, i.end_time, i.failure_code, i.failure_message,
       j.state AS job_state, j.attempts AS job_attempts
  FROM dynindex.imports i JOIN dynindex.jobs j ON j.job_id = i.import_id;
COMMENT ON VIEW dynindex.import_status IS 'Progress of imports (ImportTable): counts so far, objects done, status.';

CREATE VIEW dynindex.import_log AS
SELECT i.import_arn, i.table_name, e.seq, e.object_key, e.record, e.error_type, e.message, e.logged_at
  FROM dynindex.import_errors e JOIN dynindex.imports i USING (import_id);
COMMENT ON VIEW dynindex.import_log IS 'Item-level import errors per import (what DynamoDB sends to the CloudWatchLogGroupArn log group).';

GRANT SELECT ON dynindex.import_status, dynindex.import_log TO dynindex_admin;

CREATE FUNCTION dynindex._import_index_entry(table_name text, index_name text, item jsonb, item_size int4,
    OUT ipk bytea, OUT isk bytea, OUT size int4, OUT entry jsonb)
RETURNS record
AS 'MODULE_PATHNAME', 'dynindex_import_index_entry'
LANGUAGE C STABLE;
COMMENT ON FUNCTION dynindex._import_index_entry(text, text, jsonb, int4) IS
  'Internal (ImportTable): an item''s entry in a global secondary index, NULL when not indexed.';
REVOKE ALL ON FUNCTION dynindex._import_index_entry(text, text, jsonb, int4) FROM PUBLIC;

CREATE FUNCTION dynindex.import_table(table_name text, key_schema jsonb, attribute_definitions jsonb,
    s3_bucket text, s3_key_prefix text DEFAULT NULL, input_format text DEFAULT 'DYNAMODB_JSON',
    input_compression_type text DEFAULT 'NONE', options jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE sql
AS $$
  SELECT dynindex.api('ImportTable', jsonb_strip_nulls(jsonb_build_object(
    'S3BucketSource', jsonb_build_object('S3Bucket', s3_bucket, 'S3KeyPrefix', s3_key_prefix),
    'InputFormat', input_format, 'InputCompressionType', input_compression_type,
    'TableCreationParameters', jsonb_build_object('TableName', table_name, 'KeySchema', key_schema,
        'AttributeDefinitions', attribute_definitions, 'BillingMode', 'PAY_PER_REQUEST')
        || coalesce(options->'TableCreationParameters', '{}'))
    || (options - 'TableCreationParameters')))->'ImportTableDescription'
$$;
COMMENT ON FUNCTION dynindex.import_table(text, jsonb, jsonb, text, text, text, text, jsonb) IS
  'Start an import (ImportTable) into a new on-demand table; returns the ImportTableDescription. options: more request members (ClientToken, InputFormatOptions, TableCreationParameters members).';

CREATE FUNCTION dynindex.wait_for_import(import_arn text, timeout interval DEFAULT '60 seconds')
RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
  deadline timestamptz := clock_timestamp() + timeout;
  s text;
BEGIN
  IF EXISTS (SELECT 1 FROM dynindex.imports i WHERE i.import_arn = wait_for_import.import_arn
             AND i.xmin::text = (txid_current_if_assigned() % 4294967296)::text) THEN
    RAISE EXCEPTION 'the import % starts when the transaction that requested it commits: wait in another transaction', import_arn;
  END IF;
  LOOP
    SELECT i.status INTO s FROM dynindex.imports i WHERE i.import_arn = wait_for_import.import_arn;
    IF s IS NULL OR s <> 'IN_PROGRESS' OR clock_timestamp() > deadline THEN
      RETURN s;
    END IF;
    PERFORM pg_sleep(0.05);
  END LOOP;
END
$$;
COMMENT ON FUNCTION dynindex.wait_for_import(text, interval) IS
  'Wait until an import is no longer IN_PROGRESS (at most timeout); returns its status.';

-- == capacity ==
-- Throughput enforcement and Contributor Insights (docs/capacity.md,
-- docs/contributor-insights.md).  The state of Contributor Insights lives in
-- dynindex.tables.options (no schema change: a database at 0.2 has it too);
-- these are the SQL functions that read the buckets, the sketches and the
-- throttling counters.

CREATE FUNCTION dynindex.throttle_metrics(
    OUT table_name text, OUT index_name text,
    OUT read_throttle_events bigint, OUT write_throttle_events bigint,
    OUT throttled_requests bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dynindex_throttle_metrics'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.throttle_metrics() IS
  'Throttling counters of this database since the server started (or reset_metrics): ReadThrottleEvents, WriteThrottleEvents and ThrottledRequests per table and index.';
REVOKE ALL ON FUNCTION dynindex.throttle_metrics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dynindex.throttle_metrics() TO dynindex_admin, pg_monitor;

-- table_metrics gains the throttling columns (at the end: CREATE OR REPLACE VIEW keeps the others)
CREATE OR REPLACE VIEW dynindex.table_metrics AS
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
       CASE WHEN i.is_global THEN i.backfilling::int END AS gsi_backfilling,
       coalesce(x.read_throttle_events, 0) AS read_throttle_events,
       coalesce(x.write_throttle_events, 0) AS write_throttle_events,
       CASE WHEN i.index_name IS NULL THEN coalesce(x.throttled_requests, 0) END AS throttled_requests
  FROM dynindex.tables t
  CROSS JOIN LATERAL (
        SELECT NULL::text AS index_name, NULL::boolean AS is_global, NULL::boolean AS backfilling
        UNION ALL
        SELECT x.index_name, x.is_global, x.backfilling
          FROM dynindex.indexes x WHERE x.table_name = t.table_name) i
  LEFT JOIN dynindex.metrics() m
         ON m.table_name = t.table_name AND m.index_name IS NOT DISTINCT FROM i.index_name
  LEFT JOIN dynindex.throttle_metrics() x
         ON x.table_name = t.table_name AND x.index_name IS NOT DISTINCT FROM i.index_name;

CREATE FUNCTION dynindex.throughput_buckets(table_name text,
    OUT index_name text, OUT read_rate float8, OUT write_rate float8, OUT burst_seconds float8,
    OUT read_tokens float8, OUT write_tokens float8, OUT enforced boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dynindex_throughput_buckets'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.throughput_buckets(text) IS
  'The token buckets of a table (index_name NULL) and of its GSIs: refill rates in units per second, the burst they hold in seconds, and the tokens in them now (negative: borrowed).';

CREATE FUNCTION dynindex.contributor_insights(table_name text, index_name text DEFAULT NULL,
    OUT rule text, OUT rule_name text, OUT rank int, OUT key text,
    OUT count bigint, OUT max_overcount bigint, OUT total bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dynindex_contributor_insights'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.contributor_insights(text, text) IS
  'Contributor Insights of a table or GSI: for each enabled rule (PKC, SKC: most accessed partition keys and items; PKT, SKT: most throttled) the keys its Space-Saving sketch holds, most counted first; count is an upper bound of the key''s occurrences, count - max_overcount a lower bound.';

CREATE FUNCTION dynindex.contributor_insights_minutes(table_name text, index_name text DEFAULT NULL,
    OUT rule text, OUT rule_name text, OUT minute timestamptz, OUT rank int, OUT key text,
    OUT count bigint, OUT max_overcount bigint, OUT total bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dynindex_contributor_insights_minutes'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.contributor_insights_minutes(text, text) IS
  'Contributor Insights over time, as CloudWatch shows it per minute: for each enabled rule and each of its last minutes that counted something (dynindex.contributor_insights_minutes of them, the running one included), the minute''s ten most counted keys with bounds of their counts in that minute.';

-- The ten most counted keys of every enabled Contributor Insights rule, for
-- the endpoints' Prometheus export (text columns are labels, key_count the value).
CREATE VIEW dynindex.contributor_insights_top AS
SELECT t.table_name, r.index_name, c.rule, c.key, c.count AS key_count
  FROM dynindex.tables t
  CROSS JOIN LATERAL (
        SELECT NULL::text AS index_name
        UNION ALL
        SELECT x.index_name FROM dynindex.indexes x WHERE x.table_name = t.table_name AND x.is_global) r
  CROSS JOIN LATERAL dynindex.contributor_insights(t.table_name, r.index_name) c
 WHERE t.options ? 'ContributorInsights'
   AND dynindex.has_table_access(t.table_name, 'describe')
   AND c.rank <= 10;
COMMENT ON VIEW dynindex.contributor_insights_top IS
  'The ten most counted keys of each enabled Contributor Insights rule of the tables the caller may describe (the endpoints export them to Prometheus as dynindex_contributor_insights_key_count).';
REVOKE ALL ON dynindex.contributor_insights_top FROM PUBLIC;
GRANT SELECT ON dynindex.contributor_insights_top TO dynindex_admin, pg_monitor;

-- A GSI's own OnDemandThroughput (docs/capacity.md "The buckets"): the members
-- set, each at least 1 (MaxReadRequestUnits / MaxWriteRequestUnits); NULL: no
-- maximum, the table quota applies.  The table's own maximum stays in
-- dynindex.tables.options (a database at 0.2 has it too).
ALTER TABLE dynindex.indexes ADD COLUMN on_demand_throughput jsonb;
-- == export ==
-- ExportTableToPointInTime (src/api/exports.c, src/exchange/export.c): one row
-- per export; export_num is its job's id (dynindex.jobs, src/worker/jobs.c).
CREATE TABLE dynindex.exports (
    export_num          bigint PRIMARY KEY,
    export_arn          text NOT NULL UNIQUE,
    export_id           text NOT NULL,
    table_name          text NOT NULL,
    table_arn           text NOT NULL,
    table_id            uuid NOT NULL,
    status              text NOT NULL DEFAULT 'IN_PROGRESS'
                        CHECK (status IN ('IN_PROGRESS', 'COMPLETED', 'FAILED')),
    export_type         text NOT NULL,
    export_format       text NOT NULL,
    export_view_type    text,
    export_time         timestamptz,
    export_from_time    timestamptz,
    export_to_time      timestamptz,
    s3_bucket           text NOT NULL,
    s3_bucket_owner     text,
    s3_prefix           text,
    s3_sse_algorithm    text,
    s3_sse_kms_key_id   text,
    client_token        text,
    request             jsonb NOT NULL,
    requested_by        name NOT NULL,
    start_time          timestamptz NOT NULL,
    end_time            timestamptz,
    item_count          bigint,
    billed_size_bytes   bigint,
    export_manifest     text,
    failure_code        text,
    failure_message     text
);
CREATE INDEX ON dynindex.exports (client_token) WHERE client_token IS NOT NULL;
CREATE INDEX ON dynindex.exports (table_name);
REVOKE ALL ON dynindex.exports FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('dynindex.exports', '');
COMMENT ON TABLE dynindex.exports IS 'ExportTableToPointInTime jobs: request, status, counts (internal; see dynindex.export_status).';

-- Progress of the exports: a running export's process reports its item count
-- in pg_stat_activity ("export <num>: <n> items").
CREATE VIEW dynindex.export_status AS
SELECT e.export_arn, e.table_name, e.status, e.export_type, e.export_format,
       coalesce(e.item_count, (SELECT substring(a.query FROM ': ([0-9]+) items')::bigint
                                 FROM pg_catalog.pg_stat_activity a
                                WHERE a.query LIKE 'export ' || e.export_num || ': %' LIMIT 1)) AS items,
       e.billed_size_bytes, e.start_time, e.end_time, e.export_time, e.s3_bucket, e.s3_prefix,
       e.export_manifest, e.failure_code, e.failure_message
  FROM dynindex.exports e;
REVOKE ALL ON dynindex.export_status FROM PUBLIC;
GRANT SELECT ON dynindex.export_status TO dynindex_admin;
COMMENT ON VIEW dynindex.export_status IS 'Exports and their progress (account-wide administrators).';

CREATE FUNCTION dynindex.export_table(table_name text, s3_bucket text, s3_prefix text DEFAULT NULL,
    export_format text DEFAULT 'DYNAMODB_JSON', export_time timestamptz DEFAULT NULL)
RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT dynindex.api('ExportTableToPointInTime', jsonb_strip_nulls(jsonb_build_object(
    'TableArn', 'arn:aws:dynamodb:' || current_setting('dynindex.region') || ':'
                || current_setting('dynindex.account_id') || ':table/' || table_name,
    'S3Bucket', s3_bucket, 'S3Prefix', s3_prefix, 'ExportFormat', export_format,
    'ExportTime', extract(epoch FROM export_time))))
    #>> '{ExportDescription,ExportArn}'
$$;
COMMENT ON FUNCTION dynindex.export_table(text, text, text, text, timestamptz) IS
    'Start an export of a table (ExportTableToPointInTime); returns the ExportArn';

-- == global tables ==
-- The regions of a deployment (src/replication/regions.c; docs/global-tables.md): one
-- row per other dynindex server, its libpq connection string (credentials included).
-- Only the extension's owner reads the table; administrators write it through
-- set_region / drop_region and read it, without secrets, through list_regions.
CREATE TABLE dynindex.regions (
    region_name text PRIMARY KEY,
    conninfo    text NOT NULL
);
REVOKE ALL ON dynindex.regions FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('dynindex.regions', '');

CREATE FUNCTION dynindex.set_region(region_name text, conninfo text)
RETURNS void AS 'MODULE_PATHNAME', 'dynindex_set_region' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.set_region(text, text) IS
    'Declare the dynindex server of another region: its libpq connection string (administrators only)';
CREATE FUNCTION dynindex.drop_region(region_name text)
RETURNS boolean AS 'MODULE_PATHNAME', 'dynindex_drop_region' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.drop_region(text) IS 'Forget a declared region (administrators only)';
CREATE FUNCTION dynindex.forget_region(region_name text)
RETURNS bigint AS 'MODULE_PATHNAME', 'dynindex_forget_region' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex.forget_region(text) IS
    'A region lost for good: forget here, without asking it, every replica of a table in it, end its replica jobs, drop this server''s slot for it (administrators only)';
CREATE FUNCTION dynindex.list_regions(OUT region_name text, OUT conninfo text, OUT local boolean)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'dynindex_list_regions' LANGUAGE C STABLE;
COMMENT ON FUNCTION dynindex.list_regions() IS
    'This server''s region and the declared ones, connection strings without secrets (administrators only)';
REVOKE ALL ON FUNCTION dynindex.set_region(text, text), dynindex.drop_region(text), dynindex.forget_region(text),
    dynindex.list_regions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dynindex.set_region(text, text), dynindex.drop_region(text), dynindex.forget_region(text),
    dynindex.list_regions() TO dynindex_admin;
-- The tables replicated to other regions (one row per table and region) and the
-- replication stamps of a replicated table's keys: last writer wins on (stamp,
-- region).  An item's stamp is in its row (the storage relation's columns stamp
-- and region, NULL unless replicated); replication_stamps holds the stamp of a
-- key with no item — a delete keeps its stamp as a tombstone — and a floor every
-- insert of the key must pass (src/replication/capture.c).
CREATE TABLE dynindex.replicas (
    table_name  text NOT NULL,
    region_name text NOT NULL REFERENCES dynindex.regions (region_name),
    status      text NOT NULL DEFAULT 'ACTIVE'
                CHECK (status IN ('CREATING', 'ACTIVE', 'DELETING', 'CREATION_FAILED')),
    PRIMARY KEY (table_name, region_name)
);
REVOKE ALL ON dynindex.replicas FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('dynindex.replicas', '');
CREATE TABLE dynindex.replication_stamps (
    table_num   bigint NOT NULL,
    pk          bytea NOT NULL,
    sk          bytea NOT NULL,
    stamp       timestamptz NOT NULL,
    region      text NOT NULL,
    deleted     boolean NOT NULL,
    PRIMARY KEY (table_num, pk, sk)
);
REVOKE ALL ON dynindex.replication_stamps FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('dynindex.replication_stamps', '');
-- every storage relation gets the two columns (nullable: no rewrite)
DO $$
DECLARE
    s text;
BEGIN
    FOR s IN SELECT storage FROM dynindex.tables WHERE pg_catalog.to_regclass(storage) IS NOT NULL LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS stamp timestamptz, '
                                  'ADD COLUMN IF NOT EXISTS region text', s);
    END LOOP;
END $$;
CREATE FUNCTION dynindex._replicate_table(table_name text, region_name text)
RETURNS void AS 'MODULE_PATHNAME', 'dynindex_replicate_table' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex._replicate_table(text, text) IS
    'Mark an existing table replicated with a region whose server has the same table (internal: tests; ReplicaUpdates Create is the API)';
REVOKE ALL ON FUNCTION dynindex._replicate_table(text, text) FROM PUBLIC;
CREATE FUNCTION dynindex.replication_status(OUT region_name text, OUT slot_name text, OUT streaming boolean,
    OUT pending_bytes numeric, OUT applied_lsn pg_lsn, OUT replication_latency_ms double precision,
    OUT replication_latency_avg_ms double precision, OUT applied_changes bigint, OUT last_applied_at timestamptz,
    OUT pending_replication_count bigint, OUT pending_count_exact boolean)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'dynindex_replication_status' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.replication_status() IS
    'Per declared region: this server''s slot for it (streaming, WAL bytes and item changes not yet applied there), how far its changes are applied here and their latency, last and average, since the server started (administrators only)';
REVOKE ALL ON FUNCTION dynindex.replication_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dynindex.replication_status() TO dynindex_admin;
-- == global tables: replicas added and removed through UpdateTable ReplicaUpdates ==
-- (src/api/tables_replicas.c asks, src/replication/replica.c does it as a background
-- job; docs/global-tables.md).  One row per job; the replica's own state is its row
-- in dynindex.replicas (CREATING, ACTIVE, DELETING, CREATION_FAILED).
CREATE TABLE dynindex.replica_jobs (
    job_id      bigint PRIMARY KEY REFERENCES dynindex.jobs,
    table_name  text NOT NULL,
    region_name text NOT NULL,
    action      text NOT NULL CHECK (action IN ('Create', 'Delete', 'Update')),
    request     jsonb,                      -- an Update: its UpdateReplicationGroupMemberAction
    failure     text
);
-- A replica's settings overrides as DescribeTable shows them (ReplicaUpdates Update),
-- and its UPDATING state while the job applies them in its region.
ALTER TABLE dynindex.replicas ADD COLUMN overrides jsonb;
ALTER TABLE dynindex.replicas DROP CONSTRAINT replicas_status_check;
ALTER TABLE dynindex.replicas ADD CONSTRAINT replicas_status_check
    CHECK (status IN ('CREATING', 'ACTIVE', 'UPDATING', 'DELETING', 'CREATION_FAILED'));
REVOKE ALL ON dynindex.replica_jobs FROM PUBLIC;
COMMENT ON TABLE dynindex.replica_jobs IS 'ReplicaUpdates Create and Delete jobs: the table, the region, why one failed (internal).';
CREATE FUNCTION dynindex._replica_slot(region_name text)
RETURNS void AS 'MODULE_PATHNAME', 'dynindex_replica_slot' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex._replica_slot(text) IS
    'Create this server''s logical slot for a declared region unless it exists (internal: the replica job; superusers only)';
CREATE FUNCTION dynindex._replica_join(table_name text, region_name text, status text)
RETURNS void AS 'MODULE_PATHNAME', 'dynindex_replica_join' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex._replica_join(text, text, text) IS
    'Record a replica of a table in a declared region with a status, after every writer of the table that could have missed it has finished (internal: the replica job; superusers only)';
CREATE FUNCTION dynindex._replica_leave(table_name text, region_name text)
RETURNS void AS 'MODULE_PATHNAME', 'dynindex_replica_leave' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex._replica_leave(text, text) IS
    'Forget a replica of a table, and drop this server''s slot for the region when no table needs it any more (internal: the replica job; superusers only)';
CREATE FUNCTION dynindex._replica_overrides(table_name text, region_name text, overrides jsonb)
RETURNS void AS 'MODULE_PATHNAME', 'dynindex_replica_overrides' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex._replica_overrides(text, text, jsonb) IS
    'Record the settings overrides of a table''s replica in a region (merged; an UPDATING replica turns ACTIVE) (internal: the replica job; superusers only)';
CREATE FUNCTION dynindex._replica_local_api(operation text, request jsonb)
RETURNS jsonb AS 'MODULE_PATHNAME', 'dynindex_replica_local_api' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex._replica_local_api(text, jsonb) IS
    'Run an operation on this region''s replica only, not sent to the other regions: a replica''s own settings (internal: the replica job; superusers only)';
CREATE FUNCTION dynindex._replica_copy_query(table_name text)
RETURNS text AS 'MODULE_PATHNAME', 'dynindex_replica_copy_query' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION dynindex._replica_copy_query(text) IS
    'The query that reads every item of a table with its replication stamp, and its tombstones, for the initial copy of a new replica (internal; superusers only)';
CREATE FUNCTION dynindex._replica_apply(table_name text, source_region text, batch jsonb)
RETURNS bigint AS 'MODULE_PATHNAME', 'dynindex_replica_apply' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION dynindex._replica_apply(text, text, jsonb) IS
    'Apply a batch of the initial copy of a replica: last writer wins on (stamp, region), as the apply worker (internal: the replica job; superusers only)';
REVOKE ALL ON FUNCTION dynindex._replica_slot(text), dynindex._replica_join(text, text, text),
    dynindex._replica_leave(text, text), dynindex._replica_overrides(text, text, jsonb), dynindex._replica_copy_query(text),
    dynindex._replica_local_api(text, jsonb),
    dynindex._replica_apply(text, text, jsonb) FROM PUBLIC;
-- ReplicationLatency and PendingReplicationCount per pair of regions, for the
-- endpoints' Prometheus export (dynindex_replication_<column>, the regions as labels).
CREATE FUNCTION dynindex.replication_metrics(OUT source_region text, OUT receiving_region text,
    OUT latency_ms double precision, OUT latency_avg_ms double precision, OUT applied_changes bigint,
    OUT pending_count bigint, OUT pending_count_exact integer, OUT pending_bytes numeric)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'dynindex_replication_metrics' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION dynindex.replication_metrics() IS
    'Per declared region: the latency of its changes applied here (source_region it, receiving_region this one) and the item changes made here it has not applied (source_region this one), for monitoring (administrators and pg_monitor)';
REVOKE ALL ON FUNCTION dynindex.replication_metrics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION dynindex.replication_metrics() TO dynindex_admin, pg_monitor;
-- == one btree on an index's key ==
-- An index's storage relation keeps its entries in one unique btree on
-- dynindex.index_key(ipk, isk, pk, sk) (on Citus, then ipk): one byte string ordered as the tuple
-- (key_hash(ipk), ipk, isk, pk, sk), so a Query is a range of it, a Scan (whole
-- or one segment) a range of hashes (src/storage/storage.c DynIndexKey).
-- Before, a primary key on (ipk, isk, pk, sk) and a segment index on
-- (key_hash(ipk), ipk, isk, pk, sk) were two btrees of the same rows, each
-- written by every index write and sorted by every index build, comparing
-- columns one by one.  Each existing index relation gets the new btree and
-- loses the two (one index build per relation); a GSI's index on its base key
-- (pk, sk) becomes one on the hash of pk || sk (an int4: less than half the size).
CREATE FUNCTION dynindex.index_key(ipk bytea, isk bytea, pk bytea, sk bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'dynindex_index_key'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION dynindex.index_key(bytea, bytea, bytea, bytea) IS
  'The key of an index entry in its storage relation''s btree: the hash of ipk (4 bytes), then ipk, isk and pk escaped and terminated, then sk; byte order = the order of (key_hash(ipk), ipk, isk, pk, sk) (internal)';
DO $$
DECLARE
    r record;
    old regclass;
    dist boolean;
BEGIN
    FOR r IN SELECT x.storage, x.is_global, c.conname FROM dynindex.indexes x
             JOIN pg_catalog.pg_constraint c ON c.conrelid = pg_catalog.to_regclass(x.storage) AND c.contype = 'p' LOOP
        -- on Citus (a distributed relation) then ipk: its unique indexes must hold the distribution column
        dist := false;
        IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
            EXECUTE 'SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1)'
                INTO dist USING pg_catalog.to_regclass(r.storage);
        END IF;
        EXECUTE pg_catalog.format('CREATE UNIQUE INDEX ON %s (dynindex.index_key(ipk, isk, pk, sk)%s)', r.storage,
            CASE WHEN dist THEN ', ipk' ELSE '' END);
        -- the segment index: the one on an expression not unique
        FOR old IN SELECT i.indexrelid::regclass FROM pg_catalog.pg_index i
                   WHERE i.indrelid = pg_catalog.to_regclass(r.storage) AND NOT i.indisunique
                     AND i.indexprs IS NOT NULL LOOP
            EXECUTE pg_catalog.format('DROP INDEX %s', old);
        END LOOP;
        EXECUTE pg_catalog.format('ALTER TABLE %s DROP CONSTRAINT %I', r.storage, r.conname);
        -- a GSI finds an item's entry through the hash of its base key (an int4)
        IF r.is_global THEN
            FOR old IN SELECT i.indexrelid::regclass FROM pg_catalog.pg_index i
                       WHERE i.indrelid = pg_catalog.to_regclass(r.storage) AND i.indexprs IS NULL LOOP
                EXECUTE pg_catalog.format('DROP INDEX %s', old);
            END LOOP;
            EXECUTE pg_catalog.format('CREATE INDEX ON %s (dynindex.key_hash(pk || sk))', r.storage);
        END IF;
    END LOOP;
END $$;
-- every backend reloads its table cache (and its plans naming the old key)
ALTER TABLE dynindex.tables ALTER COLUMN table_name SET STATISTICS -1;
