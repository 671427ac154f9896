/*
 * maintain.c — shard lineage and retention of streams, run by the
 * per-database worker every dynindex.stream_maintenance_interval and on
 * demand by dynindex.maintain_streams():
 *
 *  - every bucket of an enabled stream has a shard (its first starts at 0);
 *  - an open shard older than dynindex.stream_shard_lifetime (4 hours, as
 *    DynamoDB) closes at end_seq = horizon - 1 and its child starts at the
 *    horizon: every record below the horizon is settled, so none falls
 *    outside the two ranges;
 *  - the open shards of a disabled stream close the same way (no child);
 *  - records older than dynindex.stream_retention (24 hours) are deleted per
 *    bucket up to a seq (the bucket's trim point, kept in
 *    dynindex.stream_trim, so an iterator behind it gets
 *    TrimmedDataAccessException);
 *  - closed shards older than the retention with no record left, and
 *    disabled streams older than it with no shard left, are removed.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "streams/streams.h"

int			dynindex_stream_shard_lifetime_s = 4 * 3600;
int			dynindex_stream_retention_s = 24 * 3600;
int			dynindex_stream_maintenance_interval_s = 5;
int			dynindex_stream_iterator_lifetime_s = 15 * 60;

/* At most this many records per bucket are trimmed per round. */
#define TRIM_BATCH 10000
/* Advisory lock key of the maintenance (one at a time per database). */
#define MAINTAIN_LOCK_KEY 5526349

typedef struct MaintainCounts
{
	int64		opened;
	int64		closed;
	int64		trimmed;
	int64		removed_shards;
	int64		removed_streams;
} MaintainCounts;

/* GUCs (from _PG_init). */
void
DynStreamsMaintainInit(void)
{
	DefineCustomIntVariable("dynindex.stream_shard_lifetime",
							"Seconds after which an open stream shard closes and a child shard succeeds it.",
							NULL, &dynindex_stream_shard_lifetime_s, 4 * 3600, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.stream_retention",
							"Seconds stream records are kept before the worker trims them.",
							NULL, &dynindex_stream_retention_s, 24 * 3600, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.stream_maintenance_interval",
							"Seconds between the worker's stream maintenance rounds (shard rotation, trimming); 0 disables them.",
							NULL, &dynindex_stream_maintenance_interval_s, 5, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.stream_iterator_lifetime",
							"Seconds a shard iterator stays valid (DynamoDB: 15 minutes).",
							NULL, &dynindex_stream_iterator_lifetime_s, 15 * 60, 0, 86400,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);
}

/* Run one statement with arguments; returns the rows it processed. */
static uint64
run(const char *sql, int nargs, Oid *types, Datum *args, int expect)
{
	int			rc = SPI_execute_with_args(sql, nargs, types, args, NULL, false, 0);

	if (rc != expect)
		elog(ERROR, "stream maintenance statement failed (%d): %s", rc, sql);
	return SPI_processed;
}

/* Close open shards due (rotation, disabled streams) and open their children. */
static void
rotate_shards(int64 horizon, MaintainCounts *c)
{
	SPITupleTable *tt;
	uint64		n;
	uint64		i;
	char	   *sql;

	/*
	 * Due: the open shards of enabled streams older than the lifetime that
	 * hold a settled seq range (start < horizon).  DisableStream closes the
	 * shards of a disabled stream itself (src/streams/lifecycle.c); an open
	 * one left there (none should be) closes here too, without a child.
	 */
	sql = psprintf("SELECT h.stream_id, h.shard_id, h.bucket, h.start_seq, s.disabled_at IS NOT NULL "
				   "FROM dynindex.stream_shards h JOIN dynindex.streams s USING (stream_id) "
				   "WHERE h.end_seq IS NULL AND (s.disabled_at IS NOT NULL OR "
				   "(h.created_at <= now() - make_interval(secs => %d) AND h.start_seq < " INT64_FORMAT ")) "
				   "ORDER BY h.stream_id, h.shard_id",
				   dynindex_stream_shard_lifetime_s, horizon);
	if (SPI_execute(sql, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the shards due to close");
	tt = SPI_tuptable;
	n = SPI_processed;
	for (i = 0; i < n; i++)
	{
		bool		isnull;
		int64		stream_id = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull));
		char	   *shard_id = SPI_getvalue(tt->vals[i], tt->tupdesc, 2);
		int			bucket = DatumGetInt32(SPI_getbinval(tt->vals[i], tt->tupdesc, 3, &isnull));
		int64		start = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 4, &isnull));
		bool		disabled = DatumGetBool(SPI_getbinval(tt->vals[i], tt->tupdesc, 5, &isnull));
		Oid			ctypes[3] = {INT8OID, TEXTOID, INT8OID};
		Datum		cargs[3];

		/* an empty range (end = start - 1) when nothing settled in it */
		cargs[0] = Int64GetDatum(stream_id);
		cargs[1] = CStringGetTextDatum(shard_id);
		cargs[2] = Int64GetDatum(Max(horizon, start) - 1);
		c->closed += run("UPDATE dynindex.stream_shards SET end_seq = $3, closed_at = now() "
						 "WHERE stream_id = $1 AND shard_id = $2 AND end_seq IS NULL",
						 3, ctypes, cargs, SPI_OK_UPDATE);
		if (!disabled)
		{
			Oid			itypes[5] = {INT8OID, TEXTOID, INT4OID, TEXTOID, INT8OID};
			Datum		iargs[5];

			iargs[0] = Int64GetDatum(stream_id);
			iargs[1] = CStringGetTextDatum(DynStreamShardId(stream_id, bucket, horizon));
			iargs[2] = Int32GetDatum(bucket);
			iargs[3] = CStringGetTextDatum(shard_id);
			iargs[4] = Int64GetDatum(horizon);
			c->opened += run("INSERT INTO dynindex.stream_shards "
							 "(stream_id, shard_id, bucket, parent_shard_id, start_seq, created_at) "
							 "VALUES ($1, $2, $3, $4, $5, now()) ON CONFLICT DO NOTHING",
							 5, itypes, iargs, SPI_OK_INSERT);
		}
	}
}

/* Trim records older than the retention, per bucket up to a seq. */
static void
trim_records(int64 horizon, MaintainCounts *c)
{
	Oid			types[3] = {INT4OID, INT8OID, INT4OID};
	Datum		args[3];
	bool		isnull;

	args[0] = Int32GetDatum(dynindex_stream_retention_s);
	args[1] = Int64GetDatum(horizon);
	args[2] = Int32GetDatum(TRIM_BATCH);

	/*
	 * Per bucket, the trim point is the highest settled seq, among the
	 * bucket's oldest TRIM_BATCH records, created before the cutoff; every
	 * record up to it goes, so "seq <= trim point" is exactly what is gone.
	 */
	run("WITH cut AS ("
		"  SELECT s.stream_id, b.bucket, "
		"    (SELECT max(x.seq) FROM (SELECT r.seq, r.created_at FROM dynindex.stream_records r "
		"       WHERE r.stream_id = s.stream_id AND r.bucket = b.bucket AND r.seq < $2 "
		"       ORDER BY r.seq LIMIT $3) x "
		"     WHERE x.created_at < now() - make_interval(secs => $1)) AS upto "
		"  FROM dynindex.streams s CROSS JOIN LATERAL generate_series(0, s.shard_count - 1) AS b(bucket)), "
		"del AS ("
		"  DELETE FROM dynindex.stream_records r USING cut "
		"  WHERE cut.upto IS NOT NULL AND r.stream_id = cut.stream_id AND r.bucket = cut.bucket AND r.seq <= cut.upto "
		"  RETURNING 1), "
		"tp AS ("
		"  INSERT INTO dynindex.stream_trim (stream_id, bucket, trimmed_seq) "
		"  SELECT stream_id, bucket, upto FROM cut WHERE upto IS NOT NULL "
		"  ON CONFLICT (stream_id, bucket) DO UPDATE SET trimmed_seq = greatest(dynindex.stream_trim.trimmed_seq, excluded.trimmed_seq) "
		"  RETURNING 1) "
		"SELECT (SELECT count(*) FROM del), (SELECT count(*) FROM tp)",
		3, types, args, SPI_OK_SELECT);
	c->trimmed += DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* Remove closed shards and disabled streams that have nothing left. */
static void
remove_empty(MaintainCounts *c)
{
	Oid			types[1] = {INT4OID};
	Datum		args[1];

	args[0] = Int32GetDatum(dynindex_stream_retention_s);
	c->removed_shards += run("DELETE FROM dynindex.stream_shards h "
							 "WHERE h.end_seq IS NOT NULL AND h.closed_at < now() - make_interval(secs => $1) "
							 "AND NOT EXISTS (SELECT 1 FROM dynindex.stream_records r WHERE r.stream_id = h.stream_id "
							 "  AND r.bucket = h.bucket AND r.seq BETWEEN h.start_seq AND h.end_seq)",
							 1, types, args, SPI_OK_DELETE);
	c->removed_streams += run("WITH gone AS (DELETE FROM dynindex.streams s "
							  "  WHERE s.disabled_at IS NOT NULL AND s.disabled_at < now() - make_interval(secs => $1) "
							  "  AND NOT EXISTS (SELECT 1 FROM dynindex.stream_shards h WHERE h.stream_id = s.stream_id) "
							  "  AND NOT EXISTS (SELECT 1 FROM dynindex.stream_records r WHERE r.stream_id = s.stream_id) "
							  "  RETURNING s.stream_id), "
							  "t AS (DELETE FROM dynindex.stream_trim t USING gone WHERE t.stream_id = gone.stream_id) "
							  "SELECT stream_id FROM gone",
							  1, types, args, SPI_OK_SELECT);
}

/*
 * One maintenance round inside the caller's transaction and SPI connection.
 * Returns false when another session holds the maintenance lock.
 */
static bool
maintain(MaintainCounts *c)
{
	int64		horizon;
	bool		isnull;

	if (SPI_execute("SELECT pg_try_advisory_xact_lock(" CppAsString2(MAINTAIN_LOCK_KEY) ")", false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not take the stream maintenance lock");
	if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		return false;
	horizon = DynStreamReadHorizon();
	rotate_shards(horizon, c);
	trim_records(horizon, c);
	remove_empty(c);
	return true;
}

PG_FUNCTION_INFO_V1(dynindex_maintain_streams);

/* dynindex.maintain_streams() RETURNS jsonb: one maintenance round now. */
Datum
dynindex_maintain_streams(PG_FUNCTION_ARGS)
{
	MaintainCounts c = {0};
	bool		done;
	char	   *json;
	int			nestlevel;

	DynStreamCheckIsolation();
	/* no JIT for the round's statements (estimated above jit_above_cost: 140 ms of compiling) */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	done = maintain(&c);
	SPI_finish();
	AtEOXact_GUC(true, nestlevel);
	json = psprintf("{\"ran\": %s, \"opened_shards\": " INT64_FORMAT ", \"closed_shards\": " INT64_FORMAT
					", \"trimmed_records\": " INT64_FORMAT ", \"removed_shards\": " INT64_FORMAT
					", \"removed_streams\": " INT64_FORMAT "}",
					done ? "true" : "false", c.opened, c.closed, c.trimmed, c.removed_shards, c.removed_streams);
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
}

/*
 * When the next round has something to do, as far as the rows say now: the
 * oldest open shard of an enabled stream holding settled records reaches
 * the lifetime, an open shard of a disabled stream (now), the oldest record
 * reaches the retention, a closed shard or a disabled stream reaches it.
 * Rows written later are due no earlier than now + min(lifetime,
 * retention), which bounds the answer (an idle stream's open shard holds no
 * settled record: it rotates once it has some, within that bound).  One
 * index probe per stream bucket.
 */
static TimestampTz
next_due(int64 horizon)
{
	Oid			types[3] = {INT4OID, INT4OID, INT8OID};
	Datum		args[3];
	bool		isnull;
	Datum		d;

	args[0] = Int32GetDatum(dynindex_stream_shard_lifetime_s);
	args[1] = Int32GetDatum(dynindex_stream_retention_s);
	args[2] = Int64GetDatum(horizon);
	run("SELECT least("
		" (SELECT min(h.created_at) FROM dynindex.stream_shards h JOIN dynindex.streams s USING (stream_id)"
		"   WHERE h.end_seq IS NULL AND s.disabled_at IS NULL AND h.start_seq < $3) + make_interval(secs => $1),"
		" (SELECT now() FROM dynindex.stream_shards h JOIN dynindex.streams s USING (stream_id)"
		"   WHERE h.end_seq IS NULL AND s.disabled_at IS NOT NULL LIMIT 1),"
		" (SELECT min(x.created_at) FROM dynindex.streams s"
		"   CROSS JOIN LATERAL generate_series(0, s.shard_count - 1) AS b(bucket)"
		"   CROSS JOIN LATERAL (SELECT r.created_at FROM dynindex.stream_records r"
		"     WHERE r.stream_id = s.stream_id AND r.bucket = b.bucket ORDER BY r.seq LIMIT 1) x)"
		"   + make_interval(secs => $2),"
		" (SELECT min(h.closed_at) FROM dynindex.stream_shards h WHERE h.end_seq IS NOT NULL) + make_interval(secs => $2),"
		" (SELECT min(s.disabled_at) FROM dynindex.streams s WHERE s.disabled_at IS NOT NULL) + make_interval(secs => $2),"
		" now() + make_interval(secs => least($1, $2)))",
		3, types, args, SPI_OK_SELECT);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? 0 : DatumGetTimestampTz(d);
}

/*
 * The worker's round, in its own transaction.  An error is reported and
 * dropped (the next round tries again), never raised: the caller's GSI
 * loop must go on.  A database still at 0.1 (no stream tables) is skipped.
 * Returns when the next round is due: next_due(), but not before the
 * maintenance interval (an overdue shard with nothing settled waits for its
 * writers that long); after an error or while another session maintains,
 * in an interval.
 */
TimestampTz
DynStreamsMaintainDatabase(void)
{
	MemoryContext cxt = CurrentMemoryContext;
	TimestampTz start = GetCurrentTimestamp();
	TimestampTz earliest = TimestampTzPlusMilliseconds(start, (int64) dynindex_stream_maintenance_interval_s * 1000);
	volatile TimestampTz next = earliest;

	PG_TRY();
	{
		MaintainCounts c = {0};
		bool		isnull;
		bool		present;

		/* now() is the transaction's start: in a worker, set it (else it stays at the worker's start) */
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		PushActiveSnapshot(GetTransactionSnapshot());
		if (SPI_execute("SELECT to_regclass('dynindex.stream_trim') IS NOT NULL", true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not look for the stream tables");
		present = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		if (present && maintain(&c))
			next = next_due(DynStreamReadHorizon());
		else if (!present)
			next = TimestampTzPlusMilliseconds(start, (int64) Min(dynindex_stream_shard_lifetime_s,
																	dynindex_stream_retention_s) * 1000);	/* 0.1: no stream yet */
		PopActiveSnapshot();
		SPI_finish();
		CommitTransactionCommand();
		if (c.closed + c.trimmed + c.removed_shards + c.removed_streams > 0)
			elog(DEBUG1, "dynindex: streams: " INT64_FORMAT " shards closed, " INT64_FORMAT " records trimmed",
				 c.closed, c.trimmed);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		next = earliest;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	return next != 0 && next > earliest ? next : earliest;
}
