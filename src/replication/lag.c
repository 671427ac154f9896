/*
 * lag.c — replication lag per source region, as DynamoDB's
 * ReplicationLatency metric: what the apply workers (worker/apply.c) record
 * at each commit of a region's transaction, in a small fixed array of shared
 * memory keyed by (database, region), read by dynindex.replication_status().
 *
 * The latency of a change is the time from its commit in its region (the
 * commit time decode.c sends) to the commit of its apply here; the two
 * servers' clocks are compared, so a skew between them is part of it (a
 * negative difference counts as 0).  The counters live as long as the
 * server: a restart starts them again.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "common/pg_compat.h"
#include "replication/replication.h"

/* (database, region) pairs kept; more are not counted */
#define DYN_LAG_SLOTS 64

typedef struct LagSlot
{
	Oid			dboid;			/* InvalidOid: free */
	char		region[BGW_EXTRALEN];
	DynReplicationLag lag;
} LagSlot;

typedef struct LagShared
{
	slock_t		mutex;			/* protects slots */
	LagSlot		slots[DYN_LAG_SLOTS];
} LagShared;

static LagShared *lag_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Reserve the shared memory. */
static void
lag_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(LagShared)));
}

/* Create or attach to the slots. */
static void
lag_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lag_shared = ShmemInitStruct("dynindex_replication_lag", sizeof(LagShared), &found);
	if (!found)
	{
		memset(lag_shared, 0, sizeof(LagShared));
		SpinLockInit(&lag_shared->mutex);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* The slot of (dboid, region), taking a free one when create (NULL: none).  Spinlock held. */
static LagSlot *
find_slot(Oid dboid, const char *region, bool create)
{
	LagSlot    *free_slot = NULL;

	for (int i = 0; i < DYN_LAG_SLOTS; i++)
	{
		LagSlot    *s = &lag_shared->slots[i];

		if (s->dboid == dboid && strncmp(s->region, region, BGW_EXTRALEN) == 0)
			return s;
		if (s->dboid == InvalidOid && free_slot == NULL)
			free_slot = s;
	}
	if (create && free_slot)
	{
		free_slot->dboid = dboid;
		strlcpy(free_slot->region, region, BGW_EXTRALEN);
	}
	return create ? free_slot : NULL;
}

/* The apply worker of region committed n changes committed there at commit_time. */
void
DynReplicationLagRecord(const char *region, int64 n, TimestampTz commit_time, TimestampTz now)
{
	int64		latency_us = Max(now - commit_time, 0);
	LagSlot    *s;

	if (lag_shared == NULL || n <= 0)
		return;
	SpinLockAcquire(&lag_shared->mutex);
	s = find_slot(MyDatabaseId, region, true);
	if (s)
	{
		s->lag.last_latency_us = latency_us;
		s->lag.sum_latency_us += latency_us * n;
		s->lag.applied_changes += n;
		s->lag.last_applied_at = now;
	}
	SpinLockRelease(&lag_shared->mutex);
}

/* The lag of region's changes applied to this database (false: none applied since the start). */
bool
DynReplicationLagGet(const char *region, DynReplicationLag *out)
{
	LagSlot    *s;

	if (lag_shared == NULL)
		return false;
	SpinLockAcquire(&lag_shared->mutex);
	s = find_slot(MyDatabaseId, region, false);
	if (s)
		*out = s->lag;
	SpinLockRelease(&lag_shared->mutex);
	return s != NULL && out->applied_changes > 0;
}

/* Shared memory (preloaded only: else nothing is recorded). */
void
DynReplicationLagInit(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lag_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lag_shmem_startup;
}
