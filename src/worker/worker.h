/*
 * worker.h — background workers: a launcher started from
 * shared_preload_libraries and one GSI worker per database that uses
 * dynindex.  Shared memory holds one slot per database so that writers can
 * wake their database's worker at commit.
 */
#ifndef DYNINDEX_WORKER_H
#define DYNINDEX_WORKER_H

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"

#include "common/pg_compat.h"

/* Register GUCs, shared memory hooks and the launcher (from _PG_init). */
extern void DynWorkerInit(void);
/* Wake the GSI worker of a database (starting one if needed). */
extern void DynWorkerWake(Oid dboid);

/*
 * Exit at once when the postmaster has died.  Every loop of a background
 * worker calls this (WaitLatch with WL_EXIT_ON_PM_DEATH covers only the
 * waits): an orphaned worker keeps its shared memory attached, and a
 * restarted postmaster refuses to start while it runs.  Cheap (a flag set
 * by a signal on Linux); a no-op outside background workers.
 */
static inline void
DynWorkerExitIfOrphaned(void)
{
	if (AmBackgroundWorkerProcess() && !PostmasterIsAlive())
		proc_exit(1);
}

/* bgworker entry points */
extern PGDLLEXPORT void dynindex_launcher_main(Datum arg);
extern PGDLLEXPORT void dynindex_worker_main(Datum arg);

/* GUCs */
extern int	dynindex_worker_naptime_ms;
extern int	dynindex_gsi_batch_size;
extern int	dynindex_backfill_chunk_size;
extern int	dynindex_ttl_interval_s;

/* ---- src/indexes/gsi_apply.c (run by the worker) ---- */
/* Apply one batch of queued changes; returns how many were applied, -1 if their writers
 * have not finished committing on every Citus worker (retry later). */
extern int	DynGsiApplyBatch(int limit);
/* Move the oldest queued change to the end of the queue (after it failed alone). */
extern int64 DynGsiRequeueOldest(int64 *old_id);
/* Do one step of any pending GSI backfill; returns true if work remains. */
extern bool DynGsiBackfillStep(void);

#endif
