/*
 * api.c — dynindex.api(operation, request): the one entry point that takes a
 * DynamoDB request and returns DynamoDB's response.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "api/api.h"
#include "api/capacity.h"
#include "api/request.h"
#include "catalog/dyn_catalog.h"
#include "common/errors.h"
#include "metrics/metrics.h"
#include "security/security.h"
#include "storage/storage.h"

typedef struct OperationEntry
{
	const char *name;
	DynOperation fn;
} OperationEntry;


static const OperationEntry operations[] = {
	{"BatchExecuteStatement", DynBatchExecuteStatement},	/* src/api/partiql.c */
	{"BatchGetItem", DynBatchGetItem},
	{"BatchWriteItem", DynBatchWriteItem},
	{"CreateBackup", DynCreateBackup},	/* src/api/backups.c */
	{"CreateGlobalTable", DynCreateGlobalTable},	/* src/api/global_tables_legacy.c */
	{"CreateTable", DynCreateTable},
	{"DeleteBackup", DynDeleteBackup},	/* backups.c */
	{"DeleteItem", DynDeleteItem},
	{"DeleteTable", DynDeleteTable},
	{"DescribeBackup", DynDescribeBackup},	/* backups.c */
	{"DescribeContinuousBackups", DynDescribeContinuousBackups},	/* pitr.c */
	{"DescribeContributorInsights", DynDescribeContributorInsights},	/* src/api/insights.c */
	{"DescribeExport", DynDescribeExport},	/* src/api/exports.c */
	{"DescribeGlobalTable", DynDescribeGlobalTable},	/* global_tables_legacy.c */
	{"DescribeGlobalTableSettings", DynDescribeGlobalTableSettings},	/* global_tables_legacy.c */
	{"DescribeLimits", DynDescribeLimits},	/* src/api/tags.c */
	{"DescribeStream", DynDescribeStream},	/* src/api/streams.c */
	{"DescribeTable", DynDescribeTable},
	{"DescribeTableReplicaAutoScaling", DynDescribeTableReplicaAutoScaling},	/* global_tables_legacy.c */
	{"DescribeTimeToLive", DynDescribeTimeToLive},	/* src/api/ttl.c */
	{"ExecuteStatement", DynExecuteStatement},	/* partiql.c */
	{"ExecuteTransaction", DynExecuteTransaction},	/* partiql.c */
	{"ExportTableToPointInTime", DynExportTableToPointInTime},	/* exports.c */
	{"GetItem", DynGetItem},
	{"GetRecords", DynGetRecords},	/* streams.c */
	{"GetShardIterator", DynGetShardIterator},	/* streams.c */
	{"ImportTable", DynImportTable},	/* src/api/imports.c */
	{"DescribeImport", DynDescribeImport},	/* imports.c */
	{"ListImports", DynListImports},	/* imports.c */
	{"ListBackups", DynListBackups},	/* backups.c */
	{"ListContributorInsights", DynListContributorInsights},	/* insights.c */
	{"ListExports", DynListExports},	/* exports.c */
	{"ListGlobalTables", DynListGlobalTables},	/* global_tables_legacy.c */
	{"ListStreams", DynListStreams},	/* streams.c */
	{"ListTagsOfResource", DynListTagsOfResource},	/* tags.c */
	{"ListTables", DynListTables},
	{"PutItem", DynPutItem},
	{"Query", DynQuery},	/* src/api/query_scan.c */
	{"RestoreTableFromBackup", DynRestoreTableFromBackup},	/* backups.c */
	{"RestoreTableToPointInTime", DynRestoreTableToPointInTime},	/* pitr.c */
	{"Scan", DynScan},		/* src/api/query_scan.c */
	{"TagResource", DynTagResource},	/* tags.c */
	{"TransactGetItems", DynTransactGetItems},
	{"TransactWriteItems", DynTransactWriteItems},
	{"UntagResource", DynUntagResource},	/* tags.c */
	{"UpdateContinuousBackups", DynUpdateContinuousBackups},	/* pitr.c */
	{"UpdateContributorInsights", DynUpdateContributorInsights},	/* insights.c */
	{"UpdateGlobalTable", DynUpdateGlobalTable},	/* global_tables_legacy.c */
	{"UpdateGlobalTableSettings", DynUpdateGlobalTableSettings},	/* global_tables_legacy.c */
	{"UpdateTable", DynUpdateTable},
	{"UpdateTableReplicaAutoScaling", DynUpdateTableReplicaAutoScaling},	/* global_tables_legacy.c */
	{"UpdateItem", DynUpdateItem},
	{"UpdateTimeToLive", DynUpdateTimeToLive},	/* ttl.c */
	{NULL, NULL}
};

/*
 * Operations that only read: a hot standby (read-only, in recovery) serves
 * these and refuses every other operation.  Operations that may read or
 * write (PartiQL statements) run there too, and a write among them fails
 * when it reaches storage (read-only transaction), which is reported as the
 * same refusal.
 */
static const char *const standby_operations[] = {
	"BatchGetItem", "DescribeBackup", "DescribeContinuousBackups", "DescribeContributorInsights", "DescribeExport",
	"DescribeLimits", "DescribeTable", "DescribeTimeToLive", "GetItem", "ListBackups", "ListExports", "ListTagsOfResource",
	"ListContributorInsights", "ListTables", "Query", "Scan", "TransactGetItems",
	"DescribeStream", "GetRecords", "GetShardIterator", "ListStreams", "DescribeImport", "ListImports",
	"ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",
	"DescribeGlobalTable", "DescribeGlobalTableSettings", "ListGlobalTables", "DescribeTableReplicaAutoScaling",
	NULL
};

/*
 * Refuse a write on a hot standby.  DynamoDB has no read-only replicas that
 * take requests; the nearest answer is the common error for a request the
 * service cannot serve now, ServiceUnavailable (HTTP 503, which SDKs retry):
 * its text from DynamoDB's API reference (Common Errors), with a hint.
 */
static void
standby_refuse(const char *opname)
{
	DynServiceUnavailable("This server is a hot standby (read-only): send %s to the primary.", opname);
}

/* Does a standby serve this operation? */
static bool
standby_serves(const char *opname)
{
	for (const char *const *p = standby_operations; *p; p++)
		if (strcmp(*p, opname) == 0)
			return true;
	return false;
}

/* Find an operation by name. */
static DynOperation
find_operation(const char *name)
{
	const OperationEntry *op;

	for (op = operations; op->name; op++)
		if (strcmp(op->name, name) == 0)
			return op->fn;
	return NULL;
}

/* The operation being served (DynRequestOperation points here). */
static char current_operation[64];

/*
 * The TableName of a request, for the metrics; "" (the account's row) when it
 * names none or not as a string.  Never raises an error (used in PG_CATCH).
 */
static const char *
request_table(Jsonb *req)
{
	static char name[256];
	JsonbValue	v;

	if (!JB_ROOT_IS_OBJECT(req) ||
		!getKeyJsonValueFromContainer(&req->root, "TableName", 9, &v) ||
		v.type != jbvString || v.val.string.len >= (int) sizeof(name))
		return "";
	memcpy(name, v.val.string.val, v.val.string.len);
	name[v.val.string.len] = '\0';
	return name;
}

/* Run one operation on a request (jsonb, U+0000 escaped); returns the response. */
static Jsonb *
run_operation(const char *opname, Jsonb *req)
{
	Jsonb	   *res;
	Jsonb	   *volatile out = NULL;
	DynOperation fn;
	TimestampTz start = GetCurrentTimestamp();	/* SuccessfulRequestLatency */
	MemoryContext cxt = CurrentMemoryContext;
	DynSecurityOp sec_op;

	fn = find_operation(opname);
	if (fn == NULL)
		DynError(DYN_ERR_UNKNOWN_OPERATION, "An unknown operation was requested.");
	if (RecoveryInProgress() && !standby_serves(opname))
		standby_refuse(opname);

	strlcpy(current_operation, opname, sizeof(current_operation));
	DynRequestOperation = current_operation;
	DynCatalogRevalidate();
	DynCatalogRequestReset();
	DynThroughputRequestBegin();
	RqSetValidationLayer(opname);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	DynStorageWritesBegin();
	DynSecurityEnter(opname, &sec_op);
	PG_TRY();
	{
		/*
		 * The caller's rights are checked at each table lookup (and here,
		 * before any validation, for CreateTable).  Item operations run as
		 * the caller, so that PostgreSQL enforces the storage grants and
		 * row-level security; the others (table management) run with the
		 * extension owner's rights once the lookup has checked the caller's.
		 */
		if (DynSecurityAccessOf(opname) == DYN_ACCESS_CREATE &&
			!DynSecurityHasRight(DynSecurityCaller(), NULL, InvalidOid, DYN_ACCESS_CREATE))
			DynSecurityDeny(!JB_ROOT_IS_OBJECT(req) ? NULL :
							RqGetString(&req->root, "TableName") ? RqGetString(&req->root, "TableName") :
							RqGetString(&req->root, "TargetTableName") ? RqGetString(&req->root, "TargetTableName") :	/* the restores */
							RqGet(&req->root, "TableCreationParameters") &&	/* ImportTable */
							RqGet(&req->root, "TableCreationParameters")->type == jbvBinary ?
							RqGetString(RqGet(&req->root, "TableCreationParameters")->val.binary.data, "TableName") : NULL);
		if (!DynSecurityRunsInternal(opname))
			res = fn(req);
		else
		{
			DynSecurityState sec;

			DynSecurityBeginInternal(&sec);
			res = fn(req);
			DynSecurityEndInternal(&sec);
		}
		/* the response was built in SPI's procedure context: copy it out */
		out = SPI_palloc(VARSIZE(res));
		memcpy(out, res, VARSIZE(res));
	}
	PG_CATCH();
	{
		RqSetValidationLayer(NULL);
		DynSecurityLeave(&sec_op);
		DynStorageWritesEnd();
		DynCatalogRequestReset();
		DynMetricsCountError(request_table(req), geterrcode());
		/* a write reached storage on a standby: the same refusal */
		if (RecoveryInProgress() && geterrcode() == ERRCODE_READ_ONLY_SQL_TRANSACTION)
		{
			MemoryContextSwitchTo(cxt);
			FlushErrorState();
			standby_refuse(opname);
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	RqSetValidationLayer(NULL);
	DynSecurityLeave(&sec_op);
	DynStorageWritesEnd();
	DynCatalogRequestReset();
	DynMetricsCountSuccess(request_table(req), start);
	SPI_finish();
	return out;
}

PG_FUNCTION_INFO_V1(dynindex_api);

/* dynindex.api(operation text, request jsonb) RETURNS jsonb */
Datum
dynindex_api(PG_FUNCTION_ARGS)
{
	char	   *opname;

	if (PG_ARGISNULL(0))
		DynError(DYN_ERR_UNKNOWN_OPERATION, "An unknown operation was requested.");
	opname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (find_operation(opname) == NULL)
		DynError(DYN_ERR_UNKNOWN_OPERATION, "An unknown operation was requested.");
	if (PG_ARGISNULL(1))
		DynError(DYN_ERR_SERIALIZATION, "Start of list found where not expected");
	/* U+E000 is the escape of U+0000 inside (types/nulstr.c): escape the request's own */
	PG_RETURN_JSONB_P(DynNulUnescapeResponse(run_operation(opname, DynNulEscapeRequest(PG_GETARG_JSONB_P(1)))));
}

/* Error context of a request body that failed to parse (the gateway looks for it). */
static void
request_body_context(void *arg)
{
	errcontext("dynindex request body");
}

/*
 * The request body text as jsonb.  A body that is not JSON fails with
 * jsonb_in's SQLSTATE (class 22, or 54 when too deep or too long: the
 * endpoints answer SerializationException) but without jsonb_in's words:
 * its DETAIL ("Token "..." is invalid."), its CONTEXT ("JSON data, line 1:
 * ...") and some of its messages (a number's text) quote the body, and a
 * body holds items, personal data that must never reach the server log.
 * Catching jsonb_in's error without a subtransaction is safe: it has no side
 * effects, and another ERROR is raised at once.
 */
static Datum
parse_request_body(text *reqtext)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile Datum req = (Datum) 0;
	volatile int code = 0;
	ErrorContextCallback cb;

	PG_TRY();
	{
		req = DirectFunctionCall1(jsonb_in, CStringGetDatum(DynNulJsonTextIn(VARDATA_ANY(reqtext),
																			   VARSIZE_ANY_EXHDR(reqtext))));
	}
	PG_CATCH();
	{
		code = geterrcode();
		if (ERRCODE_TO_CATEGORY(code) != ERRCODE_DATA_EXCEPTION &&
			ERRCODE_TO_CATEGORY(code) != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			PG_RE_THROW();		/* a cancel, out of memory: not the body's fault */
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
	}
	PG_END_TRY();
	if (code == 0)
		return req;
	cb.callback = request_body_context;
	cb.arg = NULL;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	ereport(ERROR,
			(errcode(code),
			 errmsg("invalid input syntax for type json"),
			 errdetail("The request body is not valid JSON for jsonb (its text is not shown: it may hold item data).")));
	pg_unreachable();
}

PG_FUNCTION_INFO_V1(dynindex_api_text);

/*
 * dynindex.api_text(operation text, request text) RETURNS text: the same
 * with JSON text in and out, so that strings may hold U+0000 ("\u0000"),
 * which jsonb cannot; the gateway calls it.
 */
Datum
dynindex_api_text(PG_FUNCTION_ARGS)
{
	char	   *opname;
	text	   *reqtext;
	Datum		req;
	Jsonb	   *res;

	if (PG_ARGISNULL(0))
		DynError(DYN_ERR_UNKNOWN_OPERATION, "An unknown operation was requested.");
	opname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (find_operation(opname) == NULL)
		DynError(DYN_ERR_UNKNOWN_OPERATION, "An unknown operation was requested.");
	if (PG_ARGISNULL(1))
		DynError(DYN_ERR_SERIALIZATION, "Start of list found where not expected");
	reqtext = PG_GETARG_TEXT_PP(1);
	/* a body that is not JSON: the endpoints answer SerializationException */
	req = parse_request_body(reqtext);
	res = run_operation(opname, DatumGetJsonbP(req));
	PG_RETURN_TEXT_P(cstring_to_text(DynNulJsonTextOut(DatumGetCString(DirectFunctionCall1(jsonb_out,
																						 JsonbPGetDatum(res))))));
}
