/*
 * verify.c — dynindex.verify_indexes(table_name): recompute every secondary
 * index entry (LSIs and GSIs) from the table's items and compare with each
 * index's storage relation.
 *
 * Per index, two passes, each a cursor over one relation plus one btree probe
 * per row (cost O(n log n), memory bounded by the cursor batch):
 *   - over the base items: the expected entry (DynIndexEntryKey,
 *     DynIndexProject) is looked up by (ipk, isk, pk, sk): absent = missing,
 *     present with another item or size = stale;
 *   - over the index entries: the base item of (pk, sk) is read and its
 *     expected key recomputed: no base item, an item not in the index or an
 *     item with another index key = extra.
 * GSIs are maintained after commit by the worker: call
 * dynindex.wait_for_indexes() first to compare a settled state.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "common/errors.h"
#include "indexes/indexes.h"
#include "security/security.h"

#define VERIFY_BATCH 1000

PG_FUNCTION_INFO_V1(dynindex_verify_indexes);

/* Differences found in one index. */
typedef struct VerifyCounts
{
	int64		missing;
	int64		extra;
	int64		stale;
} VerifyCounts;

/* Same bytes? */
static bool
same_bytea(const bytea *a, const bytea *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/* Prepare a plan for the duration of one verification. */
static SPIPlanPtr
prepare(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	return plan;
}

/* Pass 1: every base item's expected entry must be in the index, unchanged. */
static void
check_base_items(DynTable *t, DynIndex *idx, VerifyCounts *c, MemoryContext tmp)
{
	Oid			types[4] = {BYTEAOID, BYTEAOID, BYTEAOID, BYTEAOID};
	SPIPlanPtr	probe = prepare(psprintf("SELECT size, item FROM %s WHERE %s",
										 idx->storage, DynIndexKeyEquals(idx)), 4, types);
	Portal		cur = SPI_cursor_open_with_args(NULL, psprintf("SELECT pk, sk, item FROM %s", t->storage),
												0, NULL, NULL, NULL, true, 0);

	for (;;)
	{
		SPITupleTable *batch;
		uint64		n;
		uint64		i;

		SPI_cursor_fetch(cur, true, VERIFY_BATCH);
		batch = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
			break;
		for (i = 0; i < n; i++)
		{
			MemoryContext old = MemoryContextSwitchTo(tmp);
			bool		isnull;
			bytea	   *pk = DatumGetByteaPP(SPI_getbinval(batch->vals[i], batch->tupdesc, 1, &isnull));
			bytea	   *sk = DatumGetByteaPP(SPI_getbinval(batch->vals[i], batch->tupdesc, 2, &isnull));
			DynValue   *item = DynItemFromStored(DatumGetJsonbP(SPI_getbinval(batch->vals[i], batch->tupdesc, 3, &isnull)));
			bytea	   *ipk;
			bytea	   *isk;

			if (DynIndexEntryKey(t, idx, item, &ipk, &isk))
			{
				DynValue   *entry = DynIndexProject(t, idx, item);
				Datum		args[4] = {PointerGetDatum(ipk), PointerGetDatum(isk),
				PointerGetDatum(pk), PointerGetDatum(sk)};

				if (SPI_execute_plan(probe, args, NULL, true, 1) != SPI_OK_SELECT)
					elog(ERROR, "could not read index entry");
				MemoryContextSwitchTo(tmp);
				if (SPI_processed == 0)
					c->missing++;
				else
				{
					int32		size = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
					Jsonb	   *stored = DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
					Jsonb	   *want = DynItemToJsonb(entry);

					if (size != (int32) DynItemSize(entry) ||
						!DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(stored), JsonbPGetDatum(want))))
						c->stale++;
				}
				SPI_freetuptable(SPI_tuptable);
			}
			MemoryContextSwitchTo(old);
			MemoryContextReset(tmp);
			CHECK_FOR_INTERRUPTS();
		}
		SPI_freetuptable(batch);
	}
	SPI_cursor_close(cur);
	SPI_freeplan(probe);
}

/* Pass 2: every index entry must be the expected entry of an existing item. */
static void
check_index_entries(DynTable *t, DynIndex *idx, VerifyCounts *c, MemoryContext tmp)
{
	Portal		cur = SPI_cursor_open_with_args(NULL, psprintf("SELECT ipk, isk, pk, sk FROM %s", idx->storage),
												0, NULL, NULL, NULL, true, 0);

	for (;;)
	{
		SPITupleTable *batch;
		uint64		n;
		uint64		i;

		SPI_cursor_fetch(cur, true, VERIFY_BATCH);
		batch = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
			break;
		for (i = 0; i < n; i++)
		{
			MemoryContext old = MemoryContextSwitchTo(tmp);
			bool		isnull;
			bytea	   *ipk = DatumGetByteaPP(SPI_getbinval(batch->vals[i], batch->tupdesc, 1, &isnull));
			bytea	   *isk = DatumGetByteaPP(SPI_getbinval(batch->vals[i], batch->tupdesc, 2, &isnull));
			DynKey		key;
			DynStoredItem stored;
			bytea	   *eipk;
			bytea	   *eisk;
			bool		found;

			memset(&key, 0, sizeof(key));
			key.pk = DatumGetByteaPP(SPI_getbinval(batch->vals[i], batch->tupdesc, 3, &isnull));
			key.sk = DatumGetByteaPP(SPI_getbinval(batch->vals[i], batch->tupdesc, 4, &isnull));
			found = DynStorageGet(t, &key, false, &stored);

			MemoryContextSwitchTo(tmp);
			if (!found ||
				!DynIndexEntryKey(t, idx, DynItemFromStored(stored.item), &eipk, &eisk) ||
				!same_bytea(ipk, eipk) || !same_bytea(isk, eisk))
				c->extra++;
			SPI_freetuptable(SPI_tuptable);
			MemoryContextSwitchTo(old);
			MemoryContextReset(tmp);
			CHECK_FOR_INTERRUPTS();
		}
		SPI_freetuptable(batch);
	}
	SPI_cursor_close(cur);
}

/* dynindex.verify_indexes(table_name) RETURNS TABLE(index_name, missing, extra, stale) */
Datum
dynindex_verify_indexes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *name;
	DynTable   *volatile t = NULL;
	MemoryContext tmp;
	int			i;
	DynSecurityOp op;
	DynSecurityState sec;

	if (PG_ARGISNULL(0))
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found");
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	InitMaterializedSRF(fcinfo, 0);

	DynCatalogRevalidate();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the admin right on the table; then every item is read with the owner's rights */
	DynSecurityEnter("verify_indexes", &op);
	PG_TRY();
	{
		t = DynCatalogGetTableOrNotFound(name);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&op);
	}
	PG_END_TRY();
	DynSecurityBeginInternal(&sec);
	tmp = AllocSetContextCreate(CurrentMemoryContext, "verify_indexes", ALLOCSET_DEFAULT_SIZES);
	for (i = 0; i < t->nindexes; i++)
	{
		DynIndex   *idx = &t->indexes[i];
		VerifyCounts c = {0, 0, 0};
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		if (!DynCatalogLockIndex(idx))
			continue;			/* deleted by a concurrent UpdateTable */
		check_base_items(t, idx, &c, tmp);
		check_index_entries(t, idx, &c, tmp);
		values[0] = CStringGetTextDatum(idx->name);
		values[1] = Int64GetDatum(c.missing);
		values[2] = Int64GetDatum(c.extra);
		values[3] = Int64GetDatum(c.stale);
		/* the tuplestore lives outside SPI's memory */
		{
			MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);

			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			MemoryContextSwitchTo(old);
		}
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return (Datum) 0;
}
