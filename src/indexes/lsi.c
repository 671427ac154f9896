/*
 * lsi.c — local secondary indexes, maintained inside the writing
 * transaction: the old entry leaves, the new entry enters, under the base
 * item's row lock, so a strongly consistent Query on the LSI sees the write
 * exactly when it commits.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"

#include "common/errors.h"
#include "indexes/indexes.h"

enum
{
	LSI_PLAN_DELETE,
	LSI_PLAN_UPSERT
};

/* The index's prepared plan, preparing it on first use. */
static SPIPlanPtr
lsi_plan(DynIndex *idx, int which)
{
	static Oid	types[6] = {BYTEAOID, BYTEAOID, BYTEAOID, BYTEAOID, INT4OID, JSONBOID};
	const char *sql;
	SPIPlanPtr	plan;

	if (idx->plans[which])
		return idx->plans[which];
	if (which == LSI_PLAN_DELETE)
		sql = psprintf("DELETE FROM %s WHERE %s", idx->storage, DynIndexKeyEquals(idx));
	else
		sql = psprintf("INSERT INTO %s (ipk, isk, pk, sk, size, item) VALUES ($1, $2, $3, $4, $5, $6) "
					   "ON CONFLICT (%s) DO UPDATE SET size = EXCLUDED.size, item = EXCLUDED.item",
					   idx->storage, DynIndexConflictTarget(idx));
	plan = SPI_prepare(sql, which == LSI_PLAN_DELETE ? 4 : 6, types);
	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "could not prepare \"%s\"", sql);
	idx->plans[which] = plan;
	return plan;
}

/* Maintain one LSI after a write. */
void
DynLsiOnWrite(DynTable *t, DynIndex *idx, const DynKey *key, const DynValue *old, const DynValue *new)
{
	bytea	   *oipk = NULL;
	bytea	   *oisk = NULL;
	bytea	   *nipk = NULL;
	bytea	   *nisk = NULL;
	bool		old_in = old && DynIndexEntryKey(t, idx, old, &oipk, &oisk);
	bool		new_in = new && DynIndexEntryKey(t, idx, new, &nipk, &nisk);

	if (old_in && !(new_in && DynByteaEquals(oipk, nipk) && DynByteaEquals(oisk, nisk)))
	{
		Datum		args[4] = {PointerGetDatum(oipk), PointerGetDatum(oisk),
		PointerGetDatum(key->pk), PointerGetDatum(key->sk)};

		if (SPI_execute_plan(lsi_plan(idx, LSI_PLAN_DELETE), args, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not delete LSI entry");
	}
	if (new_in)
	{
		DynValue   *entry = DynIndexProject(t, idx, new);
		Datum		args[6];

		/* same key and same projected entry (e.g. a non-projected attribute changed): nothing to do */
		if (old_in && DynByteaEquals(oipk, nipk) && DynByteaEquals(oisk, nisk) &&
			DynValueEquals(DynIndexProject(t, idx, old), entry))
			return;
		args[0] = PointerGetDatum(nipk);
		args[1] = PointerGetDatum(nisk);
		args[2] = PointerGetDatum(key->pk);
		args[3] = PointerGetDatum(key->sk);
		args[4] = Int32GetDatum((int32) DynItemSize(entry));
		args[5] = JsonbPGetDatum(DynItemToJsonb(entry));

		{
			bool		too_big;

			if (DynStorageExecKeyed(lsi_plan(idx, LSI_PLAN_UPSERT), args, 4, &too_big) != SPI_OK_INSERT && !too_big)
				elog(ERROR, "could not write LSI entry");
			if (too_big)
				DynValidationError("One or more parameter values were invalid: The key of the item is too large for dynindex: "
								   "its entry in local secondary index %s takes %d bytes of keys (dynindex stores keys of up to about 2700 bytes)",
								   idx->name, (int) (VARSIZE_ANY_EXHDR(nipk) + VARSIZE_ANY_EXHDR(nisk) +
													 VARSIZE_ANY_EXHDR(key->pk) + VARSIZE_ANY_EXHDR(key->sk)));
		}
	}
}
