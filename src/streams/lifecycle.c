/*
 * lifecycle.c — enabling and disabling a table's stream.
 *
 * Each enabling creates a row of dynindex.streams (a new stream, labelled
 * with its creation time) and one open shard per bucket.  Disabling (or
 * DeleteTable) sets disabled_at and closes the open shards; the stream's
 * records stay readable until they expire.
 *
 * Both wait for the table's running writers: they lock the storage relation
 * in SHARE mode, which conflicts with the ROW EXCLUSIVE lock every writer
 * takes first (src/write/write.c).  A writer that started earlier has
 * committed by then (its records are in the old state's stream, below the
 * new shards' start or the closed shards' end); a later writer waits for the
 * change to commit, and the invalidation it then receives makes it read the
 * stream state again.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "common/errors.h"
#include "common/wakeup.h"
#include "streams/streams.h"

/* Run a statement with arguments; raise on failure. */
static void
exec_args(const char *sql, int nargs, Oid *types, Datum *args, int expected)
{
	if (SPI_execute_with_args(sql, nargs, types, args, NULL, false, 0) != expected)
		elog(ERROR, "could not execute \"%s\"", sql);
}

/* A stream label: the time in UTC, ISO 8601 with milliseconds. */
static char *
format_label(TimestampTz ts)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
		elog(ERROR, "timestamp out of range");
	return psprintf("%04d-%02d-%02dT%02d:%02d:%02d.%03d", tm.tm_year, tm.tm_mon, tm.tm_mday,
					tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (fsec / 1000));
}

/* Wait for the table's running writers; keep later ones out until commit. */
static void
lock_out_writers(DynTable *t)
{
	if (OidIsValid(t->storage_relid))
		LockRelationOid(t->storage_relid, ShareLock);
}

/* Enable a new stream for a table. */
void
DynStreamEnable(DynTable *t, DynStreamView view)
{
	Oid			types[6] = {TEXTOID, INT8OID, TEXTOID, TEXTOID, INT4OID, TIMESTAMPTZOID};
	Datum		args[6];
	TimestampTz created = GetCurrentTimestamp();
	TimestampTz last;
	bool		isnull;
	int64		stream_id;
	int64		start;
	int			shards = dynindex_stream_shard_count;
	int			b;

	if (!DynStreamsAvailable())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex streams need shared_preload_libraries = 'dynindex'")));
	if (!DynCatalogHasStreams())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex streams need version 0.2 of the extension in this database"),
				 errhint("Run ALTER EXTENSION dynindex UPDATE.")));
	lock_out_writers(t);

	/* labels (and so ARNs) of one table name never repeat: at least 1 ms after the last */
	args[0] = CStringGetTextDatum(t->name);
	exec_args("SELECT max(created_at) FROM dynindex.streams WHERE table_name = $1", 1, types, args, SPI_OK_SELECT);
	last = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	created -= created % 1000;
	if (!isnull && created <= last)
		created = last - last % 1000 + 1000;

	args[1] = Int64GetDatum(t->num);
	args[2] = CStringGetTextDatum(format_label(created));
	args[3] = CStringGetTextDatum(DynStreamViewName(view));
	args[4] = Int32GetDatum(shards);
	args[5] = TimestampTzGetDatum(created);
	exec_args("INSERT INTO dynindex.streams (table_name, table_num, stream_label, view_type, shard_count, created_at) "
			  "VALUES ($1, $2, $3, $4, $5, $6) RETURNING stream_id", 6, types, args, SPI_OK_INSERT_RETURNING);
	stream_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	/* the first shard of each bucket starts here: every later record has a larger seq */
	start = DynStreamNextSeq();
	for (b = 0; b < shards; b++)
	{
		Oid			stypes[5] = {INT8OID, TEXTOID, INT4OID, INT8OID, TIMESTAMPTZOID};
		Datum		sargs[5];

		sargs[0] = Int64GetDatum(stream_id);
		sargs[1] = CStringGetTextDatum(DynStreamShardId(stream_id, b, start));
		sargs[2] = Int32GetDatum(b);
		sargs[3] = Int64GetDatum(start);
		sargs[4] = TimestampTzGetDatum(created);
		exec_args("INSERT INTO dynindex.stream_shards (stream_id, shard_id, bucket, start_seq, created_at) "
				  "VALUES ($1, $2, $3, $4, $5)", 5, stypes, sargs, SPI_OK_INSERT);
	}
	/* make sure this database has a worker: it rotates and trims (maintain.c) */
	DynWorkerWake(MyDatabaseId);
}

/* Disable the table's enabled stream; false if it has none. */
bool
DynStreamDisable(DynTable *t)
{
	Oid			types[2] = {INT8OID, INT8OID};
	Datum		args[2];
	bool		isnull;
	int64		stream_id;

	if (!DynCatalogHasStreams())
		return false;			/* a database still at 0.1 has no streams */
	lock_out_writers(t);
	args[0] = Int64GetDatum(t->num);
	exec_args("UPDATE dynindex.streams SET disabled_at = clock_timestamp() "
			  "WHERE table_num = $1 AND disabled_at IS NULL RETURNING stream_id",
			  1, types, args, SPI_OK_UPDATE_RETURNING);
	if (SPI_processed == 0)
		return false;
	stream_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	/* every record of the stream has a smaller seq than this one (its writers are done) */
	args[0] = Int64GetDatum(stream_id);
	args[1] = Int64GetDatum(DynStreamNextSeq() - 1);
	exec_args("UPDATE dynindex.stream_shards SET end_seq = greatest($2, start_seq), closed_at = clock_timestamp() "
			  "WHERE stream_id = $1 AND end_seq IS NULL", 2, types, args, SPI_OK_UPDATE);
	return true;
}

/* The label of the table's latest stream, or NULL. */
char *
DynStreamLatestLabel(int64 table_num)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];

	/* a 0.1 schema (before ALTER EXTENSION dynindex UPDATE) has no streams */
	if (!OidIsValid(get_relname_relid("streams", get_namespace_oid("dynindex", false))))
		return NULL;
	args[0] = Int64GetDatum(table_num);
	exec_args("SELECT stream_label FROM dynindex.streams WHERE table_num = $1 ORDER BY stream_id DESC LIMIT 1",
			  1, types, args, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/* <table ARN>/stream/<label> */
char *
DynStreamArn(const char *table_name, const char *label)
{
	return psprintf("%s/stream/%s", DynTableArn(table_name), label);
}
