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
 * INSERT ... SELECT, then builds every secondary index from the items
 * (indexes/build.c).  The new table is not visible to anyone before the
 * restore commits, so its GSIs are ACTIVE at once instead of being
 * backfilled by the worker afterwards: a restored table is complete, indexes
 * included, when the request returns (DynamoDB's restored table becomes
 * ACTIVE only with its indexes too).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"

#include "backup/backup.h"
#include "common/errors.h"
#include "indexes/indexes.h"
#include "storage/storage.h"

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

/* Fill a new table from a backup's copy and build its indexes. */
void
DynBackupRestoreItems(DynTable *t, const char *copy)
{
	exec_sql(psprintf("INSERT INTO %s (pk, sk, size, item) SELECT pk, sk, size, item FROM %s", t->storage, copy));
	DynIndexesBuildFrom(t, t->storage);
}
