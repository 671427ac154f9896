/*
 * gsi_apply.c — the worker's side of GSI maintenance.
 *
 * A batch claims queued change records (FOR UPDATE SKIP LOCKED), deletes
 * them, re-reads each changed item's committed state and recomputes its
 * entry in every GSI of the table, all in one transaction: a crash at any
 * point either loses the whole batch's effects and keeps its records, or
 * commits both.  Re-reading committed state makes applying idempotent, and
 * since one worker per database applies batches one after another, the last
 * record of a key is applied after its last commit.
 *
 * Backfill (UpdateTable Create on a table with items) walks the base table
 * in key order in chunks, one transaction each, keeping its position in the
 * catalog so that a restart resumes where it stopped.  Writes during the
 * backfill are queued and applied as usual.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "catalog/dyn_catalog.h"
#include "common/wakeup.h"
#include "indexes/indexes.h"
#include "metrics/metrics.h"
#include "storage/storage.h"

enum
{
	GSI_PLAN_CURRENT,			/* the entry of a base key */
	GSI_PLAN_DELETE,
	GSI_PLAN_UPSERT
};

/* The index's prepared plan, preparing it on first use. */
static SPIPlanPtr
gsi_plan(DynIndex *idx, int which)
{
	static Oid	types[6] = {BYTEAOID, BYTEAOID, BYTEAOID, BYTEAOID, INT4OID, JSONBOID};
	const char *sql;
	SPIPlanPtr	plan;
	int			nargs = 2;
	int			slot = 4 + which;	/* plans 0-3 are the LSI/query code's */

	if (idx->plans[slot])
		return idx->plans[slot];
	switch (which)
	{
		case GSI_PLAN_CURRENT:
			sql = psprintf("SELECT ipk, isk, item FROM %s WHERE %s", idx->storage, DynIndexBaseKeyEquals(idx));
			break;
		case GSI_PLAN_DELETE:
			sql = psprintf("DELETE FROM %s WHERE %s", idx->storage, DynIndexBaseKeyEquals(idx));
			break;
		default:
			sql = psprintf("INSERT INTO %s (ipk, isk, pk, sk, size, item) VALUES ($3, $4, $1, $2, $5, $6) "
						   "ON CONFLICT (%s) DO UPDATE SET size = EXCLUDED.size, item = EXCLUDED.item",
						   idx->storage, DynIndexConflictTarget(idx));
			nargs = 6;
			break;
	}
	plan = SPI_prepare(sql, nargs, types);
	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "could not prepare \"%s\"", sql);
	idx->plans[slot] = plan;
	return plan;
}

/*
 * Make one GSI's entry for a base key match the item (NULL: absent).
 * Returns the number of index writes made (0, 1 or 2).
 */
static int
sync_entry(DynTable *t, DynIndex *idx, bytea *pk, bytea *sk, const DynValue *item)
{
	Datum		args[6];
	bytea	   *ipk = NULL;
	bytea	   *isk = NULL;
	bool		in_index = item && DynIndexEntryKey(t, idx, item, &ipk, &isk);
	DynValue   *entry = in_index ? DynIndexProject(t, idx, item) : NULL;
	Jsonb	   *entry_jb = entry ? DynItemToJsonb(entry) : NULL;
	int			writes = 0;

	args[0] = PointerGetDatum(pk);
	args[1] = PointerGetDatum(sk);
	if (SPI_execute_plan(gsi_plan(idx, GSI_PLAN_CURRENT), args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read a GSI entry");
	if (SPI_processed == 1 && in_index)
	{
		bool		isnull;
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bytea	   *cipk = DatumGetByteaPP(SPI_getbinval(tup, desc, 1, &isnull));
		bytea	   *cisk = DatumGetByteaPP(SPI_getbinval(tup, desc, 2, &isnull));
		Jsonb	   *citem = DatumGetJsonbP(SPI_getbinval(tup, desc, 3, &isnull));

		if (DynByteaEquals(cipk, ipk) && DynByteaEquals(cisk, isk) &&
			compareJsonbContainers(&citem->root, &entry_jb->root) == 0)
			return 0;			/* already up to date */
	}
	if (SPI_processed > 0)
	{
		if (SPI_execute_plan(gsi_plan(idx, GSI_PLAN_DELETE), args, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not delete a GSI entry");
		writes++;
	}
	if (in_index)
	{
		bool		too_big = false;

		args[2] = PointerGetDatum(ipk);
		args[3] = PointerGetDatum(isk);
		args[4] = Int32GetDatum((int32) DynItemSize(entry));
		args[5] = JsonbPGetDatum(entry_jb);

		if (DynStorageExecKeyed(gsi_plan(idx, GSI_PLAN_UPSERT), args, 4, &too_big) != SPI_OK_INSERT && !too_big)
			elog(ERROR, "could not write a GSI entry");
		/* keys too large for a btree entry: the item is left out of the index, as one with an invalid key */
		if (too_big)
			ereport(WARNING,
					(errmsg("dynindex: an item of table %s is left out of global secondary index %s: "
							"its index and table keys take %d bytes (dynindex stores keys of up to about 2700 bytes)",
							t->name, idx->name,
							(int) (VARSIZE_ANY(DatumGetPointer(args[0])) + VARSIZE_ANY(DatumGetPointer(args[1])) +
								   VARSIZE_ANY(DatumGetPointer(args[2])) + VARSIZE_ANY(DatumGetPointer(args[3]))))));
		else
			writes++;
	}
	return writes;
}

/* A claimed change record. */
typedef struct Change
{
	int64		table_num;
	bytea	   *pk;
	bytea	   *sk;
	TransactionId writer;		/* the writing (top-level) transaction */
	TimestampTz enqueued_at;	/* metrics: replication latency */
} Change;

/*
 * Wait until the transactions that queued the changes have finished
 * committing everywhere; returns how many distinct writers it waited for,
 * their xids in xids[] (n entries of room).  A queued change becomes
 * visible when its transaction commits locally, but on a Citus cluster the
 * item it names was written on a worker, where the two-phase commit's
 * COMMIT PREPARED runs only afterwards (in Citus's commit callback):
 * reading the item in between would apply its old state and lose the
 * change.  A transaction holds the lock on its own xid until after every
 * commit callback, so waiting for that lock closes the window.  On one
 * server it returns at once (the writer has finished by the time its
 * change is visible).  A worker that failed after PREPARE keeps its part of
 * a committed write invisible until Citus's recovery commits it: the caller
 * checks the writers with DynStorageWritersCommitted, which runs it.
 */
static int
wait_for_writers(const Change *changes, int n, TransactionId *xids)
{
	int			m = 0;

	for (int i = 0; i < n; i++)
	{
		TransactionId xid = changes[i].writer;

		if ((m > 0 && xid == xids[m - 1]) || !TransactionIdIsNormal(xid))
			continue;
		xids[m++] = xid;
		/* not "if in progress": the writer has left the proc array already */
		XactLockTableWait(xid, NULL, NULL, XLTW_None);
	}
	return m;
}

/*
 * The lock an apply or backfill transaction holds while it writes GSI
 * storage (an advisory lock tag no SQL advisory function uses).  On a Citus
 * cluster the index rows are written on the workers and committed there
 * (COMMIT PREPARED) after the apply transaction's local commit has already
 * emptied the queue: DynGsiWaitApplied waits for the lock, which is released
 * only after every commit callback, before it reports the changes applied.
 */
static void
apply_lock_tag(LOCKTAG *tag)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 4475213, 0, 3);
}

/* Take the apply lock for the current transaction (the GSI worker). */
static void
lock_apply(void)
{
	LOCKTAG		tag;

	apply_lock_tag(&tag);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/* Wait until no apply or backfill transaction is committing (wait_for_indexes). */
void
DynGsiWaitApplied(void)
{
	LOCKTAG		tag;

	apply_lock_tag(&tag);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}

/* Order changes by table and key, so duplicates are neighbours. */
static int
change_cmp(const void *a, const void *b)
{
	const Change *x = a;
	const Change *y = b;
	int			c;

	if (x->table_num != y->table_num)
		return x->table_num < y->table_num ? -1 : 1;
	c = DynByteaEquals(x->pk, y->pk) ? 0 :
		memcmp(VARDATA_ANY(x->pk), VARDATA_ANY(y->pk), Min(VARSIZE_ANY_EXHDR(x->pk), VARSIZE_ANY_EXHDR(y->pk)));
	if (c == 0 && !DynByteaEquals(x->pk, y->pk))
		c = VARSIZE_ANY_EXHDR(x->pk) < VARSIZE_ANY_EXHDR(y->pk) ? -1 : 1;
	if (c != 0)
		return c;
	if (DynByteaEquals(x->sk, y->sk))
		return 0;
	c = memcmp(VARDATA_ANY(x->sk), VARDATA_ANY(y->sk), Min(VARSIZE_ANY_EXHDR(x->sk), VARSIZE_ANY_EXHDR(y->sk)));
	if (c == 0)
		c = VARSIZE_ANY_EXHDR(x->sk) < VARSIZE_ANY_EXHDR(y->sk) ? -1 : 1;
	return c;
}

/* A statement run again and again (batches, read-your-writes reads), prepared once and kept in *plan. */
SPIPlanPtr
DynGsiKeptPlan(SPIPlanPtr *plan, const char *sql, int nargs, Oid *types)
{
	if (*plan == NULL)
	{
		SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

		if (p == NULL || SPI_keepplan(p) != 0)
			elog(ERROR, "could not prepare \"%s\"", sql);
		*plan = p;
	}
	return *plan;
}

/* items a backfill indexes per transaction (the GUC dynindex.backfill_chunk_size) */
int			dynindex_backfill_chunk_size = 1000;

static SPIPlanPtr table_plan = NULL;
static SPIPlanPtr count_plan = NULL;
static SPIPlanPtr claim_plan = NULL;
static SPIPlanPtr claim_plan_v01 = NULL;
static SPIPlanPtr backfill_plan = NULL;

/*
 * Does dynindex.gsi_changes have the column (writer, first_id: added by the
 * 0.2 upgrade script)?  Not in a database still at 0.1, where the library
 * must go on maintaining GSIs until ALTER EXTENSION dynindex UPDATE
 * (docs/versions.md).  A syscache lookup: cheap enough for every batch, and
 * current (the update's invalidation arrives when a transaction starts).
 */
bool
DynGsiQueueHasColumn(const char *column)
{
	Oid			relid = get_relname_relid("gsi_changes", get_namespace_oid("dynindex", false));

	return OidIsValid(relid) && get_attnum(relid, column) != InvalidAttrNumber;
}

/* The table with an internal number, or NULL if it was deleted. */
static DynTable *
table_by_num(int64 num)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(num)};
	bool		isnull;

	if (SPI_execute_plan(DynGsiKeptPlan(&table_plan, "SELECT table_name FROM dynindex.tables WHERE num = $1", 1, types),
						 args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "catalog lookup failed");
	if (SPI_processed == 0)
		return NULL;
	return DynCatalogGetTable(TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
																 SPI_tuptable->tupdesc, 1, &isnull)));
}

/* Count applied changes per GSI. */
static void
count_applied(DynTable *t, DynIndex *idx, int64 changes, int64 writes)
{
	Oid			types[4] = {INT8OID, TEXTOID, INT8OID, INT8OID};
	Datum		args[4] = {Int64GetDatum(t->num), CStringGetTextDatum(idx->name),
	Int64GetDatum(changes), Int64GetDatum(writes)};

	if (SPI_execute_plan(DynGsiKeptPlan(&count_plan,
								   "INSERT INTO dynindex.gsi_applied AS a (table_num, index_name, changes_applied, index_writes) "
								   "VALUES ($1, $2, $3, $4) ON CONFLICT (table_num, index_name) DO UPDATE "
								   "SET changes_applied = a.changes_applied + $3, index_writes = a.index_writes + $4, "
								   "last_applied_at = now()", 4, types),
						 args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not count applied GSI changes");
}

/* Apply one batch of queued changes. */
int
DynGsiApplyBatch(int limit)
{
	int			n;
	int			i;
	Change	   *changes;
	TransactionId *writers;	/* the distinct writers of the batch */
	Oid			types[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(limit)};

	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	DynCatalogRevalidate();
	DynStorageWritesBegin();	/* the worker exits on ERROR: no need to unwind */
	lock_apply();

	/*
	 * A 0.1 queue has no writer column: no writer to wait for (0, skipped by
	 * wait_for_writers); a 0.1 database cannot be distributed over Citus, so
	 * its writers have finished by the time their changes are visible.
	 */
	if (SPI_execute_plan(DynGsiQueueHasColumn("writer") ?
						 DynGsiKeptPlan(&claim_plan,
								   "DELETE FROM dynindex.gsi_changes WHERE id IN (SELECT id FROM dynindex.gsi_changes "
								   "ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING table_num, pk, sk, writer, enqueued_at", 1, types) :
						 DynGsiKeptPlan(&claim_plan_v01,
								   "DELETE FROM dynindex.gsi_changes WHERE id IN (SELECT id FROM dynindex.gsi_changes "
								   "ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING table_num, pk, sk, '0'::xid, enqueued_at", 1, types),
						 args, NULL, false, 0) != SPI_OK_DELETE_RETURNING)
		elog(ERROR, "could not claim GSI changes");
	n = (int) SPI_processed;
	changes = palloc(sizeof(Change) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		bool		isnull;
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		changes[i].table_num = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		changes[i].pk = DatumGetByteaPCopy(SPI_getbinval(tup, desc, 2, &isnull));
		changes[i].sk = DatumGetByteaPCopy(SPI_getbinval(tup, desc, 3, &isnull));
		changes[i].writer = DatumGetTransactionId(SPI_getbinval(tup, desc, 4, &isnull));
		changes[i].enqueued_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 5, &isnull));
	}
	writers = palloc(sizeof(TransactionId) * Max(n, 1));
	if (!DynStorageWritersCommitted(writers, wait_for_writers(changes, n, writers)))
	{
		/* a worker is unreachable: keep the changes queued, retry later */
		DynStorageWritesEnd();
		SPI_finish();
		PopActiveSnapshot();
		AbortCurrentTransaction();
		return -1;
	}
	qsort(changes, n, sizeof(Change), change_cmp);

	/*
	 * Read the items with a snapshot taken after the claim: the claim ran
	 * with its own (newer) snapshot and may have taken records of writes
	 * that committed after the transaction's first snapshot, which
	 * DynStorageGet (a read-only SPI call) would otherwise use, applying a
	 * stale item and losing the change.
	 */
	PopActiveSnapshot();
	PushActiveSnapshot(GetTransactionSnapshot());

	for (i = 0; i < n;)
	{
		int64		num = changes[i].table_num;
		DynTable   *t = table_by_num(num);
		int			first = i;
		int			j;

		if (t == NULL)
		{
			while (i < n && changes[i].table_num == num)
				i++;
			continue;
		}
		{
			int64	   *writes = palloc0(sizeof(int64) * Max(1, t->nindexes));
			bool	   *live = palloc0(sizeof(bool) * Max(1, t->nindexes));
			int64		distinct = 0;
			TimestampTz now = GetCurrentTimestamp();
			int64		lat_sum = 0;
			int64		lat_max = 0;

			/*
			 * Lock each GSI's storage after the table's (the order requests
			 * and DeleteTable use); one an UpdateTable dropped meanwhile is
			 * skipped, its entries went with it.
			 */
			for (j = 0; j < t->nindexes; j++)
				live[j] = t->indexes[j].is_global && DynCatalogLockIndex(&t->indexes[j]);

			for (; i < n && changes[i].table_num == num; i++)
			{
				DynKey		key;
				DynStoredItem stored;
				DynValue   *item = NULL;

				DynWorkerExitIfOrphaned();
				if (i > first && change_cmp(&changes[i], &changes[i - 1]) == 0)
					continue;	/* a duplicate of the previous record */
				distinct++;
				lat_sum += Max(0, now - changes[i].enqueued_at);
				lat_max = Max(lat_max, now - changes[i].enqueued_at);
				key.hash = key.range = NULL;
				key.pk = changes[i].pk;
				key.sk = changes[i].sk;
				if (DynStorageGet(t, &key, false, &stored))
					item = DynItemFromStored(stored.item);
				for (j = 0; j < t->nindexes; j++)
					if (live[j])
						writes[j] += sync_entry(t, &t->indexes[j], key.pk, key.sk, item);
			}
			for (j = 0; j < t->nindexes; j++)
				if (live[j])
				{
					count_applied(t, &t->indexes[j], distinct, writes[j]);
					/* metrics: changes replicated to the GSI, enqueue-to-apply latency */
					DynMetricsAdd(t->name, t->indexes[j].name, DYN_M_GSI_REPLICATED, distinct);
					DynMetricsAdd(t->name, t->indexes[j].name, DYN_M_GSI_LATENCY_US, lat_sum);
					DynMetricsSet(t->name, t->indexes[j].name, DYN_M_GSI_LATENCY_LAST_US, lat_max);
				}
		}
	}

	DynStorageWritesEnd();
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	/* readers waiting for these changes (read-your-writes, gsi_wait.c) look again */
	if (n > 0)
		DynWorkerAnnounceApplied(MyDatabaseId);
	return n;
}

/*
 * Give the oldest queued change a new id, at the end of the queue: called
 * after that change failed to apply on its own, so that it is retried later
 * and the changes behind it are applied meanwhile (applying is idempotent and
 * re-reads the item, so the order of one key's records does not matter).
 * first_id keeps the id the change was first queued with: wait_for_indexes
 * waits for every change queued up to an id, requeued or not.  Returns the
 * new id (0 if the queue was empty) and sets *old_id.
 */
int64
DynGsiRequeueOldest(int64 *old_id)
{
	int64		new_id = 0;

	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	/* a 0.1 queue has no first_id: its changes are requeued without it */
	if (SPI_execute(psprintf("WITH o AS (SELECT id FROM dynindex.gsi_changes ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) "
							 "UPDATE dynindex.gsi_changes c SET id = nextval(pg_get_serial_sequence('dynindex.gsi_changes', 'id'))%s "
							 "FROM o WHERE c.id = o.id RETURNING c.table_num, o.id, c.id",
							 DynGsiQueueHasColumn("first_id") ? ", first_id = coalesce(c.first_id, c.id)" : ""),
					false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "could not requeue a GSI change");
	if (SPI_processed > 0)
	{
		bool		isnull;

		*old_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
		new_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
		ereport(WARNING,
				(errmsg("dynindex: a GSI change of table number %lld failed to apply; it was moved to the end of the queue",
						(long long) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))));
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return new_id;
}

/* Do one chunk of a pending backfill; true if more work remains. */
bool
DynGsiBackfillStep(void)
{
	bool		more = false;
	bool		isnull;
	char	   *table_name;
	char	   *index_name;
	Datum		from_pk;
	Datum		from_sk;
	bool		has_from;
	DynTable   *t;
	DynIndex   *idx = NULL;
	int			i;
	uint64		n;
	SPITupleTable *rows;

	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	DynCatalogRevalidate();
	DynStorageWritesBegin();	/* the worker exits on ERROR: no need to unwind */

	/* run after every round of batches: kept, not parsed and planned each time */
	if (SPI_execute_plan(DynGsiKeptPlan(&backfill_plan,
										"SELECT table_name, index_name, backfill_pk, backfill_sk FROM dynindex.indexes "
										"WHERE is_global AND status = 'CREATING' ORDER BY created_at LIMIT 1 FOR UPDATE",
										0, NULL),
						 NULL, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not look for backfills");
	if (SPI_processed == 0)
		goto done;
	lock_apply();
	table_name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	index_name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	from_pk = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &has_from);
	from_sk = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull);
	has_from = !has_from;
	if (has_from)
	{
		from_pk = PointerGetDatum(DatumGetByteaPCopy(from_pk));
		from_sk = PointerGetDatum(DatumGetByteaPCopy(from_sk));
	}
	t = DynCatalogGetTable(table_name);
	if (t == NULL)
		goto done;
	for (i = 0; i < t->nindexes; i++)
		if (strcmp(t->indexes[i].name, index_name) == 0)
			idx = &t->indexes[i];
	if (idx == NULL || !DynCatalogLockIndex(idx))
		goto done;				/* the index was deleted meanwhile */

	/*
	 * Before the first chunk, wait for every transaction that is writing the
	 * table: one that began before the index existed may not have queued its
	 * changes (DynGsiCaptureIfCreated covers writes that lock the table after
	 * the index was created).  Once they have ended, the chunks' snapshots see
	 * their items.
	 */
	if (!has_from)
	{
		LOCKTAG		tag;
		Oid			relid = DatumGetObjectId(DirectFunctionCall1(regclassin, CStringGetDatum(t->storage)));

		SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
		WaitForLockers(tag, ShareLock, false);
		DynWorkerExitIfOrphaned();
	}

	{
		Oid			types[3] = {BYTEAOID, BYTEAOID, INT4OID};
		Datum		args[3] = {from_pk, from_sk, Int32GetDatum(dynindex_backfill_chunk_size)};
		const char *sql = has_from ?
			psprintf("SELECT pk, sk, item FROM %s WHERE (pk, sk) > ($1, $2) ORDER BY pk, sk LIMIT $3", t->storage) :
			psprintf("SELECT pk, sk, item FROM %s ORDER BY pk, sk LIMIT $3", t->storage);

		if (!has_from)
			args[0] = args[1] = PointerGetDatum(DynEncodeKeyBytes(NULL, false));
		if (SPI_execute_with_args(sql, 3, types, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read items to backfill");
	}
	rows = SPI_tuptable;
	n = SPI_processed;
	for (i = 0; i < (int) n; i++)
	{
		bytea	   *pk = DatumGetByteaPCopy(SPI_getbinval(rows->vals[i], rows->tupdesc, 1, &isnull));
		bytea	   *sk = DatumGetByteaPCopy(SPI_getbinval(rows->vals[i], rows->tupdesc, 2, &isnull));
		Jsonb	   *item = DatumGetJsonbP(SPI_getbinval(rows->vals[i], rows->tupdesc, 3, &isnull));

		DynWorkerExitIfOrphaned();
		sync_entry(t, idx, pk, sk, DynItemFromStored(item));
		if (i == (int) n - 1)
		{
			from_pk = PointerGetDatum(pk);
			from_sk = PointerGetDatum(sk);
		}
	}
	{
		Oid			types[4] = {TEXTOID, TEXTOID, BYTEAOID, BYTEAOID};
		Datum		args[4] = {CStringGetTextDatum(table_name), CStringGetTextDatum(index_name), from_pk, from_sk};
		const char *sql = n < dynindex_backfill_chunk_size ?
			"UPDATE dynindex.indexes SET status = 'ACTIVE', backfilling = false, backfill_pk = NULL, "
			"backfill_sk = NULL WHERE table_name = $1 AND index_name = $2 AND $3 IS NOT DISTINCT FROM $3 AND $4 IS NOT DISTINCT FROM $4" :
			"UPDATE dynindex.indexes SET backfill_pk = $3, backfill_sk = $4 WHERE table_name = $1 AND index_name = $2";

		if (n == 0 && !has_from)
			args[2] = args[3] = PointerGetDatum(DynEncodeKeyBytes(NULL, false));
		if (SPI_execute_with_args(sql, 4, types, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not record backfill progress");
		if (n < dynindex_backfill_chunk_size)
			DynCatalogChanged();
	}
	more = true;				/* look again: another chunk or another index */

done:
	DynStorageWritesEnd();
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return more;
}
