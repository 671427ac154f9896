/*
 * export.c — the export job: a table's items as of ExportTime (full), or
 * the keys changed between two times (incremental), written to the
 * bucket's object store in DynamoDB's layout (export.h).
 *
 * The items come from the item history (history/): DynHistoryScanAt reads
 * the table as of ExportTime from one snapshot and DynHistoryChanges the
 * changes of a window, both in bounded memory and without locks writers
 * wait for.  Each data file is gzip'd as it is written (zlib, level 1:
 * the export is bound by compression otherwise) and streamed to the store
 * (multipart upload for S3), so memory stays flat as the table grows.
 * The job is background work: its process runs under SCHED_IDLE, and while
 * other sessions write it pauses between slices of its work
 * (pace_for_writers), so the table's writers keep their throughput.
 *
 * A run that is interrupted (crash, restart) is run again by the job
 * runner from the start, at the same ExportTime: the data files of the
 * earlier attempt are deleted first, so the export's data/ holds exactly
 * the files its manifest names.  Progress shows in pg_stat_activity
 * (dynindex.export_status reads it) as "export <id>: <n> items".
 */
#include "postgres.h"

#include <sched.h>
#include <sys/resource.h>
#include <zlib.h>

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/md5.h"
#include "executor/instrument.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "catalog/dyn_catalog.h"
#include "common/arn.h"
#include "exchange/export.h"
#include "exchange/objstore.h"
#include "history/history.h"
#include "security/security.h"
#include "types/types.h"

/* a data file is closed after this many uncompressed bytes and a new one started */
#define EXPORT_FILE_BYTES ((int64) dynindex_export_file_size_mb * 1024 * 1024)
/* compressed output is handed to the store in pieces of this size */
#define EXPORT_CHUNK (256 * 1024)
/* progress is reported every this many items */
#define EXPORT_PROGRESS_EVERY 10000
/* the job looks for writers (pace_for_writers) every this many items, after this much time (µs) */
#define EXPORT_PACE_EVERY 64
#define EXPORT_SLICE_US 10000
#define EXPORT_SLICE_MAX_US (4 * EXPORT_SLICE_US)
/* WAL bytes of other processes in a slice below which they do not count as writers */
#define EXPORT_WAL_NOISE 1024

int			dynindex_export_nice = 10;
bool		dynindex_export_sched_idle = true;
int			dynindex_export_file_size_mb = 1024;
int			dynindex_export_yield = 90;

/* What the job reads of its row of dynindex.exports. */
typedef struct ExportJob
{
	int64		id;
	char	   *export_arn;
	char	   *export_id;		/* 14 digits '-' 8 hex */
	char	   *table_name;
	char	   *table_arn;
	char	   *table_id;
	char	   *bucket;
	char	   *bucket_owner;
	char	   *prefix;			/* S3Prefix or NULL */
	char	   *sse_algorithm;
	char	   *sse_kms_key_id;
	bool		ion;
	bool		incremental;
	bool		new_and_old;
	TimestampTz export_time;
	TimestampTz from_time;
	TimestampTz to_time;
	TimestampTz start_time;
} ExportJob;

/* One data file being written. */
typedef struct DataFile
{
	DynObjWriter *w;
	char	   *key;
	z_stream	z;
	bool		z_open;
	pg_cryptohash_ctx *md5;
	int64		items;
	int64		raw_bytes;
	char	   *outbuf;
} DataFile;

/* The state of a run. */
typedef struct ExportState
{
	ExportJob  *job;
	DynTable   *table;
	DynObjStore *store;
	char	   *base;			/* <prefix>/AWSDynamoDB/<ExportId>/ */
	char	   *data_dir;		/* where data files go */
	DataFile   *file;
	StringInfoData line;
	StringInfoData manifest;	/* manifest-files.json */
	int64		items;
	int64		bytes;			/* billed: the items' DynamoDB sizes */
	int			files;
	MemoryContext cxt;			/* the run's: the scan calls back in short-lived contexts */
	/* pace_for_writers: the current slice of work */
	TimestampTz slice_start;	/* when it started */
	XLogRecPtr	slice_wal;		/* the server's WAL insert position then */
	int64		slice_own_wal;	/* this process's WAL bytes (pgWalUsage) then */
	FullTransactionId slice_xid;	/* the next transaction id then */
	int64		paused_us;		/* time given to writers */
} ExportState;

/* ---------------------------------------------------------------- helpers */

/* ISO 8601 UTC with milliseconds, as the manifests write times. */
static char *
iso_time(TimestampTz t)
{
	pg_time_t	secs = timestamptz_to_time_t(t);
	int			ms = (int) ((t % USECS_PER_SEC + USECS_PER_SEC) % USECS_PER_SEC / 1000);
	struct pg_tm *tm = pg_gmtime(&secs);
	char		buf[64];

	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec, ms);
	return pstrdup(buf);
}

/* Standard base64 of a short binary value. */
static char *
base64(const uint8 *data, int len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	StringInfoData o;

	initStringInfo(&o);
	for (int i = 0; i < len; i += 3)
	{
		uint32		v = data[i] << 16 | (i + 1 < len ? data[i + 1] << 8 : 0) | (i + 2 < len ? data[i + 2] : 0);

		appendStringInfoChar(&o, tab[(v >> 18) & 63]);
		appendStringInfoChar(&o, tab[(v >> 12) & 63]);
		appendStringInfoChar(&o, i + 1 < len ? tab[(v >> 6) & 63] : '=');
		appendStringInfoChar(&o, i + 2 < len ? tab[v & 63] : '=');
	}
	return o.data;
}

/* MD5 of a buffer, binary. */
static void
md5_of(const char *data, size_t len, uint8 out[MD5_DIGEST_LENGTH])
{
	pg_cryptohash_ctx *c = pg_cryptohash_create(PG_MD5);

	if (c == NULL || pg_cryptohash_init(c) < 0 || pg_cryptohash_update(c, (const uint8 *) data, len) < 0 ||
		pg_cryptohash_final(c, out, MD5_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute MD5");
	pg_cryptohash_free(c);
}

/* Lower-case hex of a digest. */
static char *
hex(const uint8 *d, int len)
{
	char	   *o = palloc(len * 2 + 1);

	for (int i = 0; i < len; i++)
		sprintf(o + 2 * i, "%02x", d[i]);
	return o;
}

/* A JSON string literal. */
static void
json_string(StringInfo out, const char *s)
{
	if (s == NULL)
		appendStringInfoString(out, "null");
	else
		escape_json(out, s);
}

/* A random data file name: 26 characters of [a-z0-9], as DynamoDB's. */
static char *
random_name(void)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0234567";
	uint8		r[26];
	char	   *o = palloc(27);

	if (!pg_strong_random(r, sizeof(r)))
		elog(ERROR, "could not generate a random file name");
	for (int i = 0; i < 26; i++)
		o[i] = chars[r[i] % 32];
	o[26] = '\0';
	return o;
}

/* ---------------------------------------------------------------- data files */

/* Memory context reset: free zlib's state of an interrupted file. */
static void
datafile_cleanup(void *arg)
{
	DataFile   *f = arg;

	if (f->z_open)
		deflateEnd(&f->z);
	f->z_open = false;
	/*
	 * Not f->md5: the transaction's resource owner frees it when the
	 * transaction ends, before this callback runs on an abort (a second
	 * free crashed the server when a job was terminated mid-export).
	 */
	f->md5 = NULL;
}

/* Start a new data file. */
static void
file_open(ExportState *st)
{
	DataFile   *f = palloc0(sizeof(DataFile));
	MemoryContextCallback *cb = palloc0(sizeof(MemoryContextCallback));

	f->key = psprintf("%s%s.%s.gz", st->data_dir, random_name(), st->job->ion ? "ion" : "json");
	f->outbuf = palloc(EXPORT_CHUNK);
	cb->func = datafile_cleanup;
	cb->arg = f;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	if (deflateInit2(&f->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		elog(ERROR, "could not start gzip compression");
	f->z_open = true;
	f->md5 = pg_cryptohash_create(PG_MD5);
	if (f->md5 == NULL || pg_cryptohash_init(f->md5) < 0)
		elog(ERROR, "could not compute MD5");
	f->w = DynObjWriterOpen(st->store, f->key);
	st->file = f;
	/* an Ion data file starts with the version marker */
	if (st->job->ion)
		appendStringInfoString(&st->line, "$ion_1_0 ");
}

/* Compress data (flush: finish the gzip stream) and send the output to the store. */
static void
file_deflate(DataFile *f, const char *data, size_t len, bool finish)
{
	int			rc;

	f->z.next_in = (Bytef *) data;
	f->z.avail_in = len;
	do
	{
		size_t		n;

		f->z.next_out = (Bytef *) f->outbuf;
		f->z.avail_out = EXPORT_CHUNK;
		rc = deflate(&f->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR)
			elog(ERROR, "gzip compression failed");
		n = EXPORT_CHUNK - f->z.avail_out;
		if (n > 0)
		{
			if (pg_cryptohash_update(f->md5, (const uint8 *) f->outbuf, n) < 0)
				elog(ERROR, "could not compute MD5");
			DynObjWrite(f->w, f->outbuf, n);
		}
	} while (f->z.avail_out == 0 || (finish && rc != Z_STREAM_END));
}

/* Finish the current data file and add its line to manifest-files.json. */
static void
file_close(ExportState *st)
{
	DataFile   *f = st->file;
	uint8		md5[MD5_DIGEST_LENGTH];
	const char *etag;

	if (f == NULL)
		return;
	if (st->line.len > 0)
	{
		file_deflate(f, st->line.data, st->line.len, false);
		resetStringInfo(&st->line);
	}
	file_deflate(f, NULL, 0, true);
	deflateEnd(&f->z);
	f->z_open = false;
	if (pg_cryptohash_final(f->md5, md5, sizeof(md5)) < 0)
		elog(ERROR, "could not compute MD5");
	pg_cryptohash_free(f->md5);
	f->md5 = NULL;
	DynObjWriterClose(f->w);
	etag = DynObjWriterETag(f->w);
	/* a directory store has no ETag: the one S3 gives a single-part object */
	if (etag == NULL || etag[0] == '\0')
		etag = hex(md5, sizeof(md5));
	appendStringInfo(&st->manifest, "{\"itemCount\":" INT64_FORMAT ",\"md5Checksum\":", f->items);
	json_string(&st->manifest, base64(md5, sizeof(md5)));
	appendStringInfoString(&st->manifest, ",\"etag\":");
	json_string(&st->manifest, etag);
	appendStringInfoString(&st->manifest, ",\"dataFileS3Key\":");
	json_string(&st->manifest, f->key);
	appendStringInfoString(&st->manifest, "}\n");
	st->files++;
	st->file = NULL;
}

/* Start a slice of work (pace_for_writers). */
static void
slice_begin(ExportState *st)
{
	st->slice_start = GetCurrentTimestamp();
	st->slice_wal = GetXLogInsertRecPtr();
	st->slice_own_wal = pgWalUsage.wal_bytes;
	st->slice_xid = ReadNextFullTransactionId();
}

/*
 * Did other sessions write during the slice?  They wrote WAL (beyond the
 * page headers of the job's own: hint bits' full-page images) and took
 * transaction ids, or one of them holds one now (a long transaction
 * writing).  Autovacuum, checkpoints and hint bits write WAL without a
 * transaction id: a server with nothing but those has no writers.
 */
static bool
others_wrote(ExportState *st)
{
	int64		own = pgWalUsage.wal_bytes - st->slice_own_wal;
	int64		others = (int64) (GetXLogInsertRecPtr() - st->slice_wal) - own - own / 64;
	FullTransactionId next;

	if (others <= EXPORT_WAL_NOISE)
		return false;
	next = ReadNextFullTransactionId();
	return !FullTransactionIdEquals(next, st->slice_xid) ||
		GetOldestActiveTransactionId() != XidFromFullTransactionId(next);
}

/*
 * Give the CPUs back to the table's writers: after each slice of
 * EXPORT_SLICE_US during which other sessions wrote, pause
 * dynindex.export_yield percent of the time (50: as long as the slice; 90,
 * the default: nine times as long).  SCHED_IDLE alone does not protect
 * them on a small machine: a process that is always runnable, even in the
 * idle class, costs 2 PutItem clients a third of their throughput or more
 * on the 2-core development VM (a bare busy loop as much as the export;
 * bench/README.md, "Writers during an export").  The slices are wall time:
 * what the writers lose follows the time the job runs or waits to, not the
 * CPU it gets (little, under SCHED_IDLE, while they are busy).
 * Without writers the job never pauses, so an export on an idle server is
 * as fast as before.
 */
static void
pace_for_writers(ExportState *st)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		worked = now - st->slice_start;

	if (worked < EXPORT_SLICE_US)
		return;
	/* a slice stretched by a long step (the scan's start, a stopped process) pauses as a few slices */
	worked = Min(worked, EXPORT_SLICE_MAX_US);
	if (dynindex_export_yield > 0 && others_wrote(st))
	{
		TimestampTz until = now + worked * dynindex_export_yield / (100 - dynindex_export_yield);
		TimestampTz t;

		/* the whole pause: the latch is also set by signals that are not for the job */
		while ((t = GetCurrentTimestamp()) < until)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 Max((until - t) / 1000, 1), PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		st->paused_us += t - now;
	}
	slice_begin(st);
}

/* The line built in st->line is complete: count it, compress in batches, roll files. */
static void
line_done(ExportState *st, int64 raw)
{
	DataFile   *f = st->file;

	f->items++;
	f->raw_bytes += raw;
	st->items++;
	if (st->line.len >= EXPORT_CHUNK || f->raw_bytes >= EXPORT_FILE_BYTES)
	{
		/* the writers keep state (upload ids, ETags) beyond this call */
		MemoryContext old = MemoryContextSwitchTo(st->cxt);

		file_deflate(f, st->line.data, st->line.len, false);
		resetStringInfo(&st->line);
		if (f->raw_bytes >= EXPORT_FILE_BYTES)
		{
			file_close(st);
			file_open(st);
		}
		MemoryContextSwitchTo(old);
	}
	if (st->items % EXPORT_PACE_EVERY == 0)
		pace_for_writers(st);
	if (st->items % EXPORT_PROGRESS_EVERY == 0)
	{
		CHECK_FOR_INTERRUPTS();
		pgstat_report_activity(STATE_RUNNING, psprintf("export %lld: " INT64_FORMAT " items",
													   (long long) st->job->id, st->items));
	}
}

/* ---------------------------------------------------------------- encoders */

/* Append an item in the export's format (the value of "Item", "NewImage", ...). */
static void
append_item(ExportState *st, Jsonb *item)
{
	if (st->job->ion)
		DynIonWriteItem(&st->line, &item->root);
	else
		DynExportJsonItem(&st->line, item);
}

/* A full export's item. */
static void
full_item(const bytea *pk, const bytea *sk, Jsonb *item, int32 size, void *arg)
{
	ExportState *st = arg;
	int			start = st->line.len;

	appendStringInfoString(&st->line, st->job->ion ? "{Item:" : "{\"Item\":");
	append_item(st, item);
	appendStringInfoString(&st->line, "}\n");
	st->bytes += size;
	line_done(st, st->line.len - start);
}

/* Append {"pk": ..., "sk": ...}: the key attributes of an item. */
static void
append_keys(ExportState *st, Jsonb *item)
{
	JsonbParseState *ps = NULL;
	JsonbValue *res;
	DynKeyAttr *attrs[2] = {&st->table->hash, st->table->has_range ? &st->table->range : NULL};

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < 2; i++)
	{
		JsonbValue	k;
		JsonbValue *v;

		if (attrs[i] == NULL)
			continue;
		k.type = jbvString;
		k.val.string.val = attrs[i]->name;
		k.val.string.len = strlen(attrs[i]->name);
		v = findJsonbValueFromContainer(&item->root, JB_FOBJECT, &k);
		if (v == NULL)
			elog(ERROR, "malformed stored item: no key attribute %s", attrs[i]->name);
		pushJsonbValue(&ps, WJB_KEY, &k);
		pushJsonbValue(&ps, WJB_VALUE, v);
	}
	res = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	append_item(st, JsonbValueToJsonb(res));
}

/*
 * An incremental export's line: {"Metadata":{"WriteTimestampMicros":{"N":..}},
 * "Keys":{..},"OldImage":{..},"NewImage":{..}} (OldImage only for
 * NEW_AND_OLD_IMAGES and when the key existed at ExportFromTime, NewImage
 * only when it exists at ExportToTime).
 */
static void
change_item(const bytea *pk, const bytea *sk, Jsonb *old_item, Jsonb *new_item,
			TimestampTz last_write, void *arg)
{
	ExportState *st = arg;
	int			start = st->line.len;
	bool		ion = st->job->ion;
	int64		micros = (int64) timestamptz_to_time_t(last_write) * USECS_PER_SEC +
		(last_write % USECS_PER_SEC + USECS_PER_SEC) % USECS_PER_SEC;

	if (ion)
		appendStringInfo(&st->line, "{Metadata:{WriteTimestampMicros:" INT64_FORMAT "d0},Keys:", micros);
	else
		appendStringInfo(&st->line, "{\"Metadata\":{\"WriteTimestampMicros\":{\"N\":\"" INT64_FORMAT "\"}},\"Keys\":",
						 micros);
	append_keys(st, new_item ? new_item : old_item);
	if (st->job->new_and_old && old_item)
	{
		appendStringInfoString(&st->line, ion ? ",OldImage:" : ",\"OldImage\":");
		append_item(st, old_item);
	}
	if (new_item)
	{
		appendStringInfoString(&st->line, ion ? ",NewImage:" : ",\"NewImage\":");
		append_item(st, new_item);
		st->bytes += VARSIZE(new_item);
	}
	appendStringInfoString(&st->line, "}\n");
	line_done(st, st->line.len - start);
}

/* ---------------------------------------------------------------- the job's row */

/* Run an internal statement with arguments; returns SPI_processed. */
static uint64
exec(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls, int expect)
{
	DynSecurityState sec;
	int			rc;

	DynSecurityBeginInternal(&sec);
	rc = SPI_execute_with_args(sql, nargs, types, args, nulls, false, 0);
	DynSecurityEndInternal(&sec);
	if (rc != expect)
		elog(ERROR, "could not run an export catalog statement");
	return SPI_processed;
}

/* A text column of row 0 (NULL stays NULL). */
static char *
col_text(int c)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, c, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* A timestamptz column of row 0 (0 for NULL). */
static TimestampTz
col_time(int c)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, c, &isnull);

	return isnull ? 0 : DatumGetTimestampTz(d);
}

/* Read an export's row; NULL when it is not IN_PROGRESS any more. */
static ExportJob *
read_job(int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1] = {Int64GetDatum(id)};
	ExportJob  *j;

	if (exec("SELECT export_arn, export_id, table_name, table_arn, table_id::text, s3_bucket, s3_bucket_owner, "
			 "s3_prefix, s3_sse_algorithm, s3_sse_kms_key_id, export_format, export_type, export_view_type, "
			 "export_time, export_from_time, export_to_time, start_time "
			 "FROM dynindex.exports WHERE export_num = $1 AND status = 'IN_PROGRESS'",
			 1, types, args, NULL, SPI_OK_SELECT) == 0)
		return NULL;
	j = palloc0(sizeof(ExportJob));
	j->id = id;
	j->export_arn = col_text(1);
	j->export_id = col_text(2);
	j->table_name = col_text(3);
	j->table_arn = col_text(4);
	j->table_id = col_text(5);
	j->bucket = col_text(6);
	j->bucket_owner = col_text(7);
	j->prefix = col_text(8);
	j->sse_algorithm = col_text(9);
	j->sse_kms_key_id = col_text(10);
	j->ion = strcmp(col_text(11), "ION") == 0;
	j->incremental = strcmp(col_text(12), "INCREMENTAL_EXPORT") == 0;
	j->new_and_old = col_text(13) == NULL || strcmp(col_text(13), "NEW_AND_OLD_IMAGES") == 0;
	j->export_time = col_time(14);
	j->from_time = col_time(15);
	j->to_time = col_time(16);
	j->start_time = col_time(17);
	return j;
}

/* The key of an object under the export's prefix: <S3Prefix>/AWSDynamoDB/<rest>. */
static char *
export_key(ExportJob *j, const char *rest)
{
	if (j->prefix == NULL || j->prefix[0] == '\0')
		return psprintf("AWSDynamoDB/%s", rest);
	if (j->prefix[strlen(j->prefix) - 1] == '/')
		return psprintf("%sAWSDynamoDB/%s", j->prefix, rest);
	return psprintf("%s/AWSDynamoDB/%s", j->prefix, rest);
}

/* Put a manifest and its checksum (the manifest's MD5, hex). */
static void
put_manifest(ExportState *st, const char *name, StringInfo body)
{
	uint8		md5[MD5_DIGEST_LENGTH];
	char	   *h;

	DynObjPut(st->store, psprintf("%s%s.json", st->base, name), body->data, body->len);
	md5_of(body->data, body->len, md5);
	h = hex(md5, sizeof(md5));
	DynObjPut(st->store, psprintf("%s%s.checksum", st->base, name), h, strlen(h));
}

/* Collects the keys of a listing. */
static void
collect_key(const char *key, int64 size, void *arg)
{
	List	  **l = arg;

	*l = lappend(*l, pstrdup(key));
}

/* The manifest-summary.json of a finished export. */
static void
summary(ExportState *st, TimestampTz end)
{
	ExportJob  *j = st->job;
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoString(&s, "{\"version\":\"2020-06-30\",\"exportArn\":");
	json_string(&s, j->export_arn);
	appendStringInfoString(&s, ",\"startTime\":");
	json_string(&s, iso_time(j->start_time));
	appendStringInfoString(&s, ",\"endTime\":");
	json_string(&s, iso_time(end));
	appendStringInfoString(&s, ",\"tableArn\":");
	json_string(&s, j->table_arn);
	appendStringInfoString(&s, ",\"tableId\":");
	json_string(&s, j->table_id);
	if (j->incremental)
	{
		appendStringInfoString(&s, ",\"exportFromTime\":");
		json_string(&s, iso_time(j->from_time));
		appendStringInfoString(&s, ",\"exportToTime\":");
		json_string(&s, iso_time(j->to_time));
	}
	else
	{
		appendStringInfoString(&s, ",\"exportTime\":");
		json_string(&s, iso_time(j->export_time));
	}
	appendStringInfoString(&s, ",\"s3Bucket\":");
	json_string(&s, j->bucket);
	appendStringInfoString(&s, ",\"s3Prefix\":");
	json_string(&s, j->prefix);
	appendStringInfoString(&s, ",\"s3SseAlgorithm\":");
	json_string(&s, j->sse_algorithm ? j->sse_algorithm : "AES256");
	appendStringInfoString(&s, ",\"s3SseKmsKeyId\":");
	json_string(&s, j->sse_kms_key_id);
	appendStringInfoString(&s, ",\"manifestFilesS3Key\":");
	json_string(&s, psprintf("%smanifest-files.json", st->base));
	appendStringInfo(&s, ",\"billedSizeBytes\":" INT64_FORMAT ",\"itemCount\":" INT64_FORMAT ",\"outputFormat\":",
					 st->bytes, st->items);
	json_string(&s, j->ion ? "ION" : "DYNAMODB_JSON");
	appendStringInfoString(&s, ",\"exportType\":");
	json_string(&s, j->incremental ? "INCREMENTAL_EXPORT" : "FULL_EXPORT");
	if (j->incremental)
	{
		appendStringInfoString(&s, ",\"outputView\":");
		json_string(&s, j->new_and_old ? "NEW_AND_OLD_IMAGES" : "NEW_IMAGE");
	}
	appendStringInfoString(&s, "}");
	put_manifest(st, "manifest-summary", &s);
}

/* ---------------------------------------------------------------- the job */

/*
 * Lower the job process's priority: an export is background work that
 * should not take the machine from the table's writers (issue #28: they
 * keep >= 0.8x of their throughput during a full export; bench/README.md,
 * "Export", has the measurements).
 *
 * SCHED_IDLE (Linux; dynindex.export_sched_idle, the default) runs the job
 * only on a CPU no other process wants: a writer waking from its commit's
 * WAL flush preempts it at once and finds its CPU counted as idle; and a
 * process that sets no I/O priority of its own gets its I/O class from its
 * CPU class (linux/ioprio.h), so the job's reads and the writeback of its
 * data files are in the idle I/O class, behind the writers' WAL.  A nice value (the
 * fallback, dynindex.export_nice) only shrinks the job's share when it
 * competes for a CPU: the writers still wait for it to be switched out.
 * On an otherwise idle machine neither slows the export.  Only this
 * process is affected, and it exits with the job.
 */
static void
yield_to_writers(void)
{
#ifdef SCHED_IDLE
	if (dynindex_export_sched_idle)
	{
		struct sched_param p;

		memset(&p, 0, sizeof(p));
		if (sched_setscheduler(0, SCHED_IDLE, &p) == 0)
			return;
		elog(LOG, "could not run the export job under SCHED_IDLE: %m");
	}
#endif
	if (dynindex_export_nice > 0 && setpriority(PRIO_PROCESS, 0, dynindex_export_nice) != 0)
		elog(LOG, "could not lower the export job's priority: %m");
}

/* Run export job id. */
void
DynExportRun(int64 id)
{
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "dynindex export", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	ExportState st;
	ExportJob  *j;
	List	   *stale = NIL;
	TimestampTz end;

	yield_to_writers();
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	old = MemoryContextSwitchTo(cxt);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	memset(&st, 0, sizeof(st));
	st.cxt = cxt;
	MemoryContextSwitchTo(cxt);
	j = read_job(id);
	if (j == NULL)
	{
		PopActiveSnapshot();
		SPI_finish();
		CommitTransactionCommand();
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return;
	}
	st.job = j;
	initStringInfo(&st.line);
	initStringInfo(&st.manifest);
	st.table = DynCatalogGetTable(j->table_name);
	if (st.table == NULL || strcmp(st.table->table_id, j->table_id) != 0)
		DynObjFail("TableNotFound", "Table not found: %s", j->table_name);

	st.store = DynObjStoreOpen(j->bucket, j->bucket_owner);
	DynObjStoreSetEncryption(st.store, j->sse_algorithm, j->sse_kms_key_id);
	st.base = export_key(j, psprintf("%s/", j->export_id));
	st.data_dir = j->incremental ? export_key(j, "data/") : psprintf("%sdata/", st.base);
	DynObjPut(st.store, psprintf("%s_started", st.base), "", 0);

	/* an earlier attempt's data files (incremental ones are named in its manifest: none yet) */
	if (!j->incremental)
	{
		ListCell   *lc;

		DynObjList(st.store, st.data_dir, collect_key, &stale);
		foreach(lc, stale)
			DynObjDelete(st.store, (char *) lfirst(lc));
	}

	file_open(&st);
	pgstat_report_activity(STATE_RUNNING, psprintf("export %lld: 0 items", (long long) id));
	slice_begin(&st);
	PG_TRY();
	{
		if (j->incremental)
			DynHistoryChanges(st.table, j->from_time, j->to_time, change_item, &st);
		else
			DynHistoryScanAt(st.table, j->export_time, full_item, &st);
		file_close(&st);
	}
	PG_CATCH();
	{
		/*
		 * Abandon the data file being written (an S3 multipart upload left
		 * open would keep its parts at the store), then fail as we were
		 * going to: the error is copied first, the abort may meet errors of
		 * its own.
		 */
		ErrorData  *e;

		MemoryContextSwitchTo(cxt);
		e = CopyErrorData();
		FlushErrorState();
		if (st.file)
			DynObjWriterAbort(st.file->w);
		ReThrowError(e);
	}
	PG_END_TRY();

	put_manifest(&st, "manifest-files", &st.manifest);
	end = GetCurrentTimestamp();
	elog(LOG, "export %lld: " INT64_FORMAT " items in %d files, %.3f s paused for writers (dynindex.export_yield %d)",
		 (long long) id, st.items, st.files, st.paused_us / 1e6, dynindex_export_yield);
	summary(&st, end);

	{
		Oid			types[5] = {INT8OID, INT8OID, INT8OID, TIMESTAMPTZOID, TEXTOID};
		Datum		args[5];

		args[0] = Int64GetDatum(id);
		args[1] = Int64GetDatum(st.items);
		args[2] = Int64GetDatum(st.bytes);
		args[3] = TimestampTzGetDatum(end);
		args[4] = CStringGetTextDatum(psprintf("%smanifest-summary.json", st.base));
		exec("UPDATE dynindex.exports SET status = 'COMPLETED', item_count = $2, billed_size_bytes = $3, "
			 "end_time = $4, export_manifest = $5 WHERE export_num = $1",
			 5, types, args, NULL, SPI_OK_UPDATE);
	}
	PopActiveSnapshot();
	SPI_finish();
	CommitTransactionCommand();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* Mark an export FAILED. */
void
DynExportFail(int64 id, const char *message)
{
	const char *code = "InternalServerError";
	const char *text = message ? message : "The export failed.";
	const char *sep = message ? strstr(message, ": ") : NULL;
	Oid			types[4] = {INT8OID, TEXTOID, TEXTOID, TIMESTAMPTZOID};
	Datum		args[4];

	/* a store failure (objstore.h) or a missing table carries its FailureCode */
	if (sep && (strncmp(message, "S3", 2) == 0 || strncmp(message, "TableNotFound", 13) == 0))
	{
		code = pnstrdup(message, sep - message);
		text = sep + 2;
	}
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	args[0] = Int64GetDatum(id);
	args[1] = CStringGetTextDatum(code);
	args[2] = CStringGetTextDatum(text);
	args[3] = TimestampTzGetDatum(GetCurrentTimestamp());
	exec("UPDATE dynindex.exports SET status = 'FAILED', failure_code = $2, failure_message = $3, end_time = $4 "
		 "WHERE export_num = $1 AND status = 'IN_PROGRESS'", 4, types, args, NULL, SPI_OK_UPDATE);
	PopActiveSnapshot();
	SPI_finish();
	CommitTransactionCommand();
}
