/*
 * wakeup.c — the workers' shared memory and the wake-up at commit
 * (common/wakeup.h): writers register their database and set its worker's
 * latch; the launcher and the workers (src/worker/worker.c) keep the slots;
 * a worker announces each applied batch to the readers waiting for it.
 */
#include "postgres.h"

#include "storage/proc.h"
#include "storage/shmem.h"

#include "common/wakeup.h"

DynWorkerShmemData *DynWorkerShmem = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Ask for our shared memory. */
static void
dyn_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(DynWorkerShmemData)));
	RequestNamedLWLockTranche("dynindex", 1);
}

/* Create or attach our shared memory. */
static void
dyn_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	DynWorkerShmem = ShmemInitStruct("dynindex", sizeof(DynWorkerShmemData), &found);
	if (!found)
	{
		memset(DynWorkerShmem, 0, sizeof(DynWorkerShmemData));
		DynWorkerShmem->lock = &(GetNamedLWLockTranche("dynindex"))->lock;
		for (int i = 0; i < MAX_DB_SLOTS; i++)
			ConditionVariableInit(&DynWorkerShmem->applied[i]);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Install the shared memory hooks (while preloading). */
void
DynWorkerShmemInit(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = dyn_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = dyn_shmem_startup;
}

/* Find or claim the slot of a database; caller holds the lock exclusively. */
WorkerSlot *
DynWorkerSlotFor(Oid dboid, bool create)
{
	int			i;
	WorkerSlot *free_slot = NULL;

	for (i = 0; i < MAX_DB_SLOTS; i++)
	{
		if (DynWorkerShmem->slots[i].dboid == dboid)
			return &DynWorkerShmem->slots[i];
		if (free_slot == NULL && DynWorkerShmem->slots[i].dboid == InvalidOid)
			free_slot = &DynWorkerShmem->slots[i];
	}
	if (!create || free_slot == NULL)
		return NULL;
	memset(free_slot, 0, sizeof(WorkerSlot));
	free_slot->dboid = dboid;
	return free_slot;
}

/* Wake the GSI worker of a database, asking the launcher for one if needed. */
void
DynWorkerWake(Oid dboid)
{
	WorkerSlot *slot;
	Latch	   *latch = NULL;
	Latch	   *launcher = NULL;

	if (DynWorkerShmem == NULL)
		return;					/* not preloaded: workers are not available */
	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	slot = DynWorkerSlotFor(dboid, true);
	if (slot)
	{
		slot->absent = false;
		if (slot->pid != 0)
			latch = slot->latch;
		else
			launcher = DynWorkerShmem->launcher_latch;
	}
	LWLockRelease(DynWorkerShmem->lock);
	if (latch)
		SetLatch(latch);
	if (launcher)
		SetLatch(launcher);
}

/* Flag the database's queued jobs, then wake its worker (DynJobsRelaunch looks for them). */
void
DynWorkerWakeForJobs(Oid dboid)
{
	WorkerSlot *slot;

	if (DynWorkerShmem == NULL)
		return;
	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	slot = DynWorkerSlotFor(dboid, true);
	if (slot)
		slot->jobs_waiting = true;
	LWLockRelease(DynWorkerShmem->lock);
	DynWorkerWake(dboid);
}

bool
DynWorkerJobsWaiting(Oid dboid)
{
	WorkerSlot *slot;
	bool		waiting = false;

	if (DynWorkerShmem == NULL)
		return false;
	LWLockAcquire(DynWorkerShmem->lock, LW_EXCLUSIVE);
	slot = DynWorkerSlotFor(dboid, false);
	if (slot)
	{
		waiting = slot->jobs_waiting;
		slot->jobs_waiting = false;
	}
	LWLockRelease(DynWorkerShmem->lock);
	return waiting;
}

/* The condition variable a database's worker broadcasts after applying changes (NULL: not preloaded). */
ConditionVariable *
DynWorkerAppliedCV(Oid dboid)
{
	if (DynWorkerShmem == NULL)
		return NULL;
	return &DynWorkerShmem->applied[dboid % MAX_DB_SLOTS];
}

/* Tell the readers waiting in a database that a GSI batch has committed. */
void
DynWorkerAnnounceApplied(Oid dboid)
{
	ConditionVariable *cv = DynWorkerAppliedCV(dboid);

	if (cv)
		ConditionVariableBroadcast(cv);
}

/* Register a dynamic background worker connected to a database (wakeup.h). */
bool
DynStartDatabaseWorker(const char *function, const char *type, const char *name,
					   Datum arg, const void *extra, Size extra_len, pid_t notify_pid)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(bgw.bgw_library_name, "dynindex", BGW_MAXLEN);
	strlcpy(bgw.bgw_function_name, function, BGW_MAXLEN);
	strlcpy(bgw.bgw_name, name, BGW_MAXLEN);
	strlcpy(bgw.bgw_type, type, BGW_MAXLEN);
	bgw.bgw_main_arg = arg;
	if (extra)
		memcpy(bgw.bgw_extra, extra, Min(extra_len, (Size) BGW_EXTRALEN));
	bgw.bgw_notify_pid = notify_pid;
	return RegisterDynamicBackgroundWorker(&bgw, &handle);
}
