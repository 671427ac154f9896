/*
 * imports.c — ImportTable, DescribeImport, ListImports (docs/import-export.md).
 *
 * ImportTable checks the request, creates the new table through CreateTable's
 * code (DynTableCreate) in the request's transaction, marked "Importing" in its
 * options (TableStatus CREATING: only DescribeTable, DeleteTable's refusal and
 * the import see it, src/catalog/catalog.c), records the import
 * (dynindex.imports, IN_PROGRESS) and a job (common/jobs.h) whose process
 * starts when the request commits and loads the items (src/exchange/import.c).
 *
 * The import ARN is the table's ARN + "/import/<id>", the id in DynamoDB's
 * form: 14 digits of epoch milliseconds, '-', 8 hex digits.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "catalog/pg_authid.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "api/api.h"
#include "api/request.h"
#include "api/tables.h"
#include "catalog/dyn_catalog.h"
#include "common/arn.h"
#include "common/errors.h"
#include "common/jobs.h"
#include "security/security.h"

/* DynamoDB: "up to 50 concurrent import jobs" per account */
#define IMPORT_MAX_CONCURRENT 50
/* A ClientToken is valid for 8 hours after the first request that uses it. */
#define CLIENT_TOKEN_HOURS 8

/* ---------------------------------------------------------------- schemas */

static const char *const format_enum[] = {"DYNAMODB_JSON", "ION", "CSV", NULL};
static const char *const compression_enum[] = {"GZIP", "ZSTD", "NONE", NULL};

static const RqField s3_source_fields[] = {
	{.name = "S3BucketOwner",.type = RQ_STRING},
	{.name = "S3Bucket",.type = RQ_STRING,.notnull = true,.maxlen = 255},
	{.name = "S3KeyPrefix",.type = RQ_STRING,.maxlen = 1024},
	{0}
};

/* a null column name is refused here: the import job reads names only (exchange/import.c) */
static const RqField header_elem = {.type = RQ_STRING,.notnull = true,.minlen = 1,.maxlen = 65536};

static const RqField csv_fields[] = {
	{.name = "Delimiter",.type = RQ_STRING,.minlen = 1,.maxlen = 1},
	{.name = "HeaderList",.type = RQ_LIST,.elem = &header_elem,.minlen = 1,.maxlen = 255},
	{0}
};

static const RqField format_options_fields[] = {
	{.name = "Csv",.type = RQ_STRUCT,.structname = "CsvOptions",.fields = csv_fields},
	{0}
};

/* TableCreationParameters: CreateTable's members of these names (filled in by import_schema) */
static RqField creation_fields[] = {
	{.name = "TableName"},
	{.name = "AttributeDefinitions"},
	{.name = "KeySchema"},
	{.name = "BillingMode"},
	{.name = "ProvisionedThroughput"},
	{.name = "OnDemandThroughput"},
	{.name = "SSESpecification"},
	{.name = "GlobalSecondaryIndexes"},
	{0}
};

static const RqField import_fields[] = {
	{.name = "ClientToken",.type = RQ_STRING},
	{.name = "S3BucketSource",.type = RQ_STRUCT,.structname = "S3BucketSource",.fields = s3_source_fields,.notnull = true},
	{.name = "InputFormat",.type = RQ_STRING,.notnull = true,.enumvals = format_enum},
	{.name = "InputFormatOptions",.type = RQ_STRUCT,.structname = "InputFormatOptions",.fields = format_options_fields},
	{.name = "InputCompressionType",.type = RQ_STRING,.enumvals = compression_enum},
	{.name = "TableCreationParameters",.type = RQ_STRUCT,.structname = "TableCreationParameters",
	.fields = creation_fields,.notnull = true},
	{0}
};

static const RqField describe_fields[] = {
	{.name = "ImportArn",.type = RQ_STRING,.notnull = true,.minlen = 37,.maxlen = 1024},
	{0}
};

static const RqField list_fields[] = {
	{.name = "TableArn",.type = RQ_STRING,.minlen = 1,.maxlen = 1024},
	{.name = "PageSize",.type = RQ_INTEGER,.hasmin = true,.minval = 1,.hasmax = true,.maxval = 25},
	{.name = "NextToken",.type = RQ_STRING,.minlen = 112,.maxlen = 1024},
	{0}
};

/* ImportTable's schema: TableCreationParameters' members are CreateTable's. */
static const RqField *
import_schema(void)
{
	for (RqField *f = creation_fields; f->name; f++)
	{
		const RqField *c;

		for (c = DynCreateTableFields; c->name; c++)
			if (strcmp(c->name, f->name) == 0)
			{
				*f = *c;
				break;
			}
		if (strcmp(f->name, "TableName") == 0)
			f->required = false, f->notnull = true;
	}
	return import_fields;
}

/* ---------------------------------------------------------------- SQL */

#define EPOCH(x) "round(extract(epoch FROM " x "), 3)"

/* The ImportTableDescription of import row i. */
#define DESCRIPTION_SQL \
	"jsonb_strip_nulls(jsonb_build_object(" \
	"'ImportArn', i.import_arn, 'ImportStatus', i.status, 'TableArn', i.table_arn, 'TableId', i.table_id, " \
	"'ClientToken', i.client_token, 'S3BucketSource', i.request->'S3BucketSource', " \
	"'ErrorCount', i.error_count, 'CloudWatchLogGroupArn', $2::text, " \
	"'InputFormat', i.request->'InputFormat', 'InputFormatOptions', i.request->'InputFormatOptions', " \
	"'InputCompressionType', coalesce(i.request->'InputCompressionType', '\"NONE\"'), " \
	"'TableCreationParameters', i.request->'TableCreationParameters', " \
	"'StartTime', " EPOCH("i.start_time") ", 'EndTime', " EPOCH("i.end_time") ", " \
	"'ProcessedSizeBytes', i.processed_bytes, 'ProcessedItemCount', i.processed_items, " \
	"'ImportedItemCount', i.imported_items, 'FailureCode', i.failure_code, 'FailureMessage', i.failure_message))"

/* An ImportSummary of import row i. */
#define SUMMARY_SQL \
	"jsonb_strip_nulls(jsonb_build_object(" \
	"'ImportArn', i.import_arn, 'ImportStatus', i.status, 'TableArn', i.table_arn, " \
	"'S3BucketSource', i.request->'S3BucketSource', 'CloudWatchLogGroupArn', $2::text, " \
	"'InputFormat', i.request->'InputFormat', " \
	"'StartTime', " EPOCH("i.start_time") ", 'EndTime', " EPOCH("i.end_time") "))"

/*
 * The log group DynamoDB names for import errors; dynindex writes them to
 * dynindex.import_errors (the view dynindex.import_log), which this names.
 */
static char *
log_group_arn(void)
{
	return psprintf("arn:aws:logs:%s:%s:log-group:/aws-dynamodb/imports:*", dynindex_region, dynindex_account_id);
}

/* {"<key>": value} */
static Jsonb *
wrap(const char *key, Jsonb *value)
{
	JsonbParseState *st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	RqPushKey(&st, key);
	RqPushJsonb(&st, WJB_VALUE, value);
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* The ImportTableDescription of an import by ARN, or NULL. */
static Jsonb *
import_description(const char *arn)
{
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		args[2] = {CStringGetTextDatum(arn), CStringGetTextDatum(log_group_arn())};
	bool		isnull;

	if (SPI_execute_with_args("SELECT " DESCRIPTION_SQL " FROM dynindex.imports i WHERE i.import_arn = $1",
							  2, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read an import");
	if (SPI_processed == 0)
		return NULL;
	return DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* Imports need release 0.3's catalog: until ALTER EXTENSION UPDATE, say so. */
static void
require_catalog(void)
{
	if (!DynJobsCatalogPresent())
		DynValidationError("ImportTable, DescribeImport and ListImports need dynindex 0.3: run ALTER EXTENSION dynindex UPDATE");
}

/* The request members the import keeps (and compares for ClientToken idempotency). */
static Jsonb *
import_request(Jsonb *req)
{
	static const char *const names[] = {"S3BucketSource", "InputFormat", "InputFormatOptions",
	"InputCompressionType", "TableCreationParameters", NULL};
	JsonbParseState *st = NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (const char *const *n = names; *n; n++)
	{
		JsonbValue *v = RqGet(&req->root, *n);

		if (v && v->type != jbvNull)
		{
			RqPushKey(&st, *n);
			pushJsonbValue(&st, WJB_VALUE, v);
		}
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

/* ---------------------------------------------------------------- operations */

/* ImportTable */
Jsonb *
DynImportTable(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	JsonbValue *tcp;
	char	   *token;
	char	   *name;
	Jsonb	   *kept;
	Jsonb	   *create;
	DynTable   *t;
	int64		id;
	char	   *arn;
	bool		isnull;

	RqValidate(req, import_schema());
	require_catalog();
	tcp = RqGet(r, "TableCreationParameters");
	name = RqGetString(tcp->val.binary.data, "TableName");
	token = RqGetString(r, "ClientToken");
	kept = import_request(req);

	/* serialize imports of one ClientToken, then look for an earlier one */
	if (token)
	{
		Oid			types[2] = {TEXTOID, JSONBOID};
		Datum		args[2] = {CStringGetTextDatum(token), JsonbPGetDatum(kept)};

		if (SPI_execute_with_args("SELECT pg_advisory_xact_lock(4475231, hashtext($1))", 1, types, args, NULL, false, 0)
			!= SPI_OK_SELECT ||
			SPI_execute_with_args("SELECT import_arn, request = $2 FROM dynindex.imports WHERE client_token = $1 "
								  "AND start_time > now() - interval '" CppAsString2(CLIENT_TOKEN_HOURS) " hours' "
								  "ORDER BY import_id DESC LIMIT 1",
								  2, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not check the import's ClientToken");
		if (SPI_processed > 0)
		{
			char	   *earlier = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

			if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)))
				DynError(DYN_ERR_IMPORT_CONFLICT,
						 "An import with the same client token %s was requested with different parameters", token);
			/* the same request again: the same import */
			DynCatalogCheckTableRight(name, DYN_ACCESS_ADMIN);
			return wrap("ImportTableDescription", import_description(earlier));
		}
	}

	/*
	 * A directory store is read with the server's file access: its readers
	 * need pg_read_server_files, as COPY FROM a file does (objstore.h).  An S3
	 * store, or a bucket no store is configured for (the import fails then,
	 * S3NoSuchBucket), needs nothing more than the right to create tables.
	 */
	{
		JsonbValue *src = RqGet(r, "S3BucketSource");
		Oid			types[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(RqGetString(src->val.binary.data, "S3Bucket"))};
		Oid			caller = DynSecurityCaller();

		if (SPI_execute_with_args("SELECT 1 FROM dynindex.object_stores WHERE bucket = $1 AND kind = 'directory'",
								  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the object stores");
		if (SPI_processed > 0 && !superuser_arg(caller) && !has_privs_of_role(caller, ROLE_PG_READ_SERVER_FILES))
			DynCatalogAccessDenied(psprintf("arn:aws:s3:::%s", RqGetString(src->val.binary.data, "S3Bucket")));
	}

	/* at most IMPORT_MAX_CONCURRENT imports in progress */
	if (SPI_execute("SELECT count(*) FROM dynindex.imports WHERE status = 'IN_PROGRESS'", true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count imports");
	if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) >= IMPORT_MAX_CONCURRENT)
		DynError(DYN_ERR_LIMIT_EXCEEDED,
				 "There are already %d imports in progress; an account may run at most %d at a time",
				 IMPORT_MAX_CONCURRENT, IMPORT_MAX_CONCURRENT);

	/* the job (its process starts at commit) and the import's ARN */
	id = DynJobSubmit("import");
	{
		Oid			types[2] = {TEXTOID, INT8OID};
		Datum		args[2] = {CStringGetTextDatum(DynTableArn(name)), Int64GetDatum(id)};

		if (SPI_execute_with_args("SELECT $1 || '/import/' || lpad(floor(extract(epoch FROM clock_timestamp()) * 1000)::int8::text, 14, '0') "
								  "|| '-' || substr(md5($2::text || random()::text), 1, 8)",
								  2, types, args, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not make an import ARN");
		arn = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}

	/* the table, CREATING until the import is done (ResourceInUseException if it exists) */
	create = JsonbValueToJsonb(tcp);
	{
		JsonbParseState *st = NULL;

		pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
		RqPushKey(&st, "Importing");
		RqPushString(&st, WJB_VALUE, arn);
		t = DynTableCreate(create, JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL)), false);
	}
	{
		Oid			types[8] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID};
		Datum		args[8];
		char		nulls[9] = "        ";

		args[0] = Int64GetDatum(id);
		args[1] = CStringGetTextDatum(arn);
		args[2] = CStringGetTextDatum(t->name);
		args[3] = CStringGetTextDatum(DynTableArn(t->name));
		args[4] = CStringGetTextDatum(t->table_id);
		if (token)
			args[5] = CStringGetTextDatum(token);
		else
			nulls[5] = 'n';
		args[6] = JsonbPGetDatum(kept);
		args[7] = CStringGetTextDatum(GetUserNameFromId(DynSecurityCaller(), false));
		if (SPI_execute_with_args("INSERT INTO dynindex.imports (import_id, import_arn, table_name, table_arn, table_id, "
								  "client_token, request, requested_by) VALUES ($1, $2, $3, $4, $5::uuid, $6, $7, $8)",
								  8, types, args, nulls, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not record an import");
	}
	return wrap("ImportTableDescription", import_description(arn));
}

/* DescribeImport */
Jsonb *
DynDescribeImport(Jsonb *req)
{
	char	   *arn;
	Jsonb	   *desc;
	const char *tp;
	const char *end;

	RqValidate(req, describe_fields);
	require_catalog();
	arn = RqGetString(&req->root, "ImportArn");
	/*
	 * Who requested the import, or who holds the admin right on the table
	 * named in the ARN (arn:...:table/<name>/import/<id>).
	 */
	tp = strstr(arn, ":table/");
	end = tp ? strstr(tp + 7, "/import/") : NULL;
	if (!DynSecurityIsAccountAdmin(DynSecurityCaller()))
	{
		Oid			types[2] = {TEXTOID, OIDOID};
		Datum		args[2] = {CStringGetTextDatum(arn), ObjectIdGetDatum(DynSecurityCaller())};

		if (SPI_execute_with_args("SELECT 1 FROM dynindex.imports i JOIN pg_catalog.pg_roles q ON q.rolname = i.requested_by "
								  "WHERE i.import_arn = $1 AND pg_catalog.pg_has_role($2, q.oid, 'USAGE')",
								  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read an import");
		if (SPI_processed == 0)
		{
			if (tp == NULL || end == NULL)
				DynSecurityDeny(NULL);
			DynCatalogCheckTableRight(pnstrdup(tp + 7, end - (tp + 7)), DYN_ACCESS_ADMIN);
		}
	}
	desc = import_description(arn);
	if (desc == NULL)
		DynError(DYN_ERR_IMPORT_NOT_FOUND, "Import not found: %s", arn);
	return wrap("ImportTableDescription", desc);
}

/* The NextToken of ListImports after an import id: 112 hex digits (DynamoDB's form: ([0-9a-f]{16})+). */
static char *
next_token(int64 after)
{
	StringInfoData s;

	initStringInfo(&s);
	for (int i = 0; i < 7; i++)
		appendStringInfo(&s, "%016llx", (unsigned long long) (after ^ (i * 0x9e3779b97f4a7c15ULL)));
	return s.data;
}

/* The import id a NextToken continues after; ValidationException if it is not ours. */
static int64
token_after(const char *token)
{
	unsigned long long v;

	if (strlen(token) != 112 || strspn(token, "0123456789abcdef") != 112 ||
		sscanf(token, "%16llx", &v) != 1 || strcmp(next_token((int64) v), token) != 0)
		DynValidationError("Invalid NextToken");
	return (int64) v;
}

/* ListImports */
Jsonb *
DynListImports(Jsonb *req)
{
	JsonbContainer *r = &req->root;
	char	   *table_arn;
	char	   *token;
	int64		limit;
	Oid			types[6] = {TEXTOID, TEXTOID, INT8OID, INT8OID, BOOLOID, OIDOID};
	Datum		args[6];
	char		nulls[7] = "      ";

	RqValidate(req, list_fields);
	require_catalog();
	table_arn = RqGetString(r, "TableArn");
	token = RqGetString(r, "NextToken");
	limit = RqGetInt(r, "PageSize", 25);
	if (table_arn)
		args[0] = CStringGetTextDatum(table_arn);
	else
		nulls[0] = 'n';
	args[1] = CStringGetTextDatum(log_group_arn());
	args[2] = Int64GetDatum(token ? token_after(token) : 0);
	args[3] = Int64GetDatum(limit + 1);
	args[4] = BoolGetDatum(DynSecurityIsAccountAdmin(DynSecurityCaller()));
	args[5] = ObjectIdGetDatum(DynSecurityCaller());
	/* the imports of tables the caller administers (or requested), oldest first */
	if (SPI_execute_with_args("SELECT " SUMMARY_SQL ", i.import_id FROM dynindex.imports i "
							  "WHERE ($1::text IS NULL OR i.table_arn = $1) AND i.import_id > $3 "
							  "AND ($5 OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles q WHERE q.rolname = i.requested_by "
							  "AND pg_catalog.pg_has_role($6, q.oid, 'USAGE')) "
							  "OR EXISTS (SELECT 1 FROM dynindex.table_rights g JOIN pg_catalog.pg_roles o "
							  "ON o.rolname = g.role_name WHERE g.table_name = i.table_name AND g.admin "
							  "AND pg_catalog.pg_has_role($6, o.oid, 'USAGE'))) "
							  "ORDER BY i.import_id LIMIT $4",
							  6, types, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list imports");
return RqListPage("ImportSummaryList", limit, next_token);
}
