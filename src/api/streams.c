/*
 * streams.c — the DynamoDB Streams API: ListStreams, DescribeStream,
 * GetShardIterator, GetRecords (the gateway answers their
 * DynamoDBStreams_20120810.* targets on the same endpoint).
 *
 * Streams, shards and records are rows of dynindex.streams,
 * dynindex.stream_shards and dynindex.stream_records (src/write/ captures
 * them, src/streams/maintain.c rotates and trims).  A shard iterator is
 * "<stream ARN>|1|<base64>": the stream, the shard, the position (the last
 * seq read) and the issue time, signed with HMAC-SHA256 under a
 * per-database secret (dynindex.stream_secret), so it cannot be forged into
 * another stream, shard or position, and expires after
 * dynindex.stream_iterator_lifetime (15 minutes).  docs/streams.md describes
 * the API and docs/errors.md lists the messages and their sources.
 */
#include "postgres.h"

#include <time.h>

#include "catalog/pg_type.h"
#include "common/base64.h"
#include "common/hashfn.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "port/pg_bswap.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "api/api.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "security/security.h"
#include "streams/streams.h"

#define GET_RECORDS_MAX_BYTES (1024 * 1024)
#define ITERATOR_VERSION "1"
#define MAC_BYTES 16
#define SECRET_BYTES 32

/* ---------------------------------------------------------------- schemas */

static const char *const shard_iterator_types[] = {
	"TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", NULL
};

/* Member constraints of DynamoDB Streams' API model (streams-dynamodb-2012-08-10). */
static const RqField list_streams_fields[] = {
	{.name = "TableName",.type = RQ_STRING,.namepattern = true,.minlen = 3,.maxlen = 255},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 100},
	{.name = "ExclusiveStartStreamArn",.type = RQ_STRING,.minlen = 37,.maxlen = 1024},
	{0}
};

static const RqField describe_stream_fields[] = {
	{.name = "StreamArn",.type = RQ_STRING,.notnull = true,.minlen = 37,.maxlen = 1024},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 100},
	{.name = "ExclusiveStartShardId",.type = RQ_STRING,.minlen = 28,.maxlen = 65},
	{0}
};

static const RqField get_shard_iterator_fields[] = {
	{.name = "StreamArn",.type = RQ_STRING,.notnull = true,.minlen = 37,.maxlen = 1024},
	{.name = "ShardId",.type = RQ_STRING,.notnull = true,.minlen = 28,.maxlen = 65},
	{.name = "ShardIteratorType",.type = RQ_STRING,.notnull = true,.enumvals = shard_iterator_types},
	{.name = "SequenceNumber",.type = RQ_STRING,.minlen = 21,.maxlen = 40},
	{0}
};

static const RqField get_records_fields[] = {
	{.name = "ShardIterator",.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = 2048},
	{.name = "Limit",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 1000},
	{0}
};

/* ---------------------------------------------------------------- catalog */

typedef struct StreamRow
{
	int64		stream_id;
	char	   *table_name;
	int64		table_num;
	char	   *label;
	char	   *view_type;
	int			shard_count;
	TimestampTz created_at;
	bool		disabled;
	char	   *arn;
} StreamRow;

typedef struct ShardRow
{
	char	   *shard_id;
	int			bucket;
	char	   *parent;
	int64		start_seq;
	bool		closed;
	int64		end_seq;
} ShardRow;

/* Fill a StreamRow from row i of the last SELECT of stream columns. */
static void
stream_from_row(StreamRow *s, uint64 i)
{
	HeapTuple	tup = SPI_tuptable->vals[i];
	TupleDesc	td = SPI_tuptable->tupdesc;
	bool		isnull;

	s->stream_id = DatumGetInt64(SPI_getbinval(tup, td, 1, &isnull));
	s->table_name = SPI_getvalue(tup, td, 2);
	s->table_num = DatumGetInt64(SPI_getbinval(tup, td, 3, &isnull));
	s->label = SPI_getvalue(tup, td, 4);
	s->view_type = SPI_getvalue(tup, td, 5);
	s->shard_count = DatumGetInt32(SPI_getbinval(tup, td, 6, &isnull));
	s->created_at = DatumGetTimestampTz(SPI_getbinval(tup, td, 7, &isnull));
	(void) SPI_getbinval(tup, td, 8, &isnull);
	s->disabled = !isnull;
	s->arn = DynStreamArn(s->table_name, s->label);
}

#define STREAM_COLUMNS "stream_id, table_name, table_num, stream_label, view_type, shard_count, created_at, disabled_at"

/* The stream an ARN names, raising DynamoDB's errors. */
static StreamRow *
stream_by_arn(const char *arn)
{
	char	   *table;
	char	   *label;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	StreamRow  *s;

	if (!DynStreamParseArn(arn, strlen(arn), &table, &label))
		DynValidationError("Invalid StreamArn");
	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(label);
	if (SPI_execute_with_args("SELECT " STREAM_COLUMNS " FROM dynindex.streams "
							  "WHERE table_name = $1 AND stream_label = $2 ORDER BY stream_id DESC",
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read a stream");
	if (SPI_processed == 0)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Stream: %s not found", arn);
	s = palloc0(sizeof(StreamRow));
	stream_from_row(s, 0);
	return s;
}

/* A stream by id, or NULL. */
static StreamRow *
stream_by_id(int64 stream_id)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	StreamRow  *s;

	args[0] = Int64GetDatum(stream_id);
	if (SPI_execute_with_args("SELECT " STREAM_COLUMNS " FROM dynindex.streams WHERE stream_id = $1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read a stream");
	if (SPI_processed == 0)
		return NULL;
	s = palloc0(sizeof(StreamRow));
	stream_from_row(s, 0);
	return s;
}

/* Fill a ShardRow from row i of the last SELECT of shard columns. */
static void
shard_from_row(ShardRow *h, uint64 i)
{
	HeapTuple	tup = SPI_tuptable->vals[i];
	TupleDesc	td = SPI_tuptable->tupdesc;
	bool		isnull;
	Datum		d;

	h->shard_id = SPI_getvalue(tup, td, 1);
	h->bucket = DatumGetInt32(SPI_getbinval(tup, td, 2, &isnull));
	h->parent = SPI_getvalue(tup, td, 3);
	h->start_seq = DatumGetInt64(SPI_getbinval(tup, td, 4, &isnull));
	d = SPI_getbinval(tup, td, 5, &isnull);
	h->closed = !isnull;
	h->end_seq = isnull ? 0 : DatumGetInt64(d);
}

#define SHARD_COLUMNS "shard_id, bucket, parent_shard_id, start_seq, end_seq"

/* A shard of a stream, or NULL. */
static ShardRow *
shard_by_id(int64 stream_id, const char *shard_id)
{
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		args[2];
	ShardRow   *h;

	args[0] = Int64GetDatum(stream_id);
	args[1] = CStringGetTextDatum(shard_id);
	if (SPI_execute_with_args("SELECT " SHARD_COLUMNS " FROM dynindex.stream_shards WHERE stream_id = $1 AND shard_id = $2",
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read a shard");
	if (SPI_processed == 0)
		return NULL;
	h = palloc0(sizeof(ShardRow));
	shard_from_row(h, 0);
	return h;
}

/* The shard or DynamoDB's ResourceNotFoundException. */
static ShardRow *
shard_or_not_found(int64 stream_id, const char *shard_id)
{
	ShardRow   *h = shard_by_id(stream_id, shard_id);

	if (h == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Shard does not exist");
	return h;
}

/* Epoch seconds (with milliseconds) of a timestamp. */
static double
epoch_seconds(TimestampTz t)
{
	return (double) (t / 1000) / 1000.0 +
		(double) ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY);
}

/* ---------------------------------------------------------------- iterators */

static unsigned char secret[SECRET_BYTES];
static Oid	secret_db = InvalidOid;

/* The database's iterator secret (created on first use), cached per backend. */
static const unsigned char *
iterator_secret(void)
{
	bool		isnull;
	bytea	   *b;

	if (secret_db == MyDatabaseId)
		return secret;
	if (SPI_execute("SELECT secret FROM dynindex.stream_secret", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the stream iterator secret");
	if (SPI_processed == 0)
	{
		unsigned char fresh[SECRET_BYTES];
		Oid			types[1] = {BYTEAOID};
		Datum		args[1];
		bytea	   *v = palloc(VARHDRSZ + SECRET_BYTES);

		if (!pg_strong_random(fresh, SECRET_BYTES))
			elog(ERROR, "could not generate a stream iterator secret");
		SET_VARSIZE(v, VARHDRSZ + SECRET_BYTES);
		memcpy(VARDATA(v), fresh, SECRET_BYTES);
		args[0] = PointerGetDatum(v);
		if (SPI_execute_with_args("INSERT INTO dynindex.stream_secret (id, secret) VALUES (1, $1) ON CONFLICT DO NOTHING",
								  1, types, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not store the stream iterator secret");
		if (SPI_execute("SELECT secret FROM dynindex.stream_secret", false, 1) != SPI_OK_SELECT ||
			SPI_processed == 0)
			elog(ERROR, "could not read the stream iterator secret");
	}
	b = DatumGetByteaPP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull || VARSIZE_ANY_EXHDR(b) < 16)
		elog(ERROR, "the stream iterator secret is too short");
	memset(secret, 0, SECRET_BYTES);
	memcpy(secret, VARDATA_ANY(b), Min(VARSIZE_ANY_EXHDR(b), SECRET_BYTES));
	secret_db = MyDatabaseId;
	return secret;
}

/* HMAC-SHA256 of (arn, payload), truncated to MAC_BYTES. */
static void
iterator_mac(const char *arn, const unsigned char *payload, size_t len, unsigned char *mac)
{
	const unsigned char *key = iterator_secret();
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);
	uint8		full[PG_SHA256_DIGEST_LENGTH];

	if (ctx == NULL ||
		pg_hmac_init(ctx, key, SECRET_BYTES) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) arn, strlen(arn)) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) "|", 1) < 0 ||
		pg_hmac_update(ctx, payload, len) < 0 ||
		pg_hmac_final(ctx, full, sizeof(full)) < 0)
	{
		pg_hmac_free(ctx);
		elog(ERROR, "could not sign a shard iterator");
	}
	pg_hmac_free(ctx);
	memcpy(mac, full, MAC_BYTES);
}

/* Payload: stream id, position, issue time (8 bytes each, big-endian), shard id. */
typedef struct IteratorState
{
	int64		stream_id;
	int64		after;			/* the last seq read: records after it come next */
	TimestampTz issued;
	char	   *shard_id;
} IteratorState;

/* Encode and sign an iterator. */
static char *
iterator_encode(const char *arn, const IteratorState *it)
{
	size_t		idlen = strlen(it->shard_id);
	size_t		len = 24 + idlen;
	unsigned char *buf = palloc(len + MAC_BYTES);
	uint64		v;
	int			enclen;
	char	   *enc;

	v = pg_hton64((uint64) it->stream_id);
	memcpy(buf, &v, 8);
	v = pg_hton64((uint64) it->after);
	memcpy(buf + 8, &v, 8);
	v = pg_hton64((uint64) it->issued);
	memcpy(buf + 16, &v, 8);
	memcpy(buf + 24, it->shard_id, idlen);
	iterator_mac(arn, buf, len, buf + len);
	enclen = pg_b64_enc_len(len + MAC_BYTES);
	enc = palloc(enclen + 1);
	enclen = pg_b64_encode((const uint8 *) buf, len + MAC_BYTES, enc, enclen);
	if (enclen < 0)
		elog(ERROR, "could not encode a shard iterator");
	enc[enclen] = '\0';
	return psprintf("%s|" ITERATOR_VERSION "|%s", arn, enc);
}

/* Decode and check an iterator; ValidationException when it is not ours. */
static void
iterator_decode(const char *s, char **arn, IteratorState *it)
{
	const char *sep = strstr(s, "|" ITERATOR_VERSION "|");
	const char *b64;
	int			declen;
	unsigned char *buf;
	unsigned char mac[MAC_BYTES];
	uint64		v;

	if (sep == NULL || sep == s)
		DynValidationError("Invalid ShardIterator");
	b64 = sep + 3;
	declen = pg_b64_dec_len(strlen(b64));
	buf = palloc(declen + 1);
	declen = pg_b64_decode(b64, strlen(b64), (uint8 *) buf, declen);
	if (declen < 24 + 28 + MAC_BYTES || declen > 24 + 65 + MAC_BYTES)
		DynValidationError("Invalid ShardIterator");
	*arn = pnstrdup(s, sep - s);
	iterator_mac(*arn, buf, declen - MAC_BYTES, mac);
	if (timingsafe_bcmp(mac, buf + declen - MAC_BYTES, MAC_BYTES) != 0)
		DynValidationError("Invalid ShardIterator");
	memcpy(&v, buf, 8);
	it->stream_id = (int64) pg_ntoh64(v);
	memcpy(&v, buf + 8, 8);
	it->after = (int64) pg_ntoh64(v);
	memcpy(&v, buf + 16, 8);
	it->issued = (TimestampTz) pg_ntoh64(v);
	it->shard_id = pnstrdup((const char *) buf + 24, declen - MAC_BYTES - 24);
}

/* A time as Java's Date.toString() in UTC ("Thu Jul 02 12:57:57 UTC 2015"). */
static char *
java_date(TimestampTz t)
{
	time_t		tt = timestamptz_to_time_t(t);
	struct tm	tm;
	char		buf[64];

	gmtime_r(&tt, &tm);
	strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S UTC %Y", &tm);
	return pstrdup(buf);
}

/* ---------------------------------------------------------------- responses */

/* Push a string member. */
static void
push_str(JsonbParseState **st, const char *key, const char *val)
{
	RqPushKey(st, key);
	RqPushString(st, WJB_VALUE, val);
}

/* ---------------------------------------------------------------- ListStreams */

/* ListStreams: the streams (of a table), paged by ExclusiveStartStreamArn. */
Jsonb *
DynListStreams(Jsonb *req)
{
	JsonbContainer *root = RqRoot(req);
	char	   *table;
	char	   *start;
	int64		limit;
	char	   *start_table = NULL;
	char	   *start_label = NULL;
	Oid			types[6] = {TEXTOID, TEXTOID, TEXTOID, INT4OID, BOOLOID, OIDOID};
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	JsonbParseState *st = NULL;
	uint64		n;
	uint64		i;
	SPITupleTable *tt;

	RqValidate(req, list_streams_fields);
	table = RqGetString(root, "TableName");
	start = RqGetString(root, "ExclusiveStartStreamArn");
	limit = RqGetInt(root, "Limit", 100);
	if (start && !DynStreamParseArn(start, strlen(start), &start_table, &start_label))
		DynValidationError("Invalid StreamArn");

	if (table)
		DynCatalogCheckTableRight(table, DYN_ACCESS_STREAM);
	if (table)
	{
		args[0] = CStringGetTextDatum(table);
		if (SPI_execute_with_args("SELECT 1 FROM dynindex.streams WHERE table_name = $1",
								  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the streams");
		if (SPI_processed == 0)
			(void) DynCatalogGetTableOrNotFound(table);
	}
	else
		nulls[0] = 'n';
	args[1] = start ? CStringGetTextDatum(start_table) : (Datum) 0;
	args[2] = start ? CStringGetTextDatum(start_label) : (Datum) 0;
	if (!start)
		nulls[1] = nulls[2] = 'n';
	args[3] = Int32GetDatum((int32) limit + 1);
	/*
	 * only the streams of tables the caller holds the stream right on, and
	 * is not limited by LeadingKeys on (docs/security.md)
	 */
	args[4] = BoolGetDatum(DynSecurityIsAccountAdmin(DynSecurityCaller()));
	args[5] = ObjectIdGetDatum(DynSecurityCaller());
	if (SPI_execute_with_args("SELECT table_name, stream_label FROM dynindex.streams s "
							  "WHERE ($1::text IS NULL OR table_name = $1) "
							  "AND ($2::text IS NULL OR (table_name COLLATE \"C\", stream_label COLLATE \"C\") > ($2, $3)) "
							  "AND ($5 OR EXISTS (SELECT 1 FROM dynindex.table_rights r JOIN pg_catalog.pg_roles g "
							  "ON g.rolname = r.role_name WHERE r.table_name = s.table_name AND (r.stream OR r.admin) "
							  "AND pg_catalog.pg_has_role($6, g.oid, 'USAGE') "
							  "AND NOT EXISTS (SELECT 1 FROM dynindex.leading_keys l JOIN pg_catalog.pg_roles h "
							  "ON h.rolname = l.role_name WHERE l.table_name = s.table_name "
							  "AND pg_catalog.pg_has_role($6, h.oid, 'USAGE')))) "
							  "ORDER BY table_name COLLATE \"C\", stream_label COLLATE \"C\", stream_id LIMIT $4",
							  6, types, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the streams");
	tt = SPI_tuptable;
	n = SPI_processed;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Streams");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n && i < (uint64) limit; i++)
	{
		char	   *t = SPI_getvalue(tt->vals[i], tt->tupdesc, 1);
		char	   *l = SPI_getvalue(tt->vals[i], tt->tupdesc, 2);

		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		push_str(&st, "StreamArn", DynStreamArn(t, l));
		push_str(&st, "StreamLabel", l);
		push_str(&st, "TableName", t);
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	if (n > (uint64) limit)
		push_str(&st, "LastEvaluatedStreamArn",
				 DynStreamArn(SPI_getvalue(tt->vals[limit - 1], tt->tupdesc, 1),
							  SPI_getvalue(tt->vals[limit - 1], tt->tupdesc, 2)));
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- DescribeStream */

/* DescribeStream: status, view type, key schema and a page of shards. */
Jsonb *
DynDescribeStream(Jsonb *req)
{
	JsonbContainer *root = RqRoot(req);
	char	   *arn;
	char	   *start;
	int64		limit;
	StreamRow  *s;
	const char *status;
	DynTable   *t;
	Oid			types[3] = {INT8OID, TEXTOID, INT4OID};
	Datum		args[3];
	char		nulls[3] = {' ', ' ', ' '};
	JsonbParseState *st = NULL;
	SPITupleTable *tt;
	uint64		n;
	uint64		i;
	bool		isnull;

	RqValidate(req, describe_stream_fields);
	arn = RqGetString(root, "StreamArn");
	start = RqGetString(root, "ExclusiveStartShardId");
	limit = RqGetInt(root, "Limit", 100);
	DynCatalogCheckStream(arn);	/* the stream right on its table, before "not found" */
	s = stream_by_arn(arn);

	args[0] = Int64GetDatum(s->stream_id);
	if (SPI_execute_with_args("SELECT count(*) FILTER (WHERE end_seq IS NULL) FROM dynindex.stream_shards WHERE stream_id = $1",
							  1, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the shards of a stream");
	if (!s->disabled)
		status = "ENABLED";
	else
		status = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) > 0 ?
			"DISABLING" : "DISABLED";

	/* the key schema of the stream's table, while it exists */
	t = DynCatalogGetTable(s->table_name);
	if (t && t->num != s->table_num)
		t = NULL;

	args[1] = start ? CStringGetTextDatum(start) : (Datum) 0;
	if (!start)
		nulls[1] = 'n';
	args[2] = Int32GetDatum((int32) limit + 1);
	if (SPI_execute_with_args("SELECT " SHARD_COLUMNS " FROM dynindex.stream_shards "
							  "WHERE stream_id = $1 AND ($2::text IS NULL OR shard_id COLLATE \"C\" > $2) "
							  "ORDER BY shard_id COLLATE \"C\" LIMIT $3",
							  3, types, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the shards of a stream");
	tt = SPI_tuptable;
	n = SPI_processed;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "StreamDescription");
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "CreationRequestDateTime");
	RqPushNumeric(&st, WJB_VALUE, epoch_seconds(s->created_at));
	if (t)
	{
		RqPushKey(&st, "KeySchema");
		RqPushJsonb(&st, WJB_VALUE, t->key_schema);
	}
	if (n > (uint64) limit)
	{
		SPI_tuptable = tt;
		push_str(&st, "LastEvaluatedShardId", SPI_getvalue(tt->vals[limit - 1], tt->tupdesc, 1));
	}
	RqPushKey(&st, "Shards");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n && i < (uint64) limit; i++)
	{
		ShardRow	h;

		SPI_tuptable = tt;
		shard_from_row(&h, i);
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		if (h.parent)
			push_str(&st, "ParentShardId", h.parent);
		RqPushKey(&st, "SequenceNumberRange");
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		if (h.closed)
			push_str(&st, "EndingSequenceNumber", DynStreamFormatSeq(h.end_seq));
		push_str(&st, "StartingSequenceNumber", DynStreamFormatSeq(h.start_seq));
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
		push_str(&st, "ShardId", h.shard_id);
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	push_str(&st, "StreamArn", s->arn);
	push_str(&st, "StreamLabel", s->label);
	push_str(&st, "StreamStatus", status);
	push_str(&st, "StreamViewType", s->view_type);
	push_str(&st, "TableName", s->table_name);
	pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- GetShardIterator */

/* GetShardIterator: a signed position in a shard. */
Jsonb *
DynGetShardIterator(Jsonb *req)
{
	JsonbContainer *root = RqRoot(req);
	char	   *arn;
	char	   *shard_id;
	char	   *type;
	char	   *seqstr;
	bool		by_seq;
	int64		seq = 0;
	StreamRow  *s;
	ShardRow   *h;
	int64		trimmed;
	IteratorState it;
	JsonbParseState *st = NULL;

	RqValidate(req, get_shard_iterator_fields);
	arn = RqGetString(root, "StreamArn");
	shard_id = RqGetString(root, "ShardId");
	type = RqGetString(root, "ShardIteratorType");
	seqstr = RqGetString(root, "SequenceNumber");
	by_seq = strcmp(type, "AT_SEQUENCE_NUMBER") == 0 || strcmp(type, "AFTER_SEQUENCE_NUMBER") == 0;
	{
		char	   *tn;
		char	   *label;

		if (!DynStreamParseArn(arn, strlen(arn), &tn, &label))
			DynValidationError("Invalid StreamArn");
	}
	if (by_seq && seqstr == NULL)
		DynValidationError("SequenceNumber is required for ShardIteratorType %s", type);
	if (!by_seq && seqstr != NULL)
		DynValidationError("SequenceNumber must not be given for ShardIteratorType %s", type);
	if (seqstr && !DynStreamParseSeq(seqstr, strlen(seqstr), &seq))
		DynValidationError("Invalid SequenceNumber: %s", seqstr);
	DynStreamCheckIsolation();

	DynCatalogCheckStream(arn);	/* the stream right on its table, before "not found" */
	s = stream_by_arn(arn);
	h = shard_or_not_found(s->stream_id, shard_id);
	trimmed = DynStreamTrimmedSeq(s->stream_id, h->bucket);

	it.stream_id = s->stream_id;
	it.shard_id = h->shard_id;
	it.issued = GetCurrentTimestamp();
	if (strcmp(type, "TRIM_HORIZON") == 0)
		it.after = Max(h->start_seq - 1, trimmed);
	else if (strcmp(type, "LATEST") == 0)
	{
		/* after every settled record: what commits from now on comes next */
		int64		horizon = DynStreamReadHorizon();

		it.after = Max(h->start_seq, horizon) - 1;
		if (h->closed)
			it.after = h->end_seq;
	}
	else
	{
		if (seq < h->start_seq || (h->closed && seq > h->end_seq))
			DynValidationError("Invalid SequenceNumber: %s is not in shard %s", seqstr, h->shard_id);
		it.after = strcmp(type, "AT_SEQUENCE_NUMBER") == 0 ? seq - 1 : seq;
		if (it.after < trimmed)
			DynError(DYN_ERR_TRIMMED_DATA_ACCESS, "The data you are trying to access has been trimmed");
	}

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	push_str(&st, "ShardIterator", iterator_encode(s->arn, &it));
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- GetRecords */

/* A record's eventID: 32 hex digits, the same each time the record is read. */
static char *
event_id(int64 stream_id, int64 seq)
{
	int64		k[2];

	k[0] = stream_id;
	k[1] = seq;
	return psprintf("%016llx%016llx",
					(unsigned long long) DatumGetUInt64(hash_bytes_extended((const unsigned char *) k, sizeof(k), 0x5eed)),
					(unsigned long long) DatumGetUInt64(hash_bytes_extended((const unsigned char *) k, sizeof(k), 0xd15c)));
}

/* Push a jsonb column value of the current row, if not null. */
static bool
push_column(JsonbParseState **st, const char *key, HeapTuple tup, TupleDesc td, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, td, col, &isnull);

	if (isnull)
		return false;
	RqPushKey(st, key);
	RqPushJsonb(st, WJB_VALUE, DatumGetJsonbP(d));
	return true;
}

/*
 * Push a record's userIdentity in the API's shape (Identity: PrincipalId,
 * Type); stored as Lambda's event records show it (principalId, type).
 */
static void
push_identity(JsonbParseState **st, HeapTuple tup, TupleDesc td, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(tup, td, col, &isnull);
	Jsonb	   *id;
	JsonbValue *v;

	if (isnull)
		return;
	id = DatumGetJsonbP(d);
	RqPushKey(st, "userIdentity");
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	if ((v = RqGet(&id->root, "principalId")) != NULL && v->type == jbvString)
	{
		RqPushKey(st, "PrincipalId");
		pushJsonbValue(st, WJB_VALUE, v);
	}
	if ((v = RqGet(&id->root, "type")) != NULL && v->type == jbvString)
	{
		RqPushKey(st, "Type");
		pushJsonbValue(st, WJB_VALUE, v);
	}
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* GetRecords: the records after the iterator's position, up to the horizon. */
Jsonb *
DynGetRecords(Jsonb *req)
{
	JsonbContainer *root = RqRoot(req);
	char	   *iter;
	int64		limit;
	char	   *arn;
	IteratorState it;
	TimestampTz now;
	StreamRow  *s;
	ShardRow   *h;
	int64		trimmed;
	int64		horizon;
	int64		upper;
	int64		next;
	bool		new_image;
	bool		old_image;
	Oid			types[6] = {INT8OID, INT4OID, INT8OID, INT8OID, INT4OID, INT4OID};
	Datum		args[6];
	SPITupleTable *tt;
	uint64		n;
	uint64		i;
	JsonbParseState *st = NULL;

	RqValidate(req, get_records_fields);
	iter = RqGetString(root, "ShardIterator");
	limit = RqGetInt(root, "Limit", 1000);
	iterator_decode(iter, &arn, &it);
	now = GetCurrentTimestamp();
	if (now - it.issued > (int64) dynindex_stream_iterator_lifetime_s * USECS_PER_SEC)
		DynError(DYN_ERR_EXPIRED_ITERATOR,
				 "Iterator expired. The iterator was created at time %s while right now it is %s "
				 "which is further in the future than the tolerated delay of %lld milliseconds.",
				 java_date(it.issued), java_date(now), (long long) dynindex_stream_iterator_lifetime_s * 1000);
	DynStreamCheckIsolation();

	DynCatalogCheckStream(arn);	/* the iterator's stream: the stream right on its table */
	s = stream_by_id(it.stream_id);
	if (s == NULL)
		DynError(DYN_ERR_RESOURCE_NOT_FOUND, "Requested resource not found: Stream: %s not found", arn);
	h = shard_or_not_found(s->stream_id, it.shard_id);
	trimmed = DynStreamTrimmedSeq(s->stream_id, h->bucket);
	if (it.after < trimmed)
		DynError(DYN_ERR_TRIMMED_DATA_ACCESS, "The data you are trying to access has been trimmed");

	horizon = DynStreamReadHorizon();
	upper = horizon - 1;
	if (h->closed)
		upper = Min(upper, h->end_seq);

	/* read_only = false: a snapshot taken after the horizon */
	args[0] = Int64GetDatum(s->stream_id);
	args[1] = Int32GetDatum(h->bucket);
	args[2] = Int64GetDatum(it.after);
	args[3] = Int64GetDatum(upper);
	args[4] = Int32GetDatum((int32) limit);
	args[5] = Int32GetDatum(GET_RECORDS_MAX_BYTES);
	if (SPI_execute_with_args("SELECT seq, created_at, event_name, keys, new_image, old_image, size_bytes, user_identity, fetched "
							  "FROM (SELECT r.*, sum(r.size_bytes) OVER (ORDER BY r.seq) AS total, count(*) OVER () AS fetched, "
							  "        row_number() OVER (ORDER BY r.seq) AS rn "
							  "      FROM (SELECT * FROM dynindex.stream_records WHERE stream_id = $1 AND bucket = $2 "
							  "            AND seq > $3 AND seq <= $4 ORDER BY seq LIMIT $5) r) x "
							  "WHERE rn = 1 OR total <= $6 ORDER BY seq",
							  6, types, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read stream records");
	tt = SPI_tuptable;
	n = SPI_processed;

	new_image = strcmp(s->view_type, "NEW_IMAGE") == 0 || strcmp(s->view_type, "NEW_AND_OLD_IMAGES") == 0;
	old_image = strcmp(s->view_type, "OLD_IMAGE") == 0 || strcmp(s->view_type, "NEW_AND_OLD_IMAGES") == 0;
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, "Records");
	pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	next = it.after;
	for (i = 0; i < n; i++)
	{
		HeapTuple	tup = tt->vals[i];
		TupleDesc	td = tt->tupdesc;
		bool		isnull;
		int64		seq = DatumGetInt64(SPI_getbinval(tup, td, 1, &isnull));
		TimestampTz created = DatumGetTimestampTz(SPI_getbinval(tup, td, 2, &isnull));

		next = seq;
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		push_str(&st, "awsRegion", dynindex_region);
		RqPushKey(&st, "dynamodb");
		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "ApproximateCreationDateTime");
		RqPushInt(&st, WJB_VALUE, (int64) timestamptz_to_time_t(created));
		push_column(&st, "Keys", tup, td, 4);
		if (new_image)
			push_column(&st, "NewImage", tup, td, 5);
		if (old_image)
			push_column(&st, "OldImage", tup, td, 6);
		push_str(&st, "SequenceNumber", DynStreamFormatSeq(seq));
		RqPushKey(&st, "SizeBytes");
		RqPushInt(&st, WJB_VALUE, DatumGetInt32(SPI_getbinval(tup, td, 7, &isnull)));
		push_str(&st, "StreamViewType", s->view_type);
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
		push_str(&st, "eventID", event_id(s->stream_id, seq));
		push_str(&st, "eventName", SPI_getvalue(tup, td, 3));
		push_str(&st, "eventSource", "aws:dynamodb");
		push_str(&st, "eventVersion", "1.1");
		push_identity(&st, tup, td, 8);
		pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&st, WJB_END_ARRAY, NULL);

	/*
	 * Everything up to upper was read when the inner LIMIT found fewer than
	 * Limit records and the 1 MB cap dropped none of them.
	 */
	if (n == 0 ||
		(DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 9, &(bool) {false})) < limit &&
		 DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 9, &(bool) {false})) == (int64) n))
		next = Max(next, upper);
	if (!(h->closed && next >= h->end_seq))
	{
		it.after = next;
		it.issued = now;
		push_str(&st, "NextShardIterator", iterator_encode(s->arn, &it));
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}
