/*
 * jobs.h — what the operations need of the background job runner
 * (src/worker/jobs.c): recording a job (an import or an export) in
 * dynindex.jobs and starting its process when the requesting transaction
 * commits.  A leaf, like wakeup.h: the operations (api/) sit below the
 * runner (worker/), which they must not call.
 */
#ifndef DYNINDEX_COMMON_JOBS_H
#define DYNINDEX_COMMON_JOBS_H

#include "postgres.h"

/* Advisory lock class of a running job (pg_try_advisory_lock(class, job_id)). */
#define DYN_JOB_LOCK_CLASS 4475230

/* bgw_function_name of a job's process (src/worker/jobs.c). */
#define DYN_JOB_MAIN "dynindex_job_main"

/* bgw_function_name of an import's second process (src/worker/jobs.c). */
#define DYN_IMPORT_HELPER_MAIN "dynindex_import_helper_main"

/*
 * Record a job of a kind ("import", "export") in dynindex.jobs and return its
 * id; its process is registered when the current transaction commits (not at
 * all if it rolls back).  Needs SPI.  When no background worker slot is free
 * then, the job stays queued and the database's worker starts it later.
 */
extern int64 DynJobSubmit(const char *kind);
/* Does the database have the jobs catalog (not before ALTER EXTENSION UPDATE to 0.3)? */
extern bool DynJobsCatalogPresent(void);
/* Start a job's process now (outside any transaction state concerns); false if no slot was free. */
extern bool DynJobLaunch(Oid dboid, int64 job_id);
/* Start a second process for an import job (it shares the job's tasks); false if no slot was free. */
extern bool DynJobLaunchHelper(Oid dboid, int64 job_id);

#endif
