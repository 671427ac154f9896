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
 *
 * PendingReplicationCount: the changes committed here that a region has not
 * applied yet.  The capture (capture.c) counts the changes of each committed
 * transaction and records (the end of its commit record, the database's
 * cumulative count) in a ring per database, kept sorted by position.  A
 * region's apply worker confirms the end of the last commit it applied (the
 * 'C' line carries it: decode.c), and its slot's confirmed_flush_lsn is
 * that position, so the changes a region has not applied are the count now
 * minus the count at the last entry at or before that position — exact,
 * with no table write and one spinlock per committed transaction.  Limits
 * (the count is then a lower bound, "at least"): the ring keeps the last
 * DYN_COUNT_RING transactions (a region further behind is counted from the
 * oldest kept), and a restart forgets what was committed before it.
 */
#include "postgres.h"

#include "access/xlog.h"
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

/* databases whose changes are counted; more are not */
#define DYN_COUNT_DBS 4
/* committed transactions remembered per database */
#define DYN_COUNT_RING 16384

/* A committed transaction: the end of its commit record, the count through it. */
typedef struct CountEntry
{
	XLogRecPtr	lsn;
	uint64		cum;
} CountEntry;

/* The changes a database committed, for PendingReplicationCount. */
typedef struct CountRing
{
	slock_t		mutex;			/* protects the rest */
	Oid			dboid;			/* InvalidOid: free (set under LagShared.mutex) */
	XLogRecPtr	since;			/* every commit after it is counted */
	XLogRecPtr	dropped_lsn;	/* the newest entry dropped (ring full) */
	uint64		total;			/* changes committed since the start */
	uint64		base;			/* the count through dropped_lsn */
	int			head;			/* the oldest entry */
	int			n;				/* entries kept */
	CountEntry	e[DYN_COUNT_RING];
} CountRing;

typedef struct LagShared
{
	slock_t		mutex;			/* protects slots, and rings' dboid */
	LagSlot		slots[DYN_LAG_SLOTS];
	CountRing	rings[DYN_COUNT_DBS];
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
		for (int i = 0; i < DYN_COUNT_DBS; i++)
			SpinLockInit(&lag_shared->rings[i].mutex);
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

/* This database's ring, taking a free one when create (NULL: none). */
static CountRing *
find_ring(bool create)
{
	CountRing  *r = NULL;

	if (lag_shared == NULL || !OidIsValid(MyDatabaseId))
		return NULL;
	SpinLockAcquire(&lag_shared->mutex);
	for (int i = 0; i < DYN_COUNT_DBS && r == NULL; i++)
		if (lag_shared->rings[i].dboid == MyDatabaseId)
			r = &lag_shared->rings[i];
	for (int i = 0; i < DYN_COUNT_DBS && r == NULL && create; i++)
		if (lag_shared->rings[i].dboid == InvalidOid)
		{
			r = &lag_shared->rings[i];
			r->dboid = MyDatabaseId;
		}
	SpinLockRelease(&lag_shared->mutex);
	return r;
}

/*
 * Counting starts in this database (before its first change is logged since
 * the server started, or before a slot is made): every commit after the WAL
 * position now is counted; a slot confirmed before it may be behind changes
 * committed before a restart, so its count is a lower bound.
 */
void
DynReplicationCountStart(void)
{
	CountRing  *r;

	if (RecoveryInProgress() || (r = find_ring(true)) == NULL)
		return;
	SpinLockAcquire(&r->mutex);
	if (r->since == InvalidXLogRecPtr)
		r->since = GetXLogInsertRecPtr();
	SpinLockRelease(&r->mutex);
}

/* The entry i places after the oldest. */
#define RING_AT(r, i) (&(r)->e[((r)->head + (i)) % DYN_COUNT_RING])

/*
 * A transaction of this database that logged n changes committed, its commit
 * record ending at lsn.  Called after the commit (no error may be raised):
 * the entries stay sorted by position, as the slots send transactions.
 */
void
DynReplicationCountCommit(uint64 n, XLogRecPtr lsn)
{
	CountRing  *r = find_ring(true);
	int			i;

	if (r == NULL || n == 0)
		return;
	SpinLockAcquire(&r->mutex);
	if (r->n == DYN_COUNT_RING)
	{
		r->base = r->e[r->head].cum;
		r->dropped_lsn = r->e[r->head].lsn;
		r->head = (r->head + 1) % DYN_COUNT_RING;
		r->n--;
	}
	r->total += n;
	i = r->n++;
	RING_AT(r, i)->lsn = lsn;
	RING_AT(r, i)->cum = r->total;
	/* a commit that ended before the last recorded one (rare): move it back */
	while (i > 0 && RING_AT(r, i - 1)->lsn > lsn)
	{
		CountEntry *p = RING_AT(r, i - 1);
		CountEntry *e = RING_AT(r, i);
		uint64		before = i > 1 ? RING_AT(r, i - 2)->cum : r->base;
		uint64		np = p->cum - before;
		XLogRecPtr	plsn = p->lsn;

		p->lsn = lsn;
		p->cum = before + n;
		e->lsn = plsn;
		e->cum = p->cum + np;
		i--;
	}
	SpinLockRelease(&r->mutex);
}

/*
 * The changes committed in this database that a slot confirmed at confirmed
 * has not: false when they are not counted (not preloaded, a standby);
 * *exact false when the count is a lower bound (also when this database
 * has no ring: nothing counted since the start, or every ring taken).
 */
bool
DynReplicationPendingCount(XLogRecPtr confirmed, int64 *count, bool *exact)
{
	CountRing  *r;
	int			lo;
	int			hi;
	uint64		done;

	if (RecoveryInProgress() || lag_shared == NULL)
		return false;
	if ((r = find_ring(false)) == NULL)
	{
		/* nothing logged here since the start: none counted, but some may be from before */
		*count = 0;
		*exact = false;
		return true;
	}
	SpinLockAcquire(&r->mutex);
	/* the first entry after confirmed */
	lo = 0;
	hi = r->n;
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (RING_AT(r, mid)->lsn <= confirmed)
			lo = mid + 1;
		else
			hi = mid;
	}
	done = lo > 0 ? RING_AT(r, lo - 1)->cum : r->base;
	*count = (int64) (r->total - done);
	*exact = confirmed >= r->since && (lo > 0 || r->dropped_lsn == InvalidXLogRecPtr || confirmed >= r->dropped_lsn);
	SpinLockRelease(&r->mutex);
	return true;
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
