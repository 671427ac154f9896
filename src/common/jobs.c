/*
 * jobs.c — recording a background job and starting its process at commit
 * (common/jobs.h).  The process itself (dynindex_job_main) and the restart
 * of jobs left behind by a crash are the runner's, in src/worker/jobs.c.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "common/jobs.h"
#include "common/wakeup.h"

/* Jobs submitted by the current transaction, to start at commit. */
static List *pending_jobs = NIL;
static bool callback_registered = false;

/* Start a process of a job: a dynamic background worker connected to dboid. */
static bool
launch(Oid dboid, int64 job_id, const char *function, const char *suffix)
{
	char		name[BGW_MAXLEN];

	snprintf(name, sizeof(name), "dynindex job %lld%s", (long long) job_id, suffix);
	return DynStartDatabaseWorker(function, "dynindex job", name, Int64GetDatum(job_id), &dboid, sizeof(Oid), 0);
}

bool
DynJobLaunch(Oid dboid, int64 job_id)
{
	return launch(dboid, job_id, DYN_JOB_MAIN, "");
}

/* Start an import's second process (no slot free: the job does without it). */
bool
DynJobLaunchHelper(Oid dboid, int64 job_id)
{
	return launch(dboid, job_id, DYN_IMPORT_HELPER_MAIN, " helper");
}

/* At commit, start the processes of the jobs the transaction recorded. */
static void
jobs_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;
	bool		missed = false;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT && event != XACT_EVENT_PARALLEL_ABORT)
		return;
	if (event == XACT_EVENT_COMMIT)
	{
		foreach(lc, pending_jobs)
		{
			int64		id = *(int64 *) lfirst(lc);

			if (!DynJobLaunch(MyDatabaseId, id))
				missed = true;
		}
		/* no slot free: the database's worker starts it when one is (worker/jobs.c) */
		if (missed)
			DynWorkerWakeForJobs(MyDatabaseId);
	}
	pending_jobs = NIL;			/* its memory went with TopTransactionContext */
}

/* Does the database have dynindex.jobs (release 0.3's catalog)? */
bool
DynJobsCatalogPresent(void)
{
	return OidIsValid(get_relname_relid("jobs", get_namespace_oid("dynindex", true)));
}

/* Record a job and start its process at commit. */
int64
DynJobSubmit(const char *kind)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(kind)};
	bool		isnull;
	int64		id;
	int64	   *idp;
	MemoryContext old;

	if (SPI_execute_with_args("INSERT INTO dynindex.jobs (kind) VALUES ($1) RETURNING job_id",
							  1, types, args, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not record a job");
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (!callback_registered)
	{
		RegisterXactCallback(jobs_xact_callback, NULL);
		callback_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	idp = palloc(sizeof(int64));
	*idp = id;
	pending_jobs = lappend(pending_jobs, idp);
	MemoryContextSwitchTo(old);
	return id;
}
