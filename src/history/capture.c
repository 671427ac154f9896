/*
 * capture.c — the history rows of the writing transaction and commit stamps.
 *
 * A write of a table with PITR hands its superseded state to
 * DynHistoryCapture, which appends it to a tuplestore of the transaction
 * (in memory up to work_mem, then a temporary file).  A subtransaction that
 * aborts drops the rows it appended: they are marked dead.  At pre-commit
 * one stamp is taken and every live row is inserted into its table's
 * history relation with valid_to = stamp (straight into its heap and
 * indexes, no SQL statement); the first row of a key stands (a
 * transaction writing one key twice superseded only the state before it:
 * the second write's old item was never visible to anyone else).
 *
 * Stamps are strictly increasing across the server: last_stamp in shared
 * memory, advanced to max(now, last + 1 us).  Two transactions writing one
 * key are ordered by its row lock (the second takes its stamp after the
 * first committed), and a transaction that saw another's effects began
 * after that one's commit, so a restore to T — the transactions with
 * stamp <= T — is a consistent cut.  Shared memory also holds one slot per
 * PGPROC: the stamp its transaction took and has not yet finished
 * committing (published under the history lock LW_SHARED, cleared by the
 * transaction callback after the commit became visible).  The horizon
 * (DynHistoryHorizon, LW_EXCLUSIVE) is below every such stamp, so every
 * stamp up to it is settled.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/twophase.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "common/errors.h"
#include "history/history.h"

typedef struct HistoryShared
{
	LWLock	   *lock;
	pg_atomic_uint64 last_stamp;	/* the latest stamp given */
	int			nslots;
	pg_atomic_uint64 pending[FLEXIBLE_ARRAY_MEMBER];	/* per PGPROC: stamp being committed; 0: none */
} HistoryShared;

static HistoryShared *shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static bool exit_registered = false;

/* the transaction's rows: (table_num, pk, sk, size, item) */
#define NCOLS 5
static TupleDesc row_desc = NULL;
static Tuplestorestate *rows = NULL;
static int64 nrows = 0;			/* appended, dead ones included */
static int64 nlive = 0;
/* subtransaction marks: rows from `start` on were appended in subxact `subid` or a child */
typedef struct Mark
{
	SubTransactionId subid;
	int64		start;
} Mark;
static Mark *marks = NULL;
static int	nmarks = 0;
static int	marks_size = 0;
/* dead ranges [start, end) of aborted subtransactions, in order */
static int64 *dead = NULL;
static int	ndead = 0;
static int	dead_size = 0;

/* this backend's slot holds a stamp of the current transaction */
static bool slot_held = false;
static TimestampTz pending_stamp = 0;
/* the stamp of this session's last committed transaction (0: it recorded no history) */
static TimestampTz last_commit_stamp = 0;

/* ---------------------------------------------------------------- shared memory */

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
	return add_size(offsetof(HistoryShared, pending), mul_size(slot_count(), sizeof(pg_atomic_uint64)));
}

/* shmem_request_hook: our space and lock. */
static void
history_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(shared_size()));
	RequestNamedLWLockTranche("dynindex_history", 1);
}

/* shmem_startup_hook: create or attach the shared state. */
static void
history_shmem_startup(void)
{
	bool		found;
	int			i;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("dynindex_history", shared_size(), &found);
	if (!found)
	{
		shared->lock = &(GetNamedLWLockTranche("dynindex_history"))->lock;
		pg_atomic_init_u64(&shared->last_stamp, 0);
		shared->nslots = slot_count();
		for (i = 0; i < shared->nslots; i++)
			pg_atomic_init_u64(&shared->pending[i], 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* This backend's slot. */
static pg_atomic_uint64 *
my_slot(void)
{
	Assert(MyProc != NULL && GetNumberFromPGProc(MyProc) < shared->nslots);
	return &shared->pending[GetNumberFromPGProc(MyProc)];
}

/* Clear this backend's slot (its transaction ended: committed and visible, or aborted). */
static void
release_slot(void)
{
	if (!slot_held)
		return;
	pg_memory_barrier();
	pg_atomic_write_u64(my_slot(), 0);
	slot_held = false;
}

/* Process exit: never leave a slot behind (the open transaction never commits). */
static void
history_shmem_exit(int code, Datum arg)
{
	if (shared != NULL && MyProc != NULL)
		release_slot();
}

/* Raise unless shared memory is there. */
static void
check_available(void)
{
	if (shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex point-in-time recovery needs shared_preload_libraries = 'dynindex'")));
	if (!exit_registered)
	{
		before_shmem_exit(history_shmem_exit, (Datum) 0);
		exit_registered = true;
	}
}

/* Advance last_stamp to at least floor + 1 us and at least now; return it. */
static TimestampTz
advance_stamp(TimestampTz floor)
{
	uint64		old = pg_atomic_read_u64(&shared->last_stamp);

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		uint64		next = (uint64) Max(now, Max((TimestampTz) old + 1, floor + 1));

		if (pg_atomic_compare_exchange_u64(&shared->last_stamp, &old, next))
			return (TimestampTz) next;
	}
}

/* The commit stamp of this transaction, published in its slot. */
static TimestampTz
take_commit_stamp(void)
{
	TimestampTz stamp;

	check_available();
	LWLockAcquire(shared->lock, LW_SHARED);
	stamp = advance_stamp(0);
	pg_atomic_write_u64(my_slot(), (uint64) stamp);
	slot_held = true;
	LWLockRelease(shared->lock);
	pending_stamp = stamp;
	return stamp;
}

/* A new stamp, strictly after every stamp given so far. */
TimestampTz
DynHistoryNextStamp(void)
{
	check_available();
	return advance_stamp(0);
}

/* Every stamp <= the result is settled (see the file comment). */
TimestampTz
DynHistoryHorizon(void)
{
	TimestampTz horizon;
	int			i;

	check_available();
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	/* later stamps are larger than now (and than every stamp given) */
	horizon = advance_stamp(GetCurrentTimestamp() - 1);
	for (i = 0; i < shared->nslots; i++)
	{
		uint64		p = pg_atomic_read_u64(&shared->pending[i]);

		if (p != 0 && (TimestampTz) p - 1 < horizon)
			horizon = (TimestampTz) p - 1;
	}
	LWLockRelease(shared->lock);
	return horizon;
}

/* Has the current transaction written items whose history it has not recorded yet? */
bool
DynHistoryPending(void)
{
	return nlive > 0;
}

/* Is the history machinery available? */
bool
DynHistoryAvailable(void)
{
	return shared != NULL;
}

/* ---------------------------------------------------------------- the buffer */

/* Forget the transaction's rows (its memory and files go with the transaction). */
static void
reset_buffer(void)
{
	rows = NULL;
	nrows = nlive = 0;
	marks = NULL;
	nmarks = marks_size = 0;
	dead = NULL;
	ndead = dead_size = 0;
}

/* The row descriptor, built once. */
static TupleDesc
get_row_desc(void)
{
	if (row_desc == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);
		TupleDesc	d = CreateTemplateTupleDesc(NCOLS);

		TupleDescInitEntry(d, 1, "table_num", INT8OID, -1, 0);
		TupleDescInitEntry(d, 2, "pk", BYTEAOID, -1, 0);
		TupleDescInitEntry(d, 3, "sk", BYTEAOID, -1, 0);
		TupleDescInitEntry(d, 4, "size", INT4OID, -1, 0);
		TupleDescInitEntry(d, 5, "item", JSONBOID, -1, 0);
		row_desc = BlessTupleDesc(d);
		MemoryContextSwitchTo(old);
	}
	return row_desc;
}

/* Record the state a write supersedes. */
void
DynHistoryCapture(DynTable *t, const DynKey *key, Jsonb *old_item, int32 old_size)
{
	SubTransactionId subid = GetCurrentSubTransactionId();
	MemoryContext old;
	ResourceOwner owner = CurrentResourceOwner;
	Datum		values[NCOLS];
	bool		nulls[NCOLS] = {false, false, false, false, false};

	check_available();
	old = MemoryContextSwitchTo(TopTransactionContext);
	/* the tuplestore's file must live as long as the transaction, not a subtransaction */
	CurrentResourceOwner = TopTransactionResourceOwner;
	if (rows == NULL)
		rows = tuplestore_begin_heap(false, false, work_mem);
	if (nmarks == 0 || marks[nmarks - 1].subid != subid)
	{
		if (nmarks == marks_size)
		{
			marks_size = Max(8, marks_size * 2);
			marks = marks ? repalloc(marks, sizeof(Mark) * marks_size) : palloc(sizeof(Mark) * marks_size);
		}
		marks[nmarks].subid = subid;
		marks[nmarks].start = nrows;
		nmarks++;
	}
	values[0] = Int64GetDatum(t->num);
	values[1] = PointerGetDatum(key->pk);
	values[2] = PointerGetDatum(key->sk);
	values[3] = Int32GetDatum(old_item ? old_size : 0);
	if (old_item)
		values[4] = JsonbPGetDatum(old_item);
	else
		nulls[4] = true;
	tuplestore_putvalues(rows, get_row_desc(), values, nulls);
	CurrentResourceOwner = owner;
	MemoryContextSwitchTo(old);
	nrows++;
	nlive++;
}

/*
 * A subtransaction aborted: the rows appended since it began (its own and
 * its children's) are dead.  Ranges of its children that aborted before are
 * inside the new one and merge into it; earlier ranges end before it.
 */
static void
drop_subxact_rows(SubTransactionId subid)
{
	int64		start = -1;
	int64		already = 0;

	while (nmarks > 0 && marks[nmarks - 1].subid >= subid)
		start = marks[--nmarks].start;
	if (start < 0 || start >= nrows)
		return;
	while (ndead > 0 && dead[ndead - 2] >= start)
	{
		already += dead[ndead - 1] - dead[ndead - 2];
		ndead -= 2;
	}
	if (ndead + 2 > dead_size)
	{
		MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

		dead_size = Max(16, dead_size * 2);
		dead = dead ? repalloc(dead, sizeof(int64) * dead_size) : palloc(sizeof(int64) * dead_size);
		MemoryContextSwitchTo(old);
	}
	dead[ndead++] = start;
	dead[ndead++] = nrows;
	nlive -= (nrows - start) - already;
}

/*
 * A history relation written by the flush: opened once per transaction; each
 * row goes straight into its heap and its indexes (the primary key (pk, sk,
 * valid_to), checked for uniqueness, and the BRIN on valid_to) as an INSERT's
 * executor would put it there, without an SPI call, a plan or a snapshot per
 * row.  History relations have no triggers, rules or policies (they are
 * internal: only the extension owner may write them).
 */
typedef struct Target
{
	int64		num;
	Relation	rel;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	BulkInsertState bistate;	/* many rows: one per relation (it holds a buffer of it) */
} Target;

/* The open history relation of table num (opened and locked ROW EXCLUSIVE on first use). */
static Target *
get_target(List **targets, int64 num, bool bulk)
{
	static const Oid types[5] = {BYTEAOID, BYTEAOID, TIMESTAMPTZOID, INT4OID, JSONBOID};
	ListCell   *lc;
	Target	   *t;
	char		name[NAMEDATALEN];
	Oid			relid;
	TupleDesc	desc;
	int			i;

	foreach(lc, *targets)
	{
		t = lfirst(lc);
		if (t->num == num)
			return t;
	}
	snprintf(name, sizeof(name), "h%lld", (long long) num);
	relid = RangeVarGetRelid(makeRangeVar(DYN_HISTORY_SCHEMA, name, -1), RowExclusiveLock, true);
	if (!OidIsValid(relid))
		elog(ERROR, "the item history %s.%s is missing", DYN_HISTORY_SCHEMA, name);
	t = palloc0(sizeof(Target));
	t->num = num;
	t->rel = table_open(relid, NoLock);
	desc = RelationGetDescr(t->rel);
	/* (pk, sk, valid_to, size, item), as DynHistoryEnable made it */
	if (t->rel->rd_rel->relkind != RELKIND_RELATION || desc->natts != 5)
		elog(ERROR, "the item history %s.%s is not as dynindex made it", DYN_HISTORY_SCHEMA, name);
	for (i = 0; i < 5; i++)
		if (TupleDescAttr(desc, i)->attisdropped || TupleDescAttr(desc, i)->atttypid != types[i])
			elog(ERROR, "the item history %s.%s is not as dynindex made it", DYN_HISTORY_SCHEMA, name);
	t->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(t->rri, t->rel, 0, NULL, 0);
	ExecOpenIndices(t->rri, false);
	t->slot = table_slot_create(t->rel, NULL);
	t->bistate = bulk ? GetBulkInsertState() : NULL;
	*targets = lappend(*targets, t);
	return t;
}

/* Close the history relations of the flush (their locks stay until the transaction ends). */
static void
close_targets(List *targets)
{
	ListCell   *lc;

	foreach(lc, targets)
	{
		Target	   *t = lfirst(lc);

		if (t->bistate)
			FreeBulkInsertState(t->bistate);
		ExecDropSingleTupleTableSlot(t->slot);
		ExecCloseIndices(t->rri);
		table_close(t->rel, NoLock);
	}
}

/* Is a datum a pointer to TOAST storage (reading it needs a snapshot)? */
static inline bool
is_external(Datum d)
{
	return VARATT_IS_EXTERNAL(DatumGetPointer(d));
}
/* A key written in this flush (dedupe of a transaction writing one key twice). */
typedef struct SeenKey
{
	uint32		hash;			/* the hash table's key */
	List	   *keys;			/* bytea: table number, pk, sk, for the rare collisions */
} SeenKey;

/* The bytes naming (table, pk, sk): the table number, then pk and sk with their lengths. */
static bytea *
seen_key(int64 num, const bytea *pk, const bytea *sk)
{
	int32		pklen = VARSIZE_ANY_EXHDR(pk);
	int32		sklen = VARSIZE_ANY_EXHDR(sk);
	bytea	   *k = palloc(VARHDRSZ + sizeof(int64) + 2 * sizeof(int32) + pklen + sklen);
	char	   *p = VARDATA(k);

	SET_VARSIZE(k, VARHDRSZ + sizeof(int64) + 2 * sizeof(int32) + pklen + sklen);
	memcpy(p, &num, sizeof(int64));
	p += sizeof(int64);
	memcpy(p, &pklen, sizeof(int32));
	p += sizeof(int32);
	memcpy(p, VARDATA_ANY(pk), pklen);
	p += pklen;
	memcpy(p, &sklen, sizeof(int32));
	p += sizeof(int32);
	memcpy(p, VARDATA_ANY(sk), sklen);
	return k;
}

/* Was (table, pk, sk) written already in this flush?  Remembers it. */
static bool
seen_before(HTAB *seen, int64 num, const bytea *pk, const bytea *sk)
{
	bytea	   *k = seen_key(num, pk, sk);
	uint32		h = hash_bytes((const unsigned char *) VARDATA(k), VARSIZE(k) - VARHDRSZ);
	bool		found;
	SeenKey    *e = hash_search(seen, &h, HASH_ENTER, &found);
	ListCell   *lc;

	if (!found)
		e->keys = NIL;
	foreach(lc, e->keys)
	{
		bytea	   *o = lfirst(lc);

		if (VARSIZE(o) == VARSIZE(k) && memcmp(VARDATA(o), VARDATA(k), VARSIZE(k) - VARHDRSZ) == 0)
			return true;
	}
	e->keys = lappend(e->keys, k);
	return false;
}

/*
 * Pre-commit: insert the live rows with this transaction's stamp.  A key
 * written twice by the transaction keeps its first row (the state before
 * the transaction); with one live row (the common case) there is nothing
 * to compare.
 */
static void
flush(void)
{
	TupleTableSlot *slot;
	TimestampTz stamp;
	ResourceOwner owner = CurrentResourceOwner;
	HTAB	   *seen = NULL;
	EState	   *estate;
	List	   *targets = NIL;
	CommandId	cid;
	bool		snapshot = false;
	int64		i;
	int			d = 0;

	if (rows == NULL)
		return;
	if (nlive == 0)
	{
		/* only rows of aborted subtransactions: close the file now (a file open at commit is a leak) */
		tuplestore_end(rows);
		rows = NULL;
		return;
	}
	stamp = take_commit_stamp();
	estate = CreateExecutorState();
	cid = GetCurrentCommandId(true);
	slot = MakeSingleTupleTableSlot(get_row_desc(), &TTSOpsMinimalTuple);
	if (nlive > 1)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(SeenKey);
		ctl.hcxt = CurrentMemoryContext;
		seen = hash_create("dynindex history keys of a transaction", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	/* the tuplestore's file, the relations and the buffers belong to the transaction */
	CurrentResourceOwner = TopTransactionResourceOwner;
	for (i = 0; i < nrows; i++)
	{
		Target	   *t;
		TupleTableSlot *out;
		bool		isnull;
		int64		num;
		Datum		pk,
					sk,
					item;
		bool		itemnull;

		if (!tuplestore_gettupleslot(rows, true, false, slot))
			elog(ERROR, "item history of the transaction is shorter than recorded");
		while (d < ndead && i >= dead[d + 1])
			d += 2;
		if (d < ndead && i >= dead[d])
			continue;			/* of an aborted subtransaction */
		num = DatumGetInt64(slot_getattr(slot, 1, &isnull));
		pk = slot_getattr(slot, 2, &isnull);
		sk = slot_getattr(slot, 3, &isnull);
		item = slot_getattr(slot, 5, &itemnull);
		/* a value still in the storage's TOAST relation is read (and copied): that needs a snapshot */
		if (!snapshot && (is_external(pk) || is_external(sk) || (!itemnull && is_external(item))))
		{
			PushActiveSnapshot(GetTransactionSnapshot());
			snapshot = true;
		}
		if (seen && seen_before(seen, num, DatumGetByteaPP(pk), DatumGetByteaPP(sk)))
			continue;			/* written before in this transaction: its first row stands */
		t = get_target(&targets, num, nlive > 64);
		out = t->slot;
		ExecClearTuple(out);
		out->tts_values[0] = pk;
		out->tts_isnull[0] = false;
		out->tts_values[1] = sk;
		out->tts_isnull[1] = false;
		out->tts_values[2] = TimestampTzGetDatum(stamp);
		out->tts_isnull[2] = false;
		out->tts_values[3] = slot_getattr(slot, 4, &isnull);
		out->tts_isnull[3] = false;
		out->tts_values[4] = item;
		out->tts_isnull[4] = itemnull;
		ExecStoreVirtualTuple(out);
		table_tuple_insert(t->rel, out, cid, 0, t->bistate);
		(void) DynExecInsertIndexTuples(t->rri, out, estate, false, false, NULL, NIL, false);
		ResetPerTupleExprContext(estate);
	}
	close_targets(targets);
	CurrentResourceOwner = owner;
	if (snapshot)
		PopActiveSnapshot();
	FreeExecutorState(estate);
	ExecDropSingleTupleTableSlot(slot);
	tuplestore_end(rows);
	rows = NULL;
	/* as after a statement: what later pre-commit work reads sees the rows */
	CommandCounterIncrement();
}

/* Transaction callback: insert at pre-commit, release the slot at the end; refuse PREPARE. */
static void
history_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			flush();
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (nlive > 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that wrote items of a table with point-in-time recovery")));
			break;
		case XACT_EVENT_COMMIT:
			/* a transaction that recorded no history has no stamp */
			last_commit_stamp = slot_held ? pending_stamp : 0;
			release_slot();
			reset_buffer();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PARALLEL_ABORT:
			release_slot();
			reset_buffer();
			break;
		default:
			break;
	}
}

/* Subtransaction callback: an aborted subtransaction's rows are dropped. */
static void
history_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && nmarks > 0)
		drop_subxact_rows(mySubid);
}

/* Shared memory hooks and the transaction callbacks (from _PG_init). */
void
DynHistoryInit(void)
{
	RegisterXactCallback(history_xact_callback, NULL);
	RegisterSubXactCallback(history_subxact_callback, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = history_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = history_shmem_startup;
}

PG_FUNCTION_INFO_V1(dynindex_last_commit_stamp);

/* dynindex.last_commit_stamp() RETURNS timestamptz: the stamp of this session's previous transaction. */
Datum
dynindex_last_commit_stamp(PG_FUNCTION_ARGS)
{
	if (last_commit_stamp == 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(last_commit_stamp);
}
