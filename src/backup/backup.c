/*
 * backup.c — item copies of on-demand backups and their restore.
 *
 * A backup's items are one relation, dynindex_backups.b<num>, made by
 * CREATE TABLE ... AS SELECT from the table's storage: a single statement,
 * so one MVCC snapshot, consistent however many writers run meanwhile.  The
 * encoded keys are copied as they are (the restored table has the same key
 * schema, hence the same encodings).
 *
 * A restore inserts the copy into the new table's storage with one
 * INSERT ... SELECT, then walks the items once (a cursor, in key order) and
 * writes every secondary index entry directly: LSIs through the LSI write
 * code, GSIs with their projected entries.  The new table is not visible to
 * anyone before the restore commits, so its GSIs are built here and are
 * ACTIVE at once instead of being backfilled by the worker afterwards: a
 * restored table is complete, indexes included, when the request returns
 * (DynamoDB's restored table becomes ACTIVE only with its indexes too).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/memutils.h"

#include "backup/backup.h"
#include "common/errors.h"
#include "indexes/indexes.h"
#include "storage/storage.h"

/* Items fetched per cursor step while building indexes. */
#define RESTORE_BATCH 1000

/* Run a utility or DML statement, failing on error. */
static void
exec_sql(const char *sql)
{
	if (SPI_execute(sql, false, 0) < 0)
		elog(ERROR, "could not run \"%s\"", sql);
}

/* Copy a table's items into a new relation. */
void
DynBackupCopyItems(const char *storage, const char *copy, int64 *count, int64 *bytes)
{
	bool		isnull;

	exec_sql(psprintf("CREATE TABLE %s AS SELECT pk, sk, size, item FROM %s", copy, storage));
	exec_sql(psprintf("ALTER TABLE %s ADD PRIMARY KEY (pk, sk)", copy));
	/* the copy is written only here: refuse direct writes as for storage */
	DynStorageAddGuard(copy);
	if (SPI_execute(psprintf("SELECT count(*), coalesce(sum(size), 0)::int8 FROM %s", copy), false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count the items of a backup");
	*count = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	*bytes = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
}

/* Drop a backup's item copy. */
void
DynBackupDropCopy(const char *copy)
{
	exec_sql(psprintf("DROP TABLE IF EXISTS %s", copy));
}

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

/* Fill a new table from a backup's copy and build its indexes. */
void
DynBackupRestoreItems(DynTable *t, const char *copy)
{
	static Oid	types[6] = {BYTEAOID, BYTEAOID, BYTEAOID, BYTEAOID, INT4OID, JSONBOID};
	SPIPlanPtr *gsi_plans;
	SPIPlanPtr	scan;
	Portal		portal;
	int			i;

	exec_sql(psprintf("INSERT INTO %s (pk, sk, size, item) SELECT pk, sk, size, item FROM %s", t->storage, copy));
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
	scan = SPI_prepare(psprintf("SELECT pk, sk, item FROM %s ORDER BY pk, sk", copy), 0, NULL);
	if (scan == NULL)
		elog(ERROR, "could not prepare the restore scan");
	portal = SPI_cursor_open(NULL, scan, NULL, NULL, true);
	for (;;)
	{
		SPITupleTable *rows;
		uint64		n;
		uint64		r;
		MemoryContext batch = AllocSetContextCreate(CurrentMemoryContext, "dynindex restore batch",
													ALLOCSET_DEFAULT_SIZES);
		MemoryContext old;

		SPI_cursor_fetch(portal, true, RESTORE_BATCH);
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
