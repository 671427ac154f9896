/*
 * read.c — the read side of streams shared by the Streams API and SQL:
 * sequence numbers, shard ids, stream ARNs, first shards, trim points, and
 * dynindex.stream_changes(), the SQL consumer.
 *
 * A record is read only once its seq is below DynStreamReadHorizon() (every
 * seq below it is settled: visible to a snapshot taken after the call, or
 * never), so a reader that remembers the last seq it returned neither skips
 * nor repeats a record.  docs/streams.md describes the model.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "streams/streams.h"
#include "security/security.h"

/* Parse a SequenceNumber of ours; false if it is not one. */
bool
DynStreamParseSeq(const char *s, int len, int64 *seq)
{
	int64		v = 0;
	int			i;

	if (len != DYN_STREAM_SEQ_DIGITS)
		return false;
	for (i = 0; i < len; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (PG_INT64_MAX - (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*seq = v;
	return true;
}

/* Split a stream ARN into table name and label; false if it is not one. */
bool
DynStreamParseArn(const char *arn, int len, char **table_name, char **label)
{
	char	   *s = pnstrdup(arn, len);
	char	   *t;
	char	   *st;
	char	   *p;
	int			colons = 0;

	if (strncmp(s, "arn:", 4) != 0 || strlen(s) != (size_t) len)
		return false;
	/* arn:<partition>:dynamodb:<region>:<account>:table/<name>/stream/<label> */
	for (p = s; *p && colons < 5; p++)
		if (*p == ':')
			colons++;
	if (colons < 5 || strncmp(p, "table/", 6) != 0)
		return false;
	t = p + 6;
	st = strstr(t, "/stream/");
	if (st == NULL || st - t < 3 || st - t > 255)
		return false;
	for (p = t; p < st; p++)
		if (!(isalnum((unsigned char) *p) || *p == '_' || *p == '.' || *p == '-'))
			return false;
	if (st[8] == '\0' || strchr(st + 8, '/') != NULL)
		return false;
	*table_name = pnstrdup(t, st - t);
	*label = pstrdup(st + 8);
	return true;
}

/* Highest trimmed seq of a stream's bucket (-1: nothing trimmed). */
int64
DynStreamTrimmedSeq(int64 stream_id, int bucket)
{
	Oid			types[2] = {INT8OID, INT4OID};
	Datum		args[2];
	bool		isnull;

	args[0] = Int64GetDatum(stream_id);
	args[1] = Int32GetDatum(bucket);
	if (SPI_execute_with_args("SELECT trimmed_seq FROM dynindex.stream_trim WHERE stream_id = $1 AND bucket = $2",
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the trim point of a stream");
	if (SPI_processed == 0)
		return -1;
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Stream reads take the horizon and then a new snapshot; in REPEATABLE READ
 * or SERIALIZABLE the snapshot is the transaction's, older than the horizon,
 * and a record below it could be skipped.  Refuse instead.
 */
void
DynStreamCheckIsolation(void)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("dynindex stream reads need the READ COMMITTED isolation level"),
				 errhint("Read the stream in its own READ COMMITTED transaction.")));
}

PG_FUNCTION_INFO_V1(dynindex_stream_changes);

/*
 * dynindex.stream_changes(table_name text, after_sequence_number text DEFAULT
 * NULL, max_records int DEFAULT 1000) RETURNS TABLE (...): the table's stream
 * records after a position, across all its streams and shards in seq order,
 * only up to the horizon.
 */
Datum
dynindex_stream_changes(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *table_name;
	int64		after = -1;
	int			max_records;
	int64		horizon;
	Oid			types[4] = {TEXTOID, INT8OID, INT8OID, INT4OID};
	Datum		args[4];
	MemoryContext oldcxt;
	uint64		i;
	DynSecurityOp sec_op;
	DynSecurityState sec;

	InitMaterializedSRF(fcinfo, 0);
	if (PG_ARGISNULL(0))
		return (Datum) 0;
	table_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	max_records = PG_ARGISNULL(2) ? 1000 : PG_GETARG_INT32(2);
	if (max_records < 1 || max_records > 10000)
		DynValidationError("max_records must be between 1 and 10000: %d", max_records);
	if (!PG_ARGISNULL(1))
	{
		char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(1));

		if (!DynStreamParseSeq(s, strlen(s), &after))
			DynValidationError("Invalid SequenceNumber: %s", s);
	}
	DynStreamCheckIsolation();

	DynCatalogRevalidate();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the stream right on the table; the records are read with the owner's rights */
	DynSecurityEnter("stream_changes", &sec_op);
	PG_TRY();
	{
		DynCatalogCheckTableRight(table_name, DYN_ACCESS_STREAM);
	}
	PG_FINALLY();
	{
		DynSecurityLeave(&sec_op);
	}
	PG_END_TRY();
	DynSecurityBeginInternal(&sec);
	args[0] = CStringGetTextDatum(table_name);
	if (SPI_execute_with_args("SELECT 1 FROM dynindex.streams WHERE table_name = $1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the streams of a table");
	if (SPI_processed == 0)
	{
		/* no stream ever: the table must exist */
		(void) DynCatalogGetTableOrNotFound(table_name);
		DynSecurityEndInternal(&sec);
		SPI_finish();
		return (Datum) 0;
	}
	if (after >= 0)
	{
		args[1] = Int64GetDatum(after);
		if (SPI_execute_with_args("SELECT 1 FROM dynindex.stream_trim t JOIN dynindex.streams s USING (stream_id) "
								  "WHERE s.table_name = $1 AND t.trimmed_seq > $2",
								  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the trim points of a table's streams");
		if (SPI_processed > 0)
			DynError(DYN_ERR_TRIMMED_DATA_ACCESS, "The data you are trying to access has been trimmed");
	}
	else
	{
		/* from the oldest record kept */
		args[1] = Int64GetDatum(-1);
	}
	horizon = DynStreamReadHorizon();
	args[2] = Int64GetDatum(horizon);
	args[3] = Int32GetDatum(max_records);
	/* read_only = false: a snapshot taken after the horizon */
	if (SPI_execute_with_args(
							  "SELECT r.seq, r.event_name, r.keys, r.new_image, r.old_image, r.created_at, "
							  "r.size_bytes, r.user_identity, s.stream_label, s.view_type "
							  "FROM dynindex.streams s "
							  "CROSS JOIN LATERAL generate_series(0, s.shard_count - 1) AS b(bucket) "
							  "CROSS JOIN LATERAL (SELECT * FROM dynindex.stream_records r "
							  "  WHERE r.stream_id = s.stream_id AND r.bucket = b.bucket AND r.seq > $2 AND r.seq < $3 "
							  "  ORDER BY r.seq LIMIT $4) r "
							  "WHERE s.table_name = $1 ORDER BY r.seq LIMIT $4",
							  4, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read stream records");

	oldcxt = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		Datum		values[10];
		bool		nulls[10];
		bool		isnull;
		int			c;

		for (c = 0; c < 10; c++)
		{
			values[c] = SPI_getbinval(tup, td, c + 1, &nulls[c]);
			if (!nulls[c] && c != 0)
				values[c] = SPI_datumTransfer(values[c], TupleDescAttr(td, c)->attbyval,
											  TupleDescAttr(td, c)->attlen);
		}
		values[0] = CStringGetTextDatum(DynStreamFormatSeq(DatumGetInt64(SPI_getbinval(tup, td, 1, &isnull))));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextSwitchTo(oldcxt);
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return (Datum) 0;
}
