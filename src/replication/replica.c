/*
 * replica.c — adding and removing a replica of a global table
 * (UpdateTable ReplicaUpdates Create and Delete; docs/global-tables.md).
 *
 * The request (api/tables_replicas.c) records the replica CREATING or
 * DELETING and a job of kind "replica" (dynindex.replica_jobs); the job runs
 * here, in a background process of this server A (worker/jobs.c), and talks
 * to the other servers over libpq with the declared connection strings (never
 * logged).  The other servers do their part through the internal SQL
 * functions of this file, superusers' only.
 *
 * Create of region C, the table's other replicas being R1..Rk:
 *  1. on C: this server's slot for A and each Ri (dynindex_<A>, ...), then in
 *     one transaction the table with A's definition and C's replicas rows
 *     for A and each Ri (C's writes are captured for them from then on);
 *  2. on each Ri and on A: the slot dynindex_<C> unless it exists, then the
 *     replicas row (t, C) — _replica_join locks the table's storage in SHARE
 *     mode, which waits for every writer that may have decided not to
 *     capture, and makes the later ones read the committed row;
 *  3. the initial copy: on each server X of A, R1..Rk, in one snapshot taken
 *     after 2, every item with its replication stamp (0 when never stamped)
 *     and every tombstone, applied on C by _replica_apply with the apply
 *     worker's last writer wins: a change committed on X after the snapshot
 *     is in X's slot for C, one before it is in the copy, and both orders of
 *     arrival give the same item;
 *  4. the replica ACTIVE on A and each Ri.
 * Every step can run again: a job interrupted (a crash) runs again from the
 * start; the replica is ACTIVE only after a whole copy.  A job that cannot
 * finish leaves the replica CREATION_FAILED.
 *
 * Delete of region C: C forgets its replicas of the table and deletes its
 * table; then each Ri and A forget the replica; a server drops its slot for a
 * region when no table needs it any more (_replica_leave).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "catalog/dyn_catalog.h"
#include "common/wakeup.h"
#include "replication/replication.h"
#include "security/security.h"

/* Items per _replica_apply call of the copy, and bytes (whichever comes first). */
#define DYN_REPLICA_BATCH_ITEMS 1000
#define DYN_REPLICA_BATCH_BYTES (4 * 1024 * 1024)
/* Rows per fetch of the copy's cursor. */
#define DYN_REPLICA_FETCH 200

/* The internal functions are a superuser's: the job connects as one. */
static void
require_superuser(const char *what)
{
	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						errmsg("permission denied to %s", what),
						errdetail("Only superusers may (UpdateTable ReplicaUpdates is the API).")));
}

/* Create this server's slot for region unless it exists (not in a transaction that wrote). */
static void
create_slot(const char *region)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(DynReplicationSlotName(region))};

	if (SPI_execute_with_args("SELECT pg_catalog.pg_create_logical_replication_slot($1, '" DYN_REPLICATION_PLUGIN "') "
							  "WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_slots WHERE slot_name = $1)",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not create the replication slot");
}

PG_FUNCTION_INFO_V1(dynindex_replica_slot);

/* dynindex._replica_slot(region_name): this server's slot for a declared region. */
Datum
dynindex_replica_slot(PG_FUNCTION_ARGS)
{
	char	   *region = text_to_cstring(PG_GETARG_TEXT_PP(0));

	require_superuser("create a dynindex replication slot");
	if (!DynRegionIsDeclared(region))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("region \"%s\" is not declared on the server of region \"%s\"", region, DynRegionLocal()),
						errhint("Declare it there with dynindex.set_region.")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	create_slot(region);
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_replica_join);

/*
 * dynindex._replica_join(table_name, region_name, status): record (or
 * change) the replica of a table in a declared region.  The SHARE lock of
 * the table's storage waits for the writers in progress, which may have
 * decided not to capture for the region; a writer that comes after waits
 * for this commit and reads the row (write/write.c write_capture,
 * capture.c).  So once this commits, every later commit of the table is
 * captured for the region.
 */
Datum
dynindex_replica_join(PG_FUNCTION_ARGS)
{
	char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *region = text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *status = text_to_cstring(PG_GETARG_TEXT_PP(2));
	DynSecurityState sec;
	DynTable   *t;
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		args[3];

	require_superuser("record a dynindex replica");
	if (!DynRegionIsDeclared(region))
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("region \"%s\" is not declared on the server of region \"%s\"", region, DynRegionLocal()),
						errhint("Declare it there with dynindex.set_region.")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	t = DynCatalogGetTableUnchecked(table);
	if (t == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("table \"%s\" does not exist in region \"%s\"", table, DynRegionLocal())));
	if (SPI_execute(psprintf("LOCK TABLE %s IN SHARE MODE", t->storage), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock the table's storage");
	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(region);
	args[2] = CStringGetTextDatum(status);
	if (SPI_execute_with_args("INSERT INTO dynindex.replicas (table_name, region_name, status) VALUES ($1, $2, $3) "
							  "ON CONFLICT (table_name, region_name) DO UPDATE SET status = $3",
							  3, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write dynindex.replicas");
	DynSecurityEndInternal(&sec);
	SPI_finish();
	DynCatalogChanged();
	DynWorkerWake(MyDatabaseId);
	PG_RETURN_VOID();
}

/*
 * Drop this server's slot for region when no replica needs it (a slot
 * nobody streams holds WAL).  Its walsender, if the region still streams it,
 * is ended first.  In its own transaction state: the caller has committed
 * its last reference to the slot, or is about to with nothing else to do.
 */
void
DynReplicationDropUnneededSlot(const char *region)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2] = {CStringGetTextDatum(region), CStringGetTextDatum(DynReplicationSlotName(region))};

	for (int attempt = 0; attempt < 100; attempt++)
	{
		bool		isnull;
		bool		active;

		if (SPI_execute_with_args("SELECT s.active, s.active_pid FROM pg_catalog.pg_replication_slots s "
								  "WHERE s.slot_name = $2 AND NOT EXISTS (SELECT FROM dynindex.replicas r "
								  "WHERE r.region_name = $1 AND r.status <> 'CREATION_FAILED')",
								  2, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the replication slots");
		if (SPI_processed == 0)
			return;				/* needed, or no slot */
		active = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		if (!active)
		{
			if (SPI_execute_with_args("SELECT pg_catalog.pg_drop_replication_slot($2) "
									  "FROM pg_catalog.pg_replication_slots WHERE slot_name = $2 AND NOT active",
									  2, types, args, NULL, false, 0) != SPI_OK_SELECT)
				elog(ERROR, "could not drop the replication slot");
			if (SPI_processed == 1)
				return;
		}
		else
		{
			Datum		pid = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);

			if (!isnull)
				(void) DirectFunctionCall2(pg_terminate_backend, pid, Int64GetDatum(0));
		}
		pg_usleep(100 * 1000L);
		CHECK_FOR_INTERRUPTS();
	}
	ereport(WARNING, (errmsg("dynindex: the replication slot %s is still streamed; it was not dropped",
							 DynReplicationSlotName(region)),
					  errhint("Drop it with pg_drop_replication_slot once the region no longer streams it.")));
}

PG_FUNCTION_INFO_V1(dynindex_replica_leave);

/*
 * dynindex._replica_leave(table_name, region_name): forget the replica of a
 * table in a region, then drop the slot for the region if no table needs it.
 */
Datum
dynindex_replica_leave(PG_FUNCTION_ARGS)
{
	char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *region = text_to_cstring(PG_GETARG_TEXT_PP(1));
	DynSecurityState sec;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2] = {CStringGetTextDatum(table), CStringGetTextDatum(region)};

	require_superuser("remove a dynindex replica");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("DELETE FROM dynindex.replicas WHERE table_name = $1 AND region_name = $2",
							  2, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not write dynindex.replicas");
	DynReplicationDropUnneededSlot(region);
	DynSecurityEndInternal(&sec);
	SPI_finish();
	DynCatalogChanged();
	DynWorkerWake(MyDatabaseId);
	PG_RETURN_VOID();
}

/*
 * Merge overrides (a replica's settings as DescribeTable's Replicas shows
 * them) into the replica's row: members replace members, a GSI's entry
 * replaces the entry of the same index.
 */
static const char *const merge_overrides_sql =
"UPDATE dynindex.replicas SET status = CASE WHEN status = 'UPDATING' THEN 'ACTIVE' ELSE status END, "
"overrides = (SELECT (coalesce(overrides, '{}') || ($3::jsonb - 'GlobalSecondaryIndexes')) || "
"  CASE WHEN $3::jsonb ? 'GlobalSecondaryIndexes' THEN pg_catalog.jsonb_build_object('GlobalSecondaryIndexes', "
"    (SELECT pg_catalog.jsonb_agg(e ORDER BY e->>'IndexName') FROM ("
"      SELECT e FROM pg_catalog.jsonb_array_elements(coalesce(overrides->'GlobalSecondaryIndexes', '[]')) e "
"      WHERE NOT EXISTS (SELECT FROM pg_catalog.jsonb_array_elements($3::jsonb->'GlobalSecondaryIndexes') x "
"        WHERE x->'IndexName' = e->'IndexName') "
"      UNION ALL SELECT x FROM pg_catalog.jsonb_array_elements($3::jsonb->'GlobalSecondaryIndexes') x) s(e))) "
"  ELSE '{}' END) "
"WHERE table_name = $1 AND region_name = $2";

PG_FUNCTION_INFO_V1(dynindex_replica_overrides);

/* dynindex._replica_overrides(table_name, region_name, overrides): record a replica's settings overrides. */
Datum
dynindex_replica_overrides(PG_FUNCTION_ARGS)
{
	DynSecurityState sec;
	Oid			types[3] = {TEXTOID, TEXTOID, JSONBOID};
	Datum		args[3] = {PG_GETARG_DATUM(0), PG_GETARG_DATUM(1), PG_GETARG_DATUM(2)};

	require_superuser("record a dynindex replica");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args(merge_overrides_sql, 3, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not write dynindex.replicas");
	DynSecurityEndInternal(&sec);
	SPI_finish();
	DynCatalogChanged();
	PG_RETURN_VOID();
}

/* The settings overrides of table t's replica in region, as DescribeTable shows them (NULL: none). */
Jsonb *
DynReplicationReplicaOverrides(DynTable *t, const char *region)
{
	DynSecurityState sec;
	MemoryContext outer = CurrentMemoryContext;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2] = {CStringGetTextDatum(t->name), CStringGetTextDatum(region)};
	Jsonb	   *out = NULL;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT overrides FROM dynindex.replicas WHERE table_name = $1 AND region_name = $2 "
							  "AND overrides IS NOT NULL AND overrides <> '{}'",
							  2, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.replicas");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(outer);

		out = DatumGetJsonbPCopy(d);
		MemoryContextSwitchTo(spi);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return out;
}

/*
 * The copy's query of table t: one JSON text per item — its encoded key
 * ("p", "s", base64), the stored item ("i"), its stamp ("t": null when never
 * stamped) and region ("o"), from its row — and per tombstone of a key with
 * no item (no "i").
 */
static char *
copy_query(DynTable *t)
{
	return psprintf("SELECT pg_catalog.jsonb_build_object("
					"'p', pg_catalog.encode(coalesce(i.pk, s.pk), 'base64'), "
					"'s', pg_catalog.encode(coalesce(i.sk, s.sk), 'base64'), "
					"'i', i.item, 't', CASE WHEN i.pk IS NULL THEN s.stamp ELSE i.stamp END, "
					"'o', CASE WHEN i.pk IS NULL THEN s.region ELSE i.region END)::text "
					"FROM %s i FULL JOIN (SELECT pk, sk, stamp, region, deleted FROM dynindex.replication_stamps "
					"WHERE table_num = " INT64_FORMAT ") s ON i.pk = s.pk AND i.sk = s.sk "
					"WHERE i.pk IS NOT NULL OR s.deleted",
					t->storage, t->num);
}

PG_FUNCTION_INFO_V1(dynindex_replica_copy_query);

/* dynindex._replica_copy_query(table_name): the copy's query of a table of this server. */
Datum
dynindex_replica_copy_query(PG_FUNCTION_ARGS)
{
	char	   *table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	DynSecurityState sec;
	DynTable   *t;

	require_superuser("read a dynindex table for a replica");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	t = DynCatalogGetTableUnchecked(table);
	if (t == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
						errmsg("table \"%s\" does not exist in region \"%s\"", table, DynRegionLocal())));
	DynSecurityEndInternal(&sec);
	SPI_finish();
	PG_RETURN_TEXT_P(cstring_to_text(copy_query(t)));
}

/* ------------------------------------------------------------------ the job */

/* A replica job as dynindex.replica_jobs records it. */
typedef struct ReplicaJob
{
	int64		id;
	char	   *table;
	char	   *region;
	char	   *action;			/* "Create", "Delete", "Update" */
	char	   *request;		/* an Update: its action (JSON) */
} ReplicaJob;

/* The job's memory (outlives its transactions) and its open connections. */
static MemoryContext job_context = NULL;
#define MAX_CONNS 64
static PGconn *conns[MAX_CONNS];
static int	nconns = 0;

/* Begin a local transaction with SPI and a snapshot. */
static void
local_begin(void)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
}

/* Commit it. */
static void
local_end(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/* Run sql with text arguments in the open local transaction; the first value, in the job's memory (NULL: none). */
static char *
local_query(const char *sql, int n, const char *a1, const char *a2, const char *a3)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		args[3];
	const char *in[3] = {a1, a2, a3};
	char	   *out = NULL;

	for (int i = 0; i < n; i++)
		args[i] = CStringGetTextDatum(in[i]);
	if (SPI_execute_with_args(sql, n, types, args, NULL, false, 0) < 0)
		elog(ERROR, "dynindex replica job: a local statement failed");
	if (SPI_tuptable && SPI_processed > 0)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v)
			out = MemoryContextStrdup(job_context, v);
	}
	return out;
}

/* Run sql in a local transaction of its own. */
static char *
local_exec(const char *sql, int n, const char *a1, const char *a2, const char *a3)
{
	char	   *out;

	local_begin();
	out = local_query(sql, n, a1, a2, a3);
	local_end();
	return out;
}

/* Connect to a declared region's server (its connection string is never logged). */
static PGconn *
remote_connect(const char *region)
{
	char	   *conninfo;
	const char *keys[] = {"dbname", "fallback_application_name", "options", NULL};
	const char *vals[4];
	PGconn	   *conn;
	char	   *configured;

	local_begin();
	conninfo = DynRegionConninfo(region);
	if (conninfo)
		conninfo = MemoryContextStrdup(job_context, conninfo);
	local_end();
	if (conninfo == NULL)
		ereport(ERROR, (errmsg("region \"%s\" is not declared on the server of region \"%s\"", region, DynRegionLocal())));
	if (nconns >= MAX_CONNS)
		elog(ERROR, "dynindex replica job: too many regions");
	vals[0] = conninfo;
	vals[1] = "dynindex_replica";
	/* the copy sends whole tables as statement parameters: never into the server log */
	vals[2] = "-c log_statement=none -c log_min_duration_statement=-1 -c log_parameter_max_length=0 "
		"-c log_parameter_max_length_on_error=0";
	vals[3] = NULL;
	conn = PQconnectdbParams(keys, vals, 1);
	memset(conninfo, 0, strlen(conninfo));
	if (PQstatus(conn) != CONNECTION_OK)
	{
		char	   *msg = pstrdup(PQerrorMessage(conn));	/* libpq's, without the password */

		PQfinish(conn);
		ereport(ERROR, (errmsg("could not connect to region \"%s\"", region), errdetail_internal("%s", msg)));
	}
	conns[nconns++] = conn;
	{
		PGresult   *res = PQexec(conn, "SELECT pg_catalog.current_setting('dynindex.region', true)");

		configured = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 ?
			pstrdup(PQgetvalue(res, 0, 0)) : pstrdup("");
		PQclear(res);
	}
	if (strcmp(configured, region) != 0)
		ereport(ERROR, (errmsg("the server declared as region \"%s\" is region \"%s\"", region, configured)));
	return conn;
}

/* Close the job's connections. */
static void
remote_close_all(void)
{
	for (int i = 0; i < nconns; i++)
		PQfinish(conns[i]);
	nconns = 0;
}

/* Run sql on a region's server with text parameters; the first value (NULL: none).  Raises its error. */
static char *
remote_exec(PGconn *conn, const char *region, const char *sql, int n, const char *const *params)
{
	PGresult   *res = PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	char	   *out = NULL;

	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
	{
		const char *m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		char	   *msg = pstrdup(m ? m : PQerrorMessage(conn));

		PQclear(res);
		ereport(ERROR, (errmsg("region \"%s\": %s", region, msg)));
	}
	if (st == PGRES_TUPLES_OK && PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
		out = MemoryContextStrdup(job_context, PQgetvalue(res, 0, 0));
	PQclear(res);
	return out;
}

/* A region's server, connected: its name and connection. */
typedef struct Peer
{
	char	   *region;
	PGconn	   *conn;
} Peer;

/*
 * Send one batch of the copy ("[..." in buf) to the new replica's server.  A
 * deadlock with the region's apply worker (both writing a new key) is tried
 * again: the batch is idempotent.
 */
static void
send_batch(PGconn *target, const ReplicaJob *j, const char *source, StringInfo buf)
{
	const char *params[3] = {j->table, source, NULL};

	appendStringInfoChar(buf, ']');
	params[2] = buf->data;
	for (int attempt = 1;; attempt++)
	{
		PGresult   *res = PQexecParams(target, "SELECT dynindex._replica_apply($1, $2, $3::jsonb)", 3, NULL, params, NULL, NULL, 0);
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		const char *m;
		char	   *msg;

		if (PQresultStatus(res) == PGRES_TUPLES_OK)
		{
			PQclear(res);
			break;
		}
		if (attempt < 5 && state && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0))
		{
			PQclear(res);
			pg_usleep(100 * 1000L * attempt);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		msg = pstrdup(m ? m : PQerrorMessage(target));
		PQclear(res);
		ereport(ERROR, (errmsg("region \"%s\": %s", j->region, msg)));
	}
	resetStringInfo(buf);
	appendStringInfoChar(buf, '[');
}

/* Add one row of the copy to the batch; send it when full.  Returns the rows in the batch. */
static int
add_row(PGconn *target, const ReplicaJob *j, const char *source, StringInfo buf, int rows, const char *row)
{
	if (rows > 0)
		appendStringInfoChar(buf, ',');
	appendStringInfoString(buf, row);
	rows++;
	if (rows >= DYN_REPLICA_BATCH_ITEMS || buf->len >= DYN_REPLICA_BATCH_BYTES)
	{
		send_batch(target, j, source, buf);
		rows = 0;
	}
	return rows;
}

/* Copy this server's items and tombstones of the table to the new replica, in one snapshot. */
static void
copy_local(PGconn *target, const ReplicaJob *j)
{
	const char *local = DynRegionLocal();
	Portal		portal;
	StringInfoData buf;
	int			rows = 0;
	DynTable   *t;
	DynSecurityState sec;
	MemoryContext batch_cxt = AllocSetContextCreate(job_context, "dynindex replica copy", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;

	local_begin();
	DynSecurityBeginInternal(&sec);
	DynCatalogRevalidate();
	t = DynCatalogGetTableUnchecked(j->table);
	if (t == NULL)
		ereport(ERROR, (errmsg("table \"%s\" does not exist in region \"%s\"", j->table, local)));
	portal = SPI_cursor_open_with_args(NULL, copy_query(t), 0, NULL, NULL, NULL, true, 0);
	old = MemoryContextSwitchTo(batch_cxt);
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	MemoryContextSwitchTo(old);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, DYN_REPLICA_FETCH);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			char	   *row = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

			old = MemoryContextSwitchTo(batch_cxt);
			rows = add_row(target, j, local, &buf, rows, row);
			MemoryContextSwitchTo(old);
			pfree(row);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	if (rows > 0)
	{
		old = MemoryContextSwitchTo(batch_cxt);
		send_batch(target, j, local, &buf);
		MemoryContextSwitchTo(old);
	}
	SPI_cursor_close(portal);
	DynSecurityEndInternal(&sec);
	local_end();
	MemoryContextDelete(batch_cxt);
}

/* Copy a replica's items and tombstones of the table to the new replica, in one snapshot there. */
static void
copy_remote(PGconn *target, const ReplicaJob *j, Peer *src)
{
	const char *params[1] = {j->table};
	char	   *query;
	StringInfoData buf;
	int			rows = 0;
	MemoryContext batch_cxt = AllocSetContextCreate(job_context, "dynindex replica copy", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(batch_cxt);

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	(void) remote_exec(src->conn, src->region, "BEGIN ISOLATION LEVEL REPEATABLE READ", 0, NULL);
	query = remote_exec(src->conn, src->region, "SELECT dynindex._replica_copy_query($1)", 1, params);
	(void) remote_exec(src->conn, src->region, psprintf("DECLARE dynindex_copy NO SCROLL CURSOR FOR %s", query), 0, NULL);
	for (;;)
	{
		PGresult   *res = PQexec(src->conn, "FETCH " CppAsString2(DYN_REPLICA_FETCH) " FROM dynindex_copy");
		int			n;

		if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			char	   *msg = pstrdup(PQerrorMessage(src->conn));

			PQclear(res);
			ereport(ERROR, (errmsg("region \"%s\": %s", src->region, msg)));
		}
		n = PQntuples(res);
		for (int i = 0; i < n; i++)
			rows = add_row(target, j, src->region, &buf, rows, PQgetvalue(res, i, 0));
		PQclear(res);
		if (n == 0)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	if (rows > 0)
		send_batch(target, j, src->region, &buf);
	(void) remote_exec(src->conn, src->region, "COMMIT", 0, NULL);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(batch_cxt);
}

/*
 * The CreateTable request of the new replica: this table's definition as
 * DescribeTable shows it (keys, attribute definitions, billing mode and
 * throughput, LSIs and GSIs with their projections and throughput, stream,
 * table class, deletion protection).
 */
/*
 * The other replicas of the job's table (its own region left out; with
 * active_only the ACTIVE ones: a replica being created or deleted waits its
 * turn), sorted, as strings in job_context.  In a local transaction.
 */
static List *
other_replicas(const ReplicaJob *j, bool active_only)
{
	List	   *out = NIL;
	MemoryContext old;

	if (SPI_execute_with_args(active_only ?
							  "SELECT region_name FROM dynindex.replicas WHERE table_name = $1 AND region_name <> $2 "
							  "AND status = 'ACTIVE' ORDER BY region_name" :
							  "SELECT region_name FROM dynindex.replicas WHERE table_name = $1 AND region_name <> $2 "
							  "ORDER BY region_name", 2, (Oid[]) {TEXTOID, TEXTOID},
							  (Datum[]) {CStringGetTextDatum(j->table), CStringGetTextDatum(j->region)},
							  NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.replicas");
	old = MemoryContextSwitchTo(job_context);
	for (uint64 i = 0; i < SPI_processed; i++)
		out = lappend(out, pstrdup(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1)));
	MemoryContextSwitchTo(old);
	return out;
}

static const char *const create_request_sql =
"SELECT pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object("
"'TableName', d->'TableName', 'AttributeDefinitions', d->'AttributeDefinitions', 'KeySchema', d->'KeySchema', "
"'BillingMode', coalesce(d->'BillingModeSummary'->>'BillingMode', 'PROVISIONED'), "
"'ProvisionedThroughput', CASE WHEN coalesce(d->'BillingModeSummary'->>'BillingMode', 'PROVISIONED') = 'PROVISIONED' "
"  THEN pg_catalog.jsonb_build_object('ReadCapacityUnits', d->'ProvisionedThroughput'->'ReadCapacityUnits', "
"    'WriteCapacityUnits', d->'ProvisionedThroughput'->'WriteCapacityUnits') END, "
"'OnDemandThroughput', d->'OnDemandThroughput', "
"'LocalSecondaryIndexes', (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('IndexName', l->'IndexName', "
"  'KeySchema', l->'KeySchema', 'Projection', l->'Projection')) FROM pg_catalog.jsonb_array_elements(d->'LocalSecondaryIndexes') l), "
"'GlobalSecondaryIndexes', (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('IndexName', g->'IndexName', "
"  'KeySchema', g->'KeySchema', 'Projection', g->'Projection', 'OnDemandThroughput', g->'OnDemandThroughput', "
"  'ProvisionedThroughput', CASE WHEN coalesce(d->'BillingModeSummary'->>'BillingMode', 'PROVISIONED') = 'PROVISIONED' "
"    THEN pg_catalog.jsonb_build_object('ReadCapacityUnits', g->'ProvisionedThroughput'->'ReadCapacityUnits', "
"      'WriteCapacityUnits', g->'ProvisionedThroughput'->'WriteCapacityUnits') END)) "
"  FROM pg_catalog.jsonb_array_elements(d->'GlobalSecondaryIndexes') g), "
"'StreamSpecification', d->'StreamSpecification', 'TableClass', d->'TableClassSummary'->'TableClass', "
"'DeletionProtectionEnabled', d->'DeletionProtectionEnabled'))::text "
"FROM (SELECT dynindex.api('DescribeTable', pg_catalog.jsonb_build_object('TableName', $1))->'Table' AS d) s";

/* The UpdateTimeToLive request of the new replica, when Time to Live is on here (NULL: off). */
static const char *const ttl_request_sql =
"SELECT CASE WHEN d->>'TimeToLiveStatus' IN ('ENABLED', 'ENABLING') THEN pg_catalog.jsonb_build_object("
"'TableName', $1, 'TimeToLiveSpecification', pg_catalog.jsonb_build_object('Enabled', true, "
"'AttributeName', d->'AttributeName'))::text END "
"FROM (SELECT dynindex.api('DescribeTimeToLive', pg_catalog.jsonb_build_object('TableName', $1))->'TimeToLiveDescription' AS d) s";

/* Create the replica of j->table in region j->region (the steps at the top of this file). */
static void
replica_create(const ReplicaJob *j)
{
	const char *local = DynRegionLocal();
	List	   *others = NIL;
	char	   *create_req;
	char	   *ttl_req;
	PGconn	   *target;
	const char *params[3];
	char	   *exists;
	ListCell   *lc;
	MemoryContext old;

	/* the replicas there are */
	local_begin();
	foreach(lc, other_replicas(j, true))
	{
		Peer	   *p = MemoryContextAllocZero(job_context, sizeof(Peer));

		p->region = lfirst(lc);
		old = MemoryContextSwitchTo(job_context);
		others = lappend(others, p);
		MemoryContextSwitchTo(old);
	}
	create_req = local_query(create_request_sql, 1, j->table, NULL, NULL);
	ttl_req = local_query(ttl_request_sql, 1, j->table, NULL, NULL);
	local_end();
	if (create_req == NULL)
		ereport(ERROR, (errmsg("table \"%s\" does not exist in region \"%s\"", j->table, local)));

	/* 1. the new replica's server: slots, then the table and its replicas rows */
	target = remote_connect(j->region);
	params[0] = j->table;
	params[1] = local;
	exists = remote_exec(target, j->region,
						 "SELECT CASE WHEN NOT EXISTS (SELECT FROM dynindex.tables WHERE table_name = $1) THEN 'none' "
						 "WHEN EXISTS (SELECT FROM dynindex.replicas WHERE table_name = $1 AND region_name = $2) THEN 'ours' "
						 "ELSE 'other' END", 2, params);
	if (strcmp(exists, "other") == 0)
		ereport(ERROR, (errmsg("Failed to create a the new replica of table with name: ‘%s’ because one or more replicas already existed as tables.",
							   j->table),
						errdetail("A table named \"%s\" exists in region \"%s\".", j->table, j->region)));
	params[0] = local;
	(void) remote_exec(target, j->region, "SELECT dynindex._replica_slot($1)", 1, params);
	foreach(lc, others)
	{
		params[0] = ((Peer *) lfirst(lc))->region;
		(void) remote_exec(target, j->region, "SELECT dynindex._replica_slot($1)", 1, params);
	}
	(void) remote_exec(target, j->region, "BEGIN", 0, NULL);
	if (strcmp(exists, "none") == 0)
	{
		params[0] = create_req;
		(void) remote_exec(target, j->region, "SELECT dynindex.api('CreateTable', $1::jsonb)", 1, params);
		if (ttl_req)
		{
			params[0] = ttl_req;
			(void) remote_exec(target, j->region, "SELECT dynindex.api('UpdateTimeToLive', $1::jsonb)", 1, params);
		}
	}
	params[0] = j->table;
	params[2] = "ACTIVE";
	params[1] = local;
	(void) remote_exec(target, j->region, "SELECT dynindex._replica_join($1, $2, $3)", 3, params);
	foreach(lc, others)
	{
		params[1] = ((Peer *) lfirst(lc))->region;
		(void) remote_exec(target, j->region, "SELECT dynindex._replica_join($1, $2, $3)", 3, params);
	}
	(void) remote_exec(target, j->region, "COMMIT", 0, NULL);

	/* 2. every existing replica captures the table's writes for the new region */
	foreach(lc, others)
	{
		Peer	   *p = lfirst(lc);

		p->conn = remote_connect(p->region);
		params[0] = j->region;
		(void) remote_exec(p->conn, p->region, "SELECT dynindex._replica_slot($1)", 1, params);
		params[0] = j->table;
		params[1] = j->region;
		params[2] = "CREATING";
		(void) remote_exec(p->conn, p->region, "SELECT dynindex._replica_join($1, $2, $3)", 3, params);
	}
	(void) local_exec("SELECT dynindex._replica_slot($1)", 1, j->region, NULL, NULL);
	(void) local_exec("SELECT dynindex._replica_join($1, $2, 'CREATING')", 2, j->table, j->region, NULL);

	/* 3. the initial copy from each of them, in a snapshot taken after 2 */
	copy_local(target, j);
	foreach(lc, others)
		copy_remote(target, j, lfirst(lc));

	/* 4. ACTIVE everywhere */
	foreach(lc, others)
	{
		Peer	   *p = lfirst(lc);

		params[0] = j->table;
		params[1] = j->region;
		params[2] = "ACTIVE";
		(void) remote_exec(p->conn, p->region, "SELECT dynindex._replica_join($1, $2, $3)", 3, params);
	}
	(void) local_exec("SELECT dynindex._replica_join($1, $2, 'ACTIVE')", 2, j->table, j->region, NULL);
	remote_close_all();
}

/*
 * Delete the replica of j->table in region j->region: the region forgets the
 * table's replicas and deletes its table; then each other replica and this
 * server forget the region's replica (and drop the slot no table needs).
 */
static void
replica_delete(const ReplicaJob *j)
{
	List	   *others = NIL;
	PGconn	   *target;
	const char *params[2];
	char	   *present;
	ListCell   *lc;

	local_begin();
	others = other_replicas(j, false);
	local_end();

	target = remote_connect(j->region);
	params[0] = j->table;
	present = remote_exec(target, j->region,
						  "SELECT string_agg(region_name, ',') FROM dynindex.replicas WHERE table_name = $1", 1, params);
	/* the region's own replicas of the table: it stops capturing for them and drops unneeded slots */
	if (present)
	{
		char	   *r;
		char	   *save;

		for (r = strtok_r(present, ",", &save); r; r = strtok_r(NULL, ",", &save))
		{
			params[1] = r;
			(void) remote_exec(target, j->region, "SELECT dynindex._replica_leave($1, $2)", 2, params);
		}
	}
	/* DynamoDB deletes the replica's table (deletion protection is turned off first, as for a replica) */
	(void) remote_exec(target, j->region,
					   "SELECT dynindex.api('DeleteTable', pg_catalog.jsonb_build_object('TableName', $1::text)) "
					   "WHERE EXISTS (SELECT FROM dynindex.tables WHERE table_name = $1)", 1, params);
	foreach(lc, others)
	{
		char	   *region = lfirst(lc);
		PGconn	   *c = remote_connect(region);

		params[1] = j->region;
		(void) remote_exec(c, region, "SELECT dynindex._replica_leave($1, $2)", 2, params);
	}
	(void) local_exec("SELECT dynindex._replica_leave($1, $2)", 2, j->table, j->region, NULL);
	remote_close_all();
}

/*
 * The UpdateTable requests that make the replica's table (described by $1)
 * what the Update action $2 asks: its read capacity, its on-demand read
 * maximum, its GSIs' (the write capacity stays the table's: DynamoDB's
 * overrides are of reads), its table class, its KMS key.  What already is so
 * is not asked (UpdateTable refuses a change to the same value).
 */
static const char *const update_requests_sql =
"WITH d AS (SELECT $1::jsonb AS t, $2::jsonb AS u) "
"SELECT r::text FROM d, LATERAL ("
" SELECT pg_catalog.jsonb_build_object('TableName', t->'TableName', 'ProvisionedThroughput', pg_catalog.jsonb_build_object("
"   'ReadCapacityUnits', u->'ProvisionedThroughputOverride'->'ReadCapacityUnits', "
"   'WriteCapacityUnits', t->'ProvisionedThroughput'->'WriteCapacityUnits')) AS r "
"  WHERE u->'ProvisionedThroughputOverride' ? 'ReadCapacityUnits' "
"    AND u->'ProvisionedThroughputOverride'->'ReadCapacityUnits' IS DISTINCT FROM t->'ProvisionedThroughput'->'ReadCapacityUnits' "
" UNION ALL SELECT pg_catalog.jsonb_build_object('TableName', t->'TableName', 'OnDemandThroughput', "
"   pg_catalog.jsonb_build_object('MaxReadRequestUnits', u->'OnDemandThroughputOverride'->'MaxReadRequestUnits')) "
"  WHERE u->'OnDemandThroughputOverride' ? 'MaxReadRequestUnits' "
" UNION ALL SELECT pg_catalog.jsonb_build_object('TableName', t->'TableName', 'GlobalSecondaryIndexUpdates', "
"   pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('Update', pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object("
"     'IndexName', g->'IndexName', "
"     'ProvisionedThroughput', CASE WHEN g->'ProvisionedThroughputOverride'->'ReadCapacityUnits' IS DISTINCT FROM cg->'ProvisionedThroughput'->'ReadCapacityUnits' "
"       AND g->'ProvisionedThroughputOverride' ? 'ReadCapacityUnits' THEN pg_catalog.jsonb_build_object("
"       'ReadCapacityUnits', g->'ProvisionedThroughputOverride'->'ReadCapacityUnits', "
"       'WriteCapacityUnits', cg->'ProvisionedThroughput'->'WriteCapacityUnits') END, "
"     'OnDemandThroughput', CASE WHEN g->'OnDemandThroughputOverride' ? 'MaxReadRequestUnits' THEN pg_catalog.jsonb_build_object("
"       'MaxReadRequestUnits', g->'OnDemandThroughputOverride'->'MaxReadRequestUnits') END)))))"
"  FROM pg_catalog.jsonb_array_elements(coalesce(u->'GlobalSecondaryIndexes', '[]')) g "
"  JOIN pg_catalog.jsonb_array_elements(coalesce(t->'GlobalSecondaryIndexes', '[]')) cg ON cg->'IndexName' = g->'IndexName' "
"  WHERE (g->'ProvisionedThroughputOverride' ? 'ReadCapacityUnits' "
"         AND g->'ProvisionedThroughputOverride'->'ReadCapacityUnits' IS DISTINCT FROM cg->'ProvisionedThroughput'->'ReadCapacityUnits') "
"     OR g->'OnDemandThroughputOverride' ? 'MaxReadRequestUnits' "
" UNION ALL SELECT pg_catalog.jsonb_build_object('TableName', t->'TableName', 'TableClass', u->'TableClassOverride') "
"  WHERE u ? 'TableClassOverride' AND u->>'TableClassOverride' IS DISTINCT FROM coalesce(t->'TableClassSummary'->>'TableClass', 'STANDARD') "
" UNION ALL SELECT pg_catalog.jsonb_build_object('TableName', t->'TableName', 'SSESpecification', pg_catalog.jsonb_build_object("
"   'Enabled', true, 'SSEType', 'KMS', 'KMSMasterKeyId', u->'KMSMasterKeyId')) "
"  WHERE u ? 'KMSMasterKeyId') x";

/* The overrides an Update action records (DescribeTable's members of a replica). */
static const char *const overrides_sql =
"SELECT pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object("
"'ProvisionedThroughputOverride', u->'ProvisionedThroughputOverride', "
"'OnDemandThroughputOverride', u->'OnDemandThroughputOverride', "
"'GlobalSecondaryIndexes', u->'GlobalSecondaryIndexes', 'KMSMasterKeyId', u->'KMSMasterKeyId', "
"'ReplicaTableClassSummary', CASE WHEN u ? 'TableClassOverride' THEN pg_catalog.jsonb_build_object("
"  'TableClass', u->'TableClassOverride', 'LastUpdateDateTime', pg_catalog.round(extract(epoch FROM pg_catalog.now())::numeric, 3)) END))::text "
"FROM (SELECT $1::jsonb AS u) s";

/*
 * Update the replica of j->table in region j->region: apply the Update
 * action's settings to the region's table through its UpdateTable, run as
 * that replica's own (_replica_local_api: not sent to the other regions, as
 * an UpdateTable of capacity would be), then record them (DescribeTable's
 * Replicas) here and on every other replica.
 */
static void
replica_update(const ReplicaJob *j, const char *request)
{
	PGconn	   *target;
	const char *params[3];
	char	   *desc;
	char	   *overrides;
	List	   *others = NIL;
	List	   *requests = NIL;
	ListCell   *lc;
	MemoryContext old;

	local_begin();
	others = other_replicas(j, true);
	local_end();

	target = remote_connect(j->region);
	params[0] = j->table;
	desc = remote_exec(target, j->region,
					   "SELECT (dynindex.api('DescribeTable', pg_catalog.jsonb_build_object('TableName', $1::text))->'Table')::text",
					   1, params);
	local_begin();
	if (SPI_execute_with_args(update_requests_sql, 2, (Oid[]) {TEXTOID, TEXTOID},
							  (Datum[]) {CStringGetTextDatum(desc), CStringGetTextDatum(request)},
							  NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not build the replica's UpdateTable requests");
	old = MemoryContextSwitchTo(job_context);
	for (uint64 i = 0; i < SPI_processed; i++)
		requests = lappend(requests, pstrdup(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1)));
	MemoryContextSwitchTo(old);
	overrides = local_query(overrides_sql, 1, request, NULL, NULL);
	local_end();
	foreach(lc, requests)
	{
		params[0] = lfirst(lc);
		(void) remote_exec(target, j->region, "SELECT dynindex._replica_local_api('UpdateTable', $1::jsonb)", 1, params);
	}
	params[0] = j->table;
	params[1] = j->region;
	params[2] = overrides;
	foreach(lc, others)
	{
		char	   *region = lfirst(lc);

		(void) remote_exec(remote_connect(region), region, "SELECT dynindex._replica_overrides($1, $2, $3::jsonb)", 3, params);
	}
	(void) local_exec("SELECT dynindex._replica_overrides($1, $2, $3::jsonb)", 3, j->table, j->region, overrides);
	remote_close_all();
}

/* Read the job's row. */
static bool
read_job(int64 id, ReplicaJob *j)
{
	bool		found = false;

	local_begin();
	if (SPI_execute_with_args("SELECT table_name, region_name, action, request::text FROM dynindex.replica_jobs WHERE job_id = $1",
							  1, (Oid[]) {INT8OID}, (Datum[]) {Int64GetDatum(id)}, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.replica_jobs");
	if (SPI_processed == 1)
	{
		j->id = id;
		j->table = MemoryContextStrdup(job_context, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
		j->region = MemoryContextStrdup(job_context, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
		j->action = MemoryContextStrdup(job_context, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3));
		j->request = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);
		if (j->request)
			j->request = MemoryContextStrdup(job_context, j->request);
		found = true;
	}
	local_end();
	return found;
}

/* The job's memory. */
static void
ensure_context(void)
{
	if (job_context == NULL)
		job_context = AllocSetContextCreate(TopMemoryContext, "dynindex replica job", ALLOCSET_DEFAULT_SIZES);
}

/* "creation", "update", "deletion" */
static const char *
action_noun(const char *action)
{
	return strcmp(action, "Create") == 0 ? "creation" : strcmp(action, "Update") == 0 ? "update" : "deletion";
}

/* Run a replica job (worker/jobs.c): Create or Delete, from the start (every step can run again). */
void
DynReplicaRun(int64 id)
{
	ReplicaJob	j;

	ensure_context();
	if (!read_job(id, &j))
		return;
	ereport(LOG, (errmsg("dynindex: %s of the replica of table \"%s\" in region \"%s\" started",
						 action_noun(j.action), j.table, j.region)));
	if (strcmp(j.action, "Create") == 0)
		replica_create(&j);
	else if (strcmp(j.action, "Update") == 0 && j.request)
		replica_update(&j, j.request);
	else
		replica_delete(&j);
	ereport(LOG, (errmsg("dynindex: %s of the replica of table \"%s\" in region \"%s\" done",
						 action_noun(j.action), j.table, j.region)));
}

/*
 * A replica job failed (message: its error, which names regions and tables,
 * never a connection string nor an item).  A Create leaves the replica
 * CREATION_FAILED here (this server no longer captures for it, and drops its
 * slot for the region if nothing else needs it); a Delete leaves it DELETING
 * (DeleteTable or a new request can finish it); an Update leaves it ACTIVE
 * with the overrides it had.
 */
void
DynReplicaFail(int64 id, const char *message)
{
	ReplicaJob	j;

	ensure_context();
	remote_close_all();
	if (!read_job(id, &j))
		return;
	ereport(WARNING, (errmsg("dynindex: the %s of the replica of table \"%s\" in region \"%s\" failed: %s",
							 action_noun(j.action), j.table, j.region, message)));
	local_begin();
	{
		DynSecurityState sec;

		DynSecurityBeginInternal(&sec);
		if (SPI_execute_with_args("UPDATE dynindex.replica_jobs SET failure = $2 WHERE job_id = $1",
								  2, (Oid[]) {INT8OID, TEXTOID}, (Datum[]) {Int64GetDatum(id), CStringGetTextDatum(message)},
								  NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not write dynindex.replica_jobs");
		if (strcmp(j.action, "Create") == 0 &&
			SPI_execute_with_args("UPDATE dynindex.replicas SET status = 'CREATION_FAILED' WHERE table_name = $1 AND region_name = $2",
								  2, (Oid[]) {TEXTOID, TEXTOID}, (Datum[]) {CStringGetTextDatum(j.table), CStringGetTextDatum(j.region)},
								  NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not write dynindex.replicas");
		/* an Update that could not be applied: the replica is as it was */
		if (strcmp(j.action, "Update") == 0 &&
			SPI_execute_with_args("UPDATE dynindex.replicas SET status = 'ACTIVE' WHERE table_name = $1 AND region_name = $2 AND status = 'UPDATING'",
								  2, (Oid[]) {TEXTOID, TEXTOID}, (Datum[]) {CStringGetTextDatum(j.table), CStringGetTextDatum(j.region)},
								  NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not write dynindex.replicas");
		DynSecurityEndInternal(&sec);
	}
	DynCatalogChanged();
	local_end();
	if (strcmp(j.action, "Create") == 0)
	{
		local_begin();
		DynReplicationDropUnneededSlot(j.region);
		local_end();
	}
}
