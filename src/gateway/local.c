/*
 * local.c — dynindex_http only: the jobs of the HTTP layer run inside the
 * server, in the background worker that holds the connection, instead of on
 * a libpq pool.
 *
 * http.c submits a job and suspends its connection; db_tick(), at the end of
 * the loop pass, runs the queued jobs one after the other, each in its own
 * transaction, through SPI with the same statements the gateway prepares
 * (gateway.h), and calls done().  An error rolls the transaction back and
 * becomes the job's DbResult as the gateway would have read it from libpq.
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
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"

#include "gateway.h"

static DbJob *queue_head;
static DbJob *queue_tail;
static SPIPlanPtr plan_api;
static SPIPlanPtr plan_api_role;
static SPIPlanPtr plan_key;
static PoolStats stats;

bool
pool_init(void)
{
	stats.size = 1;
	stats.ready = 1;
	stats.connects = 1;
	return true;
}

void
pool_shutdown(void)
{
	/* jobs still queued never ran: their connections are closed with the daemon */
	while (queue_head)
	{
		DbJob	   *j = queue_head;

		queue_head = j->next;
		db_result_free(&j->result);
		free(j);
	}
	queue_tail = NULL;
}

void
db_submit(DbJob *j)
{
	j->next = NULL;
	if (queue_tail)
		queue_tail->next = j;
	else
		queue_head = j;
	queue_tail = j;
	stats.queued++;
}

void
db_submit_to(Pool *p, DbJob *j)
{
	(void) p;
	db_submit(j);
}

/* The plan of sql (nargs text parameters), prepared once per worker. */
static SPIPlanPtr
kept_plan(SPIPlanPtr *slot, const char *sql, int nargs)
{
	if (*slot == NULL)
	{
		Oid			types[4] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID};
		SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

		if (p == NULL)
			elog(ERROR, "cannot prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(p) != 0)
			elog(ERROR, "cannot keep the plan of \"%s\"", sql);
		*slot = p;
	}
	return *slot;
}

/* Run j's statement; its result goes into j (inside the transaction). */
static void
execute_job(DbJob *j)
{
	Datum		args[4];
	SPIPlanPtr	plan;
	int			n = 0;
	int			rc;

	if (j->kind == JOB_KEY)
	{
		plan = kept_plan(&plan_key, KEY_SQL, 1);
		args[n++] = CStringGetTextDatum(j->body);
	}
	else
	{
		if (j->role)
			args[n++] = CStringGetTextDatum(j->role);
		args[n++] = CStringGetTextDatum(j->region ? j->region : gw_config.region);
		args[n++] = CStringGetTextDatum(j->op);
		args[n++] = CStringGetTextDatum(j->body);
		plan = j->role ? kept_plan(&plan_api_role, API_ROLE_SQL, 4) : kept_plan(&plan_api, API_SQL, 3);
	}
	rc = SPI_execute_plan(plan, args, NULL, false, 2);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "dynindex_http: unexpected SPI result %s", SPI_result_code_string(rc));
	if (j->kind == JOB_KEY)
	{
		if (SPI_processed == 1)
			keys_store(j, true, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1),
					   SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
		else
			keys_store(j, false, NULL, NULL);
	}
	else
	{
		bool		isnull = true;
		Datum		d = (Datum) 0;
		text	   *t;

		if (SPI_processed == 1)
			d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			elog(ERROR, "dynindex.api returned no result");
		t = DatumGetTextPP(d);
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

	/* forget a cancel that arrived between requests */
	QueryCancelPending = false;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, j->kind == JOB_KEY ? "dynindex_http: access key" : j->op);
	if (gw_config.request_timeout > 0)
		enable_timeout_after(STATEMENT_TIMEOUT, gw_config.request_timeout * 1000);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "dynindex_http: SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		execute_job(j);
		PopActiveSnapshot();
		SPI_finish();
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

/* After each pass of the loop: run the queued jobs, answer their connections. */
void
db_tick(void)
{
	while (queue_head)
	{
		DbJob	   *j = queue_head;

		queue_head = j->next;
		if (queue_head == NULL)
			queue_tail = NULL;
		stats.queued--;
		run_job(j);
		if (j->done)
			j->done(j);
		db_result_free(&j->result);
		memset(j->secret, 0, sizeof(j->secret));
		free(j);
	}
}

/* Jobs are waiting for the next db_tick (the loop must not sleep). */
bool
db_pending(void)
{
	return queue_head != NULL;
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
	return stats.queued;
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
