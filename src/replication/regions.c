/*
 * regions.c — the regions of a deployment: dynindex.regions, one row per
 * other dynindex server (region name -> libpq connection string), and the
 * administrators' SQL functions that keep it (docs/global-tables.md).
 *
 * The connection strings carry credentials: only the extension's owner reads
 * the table; list_regions shows them without their secrets, and the errors of
 * set_region never repeat the string nor let the server log the statement.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "catalog/dyn_catalog.h"
#include "common/arn.h"
#include "replication/replication.h"
#include "security/security.h"

/* Is dynindex.regions there (version 0.3 of the extension)? */
bool
DynRegionsCatalogPresent(void)
{
	Oid			ns = get_namespace_oid("dynindex", true);

	return OidIsValid(ns) && OidIsValid(get_relname_relid("regions", ns));
}

/* This server's region: dynindex.region as the configuration sets it, not a session's SET. */
const char *
DynRegionLocal(void)
{
	const char *r = GetConfigOptionResetString("dynindex.region");

	return r ? r : dynindex_region;
}

/* The declared regions, sorted by name (palloc'd strings). */
List *
DynRegionsDeclared(void)
{
	List	   *out = NIL;
	DynSecurityState sec;
	MemoryContext outer = CurrentMemoryContext;

	if (!DynRegionsCatalogPresent())
		return NIL;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute("SELECT region_name FROM dynindex.regions ORDER BY region_name", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.regions");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		MemoryContext spi = MemoryContextSwitchTo(outer);

		out = lappend(out, TextDatumGetCString(d));
		MemoryContextSwitchTo(spi);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return out;
}

/* Is region declared to this server? */
bool
DynRegionIsDeclared(const char *region)
{
	ListCell   *lc;

	foreach(lc, DynRegionsDeclared())
		if (strcmp((char *) lfirst(lc), region) == 0)
			return true;
	return false;
}

/* A declared region's connection string, or NULL.  It holds credentials: never log it. */
char *
DynRegionConninfo(const char *region)
{
	DynSecurityState sec;
	MemoryContext outer = CurrentMemoryContext;
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(region)};
	char	   *out = NULL;

	if (!DynRegionsCatalogPresent())
		return NULL;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT conninfo FROM dynindex.regions WHERE region_name = $1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.regions");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(outer);

		out = TextDatumGetCString(d);
		MemoryContextSwitchTo(spi);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return out;
}

/* Only superusers and dynindex_admin manage regions, and only in a 0.3 database. */
static void
require_region_admin(void)
{
	if (!DynSecurityIsAccountAdmin(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to manage dynindex regions"),
				 errdetail("Only superusers and members of dynindex_admin may."),
				 errhidestmt(true)));
	if (!DynRegionsCatalogPresent())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex regions need version 0.3 of the extension in this database"),
				 errhint("Run ALTER EXTENSION dynindex UPDATE."),
				 errhidestmt(true)));
}

/* A region name: 1 to 64 lowercase letters, digits and '-', starting with a letter. */
static bool
region_name_ok(const char *r)
{
	size_t		n = strlen(r);

	if (n < 1 || n > 64 || r[0] < 'a' || r[0] > 'z')
		return false;
	for (const char *p = r; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
			return false;
	return true;
}

/* Append a conninfo value, quoted as libpq reads it. */
static void
append_quoted(StringInfo s, const char *v)
{
	appendStringInfoChar(s, '\'');
	for (; *v; v++)
	{
		if (*v == '\'' || *v == '\\')
			appendStringInfoChar(s, '\\');
		appendStringInfoChar(s, *v);
	}
	appendStringInfoChar(s, '\'');
}

/*
 * Parse a connection string; NULL when libpq refuses it.  *has_password: it
 * names a non-empty password.  With shown, the string without its secrets
 * (the options libpq displays as '*': password, sslpassword).
 */
static PQconninfoOption *
parse_conninfo(const char *conninfo, bool *has_password, StringInfo shown)
{
	char	   *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &err);

	if (err)
		PQfreemem(err);			/* it may quote the string: never shown */
	if (opts == NULL)
		return NULL;
	*has_password = false;
	for (PQconninfoOption *o = opts; o->keyword; o++)
	{
		if (o->val == NULL)
			continue;
		if (strcmp(o->keyword, "password") == 0 && o->val[0] != '\0')
			*has_password = true;
		if (shown == NULL || (o->dispchar && o->dispchar[0] == '*'))
			continue;
		if (shown->len > 0)
			appendStringInfoChar(shown, ' ');
		appendStringInfo(shown, "%s=", o->keyword);
		append_quoted(shown, o->val);
	}
	return opts;
}

PG_FUNCTION_INFO_V1(dynindex_set_region);

/*
 * dynindex.set_region(region_name, conninfo): declare (or change) the
 * connection to the dynindex server of another region.
 */
Datum
dynindex_set_region(PG_FUNCTION_ARGS)
{
	char	   *region;
	char	   *conninfo;
	bool		has_password;
	PQconninfoOption *opts;
	DynSecurityState sec;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];

	require_region_admin();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("region name and connection string must not be null"), errhidestmt(true)));
	region = text_to_cstring(PG_GETARG_TEXT_PP(0));
	conninfo = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (!region_name_ok(region))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid region name"),
						errdetail("A region name has 1 to 64 lowercase letters, digits or '-', and starts with a letter."),
						errhidestmt(true)));
	if (strcmp(region, DynRegionLocal()) == 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("region \"%s\" is this server's own region (dynindex.region)", region),
						errhidestmt(true)));
	opts = parse_conninfo(conninfo, &has_password, NULL);
	if (opts == NULL)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid connection string for region \"%s\"", region),
						errdetail("libpq does not accept it (its text is not repeated: it may hold a password)."),
						errhidestmt(true)));
	PQconninfoFree(opts);
	/* as postgres_fdw and CREATE SUBSCRIPTION: only a superuser may use the server's own credentials */
	if (!superuser() && !has_password)
		ereport(ERROR, (errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
						errmsg("password is required"),
						errdetail("Non-superusers must provide a password in the connection string."),
						errhidestmt(true)));
	args[0] = CStringGetTextDatum(region);
	args[1] = CStringGetTextDatum(conninfo);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("INSERT INTO dynindex.regions AS r (region_name, conninfo) VALUES ($1, $2) "
							  "ON CONFLICT (region_name) DO UPDATE SET conninfo = $2",
							  2, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write dynindex.regions");
	DynSecurityEndInternal(&sec);
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_drop_region);

/* dynindex.drop_region(region_name) RETURNS boolean: was it declared? */
Datum
dynindex_drop_region(PG_FUNCTION_ARGS)
{
	DynSecurityState sec;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	bool		found;

	require_region_admin();
	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(false);
	args[0] = PointerGetDatum(PG_GETARG_TEXT_PP(0));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT FROM dynindex.replicas WHERE region_name = $1",
							  1, types, args, NULL, true, 1) == SPI_OK_SELECT && SPI_processed > 0)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_IN_USE),
						errmsg("region \"%s\" has replicas of tables", TextDatumGetCString(args[0])),
						errhint("Remove the replicas first.")));
	if (SPI_execute_with_args("DELETE FROM dynindex.regions WHERE region_name = $1",
							  1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not write dynindex.regions");
	found = SPI_processed > 0;
	DynSecurityEndInternal(&sec);
	SPI_finish();
	PG_RETURN_BOOL(found);
}

PG_FUNCTION_INFO_V1(dynindex_forget_region);

/*
 * dynindex.forget_region(region_name) RETURNS bigint: a region lost for good
 * (its server destroyed, never coming back) cannot take part in a
 * ReplicaUpdates Delete.  Forget here, without asking it, every replica of a
 * table in that region (the tables stay here, no longer replicated with it),
 * end the replica jobs of the region that have not finished, and drop this
 * server's slot for it; its apply worker stops at its next session and
 * forgets how far it had applied (worker/apply.c).  Returns the number of
 * replicas forgotten.  Run it on every server that remains.
 */
Datum
dynindex_forget_region(PG_FUNCTION_ARGS)
{
	char	   *region = text_to_cstring(PG_GETARG_TEXT_PP(0));
	DynSecurityState sec;
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(region)};
	int64		n;

	require_region_admin();
	if (strcmp(region, DynRegionLocal()) == 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("region \"%s\" is this server's own region", region)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("WITH j AS (UPDATE dynindex.replica_jobs SET failure = coalesce(failure, "
							  "'the region was forgotten (dynindex.forget_region)') WHERE region_name = $1 RETURNING job_id) "
							  "UPDATE dynindex.jobs SET state = 'done', finished_at = coalesce(finished_at, now()) "
							  "WHERE job_id IN (SELECT job_id FROM j) AND state <> 'done'",
							  1, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not end the replica jobs");
	if (SPI_execute_with_args("DELETE FROM dynindex.replicas WHERE region_name = $1",
							  1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not write dynindex.replicas");
	n = (int64) SPI_processed;
	DynReplicationDropUnneededSlot(region);	/* none needs it now */
	DynSecurityEndInternal(&sec);
	SPI_finish();
	DynCatalogChanged();
	PG_RETURN_INT64(n);
}

PG_FUNCTION_INFO_V1(dynindex_list_regions);

/* dynindex.list_regions(): this server's region, then each declared one, without secrets. */
Datum
dynindex_list_regions(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DynSecurityState sec;
	Datum		values[3];
	bool		isnull[3] = {false, true, false};

	require_region_admin();
	InitMaterializedSRF(fcinfo, 0);
	values[0] = CStringGetTextDatum(DynRegionLocal());
	values[2] = BoolGetDatum(true);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute("SELECT region_name, conninfo FROM dynindex.regions ORDER BY region_name", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.regions");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		n1;
		bool		n2;
		char	   *conninfo = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &n2));
		StringInfoData shown;
		bool		has_password;
		PQconninfoOption *opts;

		initStringInfo(&shown);
		opts = parse_conninfo(conninfo, &has_password, &shown);
		if (opts)
			PQconninfoFree(opts);
		values[0] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &n1);
		values[1] = CStringGetTextDatum(shown.data);
		values[2] = BoolGetDatum(false);
		isnull[1] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return (Datum) 0;
}

/*
 * The replication status of each declared region (SPI connected): its name,
 * this server's slot for it, streaming, WAL bytes not confirmed, how far its
 * changes are applied here (origin), and the slot's confirmed position when
 * the slot is this database's (PendingReplicationCount is counted per
 * database).
 */
#define STATUS_QUERY \
	"SELECT r.region_name, s.slot_name::text, coalesce(s.active, false), " \
	"CASE WHEN s.confirmed_flush_lsn IS NOT NULL THEN " \
	"pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), s.confirmed_flush_lsn) END, " \
	"o.remote_lsn, " \
	"CASE WHEN s.database = pg_catalog.current_database() THEN s.confirmed_flush_lsn END " \
	"FROM dynindex.regions r " \
	"LEFT JOIN pg_catalog.pg_replication_slots s " \
	"ON s.slot_name = 'dynindex_' || pg_catalog.replace(r.region_name, '-', '_') " \
	"LEFT JOIN pg_catalog.pg_replication_origin_status o ON o.external_id = 'dynindex_' || r.region_name " \
	"ORDER BY r.region_name"

/* PendingReplicationCount of the status row i (false: not counted). */
static bool
status_pending(uint64 i, int64 *count, bool *exact)
{
	bool		isnull;
	Datum		confirmed = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 6, &isnull);

	return !isnull && DynReplicationPendingCount(DatumGetLSN(confirmed), count, exact);
}

PG_FUNCTION_INFO_V1(dynindex_replication_status);

/*
 * dynindex.replication_status(): per declared region, this server's slot
 * for it (the changes it has not confirmed yet, in bytes of WAL and as a
 * count of item changes), how far this server has applied the region's
 * changes (its replication origin) and their latency since the server
 * started (lag.c).
 */
Datum
dynindex_replication_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DynSecurityState sec;

	require_region_admin();
	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute(STATUS_QUERY, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the replication status");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Datum		values[11];
		bool		isnull[11] = {false};
		DynReplicationLag lag;
		int64		pending;
		bool		exact;

		for (int c = 0; c < 5; c++)
			values[c] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c + 1, &isnull[c]);
		if (DynReplicationLagGet(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1), &lag))
		{
			values[5] = Float8GetDatum(lag.last_latency_us / 1000.0);
			values[6] = Float8GetDatum((double) lag.sum_latency_us / lag.applied_changes / 1000.0);
			values[7] = Int64GetDatum(lag.applied_changes);
			values[8] = TimestampTzGetDatum(lag.last_applied_at);
		}
		else
		{
			isnull[5] = isnull[6] = isnull[8] = true;
			values[7] = Int64GetDatum(0);
		}
		if (status_pending(i, &pending, &exact))
		{
			values[9] = Int64GetDatum(pending);
			values[10] = BoolGetDatum(exact);
		}
		else
			isnull[9] = isnull[10] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(dynindex_replication_metrics);

/*
 * dynindex.replication_metrics(): the figures of replication_status() as
 * DynamoDB's CloudWatch metrics, for the endpoints' Prometheus export
 * (text columns are labels): per declared region R, the row (R, this
 * region) with ReplicationLatency of R's changes applied here, and the row
 * (this region, R) with PendingReplicationCount, the changes made here R
 * has not applied.  Readable by administrators and pg_monitor: region names
 * and counts only, no connection string.
 */
Datum
dynindex_replication_metrics(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DynSecurityState sec;
	const char *local = DynRegionLocal();

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute(STATUS_QUERY, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the replication status");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *region = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		Datum		values[8];
		bool		isnull[8];
		DynReplicationLag lag;
		int64		pending;
		bool		exact;

		/* (region -> here): the latency of its changes applied here */
		memset(isnull, true, sizeof(isnull));
		values[0] = CStringGetTextDatum(region);
		values[1] = CStringGetTextDatum(local);
		isnull[0] = isnull[1] = false;
		values[4] = Int64GetDatum(0);
		isnull[4] = false;
		if (DynReplicationLagGet(region, &lag))
		{
			values[2] = Float8GetDatum(lag.last_latency_us / 1000.0);
			values[3] = Float8GetDatum((double) lag.sum_latency_us / lag.applied_changes / 1000.0);
			values[4] = Int64GetDatum(lag.applied_changes);
			isnull[2] = isnull[3] = false;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);

		/* (here -> region): what it has not applied */
		memset(isnull, true, sizeof(isnull));
		values[0] = CStringGetTextDatum(local);
		values[1] = CStringGetTextDatum(region);
		isnull[0] = isnull[1] = false;
		if (status_pending(i, &pending, &exact))
		{
			values[5] = Int64GetDatum(pending);
			values[6] = Int32GetDatum(exact ? 1 : 0);
			isnull[5] = isnull[6] = false;
		}
		values[7] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 4, &isnull[7]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return (Datum) 0;
}
