/*
 * wakeup.h — what the layers need of the background workers: the shared
 * memory where writers and their database's worker meet (one slot per
 * database), the wake-up at commit (DynWorkerWake) and the orphan check of
 * long steps (DynWorkerExitIfOrphaned), and the announcement of each
 * applied GSI batch to the readers that wait for it (read-your-writes).
 *
 * The workers (src/worker/) are a driver above the layers they run, as api/
 * is; the write path, the indexes and the streams call no worker code, only
 * this leaf below them all (docs/layers.md).
 */
#ifndef DYNINDEX_WAKEUP_H
#define DYNINDEX_WAKEUP_H

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/pmsignal.h"

#include "common/pg_compat.h"

#define MAX_DB_SLOTS 64

/*
 * Register a dynamic background worker of dynindex.so that connects to a
 * database: function is its entry point, type its bgw_type, name its
 * bgw_name, arg its main argument, extra (extra_len bytes, or NULL) its
 * bgw_extra, notify_pid who is told of its start and exit (0: nobody).
 * Never restarted by the postmaster.  false when no slot is free
 * (max_worker_processes).
 */
extern bool DynStartDatabaseWorker(const char *function, const char *type, const char *name,
								   Datum arg, const void *extra, Size extra_len, pid_t notify_pid);
/* A job of the database found no free process slot: wake its worker to start it later. */
extern void DynWorkerWakeForJobs(Oid dboid);
/* Did a job find no free slot since the last call (the flag cleared)? */
extern bool DynWorkerJobsWaiting(Oid dboid);

/* The worker of one database. */
typedef struct WorkerSlot
{
	Oid			dboid;			/* InvalidOid: free */
	bool		started;		/* the launcher registered a worker */
	bool		absent;			/* the database has no dynindex */
	bool		blocked;		/* a DROP/CREATE ... TEMPLATE/RENAME of the database runs */
	pid_t		pid;			/* the running worker, or 0 */
	Latch	   *latch;			/* the running worker's latch */
	bool		jobs_waiting;	/* a job found no process slot free: look for them */
} WorkerSlot;

/*
 * The shared memory of the workers: the launcher's latch, the slots, and
 * one condition variable per database (by OID modulo MAX_DB_SLOTS: two
 * databases may share one, a spurious wake-up costs a reader one check)
 * that a worker broadcasts after each committed batch.  Not in the slots:
 * a slot is reused for another database while readers may still sleep on
 * the variable, which is initialised once and never moves.
 */
typedef struct DynWorkerShmemData
{
	LWLock	   *lock;
	Latch	   *launcher_latch;
	WorkerSlot	slots[MAX_DB_SLOTS];
	ConditionVariable applied[MAX_DB_SLOTS];
} DynWorkerShmemData;

/* NULL unless dynindex is in shared_preload_libraries */
extern DynWorkerShmemData *DynWorkerShmem;

/* Ask for the shared memory (from _PG_init, while preloading). */
extern void DynWorkerShmemInit(void);
/* Find or claim the slot of a database; caller holds DynWorkerShmem->lock exclusively. */
extern WorkerSlot *DynWorkerSlotFor(Oid dboid, bool create);
/* Wake the GSI worker of a database (the launcher starts one if needed). */
extern void DynWorkerWake(Oid dboid);
/* The condition variable a database's worker broadcasts after applying changes (NULL: not preloaded). */
extern ConditionVariable *DynWorkerAppliedCV(Oid dboid);
/* Tell the readers waiting in a database that a GSI batch has committed. */
extern void DynWorkerAnnounceApplied(Oid dboid);

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

#endif
