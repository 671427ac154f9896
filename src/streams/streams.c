/*
 * streams.c — sequence numbers of stream records and the read horizon.
 *
 * Sequence numbers come from the sequence dynindex.stream_seq (one per
 * database).  Shared memory holds one slot per PGPROC: the lowest seq the
 * backend's open transaction took (0: none).  A writer takes its seq and
 * publishes it in its slot inside one LW_SHARED section of the streams lock;
 * the slot is cleared by a transaction callback once the transaction has
 * committed or aborted (after it became visible).  The reader takes the lock
 * LW_EXCLUSIVE, draws the next seq itself and returns the lowest of it and
 * the slots of its database: everything below is settled.  docs/streams.md
 * ("Guarantees") has the argument.
 */
#include "postgres.h"

#include "access/twophase.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/sequence.h"
#include "common/pg_compat.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "common/errors.h"
#include "streams/streams.h"

int			dynindex_stream_shard_count = 4;

typedef struct StreamSlot
{
	pg_atomic_uint64 min_seq;	/* lowest seq of the open transaction; 0: none */
	Oid			dboid;			/* its database */
} StreamSlot;

typedef struct StreamShared
{
	LWLock	   *lock;
	int			nslots;
	StreamSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} StreamShared;

static StreamShared *shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
/* does this backend's slot hold a seq of the current transaction? */
static bool slot_held = false;
static bool exit_registered = false;

/* Slots: one per PGPROC (backends, auxiliary processes, prepared transactions). */
static int
slot_count(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

/* Size of the shared state. */
static Size
shared_size(void)
{
	return add_size(offsetof(StreamShared, slots), mul_size(slot_count(), sizeof(StreamSlot)));
}

/* shmem_request_hook: our space and lock. */
static void
streams_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(shared_size()));
	RequestNamedLWLockTranche("dynindex_streams", 1);
}

/* shmem_startup_hook: create or attach the shared state. */
static void
streams_shmem_startup(void)
{
	bool		found;
	int			i;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("dynindex_streams", shared_size(), &found);
	if (!found)
	{
		shared->lock = &(GetNamedLWLockTranche("dynindex_streams"))->lock;
		shared->nslots = slot_count();
		for (i = 0; i < shared->nslots; i++)
		{
			pg_atomic_init_u64(&shared->slots[i].min_seq, 0);
			shared->slots[i].dboid = InvalidOid;
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* This backend's slot. */
static StreamSlot *
my_slot(void)
{
	Assert(MyProc != NULL && GetNumberFromPGProc(MyProc) < shared->nslots);
	return &shared->slots[GetNumberFromPGProc(MyProc)];
}

/* Clear this backend's slot (its transaction ended: committed and visible, or aborted). */
static void
release_slot(void)
{
	if (!slot_held)
		return;
	/* the end of the transaction (ProcArrayEndTransaction) happens before */
	pg_memory_barrier();
	pg_atomic_write_u64(&my_slot()->min_seq, 0);
	slot_held = false;
}

/* Transaction callback: release the slot at the end; refuse PREPARE TRANSACTION. */
static void
streams_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (slot_held)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that wrote dynindex stream records")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			release_slot();
			break;
		default:
			break;
	}
}

/*
 * Process exit: never leave a slot behind.  (An exiting backend's open
 * transaction never commits, so its records can be declared settled.)
 */
static void
streams_shmem_exit(int code, Datum arg)
{
	if (shared != NULL && MyProc != NULL)
		release_slot();
}

/* Register GUCs, shared memory hooks and the transaction callback. */
void
DynStreamsInit(void)
{
	DefineCustomIntVariable("dynindex.stream_shard_count",
							"Shards (partition key buckets) of a stream when it is enabled.",
							NULL, &dynindex_stream_shard_count, 4, 1, 1024,
							PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterXactCallback(streams_xact_callback, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = streams_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = streams_shmem_startup;
}

/* Is the stream machinery available? */
bool
DynStreamsAvailable(void)
{
	return shared != NULL;
}

/*
 * The sequence dynindex.stream_seq, locked (RowExclusiveLock, as nextval
 * would) before the caller takes the streams LWLock: never wait for a
 * heavyweight lock while holding it.
 */
static Oid
locked_sequence(void)
{
	Oid			nsp = get_namespace_oid("dynindex", false);
	Oid			seq = get_relname_relid("stream_seq", nsp);

	if (!OidIsValid(seq))
		elog(ERROR, "sequence dynindex.stream_seq does not exist (ALTER EXTENSION dynindex UPDATE)");
	LockRelationOid(seq, RowExclusiveLock);
	return seq;
}

/* Raise unless shared memory is there. */
static void
check_available(void)
{
	if (shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex streams need shared_preload_libraries = 'dynindex'")));
	if (!exit_registered)
	{
		before_shmem_exit(streams_shmem_exit, (Datum) 0);
		exit_registered = true;
	}
}

/* Take the next sequence number for a record of this transaction, publishing it. */
int64
DynStreamNextSeq(void)
{
	Oid			seq;
	int64		v;

	check_available();
	seq = locked_sequence();
	LWLockAcquire(shared->lock, LW_SHARED);
	v = nextval_internal(seq, false);
	if (!slot_held)
	{
		StreamSlot *slot = my_slot();

		slot->dboid = MyDatabaseId;
		pg_atomic_write_u64(&slot->min_seq, (uint64) v);
		slot_held = true;
	}
	LWLockRelease(shared->lock);
	return v;
}

/* Lowest seq not yet settled: see streams.h. */
int64
DynStreamReadHorizon(void)
{
	Oid			seq;
	int64		horizon;
	int			i;

	check_available();
	seq = locked_sequence();
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	horizon = nextval_internal(seq, false);
	for (i = 0; i < shared->nslots; i++)
	{
		uint64		m = pg_atomic_read_u64(&shared->slots[i].min_seq);

		if (m != 0 && shared->slots[i].dboid == MyDatabaseId && (int64) m < horizon)
			horizon = (int64) m;
	}
	LWLockRelease(shared->lock);
	return horizon;
}

/* The bucket of an encoded partition key. */
int
DynStreamBucket(const bytea *pk, int shard_count)
{
	uint32		h = hash_bytes((const unsigned char *) VARDATA_ANY(pk), VARSIZE_ANY_EXHDR(pk));

	return (int) (h % (uint32) Max(shard_count, 1));
}

/* A sequence number as a 21-digit decimal string. */
char *
DynStreamFormatSeq(int64 seq)
{
	return psprintf("%021lld", (long long) seq);
}

/* A shard id for a new shard. */
char *
DynStreamShardId(int64 stream_id, int bucket, int64 start_seq)
{
	char		buf[64];
	uint32		h;

	snprintf(buf, sizeof(buf), "%lld/%d", (long long) stream_id, bucket);
	h = hash_bytes((const unsigned char *) buf, strlen(buf));
	return psprintf("shardId-%020lld-%08x", (long long) start_seq, h);
}

PG_FUNCTION_INFO_V1(dynindex_stream_read_horizon);

/* dynindex.stream_read_horizon() RETURNS bigint: see DynStreamReadHorizon. */
Datum
dynindex_stream_read_horizon(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(DynStreamReadHorizon());
}
