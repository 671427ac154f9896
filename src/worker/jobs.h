/*
 * jobs.h — the background job runner: one dynamic background worker per job
 * (an import or an export), started when the requesting transaction commits
 * (common/jobs.h: DynJobSubmit) or, after a crash, a restart or a moment
 * without a free worker slot, by the database's worker (DynJobsRelaunch).
 */
#ifndef DYNINDEX_WORKER_JOBS_H
#define DYNINDEX_WORKER_JOBS_H

#include "fmgr.h"

/* A job's process (bgw_main_arg: the job id; bgw_extra: the database oid). */
extern PGDLLEXPORT void dynindex_job_main(Datum arg);
extern PGDLLEXPORT void dynindex_import_helper_main(Datum arg);

/*
 * Start the processes of the jobs of the current database that are queued or
 * were left running by a process that is gone.  Runs its own transaction (the
 * database's worker calls it between rounds, at most once a second).  True
 * while any job is unfinished (call again soon).
 */
extern bool DynJobsRelaunch(void);

#endif
