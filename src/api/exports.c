/*
 * exports.c — ExportTableToPointInTime, DescribeExport, ListExports.
 *
 * ExportTableToPointInTime validates the request as DynamoDB does, checks
 * that point-in-time recovery is on for the table and that the times lie in
 * its recovery window, records the export in dynindex.exports and submits
 * its job (common/jobs.h): the export is written by a background worker
 * once the request commits (src/exchange/export.c), and the response says
 * IN_PROGRESS, as DynamoDB's does.  The ExportArn is the table's ARN +
 * "/export/<id>", the id in DynamoDB's form (14 digits of epoch
 * milliseconds, '-', 8 hex digits).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "api/api.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/arn.h"
#include "common/errors.h"
#include "common/jobs.h"
#include "exchange/objstore.h"
#include "history/history.h"
#include "security/security.h"

/* DynamoDB's limit on exports running at once (per account and region). */
#define EXPORT_MAX_CONCURRENT 300
/* Incremental export periods: at least 15 minutes, at most 24 hours. */
#define INCREMENTAL_MIN_SECS (15 * 60)
#define INCREMENTAL_MAX_SECS (24 * 60 * 60)
/* A ClientToken is remembered for 8 hours. */
#define CLIENT_TOKEN_HOURS 8

static const char *const export_format_enum[] = {"DYNAMODB_JSON", "ION", NULL};
static const char *const export_type_enum[] = {"FULL_EXPORT", "INCREMENTAL_EXPORT", NULL};
static const char *const view_type_enum[] = {"NEW_IMAGE", "NEW_AND_OLD_IMAGES", NULL};
static const char *const sse_enum[] = {"AES256", "KMS", NULL};

static const RqField incremental_fields[] = {
	{.name = "ExportFromTime",.type = RQ_ANY},
	{.name = "ExportToTime",.type = RQ_ANY},
	{.name = "ExportViewType",.type = RQ_STRING,.enumvals = view_type_enum},
	{0}
};

static const RqField export_fields[] = {
	{.name = "TableArn",.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = 1024},
	{.name = "ExportTime",.type = RQ_ANY},
	{.name = "ClientToken",.type = RQ_STRING},
	{.name = "S3Bucket",.type = RQ_STRING,.notnull = true,.maxlen = 255},
	{.name = "S3BucketOwner",.type = RQ_STRING},
	{.name = "S3Prefix",.type = RQ_STRING,.maxlen = 1024},
	{.name = "S3SseAlgorithm",.type = RQ_STRING,.enumvals = sse_enum},
	{.name = "S3SseKmsKeyId",.type = RQ_STRING,.minlen = 1,.maxlen = 2048},
	{.name = "ExportFormat",.type = RQ_STRING,.enumvals = export_format_enum},
	{.name = "ExportType",.type = RQ_STRING,.enumvals = export_type_enum},
	{.name = "IncrementalExportSpecification",.type = RQ_STRUCT,.structname = "IncrementalExportSpecification",
	.fields = incremental_fields},
	{0}
};

static const RqField describe_fields[] = {
	{.name = "ExportArn",.type = RQ_STRING,.notnull = true,.minlen = 37,.maxlen = 1024},
	{0}
};

static const RqField list_fields[] = {
	{.name = "TableArn",.type = RQ_STRING,.minlen = 1,.maxlen = 1024},
	{.name = "MaxResults",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 25},
	{.name = "NextToken",.type = RQ_STRING},
	{0}
};

/* Epoch seconds with milliseconds, as DynamoDB's timestamps. */
#define EPOCH(x) "round(extract(epoch FROM " x "), 3)"

/* The ExportDescription of row e. */
#define DESCRIPTION_SQL \
	"jsonb_strip_nulls(jsonb_build_object(" \
	"'ExportArn', e.export_arn, 'ExportStatus', e.status, 'StartTime', " EPOCH("e.start_time") ", " \
	"'EndTime', " EPOCH("e.end_time") ", 'ExportManifest', e.export_manifest, 'TableArn', e.table_arn, " \
	"'TableId', e.table_id, 'ExportTime', " EPOCH("e.export_time") ", 'ClientToken', e.client_token, " \
	"'S3Bucket', e.s3_bucket, 'S3BucketOwner', e.s3_bucket_owner, 'S3Prefix', e.s3_prefix, " \
	"'S3SseAlgorithm', e.s3_sse_algorithm, 'S3SseKmsKeyId', e.s3_sse_kms_key_id, " \
	"'FailureCode', e.failure_code, 'FailureMessage', e.failure_message, 'ExportFormat', e.export_format, " \
	"'BilledSizeBytes', e.billed_size_bytes, 'ItemCount', e.item_count, 'ExportType', e.export_type, " \
	"'IncrementalExportSpecification', CASE WHEN e.export_type = 'INCREMENTAL_EXPORT' THEN jsonb_build_object(" \
	"  'ExportFromTime', " EPOCH("e.export_from_time") ", 'ExportToTime', " EPOCH("e.export_to_time") ", " \
	"  'ExportViewType', e.export_view_type) END))"

/* ---------------------------------------------------------------- helpers */

/* A timestamp member (epoch seconds, a JSON number): false when absent. */
static bool
get_time(JsonbContainer *c, const char *name, TimestampTz *out)
{
	JsonbValue *v = RqGet(c, name);
	double		secs;

	if (v == NULL || v->type == jbvNull)
		return false;
	if (v->type != jbvNumeric)
		DynSerializationErrorFor(v, "Timestamp");
	secs = DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric)));
	if (isnan(secs) || secs < -1e11 || secs > 1e11)
		DynValidationError("Invalid timestamp for %s", name);
	*out = (TimestampTz) ((secs - ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY)) * USECS_PER_SEC);
	return true;
}

/* The table an export ARN or a TableArn names (its name; NULL if not an ARN of a table). */
static char *
arn_table_name(const char *arn)
{
	const char *t = strstr(arn, ":table/");
	const char *end;

	if (strncmp(arn, "arn:", 4) != 0 || t == NULL)
		return NULL;
	t += 7;
	end = strchr(t, '/');
	return end ? pnstrdup(t, end - t) : pstrdup(t);
}

/* The ExportDescription of an export (or NULL). */
static Jsonb *
description(const char *arn)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(arn)};

	return RqQueryJsonb("SELECT " DESCRIPTION_SQL " FROM dynindex.exports e WHERE e.export_arn = $1",
					   1, types, args, NULL);
}

/* Refuse operations on a database still at 0.1/0.2 (no exports catalog). */
static void
require_catalog(void)
{
	if (!OidIsValid(get_relname_relid("exports", get_namespace_oid("dynindex", false))) ||
		!DynJobsCatalogPresent())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("dynindex exports need version 0.3 of the extension in this database"),
				 errhint("Run ALTER EXTENSION dynindex UPDATE.")));
}

/*
 * Wait (at most 5 s) until the table's latest restorable time reaches t: the
 * transactions that began before t commit or abort.  Updates *earliest and
 * *latest.
 */
static void
wait_for_horizon(DynTable *t, TimestampTz at, TimestampTz *earliest, TimestampTz *latest)
{
	for (int i = 0; at > *latest && i < 500; i++)
	{
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
		DynHistoryWindow(t, earliest, latest);
	}
}

/* Format a time for messages: epoch seconds. */
static char *
epoch_text(TimestampTz t)
{
	return psprintf("%.3f", (double) (t - SetEpochTimestamp()) / USECS_PER_SEC);
}

/* ---------------------------------------------------------------- operations */

/* ExportTableToPointInTime */
Jsonb *
DynExportTableToPointInTime(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *table_arn;
	char	   *name;
	char	   *bucket;
	char	   *owner;
	char	   *token;
	char	   *type;
	char	   *view = NULL;
	DynTable   *t;
	TimestampTz earliest;
	TimestampTz latest;
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz export_time = 0;
	TimestampTz from_time = 0;
	TimestampTz to_time = 0;
	bool		has_time;
	JsonbValue *spec;
	int64		num;
	bool		isnull;

	RqValidate(req, export_fields);
	require_catalog();
	table_arn = RqGetString(r, "TableArn");
	bucket = RqGetString(r, "S3Bucket");
	owner = RqGetString(r, "S3BucketOwner");
	token = RqGetString(r, "ClientToken");
	type = RqGetString(r, "ExportType");
	if (type == NULL)
		type = "FULL_EXPORT";
	spec = RqGet(r, "IncrementalExportSpecification");
	if (spec && spec->type == jbvNull)
		spec = NULL;

	/* S3's own constraints on the bucket name and owner (the API's patterns) */
	{
		size_t		n = strlen(bucket);
		bool		ok = n >= 2 && isalnum((unsigned char) bucket[0]) && isalnum((unsigned char) bucket[n - 1]);

		for (const char *p = bucket; ok && *p; p++)
			ok = isalnum((unsigned char) *p) || *p == '.' || *p == '-' || *p == '_';
		if (!ok)
			DynValidationError("1 validation error detected: Value '%s' at 's3Bucket' failed to satisfy constraint: "
							   "Member must satisfy regular expression pattern: ^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$",
							   bucket);
	}
	if (owner)
	{
		bool		ok = strlen(owner) == 12;

		for (const char *p = owner; ok && *p; p++)
			ok = isdigit((unsigned char) *p);
		if (!ok)
			DynValidationError("1 validation error detected: Value '%s' at 's3BucketOwner' failed to satisfy constraint: "
							   "Member must satisfy regular expression pattern: [0-9]{12}", owner);
	}
	if (token && (token[0] == '\0' || strchr(token, '$') != NULL))
		DynValidationError("1 validation error detected: Value '%s' at 'clientToken' failed to satisfy constraint: "
						   "Member must satisfy regular expression pattern: ^[^\\$]+$", token);

	name = arn_table_name(table_arn);
	if (name == NULL)
		DynValidationError("Invalid TableArn: %s", table_arn);

	/* the kind of export decides which times the request may give */
	has_time = get_time(r, "ExportTime", &export_time);
	if (strcmp(type, "INCREMENTAL_EXPORT") == 0)
	{
		if (spec == NULL)
			DynValidationError("IncrementalExportSpecification must be provided when ExportType is INCREMENTAL_EXPORT");
		if (has_time)
			DynValidationError("ExportTime cannot be provided when ExportType is INCREMENTAL_EXPORT");
		if (!get_time(spec->val.binary.data, "ExportFromTime", &from_time))
			DynValidationError("ExportFromTime must be provided for an incremental export");
		view = RqGetString(spec->val.binary.data, "ExportViewType");
		if (view == NULL)
			view = "NEW_AND_OLD_IMAGES";
	}
	else if (spec != NULL)
		DynValidationError("IncrementalExportSpecification cannot be provided when ExportType is FULL_EXPORT");

	t = DynCatalogGetTable(name);	/* the read right */
	if (t == NULL)
		DynError(DYN_ERR_TABLE_NOT_FOUND, "Table not found: %s", name);
	if (strcmp(DynTableArn(t->name), table_arn) != 0)
		DynError(DYN_ERR_TABLE_NOT_FOUND, "Table not found: %s", name);

	/* ClientToken: the same request again answers the same export */
	if (token)
	{
		Oid			types[2] = {TEXTOID, INT4OID};
		Datum		args[2] = {CStringGetTextDatum(token), Int32GetDatum(CLIENT_TOKEN_HOURS)};

		if (SPI_execute_with_args("SELECT e.request, " DESCRIPTION_SQL " FROM dynindex.exports e "
								  "WHERE e.client_token = $1 AND e.requested_by = current_user "
								  "AND e.start_time > now() - make_interval(hours => $2) "
								  "ORDER BY e.export_num DESC LIMIT 1",
								  2, types, args, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read dynindex.exports");
		if (SPI_processed == 1)
		{
			Jsonb	   *prev = DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
			Jsonb	   *desc = DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));

			if (compareJsonbContainers(&prev->root, &req->root) != 0)
				DynError(DYN_ERR_IDEMPOTENT_PARAMETER_MISMATCH,
						 "Request has the same client token as a previous request, but is not the same request");
			return RqWrap("ExportDescription", desc);
		}
	}

	/* point-in-time recovery and its window */
	if (!DynHistoryWindow(t, &earliest, &latest))
		DynError(DYN_ERR_POINT_IN_TIME_RECOVERY_UNAVAILABLE, "Point in time recovery is not enabled for table '%s'", t->name);
	if (strcmp(type, "FULL_EXPORT") == 0)
	{
		/* now, or the latest restorable time if that is earlier (transactions still committing) */
		if (!has_time)
			export_time = Min(latest, now);
		else if (export_time > now)
			DynError(DYN_ERR_INVALID_EXPORT_TIME, "ExportTime %s is in the future", epoch_text(export_time));
		else if (export_time < earliest)
			DynError(DYN_ERR_INVALID_EXPORT_TIME,
					 "ExportTime %s is earlier than the earliest restorable time %s of table %s",
					 epoch_text(export_time), epoch_text(earliest), t->name);
		/* a time just past the horizon: wait for the transactions that began before it */
		wait_for_horizon(t, export_time, &earliest, &latest);
		if (export_time > latest)
			DynError(DYN_ERR_INVALID_EXPORT_TIME, "ExportTime %s is later than the latest restorable time %s of table %s",
					 epoch_text(export_time), epoch_text(latest), t->name);
	}
	else
	{
		bool		has_to = get_time(spec->val.binary.data, "ExportToTime", &to_time);

		if (!has_to)
			to_time = latest;
		if (from_time >= to_time)
			DynValidationError("ExportFromTime must be earlier than ExportToTime");
		if (to_time - from_time < (int64) INCREMENTAL_MIN_SECS * USECS_PER_SEC)
			DynValidationError("The duration between ExportFromTime and ExportToTime must be at least 15 minutes");
		if (to_time - from_time > (int64) INCREMENTAL_MAX_SECS * USECS_PER_SEC)
			DynValidationError("The duration between ExportFromTime and ExportToTime must be at most 24 hours");
		if (from_time < earliest)
			DynError(DYN_ERR_INVALID_EXPORT_TIME,
					 "ExportFromTime %s is earlier than the earliest restorable time %s of table %s",
					 epoch_text(from_time), epoch_text(earliest), t->name);
		if (has_to && to_time > now)
			DynError(DYN_ERR_INVALID_EXPORT_TIME, "ExportToTime %s is in the future", epoch_text(to_time));
		wait_for_horizon(t, to_time, &earliest, &latest);
		if (to_time > latest)
			DynError(DYN_ERR_INVALID_EXPORT_TIME, "ExportToTime %s is later than the latest restorable time %s of table %s",
					 epoch_text(to_time), epoch_text(latest), t->name);
	}

	/* a directory store is for roles that may write server files (docs/security.md) */
	if (!DynObjStoreCheckUse(bucket, owner, true))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),	/* as DynSecurityDeny's */
				 errmsg_internal("AccessDeniedException: User: arn:aws:iam::%s:user/%s is not authorized to perform: "
								 "s3:PutObject on resource: arn:aws:s3:::%s because no identity-based policy allows "
								 "the s3:PutObject action",
								 dynindex_account_id, GetUserNameFromId(DynSecurityCaller(), false), bucket)));

	/* DynamoDB's limit on exports in progress */
	if (SPI_execute("SELECT count(*) FROM dynindex.exports WHERE status = 'IN_PROGRESS'", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read dynindex.exports");
	if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) >= EXPORT_MAX_CONCURRENT)
		DynError(DYN_ERR_LIMIT_EXCEEDED,
				 "There is a limit of %d concurrent exports in progress. Please wait for exports to complete and try again.",
				 EXPORT_MAX_CONCURRENT);

	num = DynJobSubmit("export");
	{
		Oid			types[19] = {INT8OID, TEXTOID, TEXTOID, UUIDOID, TEXTOID, TEXTOID, TEXTOID,
			TIMESTAMPTZOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID,
		TEXTOID, JSONBOID, TIMESTAMPTZOID, TEXTOID};
		Datum		args[19];
		char		nulls[20] = "                   ";
		const char *vals[] = {
			[10] = bucket,[11] = owner,[12] = RqGetString(r, "S3Prefix"),[13] = RqGetString(r, "S3SseAlgorithm"),
			[14] = RqGetString(r, "S3SseKmsKeyId"),[15] = token,[18] = view
		};
		Jsonb	   *desc;
		const char *format = RqGetString(r, "ExportFormat");

		args[0] = Int64GetDatum(num);
		args[1] = CStringGetTextDatum(DynTableArn(t->name));
		args[2] = CStringGetTextDatum(t->name);
		args[3] = DirectFunctionCall1(uuid_in, CStringGetDatum(t->table_id));
		args[4] = CStringGetTextDatum(type);
		args[5] = CStringGetTextDatum(format ? format : "DYNAMODB_JSON");
		args[6] = CStringGetTextDatum(GetUserNameFromId(DynSecurityCaller(), false));
		args[7] = TimestampTzGetDatum(export_time);
		args[8] = TimestampTzGetDatum(from_time);
		args[9] = TimestampTzGetDatum(to_time);
		if (strcmp(type, "FULL_EXPORT") == 0)
			nulls[8] = nulls[9] = 'n';
		else
			nulls[7] = 'n';
		for (int i = 10; i < 19; i++)
		{
			if (i == 16 || i == 17)
				continue;
			if (vals[i])
				args[i] = CStringGetTextDatum(vals[i]);
			else
				nulls[i] = 'n';
		}
		args[16] = JsonbPGetDatum(req);
		args[17] = TimestampTzGetDatum(now);
		desc = RqQueryJsonb("WITH i AS (SELECT lpad(greatest(floor(extract(epoch FROM $18) * 1000)::int8, "
						   "    (SELECT max(left(export_id, 14)::int8) + 1 FROM dynindex.exports))::text, 14, '0') "
						   "    || '-' || substr(md5(random()::text), 1, 8) AS id), "
						   "e AS (INSERT INTO dynindex.exports (export_num, export_arn, export_id, table_name, table_arn, "
						   "    table_id, export_type, export_format, requested_by, export_time, export_from_time, "
						   "    export_to_time, s3_bucket, s3_bucket_owner, s3_prefix, s3_sse_algorithm, s3_sse_kms_key_id, "
						   "    client_token, request, start_time, export_view_type) "
						   "  SELECT $1, $2 || '/export/' || i.id, i.id, $3, $2, $4, $5, $6, $7, $8, $9, $10, $11, $12, "
						   "    $13, $14, $15, $16, $17, $18, $19 FROM i RETURNING *) "
						   "SELECT " DESCRIPTION_SQL " FROM e",
						   19, types, args, nulls);
		if (desc == NULL)
			elog(ERROR, "could not record an export");
		return RqWrap("ExportDescription", desc);
	}
}

/* DescribeExport */
Jsonb *
DynDescribeExport(Jsonb *req)
{
	char	   *arn;
	Jsonb	   *desc;

	RqValidate(req, describe_fields);
	require_catalog();
	arn = RqGetString(&req->root, "ExportArn");
	DynCatalogCheckExport(arn);	/* the read right on the export's table */
	desc = description(arn);
	if (desc == NULL)
		DynError(DYN_ERR_EXPORT_NOT_FOUND, "Export not found: %s", arn);
	return RqWrap("ExportDescription", desc);
}

/* ListExports' NextToken: the position of the page's last export, in decimal. */
static char *
export_token(int64 position)
{
	return psprintf(INT64_FORMAT, position);
}

/* ListExports */
Jsonb *
DynListExports(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *table_arn;
	char	   *next;
	int64		max;
	int64		after = 0;
	Oid			types[5] = {TEXTOID, INT8OID, INT8OID, BOOLOID, OIDOID};
	Datum		args[5];
	char		nulls[6] = "     ";

	RqValidate(req, list_fields);
	require_catalog();
	table_arn = RqGetString(r, "TableArn");
	next = RqGetString(r, "NextToken");
	max = RqGetInt(r, "MaxResults", 25);
	if (next)
	{
		char	   *end;

		errno = 0;
		after = strtoll(next, &end, 10);
		if (errno != 0 || *end != '\0' || end == next || after < 0)
			DynValidationError("Invalid NextToken");
	}
	if (table_arn)
	{
		char	   *name = arn_table_name(table_arn);

		if (name == NULL)
			DynValidationError("Invalid TableArn: %s", table_arn);
		DynCatalogCheckTableRight(name, DYN_ACCESS_READ);
		args[0] = CStringGetTextDatum(table_arn);
	}
	else
		nulls[0] = 'n';
	args[1] = Int64GetDatum(after);
	args[2] = Int64GetDatum(max + 1);
	args[3] = BoolGetDatum(DynSecurityIsAccountAdmin(DynSecurityCaller()));
	args[4] = ObjectIdGetDatum(DynSecurityCaller());
	/* exports in the order they were requested; only those of tables the caller may read */
	if (SPI_execute_with_args("SELECT jsonb_build_object('ExportArn', e.export_arn, 'ExportStatus', e.status, "
							  "'ExportType', e.export_type), e.export_num FROM dynindex.exports e "
							  "WHERE ($1::text IS NULL OR e.table_arn = $1) AND e.export_num > $2 "
							  "AND ($4 OR EXISTS (SELECT 1 FROM dynindex.tables t WHERE t.table_name = e.table_name "
							  "AND pg_catalog.has_table_privilege($5, t.storage, 'SELECT'))) "
							  "ORDER BY e.export_num LIMIT $3",
							  5, types, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list exports");
return RqListPage("ExportSummaries", max, export_token);
}
