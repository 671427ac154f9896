/*
 * import_bulk.c — the import's bulk load: items and their GSI entries go
 * straight into the heaps by table_multi_insert (as COPY writes rows), with
 * every btree of the new table and of its GSIs dropped during the load and
 * built afterwards by sorting (CREATE INDEX), the table's primary key first.
 *
 * Crash safety: the indexes are dropped in the transaction of the first
 * object loaded, which also records their definitions in the import's row
 * (dynindex.imports.deferred_indexes); a crash before that commit undoes
 * both, a crash after it finds the definitions there.  The indexes are built
 * again in the import's last transaction, the one that turns the table
 * ACTIVE, so the table is never ACTIVE without them.
 *
 * Duplicates (items sharing a key overwrite each other until one remains):
 * within a batch only the last one is written (import.c); across batches
 * the heap holds them all until the primary key is built.  When it cannot
 * be built (a duplicate key), every key's last row is kept — the latest
 * object's transaction (age(xmin)), then the highest ctid: the load only
 * appends to a new relation (TABLE_INSERT_SKIP_FSM), so a later row of one
 * transaction has a higher ctid — and the GSIs, whose entries of the
 * overwritten items are then wrong, are emptied and built again from the
 * table, as the INSERT path builds them (import.c build_gsi_from_table).
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
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/resowner.h"

#include "catalog/dyn_catalog.h"
#include "common/json.h"
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

/*
 * Drop the btrees of one storage relation, appending their definitions to the
 * import's deferred_indexes ([relation, statement] pairs, in order: the
 * constraints first, so that the table's primary key is built first).
 */
static void
defer_indexes(int64 import_id, const char *relation)
{
	Oid			types[2] = {TEXTOID, INT8OID};
	Datum		args[2] = {CStringGetTextDatum(relation), Int64GetDatum(import_id)};
	List	   *drops = NIL;
	ListCell   *lc;
	bool		isnull;

	if (SPI_execute_with_args("SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', $1, c.conname), "
							  "       format('ALTER TABLE %s ADD CONSTRAINT %I %s', $1, c.conname, pg_get_constraintdef(c.oid)), 0 AS o "
							  "FROM pg_catalog.pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('p', 'u') "
							  "UNION ALL "
							  "SELECT format('DROP INDEX %s', i.indexrelid::regclass), pg_get_indexdef(i.indexrelid), 1 "
							  "FROM pg_catalog.pg_index i WHERE i.indrelid = $1::regclass AND NOT EXISTS "
							  "(SELECT 1 FROM pg_catalog.pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = $1::regclass) "
							  "ORDER BY 3, 2",
							  1, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the indexes of %s", relation);
	if (SPI_processed == 0)
		return;
	{
		StringInfoData buf;
		Oid			utypes[2] = {JSONBOID, INT8OID};
		Datum		uargs[2];

		initStringInfo(&buf);
		appendStringInfoChar(&buf, '[');
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			char	   *drop = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
			char	   *create = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

			drops = lappend(drops, drop);
			if (r > 0)
				appendStringInfoChar(&buf, ',');
			appendStringInfoChar(&buf, '[');
			escape_json(&buf, relation);
			appendStringInfoChar(&buf, ',');
			escape_json(&buf, create);
			appendStringInfoChar(&buf, ']');
		}
		appendStringInfoChar(&buf, ']');
		uargs[0] = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
		uargs[1] = Int64GetDatum(import_id);
		if (SPI_execute_with_args("UPDATE dynindex.imports SET deferred_indexes = "
								  "coalesce(deferred_indexes, '[]'::jsonb) || $1 WHERE import_id = $2",
								  2, utypes, uargs, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not record the indexes of %s", relation);
	}
	foreach(lc, drops)
		if (SPI_execute(lfirst(lc), false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not drop an index of %s", relation);
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

/*
 * Begin loading an object by the bulk path (in its transaction): the indexes
 * still on the table's and GSIs' storage (the first object) are dropped and
 * their definitions recorded; the heaps are opened.
 */
DynImportBulk *
DynImportBulkBegin(int64 import_id, DynTable *t)
{
	DynImportBulk *b = palloc0(sizeof(DynImportBulk));
	int			g = 0;

	defer_indexes(import_id, t->storage);
	for (int i = 0; i < t->nindexes; i++)
		defer_indexes(import_id, t->indexes[i].storage);
	CommandCounterIncrement();
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

/* Keep the last row of every key of the table (the load appended them all). */
static void
settle_duplicates(DynTable *t)
{
	if (SPI_execute(psprintf("DELETE FROM %s d USING (SELECT c FROM (SELECT ctid AS c, row_number() OVER "
							 "(PARTITION BY pk, sk ORDER BY age(xmin), ctid DESC) AS n FROM %s) x WHERE n > 1) y "
							 "WHERE d.ctid = y.c", t->storage, t->storage), false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not settle the duplicate keys of %s", t->storage);
}

/*
 * Build the indexes deferred by the bulk load (in the import's last
 * transaction): false when the import did not take the bulk path.  The
 * table's own indexes come first; a duplicate key met by its primary key is
 * settled (the last item of each key kept) and the GSIs refilled from the
 * table by rebuild_gsi before their indexes are built.
 */
bool
DynImportBulkFinish(int64 import_id, DynTable *t, void (*rebuild_gsi) (DynTable *t, DynIndex *idx))
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(import_id)};
	bool		isnull;
	Datum		d;
	Jsonb	   *defs;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	List	   *rels = NIL;
	List	   *stmts = NIL;
	ListCell   *lr;
	ListCell   *ls;

	if (SPI_execute_with_args("SELECT deferred_indexes FROM dynindex.imports WHERE import_id = $1",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read import %lld", (long long) import_id);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return false;
	defs = DatumGetJsonbPCopy(d);

	/* [[relation, statement], ...] */
	it = JsonbIteratorInit(&defs->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		int			n;
		JsonbValue *pair;

		if (tok != WJB_ELEM || v.type != jbvBinary)
			continue;
		pair = RqArrayElems(&v, &n);
		if (n != 2 || pair[0].type != jbvString || pair[1].type != jbvString)
			elog(ERROR, "import %lld has a malformed deferred index", (long long) import_id);
		rels = lappend(rels, pnstrdup(pair[0].val.string.val, pair[0].val.string.len));
		stmts = lappend(stmts, pnstrdup(pair[1].val.string.val, pair[1].val.string.len));
	}

	forboth(lr, rels, ls, stmts)
	{
		const char *rel = lfirst(lr);
		const char *sql = lfirst(ls);

		if (strcmp(rel, t->storage) == 0 && !try_statement(sql))
		{
			/* a duplicate key: keep each key's last item, refill the GSIs */
			settle_duplicates(t);
			if (SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
				elog(ERROR, "could not build an index of %s", rel);
			for (int i = 0; i < t->nindexes; i++)
			{
				if (SPI_execute(psprintf("TRUNCATE %s", t->indexes[i].storage), false, 0) != SPI_OK_UTILITY)
					elog(ERROR, "could not empty %s", t->indexes[i].storage);
				rebuild_gsi(t, &t->indexes[i]);
			}
			continue;
		}
		if (strcmp(rel, t->storage) != 0 && SPI_execute(sql, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not build an index of %s", rel);
	}
	if (SPI_execute_with_args("UPDATE dynindex.imports SET deferred_indexes = NULL WHERE import_id = $1",
							  1, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update import %lld", (long long) import_id);
	return true;
}
