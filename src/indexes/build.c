/*
 * build.c — building every secondary index of a table in bulk, from the
 * items of a relation (a new table's own storage, or a copy of it), in the
 * current transaction: one pass over the items in key order (a cursor,
 * BUILD_BATCH items per step), LSI entries through the LSI write code, GSI
 * entries written directly with their projections.
 *
 * For tables nobody else can see yet (a restore, an import before it turns
 * ACTIVE): their GSIs are complete when the transaction commits, so they are
 * ACTIVE at once instead of being backfilled by the worker afterwards.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/memutils.h"

#include "common/errors.h"
#include "indexes/indexes.h"

/* Items fetched per cursor step. */
#define BUILD_BATCH 1000

/* Insert one GSI entry of an item (a key too large for a btree leaves it out, as the worker does). */
static void
add_gsi_entry(DynTable *t, DynIndex *idx, SPIPlanPtr plan, bytea *pk, bytea *sk, const DynValue *item)
{
	bytea	   *ipk;
	bytea	   *isk;
	DynValue   *entry;
	Datum		args[6];
	bool		too_big = false;

	if (!DynIndexEntryKey(t, idx, item, &ipk, &isk))
		return;					/* sparse: not in the index */
	entry = DynIndexProject(t, idx, item);
	args[0] = PointerGetDatum(ipk);
	args[1] = PointerGetDatum(isk);
	args[2] = PointerGetDatum(pk);
	args[3] = PointerGetDatum(sk);
	args[4] = Int32GetDatum((int32) DynItemSize(entry));
	args[5] = JsonbPGetDatum(DynItemToJsonb(entry));
	if (DynStorageExecKeyed(plan, args, 4, &too_big) != SPI_OK_INSERT && !too_big)
		elog(ERROR, "could not write a GSI entry");
	if (too_big)
		ereport(WARNING,
				(errmsg("dynindex: an item of table %s is left out of global secondary index %s: "
						"its index and table keys are too large for a btree entry", t->name, idx->name)));
}

/* Build every secondary index of a new table from the items of relation. */
void
DynIndexesBuildFrom(DynTable *t, const char *relation)
{
	static Oid	types[6] = {BYTEAOID, BYTEAOID, BYTEAOID, BYTEAOID, INT4OID, JSONBOID};
	SPIPlanPtr *gsi_plans;
	SPIPlanPtr	scan;
	Portal		portal;
	int			i;

	if (t->nindexes == 0)
		return;

	gsi_plans = palloc0(sizeof(SPIPlanPtr) * t->nindexes);
	for (i = 0; i < t->nindexes; i++)
	{
		if (!t->indexes[i].is_global)
			continue;
		gsi_plans[i] = SPI_prepare(psprintf("INSERT INTO %s (ipk, isk, pk, sk, size, item) VALUES ($1, $2, $3, $4, $5, $6)",
											t->indexes[i].storage), 6, types);
		if (gsi_plans[i] == NULL)
			elog(ERROR, "could not prepare a GSI insert");
	}
	scan = SPI_prepare(psprintf("SELECT pk, sk, item FROM %s ORDER BY pk, sk", relation), 0, NULL);
	if (scan == NULL)
		elog(ERROR, "could not prepare the index build scan");
	portal = SPI_cursor_open(NULL, scan, NULL, NULL, false);	/* sees the rows just loaded */
	for (;;)
	{
		SPITupleTable *rows;
		uint64		n;
		uint64		r;
		MemoryContext batch = AllocSetContextCreate(CurrentMemoryContext, "dynindex index build batch",
													ALLOCSET_DEFAULT_SIZES);
		MemoryContext old;

		SPI_cursor_fetch(portal, true, BUILD_BATCH);
		rows = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
		{
			MemoryContextDelete(batch);
			break;
		}
		old = MemoryContextSwitchTo(batch);
		for (r = 0; r < n; r++)
		{
			bool		isnull;
			DynKey		key;
			DynValue   *item;

			memset(&key, 0, sizeof(key));
			key.pk = DatumGetByteaPCopy(SPI_getbinval(rows->vals[r], rows->tupdesc, 1, &isnull));
			key.sk = DatumGetByteaPCopy(SPI_getbinval(rows->vals[r], rows->tupdesc, 2, &isnull));
			item = DynItemFromStored(DatumGetJsonbPCopy(SPI_getbinval(rows->vals[r], rows->tupdesc, 3, &isnull)));
			for (i = 0; i < t->nindexes; i++)
			{
				if (t->indexes[i].is_global)
					add_gsi_entry(t, &t->indexes[i], gsi_plans[i], key.pk, key.sk, item);
				else
					DynLsiOnWrite(t, &t->indexes[i], &key, NULL, item);
			}
		}
		MemoryContextSwitchTo(old);
		SPI_freetuptable(rows);
		MemoryContextDelete(batch);
	}
	SPI_cursor_close(portal);
}
