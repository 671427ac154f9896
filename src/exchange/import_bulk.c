/*
 * import_bulk.c — the import's bulk load: items and their GSI entries go
 * straight into the heaps by table_multi_insert (as COPY writes rows), with
 * every btree of the new table and of its GSIs dropped before the load and
 * built afterwards by sorting (CREATE INDEX).
 *
 * Crash safety: the indexes are dropped in the import's first transaction,
 * which also records each one's definition as an 'index' task of the import
 * (dynindex.import_tasks, after its 'object' tasks); a crash before that
 * commit undoes both, a crash after it finds the definitions there.  Each
 * index is built in a transaction of its own that marks its task done; the
 * table turns ACTIVE only in the import's last transaction, after every task
 * is done (import.c), so it is never ACTIVE without them.  Two processes of
 * the job build them at once, each taking the next task not taken.
 *
 * Duplicates (items sharing a key overwrite each other until one remains):
 * within a batch only the last one is written (import.c); across batches
 * and objects the heap holds them all until the primary key is built.  When
 * it cannot be built (a duplicate key), every key's last row is kept — the
 * one of the latest object (the object task whose done_by is the row's xmin:
 * transactions need not follow the objects' order — an object whose process
 * stopped or crashed is loaded again after later ones), then the highest ctid (within one transaction a
 * later row has a higher ctid: the load only appends, TABLE_INSERT_SKIP_FSM,
 * to the relation's last block or a new one) — and the GSIs, whose entries
 * of the overwritten items are then wrong, are emptied and filled again from
 * the table, as the INSERT path fills them (import.c gsi_from_table).
 *
 * The bulk path is taken only for plain heaps of one node: a hash-partitioned
 * or distributed (Citus) table, or one with LSIs, takes the INSERT path.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/resowner.h"

#include "catalog/dyn_catalog.h"
#include "exchange/import.h"
#include "indexes/indexes.h"
#include "storage/storage.h"

/* One heap being written: the relation, its slots, the rows waiting. */
typedef struct BulkTarget
{
	Relation	rel;
	BulkInsertState bistate;
	TupleTableSlot **slots;
	int			nslots;			/* slots created */
	int			n;				/* rows waiting */
	int			natts;
} BulkTarget;

struct DynImportBulk
{
	DynTable   *t;
	int			ntargets;		/* 0: the table, 1..: its GSIs (in t->indexes order) */
	BulkTarget *targets;
	int		   *gsi_of;			/* target i (> 0) -> index number in t->indexes */
	CommandId	cid;
	MemoryContext cxt;			/* where the slots live (the object's transaction) */
};

/* The relation of a storage name. */
static Oid
storage_oid(const char *storage)
{
	return DatumGetObjectId(DirectFunctionCall1(regclassin, CStringGetDatum(storage)));
}

/* Is this storage relation a plain heap of this node (not partitioned, not distributed)? */
static bool
plain_heap(const char *storage)
{
	Relation	rel;
	bool		ok;

	if (DynStorageIsDistributed(storage))
		return false;
	rel = table_open(storage_oid(storage), AccessShareLock);
	ok = rel->rd_rel->relkind == RELKIND_RELATION;
	table_close(rel, AccessShareLock);
	return ok;
}

/* May this table's import take the bulk path? */
bool
DynImportBulkEligible(DynTable *t)
{
	if (!plain_heap(t->storage))
		return false;
	for (int i = 0; i < t->nindexes; i++)
		if (!t->indexes[i].is_global || !plain_heap(t->indexes[i].storage))
			return false;
	return true;
}

/* One dropped btree: its relation, the statement that builds it, its rank. */
typedef struct DeferredIndex
{
	char	   *relation;
	char	   *statement;
	char	   *attach;			/* a constraint's: the statement that attaches it to the btree */
	int			rank;
	int			seq;			/* the order read (ties of rank) */
} DeferredIndex;

/*
 * Read (and drop) the btrees of one storage relation, appending them to
 * *list.  A primary key is built as a unique btree (CREATE UNIQUE INDEX
 * takes a lock that lets the relation's other btrees build at once; ALTER
 * TABLE ... ADD CONSTRAINT does not) and attached as the constraint after
 * every btree is built.  Rank: the table's primary key first (a duplicate
 * key is settled before anything else is built from the table), its segment
 * index beside it, then the GSIs' keys, the largest sorts, then the GSIs'
 * base-key indexes (not unique), so that the two builders end close
 * together.
 */
static List *
defer_relation(List *list, const char *relation, bool table)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(relation)};
	List	   *drops = NIL;
	ListCell   *lc;
	bool		isnull;

	if (SPI_execute_with_args("SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', $1, c.conname), "
							  "       pg_get_indexdef(c.conindid), false, "
							  "       format('ALTER TABLE %s ADD CONSTRAINT %I %s USING INDEX %I', $1, c.conname, "
							  "              CASE c.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, "
							  "              (SELECT relname FROM pg_catalog.pg_class WHERE oid = c.conindid)) "
							  "FROM pg_catalog.pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('p', 'u') "
							  "UNION ALL "
							  "SELECT format('DROP INDEX %s', i.indexrelid::regclass), pg_get_indexdef(i.indexrelid), "
							  "       NOT i.indisunique, NULL "
							  "FROM pg_catalog.pg_index i WHERE i.indrelid = $1::regclass AND NOT EXISTS "
							  "(SELECT 1 FROM pg_catalog.pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = $1::regclass)",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the indexes of %s", relation);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		DeferredIndex *d = palloc(sizeof(DeferredIndex));
		bool		not_unique = DatumGetBool(SPI_getbinval(tup, SPI_tuptable->tupdesc, 3, &isnull));

		drops = lappend(drops, TextDatumGetCString(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull)));
		d->relation = pstrdup(relation);
		d->statement = TextDatumGetCString(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));
		d->attach = SPI_getvalue(tup, SPI_tuptable->tupdesc, 4);
		d->rank = table ? (d->attach ? 0 : 1) : not_unique ? 3 : 2;
		d->seq = list_length(list);
		list = lappend(list, d);
	}
	foreach(lc, drops)
		if (SPI_execute(lfirst(lc), false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not drop an index of %s", relation);
	return list;
}

static int
deferred_cmp(const ListCell *a, const ListCell *b)
{
	const DeferredIndex *x = lfirst(a);
	const DeferredIndex *y = lfirst(b);

	return x->rank != y->rank ? x->rank - y->rank : x->seq - y->seq;
}

/*
 * Drop the btrees of one storage relation and return the statements that
 * build them again, in order (the btrees, then the constraints attached to
 * them): the INSERT path fills a GSI's storage between the two (import.c).
 */
List *
DynImportDropIndexes(const char *relation)
{
	List	   *list = defer_relation(NIL, relation, false);
	List	   *builds = NIL;
	List	   *attaches = NIL;
	ListCell   *lc;

	foreach(lc, list)
	{
		DeferredIndex *d = lfirst(lc);

		builds = lappend(builds, d->statement);
		if (d->attach)
			attaches = lappend(attaches, d->attach);
	}
	return list_concat(builds, attaches);
}

/* Record one task of the import. */
static void
add_task(int64 import_id, int task, const char *kind, const char *relation, const char *statement)
{
	Oid			types[5] = {INT8OID, INT4OID, TEXTOID, TEXTOID, TEXTOID};
	Datum		args[5] = {Int64GetDatum(import_id), Int32GetDatum(task), CStringGetTextDatum(kind),
	CStringGetTextDatum(relation), CStringGetTextDatum(statement)};

	if (SPI_execute_with_args("INSERT INTO dynindex.import_tasks (import_id, task_no, kind, target, statement) "
							  "VALUES ($1, $2, $3, $4, $5)", 5, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the indexes of %s", relation);
}

/*
 * Drop every btree of the table's and its GSIs' storage (in the import's
 * first transaction) and record each one as a task numbered from first_task
 * on: the table's as 'table_index' tasks, then the GSIs' as 'index' tasks,
 * which wait for them (a duplicate key found by the table's primary key
 * empties and refills the GSIs' heaps: a GSI's unique btree built before
 * would meet the duplicate's entries); then each constraint as a
 * 'constraint' task.
 */
void
DynImportBulkDefer(int64 import_id, DynTable *t, int first_task)
{
	List	   *list = defer_relation(NIL, t->storage, true);
	ListCell   *lc;
	int			task = first_task;

	for (int i = 0; i < t->nindexes; i++)
		list = defer_relation(list, t->indexes[i].storage, false);
	list_sort(list, deferred_cmp);
	foreach(lc, list)
	{
		DeferredIndex *d = lfirst(lc);

		add_task(import_id, task++, d->rank <= 1 ? "table_index" : "index", d->relation, d->statement);
	}
	foreach(lc, list)
	{
		DeferredIndex *d = lfirst(lc);

		if (d->attach)
			add_task(import_id, task++, "constraint", d->relation, d->attach);
	}
}

/* Open one heap for the load. */
static void
open_target(BulkTarget *bt, const char *storage)
{
	bt->rel = table_open(storage_oid(storage), RowExclusiveLock);
	bt->bistate = GetBulkInsertState();
	bt->natts = RelationGetDescr(bt->rel)->natts;
	bt->slots = palloc0(sizeof(TupleTableSlot *) * DYN_IMPORT_BULK_BATCH);
	bt->nslots = 0;
	bt->n = 0;
}

/* Begin loading an object by the bulk path (in its transaction): the heaps opened. */
DynImportBulk *
DynImportBulkBegin(DynTable *t)
{
	DynImportBulk *b = palloc0(sizeof(DynImportBulk));
	int			g = 0;

	b->t = t;
	b->ntargets = 1 + t->nindexes;
	b->targets = palloc0(sizeof(BulkTarget) * b->ntargets);
	b->gsi_of = palloc0(sizeof(int) * b->ntargets);
	open_target(&b->targets[0], t->storage);
	for (int i = 0; i < t->nindexes; i++)
	{
		g++;
		b->gsi_of[g] = i;
		open_target(&b->targets[g], t->indexes[i].storage);
	}
	b->cid = GetCurrentCommandId(true);
	b->cxt = CurrentMemoryContext;
	return b;
}

/* The next free slot of a target, its values cleared. */
static TupleTableSlot *
next_slot(DynImportBulk *b, BulkTarget *bt)
{
	TupleTableSlot *slot;

	Assert(bt->n < DYN_IMPORT_BULK_BATCH);
	if (bt->n == bt->nslots)
	{
		MemoryContext old = MemoryContextSwitchTo(b->cxt);

		bt->slots[bt->nslots++] = table_slot_create(bt->rel, NULL);
		MemoryContextSwitchTo(old);
	}
	slot = bt->slots[bt->n++];
	ExecClearTuple(slot);
	memset(slot->tts_isnull, 0, sizeof(bool) * bt->natts);
	return slot;
}

/* Write the waiting rows of one target. */
static void
flush_target(DynImportBulk *b, BulkTarget *bt)
{
	if (bt->n == 0)
		return;
	table_multi_insert(bt->rel, bt->slots, bt->n, b->cid, TABLE_INSERT_SKIP_FSM, bt->bistate);
	for (int i = 0; i < bt->n; i++)
		ExecClearTuple(bt->slots[i]);
	bt->n = 0;
}

/*
 * Add one item (its encoded key, size, stored form and value) and its entry
 * in every GSI it belongs to.  An entry whose keys cannot fit a btree entry
 * is left out, as the worker leaves it out.  The caller adds at most
 * DYN_IMPORT_BULK_BATCH items between flushes and keeps their memory until
 * DynImportBulkFlush.
 */
void
DynImportBulkAdd(DynImportBulk *b, bytea *pk, bytea *sk, int32 size, Jsonb *stored, const DynValue *item)
{
	TupleTableSlot *slot = next_slot(b, &b->targets[0]);

	slot->tts_values[0] = PointerGetDatum(pk);
	slot->tts_values[1] = PointerGetDatum(sk);
	slot->tts_values[2] = Int32GetDatum(size);
	slot->tts_values[3] = JsonbPGetDatum(stored);
	for (int a = 4; a < b->targets[0].natts; a++)
		slot->tts_isnull[a] = true; /* no replication stamp: a new table is not replicated */
	ExecStoreVirtualTuple(slot);
	for (int g = 1; g < b->ntargets; g++)
	{
		DynIndex   *idx = &b->t->indexes[b->gsi_of[g]];
		bytea	   *ipk;
		bytea	   *isk;
		int32		esize = size;
		Jsonb	   *entry = stored;

		if (!DynIndexEntryKey(b->t, idx, item, &ipk, &isk))
			continue;			/* sparse */
		if (VARSIZE_ANY_EXHDR(ipk) + VARSIZE_ANY_EXHDR(isk) + VARSIZE_ANY_EXHDR(pk) + VARSIZE_ANY_EXHDR(sk) > 2600)
			continue;
		if (idx->projection != DYN_PROJ_ALL)
		{
			DynValue   *e = DynIndexProject(b->t, idx, item);

			esize = (int32) DynItemSize(e);
			entry = DynImportItemToJsonb(e);
		}
		slot = next_slot(b, &b->targets[g]);
		slot->tts_values[0] = PointerGetDatum(ipk);
		slot->tts_values[1] = PointerGetDatum(isk);
		slot->tts_values[2] = PointerGetDatum(pk);
		slot->tts_values[3] = PointerGetDatum(sk);
		slot->tts_values[4] = Int32GetDatum(esize);
		slot->tts_values[5] = JsonbPGetDatum(entry);
		ExecStoreVirtualTuple(slot);
	}
}

/* Write every row added since the last flush. */
void
DynImportBulkFlush(DynImportBulk *b)
{
	for (int g = 0; g < b->ntargets; g++)
		flush_target(b, &b->targets[g]);
}

/* End the object's load: the rows written, the heaps closed (locks kept to commit). */
void
DynImportBulkEnd(DynImportBulk *b)
{
	DynImportBulkFlush(b);
	for (int g = 0; g < b->ntargets; g++)
	{
		BulkTarget *bt = &b->targets[g];

		for (int s = 0; s < bt->nslots; s++)
			ExecDropSingleTupleTableSlot(bt->slots[s]);
		FreeBulkInsertState(bt->bistate);
		table_close(bt->rel, NoLock);
	}
}

/* Run one statement of the index build; false (nothing done) on a unique violation. */
static bool
try_statement(const char *sql)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not build an index of an imported table");
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		if (geterrcode() != ERRCODE_UNIQUE_VIOLATION)
			PG_RE_THROW();
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return ok;
}

/*
 * Keep the last row of every key of the table: the latest object's (its task's
 * done_by is the row's xmin), then the last written.
 */
static void
settle_duplicates(int64 import_id, DynTable *t)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(import_id)};

	if (SPI_execute_with_args(psprintf("DELETE FROM %s d USING (SELECT c FROM (SELECT s.ctid AS c, row_number() OVER "
									   "(PARTITION BY s.pk, s.sk ORDER BY o.task_no DESC NULLS LAST, s.ctid DESC) AS n "
									   "FROM %s s LEFT JOIN dynindex.import_tasks o ON o.import_id = $1 "
									   "AND o.kind = 'object' AND o.done_by = s.xmin) x WHERE n > 1) y "
									   "WHERE d.ctid = y.c", t->storage, t->storage),
							  1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not settle the duplicate keys of %s", t->storage);
}

/*
 * Build one index deferred by the bulk load (an 'index' task, in its own
 * transaction).  The table's primary key may meet a duplicate key: then each
 * key's last item is kept and the GSIs are emptied and filled again from the
 * table by rebuild_gsi (their btrees built already are kept up to date by
 * the refill; the others are built by their own tasks).
 */
void
DynImportBulkBuild(int64 import_id, DynTable *t, const char *relation, const char *statement,
				   void (*rebuild_gsi) (DynTable *t, DynIndex *idx))
{
	if (strcmp(relation, t->storage) != 0 || strncmp(statement, "CREATE UNIQUE", 13) != 0)
	{
		if (SPI_execute(statement, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not build an index of %s", relation);
		return;
	}
	if (try_statement(statement))
		return;
	/* a duplicate key: keep each key's last item, refill the GSIs */
	settle_duplicates(import_id, t);
	if (SPI_execute(statement, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not build an index of %s", relation);
	for (int i = 0; i < t->nindexes; i++)
	{
		if (SPI_execute(psprintf("TRUNCATE %s", t->indexes[i].storage), false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not empty %s", t->indexes[i].storage);
		rebuild_gsi(t, &t->indexes[i]);
	}
}
