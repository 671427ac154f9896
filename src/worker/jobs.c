/*
 * jobs.c — the background job runner (worker/jobs.h).
 *
 * A job is a row of dynindex.jobs (job_id, kind, state, attempts) recorded by
 * the operation that asks for it (ImportTable, ExportTableToPointInTime) in
 * its own transaction; its process is registered when that transaction
 * commits (common/jobs.c), so a rolled-back request starts nothing.  The
 * process connects to the requester's database, takes a session advisory
 * lock on the job (DYN_JOB_LOCK_CLASS, job_id: at most one process runs a
 * job, and the lock tells the others whether its process is alive), counts
 * the attempt and calls its kind's run function, which does the work in
 * transactions of its own and ends the job's own row (COMPLETED or FAILED).
 *
 * A crash or a restart mid-job: the job is left 'running' with no process
 * holding its lock.  The database's worker (worker.c) calls DynJobsRelaunch
 * at start and between rounds, and starts a process for every such job and
 * for every job still 'queued' (no worker slot was free at commit:
 * max_worker_processes is respected, the job waits).  The run functions
 * resume from what they committed, or restart; a job interrupted
 * DYN_JOB_MAX_ATTEMPTS times fails cleanly through its kind's fail function.
 * An ERROR out of a run function fails the job at once with that message.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/jobs.h"
#include "common/wakeup.h"
#include "exchange/export.h"
#include "exchange/import.h"
#include "replication/replication.h"
#include "worker/jobs.h"

/* Attempts (process starts) after which an interrupted job fails. */
#define DYN_JOB_MAX_ATTEMPTS 3

/* A kind of job: how to run it, and how to fail it when it cannot run. */
typedef struct JobKind
{
	const char *name;
	void		(*run) (int64 id);
	void		(*fail) (int64 id, const char *message);
} JobKind;

static const JobKind job_kinds[] = {
	{"import", DynImportRun, DynImportFail},	/* src/exchange/import.c */
	{"export", DynExportRun, DynExportFail},	/* src/exchange/export.c */
	{"replica", DynReplicaRun, DynReplicaFail},	/* src/replication/replica.c */
	{NULL, NULL, NULL}
};

/* The kind of a name, or NULL. */
static const JobKind *
find_kind(const char *name)
{
	for (const JobKind *k = job_kinds; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* Run one SQL statement on the job's row in its own transaction. */
static void
job_update(int64 id, const char *sql)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_execute_with_args(sql, 1, types, args, NULL, false, 0) < 0)
		elog(ERROR, "could not update job %lld", (long long) id);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * Claim a job: its lock, then its row.  Returns its kind, or NULL when there
 * is nothing to run (another process runs it, it is done, or the database has
 * no jobs catalog); *exhausted when it was interrupted too often.
 */
static const JobKind *
claim_job(int64 id, bool *exhausted)
{
	Oid			types[2] = {INT4OID, INT8OID};
	Datum		args[2] = {Int32GetDatum(DYN_JOB_LOCK_CLASS), Int64GetDatum(id)};
	bool		isnull;
	const JobKind *kind = NULL;

	*exhausted = false;
	SetCurrentStatementStartTimestamp();	/* now() of a background worker's transactions */
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (DynJobsCatalogPresent() &&
		SPI_execute_with_args("SELECT pg_try_advisory_lock($1, $2::int4)", 2, types, args, NULL, false, 1) == SPI_OK_SELECT &&
		DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) &&
		SPI_execute_with_args("SELECT kind, attempts FROM dynindex.jobs WHERE job_id = $2 AND state <> 'done' FOR UPDATE",
							  2, types, args, NULL, false, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		char	   *name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		int32		attempts = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));

		kind = find_kind(name);
		if (kind == NULL)
			ereport(WARNING, (errmsg("dynindex: job %lld has an unknown kind \"%s\"", (long long) id, name)));
		else if (attempts >= DYN_JOB_MAX_ATTEMPTS)
			*exhausted = true;
		else if (SPI_execute_with_args("UPDATE dynindex.jobs SET state = 'running', attempts = attempts + 1, "
									   "started_at = now() WHERE job_id = $2",
									   2, types, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not start job %lld", (long long) id);
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return kind;
}

/* Connect a job's process (or an import's helper) to the database its bgw_extra names. */
static void
connect_job_process(void)
{
	Oid			dboid;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
}

/* A job's process. */
void
dynindex_job_main(Datum arg)
{
	int64		id = DatumGetInt64(arg);
	const JobKind *kind;
	bool		exhausted;
	MemoryContext cxt;

	connect_job_process();
	pgstat_report_appname("dynindex job");

	kind = claim_job(id, &exhausted);
	if (kind == NULL)
		proc_exit(0);
	cxt = CurrentMemoryContext;
	PG_TRY();
	{
		if (exhausted)
			kind->fail(id, "The job was interrupted (server crash or restart) too many times.");
		else
		{
			pgstat_report_activity(STATE_RUNNING, psprintf("%s job %lld", kind->name, (long long) id));
			kind->run(id);
		}
	}
	PG_CATCH();
	{
		/*
		 * The run function could not finish: fail the job with the error's
		 * message (its functions report configuration errors, never item
		 * content), after logging it.
		 */
		ErrorData  *edata;

		HOLD_INTERRUPTS();
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		RESUME_INTERRUPTS();
		kind->fail(id, edata->message);
	}
	PG_END_TRY();
	job_update(id, "UPDATE dynindex.jobs SET state = 'done', finished_at = clock_timestamp() WHERE job_id = $1");
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}

/*
 * An import job's second process (DynJobLaunchHelper): it takes the import's
 * tasks beside the job's process and stops when none is left.  Not a job of
 * its own: an error ends it (logged) and the job's process does the task it
 * was doing; a crash leaves the job to be started again, which starts a new
 * helper.
 */
void
dynindex_import_helper_main(Datum arg)
{
	int64		id = DatumGetInt64(arg);

	connect_job_process();
	DynImportHelp(id);			/* its application_name: "dynindex import <id> helper" */
	pgstat_report_activity(STATE_IDLE, NULL);
	proc_exit(0);
}

/* Start the processes of the jobs waiting for one (the database's worker calls it). */
bool
DynJobsRelaunch(void)
{
	static TimestampTz last_check = 0;
	static bool pending = false;
	bool		waiting = false;
	bool		unfinished = false;
	uint64		n;
	int64	   *ids;
	Oid			types[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(DYN_JOB_LOCK_CLASS)};

	/*
	 * At most once a second; the first call (at the worker's start) at once.
	 * A job that found no free slot since the last look (its flag, cleared
	 * here) keeps the worker's rounds short until the next look: a worker
	 * that saw nothing pending would otherwise go idle for a minute before it.
	 * (While jobs are pending the rounds are short already; a flag left set
	 * then costs one short round later.)
	 */
	if (!pending && DynWorkerJobsWaiting(MyDatabaseId))
		pending = true;
	if (last_check != 0 &&
		!TimestampDifferenceExceeds(last_check, GetCurrentTimestamp(), 1000))
		return pending;
	last_check = GetCurrentTimestamp();

	/*
	 * Jobs not done whose process is gone, or not started yet: nobody holds
	 * their lock.  A process registered at commit that has not taken its lock
	 * yet may get a twin here; the twin finds the lock taken and exits.
	 */
	SetCurrentStatementStartTimestamp();	/* now() of a background worker's transactions */
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	n = 0;
	ids = NULL;
	if (DynJobsCatalogPresent() &&
		SPI_execute_with_args("SELECT j.job_id, EXISTS (SELECT 1 FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' "
							  "AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()) "
							  "AND l.classid = $1::oid AND l.objid = j.job_id::oid AND l.objsubid = 2) "
							  "FROM dynindex.jobs j WHERE j.state <> 'done' ORDER BY j.job_id LIMIT 100",
							  1, types, args, NULL, true, 0) == SPI_OK_SELECT)
	{
		bool		isnull;

		unfinished = SPI_processed > 0;
		ids = palloc(sizeof(int64) * Max(SPI_processed, 1));
		for (uint64 i = 0; i < SPI_processed; i++)
			if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull)))
				ids[n++] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	for (uint64 i = 0; i < n; i++)
		if (!DynJobLaunch(MyDatabaseId, ids[i]))
		{
			waiting = true;		/* no free slot: again at the next round */
			break;
		}
	/* while jobs run, poll (their process may end without finishing them: a crash) */
	pending = waiting || unfinished;
	return pending;
}
