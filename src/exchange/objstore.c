/*
 * objstore.c — the object stores' catalog (dynindex.object_stores, written
 * by administrators through dynindex.set_object_store) and the dispatch to
 * the S3 client (s3.c) and the server-directory store (dirstore.c).
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "common/arn.h"
#include "exchange/export.h"
#include "exchange/import.h"
#include "exchange/objstore_int.h"
#include "security/security.h"

int			dynindex_s3_part_size_mb = 8;
int			dynindex_s3_timeout_s = 60;
char	   *dynindex_exchange_directory = NULL;

/* Define the object stores' settings (from _PG_init). */
void
DynObjStoreDefineSettings(void)
{
	DefineCustomIntVariable("dynindex.s3_part_size",
							"Part size of S3 multipart uploads (objects larger than one part are uploaded in parts).",
							"S3 accepts parts of 5 MB to 5 GB (the last part may be smaller).",
							&dynindex_s3_part_size_mb, 8, 5, 5120,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.s3_timeout",
							"Seconds an S3 request may stall (no byte moving) before it fails.",
							NULL, &dynindex_s3_timeout_s, 60, 1, 3600,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomBoolVariable("dynindex.export_sched_idle",
							 "Run export jobs' processes in the idle CPU scheduling class (SCHED_IDLE, Linux).",
							 "They then use only CPU time no other process wants, and the idle I/O class; off (or where SCHED_IDLE does not exist): dynindex.export_nice applies.",
							 &dynindex_export_sched_idle, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.export_nice",
							"Nice value of export jobs' processes (0: the server's priority) when they do not run under SCHED_IDLE.",
							"Exports are compression-bound background work; a positive value leaves the CPU to the writers first.",
							&dynindex_export_nice, 10, 0, 19,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.export_yield",
							"Percent of its time an export job pauses while other sessions write (0: never).",
							"While other sessions write (WAL not the job's own, from transactions), the job pauses after each 10 ms of work for this share of the time (50: as long as it worked, 90: nine times as long), leaving the CPUs to the writers; without writers it never pauses.",
							&dynindex_export_yield, 90, 0, 99,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("dynindex.export_file_size",
							"Uncompressed size of an export's data file after which the next one is started.",
							NULL, &dynindex_export_file_size_mb, 1024, 1, 1024 * 1024,
							PGC_SIGHUP, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomStringVariable("dynindex.exchange_directory",
							   "Server directory under which directory object stores may lie (empty: none may).",
							   "Set by a superuser; dynindex.set_object_store accepts only directories inside it.",
							   &dynindex_exchange_directory, "",
							   PGC_SUSET, 0, NULL, NULL, NULL);
	DynImportDefineSettings();
}

/* Raise a store failure: "<code>: <message>" with SQLSTATE DYN_OBJ_ERRCODE. */
void
DynObjFail(const char *code, const char *fmt,...)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	ereport(ERROR, (errcode(DYN_OBJ_ERRCODE), errmsg_internal("%s: %s", code, buf.data)));
	pg_unreachable();
}

/* Split a store failure's message into FailureCode and FailureMessage. */
bool
DynObjFailure(int sqlerrcode, const char *message, char **code, char **failure_message)
{
	const char *sep;

	if (sqlerrcode != DYN_OBJ_ERRCODE || message == NULL || strncmp(message, "S3", 2) != 0 ||
		(sep = strstr(message, ": ")) == NULL)
		return false;
	*code = pnstrdup(message, sep - message);
	*failure_message = pstrdup(sep + 2);
	return true;
}

/* Is the catalog of 0.3 (dynindex.object_stores) there? */
static bool
catalog_present(void)
{
	return OidIsValid(get_relname_relid("object_stores", get_namespace_oid("dynindex", false)));
}

/* A text column of the current SPI row (NULL stays NULL), copied to cxt. */
static char *
spi_text(int col, MemoryContext cxt)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull);

	if (isnull)
		return NULL;
	return MemoryContextStrdup(cxt, TextDatumGetCString(d));
}

/*
 * Read a bucket's row of dynindex.object_stores with the owner's rights:
 * NULL when there is none.
 */
static DynObjStore *
lookup(const char *bucket, const char *owner, bool *wrong_owner)
{
	MemoryContext cxt = CurrentMemoryContext;
	DynSecurityState sec;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	DynObjStore *s = NULL;
	char	   *kind;
	char	   *row_owner;
	bool		isnull;

	if (!catalog_present())
		return NULL;
	args[0] = CStringGetTextDatum(bucket);
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("SELECT kind, endpoint, region, access_key_id, secret_access_key, "
							  "coalesce(remote_bucket, bucket), path_style, directory, bucket_owner "
							  "FROM dynindex.object_stores WHERE bucket = $1",
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.object_stores");
	if (SPI_processed == 1)
	{
		s = MemoryContextAllocZero(cxt, sizeof(DynObjStore));
		kind = spi_text(1, cxt);
		s->kind = strcmp(kind, "s3") == 0 ? DYN_OBJ_S3 : DYN_OBJ_DIRECTORY;
		s->bucket = MemoryContextStrdup(cxt, bucket);
		s->endpoint = spi_text(2, cxt);
		s->region = spi_text(3, cxt);
		s->access_key_id = spi_text(4, cxt);
		s->secret_access_key = spi_text(5, cxt);
		s->remote_bucket = spi_text(6, cxt);
		s->path_style = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 7, &isnull));
		s->directory = spi_text(8, cxt);
		row_owner = spi_text(9, cxt);
		/* S3BucketOwner names the account the bucket must belong to (S3's ExpectedBucketOwner) */
		*wrong_owner = owner && strcmp(owner, row_owner ? row_owner : dynindex_account_id) != 0;
	}
	DynSecurityEndInternal(&sec);
	return s;
}

/* The store of a bucket. */
DynObjStore *
DynObjStoreOpen(const char *bucket, const char *owner)
{
	bool		wrong_owner = false;
	DynObjStore *s = lookup(bucket, owner, &wrong_owner);

	if (s == NULL)
		DynObjFail(DYN_OBJ_NO_SUCH_BUCKET, "The specified bucket does not exist");
	if (wrong_owner)
		DynObjFail(DYN_OBJ_ACCESS_DENIED, "Access Denied (the bucket's owner is not %s)", owner);
	if (s->kind == DYN_OBJ_DIRECTORY)
		DynDirCheckPath(s->directory);
	return s;
}

/* May the current user use the bucket's store? */
bool
DynObjStoreCheckUse(const char *bucket, const char *owner, bool write)
{
	DynObjStore *s;
	/* inside an operation (which may run with the owner's rights): its caller */
	Oid			role = DynSecurityOperation() ? DynSecurityCaller() : GetUserId();
	bool		wrong_owner = false;

	s = lookup(bucket, owner, &wrong_owner);
	if (s == NULL || s->kind == DYN_OBJ_S3)
		return true;
	if (superuser_arg(role))
		return true;
	return has_privs_of_role(role, write ? ROLE_PG_WRITE_SERVER_FILES : ROLE_PG_READ_SERVER_FILES);
}

const char *
DynObjStoreKind(DynObjStore *store)
{
	return store->kind == DYN_OBJ_S3 ? "s3" : "directory";
}

/* Server-side encryption of the objects written from now on. */
void
DynObjStoreSetEncryption(DynObjStore *store, const char *algorithm, const char *kms_key_id)
{
	int			n = 0;

	if (algorithm == NULL)
		return;
	if (store->kind != DYN_OBJ_S3)
		DynObjFail("S3SseNotSupported",
				   "Bucket %s is a server directory, which cannot encrypt the files it writes (S3SseAlgorithm %s)",
				   store->bucket, algorithm);
	store->sse[n++] = psprintf("x-amz-server-side-encryption: %s",
							   strcmp(algorithm, "KMS") == 0 ? "aws:kms" : algorithm);
	if (kms_key_id != NULL && strcmp(algorithm, "KMS") == 0)
		store->sse[n++] = psprintf("x-amz-server-side-encryption-aws-kms-key-id: %s", kms_key_id);
	store->sse[n] = NULL;
}

/* Write an object in one piece. */
void
DynObjPut(DynObjStore *store, const char *key, const char *data, size_t len)
{
	if (store->kind == DYN_OBJ_S3)
		DynS3Put(store, key, data, len);
	else
		DynDirPut(store, key, data, len);
}

/* Start writing an object. */
DynObjWriter *
DynObjWriterOpen(DynObjStore *store, const char *key)
{
	DynObjWriter *w = palloc0(sizeof(DynObjWriter));

	w->store = store;
	w->key = pstrdup(key);
	w->fd = -1;
	w->dirfd = -1;
	if (store->kind == DYN_OBJ_S3)
		DynS3WriterInit(w);
	else
		DynDirWriterInit(w);
	return w;
}

/* Append to an object being written. */
void
DynObjWrite(DynObjWriter *w, const char *data, size_t len)
{
	if (w->done)
		elog(ERROR, "object writer used after close");
	if (w->store->kind == DYN_OBJ_S3)
		DynS3Write(w, data, len);
	else
		DynDirWrite(w, data, len);
	w->size += len;
}

/* Finish an object: it appears whole. */
void
DynObjWriterClose(DynObjWriter *w)
{
	if (w->done)
		return;
	if (w->store->kind == DYN_OBJ_S3)
		DynS3WriterClose(w);
	else
		DynDirWriterClose(w);
	w->done = true;
}

/* Discard an object being written (never raises for a store failure). */
void
DynObjWriterAbort(DynObjWriter *w)
{
	if (w == NULL || w->done)
		return;
	w->done = true;
	if (w->store->kind == DYN_OBJ_S3)
		DynS3WriterAbort(w);
	else
		DynDirWriterAbort(w);
}

int64
DynObjWriterSize(DynObjWriter *w)
{
	return w->size;
}

const char *
DynObjWriterETag(DynObjWriter *w)
{
	return w->etag;
}

/* Delete an object. */
void
DynObjDelete(DynObjStore *store, const char *key)
{
	if (store->kind == DYN_OBJ_S3)
		DynS3Delete(store, key);
	else
		DynDirDelete(store, key);
}

/* Open an object for reading. */
DynObjReader *
DynObjReaderOpen(DynObjStore *store, const char *key, int64 *size)
{
	DynObjReader *r = palloc0(sizeof(DynObjReader));

	r->store = store;
	r->key = pstrdup(key);
	r->fd = -1;
	if (store->kind == DYN_OBJ_S3)
		DynS3ReaderInit(r);
	else
		DynDirReaderInit(r);
	if (size)
		*size = r->size;
	return r;
}

/* Read up to len bytes; 0 at the end. */
size_t
DynObjRead(DynObjReader *r, char *buf, size_t len)
{
	if (r->store->kind == DYN_OBJ_S3)
		return DynS3Read(r, buf, len);
	return DynDirRead(r, buf, len);
}

void
DynObjReaderClose(DynObjReader *r)
{
	if (r == NULL)
		return;
	if (r->store->kind == DYN_OBJ_DIRECTORY)
		DynDirReaderClose(r);
	else if (r->buf.data)
		pfree(r->buf.data);
	r->buf.data = NULL;
}

/* List the objects under a prefix. */
void
DynObjList(DynObjStore *store, const char *prefix, DynObjListFn fn, void *arg)
{
	if (store->kind == DYN_OBJ_S3)
		DynS3List(store, prefix, fn, arg);
	else
		DynDirList(store, prefix, fn, arg);
}

/* ---------------------------------------------------------------- SQL functions */

/* Only superusers and dynindex_admin members manage object stores. */
static void
require_store_admin(void)
{
	if (!DynSecurityIsAccountAdmin(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to manage dynindex object stores"),
				 errdetail("Only superusers and members of dynindex_admin may.")));
	if (!catalog_present())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex object stores need version 0.3 of the extension in this database"),
				 errhint("Run ALTER EXTENSION dynindex UPDATE.")));
}

/* An optional text argument. */
static char *
opt_text(FunctionCallInfo fcinfo, int n)
{
	return PG_ARGISNULL(n) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(n));
}

/* S3's bucket naming rules, loosely: what the request pattern of DynamoDB's S3Bucket allows. */
static bool
bucket_name_ok(const char *b)
{
	size_t		n = strlen(b);

	if (n < 1 || n > 255 || !isalnum((unsigned char) b[0]) || !isalnum((unsigned char) b[n - 1]))
		return false;
	for (const char *p = b; *p; p++)
		if (!isalnum((unsigned char) *p) && *p != '.' && *p != '-' && *p != '_')
			return false;
	return true;
}

PG_FUNCTION_INFO_V1(dynindex_set_object_store);

/*
 * dynindex.set_object_store(bucket, kind, endpoint, region, access_key_id,
 * secret_access_key, path_style, directory, remote_bucket, bucket_owner)
 */
Datum
dynindex_set_object_store(PG_FUNCTION_ARGS)
{
	char	   *bucket = opt_text(fcinfo, 0);
	char	   *kind = opt_text(fcinfo, 1);
	char	   *endpoint = opt_text(fcinfo, 2);
	char	   *region = opt_text(fcinfo, 3);
	char	   *key_id = opt_text(fcinfo, 4);
	char	   *secret = opt_text(fcinfo, 5);
	bool		path_style = PG_ARGISNULL(6) ? true : PG_GETARG_BOOL(6);
	char	   *directory = opt_text(fcinfo, 7);
	char	   *remote = opt_text(fcinfo, 8);
	char	   *owner = opt_text(fcinfo, 9);
	DynSecurityState sec;
	Oid			types[10] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, BOOLOID, TEXTOID, TEXTOID, TEXTOID};
	Datum		args[10];
	char		nulls[11] = "          ";
	char	   *vals[10] = {bucket, kind, endpoint, region, key_id, secret, NULL, directory, remote, owner};

	require_store_admin();
	if (bucket == NULL || !bucket_name_ok(bucket))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("invalid bucket name"),
						errdetail("A bucket name has 1 to 255 letters, digits, '.', '-' or '_', and starts and ends with a letter or digit.")));
	if (kind == NULL || (strcmp(kind, "s3") != 0 && strcmp(kind, "directory") != 0))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("object store kind must be 's3' or 'directory'")));
	if (strcmp(kind, "s3") == 0)
	{
		if (endpoint == NULL || (strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("an s3 object store needs an endpoint URL (http:// or https://)")));
		if (key_id == NULL || secret == NULL)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("an s3 object store needs an access key id and a secret access key")));
		if (strchr(key_id, ':') != NULL)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("an access key id cannot contain ':'")));
		if (remote && !bucket_name_ok(remote))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("invalid remote bucket name")));
		if (directory)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("an s3 object store has no directory")));
		/* no trailing slash: keys are appended as /bucket/key */
		while (strlen(endpoint) > 8 && endpoint[strlen(endpoint) - 1] == '/')
			endpoint[strlen(endpoint) - 1] = '\0';
		vals[2] = endpoint;
		if (region == NULL)
			vals[3] = "us-east-1";
	}
	else
	{
		if (directory == NULL)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("a directory object store needs a directory")));
		if (endpoint || key_id || secret || remote)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							errmsg("a directory object store has no endpoint, credentials or remote bucket")));
		DynDirCheckPath(directory);
	}
	for (int i = 0; i < 10; i++)
	{
		if (i == 6)
			args[i] = BoolGetDatum(path_style);
		else if (vals[i])
			args[i] = CStringGetTextDatum(vals[i]);
		else
			nulls[i] = 'n';
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("INSERT INTO dynindex.object_stores AS o (bucket, kind, endpoint, region, access_key_id, "
							  "secret_access_key, path_style, directory, remote_bucket, bucket_owner) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
							  "ON CONFLICT (bucket) DO UPDATE SET kind = $2, endpoint = $3, region = $4, "
							  "access_key_id = $5, secret_access_key = $6, path_style = $7, directory = $8, "
							  "remote_bucket = $9, bucket_owner = $10",
							  10, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write dynindex.object_stores");
	DynSecurityEndInternal(&sec);
	SPI_finish();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(dynindex_drop_object_store);

/* dynindex.drop_object_store(bucket) RETURNS boolean: was there one? */
Datum
dynindex_drop_object_store(PG_FUNCTION_ARGS)
{
	DynSecurityState sec;
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	bool		found;

	require_store_admin();
	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(false);
	args[0] = PointerGetDatum(PG_GETARG_TEXT_PP(0));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute_with_args("DELETE FROM dynindex.object_stores WHERE bucket = $1",
							  1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not write dynindex.object_stores");
	found = SPI_processed > 0;
	DynSecurityEndInternal(&sec);
	SPI_finish();
	PG_RETURN_BOOL(found);
}

PG_FUNCTION_INFO_V1(dynindex_list_object_stores);

/*
 * dynindex.list_object_stores(): every store without its secret (a row per
 * bucket: bucket, kind, endpoint, region, access_key_id, path_style,
 * directory, remote_bucket, bucket_owner).
 */
Datum
dynindex_list_object_stores(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DynSecurityState sec;

	require_store_admin();
	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynSecurityBeginInternal(&sec);
	if (SPI_execute("SELECT bucket, kind, endpoint, region, access_key_id, path_style, directory, "
					"remote_bucket, bucket_owner FROM dynindex.object_stores ORDER BY bucket",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.object_stores");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Datum		values[9];
		bool		isnull[9];

		for (int c = 0; c < 9; c++)
			values[c] = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c + 1, &isnull[c]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	DynSecurityEndInternal(&sec);
	SPI_finish();
	return (Datum) 0;
}

/* Open a bucket's store for an administrator's SQL function (reading or writing). */
static DynObjStore *
admin_open(FunctionCallInfo fcinfo, bool write)
{
	char	   *bucket;

	require_store_admin();
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("bucket must not be null")));
	bucket = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!DynObjStoreCheckUse(bucket, NULL, write))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s the files of directory store \"%s\"", write ? "write" : "read", bucket),
				 errdetail("Directory stores need membership in %s.", write ? "pg_write_server_files" : "pg_read_server_files")));
	return DynObjStoreOpen(bucket, NULL);
}

typedef struct ListOut
{
	ReturnSetInfo *rsinfo;
} ListOut;

static void
list_out(const char *key, int64 size, void *arg)
{
	ListOut    *o = arg;
	Datum		values[2] = {CStringGetTextDatum(key), Int64GetDatum(size)};
	bool		isnull[2] = {false, false};

	tuplestore_putvalues(o->rsinfo->setResult, o->rsinfo->setDesc, values, isnull);
}

PG_FUNCTION_INFO_V1(dynindex_list_objects);

/* dynindex.list_objects(bucket, prefix) RETURNS TABLE (key text, size bigint) */
Datum
dynindex_list_objects(PG_FUNCTION_ARGS)
{
	ListOut		o;
	DynObjStore *s;
	char	   *prefix;

	InitMaterializedSRF(fcinfo, 0);
	o.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	s = admin_open(fcinfo, false);
	prefix = PG_ARGISNULL(1) ? "" : text_to_cstring(PG_GETARG_TEXT_PP(1));
	DynObjList(s, prefix, list_out, &o);
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(dynindex_read_object);

/* dynindex.read_object(bucket, key) RETURNS bytea: a whole object */
Datum
dynindex_read_object(PG_FUNCTION_ARGS)
{
	DynObjStore *s;
	DynObjReader *r;
	int64		size;
	StringInfoData buf;
	char		chunk[65536];
	size_t		n;
	bytea	   *out;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	s = admin_open(fcinfo, false);
	if (PG_ARGISNULL(1))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("key must not be null")));
	r = DynObjReaderOpen(s, text_to_cstring(PG_GETARG_TEXT_PP(1)), &size);
	if (size > MaxAllocSize - VARHDRSZ - 1)
		ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("object too large to read into a bytea")));
	initStringInfo(&buf);
	while ((n = DynObjRead(r, chunk, sizeof(chunk))) > 0)
	{
		if (buf.len + n > MaxAllocSize - VARHDRSZ - 1)
			ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("object too large to read into a bytea")));
		appendBinaryStringInfo(&buf, chunk, n);
	}
	DynObjReaderClose(r);
	/* out of SPI's memory, which SPI_finish releases */
	out = SPI_palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(out, VARHDRSZ + buf.len);
	memcpy(VARDATA(out), buf.data, buf.len);
	SPI_finish();
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(dynindex_write_object);

/* dynindex.write_object(bucket, key, data bytea) RETURNS text: the object's ETag (NULL for directories) */
Datum
dynindex_write_object(PG_FUNCTION_ARGS)
{
	DynObjStore *s;
	DynObjWriter *w;
	bytea	   *data;
	const char *etag;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	s = admin_open(fcinfo, true);
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("key and data must not be null")));
	data = PG_GETARG_BYTEA_PP(2);
	w = DynObjWriterOpen(s, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	PG_TRY();
	{
		/* in pieces of 1 MB, as a stream would come */
		const char *p = VARDATA_ANY(data);
		size_t		left = VARSIZE_ANY_EXHDR(data);

		while (left > 0)
		{
			size_t		n = Min(left, (size_t) 1024 * 1024);

			DynObjWrite(w, p, n);
			p += n;
			left -= n;
		}
		DynObjWriterClose(w);
	}
	PG_CATCH();
	{
		DynObjWriterAbort(w);
		PG_RE_THROW();
	}
	PG_END_TRY();
	etag = DynObjWriterETag(w);
	if (etag == NULL)
	{
		SPI_finish();
		PG_RETURN_NULL();
	}
	{
		text	   *out = SPI_palloc(VARHDRSZ + strlen(etag));

		SET_VARSIZE(out, VARHDRSZ + strlen(etag));
		memcpy(VARDATA(out), etag, strlen(etag));
		SPI_finish();
		PG_RETURN_TEXT_P(out);
	}
}
