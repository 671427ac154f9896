/*
 * local.c — dynindex_http only: the jobs of the HTTP layer run inside the
 * server, in the background worker that holds the connection, instead of on
 * a libpq pool.
 *
 * http.c's jobs run at once, in its request handler (db_run_now), each in
 * its own transaction: the API call as the gateway's statement makes it
 * (role and region for the transaction, then dynindex.api_text), the key
 * lookup through the gateway's statement (gateway.h), the metrics worker's
 * query of dynindex.table_metrics (JOB_SQL, its rows handed over as the libpq
 * result the gateway's pool would have read); then done().  Nothing
 * waits to run later.  An error rolls the transaction back and becomes the
 * job's DbResult as the gateway would have read it from libpq.
 * A request without an answer after request_timeout is cancelled by
 * statement_timeout's timer and gets the gateway's 500.
 *
 * No standbys here (reads stay on this server) and no pool: the functions
 * the gateway's other modules call answer accordingly.
 */
#include "postgres.h"

#include <sys/socket.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"

#include "gateway.h"

#include <libpq-fe.h>

static SPIPlanPtr plan_key;
static Oid	api_fn = InvalidOid;	/* dynindex.api_text(text, text) */
static PoolStats stats;

/* There is no pool: the worker is its own one connection. */
bool
pool_init(void)
{
	stats.size = 1;
	stats.ready = 1;
	stats.connects = 1;
	return true;
}

/* Nothing to drop: no job outlives the loop pass that submitted it. */
void
pool_shutdown(void)
{
}

static void finish_job(DbJob *j);

/* A job submitted outside http.c's run_job (which uses db_run_now) runs at once too. */
void
db_submit(DbJob *j)
{
	finish_job(j);
}

/* The same: the only server is this one. */
void
db_submit_to(Pool *p, DbJob *j)
{
	(void) p;
	db_submit(j);
}

/* The plan of sql (nargs <= 1 text parameters), prepared once per worker. */
static SPIPlanPtr
kept_plan(SPIPlanPtr *slot, const char *sql, int nargs)
{
	if (*slot == NULL)
	{
		Oid			types[1] = {TEXTOID};
		SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

		if (p == NULL)
			elog(ERROR, "cannot prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(p) != 0)
			elog(ERROR, "cannot keep the plan of \"%s\"", sql);
		*slot = p;
	}
	return *slot;
}

/*
 * dynindex.api_text(text, text), looked up once per worker (and again after
 * the extension was dropped and created again).
 */
static Oid
api_function(void)
{
	if (!OidIsValid(api_fn) || !SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(api_fn)))
	{
		api_fn = DatumGetObjectId(DirectFunctionCall1(to_regprocedure,
													  CStringGetTextDatum("dynindex.api_text(text,text)")));
		if (!OidIsValid(api_fn))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("dynindex.api_text(text, text) does not exist"),
					 errhint("CREATE EXTENSION dynindex (version 0.2 or later) in database \"%s\".",
							 get_database_name(MyDatabaseId))));
	}
	return api_fn;
}

/* set_config(name, value, true), as the gateway's statements do it */
static void
set_local(const char *name, const char *value)
{
	(void) set_config_option(name, value, superuser() ? PGC_SUSET : PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * JOB_SQL (the metrics scrape's dynindex.table_metrics): run j->sql and hand
 * its rows over as the libpq result the gateway's pool would have read, so
 * metrics.c reads both the same way.
 */
static void
execute_sql(DbJob *j)
{
	TupleDesc	td;
	PGresAttDesc *attrs;
	PGresult   *res;
	int			rc;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "dynindex_http: SPI_connect failed");
	rc = SPI_execute(j->sql, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "dynindex_http: unexpected SPI result %s", SPI_result_code_string(rc));
	td = SPI_tuptable->tupdesc;
	attrs = palloc0(sizeof(PGresAttDesc) * Max(td->natts, 1));
	for (int f = 0; f < td->natts; f++)
	{
		Form_pg_attribute a = TupleDescAttr(td, f);

		attrs[f].name = NameStr(a->attname);
		attrs[f].typid = a->atttypid;
		attrs[f].typlen = a->attlen;
		attrs[f].atttypmod = a->atttypmod;
	}
	res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	if (res == NULL || !PQsetResultAttrs(res, td->natts, attrs))
	{
		PQclear(res);
		elog(ERROR, "dynindex_http: out of memory");
	}
	for (uint64 r = 0; r < SPI_processed; r++)
		for (int f = 0; f < td->natts; f++)
		{
			char	   *v = SPI_getvalue(SPI_tuptable->vals[r], td, f + 1);

			if (!PQsetvalue(res, (int) r, f, v, v ? (int) strlen(v) : -1))
			{
				PQclear(res);
				elog(ERROR, "dynindex_http: out of memory");
			}
		}
	SPI_finish();
	j->pgres = res;
}

/*
 * Run j inside the transaction; its result goes into j.  The API call is
 * what the gateway's API_SQL / API_ROLE_SQL statements do, without a
 * statement around it: the role and the region are set for this transaction
 * only (set_config's is_local), then dynindex.api_text runs through fmgr.
 * The key lookup runs KEY_SQL through a kept SPI plan.
 */
static void
execute_job(DbJob *j)
{
	if (j->kind == JOB_KEY)
	{
		Datum		arg = CStringGetTextDatum(j->body);
		int			rc;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "dynindex_http: SPI_connect failed");
		rc = SPI_execute_plan(kept_plan(&plan_key, KEY_SQL, 1), &arg, NULL, true, 2);
		if (rc != SPI_OK_SELECT)
			elog(ERROR, "dynindex_http: unexpected SPI result %s", SPI_result_code_string(rc));
		if (SPI_processed == 1)
			keys_store(j, true, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1),
					   SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
		else
			keys_store(j, false, NULL, NULL);
		SPI_finish();
	}
	else if (j->kind == JOB_SQL)
		execute_sql(j);
	else
	{
		Oid			fn = api_function();
		text	   *t;

		if (j->role)
			set_local("role", j->role);
		if (j->region && j->region[0])
			set_local("dynindex.region", j->region);
		/* a GSI read that waits for the writes before it: the request's header, else the endpoint's setting */
		if (j->gsi_consistency)
			set_local("dynindex.gsi_read_your_writes", j->gsi_consistency);
		else if (gw_config.gsi_read_your_writes)
			set_local("dynindex.gsi_read_your_writes", "on");
		t = DatumGetTextPP(OidFunctionCall2(fn, CStringGetTextDatum(j->op), CStringGetTextDatum(j->body)));
		db_result_json(j, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
	}
}

/* The job failed with this error (the transaction is already rolled back). */
static void
job_failed(DbJob *j, ErrorData *ed)
{
	const char *sqlstate = unpack_sql_state(ed->sqlerrcode);

	db_result_free(&j->result);
	if (j->kind == JOB_KEY)
	{
		gw_log("cannot look up access keys (is dynindex installed?): %s", ed->message);
		j->key_found = -1;
		return;
	}
	if (j->kind == JOB_SQL)
	{
		/* metrics.c reads 42P01 (no dynindex.table_metrics) as "not installed" */
		if (ed->sqlerrcode != ERRCODE_UNDEFINED_TABLE)
			gw_log("metrics: %s", ed->message);
		j->result.status = DB_ERROR;
		snprintf(j->result.sqlstate, sizeof(j->result.sqlstate), "%s", sqlstate);
		return;
	}
	/* request_timeout (statement_timeout's timer) or pg_cancel_backend */
	if (ed->sqlerrcode == ERRCODE_QUERY_CANCELED)
	{
		gw_log("%s cancelled after %d s (request timeout) or by pg_cancel_backend",
			   j->op, gw_config.request_timeout);
		j->result.status = DB_TIMEOUT;
		return;
	}
	db_result_error(j, sqlstate, ed->message, ed->detail, ed->context, ed->message);
}

/* Run one job in its own transaction. */
static void
run_job(DbJob *j)
{
	MemoryContext cxt = CurrentMemoryContext;

	/* a configuration reload (pg_reload_conf, SIGHUP) applies from the next request on */
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
	/* forget a cancel that arrived between requests */
	QueryCancelPending = false;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, j->kind == JOB_KEY ? "dynindex_http: access key" :
						   j->kind == JOB_SQL ? j->sql : j->op);
	if (gw_config.request_timeout > 0)
		enable_timeout_after(STATEMENT_TIMEOUT, gw_config.request_timeout * 1000);
	PG_TRY();
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		execute_job(j);
		PopActiveSnapshot();
		CommitTransactionCommand();
		disable_timeout(STATEMENT_TIMEOUT, false);
	}
	PG_CATCH();
	{
		ErrorData  *ed;

		disable_timeout(STATEMENT_TIMEOUT, false);
		MemoryContextSwitchTo(cxt);
		ed = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		job_failed(j, ed);
		FreeErrorData(ed);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Run j, tell its submitter, free it. */
static void
finish_job(DbJob *j)
{
	run_job(j);
	if (j->done)
		j->done(j);
	db_result_free(&j->result);
	if (j->pgres)
		PQclear(j->pgres);
	memset(j->secret, 0, sizeof(j->secret));
	free(j);
}

/* The HTTP layer's jobs run at once, in its handler. */
bool
db_run_now(DbJob *j)
{
	finish_job(j);
	return true;
}

/* After each pass of the loop: no timers here (request_timeout is statement_timeout's). */
void
db_tick(void)
{
}

/* ---- what the gateway's pool and standbys answer, for the HTTP layer ---- */

void
pool_stats(PoolStats *s)
{
	*s = stats;
}

void
pool_stats_of(const Pool *p, PoolStats *s)
{
	(void) p;
	*s = stats;
}

Pool *
pool_primary(void)
{
	return NULL;
}

Pool *
pool_standby(int i)
{
	(void) i;
	return NULL;
}

int
pool_nstandbys(void)
{
	return 0;
}

const char *
pool_name(const Pool *p)
{
	(void) p;
	return "local";
}

int
pool_load(const Pool *p)
{
	(void) p;
	return 0;
}

bool
gw_eventual_read(const char *op, const char *body)
{
	(void) op;
	(void) body;
	return false;
}

void
standby_metrics(Buf *b)
{
	(void) b;
}

int
standby_tick_ms(void)
{
	return -1;
}
