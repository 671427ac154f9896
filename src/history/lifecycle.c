/*
 * lifecycle.c — enabling and disabling point-in-time recovery, keeping a
 * deleted table restorable, and the restorable window.
 *
 * Enabling creates the history relation and the table's row of
 * dynindex.pitr; disabling drops both (DynamoDB forgets the window when PITR
 * is turned off).  Both lock the storage relation SHARE, which conflicts
 * with the ROW EXCLUSIVE lock every writer takes first (write/write.c), as
 * enabling a stream does: running writers finish first (they committed
 * before the enable's stamp, so restores from it on do not need their
 * history), and a writer arriving meanwhile waits, then sees the
 * invalidation and captures.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/wakeup.h"
#include "history/history.h"
#include "storage/storage.h"

/* Run a statement with arguments; raise on failure. */
static void
exec_args(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls, int expected)
{
	if (SPI_execute_with_args(sql, nargs, types, args, nulls, false, 0) != expected)
		elog(ERROR, "could not execute \"%s\"", sql);
}

/* dynindex_history.h<num> */
char *
DynHistoryRelation(int64 table_num)
{
	return psprintf("%s.h%lld", DYN_HISTORY_SCHEMA, (long long) table_num);
}

/* Raise unless the database has the PITR catalog (0.3). */
static void
check_catalog(void)
{
	if (!DynCatalogHasPitr())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex point-in-time recovery needs version 0.3 of the extension in this database"),
				 errhint("Run ALTER EXTENSION dynindex UPDATE.")));
}

/* Enable PITR for a table, or change its recovery period. */
void
DynHistoryEnable(DynTable *t, int days)
{
	Datum		args[6];
	char	   *history = DynHistoryRelation(t->num);

	if (!DynHistoryAvailable())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex point-in-time recovery needs shared_preload_libraries = 'dynindex'")));
	check_catalog();
	/* a distributed table's writes commit on the Citus workers: their history is not ours to stamp */
	if (DynStorageIsDistributed(t->storage))
		DynValidationError("Point in time recovery is not supported by dynindex for tables distributed with Citus: %s", t->name);

	args[0] = Int64GetDatum(t->num);
	args[4] = Int32GetDatum(days);
	exec_args("UPDATE dynindex.pitr SET recovery_days = $5 WHERE table_num = $1 AND deleted_at IS NULL",
			  5, (Oid[]) {INT8OID, TEXTOID, TEXTOID, TEXTOID, INT4OID}, args, "     ", SPI_OK_UPDATE);
	if (SPI_processed > 0)
	{
		DynCatalogChanged();
		return;					/* already enabled: a new period */
	}

	/*
	 * Wait for the table's running writers; later ones wait for us.  The
	 * history: its primary key finds a key's version at T; a BRIN index on
	 * valid_to (rows arrive in about stamp order, and a BRIN insert costs
	 * next to nothing, unlike a second btree) finds the rows of a time range
	 * for the trim and for DynHistoryChanges.
	 */
	if (OidIsValid(t->storage_relid))
		LockRelationOid(t->storage_relid, ShareLock);
	if (SPI_execute(psprintf("CREATE TABLE %s (pk bytea NOT NULL, sk bytea NOT NULL, valid_to timestamptz NOT NULL, "
							 "size int4 NOT NULL, item jsonb, PRIMARY KEY (pk, sk, valid_to))", history),
					false, 0) != SPI_OK_UTILITY ||
		SPI_execute(psprintf("CREATE INDEX ON %s USING brin (valid_to)", history), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create the history of table %s", t->name);
	args[1] = CStringGetTextDatum(t->name);
	args[2] = CStringGetTextDatum(DynTableArn(t->name));
	args[3] = CStringGetTextDatum(history);
	/* every write capturing nothing committed before this stamp; every later one captures */
	args[5] = TimestampTzGetDatum(DynHistoryNextStamp());
	exec_args("INSERT INTO dynindex.pitr (table_num, table_name, table_arn, history, recovery_days, enabled_at) "
			  "VALUES ($1, $2, $3, $4, $5, $6)",
			  6, (Oid[]) {INT8OID, TEXTOID, TEXTOID, TEXTOID, INT4OID, TIMESTAMPTZOID}, args, NULL, SPI_OK_INSERT);
	DynCatalogChanged();
	/* the worker trims the history (trim.c) */
	DynWorkerWake(MyDatabaseId);
}

/* Disable PITR and drop the history; false if it was off. */
bool
DynHistoryDisable(DynTable *t)
{
	Datum		args[1];

	if (!DynCatalogHasPitr())
		return false;
	if (OidIsValid(t->storage_relid))
		LockRelationOid(t->storage_relid, ShareLock);
	args[0] = Int64GetDatum(t->num);
	exec_args("DELETE FROM dynindex.pitr WHERE table_num = $1 AND deleted_at IS NULL",
			  1, (Oid[]) {INT8OID}, args, NULL, SPI_OK_DELETE);
	if (SPI_processed == 0)
		return false;
	if (SPI_execute(psprintf("DROP TABLE IF EXISTS %s", DynHistoryRelation(t->num)), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not drop the history of table %s", t->name);
	DynCatalogChanged();
	return true;
}

/*
 * DeleteTable of a table with PITR: move its storage relation into the
 * history schema (ALTER ... SET SCHEMA waits for its running writers and
 * makes later ones fail, as a drop would) and record the deletion stamp and
 * the definition; the worker drops both when the window closes.
 */
bool
DynHistoryKeepDeleted(DynTable *t, Jsonb *definition)
{
	Datum		args[4];
	char		nulls[5] = "    ";
	const char *relname;

	if (!DynCatalogHasPitr() || t->pitr.days == 0)
		return false;
	relname = strchr(t->storage, '.') ? strchr(t->storage, '.') + 1 : t->storage;
	if (SPI_execute(psprintf("ALTER TABLE %s SET SCHEMA %s", t->storage, DYN_HISTORY_SCHEMA), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not keep the storage of deleted table %s", t->name);
	args[0] = Int64GetDatum(t->num);
	args[1] = TimestampTzGetDatum(DynHistoryNextStamp());
	args[2] = CStringGetTextDatum(psprintf("%s.%s", DYN_HISTORY_SCHEMA, relname));
	if (definition)
		args[3] = JsonbPGetDatum(definition);
	else
		nulls[3] = 'n';
	exec_args("UPDATE dynindex.pitr SET deleted_at = $2, kept_storage = $3, definition = $4 "
			  "WHERE table_num = $1 AND deleted_at IS NULL",
			  4, (Oid[]) {INT8OID, TIMESTAMPTZOID, TEXTOID, JSONBOID}, args, nulls, SPI_OK_UPDATE);
	DynCatalogChanged();
	return SPI_processed > 0;
}

/* The restorable window of a table; false when PITR is off. */
bool
DynHistoryWindow(DynTable *t, TimestampTz *earliest, TimestampTz *latest)
{
	TimestampTz from;

	if (t->pitr.days == 0)
		return false;
	from = GetCurrentTimestamp() - (TimestampTz) t->pitr.days * USECS_PER_DAY;
	*earliest = Max(t->pitr.enabled_at, from);
	*latest = DynHistoryHorizon();
	return true;
}
